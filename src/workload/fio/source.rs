//! Reading a job file into located entries: `[sections]` and `option[=value]` lines, with
//! comments removed, `include FILE` followed (relative to the including file) and every value
//! expanded ([`super::expand`]). Each entry keeps the file and line it came from, so that every
//! later message can point at it.
//!
//! fio's rules: a `;` or `#` ends the line wherever it appears (a whole-line comment, or a
//! trailing one after a value); blank lines are skipped; leading and trailing blanks are
//! dropped; an included file holds options only, never sections.

use super::expand::{Environment, expand};
use super::location::Location;
use super::notes::Notes;
use crate::workload::job_file::JobFileError;
use std::path::{Path, PathBuf};

/// Deepest nesting of `include` followed before giving up (a cycle is refused earlier).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Longest line read, in bytes (fio's own limit is 8 KiB).
const MAX_LINE_BYTES: usize = 64 * 1024;

/// One meaningful line of a job file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `[name]`: a job, or `[global]`.
    Section {
        /// The name between the brackets.
        name: String,
        /// Where it was written.
        at: Location,
    },
    /// `name=value`, or a bare `name` (a boolean set to true).
    Option {
        /// The option name as written.
        name: String,
        /// The expanded value; `None` when the line had no `=`.
        value: Option<String>,
        /// The line as written (comment removed), for messages.
        text: String,
        /// Where it was written.
        at: Location,
    },
}

/// Reads `path` and everything it includes. Notes about expansion (an unset `${VAR}`) are
/// appended to `notes`.
pub fn read_job_file(
    path: &Path,
    environment: &Environment,
    notes: &mut Notes,
) -> Result<Vec<Entry>, JobFileError> {
    let mut reader = Reader {
        environment,
        notes,
        entries: Vec::new(),
        open_files: Vec::new(),
    };
    reader.read(path, None)?;
    Ok(reader.entries)
}

struct Reader<'a> {
    environment: &'a Environment,
    notes: &'a mut Notes,
    entries: Vec<Entry>,
    /// Files being read, outermost first (to refuse include cycles).
    open_files: Vec<PathBuf>,
}

impl Reader<'_> {
    fn read(&mut self, path: &Path, included_at: Option<&Location>) -> Result<(), JobFileError> {
        let cannot_read = |reason: String| match included_at {
            Some(at) => at.error(format!("include {}: {reason}", path.display())),
            None => JobFileError {
                file: path.to_path_buf(),
                line: None,
                message: reason,
            },
        };
        let bytes = std::fs::read(path).map_err(|error| cannot_read(error.to_string()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| cannot_read("not a text file (invalid UTF-8)".to_string()))?;
        let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.open_files.contains(&identity) {
            return Err(cannot_read(
                "includes itself (an include cycle)".to_string(),
            ));
        }
        if self.open_files.len() >= MAX_INCLUDE_DEPTH {
            return Err(cannot_read(format!(
                "includes nest deeper than {MAX_INCLUDE_DEPTH} files"
            )));
        }
        self.open_files.push(identity);
        for (index, raw_line) in text.lines().enumerate() {
            let at = Location {
                file: path.to_path_buf(),
                line: index + 1,
            };
            if raw_line.len() > MAX_LINE_BYTES {
                return Err(at.error(format!("line longer than {MAX_LINE_BYTES} bytes")));
            }
            self.read_line(raw_line, at, included_at.is_some())?;
        }
        self.open_files.pop();
        Ok(())
    }

    fn read_line(
        &mut self,
        raw_line: &str,
        at: Location,
        in_include: bool,
    ) -> Result<(), JobFileError> {
        let line = strip_comment(raw_line).trim();
        if line.is_empty() {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix('[') {
            if in_include {
                return Err(at.error(format!(
                    "'{line}': an included file holds options only, not [sections]"
                )));
            }
            let Some(name) = rest.strip_suffix(']') else {
                return Err(at.error(format!("'{line}': a section is [name]")));
            };
            let name = name.trim();
            if name.is_empty() || name.contains(['[', ']']) {
                return Err(at.error(format!("'{line}': a section is [name]")));
            }
            self.entries.push(Entry::Section {
                name: name.to_string(),
                at,
            });
            return Ok(());
        }
        if let Some(included) = include_target(line) {
            if included.is_empty() {
                return Err(at.error("include needs a file name"));
            }
            let base = at.file.parent().unwrap_or(Path::new(""));
            let path = base.join(included);
            return self.read(&path, Some(&at));
        }
        let (name, value) = match line.split_once('=') {
            Some((name, value)) => (name.trim(), Some(value.trim())),
            None => (line, None),
        };
        if name.is_empty() {
            return Err(at.error(format!("'{line}': an option needs a name")));
        }
        if name.contains(char::is_whitespace) {
            return Err(at.error(format!(
                "'{line}': an option is name=value (a name has no blanks)"
            )));
        }
        let value = value.map(|value| {
            let expanded = expand(value, self.environment);
            for variable in &expanded.unset {
                self.notes.add(
                    Some(&at),
                    format!("${{{variable}}} is not set in the environment: it expands to nothing (as in fio)"),
                );
            }
            expanded.text
        });
        self.entries.push(Entry::Option {
            name: name.to_string(),
            value,
            text: line.to_string(),
            at,
        });
        Ok(())
    }
}

/// The line up to its first `;` or `#`.
fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(position) => &line[..position],
        None => line,
    }
}

/// The file named by an `include FILE` line.
fn include_target(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    if rest.starts_with(char::is_whitespace) {
        Some(rest.trim())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(files: &[(&str, &str)]) -> Result<Vec<Entry>, JobFileError> {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let environment = Environment::fixed(&[("SIZE", "64m")]);
        let mut notes = Notes::default();
        read_job_file(&dir.path().join(files[0].0), &environment, &mut notes)
    }

    fn options(entries: &[Entry]) -> Vec<(String, Option<String>, usize)> {
        entries
            .iter()
            .filter_map(|entry| match entry {
                Entry::Option {
                    name, value, at, ..
                } => Some((name.clone(), value.clone(), at.line)),
                Entry::Section { .. } => None,
            })
            .collect()
    }

    #[test]
    fn sections_options_and_comments() {
        let entries = read_text(&[(
            "job.fio",
            "; a comment\n# another\n[global]\nbs=4k ; trailing\n\n[job1]\ntime_based\nsize=${SIZE}\tfilename=x#y\n",
        )])
        .unwrap();
        assert!(
            matches!(&entries[0], Entry::Section { name, at } if name == "global" && at.line == 3)
        );
        assert_eq!(
            options(&entries),
            [
                ("bs".into(), Some("4k".into()), 4),
                ("time_based".into(), None, 7),
                ("size".into(), Some("64m\tfilename=x".into()), 8),
            ]
        );
    }

    #[test]
    fn includes_are_relative_to_the_including_file() {
        let entries = read_text(&[
            (
                "jobs/main.fio",
                "[job]\ninclude parts/common.fio\nrw=read\n",
            ),
            ("jobs/parts/common.fio", "bs=8k\ninclude deeper.fio\n"),
            ("jobs/parts/deeper.fio", "iodepth=4\n"),
        ])
        .unwrap();
        let found = options(&entries);
        assert_eq!(found[0].0, "bs");
        assert_eq!(found[1], ("iodepth".into(), Some("4".into()), 1));
        assert_eq!(found[2], ("rw".into(), Some("read".into()), 3));
        let Entry::Option { at, .. } = &entries[2] else {
            panic!()
        };
        assert!(
            at.file.ends_with("parts/deeper.fio"),
            "{}",
            at.file.display()
        );
    }

    #[test]
    fn bad_includes_name_their_line() {
        let error = read_text(&[("a.fio", "[job]\n\ninclude missing.fio\n")]).unwrap_err();
        assert_eq!(error.line, Some(3));
        assert!(error.message.contains("missing.fio"), "{}", error.message);
        let error = read_text(&[("a.fio", "[job]\ninclude a.fio\n")]).unwrap_err();
        assert!(error.message.contains("cycle"), "{}", error.message);
        let error = read_text(&[("a.fio", "include b.fio\n"), ("b.fio", "[x]\n")]).unwrap_err();
        assert!(error.message.contains("options only"), "{}", error.message);
    }

    #[test]
    fn malformed_lines_are_refused_with_their_line() {
        for (text, line) in [
            ("[job\n", 1),
            ("[]\n", 1),
            ("[a]\n=4k\n", 2),
            ("[a]\nb s=1\n", 2),
        ] {
            let error = read_text(&[("a.fio", text)]).unwrap_err();
            assert_eq!(error.line, Some(line), "{text:?}");
        }
    }
}
