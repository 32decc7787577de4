//! Signals during `iopath run`. The first SIGINT or SIGTERM asks the run to stop (the library
//! ends every phase promptly and the result is written as usual). A second one does not wait:
//! the test files being filled or to be removed are removed (by the library), the tests that
//! had finished are written to the outputs given, marked `partial`, and iopath exits with 130.
//!
//! The outputs live behind one lock: whoever writes them (the run at its end, or a second
//! signal) holds it until done, so they are never written twice or cut short.

use super::exit;
use super::live::TerminalObserver;
use super::messages::for_terminal;
use super::outputs::Outputs;
use iopath::analysis::{DeclaredPath, analyse};
use iopath::engine::StopSignal;
use iopath::result::RunResult;
use iopath::result::TestResult;
use iopath::run::interrupt::{self, ForcedStop};
use iopath::run::progress::LiveSample;
use iopath::run::{EffectiveShape, RunObserver};
use iopath::workload::TestPlan;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// What the run has so far: the outputs still to write, and the result of the tests that
/// finished.
pub struct SoFar {
    /// The outputs; taken by whoever writes them.
    pub outputs: Option<Outputs>,
    /// The run's header and finished tests (none before the targets are ready).
    pub result: Option<RunResult>,
}

/// [`SoFar`], shared between the run and the signal-handling thread.
#[derive(Clone)]
pub struct Shared(Arc<Mutex<SoFar>>);

impl Shared {
    /// Shares `outputs`.
    pub fn new(outputs: Outputs) -> Self {
        Shared(Arc::new(Mutex::new(SoFar {
            outputs: Some(outputs),
            result: None,
        })))
    }

    /// Locks it. A panic elsewhere while it was held leaves plain data: keep using it.
    pub fn lock(&self) -> MutexGuard<'_, SoFar> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Installs the signal handlers for `iopath run`; returns the stop flag.
pub fn install(shared: Shared, declared: DeclaredPath) -> std::io::Result<StopSignal> {
    interrupt::install(move |forced| write_and_exit(&shared, &declared, &forced))
}

/// A second signal: writes what the run has and ends the process with status 130.
fn write_and_exit(shared: &Shared, declared: &DeclaredPath, forced: &ForcedStop) -> ! {
    for failure in &forced.removal_failures {
        eprintln!("error: {failure}");
    }
    // Held until the exit: the run cannot start writing the outputs meanwhile.
    let mut so_far = shared.lock();
    if let Some(outputs) = so_far.outputs.take() {
        match so_far.result.take() {
            Some(mut result) => {
                eprintln!(
                    "stopped at once by a second signal; writing the {} finished test(s)",
                    result.tests.len()
                );
                result.partial = true;
                analyse(&mut result, declared);
                if let Err(messages) = outputs.write(&result) {
                    for message in messages {
                        eprintln!("error: {}", for_terminal(&message));
                    }
                }
            }
            // Nothing was written, and no output file was touched.
            None => eprintln!("stopped at once by a second signal, before any test"),
        }
    }
    std::process::exit(exit::INTERRUPTED);
}

/// Installs handlers whose second signal only exits with 130 (commands without a run to save).
pub fn install_plain() -> std::io::Result<StopSignal> {
    interrupt::install(|forced: ForcedStop| {
        for failure in &forced.removal_failures {
            eprintln!("error: {failure}");
        }
        std::process::exit(exit::INTERRUPTED);
    })
}

/// The terminal's observer, keeping a copy of what the run has for a second signal.
pub struct RecordingObserver {
    terminal: TerminalObserver,
    shared: Shared,
}

impl RecordingObserver {
    /// Observes for the terminal and keeps what the run has in `shared`.
    pub fn new(terminal: TerminalObserver, shared: Shared) -> Self {
        RecordingObserver { terminal, shared }
    }
}

impl RunObserver for RecordingObserver {
    fn run_started(&mut self, header: &RunResult) {
        self.shared.lock().result = Some(header.clone());
    }

    fn test_starting(&mut self, test: &TestPlan, shapes: &[EffectiveShape]) {
        self.terminal.test_starting(test, shapes);
    }

    fn live(&mut self, sample: &LiveSample) {
        self.terminal.live(sample);
    }

    fn test_finished(&mut self, result: &TestResult) {
        if let Some(so_far) = self.shared.lock().result.as_mut() {
            so_far.tests.push(result.clone());
        }
        self.terminal.test_finished(result);
    }

    fn creating_file(&mut self, path: &Path, size: u64) {
        self.terminal.creating_file(path, size);
    }

    fn experiment_finished(&mut self) {
        self.terminal.experiment_finished();
    }
}
