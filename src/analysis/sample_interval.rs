//! The plain statistics under the trust notes and short runs: the 95 % confidence interval of
//! the mean of independent samples, and the rates of a series' full intervals (one sample
//! each). Both [`super::trust`] and [`super::short_run`] build on them.

use super::student_t::student_t_975;
use crate::result::{ConfidenceInterval, IntervalPoint};

/// The 95 % confidence interval of the mean of `samples` (`None` with fewer than two, or a
/// mean of zero).
pub fn confidence_interval(samples: &[f64]) -> Option<ConfidenceInterval> {
    let n = samples.len();
    if n < 2 {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return None;
    }
    let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    let half_width = student_t_975(n as u32 - 1) * variance.sqrt() / (n as f64).sqrt();
    Some(ConfidenceInterval {
        mean,
        half_width,
        half_width_percent: half_width / mean * 100.0,
        intervals: n as u32,
        confidence_percent: 95,
        interval_ns: 0,
        effective_samples: 0,
    })
}

/// Bytes per second and I/Os per second of every full interval of `series` (the last interval,
/// when shorter than the others, is left out).
pub fn full_interval_rates(series: &[IntervalPoint]) -> (Vec<f64>, Vec<f64>) {
    let Some(full) = series
        .iter()
        .map(|p| p.duration_ns)
        .max()
        .filter(|d| *d > 0)
    else {
        return (Vec::new(), Vec::new());
    };
    let seconds = full as f64 / 1e9;
    series
        .iter()
        .filter(|point| point.duration_ns == full)
        .map(|point| {
            (
                point.bytes as f64 / seconds,
                point.io_count as f64 / seconds,
            )
        })
        .unzip()
}
