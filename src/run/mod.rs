//! The runner: checks a [`Plan`] against its targets before any I/O ([`prepare`]), then runs it
//! test by test ([`execute`]) into a [`RunResult`].
//!
//! One thread per worker; each owns its engine, slots, planner and recorders. The calling
//! thread coordinates: it starts the workers together, samples progress and CPU, and merges.

pub mod caches;
pub mod engines;
pub mod interrupt;
pub mod prepare;
pub mod progress;
pub mod test_runner;
pub mod worker;

pub use prepare::{EffectiveShape, PreparedRun, RunOptions, effective_shape, prepare};

use crate::engine::EngineError;
use crate::host::clock::Clock;
use crate::host::{info, time};
use crate::result::{RunResult, SCHEMA_VERSION, StopReason};
use crate::targets::test_file::{TestFileGuard, create_test_file};
use crate::targets::{TargetError, inspect};
use crate::workload::TestPlan;
use prepare::PendingTarget;
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

/// Receives what happens during a run (the CLI prints it; tests collect it).
pub trait RunObserver {
    /// A test is about to start.
    fn test_starting(&mut self, _test: &TestPlan, _shapes: &[EffectiveShape]) {}
    /// Once a second while a test runs.
    fn live(&mut self, _sample: &LiveSample) {}
    /// A test ended.
    fn test_finished(&mut self, _result: &crate::result::TestResult) {}
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
        let (path, info, network) = match target {
            PendingTarget::Existing(path, info) => (path, info, None),
            PendingTarget::Network(target, info) => {
                (PathBuf::from(target.to_string()), info, Some(target))
            }
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
                (path, info, None)
            }
        };
        prepared_targets.push(PreparedTarget {
            index,
            path,
            info,
            network,
        });
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
    for (test, shapes) in plan.tests.iter().zip(shapes.iter()) {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            partial = true;
            break;
        }
        if test.settings.drop_caches_before
            && let Err(reason) = caches::drop_page_cache()
        {
            warnings.push(format!("'{}': page cache not dropped: {reason}", test.name));
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
    let result = RunResult {
        schema_version: SCHEMA_VERSION,
        iopath_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: options.command_line.clone(),
        started_at,
        label: options.label.clone(),
        partial,
        host: info::host_info(),
        targets: prepared_targets.into_iter().map(|t| t.info).collect(),
        tests,
        warnings,
        link_tests: Vec::new(),
        paths: Vec::new(),
    };
    Ok(ExecutedRun {
        result,
        traces,
        failure,
    })
}
