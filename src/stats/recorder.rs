//! What one worker records for one direction: a latency histogram, byte and I/O counts, and the
//! per-interval series. Sized before the clock starts; recording never allocates.

use super::histogram::LatencyHistogram;
use super::series::SeriesRecorder;
use crate::result::{LatencySplit, LatencySummary};

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
    /// Submission and completion latency of every counted I/O, ns, when the engine separates
    /// the two ([`DirectionRecorder::split_latency`]).
    pub split: Option<SplitHistograms>,
}

/// The two parts of each latency: issue → handed over (submission, fio's `slat`) and handed
/// over → completed (completion, fio's `clat`).
#[derive(Clone, Debug, Default)]
pub struct SplitHistograms {
    /// Submission latency, ns.
    pub submission: LatencyHistogram,
    /// Completion latency, ns.
    pub completion: LatencyHistogram,
}

impl SplitHistograms {
    /// The split of several parts together, merged exactly; `None` when no part splits.
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a SplitHistograms>) -> Option<Self> {
        parts.into_iter().fold(None, |merged, part| {
            let mut merged = merged.unwrap_or_default();
            merged.submission.merge(&part.submission);
            merged.completion.merge(&part.completion);
            Some(merged)
        })
    }

    /// The split as stored in a result (summaries and histograms).
    pub fn to_result(&self) -> LatencySplit {
        LatencySplit {
            submission: LatencySummary::from_histogram(&self.submission),
            submission_histogram: self.submission.to_sparse(),
            completion: LatencySummary::from_histogram(&self.completion),
            completion_histogram: self.completion.to_sparse(),
        }
    }

    /// The split of a stored result (`None` when a histogram cannot be read back).
    pub fn from_result(split: &LatencySplit) -> Option<Self> {
        Some(SplitHistograms {
            submission: LatencyHistogram::from_sparse(&split.submission_histogram)?,
            completion: LatencyHistogram::from_sparse(&split.completion_histogram)?,
        })
    }
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
            split: None,
        }
    }

    /// This recorder, keeping submission and completion latency apart as well (for an engine
    /// that separates them; made before the clock starts).
    pub fn split_latency(mut self) -> Self {
        self.split = Some(SplitHistograms {
            submission: LatencyHistogram::new(),
            completion: LatencyHistogram::new(),
        });
        self
    }

    /// Counts the parts of one I/O counted by [`DirectionRecorder::record`]: `submission_ns` of
    /// its `latency_ns` went to handing it over (nothing when the recorder does not split).
    #[inline]
    pub fn record_split(&mut self, latency_ns: u64, submission_ns: u64) {
        if let Some(split) = &mut self.split {
            let submission_ns = submission_ns.min(latency_ns);
            split.submission.record(submission_ns);
            split.completion.record(latency_ns - submission_ns);
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
