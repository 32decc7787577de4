//! iopath's own job files, in TOML: one `[[test]]` table per test, keys spelled like the flags
//! of `iopath run` (`rw`, `bs`, `read-pct`, `qd`, `duration`, `spec`, `distribution` …), an
//! optional `[defaults]` table applied to every test first, and `[[test.job]]` sub-tables for
//! jobs that run at the same time. docs/job-files.md describes the format.
//!
//! ```
//! use iopath::input::job_file::JobFileRequest;
//! use iopath::input::toml_job;
//!
//! let text = r#"
//! targets = [{ path = "data.bin", size = "1g" }]
//!
//! [defaults]
//! duration = "30s"
//!
//! [[test]]
//! name = "random reads"
//! rw = "randread"
//! qd = 32
//! "#;
//! let request = JobFileRequest::default();
//! let loaded = toml_job::read(text, "example.toml".as_ref(), &request).unwrap();
//! let workload = &loaded.plan.tests[0].jobs[0].workload;
//! assert_eq!(workload.queue_depth, 32);
//!
//! // Any plan can be written back, and reads into the same workloads.
//! let written = toml_job::to_toml(&loaded.plan);
//! let again = toml_job::read(&written, "again.toml".as_ref(), &request).unwrap();
//! assert_eq!(&again.plan.tests[0].jobs[0].workload, workload);
//! ```
//!
//! Reading has two stages, like the flags: the document is walked and every key checked
//! against its table and its value against the option's parser (`reader`), then each job's
//! settings are layered and applied into a [`crate::result::Workload`] (`build`). Every
//! problem is a [`JobFileError`] naming the file and the line of the key at fault.

mod build;
mod document;
mod keys;
mod reader;
mod writer;

pub use writer::{to_toml, toml_comment};

use super::job_file::{JobFileError, JobFileRequest, LoadedJob};
use crate::gate::read::{FileLimit, read_text};
use crate::workload::Plan;
use document::{LineIndex, Origin, Problem, Setting, entries_in_order};
use std::path::Path;
use toml::de::DeTable;

/// Reads the TOML job file at `path` into a plan. `request.overrides` apply on top of every
/// job; `request.targets`, when given, replace every job's targets. Only a regular file of at
/// most [`FileLimit::TOML_JOB_FILE`] is read.
pub fn load(path: &Path, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
    let text = read_text(path, FileLimit::TOML_JOB_FILE).map_err(|error| JobFileError {
        file: path.to_path_buf(),
        line: None,
        message: format!("cannot read the job file: {error}"),
    })?;
    read(&text, path, request)
}

/// Reads TOML job text; `file` names it in errors.
pub fn read(text: &str, file: &Path, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
    let mut notes = Vec::new();
    let plan = read_plan(text, request, &mut notes).map_err(|problem| problem.into_error(file))?;
    Ok(LoadedJob {
        plan,
        ignored: Vec::new(),
        notes: notes
            .into_iter()
            .map(|note| note.into_error(file).to_string())
            .collect(),
        merged_captures: Vec::new(),
    })
}

fn read_plan(
    text: &str,
    request: &JobFileRequest,
    notes: &mut Vec<Problem>,
) -> Result<Plan, Problem> {
    let lines = LineIndex::new(text);
    let document = DeTable::parse(text).map_err(|error| {
        Problem::at(
            error.span().map(|span| lines.line(span.start)),
            error.message().to_string(),
        )
    })?;
    let draft = reader::read_document(&document, &lines)?;
    let mut jobs = 0;
    for test in &draft.tests {
        jobs += test.jobs.len().max(1);
        request
            .limits
            .check_jobs(jobs)
            .map_err(|error| Problem::at(Some(test.line), error.to_string()))?;
    }
    let overrides_text = toml::to_string(&request.overrides)
        .map_err(|error| Problem::at(None, format!("command-line options: {error}")))?;
    let overrides_table = DeTable::parse(&overrides_text)
        .map_err(|error| Problem::at(None, format!("command-line options: {}", error.message())))?;
    let overrides: Vec<Setting<'_>> = entries_in_order(overrides_table.get_ref())
        .into_iter()
        .map(|(key, value)| Setting {
            key: key.get_ref().to_string(),
            value: value.clone(),
            origin: Origin::CommandLine,
        })
        .collect();
    build::build_plan(&draft, &overrides, request, notes)
}

#[cfg(test)]
mod tests;
