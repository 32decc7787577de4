//! One test of a run: its jobs, the figures of each direction (counts, rates, latency
//! summary, per-second series, histogram), why it stopped, its I/O errors.

use super::analysis::{DirectionConfidence, TestAnalysis, TestConfidence};
use super::cpu::CpuResult;
use super::engine::{Direction, EngineReport};
use super::error_policy::ErrorCount;
use super::histogram::SparseHistogram;
use super::is_zero;
use super::series::IntervalPoint;
use super::verify::VerificationResult;
use super::workload::{SweepValue, Workload};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The percentiles every latency summary carries, and their keys.
pub const PERCENTILES: [(f64, &str); 7] = [
    (50.0, "50"),
    (90.0, "90"),
    (95.0, "95"),
    (99.0, "99"),
    (99.9, "99.9"),
    (99.99, "99.99"),
    (99.999, "99.999"),
];

/// One test: jobs that ran at the same time (one job for a single workload).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// Test name.
    pub name: String,
    /// Every job of the test.
    pub jobs: Vec<JobResult>,
    /// The longest measured time of its jobs, ns.
    pub measured_ns: u64,
    /// Why the test stopped (the worst of its jobs).
    pub stop_reason: StopReason,
    /// Reads of every job together.
    pub read: DirectionResult,
    /// Writes of every job together.
    pub write: DirectionResult,
    /// Trims (discards) of every job together; absent from the JSON when the test issued none.
    /// Their bytes are the lengths discarded: no data moves, so they are not in `total`.
    #[serde(default, skip_serializing_if = "DirectionResult::is_unused")]
    pub trim: DirectionResult,
    /// Reads and writes of every job together (trims apart: they move no data over the path).
    pub total: DirectionResult,
    /// CPU used while measuring.
    pub cpu: CpuResult,
    /// I/O errors of every job.
    pub errors: ErrorSummary,
    /// Warnings about this test (fallbacks, mappings).
    pub warnings: Vec<String>,
    /// The sweep point this test is (empty when not swept).
    #[serde(default)]
    pub sweep: Vec<SweepValue>,
    /// Whether and when the steady-state criterion held (absent without `--steady`).
    #[serde(default)]
    pub steady_state: Option<SteadyOutcome>,
    /// Hop, CPU and queue utilisation, the verdict and trust notes (absent when the analysis
    /// did not run).
    #[serde(default)]
    pub analysis: Option<TestAnalysis>,
    /// Issued I/Os the I/O trace (`--trace-io`) had no room for (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trace_overflow_ios: u64,
    /// What data verification found in every job together (absent when no job verified).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationResult>,
    /// Each server's own counters during the measured time (`--server-metrics`; absent
    /// without it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_metrics: Vec<super::server::ServerSeries>,
}

impl TestResult {
    /// The direction whose figures stand for this test as a whole: reads and writes together
    /// when it mixed them, else the one it did — writes before trims (a trimwrite's writes move
    /// its data), trims only when it did nothing else.
    pub fn main_direction(&self) -> FigureDirection {
        FigureDirection::of(
            self.read.io_count > 0,
            self.write.io_count > 0,
            self.trim.io_count > 0,
        )
    }

    /// The figures of `direction`.
    pub fn figures(&self, direction: FigureDirection) -> &DirectionResult {
        match direction {
            FigureDirection::Read => &self.read,
            FigureDirection::Write => &self.write,
            FigureDirection::Trim => &self.trim,
            FigureDirection::Total => &self.total,
        }
    }

    /// The figures of [`TestResult::main_direction`].
    pub fn main_figures(&self) -> &DirectionResult {
        self.figures(self.main_direction())
    }
}

/// Which direction's figures stand for a test (in tables, comparisons and verdicts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureDirection {
    /// Reads only.
    Read,
    /// Writes only (or writes with trims: a trimwrite).
    Write,
    /// Trims only.
    Trim,
    /// Reads and writes together (mixed tests).
    Total,
}

impl FigureDirection {
    /// The direction of tests that read, wrote and trimmed as said: reads and writes together
    /// when both, else writes, reads, or trims when nothing else (reads when nothing at all).
    pub fn of(reads: bool, writes: bool, trims: bool) -> Self {
        match (reads, writes, trims) {
            (true, true, _) => FigureDirection::Total,
            (false, true, _) => FigureDirection::Write,
            (false, false, true) => FigureDirection::Trim,
            _ => FigureDirection::Read,
        }
    }

    /// `read`, `write`, `trim` or `read+write`.
    pub fn name(self) -> &'static str {
        match self {
            FigureDirection::Read => "read",
            FigureDirection::Write => "write",
            FigureDirection::Trim => "trim",
            FigureDirection::Total => "read+write",
        }
    }
}

/// The outcome of a steady-state criterion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SteadyOutcome {
    /// The criterion as given (`iops:5%:30s`).
    pub criterion: String,
    /// Measured time after which the last window held and the test was ended, ns; `None`
    /// when it never held (the test then ran its whole duration).
    pub attained_after_ns: Option<u64>,
}

/// One job of a test: a workload against its targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    /// Job name.
    pub name: String,
    /// Reporting group.
    pub group: u32,
    /// The workload as run.
    pub workload: Workload,
    /// Indexes into [`RunResult::targets`](super::RunResult::targets) (saved with runs of
    /// consecutive indexes as one entry: [`index_runs`](super::index_runs)).
    #[serde(with = "super::index_runs")]
    pub target_indexes: Vec<usize>,
    /// The engine in effect.
    pub engine: EngineReport,
    /// O_DIRECT was in effect for every worker.
    pub direct: bool,
    /// Worker threads in total (workers × targets, after any mapping of queue depth).
    pub worker_threads: u32,
    /// I/Os in flight per worker thread.
    pub queue_depth_per_worker: u32,
    /// Ramp, ns.
    pub ramp_ns: u64,
    /// Measured time, ns (includes the final fdatasync when asked for).
    pub measured_ns: u64,
    /// Time of the final fdatasync, ns (0 when none).
    pub fsync_ns: u64,
    /// Why the job stopped.
    pub stop_reason: StopReason,
    /// Reads.
    pub read: DirectionResult,
    /// Writes.
    pub write: DirectionResult,
    /// Trims (discards); absent from the JSON when the job issued none. Not in `total`.
    #[serde(default, skip_serializing_if = "DirectionResult::is_unused")]
    pub trim: DirectionResult,
    /// Reads and writes together (trims apart: they move no data over the path).
    pub total: DirectionResult,
    /// I/O errors.
    pub errors: ErrorSummary,
    /// What the search for the deepest queue meeting a latency target found (fio's
    /// `latency_target`), when the job searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTargetResult>,
    /// What data verification found (absent when the job did not verify).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationResult>,
}

/// What a job's latency-target search found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyTargetResult {
    /// The target, ns.
    pub target_ns: u64,
    /// The window each depth was judged over, ns.
    pub window_ns: u64,
    /// Share of a window's I/Os that had to meet the target, percent.
    pub percentile: f64,
    /// The depth each worker found (or ended at).
    pub depths: Vec<u32>,
    /// Whether the target held at those depths (false: not even at depth 1).
    pub met: bool,
    /// I/Os per second at those depths (the job's measured figures: the final window).
    pub iops: f64,
}

/// Why a test ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Ran its time or its bytes.
    Completed,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// An I/O error stopped it.
    Error,
}

/// Figures of one direction (or both together).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DirectionResult {
    /// Completed I/Os counted.
    pub io_count: u64,
    /// Bytes of those I/Os.
    pub bytes: u64,
    /// io_count per second of measured time.
    pub iops: f64,
    /// bytes per second of measured time.
    pub bytes_per_second: f64,
    /// Latency summary.
    pub latency: LatencySummary,
    /// Failed I/Os.
    pub error_count: u64,
    /// Per-second series.
    pub series: Vec<IntervalPoint>,
    /// The latency histogram, for exact merges and exports.
    pub histogram: SparseHistogram,
    /// The latency split at the moment the engine handed each request to the kernel or the
    /// device (fio's `slat` and `clat`); absent when the engine cannot tell that moment apart
    /// from completion (the sync engines do the I/O inside the call that submits it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<LatencySplit>,
}

/// Latency in two parts: issued → handed over (submission) and handed over → completed
/// (completion). For every I/O the two add up to its latency, so the means add up to the
/// direction's mean latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySplit {
    /// Submission latency (fio's `slat`): from the I/O's issue to the return of the call that
    /// handed it to the kernel or device.
    pub submission: LatencySummary,
    /// The histogram of [`LatencySplit::submission`].
    pub submission_histogram: SparseHistogram,
    /// Completion latency (fio's `clat`): from that return to the completion.
    pub completion: LatencySummary,
    /// The histogram of [`LatencySplit::completion`].
    pub completion_histogram: SparseHistogram,
}

impl DirectionResult {
    /// Whether this direction issued nothing (no I/O counted, none failed).
    pub fn is_unused(&self) -> bool {
        self.io_count == 0 && self.error_count == 0
    }
}

impl Default for DirectionResult {
    /// A direction that issued nothing (what an older result without trims reads as).
    fn default() -> Self {
        DirectionResult {
            io_count: 0,
            bytes: 0,
            iops: 0.0,
            bytes_per_second: 0.0,
            latency: LatencySummary::default(),
            error_count: 0,
            series: Vec::new(),
            histogram: SparseHistogram::empty(),
            split: None,
        }
    }
}

/// Latency figures, submission to completion.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Smallest, ns.
    pub min_ns: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Sample standard deviation, ns.
    pub stddev_ns: f64,
    /// Largest, ns.
    pub max_ns: u64,
    /// Percentiles keyed "50", "90", "95", "99", "99.9", "99.99", "99.999", ns, each within
    /// the histogram's relative error (1/128, 0.78 %).
    pub percentiles_ns: BTreeMap<String, u64>,
}

impl LatencySummary {
    /// A percentile by key ("99.9"), 0 when absent.
    pub fn percentile(&self, key: &str) -> u64 {
        self.percentiles_ns.get(key).copied().unwrap_or(0)
    }
}

/// I/O errors of a test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Every failed I/O.
    pub count: u64,
    /// The first few, with where they happened.
    pub first: Vec<IoErrorRecord>,
    /// Every failed I/O by kind and errno, in kind then errno order, with how many the jobs
    /// went on after (their error policy).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_kind: Vec<ErrorCount>,
}

/// One failed I/O.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    /// Target path.
    pub target: String,
    /// Direction.
    pub direction: Direction,
    /// Byte offset.
    pub offset: u64,
    /// Length asked for.
    pub length: u32,
    /// What happened, as the system describes the errno ("No space left on device (os error
    /// 28)") or "short transfer: N of M bytes".
    pub error: String,
}

impl TestConfidence {
    /// The intervals of `direction` (as [`TestResult::figures`]).
    pub fn direction(&self, direction: FigureDirection) -> &DirectionConfidence {
        match direction {
            FigureDirection::Read => &self.read,
            FigureDirection::Write => &self.write,
            FigureDirection::Trim => &self.trim,
            FigureDirection::Total => &self.total,
        }
    }
}
