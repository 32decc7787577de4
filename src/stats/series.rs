//! Per-interval (normally per-second) series of one direction of one worker, and their exact
//! merge across workers.
//!
//! Each closed interval keeps its byte and I/O counts, the exact latency sum and the non-empty
//! buckets of its own latency histogram, so that the p99 of a second can be computed exactly
//! (within the histogram's stated error) after the samples of every worker are merged.
//! Storage is preallocated for the planned number of intervals; closing an interval (once a
//! second) only appends to that storage.

use super::histogram::LatencyHistogram;
use crate::result::IntervalPoint;

/// One closed interval of one worker; its buckets live in the recorder's arena.
#[derive(Clone, Copy, Debug)]
struct ClosedInterval {
    index: u64,
    bytes: u64,
    io_count: u64,
    latency_sum_ns: u128,
    bucket_range: (usize, usize),
}

/// Records the per-interval series of one direction of one worker.
#[derive(Clone, Debug)]
pub struct SeriesRecorder {
    interval_ns: u64,
    current_index: u64,
    current_bytes: u64,
    current_io_count: u64,
    current_latency_sum_ns: u128,
    current_histogram: LatencyHistogram,
    closed: Vec<ClosedInterval>,
    bucket_arena: Vec<(u16, u32)>,
}

impl SeriesRecorder {
    /// A recorder for intervals of `interval_ns`, with room for `planned_intervals` of them.
    pub fn new(interval_ns: u64, planned_intervals: usize) -> Self {
        SeriesRecorder {
            interval_ns: interval_ns.max(1),
            current_index: 0,
            current_bytes: 0,
            current_io_count: 0,
            current_latency_sum_ns: 0,
            current_histogram: LatencyHistogram::new(),
            closed: Vec::with_capacity(planned_intervals + 2),
            bucket_arena: Vec::with_capacity((planned_intervals + 2) * 256),
        }
    }

    /// Counts one completed I/O that ended `elapsed_ns` after the measurement started.
    #[inline]
    pub fn record(&mut self, elapsed_ns: u64, latency_ns: u64, bytes: u64) {
        let index = elapsed_ns / self.interval_ns;
        if index != self.current_index {
            self.close_current();
            self.current_index = index;
        }
        self.current_bytes += bytes;
        self.current_io_count += 1;
        self.current_latency_sum_ns += latency_ns as u128;
        self.current_histogram.record(latency_ns);
    }

    fn close_current(&mut self) {
        if self.current_io_count == 0 {
            return;
        }
        let start = self.bucket_arena.len();
        for (index, count) in self.current_histogram.nonzero_buckets() {
            self.bucket_arena.push((index as u16, count as u32));
        }
        self.closed.push(ClosedInterval {
            index: self.current_index,
            bytes: self.current_bytes,
            io_count: self.current_io_count,
            latency_sum_ns: self.current_latency_sum_ns,
            bucket_range: (start, self.bucket_arena.len()),
        });
        self.current_bytes = 0;
        self.current_io_count = 0;
        self.current_latency_sum_ns = 0;
        self.current_histogram.clear();
    }

    /// Closes the interval in progress; call once when the worker stops.
    pub fn finish(&mut self) {
        self.close_current();
    }
}

/// Merges the series of several workers into one dense series covering `measured_ns`; with
/// `keep_buckets`, each point keeps the non-empty buckets of its interval's histogram
/// ([`IntervalPoint::latency_buckets`]), for a merge across the clients of a multi-client run.
pub fn merge_series(
    recorders: &[&SeriesRecorder],
    measured_ns: u64,
    keep_buckets: bool,
) -> Vec<IntervalPoint> {
    let Some(interval_ns) = recorders.first().map(|r| r.interval_ns) else {
        return Vec::new();
    };
    let last_index = recorders
        .iter()
        .flat_map(|r| r.closed.iter().map(|c| c.index))
        .max();
    let planned = measured_ns.div_ceil(interval_ns);
    let count = planned.max(last_index.map_or(0, |i| i + 1));
    let mut cursors = vec![0usize; recorders.len()];
    let mut scratch = LatencyHistogram::new();
    let mut points = Vec::with_capacity(count as usize);
    for index in 0..count {
        let mut point = IntervalPoint {
            start_ns: index * interval_ns,
            duration_ns: interval_ns.min(measured_ns.saturating_sub(index * interval_ns)),
            bytes: 0,
            io_count: 0,
            mean_latency_ns: 0,
            p99_latency_ns: 0,
            latency_buckets: Vec::new(),
        };
        if point.duration_ns == 0 {
            point.duration_ns = interval_ns;
        }
        let mut latency_sum: u128 = 0;
        scratch.clear();
        for (recorder, cursor) in recorders.iter().zip(cursors.iter_mut()) {
            while let Some(closed) = recorder.closed.get(*cursor) {
                if closed.index > index {
                    break;
                }
                *cursor += 1;
                if closed.index < index {
                    continue;
                }
                point.bytes += closed.bytes;
                point.io_count += closed.io_count;
                latency_sum += closed.latency_sum_ns;
                for &(bucket, bucket_count) in
                    &recorder.bucket_arena[closed.bucket_range.0..closed.bucket_range.1]
                {
                    scratch.record_bucket(bucket as usize, bucket_count as u64);
                }
            }
        }
        if point.io_count > 0 {
            point.mean_latency_ns = (latency_sum / point.io_count as u128) as u64;
            point.p99_latency_ns = scratch.percentile(99.0);
            if keep_buckets {
                point.latency_buckets = scratch
                    .nonzero_buckets()
                    .map(|(bucket, count)| [bucket as u64, count])
                    .collect();
            }
        }
        points.push(point);
    }
    points
}
