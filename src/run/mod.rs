//! The runner: checks a [`Plan`](crate::workload::Plan) against its targets before any I/O ([`prepare`](mod@prepare)), then runs it
//! test by test ([`execute`]) into a [`RunResult`].
//!
//! One thread per worker; each owns its engine, slots, planner and recorders. The calling
//! thread coordinates: it starts the workers together, samples progress and CPU, and merges.

pub mod budget;
pub mod caches;
pub mod confirm;
mod coordinator;
pub mod descriptors;
pub mod engines;
pub mod file_layout;
pub mod files_on_demand;
pub mod flow;
pub mod interrupt;
pub mod job_links;
pub mod latency_search;
mod looked_targets;
mod operated_targets;
pub mod pacer;
mod pending_target;
pub mod plan_error;
pub mod prepare;
pub mod progress;
pub mod rendezvous;
pub mod shape;
pub mod start_gate;
pub mod target_identity;
pub mod target_operations;
pub mod test_runner;
pub mod thread_start;
mod trim_check;
pub mod worker;

pub use plan_error::PlanError;
pub use prepare::{PreparedRun, RunOptions, prepare};
pub use shape::TestShape;

use crate::analysis::Analyser;
use crate::discovery::HostView;
use crate::discovery::resources::describe;
use crate::engine::network;
use crate::engine::{EngineError, StopSignal};
use crate::host::clock::Clock;
use crate::host::time;
use crate::result::{
    CreatedContent, RunResult, SCHEMA_VERSION, StopReason, TargetInfo, TargetKind,
};
use crate::targets::filesystem_cache::FilesystemCache;
use crate::targets::network_target::NetworkTarget;
use crate::targets::remote_file::{self, RemoteFileError, RemoteTestFile};
use crate::targets::test_file::{
    Creation, TestFileGuard, create_sized_test_file, create_test_file_unless_stopped,
};
use crate::targets::{TargetError, TargetHandle};
use crate::workload::TestPlan;
use prepare::PendingTarget;
use progress::LiveSample;
use std::path::{Path, PathBuf};
use test_runner::{PreparedTarget, TargetAccess, TestContext, run_test};
use worker::TracedIo;

/// Errors of a run. [`RunError::is_bad_input`] tells which are the user's input (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan does not fit its targets or the host (region, alignment, limits, memory).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A target problem found before any I/O.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// An engine could not be opened.
    #[error("{target}: {source}")]
    Engine {
        /// The target.
        target: String,
        /// Cause.
        source: EngineError,
    },
    /// A worker thread could not be created (the others were stopped and joined).
    #[error(transparent)]
    Threads(#[from] thread_start::ThreadStartError),
    /// The worker threads did not all reach the start in time.
    #[error("the test could not start: {0}")]
    Start(start_gate::GateClosed),
    /// The other clients of a multi-client run did not start the test together with this one.
    #[error("the test could not start together with the other clients: {0}")]
    Together(String),
}

impl RunError {
    /// Whether this error is about the user's input (exit status 2, no I/O was done).
    pub fn is_bad_input(&self) -> bool {
        match self {
            RunError::Plan(_) => true,
            RunError::Target(error) => error.is_bad_input(),
            RunError::Engine { .. }
            | RunError::Threads(_)
            | RunError::Start(_)
            | RunError::Together(_) => false,
        }
    }

    /// Whether this error only says that the run was asked to stop (Ctrl-C, SIGTERM) while an
    /// engine was still waiting on a server.
    pub fn is_stop(&self) -> bool {
        matches!(self, RunError::Engine { source, .. } if source.is_stop())
    }

    /// Whether this is a stop that left nothing behind on the server (no request abandoned).
    pub fn is_quiet_stop(&self) -> bool {
        matches!(
            self,
            RunError::Engine {
                source: crate::engine::EngineError::Stopped { unanswered: 0, .. },
                ..
            }
        )
    }
}

/// Receives what happens during a run (the CLI prints it; tests collect it).
pub trait RunObserver {
    /// The run's targets are ready: `header` is the result so far (no tests yet, `partial`
    /// set until the run ends). Tests follow through [`RunObserver::test_finished`].
    fn run_started(&mut self, _header: &RunResult) {}
    /// A test is about to start.
    fn test_starting(&mut self, _test: &TestPlan, _shapes: &[TestShape]) {}
    /// Once a second while a test runs.
    fn live(&mut self, _sample: &LiveSample) {}
    /// A test ended.
    fn test_finished(&mut self, _result: &crate::result::TestResult) {}
    /// A test file of `size` bytes is being created, to hold `content` when the tests start
    /// (filled with data, or only sized for the jobs' writes).
    fn creating_file(&mut self, _path: &Path, _size: u64, _content: CreatedContent) {}
    /// A confirming experiment (`--confirm`, announced by [`RunObserver::test_starting`])
    /// ended; it is not a test of the run, and its figures go into the analysis of its test.
    fn experiment_finished(&mut self) {}
    /// Every test has run and `result` is about to be analysed: an observer may add what it
    /// measured beside the run (the far end's counters of `--server-metrics`), so that the
    /// one analysis of the run sees it.
    fn tests_ended(&mut self, _result: &mut RunResult) {}
}

/// What was found about a local target, and the access workers get to it.
fn local(handle: TargetHandle) -> (TargetInfo, TargetAccess) {
    (handle.info().clone(), TargetAccess::Local(handle))
}

/// `handle` without its descriptor when it gives it back once checked (`released[index]`).
fn released(handle: TargetHandle, released: &[bool], index: usize) -> TargetHandle {
    if released.get(index).copied().unwrap_or(false) {
        handle.without_descriptor()
    } else {
        handle
    }
}

/// A finished (or interrupted) run, with issued I/Os per test and worker when tracing.
pub struct ExecutedRun {
    /// The result.
    pub result: RunResult,
    /// Per test, per worker thread (empty unless tracing).
    pub traces: Vec<Vec<Vec<TracedIo>>>,
    /// Per test, what each worker thread kept for its job's log files, with the job's index.
    pub io_logs: Vec<Vec<(usize, crate::result::io_log::IoLogRecords)>>,
    /// The error that stopped the run after some tests had run (their results are kept).
    pub failure: Option<RunError>,
    /// Whether a stop request arrived while the run went on (at any phase: file creation,
    /// a start delay, the ramp, between tests, the measured time). The result is then
    /// `partial` unless everything had already been done.
    pub interrupted: bool,
    /// Confirming experiments left out to keep within the time bound of
    /// [`confirm::ConfirmMode::WithinTestTime`] (recorded as not run in their tests).
    pub confirmations_left_out: usize,
}

/// Runs a prepared plan. `stop` is checked at every phase (creating test files, between and
/// inside tests) and by engines waiting on a network server; once it is raised the run ends
/// promptly with what was measured. Temporary files are removed when this returns, whatever
/// happened.
pub fn execute(
    prepared: PreparedRun,
    stop: &StopSignal,
    observer: &mut dyn RunObserver,
) -> Result<ExecutedRun, RunError> {
    execute_inner(
        prepared,
        stop,
        observer,
        Afterwards::Nothing,
        &mut rendezvous::Alone,
    )
}

/// What the run does with its result once the tests have run.
#[derive(Clone, Copy)]
enum Afterwards<'a> {
    /// Nothing: the result comes back as measured.
    Nothing,
    /// Analyses it, once.
    Analyse(&'a Analyser),
    /// Analyses it, once, then runs the confirming experiments its verdicts call for.
    AnalyseAndConfirm(&'a Analyser),
}

impl<'a> Afterwards<'a> {
    fn analyser(self) -> Option<&'a Analyser> {
        match self {
            Afterwards::Nothing => None,
            Afterwards::Analyse(analyser) | Afterwards::AnalyseAndConfirm(analyser) => {
                Some(analyser)
            }
        }
    }
}

/// [`execute`] as one client of a multi-client run (or alone, with
/// [`rendezvous::Alone`]): every test starts when `rendezvous` says, and stops when it asks.
/// The result comes back analysed by `analyser`, once, when the run has ended.
pub fn execute_together(
    prepared: PreparedRun,
    stop: &StopSignal,
    observer: &mut dyn RunObserver,
    rendezvous: &mut dyn rendezvous::Rendezvous,
    analyser: &Analyser,
) -> Result<ExecutedRun, RunError> {
    execute_inner(
        prepared,
        stop,
        observer,
        Afterwards::Analyse(analyser),
        rendezvous,
    )
}

/// [`execute`], then, when every test has run, analyses the result (once, with `analyser`)
/// and runs the confirming experiment of each verdict, which reads that analysis
/// (`--confirm`; the plan must have been prepared with [`RunOptions::confirm`]): see
/// [`confirm`]. The result comes back analysed, with the confirmations in its analysis.
pub fn execute_and_confirm(
    prepared: PreparedRun,
    stop: &StopSignal,
    observer: &mut dyn RunObserver,
    analyser: &Analyser,
) -> Result<ExecutedRun, RunError> {
    execute_inner(
        prepared,
        stop,
        observer,
        Afterwards::AnalyseAndConfirm(analyser),
        &mut rendezvous::Alone,
    )
}

/// Runs the plan, then does what `afterwards` says: the analysis, once, comes before the
/// confirming experiments (they read its verdicts), else at the end.
fn execute_inner(
    prepared: PreparedRun,
    stop: &StopSignal,
    observer: &mut dyn RunObserver,
    afterwards: Afterwards<'_>,
    rendezvous: &mut dyn rendezvous::Rendezvous,
) -> Result<ExecutedRun, RunError> {
    let clock = Clock::new();
    let started_at = time::now_rfc3339();
    let PreparedRun {
        plan,
        shapes,
        targets: pending,
        released,
        held_by_targets,
        warnings,
        options,
        host,
        io_uring,
    } = prepared;
    // The experiments are checked as the tests were, before any target is opened or made.
    let experiments = if options.confirm.is_on() {
        let checks = confirm::ExperimentChecks {
            targets: &pending,
            policy: options.write_policy,
            host: &host,
            io_uring: &io_uring,
            held_by_targets,
        };
        plan.tests.iter().map(|test| checks.plan(test)).collect()
    } else {
        Vec::new()
    };
    let mut guards = Vec::new();
    let mut remote_files = Vec::new();
    let by_name: Vec<bool> = target_operations::operations_of_targets(&plan)
        .iter()
        .map(Option::is_some)
        .collect();
    let (prepared_targets, all_ready) = prepare_targets(
        (pending, &by_name, &released),
        stop,
        observer,
        (&mut guards, &mut remote_files),
        options.net_timeout(),
    )?;
    let interval_ns = if options.interval_ns == 0 {
        crate::analysis::short_run::series_interval_ns(longest_measured_ns(&plan.tests))
    } else {
        options.interval_ns
    };
    let mut result = RunResult {
        schema_version: SCHEMA_VERSION,
        iopath_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: options.command_line.clone(),
        started_at,
        label: options.label.clone(),
        partial: true,
        host: describe(&HostView::live()),
        targets: prepared_targets.iter().map(|t| t.info.clone()).collect(),
        tests: Vec::new(),
        warnings,
        link_tests: Vec::new(),
        paths: Vec::new(),
        cluster: None,
    };
    observer.run_started(&result);
    let mut traces = Vec::new();
    let mut io_logs = Vec::new();
    let mut partial = !all_ready;
    let mut failure = None;
    let tests = if all_ready {
        plan.tests.as_slice()
    } else {
        &[]
    };
    let tests_started = std::time::Instant::now();
    // Names this run in the header of every block it writes when verifying.
    let verify_run_id = getrandom::u64().unwrap_or_else(|_| clock.now() ^ 0x696f_7061_7468);
    for (test, shapes) in tests.iter().zip(shapes.iter()) {
        if stop.is_raised() {
            partial = true;
            break;
        }
        if test.settings.drop_caches_before
            && let Err(reason) = caches::drop_page_cache()
        {
            result
                .warnings
                .push(format!("'{}': page cache not dropped: {reason}", test.name));
        }
        observer.test_starting(test, shapes);
        let mut live = |sample: &LiveSample| observer.live(sample);
        let outcome = run_test(
            test,
            shapes,
            &prepared_targets,
            TestContext {
                clock: &clock,
                stop,
                interval_ns,
                net_timeout: options.net_timeout(),
                null_delay: options.null_delay,
                trace: options.trace,
                stamp_writes: options.stamp_writes,
                verify_run_id,
                observer: &mut live,
                rendezvous: &mut *rendezvous,
            },
        );
        let run = match outcome {
            Ok(Some(run)) => run,
            // Stopped before its workers started.
            Ok(None) => {
                partial = true;
                break;
            }
            // A stop request that met an engine still connecting or waiting on its server
            // ends the run as any stop does, with what it measured; requests abandoned to
            // the server are said.
            Err(error) if error.is_stop() && stop.is_raised() => {
                if !error.is_quiet_stop() {
                    result
                        .warnings
                        .push(format!("'{}' stopped: {error}", test.name));
                }
                partial = true;
                break;
            }
            // Nothing measured yet: the error is the whole answer.
            Err(error) if result.tests.is_empty() => return Err(error),
            // Keep what earlier tests measured.
            Err(error) => {
                result
                    .warnings
                    .push(format!("'{}' could not run: {error}", test.name));
                failure = Some(error);
                partial = true;
                break;
            }
        };
        observer.test_finished(&run.result);
        // An error ends the run unless every job that ended on one keeps its errors to a
        // narrower scope (fio's default, and exitall_on_error without exit_what=all).
        let stopped = match run.result.stop_reason {
            StopReason::Completed => false,
            StopReason::Interrupted => true,
            StopReason::Error => {
                run.result.jobs.iter().zip(&test.jobs).any(|(result, job)| {
                    result.stop_reason == StopReason::Error
                        && job.workload.error_policy.error_ends.ends_run()
                }) || run.result.jobs.len() != test.jobs.len()
            }
        };
        result.tests.push(run.result);
        traces.push(run.traces);
        io_logs.push(run.io_logs);
        if stopped {
            partial = true;
            break;
        }
        // A job that ends every job when it ends (fio's exit_what=all) ends the run too.
        if let Some(job) = test
            .jobs
            .iter()
            .find(|job| job.workload.controls.ends_others == crate::result::EndOthers::Run)
            && result.tests.len() < tests.len()
        {
            result.warnings.push(format!(
                "'{}': job '{}' ended every job when it ended (exit_what=all): the tests after it did not run",
                test.name, job.name
            ));
            break;
        }
    }
    let tests_wall_ns = tests_started.elapsed().as_nanos() as u64;
    observer.tests_ended(&mut result);
    let mut confirmations_left_out = 0;
    let mut analysed = false;
    if let Afterwards::AnalyseAndConfirm(analyser) = afterwards
        && !partial
    {
        analyser.analyse(&mut result);
        analysed = true;
        let context = confirm::ConfirmContext {
            clock: &clock,
            stop,
            options: &options,
            interval_ns,
            targets: &prepared_targets,
            tests_wall_ns,
        };
        confirmations_left_out = confirm::confirm_tests(
            &mut result,
            &plan.tests,
            &experiments,
            &context,
            observer,
            analyser.facts(),
        );
    }
    drop(guards);
    for file in remote_files {
        let target = file.target().to_string();
        if let Err(error) = file.remove() {
            result
                .warnings
                .push(format!("{target}: the test file was not removed: {error}"));
        }
    }
    result.partial = partial;
    if let Some(analyser) = afterwards.analyser()
        && !analysed
    {
        analyser.analyse(&mut result);
    }
    Ok(ExecutedRun {
        result,
        traces,
        io_logs,
        failure,
        interrupted: stop.is_raised(),
        confirmations_left_out,
    })
}

/// Creates and fills the missing test file `target` names on its file server; `None` when
/// stopped first (what was made is removed).
fn create_remote_test_file(
    target: &NetworkTarget,
    size_bytes: u64,
    stop: &StopSignal,
    net_timeout: std::time::Duration,
) -> Result<Option<RemoteTestFile>, RunError> {
    let failed = |error: RemoteFileError| {
        RunError::Target(TargetError::Io {
            path: PathBuf::from(&error.target),
            operation: "the test file",
            source: std::io::Error::other(error.problem),
        })
    };
    let server = network::remote_file(target, net_timeout)
        .ok_or_else(|| {
            failed(RemoteFileError {
                target: target.to_string(),
                problem: "not a file on a file server".into(),
            })
        })?
        .map_err(failed)?;
    remote_file::create_test_file(server, size_bytes, 0x7e57_f11e, stop.flag()).map_err(failed)
}

/// Opens, probes or creates every target, in order; temporary files get a guard in the first
/// of `guards`, test files made on file servers (`nfs://`, always removed after the run) one
/// in the second. Returns the targets ready so far and whether all are (false when `stop` was
/// set first). Targets worked by name (`by_name[index]`: filestat, filedelete) keep no
/// descriptor; those of `released_targets[index]` (opened on demand, worked by name, files
/// of a run of many targets) give theirs back once checked.
fn prepare_targets(
    (pending, by_name, released_targets): (Vec<PendingTarget>, &[bool], &[bool]),
    stop: &StopSignal,
    observer: &mut dyn RunObserver,
    guards: (&mut Vec<TestFileGuard>, &mut Vec<RemoteTestFile>),
    net_timeout: std::time::Duration,
) -> Result<(Vec<PreparedTarget>, bool), RunError> {
    let (guards, remote_files) = guards;
    let mut prepared_targets = Vec::with_capacity(pending.len());
    let filesystems = FilesystemCache::default();
    for (index, target) in pending.into_iter().enumerate() {
        if stop.is_raised() {
            return Ok((prepared_targets, false));
        }
        let (path, access, probed) = match target {
            PendingTarget::Existing(handle) => (handle.path().to_path_buf(), local(handle), None),
            PendingTarget::Network(target, info, volume) => {
                if volume.to_create {
                    observer.creating_file(
                        Path::new(&target.to_string()),
                        volume.size_bytes,
                        CreatedContent::Filled,
                    );
                    match create_remote_test_file(&target, volume.size_bytes, stop, net_timeout)? {
                        Some(file) => remote_files.push(file),
                        None => return Ok((prepared_targets, false)),
                    }
                }
                (
                    PathBuf::from(target.to_string()),
                    (info, TargetAccess::Network(target)),
                    Some(*volume),
                )
            }
            PendingTarget::Create {
                path,
                size,
                temporary,
            } => {
                observer.creating_file(&path, size, CreatedContent::Filled);
                let mut guard = TestFileGuard::new(path.clone());
                let file =
                    match create_test_file_unless_stopped(&path, size, 0x7e57_f11e, stop.flag())? {
                        Creation::Created(file) => file,
                        Creation::Stopped => return Ok((prepared_targets, false)),
                    };
                if temporary {
                    guards.push(guard);
                } else {
                    guard.keep();
                }
                // Carry on with the file just created, whatever the path leads to by now.
                let handle = TargetHandle::from_created(&path, file, &filesystems)?
                    .created_with(CreatedContent::Filled, size);
                (path, local(released(handle, released_targets, index)), None)
            }
            PendingTarget::CreateSized {
                path,
                size,
                temporary,
                preallocation,
            } => {
                let content = CreatedContent::Sized { preallocation };
                observer.creating_file(&path, size, content);
                let mut guard = TestFileGuard::new(path.clone());
                let file = create_sized_test_file(&path, size, preallocation)?;
                if temporary {
                    guards.push(guard);
                } else {
                    guard.keep();
                }
                let handle = TargetHandle::from_created(&path, file, &filesystems)?
                    .created_with(content, size);
                (path, local(released(handle, released_targets, index)), None)
            }
            PendingTarget::NullSink { path } => {
                // Never opened: its jobs run on the null engine.
                let info = TargetInfo::unexamined(
                    path.display().to_string(),
                    TargetKind::File,
                    crate::targets::null_sink::NULL_SINK_BYTES,
                );
                (path, (info, TargetAccess::Nothing), None)
            }
            PendingTarget::Named {
                path,
                make_directory,
                ..
            } => {
                // A file-operation engine works on it by name, in the run.
                if make_directory {
                    operated_targets::make_directory(&path)?;
                }
                let info = TargetInfo::unexamined(path.display().to_string(), TargetKind::File, 0);
                (path, (info, TargetAccess::Nothing), None)
            }
            PendingTarget::Uncreated { path, size, .. } => {
                // Only the null engine uses it: nothing was written, so nothing is iopath's.
                let info =
                    TargetInfo::unexamined(path.display().to_string(), TargetKind::File, size);
                (path, (info, TargetAccess::Nothing), None)
            }
        };
        let (info, mut access) = access;
        if by_name.get(index).copied().unwrap_or(false) {
            // A file `filestat` or `filedelete` finds (laid out now, or there before): its
            // jobs work on it by name, and no descriptor of it stays open in the run, as in
            // fio. An open descriptor would leave `unlink` only the name to remove, and the
            // freeing of the file to the end of the run, outside the measured time.
            access = TargetAccess::Nothing;
        }
        prepared_targets.push(PreparedTarget {
            index,
            path,
            info,
            access,
            probed,
        });
    }
    Ok((prepared_targets, true))
}

/// The longest measured time of any job of `tests`, or `None` when one runs by bytes (its
/// length is not known before it runs).
fn longest_measured_ns(tests: &[crate::workload::TestPlan]) -> Option<u64> {
    let mut longest = 0;
    for job in tests.iter().flat_map(|test| &test.jobs) {
        match job.workload.length {
            crate::result::RunLength::Time { duration_ns } => longest = longest.max(duration_ns),
            _ => return None,
        }
    }
    Some(longest)
}
