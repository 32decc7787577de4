//! fio job files: `iopath run --job FILE.fio`.
//!
//! Reading goes in stages, each in its own file:
//!
//! 1. [`source`]: lines into located `[section]` and `option=value` entries — comments,
//!    `include`, and [`expand`]ed values (`${VAR}`, `$pagesize`, `$mb_memory`, `$ncpus`);
//! 2. [`collect`]: entries into jobs by fio's rules (`[global]` defaults, later wins), each option
//!    read through the [`table`] that declares every option iopath knows, with [`values`],
//!    [`suffixes`] and [`parsers`] for fio's value syntax and [`arithmetic`] for `(expressions)`;
//! 3. [`plan`]: jobs into tests (`stonewall`) and reporting groups, each job [`mapping`]ped to a
//!    workload with its [`files`] and access [`lines`], the command line's overrides on top.
//!
//! Nothing is silently dropped: an option that would change the I/O is mapped or refused at its
//! line (skipped and listed with `--ignore-unsupported`); one that changes nothing measured is
//! accepted with a note; differences in how a mapped option behaves are noted too.
//!
//! ```no_run
//! use iopath::input::fio::load;
//! use iopath::input::job_file::JobFileRequest;
//! let loaded = load("examples/iometer.fio".as_ref(), &JobFileRequest::default()).unwrap();
//! for test in &loaded.plan.tests {
//!     println!("{}: {} jobs", test.name, test.jobs.len());
//! }
//! ```
//!
//! `docs/fio-compatibility.md` lists every option and difference.

pub mod arithmetic;
pub mod blktrace;
pub mod blktrace_actions;
pub mod blktrace_depth;
pub mod blktrace_merge;
pub mod collect;
pub mod data_checks;
pub mod data_options;
pub mod error_values;
pub mod expand;
pub mod extended;
pub mod extended_mapping;
pub mod extended_values;
pub mod files;
pub mod handling;
pub mod input;
pub mod iolog;
pub mod lines;
pub mod location;
pub mod log_options;
pub mod mapping;
pub mod notes;
pub mod parsers;
pub mod plan;
pub mod replay;
pub mod replay_clones;
pub mod replay_log;
pub mod replay_merge;
pub mod replay_options;
pub mod replay_settings;
pub mod settings;
pub mod source;
pub mod suffixes;
pub mod suggestions;
pub mod table;
pub mod values;
pub mod verify_options;

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod extended_tests;
#[cfg(test)]
mod howto_names;
#[cfg(test)]
mod tests;

use super::job_file::{JobFileError, JobFileRequest, LoadedJob};
use expand::Environment;
use notes::Notes;
use std::path::Path;

/// Reads a fio job file into a plan, with this process's environment.
pub fn load(path: &Path, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
    load_with(path, request, &Environment::system())
}

/// The plan of replaying the fio I/O log at `log` (`iopath run --replay`): one job, as a job
/// file with `read_iolog=LOG` and fio's defaults would give, the request's flags on top.
pub fn load_replay(log: &Path, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
    let at = location::Location {
        file: log.to_path_buf(),
        line: 1,
    };
    let mut settings = settings::JobSettings::fio_defaults(at.clone());
    settings.replay.log = Some(location::Set {
        // One log, whatever its name holds: `:` separates clones' logs in `read_iolog`.
        value: log.to_string_lossy().replace(':', "\\:"),
        at: at.clone(),
    });
    let job = collect::JobDefinition {
        section: "replay".to_string(),
        at,
        settings,
    };
    let jobs = [job];
    let read = ReadJobs {
        path: log,
        jobs: &jobs,
        environment: &Environment::system(),
    };
    planned(read, request, Notes::default(), Vec::new())
}

/// Jobs read from a file (or made for a log), to plan.
struct ReadJobs<'a> {
    path: &'a Path,
    jobs: &'a [collect::JobDefinition],
    environment: &'a Environment,
}

/// The plan of `read`, with the notes and ignored options gathered so far.
fn planned(
    read: ReadJobs<'_>,
    request: &JobFileRequest,
    mut notes: Notes,
    mut ignored: Vec<String>,
) -> Result<LoadedJob, JobFileError> {
    let (plan, merged_captures) = plan::build_plan(
        read.path,
        read.jobs,
        request,
        read.environment,
        &mut notes,
        &mut ignored,
    )?;
    Ok(LoadedJob {
        plan,
        ignored,
        notes: notes.into_lines(),
        merged_captures,
    })
}

/// Reads a fio job file into a plan, expanding values from `environment`.
pub fn load_with(
    path: &Path,
    request: &JobFileRequest,
    environment: &Environment,
) -> Result<LoadedJob, JobFileError> {
    let mut notes = Notes::default();
    let entries = source::read_job_file(path, environment, &mut notes)?;
    let collected = collect::collect(
        &entries,
        path,
        request.ignore_unsupported,
        &request.limits,
        &mut notes,
    )?;
    let read = ReadJobs {
        path,
        jobs: &collected.jobs,
        environment,
    };
    planned(read, request, notes, collected.ignored)
}
