//! A coarse latency histogram for live views (the dashboard, `--metrics`): every power of two
//! split into 8 buckets ([`LIVE_SUB_BUCKET_BITS`]), so a percentile read from it is the middle
//! of a bucket never wider than 1/8 of its lower bound: within **1/16 (6.25 %)** of the true
//! value ([`LIVE_RELATIVE_ERROR`]). [`LIVE_BUCKET_COUNT`] buckets cover every `u64`.
//!
//! The result's own histograms ([`super::histogram`]) are finer; this one is small enough for
//! a worker to publish as plain counters that another thread reads while it runs. A power of
//! two `2^k` (k ≥ 4) is always a bucket boundary, so counts below it are exact
//! ([`count_below`]): that is what the Prometheus buckets show.
//!
//! ```
//! use iopath::stats::live::{LIVE_BUCKET_COUNT, count_below, live_bucket_index, live_percentile};
//! let mut counts = vec![0u64; LIVE_BUCKET_COUNT];
//! for latency_ns in 1..=1000u64 {
//!     counts[live_bucket_index(latency_ns * 1000)] += 1;
//! }
//! let p50 = live_percentile(&counts, 50.0).unwrap();
//! assert!((p50 as f64 - 500_000.0).abs() / 500_000.0 < 0.0625);
//! assert_eq!(count_below(&counts, 20), 1000); // all below 2^20 ns ≈ 1.05 ms
//! ```

use super::histogram::{log_linear_bounds, log_linear_index};

/// Bits of sub-bucket resolution per power of two (8 sub-buckets).
pub const LIVE_SUB_BUCKET_BITS: u32 = 3;
/// Number of buckets covering every `u64` value.
pub const LIVE_BUCKET_COUNT: usize = (64 - LIVE_SUB_BUCKET_BITS as usize)
    * (1 << LIVE_SUB_BUCKET_BITS)
    + (1 << LIVE_SUB_BUCKET_BITS);
/// Largest relative error of a percentile read from a live histogram.
pub const LIVE_RELATIVE_ERROR: f64 = 1.0 / 16.0;

/// Index of the live bucket that counts `value`.
#[inline]
pub fn live_bucket_index(value: u64) -> usize {
    log_linear_index(value, LIVE_SUB_BUCKET_BITS)
}

/// The value below or at which `percent` % of the counted samples lie, as the middle of its
/// bucket (within [`LIVE_RELATIVE_ERROR`]); `None` when nothing is counted.
pub fn live_percentile(counts: &[u64], percent: f64) -> Option<u64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = ((percent / 100.0) * total as f64)
        .ceil()
        .clamp(1.0, total as f64) as u64;
    let mut seen = 0u64;
    for (index, &count) in counts.iter().enumerate() {
        seen += count;
        if seen >= rank {
            let (low, width) = log_linear_bounds(index, LIVE_SUB_BUCKET_BITS);
            return Some(low + (width - 1) / 2);
        }
    }
    None
}

/// How many counted samples lie below `2^power` (exact for `power` from 4 to 63).
pub fn count_below(counts: &[u64], power: u32) -> u64 {
    let end = live_bucket_index(1u64 << power.clamp(4, 63));
    counts.iter().take(end).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_has_a_bucket_and_powers_of_two_are_boundaries() {
        assert_eq!(live_bucket_index(u64::MAX), LIVE_BUCKET_COUNT - 1);
        for power in 4..63 {
            let at = 1u64 << power;
            assert_eq!(
                live_bucket_index(at - 1) + 1,
                live_bucket_index(at),
                "2^{power}"
            );
        }
    }

    #[test]
    fn percentiles_stay_within_the_stated_error() {
        let mut counts = vec![0u64; LIVE_BUCKET_COUNT];
        for value in (100..2_000_000u64).step_by(997) {
            counts.fill(0);
            counts[live_bucket_index(value)] = 1;
            let reported = live_percentile(&counts, 99.0).unwrap();
            let error = (reported as f64 - value as f64).abs() / value as f64;
            assert!(error <= LIVE_RELATIVE_ERROR, "{value} → {reported}");
        }
        assert_eq!(live_percentile(&[0; 4], 50.0), None);
    }
}
