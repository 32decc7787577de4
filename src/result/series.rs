//! Per-interval (normally per-second) series: one point per interval of the measured time.

use serde::{Deserialize, Serialize};

/// One point of a merged series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalPoint {
    /// Start of the interval, ns after the measurement started.
    pub start_ns: u64,
    /// Length of the interval, ns (the last one may be shorter).
    pub duration_ns: u64,
    /// Bytes completed in the interval.
    pub bytes: u64,
    /// I/Os completed in the interval.
    pub io_count: u64,
    /// Mean latency of those I/Os, ns (0 when none completed).
    pub mean_latency_ns: u64,
    /// 99th percentile latency of those I/Os, ns (0 when none completed).
    pub p99_latency_ns: u64,
    /// `[bucket index, count]` of every non-empty bucket of the interval's latency histogram
    /// (the layout of [`SparseHistogram`](super::SparseHistogram)). Kept only while the
    /// clients of a multi-client run hand their results to rank 0, which merges them bucket by
    /// bucket into each interval's exact cluster p99; absent from a saved result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_buckets: Vec<[u64; 2]>,
}
