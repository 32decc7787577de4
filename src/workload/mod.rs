//! What I/O to issue: the validated [`Workload`], block-size mixes, the per-worker
//! [`planner::IoPlanner`] that turns a workload into offsets, and the default suite.
//!
//! Workloads are built from flags (or job files) in two stages: raw text is parsed and checked
//! first, and only a fully valid [`Plan`] reaches the runner.

pub mod block_size;
pub mod planner;
pub mod suite;

pub use block_size::BlockSizeMix;

use crate::engine::EngineKind;
use serde::{Deserialize, Serialize};

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
    },
}

/// Direction and pattern as fio's `rw` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessPattern {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes.
    Rw,
    /// Random mixed reads and writes.
    RandRw,
}

impl AccessPattern {
    /// Read percentage and random percentage this pattern means by default.
    pub fn defaults(self) -> (u8, u8) {
        match self {
            AccessPattern::Read => (100, 0),
            AccessPattern::Write => (0, 0),
            AccessPattern::RandRead => (100, 100),
            AccessPattern::RandWrite => (0, 100),
            AccessPattern::Rw => (50, 0),
            AccessPattern::RandRw => (50, 100),
        }
    }

    /// Reads fio's spelling (`randread`, `readwrite` …).
    pub fn parse(text: &str) -> Result<Self, String> {
        Ok(match text {
            "read" => AccessPattern::Read,
            "write" => AccessPattern::Write,
            "randread" => AccessPattern::RandRead,
            "randwrite" => AccessPattern::RandWrite,
            "rw" | "readwrite" => AccessPattern::Rw,
            "randrw" => AccessPattern::RandRw,
            other => {
                return Err(format!(
                    "unknown pattern '{other}' (choose read, write, randread, randwrite, rw or randrw)"
                ));
            }
        })
    }
}

/// One fully validated workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Percentage of I/Os that are reads (0–100).
    pub read_percent: u8,
    /// Percentage of I/Os that start at a random aligned offset; the others start right after
    /// the previous I/O (Iometer's "percent random").
    pub random_percent: u8,
    /// Block size or size mix.
    pub block_sizes: BlockSizeMix,
    /// Random offsets are multiples of this many bytes from the region start.
    pub alignment_bytes: u64,
    /// I/Os in flight per worker.
    pub queue_depth: u32,
    /// Worker threads per target.
    pub workers: u32,
    /// Start of the region, bytes from the start of the target.
    pub region_offset_bytes: u64,
    /// Length of the region, bytes (filled in from the target's size when not given).
    pub region_size_bytes: Option<u64>,
    /// Run length.
    pub length: RunLength,
    /// Ramp before measuring, ns.
    pub ramp_ns: u64,
    /// Throughput cap over all workers, bytes/s.
    pub rate_bytes_per_second: Option<u64>,
    /// IOPS cap over all workers.
    pub rate_iops: Option<u64>,
    /// Use the page cache (no O_DIRECT).
    pub buffered: bool,
    /// O_DSYNC on every write.
    pub sync_writes: bool,
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
}

impl Workload {
    /// Whether any I/O of this workload writes.
    pub fn writes(&self) -> bool {
        self.read_percent < 100
    }

    /// Whether any I/O of this workload reads.
    pub fn reads(&self) -> bool {
        self.read_percent > 0
    }

    /// A short description like `randread 4k QD32`.
    pub fn summary(&self) -> String {
        let pattern = match (self.read_percent, self.random_percent) {
            (100, 0) => "read".to_string(),
            (0, 0) => "write".to_string(),
            (100, 100) => "randread".to_string(),
            (0, 100) => "randwrite".to_string(),
            (read, random) => format!("{read}% read {random}% random"),
        };
        let workers = if self.workers > 1 {
            format!(" x{} workers", self.workers)
        } else {
            String::new()
        };
        format!(
            "{pattern} {} QD{}{workers}",
            self.block_sizes, self.queue_depth
        )
    }
}

/// One test of a plan: a named workload against every target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestPlan {
    /// Name shown in tables and kept in results.
    pub name: String,
    /// The workload.
    pub workload: Workload,
}

/// Everything a run will do, validated before any I/O.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Tests in order.
    pub tests: Vec<TestPlan>,
}
