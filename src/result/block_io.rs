//! What each block device did while a test was measured, from the device's own counters
//! (`/proc/diskstats`, the fields of `/sys/block/X/stat`): the requests it completed, their
//! bytes and the time they spent in the device. The analysis reads the requests beneath a
//! buffered stream from it: read-ahead windows and write-back.

use serde::{Deserialize, Serialize};

/// The counters of one block device over a measured window.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDeviceUsage {
    /// The device's kernel name (`sda`, `loop0`, `dm-1`), control characters escaped.
    pub device: String,
    /// Read requests completed.
    pub reads: u64,
    /// Bytes those reads moved.
    pub read_bytes: u64,
    /// Time the reads spent in the device, summed over requests, ns (millisecond resolution).
    pub read_time_ns: u64,
    /// Write requests completed.
    pub writes: u64,
    /// Bytes those writes moved.
    pub write_bytes: u64,
    /// Time the writes spent in the device, summed over requests, ns (millisecond resolution).
    pub write_time_ns: u64,
}

impl BlockDeviceUsage {
    /// Mean bytes of a read request, or `None` without reads.
    pub fn mean_read_bytes(&self) -> Option<f64> {
        (self.reads > 0).then(|| self.read_bytes as f64 / self.reads as f64)
    }

    /// Mean bytes of a write request, or `None` without writes.
    pub fn mean_write_bytes(&self) -> Option<f64> {
        (self.writes > 0).then(|| self.write_bytes as f64 / self.writes as f64)
    }
}
