//! A rate that stepped down during a test and why: a burst bucket (a token bucket ran dry:
//! cloud disks, rate-limited volumes, shaped links) or a write cliff (a write cache filled:
//! an SSD's SLC area, an array's or a controller's write-back cache). docs/steady-state.md.
//!
//! ```
//! use iopath::result::{BurstBucket, RateStep};
//! let bucket = BurstBucket {
//!     burst_bytes_per_second: 312e6,
//!     baseline_bytes_per_second: 125e6,
//!     burst_iops: 1190.0,
//!     baseline_iops: 477.0,
//!     burst_seconds: 41.0,
//!     bucket_bytes: 7.667e9,
//!     bucket_ios: 29_233.0,
//!     counted_in_ios: false,
//!     refill_per_second: None,
//!     refill_idle_seconds: None,
//! };
//! assert_eq!(RateStep::BurstBucket(bucket).name(), "burst bucket");
//! ```

use serde::{Deserialize, Serialize};

/// What the per-second series of a test showed: one step down, and what it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateStep {
    /// A token bucket: a burst rate until the bucket ran dry, then the baseline.
    BurstBucket(BurstBucket),
    /// A write cache that filled: the rate fell after a number of bytes written.
    WriteCliff(WriteCliff),
}

impl RateStep {
    /// `burst bucket` or `write cliff`.
    pub fn name(&self) -> &'static str {
        match self {
            RateStep::BurstBucket(_) => "burst bucket",
            RateStep::WriteCliff(_) => "write cliff",
        }
    }
}

/// A token bucket fitted to a series: a plateau at the burst rate, then the baseline once the
/// bucket ran dry. The bucket is what was spent above the baseline:
/// (burst − baseline) × burst time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BurstBucket {
    /// Rate of the burst, bytes per second.
    pub burst_bytes_per_second: f64,
    /// Rate after the bucket ran dry, bytes per second.
    pub baseline_bytes_per_second: f64,
    /// I/Os per second of the burst.
    pub burst_iops: f64,
    /// I/Os per second after it.
    pub baseline_iops: f64,
    /// How long the burst lasted, seconds (to a fraction of an interval).
    pub burst_seconds: f64,
    /// The bucket: bytes spent above the baseline during the burst.
    pub bucket_bytes: f64,
    /// The bucket in I/Os spent above the baseline.
    pub bucket_ios: f64,
    /// The bucket counts I/Os (an IOPS bucket) rather than bytes: its I/O series is the
    /// flatter one at the baseline, or neither is (one block size) and the I/Os are small.
    pub counted_in_ios: bool,
    /// Refill rate measured from a return after idle (the bucket spent again over the idle
    /// time), in the bucket's unit per second; absent when the run had no idle time, and the
    /// refill is then taken to be the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refill_per_second: Option<f64>,
    /// The idle time the refill was measured over, seconds (to a fraction of an interval):
    /// the bucket spent `refill_per_second` × this again after it. Absent with the refill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refill_idle_seconds: Option<f64>,
}

/// A write cliff: writes at one rate until a number of bytes were written, then a lower one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WriteCliff {
    /// Bytes written before the step (the cache's size, as far as this run shows it).
    pub bytes_before: f64,
    /// Time before the step, seconds.
    pub seconds_before: f64,
    /// Rate before the step, bytes per second.
    pub before_bytes_per_second: f64,
    /// Rate after it, bytes per second.
    pub after_bytes_per_second: f64,
    /// I/Os per second before the step.
    pub before_iops: f64,
    /// I/Os per second after it.
    pub after_iops: f64,
    /// The rate stayed low after idle time in the run (a bucket would have come back).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stayed_low_after_idle: bool,
}
