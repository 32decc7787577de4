//! The texts of a comparison's cells, shared by the terminal, Markdown and HTML exporters so
//! that each writes a figure the same way: MB/s (10^6 bytes per second) and IOPS with one
//! decimal or thousands separators, latencies with a unit, `± x %` for the 95 % interval.
//!
//! ```
//! use iopath::compare::{Metric, MetricValue};
//! use iopath::report::compare_cells::{difference_cell, ratio_cell, value_cell};
//! let value = MetricValue { value: 271_600_000.0, half_width: Some(2_716_000.0), samples: 5 };
//! assert_eq!(value_cell(Metric::Throughput, &value), "271.6 ± 1.0 %");
//! assert_eq!(difference_cell(Metric::MeanLatency, 38_400.0), "+38.4 µs");
//! assert_eq!(difference_cell(Metric::Iops, -4845.0), "-4,845");
//! assert_eq!(ratio_cell(Some(0.927)), "0.93");
//! ```

use crate::compare::{Metric, MetricValue, Outcome};
use crate::units::{format_count, format_latency};

/// The figure alone: `271.6` (MB/s), `66,310` (IOPS), `480.9 µs`.
pub fn figure(metric: Metric, value: f64) -> String {
    match metric {
        Metric::Throughput => format!("{:.1}", value / 1e6),
        Metric::Iops => format_count(value),
        Metric::MeanLatency | Metric::P99Latency => format_latency(value),
    }
}

/// The figure and its interval: `271.6 ± 1.0 %`.
pub fn value_cell(metric: Metric, value: &MetricValue) -> String {
    let text = figure(metric, value.value);
    match value.half_width_percent() {
        Some(percent) => format!("{text} ± {percent:.1} %"),
        None => text,
    }
}

/// A signed difference in the metric's unit: `+12.3` (MB/s), `-4,845`, `+38.4 µs`.
pub fn difference_cell(metric: Metric, difference: f64) -> String {
    let sign = if difference < 0.0 { "-" } else { "+" };
    format!("{sign}{}", figure(metric, difference.abs()))
}

/// A ratio with two decimals (`0.93`, `1.50`), one from 10 up, `—` when undefined.
pub fn ratio_cell(ratio: Option<f64>) -> String {
    match ratio {
        Some(ratio) if ratio.is_finite() && ratio >= 10.0 => format!("{ratio:.1}"),
        Some(ratio) if ratio.is_finite() => format!("{ratio:.2}"),
        _ => "—".into(),
    }
}

/// `same`, `better`, `worse`, `no CI`.
pub fn outcome_cell(outcome: Outcome) -> &'static str {
    outcome.name()
}

/// An amount of money (any currency) with thousands separators and two decimals below 100:
/// `1,200`, `3,000`, `48.50`.
pub fn money(amount: f64) -> String {
    if amount.abs() >= 100.0 {
        format_count(amount)
    } else {
        format!("{amount:.2}")
    }
}

/// The legend printed under every comparison.
pub const LEGEND: &str = "MB/s = 10^6 bytes/s; latency = submission to completion; ± = 95 % confidence interval of the per-interval values (1 s; 250 ms in runs under 10 s) (Student t); \
a change is better or worse only where the two runs' intervals do not overlap, \"same\" where they do and each is within ± 10 %, \"too short\" where they overlap but are wider (a note says how long would tell), \"no CI\" where a run has fewer than two full one-second intervals.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_well() {
        let value = MetricValue {
            value: 4_360_000.0,
            half_width: None,
            samples: 0,
        };
        assert_eq!(value_cell(Metric::P99Latency, &value), "4.36 ms");
        assert_eq!(difference_cell(Metric::Throughput, -19_800_000.0), "-19.8");
        assert_eq!(difference_cell(Metric::Throughput, 0.0), "+0.0");
        assert_eq!(ratio_cell(Some(12.34)), "12.3");
        assert_eq!(ratio_cell(None), "—");
        assert_eq!(money(1200.0), "1,200");
        assert_eq!(money(48.5), "48.50");
        assert_eq!(outcome_cell(Outcome::Unknown), "no CI");
        assert_eq!(outcome_cell(Outcome::TooShort), "too short");
    }
}
