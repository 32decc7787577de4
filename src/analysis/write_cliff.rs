//! A write cliff in a per-interval series: writes at one rate until a number of bytes were
//! written (an SSD's SLC area, a controller's or an array's write-back cache filled), then
//! one step down ([`super::rate_step`]) that does not come back after idle time.
//!
//! ```
//! use iopath::analysis::rate_step::IntervalRates;
//! use iopath::analysis::write_cliff::find_write_cliff;
//! // 500 MB/s for 3 s and a half, then 150 MB/s: 1.75 GB written before the step.
//! let bytes = vec![500e6, 500e6, 500e6, 325e6, 150e6, 150e6, 150e6, 150e6];
//! let rates = IntervalRates {
//!     interval_seconds: 1.0,
//!     iops: bytes.iter().map(|b| b / 1e6).collect(),
//!     bytes_per_second: bytes,
//! };
//! let cliff = find_write_cliff(&rates).unwrap();
//! assert_eq!((cliff.seconds_before, cliff.bytes_before), (3.5, 1.75e9));
//! ```

use super::rate_step::{AfterIdle, IntervalRates, after_idle, first_stretch_step};
use crate::result::WriteCliff;
use crate::units::{format_decimal_bytes, format_rate};

/// The cliff of `rates` (a write series), if the byte rate stepped down once and did not
/// come back after idle time.
pub fn find_write_cliff(rates: &IntervalRates) -> Option<WriteCliff> {
    let step = first_stretch_step(&rates.bytes_per_second)?;
    let stayed_low_after_idle =
        match after_idle(&rates.bytes_per_second, &step, rates.interval_seconds) {
            AfterIdle::Returned { .. } => return None,
            AfterIdle::StayedLow => true,
            AfterIdle::NotSeen => false,
        };
    let (before_iops, after_iops) = IntervalRates::levels_of(&rates.iops, &step)?;
    // Whole intervals at the first level, and the first level's share of a partial one.
    let whole: f64 = rates.bytes_per_second[..step.intervals_before].iter().sum();
    let partial = step.intervals_at_before - step.intervals_before as f64;
    Some(WriteCliff {
        bytes_before: (whole + partial * step.before) * rates.interval_seconds,
        seconds_before: step.intervals_at_before * rates.interval_seconds,
        before_bytes_per_second: step.before,
        after_bytes_per_second: step.after,
        before_iops,
        after_iops,
        stayed_low_after_idle,
    })
}

/// The cliff in words: `after 1.75 GB written (3.5 s): 500.0 MB/s, then 150.0 MB/s`.
pub fn describe(cliff: &WriteCliff) -> String {
    format!(
        "after {} written ({} s): {}, then {}{}",
        format_decimal_bytes(cliff.bytes_before),
        super::short_run::format_seconds((cliff.seconds_before * 10.0).round() / 10.0),
        format_rate(cliff.before_bytes_per_second),
        format_rate(cliff.after_bytes_per_second),
        if cliff.stayed_low_after_idle {
            "; it stayed there after idle time, as a full cache does and a burst bucket does not"
        } else {
            ""
        }
    )
}
