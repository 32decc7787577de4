//! Per-interval (normally per-second) series of one direction of one worker, and their exact
//! merge across workers.
//!
//! Each closed interval keeps its byte and I/O counts, the exact latency sum and the non-empty
//! buckets of its own latency histogram, so that the p99 of a second can be computed exactly
//! (within the histogram's stated error) after the samples of every worker are merged.
//!
//! Memory does not grow with the run's length: a series keeps at most [`MAX_POINTS`] points.
//! When a run reaches that many intervals, every two neighbouring points are merged into one
//! of twice the length (counts, bytes and latency sums added, histograms bucket by bucket: the
//! coarser point is as exact as a fine one), and so on: a 24-hour run of one-second intervals
//! ends with 2,700 points of 32 s. Where a point's length doubles depends only on the time
//! elapsed, so every worker's points line up. Storage is preallocated for the planned
//! intervals (at most [`MAX_POINTS`]), with a second arena of the same size that the merge of
//! neighbours writes into: closing an interval (once a second) only appends.
//!
//! ```
//! use iopath::stats::series::{MAX_POINTS, SeriesRecorder, merge_series};
//! const SECOND: u64 = 1_000_000_000;
//! let day = 86_400;
//! let mut recorder = SeriesRecorder::new(SECOND, day);
//! for second in 0..day as u64 {
//!     recorder.record(second * SECOND, 100_000 + second % 1_000, 4096);
//! }
//! recorder.finish();
//! assert!(recorder.retained_points() <= MAX_POINTS);
//! let series = merge_series(&[&recorder], day as u64 * SECOND, false);
//! assert_eq!(series.len(), 2_700);
//! assert_eq!(series[0].duration_ns, 32 * SECOND);
//! assert_eq!(series.iter().map(|p| p.io_count).sum::<u64>(), day as u64);
//! ```

use super::histogram::LatencyHistogram;
use crate::result::IntervalPoint;

/// The most points a series keeps; a longer run's points cover several intervals each.
pub const MAX_POINTS: usize = 4096;

/// Buckets room is made for per planned point (more are appended when needed).
const BUCKETS_PER_POINT: usize = 256;

/// One closed point of one worker (`width` intervals); its buckets live in the recorder's
/// arena.
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
    /// Intervals per point: a power of two, doubled each time the run reaches
    /// [`MAX_POINTS`] points of the current width.
    width: u64,
    current_index: u64,
    current_bytes: u64,
    current_io_count: u64,
    current_latency_sum_ns: u128,
    current_histogram: LatencyHistogram,
    closed: Vec<ClosedInterval>,
    bucket_arena: Vec<(u16, u64)>,
    /// Where the merge of neighbouring points writes their buckets (then swapped in).
    spare_arena: Vec<(u16, u64)>,
}

impl SeriesRecorder {
    /// A recorder for intervals of `interval_ns`, with room for `planned_intervals` of them
    /// (at most [`MAX_POINTS`]: a longer run merges neighbouring points).
    pub fn new(interval_ns: u64, planned_intervals: usize) -> Self {
        let points = planned_intervals.min(MAX_POINTS) + 2;
        SeriesRecorder {
            interval_ns: interval_ns.max(1),
            width: 1,
            current_index: 0,
            current_bytes: 0,
            current_io_count: 0,
            current_latency_sum_ns: 0,
            current_histogram: LatencyHistogram::new(),
            closed: Vec::with_capacity(points),
            bucket_arena: Vec::with_capacity(points * BUCKETS_PER_POINT),
            spare_arena: Vec::with_capacity(points * BUCKETS_PER_POINT),
        }
    }

    /// Counts one completed I/O that ended `elapsed_ns` after the measurement started.
    #[inline]
    pub fn record(&mut self, elapsed_ns: u64, latency_ns: u64, bytes: u64) {
        let mut index = elapsed_ns / self.interval_ns / self.width;
        if index != self.current_index {
            self.close_current();
            while index >= MAX_POINTS as u64 {
                self.coarsen();
                index = elapsed_ns / self.interval_ns / self.width;
            }
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
            self.bucket_arena.push((index as u16, count));
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

    /// Doubles the width of every point: each two neighbours become one, their buckets merged
    /// into the spare arena (both lists are in bucket order), which then becomes the arena.
    fn coarsen(&mut self) {
        self.width *= 2;
        self.spare_arena.clear();
        let mut kept = 0;
        let mut read = 0;
        while read < self.closed.len() {
            let first = self.closed[read];
            let index = first.index / 2;
            let start = self.spare_arena.len();
            let mut point = ClosedInterval { index, ..first };
            let (a, b) = first.bucket_range;
            match self
                .closed
                .get(read + 1)
                .filter(|next| next.index / 2 == index)
            {
                Some(&second) => {
                    let (c, d) = second.bucket_range;
                    merge_buckets(
                        &self.bucket_arena[a..b],
                        &self.bucket_arena[c..d],
                        &mut self.spare_arena,
                    );
                    point.bytes += second.bytes;
                    point.io_count += second.io_count;
                    point.latency_sum_ns += second.latency_sum_ns;
                    read += 2;
                }
                None => {
                    self.spare_arena.extend_from_slice(&self.bucket_arena[a..b]);
                    read += 1;
                }
            }
            point.bucket_range = (start, self.spare_arena.len());
            self.closed[kept] = point;
            kept += 1;
        }
        self.closed.truncate(kept);
        std::mem::swap(&mut self.bucket_arena, &mut self.spare_arena);
    }

    /// Closes the interval in progress; call once when the worker stops.
    pub fn finish(&mut self) {
        self.close_current();
    }

    /// Points kept so far (closed ones with I/Os): at most [`MAX_POINTS`].
    pub fn retained_points(&self) -> usize {
        self.closed.len()
    }

    /// Bytes of memory the recorder holds (its storage's capacity), whatever the run's length.
    pub fn retained_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.closed.capacity() * std::mem::size_of::<ClosedInterval>()
            + (self.bucket_arena.capacity() + self.spare_arena.capacity())
                * std::mem::size_of::<(u16, u64)>()
    }
}

/// Appends to `out` the buckets of `a` and `b` (each in bucket order), added where they meet.
fn merge_buckets(a: &[(u16, u64)], b: &[(u16, u64)], out: &mut Vec<(u16, u64)>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(&(x, m)), Some(&(y, n))) if x == y => {
                out.push((x, m + n));
                i += 1;
                j += 1;
            }
            (Some(&left), Some(&(y, _))) if left.0 < y => {
                out.push(left);
                i += 1;
            }
            (Some(&left), None) => {
                out.push(left);
                i += 1;
            }
            (_, Some(&right)) => {
                out.push(right);
                j += 1;
            }
            (None, None) => break,
        }
    }
}

/// The width of the points of a series `intervals` long: the smallest power of two that
/// keeps it under [`MAX_POINTS`] points (as the recorders reach it).
fn width_for(intervals: u64) -> u64 {
    let mut width = 1;
    while intervals.saturating_sub(1) / width >= MAX_POINTS as u64 {
        width *= 2;
    }
    width
}

/// Merges the series of several workers into one dense series covering `measured_ns`, of
/// points one interval long — or 2, 4, … intervals long when the run was longer than
/// [`MAX_POINTS`] intervals (the widest of the workers' points, each worker's coarsened to
/// it); with `keep_buckets`, each point keeps the non-empty buckets of its interval's histogram
/// ([`IntervalPoint::latency_buckets`]), for a merge across the clients of a multi-client run.
pub fn merge_series(
    recorders: &[&SeriesRecorder],
    measured_ns: u64,
    keep_buckets: bool,
) -> Vec<IntervalPoint> {
    let Some(interval_ns) = recorders.first().map(|r| r.interval_ns) else {
        return Vec::new();
    };
    // In intervals: the last one any worker recorded, and the planned ones.
    let last_interval = recorders
        .iter()
        .flat_map(|r| r.closed.last().map(|c| (c.index + 1) * r.width))
        .max();
    let intervals = measured_ns
        .div_ceil(interval_ns)
        .max(last_interval.unwrap_or(0));
    let width = recorders
        .iter()
        .map(|r| r.width)
        .max()
        .unwrap_or(1)
        .max(width_for(intervals));
    let point_ns = interval_ns * width;
    let count = intervals.div_ceil(width);
    let mut cursors = vec![0usize; recorders.len()];
    let mut scratch = LatencyHistogram::new();
    let mut points = Vec::with_capacity(count as usize);
    for index in 0..count {
        let mut point = IntervalPoint {
            start_ns: index * point_ns,
            duration_ns: point_ns.min(measured_ns.saturating_sub(index * point_ns)),
            bytes: 0,
            io_count: 0,
            mean_latency_ns: 0,
            p99_latency_ns: 0,
            latency_buckets: Vec::new(),
        };
        if point.duration_ns == 0 {
            point.duration_ns = point_ns;
        }
        let mut latency_sum: u128 = 0;
        scratch.clear();
        for (recorder, cursor) in recorders.iter().zip(cursors.iter_mut()) {
            while let Some(closed) = recorder.closed.get(*cursor) {
                let at = closed.index * recorder.width / width;
                if at > index {
                    break;
                }
                *cursor += 1;
                if at < index {
                    continue;
                }
                point.bytes += closed.bytes;
                point.io_count += closed.io_count;
                latency_sum += closed.latency_sum_ns;
                for &(bucket, bucket_count) in
                    &recorder.bucket_arena[closed.bucket_range.0..closed.bucket_range.1]
                {
                    scratch.record_bucket(bucket as usize, bucket_count);
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

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000_000;

    /// The latency of I/O `io` of interval `second` (ten per interval, over two decades).
    fn latency(second: u64, io: u64) -> u64 {
        10_000 + (second * 7_919 + io * 104_729) % 990_000
    }

    /// A recorder fed `seconds` one-second intervals of ten I/Os each, planned that long.
    fn run(seconds: u64) -> SeriesRecorder {
        let mut recorder = SeriesRecorder::new(SECOND, seconds as usize);
        for second in 0..seconds {
            for io in 0..10 {
                recorder.record(second * SECOND + io * 1_000, latency(second, io), 4096);
            }
        }
        recorder.finish();
        recorder
    }

    #[test]
    fn a_run_ten_times_longer_holds_no_more_memory() {
        let (short, long) = (run(8_640), run(86_400));
        assert!(short.retained_points() <= MAX_POINTS);
        assert!(long.retained_points() <= MAX_POINTS);
        assert!(
            long.retained_bytes() <= short.retained_bytes(),
            "{} bytes for a day, {} for a tenth of it",
            long.retained_bytes(),
            short.retained_bytes()
        );
        let series = merge_series(&[&long], 86_400 * SECOND, false);
        assert_eq!(series.len(), 2_700);
        assert_eq!(series.iter().map(|p| p.io_count).sum::<u64>(), 864_000);
        assert_eq!(series.iter().map(|p| p.bytes).sum::<u64>(), 864_000 * 4096);
    }

    #[test]
    fn a_coarse_points_p99_is_that_of_every_io_it_covers() {
        let series = merge_series(&[&run(86_400)], 86_400 * SECOND, false);
        let point = &series[5];
        assert_eq!(
            (point.start_ns, point.duration_ns),
            (160 * SECOND, 32 * SECOND)
        );
        let mut together = LatencyHistogram::new();
        let mut sum = 0;
        for second in 160..192 {
            for io in 0..10 {
                together.record(latency(second, io));
                sum += latency(second, io);
            }
        }
        assert_eq!(point.io_count, together.count());
        assert_eq!(point.p99_latency_ns, together.percentile(99.0));
        assert_eq!(point.mean_latency_ns, sum / together.count());
    }

    #[test]
    fn workers_that_stopped_at_different_times_line_up() {
        // 5,000 s: points of 2 s; 3,000 s: still of 1 s.
        let (long, short) = (run(5_000), run(3_000));
        let series = merge_series(&[&long, &short], 5_000 * SECOND, false);
        assert_eq!(series.len(), 2_500);
        assert!(series.iter().all(|p| p.duration_ns == 2 * SECOND));
        assert_eq!(series[0].io_count, 40);
        assert_eq!(series[1_499].io_count, 40);
        assert_eq!(series[1_500].io_count, 20);
        assert_eq!(series.iter().map(|p| p.io_count).sum::<u64>(), 80_000);
    }
}
