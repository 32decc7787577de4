//! What every job-file reader (fio's format, iopath's TOML) takes and gives.

use super::options::WorkloadOptions;
use crate::text::escape::escape_controls;
use crate::workload::Plan;
use crate::workload::limits::PlanLimits;
use std::path::PathBuf;

/// How to read a job file.
#[derive(Clone, Debug, Default)]
pub struct JobFileRequest {
    /// Command-line workload options, applied on top of every job (a short `--duration` or a
    /// small `--size` for a trial run).
    pub overrides: WorkloadOptions,
    /// Targets given on the command line: they replace every job's own files.
    pub targets: Vec<PathBuf>,
    /// Run even when options are not supported, and list what was ignored.
    pub ignore_unsupported: bool,
    /// Most jobs the file may define (`--max-jobs`) and worker threads one test may start.
    pub limits: PlanLimits,
}

/// A job file turned into a plan.
#[derive(Clone, Debug)]
pub struct LoadedJob {
    /// The plan: targets and tests (phases), each with its jobs.
    pub plan: Plan,
    /// Options that were ignored (`FILE:LINE: option`), only with `ignore_unsupported`.
    pub ignored: Vec<String>,
    /// How options were mapped where the mapping is not one to one, for the user to read.
    pub notes: Vec<String>,
    /// Merges of blktrace captures to write before the run (fio's `merge_blktrace_file`).
    pub merged_captures: Vec<crate::input::merged_capture::MergedCapture>,
}

/// A job file that cannot be used: the file, the line and what is wrong. Shown as
/// `FILE:LINE: message`, control characters escaped (both may quote what the file holds).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}{}: {}",
    escape_controls(&file.display().to_string()),
    line.map(|l| format!(":{l}")).unwrap_or_default(),
    escape_controls(message)
)]
pub struct JobFileError {
    /// The file (an included file when the problem is there).
    pub file: PathBuf,
    /// 1-based line, when the problem has one.
    pub line: Option<usize>,
    /// What is wrong, naming the option.
    pub message: String,
}
