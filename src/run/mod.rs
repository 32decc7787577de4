//! The runner: checks a [`Plan`] against its targets before any I/O ([`prepare`]), then runs it
//! test by test ([`execute`]) into a [`RunResult`].
//!
//! One thread per worker; each owns its engine, slots, planner and recorders. The calling
//! thread coordinates: it starts the workers together, samples progress and CPU, and merges.

pub mod cpu;
pub mod engines;
pub mod host;
pub mod interrupt;
pub mod progress;
pub mod test_runner;
pub mod time;
pub mod worker;

use crate::clock::Clock;
use crate::engine::null::InjectedDelay;
use crate::engine::{EngineError, EngineKind, io_uring_available};
use crate::report::result::{RunResult, SCHEMA_VERSION, StopReason};
use crate::target::safety::{WritePolicy, check_write_allowed};
use crate::target::test_file::{TestFileGuard, create_test_file, default_test_file_size};
use crate::target::{TargetError, TargetInfo, TargetKind, inspect};
use crate::units::format_size;
use crate::workload::{Plan, TestPlan};
use progress::LiveSample;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use test_runner::{PreparedTarget, TestContext, run_test};
use worker::TracedIo;

/// Errors of a run. [`RunError::is_bad_input`] tells which are the user's input (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan does not fit a target (region, alignment, safety).
    #[error("{0}")]
    Input(String),
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
}

impl RunError {
    /// Whether this error is about the user's input (exit status 2, no I/O was done).
    pub fn is_bad_input(&self) -> bool {
        match self {
            RunError::Input(_) => true,
            RunError::Target(error) => !matches!(error, TargetError::Io { .. }),
            RunError::Engine { .. } => false,
        }
    }
}

/// A target as named by the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetSpec {
    /// A file or block device; a missing file is created with `create_size` bytes.
    Path {
        /// The path.
        path: PathBuf,
        /// Size to create the file with when it does not exist.
        create_size: Option<u64>,
    },
    /// A temporary test file in `directory`, sized from free space (or `size`), removed after.
    TempFile {
        /// Where to put it.
        directory: PathBuf,
        /// Size, when given.
        size: Option<u64>,
    },
}

/// Engine, workers and queue depth a test really runs with, and why they differ from what was
/// asked.
#[derive(Clone, Debug, PartialEq)]
pub struct EffectiveShape {
    /// Engine in effect.
    pub engine: EngineKind,
    /// Worker threads per target.
    pub workers_per_target: u32,
    /// I/Os in flight per worker.
    pub queue_depth: u32,
    /// What was changed and why.
    pub warnings: Vec<String>,
}

/// Works out the engine, workers and queue depth of a test: io_uring falls back to sync
/// (announced) when the kernel refuses it; sync maps a queue depth above 1 onto workers.
pub fn effective_shape(test: &TestPlan, io_uring: &Result<(), String>) -> EffectiveShape {
    let workload = &test.workload;
    let mut warnings = Vec::new();
    let mut engine = workload.engine;
    if engine == EngineKind::IoUring
        && let Err(reason) = io_uring
    {
        warnings.push(format!(
            "io_uring is not available ({reason}); using the sync engine"
        ));
        engine = EngineKind::Sync;
    }
    let (workers_per_target, queue_depth) = if engine == EngineKind::Sync
        && workload.queue_depth > 1
    {
        warnings.push(format!(
            "the sync engine keeps one I/O in flight per worker: queue depth {} runs as {} workers of depth 1 ({} workers x {})",
            workload.queue_depth,
            workload.workers * workload.queue_depth,
            workload.workers,
            workload.queue_depth
        ));
        (workload.workers * workload.queue_depth, 1)
    } else {
        (workload.workers, workload.queue_depth)
    };
    EffectiveShape {
        engine,
        workers_per_target,
        queue_depth,
        warnings,
    }
}

/// What the user allows and asks for, beside the plan.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Write permissions.
    pub write_policy: WritePolicy,
    /// Label for comparisons.
    pub label: Option<String>,
    /// The command line, for the result.
    pub command_line: Vec<String>,
    /// Latency injected into null-engine I/Os (tests).
    pub null_delay: Option<InjectedDelay>,
    /// Record every issued I/O.
    pub trace: bool,
    /// Stamp every written block with its offset.
    pub stamp_writes: bool,
    /// Series interval, ns (1 s when 0).
    pub interval_ns: u64,
}

/// A plan checked against its targets; nothing has been written yet.
#[derive(Debug)]
pub struct PreparedRun {
    plan: Plan,
    shapes: Vec<EffectiveShape>,
    targets: Vec<PendingTarget>,
    warnings: Vec<String>,
    options: RunOptions,
}

#[derive(Debug)]
enum PendingTarget {
    Existing(PathBuf, TargetInfo),
    Create {
        path: PathBuf,
        size: u64,
        temporary: bool,
    },
}

impl PreparedRun {
    /// Tests and their effective shapes.
    pub fn tests(&self) -> impl Iterator<Item = (&TestPlan, &EffectiveShape)> {
        self.plan.tests.iter().zip(self.shapes.iter())
    }

    /// Warnings found while preparing (fallbacks, skipped tests).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Paths of targets iopath will create, and their sizes.
    pub fn files_to_create(&self) -> Vec<(PathBuf, u64, bool)> {
        self.targets
            .iter()
            .filter_map(|t| match t {
                PendingTarget::Create {
                    path,
                    size,
                    temporary,
                } => Some((path.clone(), *size, *temporary)),
                PendingTarget::Existing(..) => None,
            })
            .collect()
    }
}

fn temp_file_path(directory: &Path) -> PathBuf {
    directory.join(format!(".iopath-test-{}.tmp", std::process::id()))
}

/// Checks everything before any I/O: targets exist (or can be created), regions fit, block
/// sizes suit O_DIRECT, writes are allowed. Tests that write to a target that may not be written
/// are dropped with a warning when `drop_unwritable` (the default suite), else refused.
pub fn prepare(
    mut plan: Plan,
    specs: &[TargetSpec],
    options: RunOptions,
    drop_unwritable: bool,
) -> Result<PreparedRun, RunError> {
    if specs.is_empty() {
        return Err(RunError::Input("no target given".into()));
    }
    let mut warnings = Vec::new();
    let mut targets = Vec::new();
    for spec in specs {
        targets.push(match spec {
            TargetSpec::Path { path, create_size } => match inspect(path) {
                Ok(info) => PendingTarget::Existing(path.clone(), info),
                Err(TargetError::Missing { .. }) if create_size.is_some() => {
                    let parent = path
                        .parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .unwrap_or(Path::new("."));
                    check_directory_writable(parent)?;
                    PendingTarget::Create {
                        path: path.clone(),
                        size: create_size.unwrap_or(0),
                        temporary: false,
                    }
                }
                Err(TargetError::Missing { path }) => {
                    return Err(RunError::Input(format!(
                        "{}: no such file or device (give --size to create a test file there)",
                        path.display()
                    )));
                }
                Err(other) => return Err(other.into()),
            },
            TargetSpec::TempFile { directory, size } => {
                check_directory_writable(directory)?;
                let size = match size {
                    Some(size) => *size,
                    None => default_test_file_size(directory)?,
                };
                PendingTarget::Create {
                    path: temp_file_path(directory),
                    size,
                    temporary: true,
                }
            }
        });
    }

    // Check every test against every target.
    let mut kept_tests = Vec::new();
    for test in plan.tests.drain(..) {
        let mut refusal = None;
        for target in &targets {
            if let Err(error) = check_test_against_target(&test, target, options.write_policy) {
                refusal = Some(error);
                break;
            }
        }
        match refusal {
            None => kept_tests.push(test),
            Some(RunError::Target(TargetError::WriteRefused { path, reason }))
                if drop_unwritable =>
            {
                warnings.push(format!(
                    "skipped '{}': {}: refusing to write: {reason}",
                    test.name,
                    path.display()
                ));
            }
            Some(RunError::Input(message)) if drop_unwritable && message.contains("O_DIRECT") => {
                warnings.push(format!("skipped '{}': {message}", test.name));
            }
            Some(error) => return Err(error),
        }
    }
    if kept_tests.is_empty() {
        return Err(RunError::Input(
            "no test can run on these targets (see the warnings above)".into(),
        ));
    }
    plan.tests = kept_tests;
    let io_uring = io_uring_available().map_err(|error| error.to_string());
    let shapes = plan
        .tests
        .iter()
        .map(|test| effective_shape(test, &io_uring))
        .collect();
    Ok(PreparedRun {
        plan,
        shapes,
        targets,
        warnings,
        options,
    })
}

fn check_directory_writable(directory: &Path) -> Result<(), RunError> {
    let metadata = std::fs::metadata(directory)
        .map_err(|_| RunError::Input(format!("{}: no such directory", directory.display())))?;
    if !metadata.is_dir() {
        return Err(RunError::Input(format!(
            "{}: not a directory",
            directory.display()
        )));
    }
    let c_path = std::ffi::CString::new(directory.as_os_str().as_encoded_bytes())
        .map_err(|_| RunError::Input(format!("{}: invalid path", directory.display())))?;
    // SAFETY: access only reads the NUL-terminated path we pass.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } != 0 {
        return Err(RunError::Input(format!(
            "{}: no permission to create a test file in this directory",
            directory.display()
        )));
    }
    Ok(())
}

fn check_test_against_target(
    test: &TestPlan,
    target: &PendingTarget,
    policy: WritePolicy,
) -> Result<(), RunError> {
    let workload = &test.workload;
    let (path, size, logical, dio_alignment) = match target {
        PendingTarget::Existing(path, info) => {
            if workload.writes() && workload.engine != EngineKind::Null {
                check_write_allowed(info, policy)?;
            }
            let alignment = info
                .direct_io_alignment_bytes
                .unwrap_or(info.logical_block_size_bytes);
            (
                path,
                info.size_bytes,
                info.logical_block_size_bytes,
                alignment,
            )
        }
        PendingTarget::Create { path, size, .. } => (path, *size, 512, 512),
    };
    let name = path.display();
    let offset = workload.region_offset_bytes;
    if offset >= size {
        return Err(RunError::Input(format!(
            "--offset {} is past the end of {name} ({} bytes)",
            format_size(offset),
            size
        )));
    }
    let region = workload.region_size_bytes.unwrap_or(size - offset);
    if offset + region > size {
        return Err(RunError::Input(format!(
            "the region {}+{} ends past the end of {name} ({} bytes)",
            format_size(offset),
            format_size(region),
            size
        )));
    }
    let largest = workload.block_sizes.max_bytes();
    if region < largest {
        return Err(RunError::Input(format!(
            "the region of {name} ({} bytes) is smaller than the block size {}",
            region,
            format_size(largest)
        )));
    }
    let direct = !workload.buffered && workload.engine != EngineKind::Null;
    let alignment = dio_alignment.max(1) as u64;
    if direct {
        let misaligned = workload
            .block_sizes
            .shares
            .iter()
            .map(|share| share.size_bytes)
            .chain([workload.alignment_bytes, offset])
            .find(|value| value % alignment != 0);
        if let Some(value) = misaligned {
            return Err(RunError::Input(format!(
                "{} breaks O_DIRECT alignment on {name}: offsets and block sizes must be multiples of {} bytes (logical block size {}); use --buffered or a multiple of {}",
                format_size(value),
                alignment,
                logical,
                alignment
            )));
        }
    }
    if let Some(TargetInfo {
        kind: TargetKind::BlockDevice,
        ..
    }) = match target {
        PendingTarget::Existing(_, info) => Some(info),
        _ => None,
    } && !workload
        .block_sizes
        .min_bytes()
        .is_multiple_of(logical.max(1) as u64)
    {
        return Err(RunError::Input(format!(
            "block size {} is not a multiple of {name}'s logical block size ({logical})",
            format_size(workload.block_sizes.min_bytes())
        )));
    }
    Ok(())
}

/// Receives what happens during a run (the CLI prints it; tests collect it).
pub trait RunObserver {
    /// A test is about to start.
    fn test_starting(&mut self, _test: &TestPlan, _shape: &EffectiveShape) {}
    /// Once a second while a test runs.
    fn live(&mut self, _sample: &LiveSample) {}
    /// A test ended.
    fn test_finished(&mut self, _result: &crate::report::result::TestResult) {}
    /// A test file is being created and filled.
    fn creating_file(&mut self, _path: &Path, _size: u64) {}
}

/// A finished (or interrupted) run, with issued I/Os per test and worker when tracing.
pub struct ExecutedRun {
    /// The result.
    pub result: RunResult,
    /// Per test, per worker thread (empty unless tracing).
    pub traces: Vec<Vec<Vec<TracedIo>>>,
    /// The error that stopped the run after some tests had run (their results are kept).
    pub failure: Option<RunError>,
}

/// Runs a prepared plan. `stop` is checked between and inside tests (Ctrl-C). Temporary files
/// are removed when this returns, whatever happened.
pub fn execute(
    prepared: PreparedRun,
    stop: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> Result<ExecutedRun, RunError> {
    let clock = Clock::new();
    let started_at = time::now_rfc3339();
    let PreparedRun {
        plan,
        shapes,
        targets: pending,
        mut warnings,
        options,
    } = prepared;
    let mut guards = Vec::new();
    let mut prepared_targets = Vec::new();
    for (index, target) in pending.into_iter().enumerate() {
        let (path, info) = match target {
            PendingTarget::Existing(path, info) => (path, info),
            PendingTarget::Create {
                path,
                size,
                temporary,
            } => {
                observer.creating_file(&path, size);
                let mut guard = TestFileGuard::new(path.clone());
                create_test_file(&path, size, 0x7e57_f11e)?;
                if temporary {
                    guards.push(guard);
                } else {
                    guard.keep();
                }
                let info = inspect(&path)?;
                (path, info)
            }
        };
        prepared_targets.push(PreparedTarget { index, path, info });
    }
    let interval_ns = if options.interval_ns == 0 {
        1_000_000_000
    } else {
        options.interval_ns
    };
    let mut tests = Vec::new();
    let mut traces = Vec::new();
    let mut partial = false;
    let mut failure = None;
    for (test, shape) in plan.tests.iter().zip(shapes.iter()) {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            partial = true;
            break;
        }
        observer.test_starting(test, shape);
        let mut live = |sample: &LiveSample| observer.live(sample);
        let outcome = run_test(
            test,
            shape,
            &prepared_targets,
            TestContext {
                clock: &clock,
                stop,
                interval_ns,
                null_delay: options.null_delay,
                trace: options.trace,
                stamp_writes: options.stamp_writes,
                observer: &mut live,
            },
        );
        let run = match outcome {
            Ok(run) => run,
            // Nothing measured yet: the error is the whole answer.
            Err(error) if tests.is_empty() => return Err(error),
            // Keep what earlier tests measured.
            Err(error) => {
                warnings.push(format!("'{}' could not run: {error}", test.name));
                failure = Some(error);
                partial = true;
                break;
            }
        };
        observer.test_finished(&run.result);
        let stopped = run.result.stop_reason != StopReason::Completed;
        tests.push(run.result);
        traces.push(run.traces);
        if stopped {
            partial = true;
            break;
        }
    }
    drop(guards);
    if partial && !warnings.iter().any(|w| w.contains("partial")) {
        warnings.push("the run stopped early: results are partial".to_string());
    }
    let result = RunResult {
        schema_version: SCHEMA_VERSION,
        iopath_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: options.command_line.clone(),
        started_at,
        label: options.label.clone(),
        partial,
        host: host::host_info(),
        targets: prepared_targets.into_iter().map(|t| t.info).collect(),
        tests,
        warnings,
    };
    Ok(ExecutedRun {
        result,
        traces,
        failure,
    })
}
