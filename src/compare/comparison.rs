//! The output of a comparison: plain serde data (`iopath compare --json` writes it as is).
//!
//! Rates are per second (bytes, I/Os), latencies ns, as in the RunResult; every figure keeps
//! its 95 % confidence interval when the run had at least two full one-second intervals.

use crate::result::{RunResult, SweepValue, Verdict};
use serde::{Deserialize, Serialize};

/// Version of this output; raised on any incompatible change.
pub const COMPARISON_VERSION: u32 = 1;

/// Several runs side by side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// [`COMPARISON_VERSION`] of the writer.
    pub comparison_version: u32,
    /// The runs, in the order given.
    pub runs: Vec<RunInfo>,
    /// Label of the run every other is measured against.
    pub baseline: String,
    /// Every test present in all runs, in the order of the first run.
    pub tests: Vec<ComparedTest>,
    /// Tests missing from at least one run.
    pub unmatched: Vec<UnmatchedTest>,
    /// Cost and density, when prices or ports were given.
    pub cost: Option<CostReport>,
    /// Things to know before reading the figures (partial runs, nothing matched).
    pub notes: Vec<String>,
}

impl Comparison {
    /// Index of the baseline among [`Comparison::runs`].
    pub fn baseline_index(&self) -> usize {
        self.runs
            .iter()
            .position(|run| run.label == self.baseline)
            .unwrap_or(0)
    }
}

/// Who a run is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Its label in this comparison (`iopath compare` shortens labels to 200 characters).
    pub label: String,
    /// The run's own `--label`, in full, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_label: Option<String>,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// iopath version that ran it.
    pub iopath_version: String,
    /// Host name.
    pub hostname: String,
    /// Tests it ran.
    pub test_count: usize,
    /// Cut short.
    pub partial: bool,
}

impl RunInfo {
    /// The facts of `result`, under `label`.
    pub fn of(label: &str, result: &RunResult) -> Self {
        RunInfo {
            label: label.to_string(),
            run_label: result.label.clone(),
            started_at: result.started_at.clone(),
            iopath_version: result.iopath_version.clone(),
            hostname: result.host.hostname.clone(),
            test_count: result.tests.len(),
            partial: result.partial,
        }
    }
}

/// The figures compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Bytes per second.
    Throughput,
    /// I/Os per second.
    Iops,
    /// Mean latency, ns.
    MeanLatency,
    /// 99th percentile latency, ns.
    P99Latency,
}

impl Metric {
    /// Every metric, in table order.
    pub const ALL: [Metric; 4] = [
        Metric::Throughput,
        Metric::Iops,
        Metric::MeanLatency,
        Metric::P99Latency,
    ];

    /// Column or row name (`MB/s`, `IOPS`, `mean`, `p99`).
    pub fn name(self) -> &'static str {
        match self {
            Metric::Throughput => "MB/s",
            Metric::Iops => "IOPS",
            Metric::MeanLatency => "mean",
            Metric::P99Latency => "p99",
        }
    }

    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Throughput | Metric::Iops)
    }
}

/// A figure and its 95 % confidence interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    /// The figure of the whole test (bytes/s, I/Os per second, or ns).
    pub value: f64,
    /// Half the width of the 95 % interval, same unit: the Student t interval of the per-second
    /// values, centred on `value`. `None` with fewer than two full intervals.
    pub half_width: Option<f64>,
    /// How many per-interval values the interval rests on (0: not known, as in comparisons
    /// written before this field).
    #[serde(default)]
    pub samples: u32,
}

impl MetricValue {
    /// The interval's bounds, when known.
    pub fn bounds(&self) -> Option<(f64, f64)> {
        self.half_width
            .map(|half| (self.value - half, self.value + half))
    }

    /// About how many per-interval values would narrow the interval to ±`percent` of the value,
    /// the spread staying as it is (the half-width falls with the square root of the count);
    /// `None` without an interval or a count.
    pub fn samples_for(&self, percent: f64) -> Option<u64> {
        let now = self.half_width_percent()?;
        if self.samples == 0 || percent <= 0.0 {
            return None;
        }
        // The interval is t(n−1) × s / √n: the spread s is the half-width over that t, times √n.
        let t = crate::analysis::trust::student_t_975;
        let n = self.samples.max(2);
        let spread = now / t(n - 1) * f64::from(n).sqrt();
        // The t of the larger count shrinks too: the smallest count whose interval is narrow
        // enough, searched by doubling, then by halving the step.
        let narrow = |count: u64| {
            t((count - 1).min(u64::from(u32::MAX)) as u32) * spread / (count as f64).sqrt()
                <= percent
        };
        if narrow(u64::from(n)) {
            return Some(u64::from(n));
        }
        let mut high = u64::from(n) + 1;
        while !narrow(high) {
            if high > 1 << 40 {
                return None;
            }
            high *= 2;
        }
        let mut low = (high / 2).max(u64::from(n));
        while low + 1 < high {
            let middle = (low + high) / 2;
            if narrow(middle) {
                high = middle;
            } else {
                low = middle;
            }
        }
        Some(high)
    }

    /// Half-width as a percentage of the value.
    pub fn half_width_percent(&self) -> Option<f64> {
        self.half_width
            .filter(|_| self.value > 0.0)
            .map(|half| half / self.value * 100.0)
    }
}

pub use crate::result::FigureDirection;

/// One run's figures for one test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestFigures {
    /// Label of the run.
    pub run: String,
    /// Bytes per second.
    pub bytes_per_second: MetricValue,
    /// I/Os per second.
    pub iops: MetricValue,
    /// Mean latency, ns.
    pub mean_latency_ns: MetricValue,
    /// 99th percentile latency, ns.
    pub p99_latency_ns: MetricValue,
    /// The analysis's verdict, when the run was analysed.
    pub verdict: Option<Verdict>,
    /// The test did not complete (interrupted, or stopped by an error).
    pub stopped_early: bool,
    /// Failed I/Os.
    pub error_count: u64,
}

impl TestFigures {
    /// The value of `metric`.
    pub fn value(&self, metric: Metric) -> &MetricValue {
        match metric {
            Metric::Throughput => &self.bytes_per_second,
            Metric::Iops => &self.iops,
            Metric::MeanLatency => &self.mean_latency_ns,
            Metric::P99Latency => &self.p99_latency_ns,
        }
    }
}

/// Whether a run differs from the baseline in one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The 95 % intervals overlap: no difference beyond noise.
    Same,
    /// Better beyond noise (higher throughput, lower latency).
    Better,
    /// Worse beyond noise.
    Worse,
    /// No interval for one of the two (fewer than two full one-second intervals): the
    /// difference cannot be told from noise.
    Unknown,
    /// The intervals overlap, but one is wider than ±[`SAME_WITHIN_PERCENT`] of its figure:
    /// the runs were too short (or too noisy) to tell a difference of that size from noise,
    /// so "same" would claim what the data does not show.
    TooShort,
}

/// The widest interval, percent of its figure, under which overlapping intervals are called
/// the same: wider ones could hide a difference larger than this.
pub const SAME_WITHIN_PERCENT: f64 = 10.0;

impl Outcome {
    /// The word in tables.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Same => "same",
            Outcome::Better => "better",
            Outcome::Worse => "worse",
            Outcome::Unknown => "no CI",
            Outcome::TooShort => "too short",
        }
    }
}

/// One metric of one run against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricChange {
    /// The metric.
    pub metric: Metric,
    /// Run ÷ baseline (`None` when the baseline is 0).
    pub ratio: Option<f64>,
    /// Run − baseline, the metric's unit.
    pub difference: f64,
    /// Beyond noise or not.
    pub outcome: Outcome,
}

/// One run against the baseline, for one test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunChanges {
    /// Label of the run.
    pub run: String,
    /// Label of the baseline.
    pub against: String,
    /// One per [`Metric::ALL`], same order.
    pub metrics: Vec<MetricChange>,
}

impl RunChanges {
    /// The change of `metric`.
    pub fn metric(&self, metric: Metric) -> Option<&MetricChange> {
        self.metrics.iter().find(|change| change.metric == metric)
    }
}

/// A test present in every run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparedTest {
    /// Test name (`#2` added for a repeated name).
    pub name: String,
    /// Sweep point (empty when not swept).
    pub sweep: Vec<SweepValue>,
    /// Which direction the figures are.
    pub direction: FigureDirection,
    /// Each run's figures, in run order.
    pub figures: Vec<TestFigures>,
    /// Each run but the baseline against the baseline, in run order.
    pub changes: Vec<RunChanges>,
    /// Differences that make the comparison less than like for like (another block size, queue
    /// depth or engine).
    pub notes: Vec<String>,
}

/// A test missing from some run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnmatchedTest {
    /// Test name (`#2` not added).
    pub name: String,
    /// Sweep point.
    pub sweep: Vec<SweepValue>,
    /// Runs that have it.
    pub present_in: Vec<String>,
    /// Runs that do not.
    pub missing_from: Vec<String>,
}

/// Cost and density of every run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostReport {
    /// The bandwidth to reach, bytes per second, when given.
    pub target_bytes_per_second: Option<f64>,
    /// Which tests the peaks come from.
    pub basis: String,
    /// One per run, in run order.
    pub runs: Vec<RunCost>,
}

/// Cost and density of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCost {
    /// Label of the run.
    pub run: String,
    /// Price of one unit as measured, when given.
    pub price: Option<f64>,
    /// Ports of one unit, when given.
    pub ports: Option<u32>,
    /// Best bytes per second.
    pub peak_bytes_per_second: f64,
    /// The test that reached it.
    pub peak_bytes_per_second_test: String,
    /// Best I/Os per second.
    pub peak_iops: f64,
    /// The test that reached it.
    pub peak_iops_test: String,
    /// Price ÷ (peak bytes per second / 10^9).
    pub price_per_gigabyte_per_second: Option<f64>,
    /// Price ÷ (peak IOPS / 1,000).
    pub price_per_thousand_iops: Option<f64>,
    /// Peak bytes per second ÷ ports.
    pub bytes_per_second_per_port: Option<f64>,
    /// Ports needed for the target bandwidth, each carrying what one port carried here.
    pub ports_needed: Option<u64>,
    /// Units needed for the target bandwidth.
    pub units_needed: Option<u64>,
    /// Units needed × price.
    pub price_for_target: Option<f64>,
}
