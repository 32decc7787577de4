//! What one worker records for one direction: a latency histogram, byte and I/O counts, and the
//! per-interval series. Sized before the clock starts; recording never allocates.

use super::histogram::LatencyHistogram;
use super::series::SeriesRecorder;

/// The record of one direction of one worker.
#[derive(Clone, Debug)]
pub struct DirectionRecorder {
    /// Latency of every counted I/O, ns.
    pub histogram: LatencyHistogram,
    /// Bytes of every counted I/O.
    pub bytes: u64,
    /// Counted I/Os.
    pub io_count: u64,
    /// Failed I/Os (not in the histogram).
    pub error_count: u64,
    /// Per-interval series.
    pub series: SeriesRecorder,
}

impl DirectionRecorder {
    /// A recorder with intervals of `interval_ns` and room for `planned_intervals`.
    pub fn new(interval_ns: u64, planned_intervals: usize) -> Self {
        DirectionRecorder {
            histogram: LatencyHistogram::new(),
            bytes: 0,
            io_count: 0,
            error_count: 0,
            series: SeriesRecorder::new(interval_ns, planned_intervals),
        }
    }

    /// Counts one completed I/O of `bytes`, `latency_ns` long, that ended `elapsed_ns` after the
    /// measurement started.
    #[inline]
    pub fn record(&mut self, elapsed_ns: u64, latency_ns: u64, bytes: u64) {
        self.histogram.record(latency_ns);
        self.bytes += bytes;
        self.io_count += 1;
        self.series.record(elapsed_ns, latency_ns, bytes);
    }

    /// Closes the series; call once when the worker stops.
    pub fn finish(&mut self) {
        self.series.finish();
    }
}
