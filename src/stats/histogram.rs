//! A fixed-memory, log-linear latency histogram.
//!
//! Values (nanoseconds) below 128 are counted exactly. Above that, every power of two is split
//! into 64 equal buckets, so a bucket is never wider than 1/64 of its lower bound. A percentile is
//! reported as the middle of its bucket, which puts it within **1/128 (0.78 %)** of the true
//! sample value — the relative error bound [`RELATIVE_ERROR`] stated for every percentile iopath
//! prints. The whole `u64` range is covered by [`BUCKET_COUNT`] buckets (30 KiB of counters), so
//! nothing is ever clipped and recording never allocates.
//!
//! Histograms merge exactly: adding bucket counts of two histograms gives the histogram of the
//! union of their samples, which is how workers, processes and hosts are combined.
//!
//! ```
//! use iopath::stats::histogram::LatencyHistogram;
//! let mut histogram = LatencyHistogram::new();
//! for latency_ns in 1..=1000 {
//!     histogram.record(latency_ns * 1000);
//! }
//! let p50 = histogram.percentile(50.0);
//! assert!((p50 as f64 - 500_000.0).abs() / 500_000.0 < 0.008);
//! ```

use crate::result::{LatencySummary, PERCENTILES, SparseHistogram};

/// Bits of sub-bucket resolution per power of two (64 sub-buckets).
pub const SUB_BUCKET_BITS: u32 = 6;
const SUB_BUCKETS: u64 = 1 << SUB_BUCKET_BITS;
/// Number of buckets needed to cover every `u64` value.
pub const BUCKET_COUNT: usize = ((64 - SUB_BUCKET_BITS as usize) * SUB_BUCKETS as usize) + 64;
/// Largest relative error of a reported percentile against the true sample value.
pub const RELATIVE_ERROR: f64 = 1.0 / 128.0;

/// Index of the bucket that counts `value`.
#[inline]
pub fn bucket_index(value: u64) -> usize {
    log_linear_index(value, SUB_BUCKET_BITS)
}

/// Smallest value counted by bucket `index`, and the bucket's width. An index past the last
/// bucket (only a damaged saved histogram holds one) is read as the last bucket.
pub fn bucket_bounds(index: usize) -> (u64, u64) {
    log_linear_bounds(index.min(BUCKET_COUNT - 1), SUB_BUCKET_BITS)
}

/// Index of `value` in a log-linear layout with `2^bits` buckets per power of two (values
/// below `2^(bits+1)` counted exactly): the layout of this histogram with `bits` =
/// [`SUB_BUCKET_BITS`], and of coarser ones ([`super::live`]).
#[inline]
pub fn log_linear_index(value: u64, bits: u32) -> usize {
    let sub_buckets = 1u64 << bits;
    if value < 2 * sub_buckets {
        return value as usize;
    }
    let most_significant_bit = 63 - value.leading_zeros();
    let shift = most_significant_bit - bits;
    (shift as u64 * sub_buckets + (value >> shift)) as usize
}

/// Smallest value counted by bucket `index` of the layout of [`log_linear_index`], and the
/// bucket's width.
pub fn log_linear_bounds(index: usize, bits: u32) -> (u64, u64) {
    let sub_buckets = 1u64 << bits;
    let index = index as u64;
    if index < 2 * sub_buckets {
        return (index, 1);
    }
    let shift = index / sub_buckets - 1;
    let mantissa = index - shift * sub_buckets;
    (mantissa << shift, 1u64 << shift)
}

/// The value reported for bucket `index`: the middle of the bucket.
pub fn bucket_value(index: usize) -> u64 {
    let (low, width) = bucket_bounds(index);
    low + (width - 1) / 2
}

/// A latency histogram with exact count, sum, minimum and maximum beside the buckets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyHistogram {
    counts: Box<[u64]>,
    count: u64,
    sum: u128,
    sum_of_squares: u128,
    min: u64,
    max: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram (allocates its fixed bucket array once).
    pub fn new() -> Self {
        LatencyHistogram {
            counts: vec![0; BUCKET_COUNT].into_boxed_slice(),
            count: 0,
            sum: 0,
            sum_of_squares: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Counts one sample. Never allocates.
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.counts[bucket_index(value)] += 1;
        self.count += 1;
        self.sum += value as u128;
        self.sum_of_squares += (value as u128) * (value as u128);
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Counts `count` samples known only by their bucket (as rebuilt from a stored interval);
    /// they are taken to lie at the bucket's reported value.
    pub fn record_bucket(&mut self, index: usize, count: u64) {
        if count == 0 || index >= BUCKET_COUNT {
            return;
        }
        let value = bucket_value(index);
        self.counts[index] += count;
        self.count += count;
        self.sum += value as u128 * count as u128;
        self.sum_of_squares += (value as u128) * (value as u128) * count as u128;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Adds every sample of `other` (exact).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.sum_of_squares += other.sum_of_squares;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Forgets every sample, keeping the bucket memory.
    pub fn clear(&mut self) {
        if self.count > 0 {
            self.counts.fill(0);
        }
        self.count = 0;
        self.sum = 0;
        self.sum_of_squares = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Exact sum of all samples.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Smallest sample (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count == 0 { 0 } else { self.min }
    }

    /// Largest sample (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Exact sample standard deviation (0 with fewer than two samples).
    pub fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.sum as f64 / n;
        let variance = (self.sum_of_squares as f64 - n * mean * mean) / (n - 1.0);
        variance.max(0.0).sqrt()
    }

    /// The value below or at which `percent` % of the samples lie (the sample of rank
    /// ⌈percent/100 × count⌉), within [`RELATIVE_ERROR`], clamped to the exact minimum and
    /// maximum. 0 when empty.
    pub fn percentile(&self, percent: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((percent / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let rank = rank.min(self.count);
        let mut seen = 0u64;
        for (index, &bucket_count) in self.counts.iter().enumerate() {
            seen = seen.saturating_add(bucket_count);
            if seen >= rank {
                return bucket_value(index).clamp(self.min(), self.max);
            }
        }
        self.max
    }

    /// The non-empty buckets as `(index, count)` pairs, smallest first.
    pub fn nonzero_buckets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > 0)
            .map(|(index, count)| (index, *count))
    }

    /// The portable form stored in a RunResult, from which the histogram can be rebuilt exactly.
    pub fn to_sparse(&self) -> SparseHistogram {
        SparseHistogram {
            sub_bucket_bits: SUB_BUCKET_BITS,
            count: self.count,
            sum_ns: self.sum,
            sum_of_squares_ns2: self.sum_of_squares,
            min_ns: self.min(),
            max_ns: self.max,
            buckets: self
                .nonzero_buckets()
                .map(|(index, count)| [index as u64, count])
                .collect(),
        }
    }

    /// Rebuilds a histogram from its stored form; `None` when the layout differs or an index is
    /// out of range.
    pub fn from_sparse(sparse: &SparseHistogram) -> Option<Self> {
        if sparse.sub_bucket_bits != SUB_BUCKET_BITS {
            return None;
        }
        let mut histogram = LatencyHistogram::new();
        for [index, count] in &sparse.buckets {
            let slot = histogram.counts.get_mut(usize::try_from(*index).ok()?)?;
            *slot = slot.checked_add(*count)?;
        }
        histogram.count = sparse.count;
        histogram.sum = sparse.sum_ns;
        histogram.sum_of_squares = sparse.sum_of_squares_ns2;
        histogram.min = if sparse.count == 0 {
            u64::MAX
        } else {
            sparse.min_ns
        };
        histogram.max = sparse.max_ns;
        Some(histogram)
    }
}

impl LatencySummary {
    /// Summary of a histogram: its exact extremes and moments, and the [`PERCENTILES`], each
    /// within [`RELATIVE_ERROR`].
    pub fn from_histogram(histogram: &LatencyHistogram) -> Self {
        LatencySummary {
            min_ns: histogram.min(),
            mean_ns: histogram.mean(),
            stddev_ns: histogram.stddev(),
            max_ns: histogram.max(),
            percentiles_ns: PERCENTILES
                .iter()
                .map(|(percent, key)| (key.to_string(), histogram.percentile(*percent)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_empty_histogram_is_that_of_an_empty_recorder() {
        assert_eq!(
            LatencyHistogram::new().to_sparse(),
            crate::result::SparseHistogram::empty()
        );
    }

    #[test]
    fn every_value_falls_in_its_bucket() {
        let mut value = 1u64;
        while value < u64::MAX / 3 {
            for probe in [value - 1, value, value + 1, value / 2 * 3] {
                let (low, width) = bucket_bounds(bucket_index(probe));
                assert!(
                    low <= probe && probe - low < width,
                    "{probe}: {low} +{width}"
                );
            }
            value = value / 5 * 7 + 7;
        }
        assert_eq!(bucket_index(u64::MAX), BUCKET_COUNT - 1);
        assert_eq!(bucket_bounds(usize::MAX), bucket_bounds(BUCKET_COUNT - 1));
    }

    #[test]
    fn damaged_saved_histograms_are_refused_or_read_without_overflow() {
        let mut histogram = LatencyHistogram::new();
        histogram.record(1000);
        let mut sparse = histogram.to_sparse();
        sparse.buckets.push([u64::MAX, 1]);
        assert!(
            LatencyHistogram::from_sparse(&sparse).is_none(),
            "index past the end"
        );
        sparse.buckets.pop();
        sparse.buckets.push(sparse.buckets[0]);
        sparse.buckets[0][1] = u64::MAX;
        assert!(
            LatencyHistogram::from_sparse(&sparse).is_none(),
            "count overflow"
        );
        sparse.buckets.pop();
        sparse.count = u64::MAX;
        let read = LatencyHistogram::from_sparse(&sparse).unwrap();
        assert!(read.percentile(99.9) > 0);
    }

    #[test]
    fn bucket_value_is_within_the_stated_error() {
        for index in 0..BUCKET_COUNT {
            let (low, width) = bucket_bounds(index);
            let reported = bucket_value(index) as f64;
            for sample in [low, low + (width - 1)] {
                let error = (reported - sample as f64).abs() / sample.max(1) as f64;
                assert!(error <= RELATIVE_ERROR, "bucket {index}: {error}");
            }
        }
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut first = LatencyHistogram::new();
        let mut second = LatencyHistogram::new();
        let mut both = LatencyHistogram::new();
        let mut rng = fastrand::Rng::with_seed(7);
        for i in 0..10_000 {
            let value = rng.u64(1..10_000_000);
            if i % 3 == 0 {
                first.record(value)
            } else {
                second.record(value)
            }
            both.record(value);
        }
        first.merge(&second);
        assert_eq!(first, both);
    }

    #[test]
    fn moments_are_exact() {
        let mut histogram = LatencyHistogram::new();
        for value in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            histogram.record(value);
        }
        assert_eq!(histogram.mean(), 5.0);
        assert!((histogram.stddev() - 2.138_089_935).abs() < 1e-6);
        assert_eq!(histogram.min(), 2);
        assert_eq!(histogram.max(), 9);
    }

    #[test]
    fn percentiles_of_a_uniform_distribution_are_within_error() {
        let mut histogram = LatencyHistogram::new();
        let mut samples: Vec<u64> = (0..200_000).map(|i| 1_000 + i * 37).collect();
        for value in &samples {
            histogram.record(*value);
        }
        samples.sort_unstable();
        for percent in [50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999] {
            let rank = ((percent / 100.0) * samples.len() as f64).ceil() as usize;
            let truth = samples[rank - 1] as f64;
            let reported = histogram.percentile(percent) as f64;
            assert!(
                (reported - truth).abs() / truth <= RELATIVE_ERROR,
                "p{percent}"
            );
        }
    }

    #[test]
    fn sparse_form_round_trips() {
        let mut histogram = LatencyHistogram::new();
        for value in [1u64, 500, 70_000, 123_456_789] {
            histogram.record(value);
        }
        let rebuilt = LatencyHistogram::from_sparse(&histogram.to_sparse()).unwrap();
        assert_eq!(rebuilt, histogram);
        assert!(LatencyHistogram::from_sparse(&LatencyHistogram::new().to_sparse()).is_some());
    }
}
