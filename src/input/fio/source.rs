//! Reading a job file into located entries: `[sections]` and `option[=value]` lines, with
//! comments removed, `include FILE` followed (relative to the including file) and every value
//! expanded ([`super::expand`]). Each entry keeps the file and line it came from, so that every
//! later message can point at it.
//!
//! fio's rules: a `;` or `#` ends the line wherever it appears (a whole-line comment, or a
//! trailing one after a value); blank lines are skipped; leading and trailing blanks are
//! dropped; an included file holds options only, never sections.
//!
//! Reading is bounded: every file goes through [`crate::gate::read`] (regular files of at
//! most 16 MiB), and over a job file and its includes there are limits on the nesting, on the
//! files read (an include bomb re-reads the same files), on the bytes and on the entries.

use super::expand::{Environment, expand};
use super::location::Location;
use super::notes::Notes;
use crate::gate::read::{FileLimit, read_text};
use crate::input::job_file::JobFileError;
use std::path::{Path, PathBuf};

/// Deepest nesting of `include` followed before giving up (a cycle is refused earlier).
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// Most files read for one job file, itself included; a file included twice counts twice.
pub const MAX_FILES_READ: usize = 256;

/// Most bytes read for one job file, over it and every file it includes.
pub const MAX_TOTAL_BYTES: u64 = FileLimit::JOB_FILE.max_bytes;

/// Most sections and options, over the job file and every file it includes.
pub const MAX_ENTRIES: usize = 1 << 18;

/// Longest line read, in bytes (fio's own limit is 8 KiB).
const MAX_LINE_BYTES: usize = 64 * 1024;
/// The longest section name fio reads (its `[%255[^\n]]`).
const MAX_SECTION_NAME_BYTES: usize = 255;

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
        files_read: 0,
        bytes_read: 0,
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
    /// Files read so far (an include bomb reads the same files over and over).
    files_read: usize,
    /// Bytes read so far, over every file.
    bytes_read: u64,
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
        if self.files_read >= MAX_FILES_READ {
            return Err(cannot_read(format!(
                "more than {MAX_FILES_READ} files read for one job file (each include counts every time it is read)"
            )));
        }
        self.files_read += 1;
        let text =
            read_text(path, FileLimit::JOB_FILE).map_err(|error| cannot_read(error.to_string()))?;
        self.bytes_read += text.len() as u64;
        if self.bytes_read > MAX_TOTAL_BYTES {
            return Err(cannot_read(format!(
                "the job file and its includes hold more than {} MiB",
                MAX_TOTAL_BYTES >> 20
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
            if self.entries.len() > MAX_ENTRIES {
                let at = Location {
                    file: path.to_path_buf(),
                    line: index + 1,
                };
                return Err(at.error(format!(
                    "more than {MAX_ENTRIES} sections and options in the job file and its includes"
                )));
            }
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
            // As fio's ini reader: the name is everything between the line's first `[` and
            // its last character (`[4w_4k_['read', 'write']]` is `4w_4k_['read', 'write']`),
            // blanks inside kept, at most 255 bytes.
            if name.trim().is_empty() {
                return Err(at.error(format!("'{line}': a section is [name]")));
            }
            if name.len() > MAX_SECTION_NAME_BYTES {
                return Err(at.error(format!(
                    "'{line}': a section name is at most {MAX_SECTION_NAME_BYTES} bytes (as in fio)"
                )));
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
        let value = match value {
            Some(value) => {
                let expanded = expand(value, self.environment)
                    .map_err(|message| at.error(format!("{name}: {message}")))?;
                for variable in &expanded.unset {
                    self.notes.add(
                        Some(&at),
                        format!("${{{variable}}} is not set in the environment: it expands to nothing (as in fio)"),
                    );
                }
                Some(expanded.text)
            }
            None => None,
        };
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
    fn a_section_name_is_read_as_fio_reads_it() {
        let entries = read_text(&[(
            "job.fio",
            "[4w_4k_['read', 'write']]\n[ spaced name ]\n[]\n",
        )])
        .unwrap_err();
        assert_eq!(entries.line, Some(3), "{}", entries.message);
        let entries = read_text(&[(
            "job.fio",
            "[4w_4k_['read', 'write']]\nrw=read\n[ spaced name ] ; comment\n",
        )])
        .unwrap();
        let names: Vec<&str> = entries
            .iter()
            .filter_map(|entry| match entry {
                Entry::Section { name, .. } => Some(name.as_str()),
                Entry::Option { .. } => None,
            })
            .collect();
        assert_eq!(names, ["4w_4k_['read', 'write']", " spaced name "]);
        let long = format!("[{}]\n", "x".repeat(256));
        assert!(read_text(&[("job.fio", long.as_str())]).is_err());
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
    fn include_bombs_stop_at_the_file_count() {
        // Nine files of ten includes each would read 10^8 files.
        let mut files: Vec<(String, String)> = vec![(
            "main.fio".into(),
            format!("[job]\n{}", "include f1.fio\n".repeat(10)),
        )];
        for level in 1..9 {
            let next = format!("include f{}.fio\n", level + 1).repeat(10);
            files.push((format!("f{level}.fio"), next));
        }
        files.push(("f9.fio".into(), "bs=4k\n".into()));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str()))
            .collect();
        let error = read_text(&files).unwrap_err();
        assert!(
            error
                .message
                .contains(&format!("more than {MAX_FILES_READ} files")),
            "{}",
            error.message
        );
    }

    #[test]
    fn includes_nest_at_most_the_depth_limit() {
        let names: Vec<String> = (0..=MAX_INCLUDE_DEPTH)
            .map(|n| format!("d{n}.fio"))
            .collect();
        let texts: Vec<String> = (0..=MAX_INCLUDE_DEPTH)
            .map(|n| match n {
                0 => "[job]\ninclude d1.fio\n".to_string(),
                n if n == MAX_INCLUDE_DEPTH => "bs=4k\n".to_string(),
                n => format!("include d{}.fio\n", n + 1),
            })
            .collect();
        let files: Vec<(&str, &str)> = names
            .iter()
            .zip(&texts)
            .map(|(name, text)| (name.as_str(), text.as_str()))
            .collect();
        let error = read_text(&files).unwrap_err();
        assert!(error.message.contains("nest deeper"), "{}", error.message);
        let mut shallower = files.clone();
        shallower[MAX_INCLUDE_DEPTH - 1].1 = "bs=4k\n";
        assert!(read_text(&shallower).is_ok());
    }

    #[test]
    fn includes_of_devices_and_fifos_are_refused_without_reading_them() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.fio");
        crate::support::devices::make_fifo(&fifo);
        for (included, kind) in [
            (fifo.display().to_string(), "(FIFO)"),
            ("/dev/zero".to_string(), "a character device"),
        ] {
            let main = dir.path().join("main.fio");
            std::fs::write(&main, format!("[job]\ninclude {included}\n")).unwrap();
            let mut notes = Notes::default();
            let error = read_job_file(&main, &Environment::fixed(&[]), &mut notes).unwrap_err();
            assert_eq!(error.line, Some(2));
            assert!(
                error.message.contains(&included) && error.message.contains(kind),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn the_bytes_of_all_included_files_are_bounded_together() {
        // Each file is within the per-file limit; together they pass it.
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.fio");
        let line = format!("description={}\n", "x".repeat(1000));
        let copies = (MAX_TOTAL_BYTES as usize / 2) / line.len() + 1;
        std::fs::write(&big, line.repeat(copies)).unwrap();
        let main = dir.path().join("main.fio");
        std::fs::write(&main, "[job]\ninclude big.fio\ninclude big.fio\n").unwrap();
        let mut notes = Notes::default();
        let error = read_job_file(&main, &Environment::fixed(&[]), &mut notes).unwrap_err();
        assert!(error.message.contains("16 MiB"), "{}", error.message);
        assert_eq!(error.line, Some(3), "{}", error.message);
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
