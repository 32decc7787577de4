//! Steady state (fio's steadystate): a test ends once the last window of per-second samples
//! holds within a limit.
//!
//! `--steady iops:5%:30s` — every second of the last 30 s within ±5 % of their mean;
//! `iops_slope:2%:30s` — the least-squares trend across the window changes the metric by at
//! most 2 % of its mean; `bw` / `bw_slope` (bytes per second) and `lat` / `lat_slope` (mean
//! latency) likewise. The test's duration is then the longest it may run.
//!
//! An optional fourth part samples less often (fio's `ss_interval`): `iops:5%:300s:10s` judges
//! 30 samples, each the mean of its 10 seconds, once every 10 seconds.

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
    /// Time between samples, ns (whole seconds dividing the window; 1 s by default).
    #[serde(default = "one_second", skip_serializing_if = "is_one_second")]
    pub interval_ns: u64,
    /// Time from the test's start before samples are taken, ns (fio's `ss_ramp`); samples
    /// are never taken during the ramp either.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub settle_ns: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

fn one_second() -> u64 {
    1_000_000_000
}

fn is_one_second(value: &u64) -> bool {
    *value == one_second()
}

impl SteadyCriterion {
    /// Reads `iops:5%:30s`, `bw_slope:2%:60s`, `lat:10%:20s`, `iops:5%:300s:10s`.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let parts: Vec<&str> = text.split(':').map(str::trim).collect();
        let (metric, limit, window, interval) = match parts.as_slice() {
            [metric, limit, window] => (metric, limit, window, None),
            [metric, limit, window, interval] => (metric, limit, window, Some(interval)),
            _ => {
                return Err(WorkloadError::part(
                    text,
                    "a steady-state criterion is METRIC:LIMIT%:WINDOW[:INTERVAL], as in iops:5%:30s",
                ));
            }
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
        let interval_ns = match interval {
            Some(interval) => parse_duration_ns(interval)?,
            None => one_second(),
        };
        let criterion = SteadyCriterion {
            metric,
            slope,
            limit_percent,
            window_ns,
            interval_ns,
            settle_ns: 0,
        };
        criterion
            .check_interval()
            .map_err(|problem| WorkloadError::part(text, problem))?;
        Ok(criterion)
    }

    /// Checks that the interval is whole seconds dividing the window into at least 2 samples.
    pub fn check_interval(&self) -> Result<(), String> {
        let interval = self.interval_ns;
        if interval == 0
            || !interval.is_multiple_of(1_000_000_000)
            || !self.window_ns.is_multiple_of(interval)
            || self.window_ns / interval < 2
        {
            return Err(format!(
                "the sampling interval ({} s) must be whole seconds dividing the window ({} s) into at least 2 samples",
                interval as f64 / 1e9,
                self.window_ns as f64 / 1e9
            ));
        }
        Ok(())
    }

    /// Seconds in the window.
    pub fn window_seconds(&self) -> usize {
        (self.window_ns / 1_000_000_000) as usize
    }

    /// Seconds in each sample.
    pub fn interval_seconds(&self) -> usize {
        ((self.interval_ns / 1_000_000_000) as usize).max(1)
    }

    /// Whether the last window of `per_second` samples (oldest first) holds. With an interval
    /// of several seconds, the seconds are averaged into samples counted from the first, and
    /// the window is judged only when a sample has just been completed.
    pub fn holds(&self, per_second: &[f64]) -> bool {
        let window = self.window_seconds();
        let interval = self.interval_seconds();
        if per_second.len() < window || !per_second.len().is_multiple_of(interval) {
            return false;
        }
        let last: Vec<f64> = per_second[per_second.len() - window..]
            .chunks(interval)
            .map(|chunk| chunk.iter().sum::<f64>() / chunk.len() as f64)
            .collect();
        let window = last.len();
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
        )?;
        if !is_one_second(&self.interval_ns) {
            write!(f, ":{}s", self.interval_seconds())?;
        }
        Ok(())
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

    #[test]
    fn intervals_average_their_seconds() {
        let criterion = SteadyCriterion::parse("iops:5%:4s:2s").unwrap();
        assert_eq!(criterion.to_string(), "iops:5%:4s:2s");
        // Seconds 90/110 and 100/100 average to 100 and 100: steady, though single seconds
        // are 10 % apart; judged only on a whole sample.
        assert!(criterion.holds(&[90.0, 110.0, 100.0, 100.0]));
        assert!(!criterion.holds(&[50.0, 90.0, 110.0, 100.0, 100.0]));
        assert!(!criterion.holds(&[80.0, 80.0, 100.0, 100.0]));
        for bad in ["iops:5%:4s:3s", "iops:5%:4s:4s", "iops:5%:4s:500ms"] {
            assert!(SteadyCriterion::parse(bad).is_err(), "{bad}");
        }
    }
}
