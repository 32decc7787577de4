//! A token bucket in a per-interval series: a plateau at the burst rate, one step down to the
//! baseline once the bucket ran dry ([`super::rate_step`]), and — where the run had idle time
//! — a return to the burst rate after it. The bucket is what was spent above the baseline,
//! (burst − baseline) × burst time, in bytes and in I/Os; its refill is measured from a
//! return after idle (what was spent again above the baseline over the idle time), else
//! taken to be the baseline (a token bucket refills at the rate it allows once empty).
//!
//! Its unit is the I/O when the I/O series has the flatter plateaus (a mix of block sizes
//! against an I/O limit), bytes when the byte series has. With one block size the two are
//! the same series: small I/Os (at most [`SMALL_BLOCK_BYTES`]) are then counted in I/Os, as
//! a cloud disk counts its burst credits for them, larger ones in bytes.
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

/// One series is taken as the bucket's unit when its plateaus are flatter than the other's by
/// this factor (spread relative to the gap); when neither is, the size of the I/Os decides.
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

/// The step of the byte series or of the I/O series, whichever is flatter (the I/O series
/// for small I/Os when neither is), and whether it is the I/O series.
fn chosen_step(rates: &IntervalRates) -> Option<(Step, bool)> {
    let relative = |step: &Step| step.spread / (step.before - step.after);
    match (
        first_stretch_step(&rates.bytes_per_second),
        first_stretch_step(&rates.iops),
    ) {
        (Some(bytes), Some(ios)) => {
            let ios_flatter = relative(&ios) < relative(&bytes) * IOS_FLATTER_FACTOR;
            let bytes_flatter = relative(&bytes) < relative(&ios) * IOS_FLATTER_FACTOR;
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
