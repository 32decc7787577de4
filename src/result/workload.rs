//! The workload as run, and the sweep point a test is: what each I/O may be (access
//! specification), where random offsets fall, queue depth, workers, region, run length, rate
//! limits, sync semantics and the engine.
//!
//! Parsing, validation and the descriptions of these types live with the workload readers
//! (`crate::workload`).

use super::engine::EngineKind;
use super::write_data::WriteData;
use serde::{Deserialize, Serialize};

/// One fully validated workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// What each I/O may be: lines of size, share, read % and random % (one line per block size
    /// for simple workloads).
    pub access: AccessSpec,
    /// Where random offsets fall.
    pub distribution: OffsetDistribution,
    /// I/Os in flight per worker.
    pub queue_depth: u32,
    /// Worker threads per target.
    pub workers: u32,
    /// Start of the region, bytes from the start of the target.
    pub region_offset_bytes: u64,
    /// Length of the region, bytes (`None`: to the end of each target).
    pub region_size_bytes: Option<u64>,
    /// Run length.
    pub length: RunLength,
    /// Most I/Os per worker thread (fio's number_ios), if limited.
    pub io_limit: Option<u64>,
    /// Ramp before measuring, ns.
    pub ramp_ns: u64,
    /// Delay before this job starts, ns (fio's startdelay).
    pub start_delay_ns: u64,
    /// Throughput cap over all workers, bytes/s.
    pub rate_bytes_per_second: Option<u64>,
    /// IOPS cap over all workers.
    pub rate_iops: Option<u64>,
    /// Pause after every `think_time_blocks` I/Os, ns (fio's thinktime).
    pub think_time_ns: u64,
    /// I/Os between two think-time pauses (at least 1).
    pub think_time_blocks: u32,
    /// Use the page cache (no O_DIRECT).
    pub buffered: bool,
    /// O_DSYNC on every write.
    pub sync_writes: bool,
    /// fdatasync after every this many writes (fio's fsync / fdatasync), if set.
    pub fsync_every_writes: Option<u32>,
    /// fdatasync once at the end, its time included (dd's conv=fdatasync).
    pub fsync_at_end: bool,
    /// Seed of every random choice; same seed, same offsets.
    pub seed: u64,
    /// How I/O is issued.
    pub engine: EngineKind,
    /// Register buffers and files with the kernel where the engine can.
    pub register_buffers: bool,
    /// Keep going after an I/O error (errors are still counted).
    pub continue_on_error: bool,
    /// Connections per worker to a network target (protocol engines; at least 1).
    #[serde(default = "one")]
    pub connections: u32,
    /// What writes carry (random, scrambled per write, unless set).
    #[serde(default, skip_serializing_if = "WriteData::is_default")]
    pub write_data: WriteData,
}

fn one() -> u32 {
    1
}

/// How long a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum RunLength {
    /// A measured time after the ramp.
    Time {
        /// Measured time, ns.
        duration_ns: u64,
    },
    /// A total byte count over all workers (dd-like); no ramp.
    Bytes {
        /// Bytes to transfer.
        bytes: u64,
        /// Stop earlier when this time has passed, ns (fio's runtime without time_based).
        time_limit_ns: Option<u64>,
    },
}

/// A whole access specification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessSpec {
    /// The lines; each I/O draws one with probability weight / total weight.
    pub lines: Vec<AccessLine>,
}

/// One line of an access specification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessLine {
    /// Transfer size, bytes.
    pub size_bytes: u64,
    /// Relative weight of this line among all lines.
    pub weight: u32,
    /// Percentage of this line's I/Os that are reads.
    pub read_percent: u8,
    /// Percentage of this line's I/Os that start at a random offset (else right after the
    /// previous I/O).
    pub random_percent: u8,
    /// Random offsets of this line are multiples of this, bytes.
    pub alignment_bytes: u64,
    /// I/Os issued back to back before the line's delay (Iometer's burst length); 1 when unset.
    pub burst_length: u32,
    /// Pause after each burst, ns (Iometer's transfer delay); 0 for none.
    pub delay_ns: u64,
}

/// The distribution of random offsets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum OffsetDistribution {
    /// Every aligned offset equally likely.
    #[default]
    Uniform,
    /// Zipf with exponent θ.
    Zipf {
        /// Exponent θ (above 0; 1 included).
        theta: f64,
    },
    /// Pareto with hot share h (0 < h < 1).
    Pareto {
        /// Share of blocks that takes 1-h of the accesses.
        h: f64,
    },
    /// Gaussian around the middle.
    Normal {
        /// Standard deviation, percent of the region.
        stddev_percent: f64,
    },
    /// Zones of given access and size shares.
    Zoned {
        /// The zones, from the start of the region.
        zones: Vec<Zone>,
    },
}

/// One zone of a zoned distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    /// Share of the accesses, percent.
    pub access_percent: f64,
    /// Share of the region, percent.
    pub size_percent: f64,
}

/// One value of one axis at a sweep point, kept in results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepValue {
    /// The axis.
    pub axis: SweepAxis,
    /// The value (bytes for `bs`).
    pub value: u64,
}

/// What a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepAxis {
    /// Queue depth per worker.
    Qd,
    /// Block size (every line of the access specification).
    Bs,
    /// Workers per target.
    Workers,
}
