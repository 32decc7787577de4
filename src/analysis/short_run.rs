//! Short runs judged honestly: a run shorter than [`SHORT_RUN_NS`] records its series every
//! [`FINE_INTERVAL_NS`] instead of every second (unless `--interval` says otherwise), so that
//! two 2-second runs have eight samples each rather than two, and its confidence interval
//! comes from them.
//!
//! Neighbouring fine intervals are not independent: a device's queue, a token bucket or the
//! page cache carries state from one 250 ms to the next, so their rates are positively
//! correlated and a plain `s / √n` would be too narrow. The interval is therefore computed with
//! the effective number of samples of an AR(1) series, `n_eff = n (1 − r₁) / (1 + r₁)` for a
//! positive lag-1 autocorrelation `r₁` (never more than `n`, never fewer than 2):
//! `mean ± t(0.975, n_eff − 1) × s / √n_eff`. Where the data cannot tell, the interval stays
//! wide and `compare` says "too short to tell" with how long would do, never "same". The
//! steadiness check still looks at whole seconds: fine intervals are added up per second.
//!
//! ```
//! use iopath::analysis::short_run::{correlated_interval, series_interval_ns, FINE_INTERVAL_NS};
//! assert_eq!(series_interval_ns(Some(2_000_000_000)), FINE_INTERVAL_NS);
//! assert_eq!(series_interval_ns(Some(30_000_000_000)), 1_000_000_000);
//! assert_eq!(series_interval_ns(None), 1_000_000_000);
//! // Alternating samples are negatively correlated: every one counts.
//! let ci = correlated_interval(&[99.0, 101.0, 99.0, 101.0, 99.0, 101.0, 99.0, 101.0], FINE_INTERVAL_NS).unwrap();
//! assert_eq!(ci.effective_samples, 8);
//! // A slow drift is strongly correlated: far fewer independent samples.
//! let ci = correlated_interval(&[90.0, 92.0, 94.0, 96.0, 98.0, 100.0, 102.0, 104.0], FINE_INTERVAL_NS).unwrap();
//! assert!(ci.effective_samples < 4);
//! ```

use super::student_t::student_t_975;
use crate::result::{ConfidenceInterval, IntervalPoint};

/// A run whose every test measures less than this records a finer series (10 s: below it a
/// one-second series has fewer than ten samples, and two 2-second runs only two each).
pub const SHORT_RUN_NS: u64 = 10_000_000_000;
/// The series interval of a short run: a quarter of a second.
pub const FINE_INTERVAL_NS: u64 = 250_000_000;
const SECOND_NS: u64 = 1_000_000_000;

/// The series interval for tests that measure at most `longest_measured_ns` (`None`: a test
/// of unknown length, by bytes).
pub fn series_interval_ns(longest_measured_ns: Option<u64>) -> u64 {
    match longest_measured_ns {
        Some(measured) if measured < SHORT_RUN_NS => FINE_INTERVAL_NS,
        _ => SECOND_NS,
    }
}

/// The length of a series' full intervals when shorter than a second.
pub fn fine_interval_ns(series: &[IntervalPoint]) -> Option<u64> {
    series
        .iter()
        .map(|point| point.duration_ns)
        .max()
        .filter(|full| *full > 0 && *full < SECOND_NS)
}

/// Lag-1 autocorrelation of `samples` (0 when it cannot be computed).
pub fn lag1_autocorrelation(samples: &[f64]) -> f64 {
    let n = samples.len();
    if n < 3 {
        return 0.0;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let variance: f64 = samples.iter().map(|x| (x - mean).powi(2)).sum();
    if variance <= 0.0 {
        return 0.0;
    }
    let covariance: f64 = samples
        .windows(2)
        .map(|pair| (pair[0] - mean) * (pair[1] - mean))
        .sum();
    covariance / variance
}

/// The 95 % interval of the mean of fine-interval `samples` (each `interval_ns` long), with
/// the effective number of samples of an AR(1) series (module docs).
pub fn correlated_interval(samples: &[f64], interval_ns: u64) -> Option<ConfidenceInterval> {
    let plain = super::sample_interval::confidence_interval(samples)?;
    let n = samples.len();
    // The sample standard deviation, back from the plain interval's t × s / √n.
    let deviation = plain.half_width * (n as f64).sqrt() / student_t_975(n as u32 - 1);
    let r = lag1_autocorrelation(samples).max(0.0);
    let effective = (n as f64 * (1.0 - r) / (1.0 + r)).clamp(2.0, n as f64);
    let degrees = (effective.floor() as u32).saturating_sub(1).max(1);
    let half_width = student_t_975(degrees) * deviation / effective.sqrt();
    Some(ConfidenceInterval {
        half_width,
        half_width_percent: half_width / plain.mean * 100.0,
        interval_ns,
        effective_samples: effective.floor() as u64,
        ..plain
    })
}

/// Bytes per second of every whole second of `series`: its full intervals as they are when
/// they are a second long, else added up per second (a second not wholly covered by full
/// intervals is left out).
pub fn per_second_rates(series: &[IntervalPoint]) -> Vec<f64> {
    let Some(fine) = fine_interval_ns(series) else {
        return super::sample_interval::full_interval_rates(series).0;
    };
    let per_second = (SECOND_NS / fine) as usize;
    let mut rates = Vec::new();
    let full: Vec<&IntervalPoint> = series.iter().filter(|p| p.duration_ns == fine).collect();
    for chunk in full.chunks(per_second) {
        let covered: u64 = chunk.iter().map(|p| p.duration_ns).sum();
        if chunk.len() == per_second && covered == SECOND_NS {
            rates.push(chunk.iter().map(|p| p.bytes).sum::<u64>() as f64);
        }
    }
    rates
}

/// Seconds as a person writes them: `2`, `2.25`.
pub fn format_seconds(seconds: f64) -> String {
    let text = format!("{seconds:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(start_ns: u64, duration_ns: u64, bytes: u64) -> IntervalPoint {
        IntervalPoint {
            start_ns,
            duration_ns,
            bytes,
            io_count: bytes / 4096,
            mean_latency_ns: 0,
            p99_latency_ns: 0,
            latency_buckets: Vec::new(),
        }
    }

    #[test]
    fn fine_intervals_add_up_to_whole_seconds() {
        let series: Vec<IntervalPoint> = (0..9)
            .map(|i| point(i * FINE_INTERVAL_NS, FINE_INTERVAL_NS, 100))
            .chain([point(9 * FINE_INTERVAL_NS, 1000, 1)])
            .collect();
        assert_eq!(per_second_rates(&series), vec![400.0, 400.0]);
        let seconds: Vec<IntervalPoint> =
            (0..3).map(|i| point(i * SECOND_NS, SECOND_NS, 7)).collect();
        assert_eq!(per_second_rates(&seconds), vec![7.0, 7.0, 7.0]);
        assert_eq!(format_seconds(2.0), "2");
        assert_eq!(format_seconds(2.25), "2.25");
    }

    #[test]
    fn uncorrelated_fine_samples_give_the_plain_interval() {
        let samples = [99.0, 101.0, 100.0, 98.0, 102.0, 100.0, 99.0, 101.0];
        let plain = super::super::sample_interval::confidence_interval(&samples).unwrap();
        let fine = correlated_interval(&samples, FINE_INTERVAL_NS).unwrap();
        assert!(lag1_autocorrelation(&samples) <= 0.0);
        assert!((plain.half_width - fine.half_width).abs() < 1e-9);
        assert_eq!(fine.measured_seconds(), 2.0);
    }
}
