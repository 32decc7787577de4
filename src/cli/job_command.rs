//! `iopath job convert` and `iopath job check`: job files (fio's format or iopath's TOML)
//! turned into TOML, or checked, without any I/O.

use super::exit::{self, InFile};
use super::limit_args::LimitArgs;
use super::messages::for_terminal;
use clap::{Args, Subcommand};
use iopath::input::job_file::{JobFileRequest, LoadedJob};
use iopath::input::load_job_file;
use iopath::input::options::WorkloadOptions;
use iopath::input::toml_job::{to_toml, toml_comment};
use iopath::result::{RunLength, Workload};
use iopath::run::{RunOptions, prepare};
use iopath::targets::TargetSpec;
use iopath::targets::safety::WritePolicy;
use iopath::text::shown;
use iopath::units::format_size;
use iopath::units::format_time;
use std::path::{Path, PathBuf};

/// Flags of `iopath job`.
#[derive(Debug, Args)]
#[command(after_help = "\
Job files are read by their name: .toml is iopath's TOML (docs/job-files.md), anything else is
fio's format.

Examples:
  iopath job convert oltp.fio > oltp.toml      the same workloads as iopath TOML
  iopath job check oltp.toml                   what would run, checked without any I/O
  iopath run --job oltp.toml --duration 10s    run it (flags apply on top of every job)")]
pub struct JobArgs {
    /// What to do with the job file.
    #[command(subcommand)]
    pub action: JobAction,
}

/// What `iopath job` does.
#[derive(Debug, Subcommand)]
pub enum JobAction {
    /// Print a fio or TOML job file as iopath's TOML: the same tests, jobs and workloads,
    /// seeds included, so that both issue the same I/O.
    #[command(after_help = "\
Examples:
  iopath job convert oltp.fio > oltp.toml
  iopath job convert legacy.fio --ignore-unsupported > legacy.toml   (ignored options become comments)")]
    Convert(ConvertArgs),
    /// Check a job file without doing any I/O: every key, every value, every target, then
    /// list its tests, jobs and targets. Exit 0 when it can run, 2 when it cannot, 1 when a
    /// target cannot be inspected.
    #[command(after_help = "\
Targets and workload flags mean what they mean to `iopath run --job`, so a file checks exactly
as it would run.

Examples:
  iopath job check oltp.toml
  iopath job check disks.fio --allow-destructive   (the job writes to block devices)
  iopath job check jesd219.fio /dev/nvme1n1        (the job's files replaced, as run does)
  iopath job check seq.fio data.bin --size 64m")]
    Check(Box<CheckArgs>),
}

/// Flags of `iopath job convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The job file (fio's format, or .toml).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Convert even when some options are not supported, and list them as comments.
    #[arg(long)]
    pub ignore_unsupported: bool,
    /// How many jobs and worker threads a test may have.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Flags of `iopath job check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The job file (fio's format, or .toml).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Files or block devices that replace the jobs' own files, as with `iopath run --job`.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,
    /// Workload flags applied on top of every job, as with `iopath run --job` (`--size`,
    /// `--duration` …).
    #[command(flatten)]
    pub workload: WorkloadOptions,
    /// Accept options that are not supported, and list them.
    #[arg(long)]
    pub ignore_unsupported: bool,
    /// Check as `iopath run --allow-destructive` would run: writes to block devices and to
    /// files iopath did not create are allowed.
    #[arg(long)]
    pub allow_destructive: bool,
    /// How many jobs and worker threads a test may have.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs `iopath job …` and returns the exit status.
pub fn run(args: &JobArgs) -> i32 {
    match &args.action {
        JobAction::Convert(args) => convert(args),
        JobAction::Check(args) => check(args),
    }
}

fn load(file: &Path, request: &JobFileRequest) -> Result<LoadedJob, i32> {
    load_job_file(file, request).map_err(|error| exit::fail(&error))
}

fn convert(args: &ConvertArgs) -> i32 {
    let request = JobFileRequest {
        ignore_unsupported: args.ignore_unsupported,
        limits: args.limits.limits(),
        ..JobFileRequest::default()
    };
    let loaded = match load(&args.file, &request) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let replaying: Vec<String> = loaded
        .plan
        .tests
        .iter()
        .flat_map(|test| &test.jobs)
        .filter(|job| job.replay.is_some())
        .map(|job| format!("'{}'", job.name))
        .collect();
    if !replaying.is_empty() {
        return exit::fail(&exit::InFile {
            file: &args.file,
            error: exit::Usage(format!(
                "job(s) {} replay an I/O log (read_iolog, replay_*), which a TOML job file cannot hold: run the fio job file itself (iopath run --job FILE)",
                replaying.join(", ")
            )),
        });
    }
    let mut out = toml_comment(&format!(
        "Converted from {} by `iopath job convert`.",
        args.file.display()
    ));
    for ignored in &loaded.ignored {
        out.push_str(&toml_comment(&format!(
            "ignored (not supported): {ignored}"
        )));
    }
    for note in &loaded.notes {
        out.push_str(&toml_comment(&format!("note: {note}")));
    }
    out.push_str(&to_toml(&loaded.plan));
    print!("{out}");
    exit::SUCCESS
}

fn check(args: &CheckArgs) -> i32 {
    // The same request `iopath run --job` builds, so that what runs also checks.
    let request = JobFileRequest {
        overrides: args.workload.clone(),
        targets: args.targets.clone(),
        ignore_unsupported: args.ignore_unsupported,
        limits: args.limits.limits(),
    };
    let loaded = match load(&args.file, &request) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    for ignored in &loaded.ignored {
        eprintln!("ignored (--ignore-unsupported): {}", for_terminal(ignored));
    }
    for note in &loaded.notes {
        eprintln!("note: {}", for_terminal(note));
    }
    let targets = loaded.plan.targets.clone();
    let options = RunOptions {
        write_policy: WritePolicy {
            allow_destructive: args.allow_destructive,
            ..WritePolicy::default()
        },
        limits: args.limits.limits(),
        ..RunOptions::default()
    };
    let prepared = match prepare(loaded.plan, options, false) {
        Ok(prepared) => prepared,
        Err(error) => {
            return exit::fail(&InFile {
                file: &args.file,
                error,
            });
        }
    };
    let to_create = prepared.files_to_create();
    let tests: Vec<_> = prepared.tests().collect();
    let job_count: usize = tests.iter().map(|(test, _)| test.jobs.len()).sum();
    println!(
        "{}: valid: {} test{}, {} job{}, {} target{}",
        args.file.display(),
        tests.len(),
        plural(tests.len()),
        job_count,
        plural(job_count),
        targets.len(),
        plural(targets.len())
    );
    println!("targets:");
    let not_created = prepared.files_not_created();
    let sized = prepared.files_only_sized();
    let remote_to_create = prepared.remote_files_to_create();
    for (index, target) in targets.iter().enumerate() {
        let is_this = |(path, _, temporary): &&(std::path::PathBuf, u64, bool)| match target {
            TargetSpec::Path { path: named, .. } => !temporary && path == named,
            TargetSpec::TempFile { directory, .. } => {
                *temporary && path.parent() == Some(directory.as_path())
            }
            TargetSpec::Network(_) => false,
        };
        let remote = match target {
            TargetSpec::Network(network) => {
                let url = network.to_string();
                remote_to_create.iter().find(|(known, _)| *known == url)
            }
            _ => None,
        };
        let state = match (
            remote,
            to_create.iter().find(is_this),
            not_created.iter().find(is_this),
        ) {
            (Some((_, size)), _, _) => format!(
                " (will be created, {}, and removed after the run)",
                format_size(*size)
            ),
            (None, Some((path, size, temporary)), _) => {
                let content = sized
                    .iter()
                    .find(|(sized_path, _)| sized_path == path)
                    .map_or(String::new(), |(_, content)| {
                        format!(", {}", content.describe())
                    });
                if *temporary {
                    format!(" ({}{content})", format_size(*size))
                } else {
                    format!(" (will be created, {}{content})", format_size(*size))
                }
            }
            (None, None, Some((_, size, _))) => format!(
                " ({}, not created: the null engine does no I/O)",
                format_size(*size)
            ),
            (None, None, None) => String::new(),
        };
        println!(
            "  {}. {}{state}",
            index + 1,
            for_terminal(target_name(target))
        );
    }
    println!("tests:");
    for (number, (test, shapes)) in tests.iter().enumerate() {
        let together = if test.jobs.len() > 1 {
            format!(" ({} jobs at the same time)", test.jobs.len())
        } else {
            String::new()
        };
        println!("  {}. {}{together}", number + 1, shown(&test.name));
        for (job, shape) in test.jobs.iter().zip(shapes.iter()) {
            let on: Vec<String> = job
                .targets
                .iter()
                .map(|&index| targets.get(index).map(target_name).unwrap_or_default())
                .collect();
            let group = if job.group != 0 {
                format!(" [group {}]", job.group)
            } else {
                String::new()
            };
            let line = format!(
                "{}, {}, {} engine, on {}",
                job.workload.summary(),
                length(&job.workload),
                shape.engine.name(),
                on.join(", ")
            );
            println!("       {}{group}: {}", shown(&job.name), for_terminal(line));
            for warning in &shape.warnings {
                eprintln!("warning: {}: {}", shown(&job.name), for_terminal(warning));
            }
        }
    }
    for warning in prepared.warnings() {
        eprintln!("warning: {}", for_terminal(warning));
    }
    exit::SUCCESS
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

fn target_name(target: &TargetSpec) -> String {
    match target {
        TargetSpec::Path { path, .. } => path.display().to_string(),
        TargetSpec::TempFile { directory, .. } => {
            format!("a temporary file in {}", directory.display())
        }
        TargetSpec::Network(target) => target.to_string(),
    }
}

fn length(workload: &Workload) -> String {
    match workload.length {
        RunLength::Time { duration_ns } if workload.ramp_ns > 0 => format!(
            "{} after a {} ramp",
            format_time(duration_ns),
            format_time(workload.ramp_ns)
        ),
        RunLength::Time { duration_ns } => format_time(duration_ns),
        RunLength::Bytes {
            bytes,
            time_limit_ns: Some(limit),
        } => format!("{} (at most {})", format_size(bytes), format_time(limit)),
        RunLength::Bytes { bytes, .. } => format_size(bytes),
    }
}
