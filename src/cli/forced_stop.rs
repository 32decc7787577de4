//! Signals during `iopath run`. The first SIGINT or SIGTERM asks the run to stop (the library
//! ends every phase promptly and the result is written as usual). A second one does not wait:
//! the test files being filled or to be removed are removed (by the library), the tests that
//! had finished are written to the outputs given, marked `partial`, and iopath exits with 130.
//!
//! The outputs live behind one lock: whoever writes them (the run at its end, or a second
//! signal) holds it until done, so they are never written twice or cut short.

use super::dashboard::restore_terminal;
use super::exit;
use super::live::TerminalObserver;
use super::messages::for_terminal;
use super::outputs::Outputs;
use iopath::analysis::{Analyser, DeclaredPath, HostFacts, analyse_with};
use iopath::discovery::Machine;
use iopath::engine::StopSignal;
use iopath::metrics::SharedMetrics;
use iopath::result::CreatedContent;
use iopath::result::RunResult;
use iopath::result::StoragePath;
use iopath::result::TestResult;
use iopath::run::interrupt::{self, ForcedStop};
use iopath::run::progress::LiveSample;
use iopath::run::{RunObserver, TestShape};
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
    restore_terminal();
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
                // The run ends here: this is the only analysis of what it measured.
                Analyser::this_host(declared.clone()).analyse(&mut result);
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
        restore_terminal();
        for failure in &forced.removal_failures {
            eprintln!("error: {failure}");
        }
        std::process::exit(exit::INTERRUPTED);
    })
}

/// The terminal's observer, keeping a copy of what the run has for a second signal, and the
/// figures `--metrics` serves.
pub struct RecordingObserver {
    terminal: TerminalObserver,
    shared: Shared,
    metrics: Option<SharedMetrics>,
    declared: DeclaredPath,
    /// The host's facts and the targets' paths, found once the targets are ready (when the
    /// dashboard or the metrics need them).
    analysed: Option<(HostFacts, Vec<StoragePath>)>,
}

impl RecordingObserver {
    /// Observes for the terminal and keeps what the run has in `shared`; with `metrics`, also
    /// keeps the figures it serves up to date, and each test's verdict.
    pub fn new(
        terminal: TerminalObserver,
        shared: Shared,
        metrics: Option<SharedMetrics>,
        declared: DeclaredPath,
    ) -> Self {
        RecordingObserver {
            terminal,
            shared,
            metrics,
            declared,
            analysed: None,
        }
    }

    /// Ends the live display (the dashboard gives the terminal back) and prints what it held.
    pub fn close(&mut self) {
        self.terminal.close();
    }

    /// Analyses `test` alone, on the paths found when the run started: its verdict for the
    /// metrics.
    fn verdict_of(
        &self,
        header: &RunResult,
        test: &TestResult,
    ) -> Option<(String, Option<String>)> {
        let (facts, paths) = self.analysed.as_ref()?;
        let mut alone = RunResult {
            tests: vec![test.clone()],
            paths: paths.clone(),
            ..header.clone()
        };
        alone.tests[0].analysis = None;
        analyse_with(&mut alone, &self.declared, facts);
        let analysis = alone.tests.pop()?.analysis?;
        Some((analysis.verdict.name().to_string(), analysis.limiting_hop))
    }
}

impl RunObserver for RecordingObserver {
    fn run_started(&mut self, header: &RunResult) {
        self.shared.lock().result = Some(header.clone());
        if self.terminal.has_dashboard() || self.metrics.is_some() {
            let facts = Machine::this_host().host_facts();
            let mut found = header.clone();
            analyse_with(&mut found, &self.declared, &facts);
            self.terminal.paths(&found.paths);
            self.analysed = Some((facts, found.paths));
        }
    }

    fn test_starting(&mut self, test: &TestPlan, shapes: &[TestShape]) {
        if let Some(metrics) = &self.metrics {
            metrics
                .lock()
                .test_starting(&test.name, &test.settings.sweep);
        }
        self.terminal.test_starting(test, shapes);
    }

    fn live(&mut self, sample: &LiveSample) {
        if let Some(metrics) = &self.metrics {
            metrics.lock().live(sample);
        }
        self.terminal.live(sample);
    }

    fn test_finished(&mut self, result: &TestResult) {
        let header = {
            let mut so_far = self.shared.lock();
            so_far.result.as_mut().and_then(|so_far| {
                so_far.tests.push(result.clone());
                // The header (every target) is copied only for the metrics' verdict.
                self.metrics.is_some().then(|| RunResult {
                    tests: Vec::new(),
                    ..so_far.clone()
                })
            })
        };
        if let Some(metrics) = &self.metrics {
            metrics.lock().test_finished();
            if let Some((verdict, hop)) = header
                .as_ref()
                .and_then(|header| self.verdict_of(header, result))
            {
                metrics
                    .lock()
                    .verdict(&result.name, &verdict, hop.as_deref());
            }
        }
        self.terminal.test_finished(result);
    }

    fn creating_file(&mut self, path: &Path, size: u64, content: CreatedContent) {
        self.terminal.creating_file(path, size, content);
    }

    fn experiment_finished(&mut self) {
        if let Some(metrics) = &self.metrics {
            metrics.lock().test_finished();
        }
        self.terminal.experiment_finished();
    }
}
