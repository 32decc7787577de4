//! The result of `iopath pts`: the SNIA Solid State Storage Performance Test Specification's
//! tests as run — the conditions, each test's rounds, its tracking variables and their
//! measurement window. Plain data: the runner (`crate::pts`) fills it round by round and saves
//! it as the state a run resumes from; the exporters only format it.

use super::rate_step::RateStep;
use super::target::TargetInfo;
use serde::{Deserialize, Serialize};

/// Version of this schema; raised on any incompatible change.
pub const PTS_SCHEMA_VERSION: u32 = 1;

/// A whole `iopath pts` run (also its state file while it runs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtsResult {
    /// [`PTS_SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Version of iopath that wrote it.
    pub iopath_version: String,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// `--label`: the run's name in the history (`@label:NAME`) and in the report's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The test conditions.
    pub conditions: PtsConditions,
    /// Every test asked for, in order; a test not yet run has no rounds.
    pub tests: Vec<PtsTestResult>,
    /// Every test has ended (steady, not steady, or saturation's end).
    pub complete: bool,
}

/// Which edition of the specification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PtsEdition {
    /// PTS Enterprise (the default).
    Enterprise,
    /// PTS Client (`--client`).
    Client,
}

impl PtsEdition {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            PtsEdition::Enterprise => "Enterprise",
            PtsEdition::Client => "Client",
        }
    }
}

/// The test conditions the specification asks a report to state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtsConditions {
    /// The edition.
    pub edition: PtsEdition,
    /// The target as found before the run.
    pub target: TargetInfo,
    /// Host name of the machine that ran the tests (empty in results written before it was
    /// kept).
    #[serde(default)]
    pub host: String,
    /// Model, firmware and other facts of the device, as discovery found them (empty when
    /// unknown).
    pub device_facts: Vec<String>,
    /// Share of the capacity the tests use (the active range), percent.
    pub capacity_percent: u32,
    /// Bytes of the active range (from offset 0).
    pub active_range_bytes: u64,
    /// How the target was purged (`discard (BLKDISCARD)`, `none`…).
    pub purge_method: String,
    /// Measured time of one element of a round (one mix × block size), ns.
    pub round_element_ns: u64,
    /// Most rounds of a test.
    pub max_rounds: u32,
    /// Queue depth of each worker in the IOPS, throughput and saturation tests.
    pub queue_depth: u32,
    /// Workers (threads) of the IOPS, throughput and saturation tests.
    pub workers: u32,
    /// Bytes written by the workload-independent preconditioning (per test).
    pub preconditioning_bytes: u64,
    /// Block sizes of the IOPS and latency matrices, bytes (the specification's, or fewer).
    pub block_sizes_bytes: Vec<u64>,
    /// Longest time of the write saturation test, ns (it ends earlier once it has written four
    /// times the active range).
    pub saturation_limit_ns: u64,
    /// What was scaled down from the specification, in words (empty when nothing).
    pub scaled_down: Vec<String>,
    /// Notes about the run (a purge that could not be done, resumption).
    pub notes: Vec<String>,
}

/// Which test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PtsTestKind {
    /// IOPS: random mixes × block sizes.
    Iops,
    /// Throughput: 128 KiB and 1024 KiB sequential read and write.
    Throughput,
    /// Latency: QD 1, one worker.
    Latency,
    /// Write saturation: 4 KiB random writes.
    Saturation,
}

impl PtsTestKind {
    /// The name used by `--tests` and in file names.
    pub fn name(self) -> &'static str {
        match self {
            PtsTestKind::Iops => "iops",
            PtsTestKind::Throughput => "throughput",
            PtsTestKind::Latency => "latency",
            PtsTestKind::Saturation => "saturation",
        }
    }

    /// The title in reports.
    pub fn title(self) -> &'static str {
        match self {
            PtsTestKind::Iops => "IOPS",
            PtsTestKind::Throughput => "Throughput",
            PtsTestKind::Latency => "Latency",
            PtsTestKind::Saturation => "Write Saturation",
        }
    }
}

/// One test: its rounds and the outcome of the steady-state rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtsTestResult {
    /// Which test.
    pub kind: PtsTestKind,
    /// The purge before it was done (or noted as impossible).
    pub purged: bool,
    /// The workload-independent preconditioning ended (saturation has none).
    pub preconditioned: bool,
    /// The rounds, in order.
    pub rounds: Vec<PtsRound>,
    /// The names of the tracking variables (one value of each per round).
    pub tracking: Vec<String>,
    /// How the test ended.
    pub outcome: PtsOutcome,
    /// The measurement window of each tracking variable (the steady window, or the last rounds
    /// when steady state was not reached).
    pub windows: Vec<PtsWindow>,
    /// The step down of the test's rate over its rounds, one round per interval: write
    /// saturation's write cliff (a write cache that filled) or burst bucket. Absent when the
    /// rate did not step, for the other tests, and in results written before it was looked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_step: Option<RateStep>,
    /// When the test reached steady state after its rate stepped down (a burst bucket that
    /// ran dry, a cache that filled): the step before the window, so that the report says the
    /// steady state is the level after it. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_after_step: Option<PtsStepBeforeSteady>,
}

/// A step down of a tracking variable's element over the rounds before the steady window:
/// the steady state found is the level after it, not the rate the target gave before.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtsStepBeforeSteady {
    /// The tracking variable whose element stepped.
    pub variable: String,
    /// Rounds at the first level, as fitted: the whole rounds before the step and the share
    /// of the round in which it came that ran at the first level (2.9: the step came near
    /// the end of round 3).
    pub rounds_before: f64,
    /// The step fitted to the element's rounds, one round per interval of the element's
    /// measured time (its bytes and I/Os are the element's own, not the whole round's).
    pub step: RateStep,
}

/// How a test ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PtsOutcome {
    /// Not run, or interrupted before its end.
    NotFinished,
    /// Every tracking variable met the rule in the window ending at the last round.
    Steady,
    /// The most rounds ran without the rule holding.
    NotSteady,
    /// Write saturation ended (bytes or time reached): it has no steady-state rule.
    Saturated,
}

impl PtsOutcome {
    /// Its name in lists: `steady`, `not steady`, `saturated`, `not finished`.
    pub fn name(self) -> &'static str {
        match self {
            PtsOutcome::NotFinished => "not finished",
            PtsOutcome::Steady => "steady",
            PtsOutcome::NotSteady => "not steady",
            PtsOutcome::Saturated => "saturated",
        }
    }
}

/// One round: every element of the test's matrix, measured once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtsRound {
    /// Round number, from 1.
    pub number: u32,
    /// Each element's figures.
    pub cells: Vec<PtsCell>,
    /// Each tracking variable's value in this round (same order as
    /// [`PtsTestResult::tracking`]).
    pub tracked: Vec<f64>,
}

/// One element of a round: a block size and read share at a queue depth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtsCell {
    /// Transfer size, bytes.
    pub block_size_bytes: u64,
    /// Share of reads, percent.
    pub read_percent: u8,
    /// Random (else sequential).
    pub random: bool,
    /// Reads and writes per second.
    pub iops: f64,
    /// Bytes read per second.
    pub read_bytes_per_second: f64,
    /// Bytes written per second.
    pub write_bytes_per_second: f64,
    /// Mean latency of all I/Os, ns.
    pub mean_latency_ns: f64,
    /// 99th percentile latency, ns.
    pub p99_latency_ns: u64,
    /// 99.99th percentile latency, ns.
    pub p9999_latency_ns: u64,
    /// Largest latency, ns.
    pub max_latency_ns: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// The step down of this element's own per-interval series, when it has one (an element
    /// measured long enough for several intervals at each level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_step: Option<RateStep>,
}

/// The measurement window of one tracking variable and the rule's figures on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtsWindow {
    /// The tracking variable.
    pub variable: String,
    /// First round of the window.
    pub first_round: u32,
    /// The values, one per round of the window.
    pub values: Vec<f64>,
    /// Their average.
    pub average: f64,
    /// Largest minus smallest value (the data excursion).
    pub excursion: f64,
    /// Slope of the least-squares line, per round.
    pub slope: f64,
    /// Its value at the window's first round.
    pub intercept: f64,
    /// How far the line moves across the window (slope × (rounds − 1)), absolute.
    pub slope_excursion: f64,
    /// The data excursion is within 20 % of the average.
    pub excursion_holds: bool,
    /// The line moves within 10 % of the average.
    pub slope_holds: bool,
}

impl PtsWindow {
    /// Both parts of the rule hold.
    pub fn holds(&self) -> bool {
        self.excursion_holds && self.slope_holds
    }
}

/// `4KiB 65/35 random`: the name of an element of a round (block size, read/write mix and
/// access), in tables and test names.
///
/// ```
/// use iopath::result::pts::element_name;
/// assert_eq!(element_name(4096, 65, true), "4KiB 65/35 random");
/// ```
pub fn element_name(block_size_bytes: u64, read_percent: u8, random: bool) -> String {
    format!(
        "{} {}/{} {}",
        block_size_name(block_size_bytes),
        read_percent,
        100 - read_percent.min(100),
        if random { "random" } else { "sequential" }
    )
}

/// `0.5KiB`, `4KiB`, `1024KiB`: a block size as the specification writes it.
///
/// ```
/// use iopath::result::pts::block_size_name;
/// assert_eq!(block_size_name(512), "0.5KiB");
/// assert_eq!(block_size_name(1 << 20), "1024KiB");
/// ```
pub fn block_size_name(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format!("{}KiB", bytes / 1024)
    } else {
        format!("{}KiB", bytes as f64 / 1024.0)
    }
}
