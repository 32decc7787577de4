//! Steady state (fio's steadystate): a test ends once the last window of per-second samples
//! holds within a limit.
//!
//! `--steady iops:5%:30s` — every second of the last 30 s within ±5 % of their mean;
//! `iops_slope:2%:30s` — the least-squares trend across the window changes the metric by at
//! most 2 % of its mean; `bw` / `bw_slope` (bytes per second) and `lat` / `lat_slope` (mean
//! latency) likewise. The test's duration is then the longest it may run.

use super::WorkloadError;
use crate::units::parse_duration_ns;
use serde::{Deserialize, Serialize};

/// What is watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyMetric {
    /// I/Os per second.
    Iops,
    /// Bytes per second.
    Bandwidth,
    /// Mean latency of each second.
    Latency,
}

/// A steady-state criterion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyCriterion {
    /// The metric.
    pub metric: SteadyMetric,
    /// Judge the trend (slope) instead of the spread.
    pub slope: bool,
    /// The limit, percent of the window's mean.
    pub limit_percent: f64,
    /// Length of the window, ns (a whole number of seconds).
    pub window_ns: u64,
}

impl SteadyCriterion {
    /// Reads `iops:5%:30s`, `bw_slope:2%:60s`, `lat:10%:20s`.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let parts: Vec<&str> = text.split(':').map(str::trim).collect();
        let [metric, limit, window] = parts.as_slice() else {
            return Err(WorkloadError::part(
                text,
                "a steady-state criterion is METRIC:LIMIT%:WINDOW, as in iops:5%:30s",
            ));
        };
        let (metric, slope) = match *metric {
            "iops" => (SteadyMetric::Iops, false),
            "iops_slope" => (SteadyMetric::Iops, true),
            "bw" => (SteadyMetric::Bandwidth, false),
            "bw_slope" => (SteadyMetric::Bandwidth, true),
            "lat" => (SteadyMetric::Latency, false),
            "lat_slope" => (SteadyMetric::Latency, true),
            other => {
                return Err(WorkloadError::part(
                    other,
                    "watch iops, bw or lat (or iops_slope, bw_slope, lat_slope)",
                ));
            }
        };
        let limit_percent = limit
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|v| *v > 0.0 && *v <= 100.0)
            .ok_or_else(|| WorkloadError::value(limit, "is not a percentage above 0"))?;
        let window_ns = parse_duration_ns(window)?;
        if window_ns < 2_000_000_000 || !window_ns.is_multiple_of(1_000_000_000) {
            return Err(WorkloadError::part(
                window,
                "the window must be a whole number of seconds, at least 2",
            ));
        }
        Ok(SteadyCriterion {
            metric,
            slope,
            limit_percent,
            window_ns,
        })
    }

    /// Seconds in the window.
    pub fn window_seconds(&self) -> usize {
        (self.window_ns / 1_000_000_000) as usize
    }

    /// Whether the last window of `samples` (one per second, oldest first) holds.
    pub fn holds(&self, samples: &[f64]) -> bool {
        let window = self.window_seconds();
        if samples.len() < window {
            return false;
        }
        let last = &samples[samples.len() - window..];
        let mean = last.iter().sum::<f64>() / window as f64;
        if mean <= 0.0 {
            return false;
        }
        let limit = mean * self.limit_percent / 100.0;
        if self.slope {
            let n = window as f64;
            let mean_x = (n - 1.0) / 2.0;
            let (mut numerator, mut denominator) = (0.0, 0.0);
            for (x, y) in last.iter().enumerate() {
                numerator += (x as f64 - mean_x) * (y - mean);
                denominator += (x as f64 - mean_x).powi(2);
            }
            let slope = numerator / denominator;
            (slope * (n - 1.0)).abs() <= limit
        } else {
            last.iter().all(|value| (value - mean).abs() <= limit)
        }
    }
}

impl std::fmt::Display for SteadyCriterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let metric = match self.metric {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Bandwidth => "bw",
            SteadyMetric::Latency => "lat",
        };
        let slope = if self.slope { "_slope" } else { "" };
        write!(
            f,
            "{metric}{slope}:{}%:{}s",
            self.limit_percent,
            self.window_seconds()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_parse_and_print_back() {
        let criterion = SteadyCriterion::parse("iops:5%:30s").unwrap();
        assert_eq!(criterion.window_seconds(), 30);
        assert_eq!(
            SteadyCriterion::parse(&criterion.to_string()).unwrap(),
            criterion
        );
        for bad in [
            "iops",
            "iops:5%",
            "rate:5%:30s",
            "iops:0%:30s",
            "iops:5%:1s",
            "iops:5%:1500ms",
        ] {
            assert!(SteadyCriterion::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn spread_and_slope() {
        let spread = SteadyCriterion::parse("iops:5%:3s").unwrap();
        assert!(!spread.holds(&[100.0, 100.0]));
        assert!(spread.holds(&[50.0, 100.0, 102.0, 98.0]));
        assert!(!spread.holds(&[100.0, 110.0, 90.0]));
        let slope = SteadyCriterion::parse("iops_slope:5%:4s").unwrap();
        assert!(slope.holds(&[100.0, 95.0, 105.0, 100.0]));
        assert!(!slope.holds(&[100.0, 104.0, 108.0, 112.0]));
    }
}
