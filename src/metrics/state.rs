//! What the metrics endpoint shows, kept up to date by the run's observer.

use crate::result::SweepValue;
use crate::run::progress::{LiveGroup, LiveSample};
use std::sync::{Arc, Mutex, MutexGuard};

/// One test's latest figures.
#[derive(Clone, Debug, PartialEq)]
pub struct TestFigures {
    /// The test's name.
    pub name: String,
    /// Its sweep point (`qd=8`), empty when not swept.
    pub sweep: String,
    /// Per job and target, totals since the test started (ramp included).
    pub groups: Vec<LiveGroup>,
    /// The verdict once the test has been analysed (`link-bound`), and its limiting hop.
    pub verdict: Option<(String, Option<String>)>,
}

/// Everything the exposition shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricsState {
    /// Tests the run plans.
    pub tests_planned: usize,
    /// Every test started so far, in order; the last one is the current one while
    /// [`MetricsState::running`].
    pub tests: Vec<TestFigures>,
    /// Whether a test is running now.
    pub running: bool,
    /// Seconds since the current test started.
    pub elapsed_seconds: f64,
}

impl MetricsState {
    /// A test starts.
    pub fn test_starting(&mut self, name: &str, sweep: &[SweepValue]) {
        self.tests.push(TestFigures {
            name: name.to_string(),
            sweep: sweep_text(sweep),
            groups: Vec::new(),
            verdict: None,
        });
        self.running = true;
        self.elapsed_seconds = 0.0;
    }

    /// A live sample of the current test.
    pub fn live(&mut self, sample: &LiveSample) {
        if let Some(test) = self.tests.last_mut() {
            test.groups = sample.groups.clone();
        }
        self.elapsed_seconds = sample.elapsed_ns as f64 / 1e9;
    }

    /// The current test ended.
    pub fn test_finished(&mut self) {
        self.running = false;
    }

    /// The verdict of the test named `test` (the latest test of that name).
    pub fn verdict(&mut self, test: &str, verdict: &str, limiting_hop: Option<&str>) {
        if let Some(figures) = self.tests.iter_mut().rev().find(|t| t.name == test) {
            figures.verdict = Some((verdict.to_string(), limiting_hop.map(str::to_string)));
        }
    }
}

/// `qd=8,bs=4096` for a sweep point.
pub fn sweep_text(sweep: &[SweepValue]) -> String {
    sweep
        .iter()
        .map(|point| format!("{}={}", point.axis.name(), point.value))
        .collect::<Vec<_>>()
        .join(",")
}

/// [`MetricsState`] shared between the run's observer and the server thread. Locked once a
/// second by the observer and once per request by the server; never by a worker.
#[derive(Clone, Debug, Default)]
pub struct SharedMetrics(Arc<Mutex<MetricsState>>);

impl SharedMetrics {
    /// Locks it (a panic while it was held leaves plain data: keep using it).
    pub fn lock(&self) -> MutexGuard<'_, MetricsState> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
