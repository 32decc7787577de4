//! What the analysis adds to each test: the utilisation of every hop, the CPU and the queue,
//! one verdict with its evidence, trust notes and confidence intervals.
//!
//! Rates are bytes per second (decimal, as links are rated); percentages are 0–100 (and above
//! 100 when a figure exceeds a capacity).
//!
//! ```
//! use iopath::result::Verdict;
//! assert_eq!(Verdict::LinkBound.name(), "link-bound");
//! ```

use super::path::HopKind;
pub use super::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// The analysis of one test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestAnalysis {
    /// The one classification.
    pub verdict: Verdict,
    /// Its evidence, one line (`117.0 MB/s = 99 % of 1GbE (TCP/IP MTU 1500 payload 117.7 MB/s)`).
    pub evidence: String,
    /// Key of the hop the verdict names, if it names one.
    pub limiting_hop: Option<String>,
    /// For an inconclusive verdict: what is missing to decide.
    pub missing: Vec<String>,
    /// Utilisation of every hop with a known capacity.
    pub hops: Vec<HopUtilisation>,
    /// Use of the host's CPU.
    pub cpu: CpuUtilisation,
    /// Outstanding I/O, configured and achieved.
    pub queue: QueueUtilisation,
    /// 95 % confidence intervals of the rates.
    pub confidence: TestConfidence,
    /// Reasons to doubt the figures.
    pub trust_notes: Vec<TrustNote>,
    /// Memory available on the host when the analysis ran (`MemAvailable`), bytes.
    pub memory_available_bytes: Option<u64>,
    /// The experiment that confirmed or refuted the verdict (`iopath run --confirm` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<super::confirmation::Confirmation>,
    /// Each server device's use over the test (`--server-metrics`; absent without it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_hops: Vec<super::server::ServerHopUtilisation>,
    /// The rate stepped down: a burst bucket or a write cliff, with its fitted figures
    /// (absent when the series held one level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_step: Option<super::rate_step::RateStep>,
}

/// Traffic through one hop during a test, against its capacity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HopUtilisation {
    /// [`Hop::key`](super::Hop::key).
    pub hop_key: String,
    /// [`Hop::name`](super::Hop::name).
    pub hop_name: String,
    /// [`Hop::kind`](super::Hop::kind).
    pub kind: HopKind,
    /// Declared by the user.
    pub declared: bool,
    /// Bytes per second toward the host (read data, write replies), protocol headers included.
    pub inbound_bytes_per_second: f64,
    /// Bytes per second away from the host (write data, requests), protocol headers included.
    pub outbound_bytes_per_second: f64,
    /// The part of both directions that is protocol headers, bytes per second.
    pub protocol_overhead_bytes_per_second: f64,
    /// [`HopCapacity::payload_bytes_per_second`](super::HopCapacity::payload_bytes_per_second).
    pub capacity_bytes_per_second: u64,
    /// I/Os per second through the hop.
    pub iops: f64,
    /// [`HopCapacity::iops`](super::HopCapacity::iops).
    pub iops_capacity: Option<u64>,
    /// The busier of bytes and I/Os against capacity, percent: the busier direction for a
    /// full-duplex hop, both directions together for a shared one.
    pub utilisation_percent: f64,
    /// Only buffered I/O reaches this hop through the page cache, which may have absorbed it:
    /// a figure above capacity here means cached, not wrong.
    pub below_page_cache: bool,
}

impl HopUtilisation {
    /// For a declared hop that is one per route (several targets leaving this host by
    /// different interfaces or ports), the key of the discovered hop its route leaves by:
    /// `net:eth2` of `declared:0@net:eth2`.
    pub fn route_key(&self) -> Option<&str> {
        self.hop_key
            .strip_prefix("declared:")
            .and_then(|rest| rest.split_once('@'))
            .map(|(_, route)| route)
    }
}

/// Use of the host's CPU during a test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUtilisation {
    /// iopath's user + system time as a share of every CPU, percent.
    pub process_percent_of_host: f64,
    /// iopath's busiest worker thread, percent of one core.
    pub busiest_thread_percent: f64,
    /// The busiest core (all processes), if CPU figures were taken.
    pub busiest_core: Option<u32>,
    /// Its busy share, percent.
    pub busiest_core_percent: f64,
    /// Every core.
    pub cores: Vec<CoreUtilisation>,
}

/// Use of one core.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoreUtilisation {
    /// CPU number.
    pub cpu: u32,
    /// Busy (not idle, not waiting for I/O), percent.
    pub busy_percent: f64,
    /// Serving hardware interrupts, percent.
    pub irq_percent: f64,
    /// Serving software interrupts (block completions, network receive), percent.
    pub softirq_percent: f64,
}

/// Outstanding I/O of a test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueUtilisation {
    /// Worker threads × queue depth, summed over jobs.
    pub configured_outstanding: u32,
    /// Little's law: IOPS × mean latency, summed over directions.
    pub achieved_outstanding: f64,
    /// The smallest outstanding-I/O limit of a device on the path, if any was seen.
    pub device_queue_limit: Option<u32>,
}

/// 95 % confidence intervals of one test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TestConfidence {
    /// Reads.
    pub read: DirectionConfidence,
    /// Writes.
    pub write: DirectionConfidence,
    /// Trims (absent when there is no interval for them, as in tests without trims).
    #[serde(default, skip_serializing_if = "DirectionConfidence::is_empty")]
    pub trim: DirectionConfidence,
    /// Reads and writes together.
    pub total: DirectionConfidence,
}

/// Confidence intervals of one direction (absent with fewer than two full intervals).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionConfidence {
    /// Of bytes per second.
    pub bytes_per_second: Option<ConfidenceInterval>,
    /// Of I/Os per second.
    pub iops: Option<ConfidenceInterval>,
}

impl DirectionConfidence {
    /// Whether neither interval is known.
    pub fn is_empty(&self) -> bool {
        self.bytes_per_second.is_none() && self.iops.is_none()
    }
}

/// A Student-t confidence interval of the mean of a per-interval series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceInterval {
    /// Mean of the full intervals' rates.
    pub mean: f64,
    /// Half the interval's width, same unit as the mean.
    pub half_width: f64,
    /// Half-width as a percentage of the mean.
    pub half_width_percent: f64,
    /// Full intervals used (the last, shorter one is left out).
    pub intervals: u32,
    /// Confidence level, percent (95).
    pub confidence_percent: u32,
    /// Length of one interval, ns, when shorter than a second (a short run's finer series);
    /// 0 for one-second intervals, and in results written before it.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub interval_ns: u64,
    /// The independent samples the interval rests on, when fewer than `intervals` because
    /// neighbouring fine intervals are correlated (lag-1 autocorrelation); 0 when every
    /// interval counts as one.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub effective_samples: u64,
}

impl ConfidenceInterval {
    /// Seconds of measurement the interval rests on.
    pub fn measured_seconds(&self) -> f64 {
        let interval_ns = if self.interval_ns == 0 {
            1_000_000_000
        } else {
            self.interval_ns
        };
        f64::from(self.intervals) * interval_ns as f64 / 1e9
    }
}

/// A reason to doubt a figure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustNote {
    /// What kind of doubt.
    pub kind: TrustKind,
    /// The note, with its figures.
    pub message: String,
}

/// Kinds of doubt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustKind {
    /// Buffered I/O: the page cache sits between iopath and the device.
    BufferedIo,
    /// The working set fits in free memory: buffered reads may never reach the device.
    WorkingSetInMemory,
    /// A rate above what a hop can carry.
    AboveCapacity,
    /// Reads of a volume that looks never written (zeros, sparse).
    NeverWritten,
    /// Too short for the variation seen: a wide confidence interval.
    TooShort,
    /// A trend across the intervals: not steady.
    NotSteady,
    /// I/O errors happened.
    Errors,
    /// The test was cut short.
    Partial,
    /// The writes carried data that compresses or repeats.
    ReducibleData,
    /// A token bucket ran dry: a burst rate, then the baseline.
    BurstBucket,
    /// A write cache filled: the rate fell after a number of bytes written.
    WriteCliff,
    /// Writes to a file iopath created without data: a first write of a block also
    /// allocates it, which a write over data does not.
    FirstWrites,
}
