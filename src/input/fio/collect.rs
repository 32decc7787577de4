//! Sections and options into jobs, by fio's rules: a `[global]` section changes the defaults of
//! the jobs below it (each new `[global]` adds to and overrides what came before); every other
//! section is a job (names may repeat) that starts from the defaults as they stand; options apply
//! in order and the later wins, except `kb_base`, which fio reads before the other options of its
//! section.
//!
//! An option iopath does not support stops the load at its line, or is listed and skipped with
//! `--ignore-unsupported`; a malformed value always stops it.

use super::location::Location;
use super::notes::Notes;
use super::parsers::OptionError;
use super::settings::JobSettings;
use super::source::Entry;
use super::suggestions::near_text;
use super::table::{Input, Support, find};
use super::values::uses_iec_suffix;
use crate::input::job_file::JobFileError;
use crate::text::escape::escape_controls;
use crate::workload::limits::PlanLimits;
use std::path::Path;

/// One job section with its settings.
#[derive(Clone, Debug)]
pub struct JobDefinition {
    /// The section name.
    pub section: String,
    /// Where the section starts.
    pub at: Location,
    /// What it asks for, `[global]` defaults included.
    pub settings: JobSettings,
}

/// What reading the options produced besides the jobs.
pub struct Collected {
    /// The jobs in file order.
    pub jobs: Vec<JobDefinition>,
    /// `FILE:LINE: option=value` of each option skipped with `ignore_unsupported`.
    pub ignored: Vec<String>,
}

/// Options whose values are sizes (for the note on IEC suffixes under kb_base=1024).
const SIZE_OPTIONS: &[&str] = &[
    "bs",
    "blocksize",
    "bsrange",
    "blocksize_range",
    "bssplit",
    "blockalign",
    "ba",
    "size",
    "filesize",
    "io_size",
    "io_limit",
    "offset",
    "rate",
];

/// Reads the entries of `path` into jobs; more jobs than `limits` allow are refused at the
/// first section past the limit.
pub fn collect(
    entries: &[Entry],
    path: &Path,
    ignore_unsupported: bool,
    limits: &PlanLimits,
    notes: &mut Notes,
) -> Result<Collected, JobFileError> {
    let file_start = Location {
        file: path.to_path_buf(),
        line: 1,
    };
    let mut global = JobSettings::fio_defaults(file_start);
    let mut jobs: Vec<JobDefinition> = Vec::new();
    let mut ignored = Vec::new();
    let mut index = 0;
    while index < entries.len() {
        let (name, at) = match &entries[index] {
            Entry::Section { name, at } => (name, at),
            Entry::Option { name, at, .. } => {
                return Err(at.error(format!(
                    "option '{name}' comes before any [section]; put it under [global] or a job"
                )));
            }
        };
        let end = entries[index + 1..]
            .iter()
            .position(|entry| matches!(entry, Entry::Section { .. }))
            .map_or(entries.len(), |offset| index + 1 + offset);
        let options = &entries[index + 1..end];
        // fio takes every section whose name starts with `global` as a global one.
        let is_global = name.starts_with("global");
        if !is_global {
            limits
                .check_jobs(jobs.len() + 1)
                .map_err(|message| at.error(format!("[{name}]: {message}")))?;
        }
        let mut settings = if is_global {
            global.clone()
        } else {
            JobSettings {
                name: None,
                ..global.clone()
            }
        };
        let mut section = SectionReader {
            settings: &mut settings,
            notes,
            ignored: &mut ignored,
            ignore_unsupported,
        };
        // kb_base first, as fio does (it sorts it ahead of the section's other options).
        for entry in options {
            if let Entry::Option { name, .. } = entry
                && name == "kb_base"
            {
                section.apply(entry)?;
            }
        }
        for entry in options {
            section.apply(entry)?;
        }
        if is_global {
            global = settings;
        } else {
            jobs.push(JobDefinition {
                section: name.clone(),
                at: at.clone(),
                settings,
            });
        }
        index = end;
    }
    Ok(Collected { jobs, ignored })
}

struct SectionReader<'a> {
    settings: &'a mut JobSettings,
    notes: &'a mut Notes,
    ignored: &'a mut Vec<String>,
    ignore_unsupported: bool,
}

impl SectionReader<'_> {
    fn apply(&mut self, entry: &Entry) -> Result<(), JobFileError> {
        let Entry::Option {
            name,
            value,
            text,
            at,
        } = entry
        else {
            return Ok(());
        };
        let shown = match value {
            Some(value) => format!("{name}={value}"),
            None => name.clone(),
        };
        let Some(spec) = find(name) else {
            return self.unsupported(at, text, || {
                format!("unsupported option '{name}' {}", near_text(name))
            });
        };
        match spec.support {
            Support::Refused(reason) => self.unsupported(at, text, || {
                format!("unsupported option '{name}': {reason} {}", near_text(name))
            }),
            Support::Accepted(note) => {
                self.notes.add(Some(at), format!("{name}: {note}"));
                Ok(())
            }
            Support::Mapped(handler) => {
                let mut input = Input {
                    value: value.as_deref(),
                    at,
                    notes: self.notes,
                };
                match handler(self.settings, &mut input) {
                    Ok(()) => {
                        if self.settings.kb_base == 1024
                            && SIZE_OPTIONS.contains(&name.as_str())
                            && value.as_deref().is_some_and(uses_iec_suffix)
                        {
                            self.notes.add(
                                Some(at),
                                format!(
                                    "{shown}: with kb_base=1024 (the default) fio reads KiB, MiB … as powers of 1000 (4KiB = 4000 bytes), and so does iopath; write 4k for 4096, or set kb_base=1000"
                                ),
                            );
                        }
                        Ok(())
                    }
                    Err(OptionError::BadValue(message)) => {
                        Err(at.error(format!("{shown}: {message}")))
                    }
                    Err(OptionError::Unsupported(message)) => self.unsupported(at, text, || {
                        format!("unsupported option '{shown}': {message}")
                    }),
                }
            }
        }
    }

    /// Lists the option when unsupported options are ignored, else refuses it with `message`
    /// (built only then: suggestions cost a scan of the option table).
    fn unsupported(
        &mut self,
        at: &Location,
        text: &str,
        message: impl FnOnce() -> String,
    ) -> Result<(), JobFileError> {
        if self.ignore_unsupported {
            self.ignored
                .push(escape_controls(&format!("{at}: {text}")).into_owned());
            Ok(())
        } else {
            Err(at.error(message()))
        }
    }
}
