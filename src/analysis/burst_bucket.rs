//! A token bucket in a per-interval series: a plateau at the burst rate, one step down to the
//! baseline once the bucket ran dry ([`super::rate_step`]), and — where the run had idle time
//! — a return to the burst rate after it. The bucket is what was spent above the baseline,
//! (burst − baseline) × burst time, in bytes and in I/Os; its refill is measured from a
//! return after idle (what was spent again above the baseline over the idle time), else
//! taken to be the baseline (a token bucket refills at the rate it allows once empty).
//!
//! Its unit is the I/O when the I/O series is the flatter one at the baseline (a mix of block
//! sizes against an I/O limit: the bytes of each second follow the mix, the I/Os do not),
//! bytes when the byte series is. The baseline decides, not the burst: once the bucket is dry
//! its refill is what limits the rate, in the bucket's unit, while the burst may be limited
//! by the client or the path (a client short of CPU makes both series ragged alike). With one
//! block size the two are the same series: small I/Os (at most [`SMALL_BLOCK_BYTES`]) are
//! then counted in I/Os, as a cloud disk counts its burst credits for them, larger ones in
//! bytes.
//!
//! ```
//! use iopath::analysis::burst_bucket::fit_burst_bucket;
//! use iopath::analysis::rate_step::IntervalRates;
//! // 300 MB/s for 4 s, then 100 MB/s: a bucket of (300 − 100) × 4 = 800 MB.
//! let mut bytes = vec![300e6; 4];
//! bytes.extend([100e6; 6]);
//! let rates = IntervalRates {
//!     interval_seconds: 1.0,
//!     iops: bytes.iter().map(|b| b / 1e6).collect(),
//!     bytes_per_second: bytes,
//! };
//! let bucket = fit_burst_bucket(&rates).unwrap();
//! assert_eq!((bucket.burst_seconds, bucket.bucket_bytes), (4.0, 800e6));
//! ```

use super::rate_step::{AfterIdle, IntervalRates, Step, after_idle, first_stretch_step};
use super::small_io::SMALL_BLOCK_BYTES;
use crate::result::BurstBucket;
use crate::units::{format_count, format_decimal_bytes, format_iops, format_rate};

/// One series is taken as the bucket's unit when its baseline is flatter than the other's by
/// this factor (standard deviation relative to the level); when neither is, the size of the
/// I/Os decides.
pub const IOS_FLATTER_FACTOR: f64 = 0.8;

/// The bucket fitted to `rates`, if the series is a burst and a baseline and did not stay at
/// the baseline after idle time.
pub fn fit_burst_bucket(rates: &IntervalRates) -> Option<BurstBucket> {
    let (step, counted_in_ios) = chosen_step(rates)?;
    let series = if counted_in_ios {
        &rates.iops
    } else {
        &rates.bytes_per_second
    };
    let (refill_per_second, refill_idle_seconds) =
        match after_idle(series, &step, rates.interval_seconds) {
            AfterIdle::StayedLow => return None,
            AfterIdle::Returned {
                idle_seconds,
                spent_above_baseline,
                drained: true,
            } if idle_seconds > 0.0 => (
                Some(spent_above_baseline / idle_seconds),
                Some(idle_seconds),
            ),
            _ => (None, None),
        };
    let (burst_bytes, baseline_bytes) = IntervalRates::levels_of(&rates.bytes_per_second, &step)?;
    let (burst_iops, baseline_iops) = IntervalRates::levels_of(&rates.iops, &step)?;
    let burst_seconds = step.intervals_at_before * rates.interval_seconds;
    Some(BurstBucket {
        burst_bytes_per_second: burst_bytes,
        baseline_bytes_per_second: baseline_bytes,
        burst_iops,
        baseline_iops,
        burst_seconds,
        bucket_bytes: (burst_bytes - baseline_bytes) * burst_seconds,
        bucket_ios: (burst_iops - baseline_iops) * burst_seconds,
        counted_in_ios,
        refill_per_second,
        refill_idle_seconds,
    })
}

/// The step of the byte series or of the I/O series, whichever is flatter at the baseline
/// (the I/O series for small I/Os when neither is), and whether it is the I/O series.
fn chosen_step(rates: &IntervalRates) -> Option<(Step, bool)> {
    match (
        first_stretch_step(&rates.bytes_per_second),
        first_stretch_step(&rates.iops),
    ) {
        (Some(bytes), Some(ios)) => {
            // The intervals both steps put at the baseline.
            let baseline =
                bytes.after_start.max(ios.after_start)..bytes.after_end.min(ios.after_end);
            let spread =
                |series: &[f64]| relative_spread(series.get(baseline.clone()).unwrap_or(&[]));
            let (bytes_spread, ios_spread) = (spread(&rates.bytes_per_second), spread(&rates.iops));
            let ios_flatter = ios_spread < bytes_spread * IOS_FLATTER_FACTOR;
            let bytes_flatter = bytes_spread < ios_spread * IOS_FLATTER_FACTOR;
            if ios_flatter || (!bytes_flatter && small_ios(rates)) {
                Some((ios, true))
            } else {
                Some((bytes, false))
            }
        }
        (Some(bytes), None) => Some((bytes, false)),
        (None, Some(ios)) => Some((ios, true)),
        (None, None) => None,
    }
}

/// Standard deviation of `values` relative to their mean (0 for fewer than two, or a mean
/// of 0).
fn relative_spread(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let count = values.len() as f64;
    let mean = values.iter().sum::<f64>() / count;
    if mean <= 0.0 {
        return 0.0;
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / count;
    variance.sqrt() / mean
}

/// Whether the mean I/O of `rates` is at most [`SMALL_BLOCK_BYTES`].
fn small_ios(rates: &IntervalRates) -> bool {
    let ios: f64 = rates.iops.iter().sum();
    ios > 0.0 && rates.bytes_per_second.iter().sum::<f64>() / ios <= SMALL_BLOCK_BYTES
}

/// The bucket in words: `312.0 MB/s for 41 s, then 125.0 MB/s (a bucket of 7.67 GB above the
/// baseline, …)`.
pub fn describe(bucket: &BurstBucket) -> String {
    let (burst, baseline, size, refill) = if bucket.counted_in_ios {
        (
            format_iops(bucket.burst_iops),
            format_iops(bucket.baseline_iops),
            format!(
                "{} I/Os ({})",
                format_count(bucket.bucket_ios),
                format_decimal_bytes(bucket.bucket_bytes)
            ),
            bucket.refill_per_second.map(|refill| {
                (
                    format!("{} I/Os", format_count(spent_again(bucket, refill))),
                    format_iops(refill),
                )
            }),
        )
    } else {
        (
            format_rate(bucket.burst_bytes_per_second),
            format_rate(bucket.baseline_bytes_per_second),
            format!(
                "{} ({} I/Os)",
                format_decimal_bytes(bucket.bucket_bytes),
                format_count(bucket.bucket_ios)
            ),
            bucket.refill_per_second.map(|refill| {
                (
                    format_decimal_bytes(spent_again(bucket, refill)),
                    format_rate(refill),
                )
            }),
        )
    };
    let refill = match refill {
        Some((spent, refill)) => format!(
            "and {spent} above it again after {} s idle: refilled at {refill} while idle",
            super::short_run::format_seconds(
                (bucket.refill_idle_seconds.unwrap_or(0.0) * 10.0).round() / 10.0
            )
        ),
        None => "refilling at the baseline (no idle time to measure it)".to_string(),
    };
    format!(
        "{burst} for {} s, then {baseline}: a bucket of {size} spent above the baseline, {refill}",
        super::short_run::format_seconds((bucket.burst_seconds * 10.0).round() / 10.0)
    )
}

/// What the bucket spent above the baseline after the idle time, in its unit.
fn spent_again(bucket: &BurstBucket, refill_per_second: f64) -> f64 {
    refill_per_second * bucket.refill_idle_seconds.unwrap_or(0.0)
}
