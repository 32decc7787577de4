//! The RunResult: plain data, versioned, the one artifact every exporter, `compare` and the
//! analysis read. Field by field in docs/result-schema.md.
//!
//! Measured values are integers with their unit in the name (`bytes`, `latency_ns`); rates
//! (`iops`, `bytes_per_second`) are derived from them and stored for convenience.

use crate::engine::Capabilities;
use crate::stats::histogram::{LatencyHistogram, SparseHistogram};
use crate::stats::series::IntervalPoint;
use crate::target::TargetInfo;
use crate::workload::Workload;
use crate::workload::sweep::SweepValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of this schema; raised on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

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

/// One run of iopath: every test it ran and everything found about the host and targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Version of iopath that wrote it.
    pub iopath_version: String,
    /// The command line, argument by argument.
    pub command_line: Vec<String>,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// A label for comparisons (`--label`).
    pub label: Option<String>,
    /// The run was cut short (Ctrl-C or an error); what was measured is kept.
    pub partial: bool,
    /// The machine that ran it.
    pub host: HostInfo,
    /// Every target, as found before the run.
    pub targets: Vec<TargetInfo>,
    /// Every test, in the order run.
    pub tests: Vec<TestResult>,
    /// Run-level warnings (skipped tests, a stop before the end); each test keeps its own
    /// warnings (fallbacks, mappings) in [`TestResult::warnings`].
    pub warnings: Vec<String>,
    /// Link tests (`iopath net`): raw TCP throughput, one entry per direction measured.
    #[serde(default)]
    pub link_tests: Vec<super::link::LinkTestResult>,
    /// The storage path of every target, same order as [`RunResult::targets`] (filled by the
    /// analysis; empty when it did not run).
    #[serde(default)]
    pub paths: Vec<super::analysis::StoragePath>,
}

/// The machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpu_count: u32,
    /// Installed memory, bytes.
    pub memory_bytes: u64,
}

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
    /// Reads and writes of every job together.
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
    pub analysis: Option<super::analysis::TestAnalysis>,
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
    /// Indexes into [`RunResult::targets`].
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
    /// Reads and writes together.
    pub total: DirectionResult,
    /// I/O errors.
    pub errors: ErrorSummary,
}

/// The engine in effect for a test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineReport {
    /// Engine name.
    pub name: String,
    /// What it did.
    pub capabilities: Capabilities,
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
}

/// Latency figures, submission to completion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// Summary of a histogram.
    pub fn from_histogram(histogram: &LatencyHistogram) -> Self {
        LatencySummary {
            min_ns: histogram.min(),
            mean_ns: histogram.mean(),
            stddev_ns: histogram.stddev(),
            max_ns: histogram.max(),
            percentiles_ns: PERCENTILES
                .iter()
                .map(|(percent, key)| (key.to_string(), histogram.percentile(*percent)))
                .collect(),
        }
    }

    /// A percentile by key ("99.9"), 0 when absent.
    pub fn percentile(&self, key: &str) -> u64 {
        self.percentiles_ns.get(key).copied().unwrap_or(0)
    }
}

/// CPU used while measuring.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuResult {
    /// Wall time the CPU figures cover, ns.
    pub wall_ns: u64,
    /// iopath's user time, ns.
    pub user_ns: u64,
    /// iopath's system time, ns.
    pub system_ns: u64,
    /// Logical CPUs of the host.
    pub cpu_count: u32,
    /// CPU time of iopath's busiest worker thread, ns.
    pub busiest_thread_ns: u64,
    /// Every core of the host over the same wall time (all processes, from /proc/stat).
    pub cores: Vec<CoreUsage>,
}

/// Use of one core, from /proc/stat.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreUsage {
    /// CPU number.
    pub cpu: u32,
    /// All accounted time, ns.
    pub total_ns: u64,
    /// Time not idle and not waiting for I/O, ns.
    pub busy_ns: u64,
    /// Time serving hardware interrupts, ns.
    pub irq_ns: u64,
    /// Time serving software interrupts, ns.
    pub softirq_ns: u64,
}

impl CpuResult {
    /// iopath's user + system time as a percentage of the whole machine.
    pub fn process_percent_of_host(&self) -> f64 {
        if self.wall_ns == 0 || self.cpu_count == 0 {
            return 0.0;
        }
        (self.user_ns as f64 + self.system_ns as f64)
            / (self.wall_ns as f64 * self.cpu_count as f64)
            * 100.0
    }

    /// Busy share of the busiest core, percent (every process counted).
    pub fn busiest_core_percent(&self) -> f64 {
        self.cores
            .iter()
            .filter(|core| core.total_ns > 0)
            .map(|core| core.busy_ns as f64 / core.total_ns as f64 * 100.0)
            .fold(0.0, f64::max)
    }

    /// CPU time of the busiest worker thread as a percentage of one core.
    pub fn busiest_thread_percent(&self) -> f64 {
        if self.wall_ns == 0 {
            return 0.0;
        }
        self.busiest_thread_ns as f64 / self.wall_ns as f64 * 100.0
    }
}

/// I/O errors of a test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Every failed I/O.
    pub count: u64,
    /// The first few, with where they happened.
    pub first: Vec<IoErrorRecord>,
}

/// One failed I/O.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    /// Target path.
    pub target: String,
    /// Direction.
    pub direction: crate::engine::Direction,
    /// Byte offset.
    pub offset: u64,
    /// Length asked for.
    pub length: u32,
    /// What happened, as the system describes the errno ("No space left on device (os error
    /// 28)") or "short transfer: N of M bytes".
    pub error: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_shares_of_any_saved_times_are_finite() {
        let cpu = CpuResult {
            wall_ns: 1,
            user_ns: u64::MAX,
            system_ns: u64::MAX,
            cpu_count: 1,
            busiest_thread_ns: u64::MAX,
            cores: Vec::new(),
        };
        assert!(cpu.process_percent_of_host().is_finite());
        assert!(cpu.busiest_thread_percent().is_finite());
    }
}
