//! One step down in a per-interval series of rates, found where it is a step and nothing
//! else: two flat levels, a drop of at least [`MIN_DROP_PERCENT`] between them taken within
//! one interval, and no drift inside either level. Noise about one level, a slow drift and a
//! single dip are not steps. The base of [`super::burst_bucket`] and [`super::write_cliff`].
//!
//! The series is split at idle intervals (below [`IDLE_PERCENT`] of the highest rate) into
//! active stretches; the step is looked for in the first one, and the later ones tell whether
//! the rate came back after idle.
//!
//! ```
//! use iopath::analysis::rate_step::fit_step;
//! let mut rates = vec![300.0, 305.0, 298.0, 302.0];
//! rates.extend([120.0, 122.0, 119.0, 121.0, 120.0]);
//! let step = fit_step(&rates).unwrap();
//! assert_eq!(step.intervals_before, 4);
//! assert!((step.before - 301.25).abs() < 1e-9 && (step.after - 120.4).abs() < 1e-9);
//! assert!(fit_step(&[100.0, 104.0, 97.0, 102.0, 99.0, 103.0, 98.0]).is_none());
//! ```

use crate::result::IntervalPoint;

/// Fewest intervals at the first level.
pub const MIN_INTERVALS_BEFORE: usize = 2;
/// Fewest intervals at the second level.
pub const MIN_INTERVALS_AFTER: usize = 3;
/// The second level is at least this much below the first, percent of the first.
pub const MIN_DROP_PERCENT: f64 = 20.0;
/// Each level's intervals spread by at most this much (standard deviation, percent of the
/// gap between the levels).
pub const MAX_LEVEL_SPREAD_PERCENT_OF_GAP: f64 = 20.0;
/// A fitted line across one level moves by at most this share of the gap (no drift).
pub const MAX_LEVEL_DRIFT_PERCENT_OF_GAP: f64 = 30.0;
/// The drop is taken within one interval (or across one partial interval): at least this
/// share of the gap lies between the last interval of the first level and the first of the
/// second.
pub const MIN_EDGE_PERCENT_OF_GAP: f64 = 60.0;
/// An interval below this share of the highest rate is idle.
pub const IDLE_PERCENT: f64 = 5.0;

/// The rates of a test, one per full interval (the last, shorter interval left out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalRates {
    /// Length of one interval, seconds.
    pub interval_seconds: f64,
    /// Bytes per second of each interval.
    pub bytes_per_second: Vec<f64>,
    /// I/Os per second of each interval.
    pub iops: Vec<f64>,
}

impl IntervalRates {
    /// The full intervals of a stored series.
    pub fn of_series(series: &[IntervalPoint]) -> IntervalRates {
        let full_ns = series.iter().map(|p| p.duration_ns).max().unwrap_or(0);
        let (bytes_per_second, iops) = super::sample_interval::full_interval_rates(series);
        IntervalRates {
            interval_seconds: full_ns as f64 / 1e9,
            bytes_per_second,
            iops,
        }
    }

    /// Means of `values` over the two levels of `step` (of the same series' intervals).
    pub fn levels_of(values: &[f64], step: &Step) -> Option<(f64, f64)> {
        let before = values.get(..step.intervals_before)?;
        let after = values.get(step.after_start..step.after_end)?;
        (!before.is_empty() && !after.is_empty()).then(|| (mean(before), mean(after)))
    }
}

/// One step down, fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Mean of the first level.
    pub before: f64,
    /// Mean of the second level.
    pub after: f64,
    /// Intervals wholly at the first level (from the first interval).
    pub intervals_before: usize,
    /// Time at the first level, in intervals: the whole ones and the share of a partial
    /// interval between the levels, `(rate − after) / (before − after)`.
    pub intervals_at_before: f64,
    /// Index of the first interval wholly at the second level.
    pub after_start: usize,
    /// Index after the last interval of the second level.
    pub after_end: usize,
    /// Standard deviation of each level's intervals, pooled, in the rate's unit.
    pub spread: f64,
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn squared_error(values: &[f64], about: f64) -> f64 {
    values.iter().map(|v| (v - about).powi(2)).sum()
}

/// Change of a least-squares line across `values`, first to last (0 for fewer than 3).
fn line_change(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 3 {
        return 0.0;
    }
    let mean_x = (n as f64 - 1.0) / 2.0;
    let mean_y = mean(values);
    let (mut numerator, mut denominator) = (0.0, 0.0);
    for (x, y) in values.iter().enumerate() {
        numerator += (x as f64 - mean_x) * (y - mean_y);
        denominator += (x as f64 - mean_x).powi(2);
    }
    numerator / denominator * (n as f64 - 1.0)
}

/// The one step down in `rates`, if it is a step: see the module's rules.
pub fn fit_step(rates: &[f64]) -> Option<Step> {
    let n = rates.len();
    if n < MIN_INTERVALS_BEFORE + MIN_INTERVALS_AFTER || rates.iter().any(|r| !r.is_finite()) {
        return None;
    }
    // The split with the least squared error; a partial interval between the levels may sit
    // on either side of it, and is then left out of both.
    let split = (MIN_INTERVALS_BEFORE..=n - MIN_INTERVALS_AFTER).min_by(|&a, &b| {
        let error = |k: usize| {
            let (left, right) = rates.split_at(k);
            squared_error(left, mean(left)) + squared_error(right, mean(right))
        };
        error(a).total_cmp(&error(b))
    })?;
    let mut candidates = vec![(split, split)];
    if split + 1 + MIN_INTERVALS_AFTER <= n {
        candidates.push((split, split + 1));
    }
    if split > MIN_INTERVALS_BEFORE {
        candidates.push((split - 1, split));
    }
    candidates
        .into_iter()
        .filter_map(|(end_before, after_start)| judge(rates, end_before, after_start))
        .min_by(|a, b| a.spread.total_cmp(&b.spread))
}

/// The step with the first level `rates[..end_before]` and the second `rates[after_start..]`
/// (one partial interval between them, or none), if it passes every rule.
fn judge(rates: &[f64], end_before: usize, after_start: usize) -> Option<Step> {
    let (left, right) = (&rates[..end_before], &rates[after_start..]);
    let (before, after) = (mean(left), mean(right));
    let gap = before - after;
    if before <= 0.0 || gap < before * MIN_DROP_PERCENT / 100.0 {
        return None;
    }
    let errors = squared_error(left, before) + squared_error(right, after);
    let spread = (errors / (left.len() + right.len()) as f64).sqrt();
    let level_spread =
        |level: &[f64], about: f64| (squared_error(level, about) / level.len() as f64).sqrt();
    let limit = |percent: f64| gap * percent / 100.0;
    if level_spread(left, before) > limit(MAX_LEVEL_SPREAD_PERCENT_OF_GAP)
        || level_spread(right, after) > limit(MAX_LEVEL_SPREAD_PERCENT_OF_GAP)
        || line_change(left).abs() > limit(MAX_LEVEL_DRIFT_PERCENT_OF_GAP)
        || line_change(right).abs() > limit(MAX_LEVEL_DRIFT_PERCENT_OF_GAP)
    {
        return None;
    }
    // Taken at once: the edge intervals (around a partial one) are far apart.
    if rates[end_before - 1] - rates[after_start] < limit(MIN_EDGE_PERCENT_OF_GAP) {
        return None;
    }
    let mut intervals_at_before = end_before as f64;
    if after_start > end_before {
        let partial = rates[end_before];
        // A partial interval lies between the levels; anything else is not a clean step.
        if partial > before + limit(MAX_LEVEL_SPREAD_PERCENT_OF_GAP) * 2.0
            || partial < after - limit(MAX_LEVEL_SPREAD_PERCENT_OF_GAP) * 2.0
        {
            return None;
        }
        intervals_at_before += ((partial - after) / gap).clamp(0.0, 1.0);
    }
    Some(Step {
        before,
        after,
        intervals_before: end_before,
        intervals_at_before,
        after_start,
        after_end: rates.len(),
        spread,
    })
}

/// The active stretches of a series, as index ranges: the runs of intervals at or above
/// [`IDLE_PERCENT`] of the highest rate.
pub fn active_stretches(rates: &[f64]) -> Vec<std::ops::Range<usize>> {
    let highest = rates.iter().copied().fold(0.0, f64::max);
    let idle = |rate: f64| rate < highest * IDLE_PERCENT / 100.0;
    let mut stretches = Vec::new();
    let mut start = None;
    for (index, &rate) in rates.iter().enumerate() {
        match (idle(rate), start) {
            (false, None) => start = Some(index),
            (true, Some(first)) => {
                stretches.push(first..index);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(first) = start {
        stretches.push(first..rates.len());
    }
    stretches
}

/// What the rate did after idle time that followed a step.
#[derive(Clone, Debug, PartialEq)]
pub enum AfterIdle {
    /// The run had no idle time after the step.
    NotSeen,
    /// The rate came back above the middle of the two levels after `idle_seconds` of idle
    /// time, and spent `spent_above_baseline` (rate × seconds, above the second level) before
    /// it fell back; `drained` when it fell back within the stretch.
    Returned {
        /// Idle time before the return, seconds: the idle intervals and the idle shares of
        /// the partly idle intervals on both sides ([`idle_share_before`], [`idle_share_after`]).
        idle_seconds: f64,
        /// Spent above the second level after the return (the rate's unit × seconds), the
        /// interval in which it fell back included.
        spent_above_baseline: f64,
        /// The rate fell back to the second level before the stretch ended.
        drained: bool,
    },
    /// After idle time the rate stayed at the second level.
    StayedLow,
}

/// The idle share of the last interval before idle time, which ran at the second level for
/// the rest of it: `1 − rate / after`, within 0 and 1.
pub fn idle_share_before(rate: f64, step: &Step) -> f64 {
    if step.after <= 0.0 {
        return 0.0;
    }
    (1.0 - rate / step.after).clamp(0.0, 1.0)
}

/// The idle share of the first interval after idle time, which ran at the first level (the
/// refilled bucket) for the rest of it: `1 − rate / before`, within 0 and 1.
pub fn idle_share_after(rate: f64, step: &Step) -> f64 {
    (1.0 - rate / step.before).clamp(0.0, 1.0)
}

/// What the first stretch after idle time did, against `step` fitted to the first stretch of
/// `rates` (intervals of `interval_seconds`).
///
/// The idle time counts the idle intervals and the idle shares of the two partly idle
/// intervals around them; what is spent counts every interval of the return above the second
/// level, the partly idle first one (its active share at the first level, less the second
/// level over that share) and the one in which the rate fell back. A token bucket emptied
/// before the idle time and again after the return then gives back what it gathered while
/// idle, to the share of an interval that the levels' noise leaves.
pub fn after_idle(rates: &[f64], step: &Step, interval_seconds: f64) -> AfterIdle {
    let stretches = active_stretches(rates);
    let (Some(first), Some(next)) = (stretches.first(), stretches.get(1)) else {
        return AfterIdle::NotSeen;
    };
    let middle = (step.before + step.after) / 2.0;
    let settled = step.after + (step.before - step.after) / 4.0;
    let mut idle_intervals =
        (next.start - first.end) as f64 + idle_share_before(rates[first.end - 1], step);
    let mut spent = 0.0;
    let mut returned = &rates[next.clone()];
    // The first interval after idle may be partly idle.
    if returned.len() > 1 && returned[0] < returned[1] {
        let idle_share = idle_share_after(returned[0], step);
        idle_intervals += idle_share;
        spent += (returned[0] - (1.0 - idle_share) * step.after).max(0.0);
        returned = &returned[1..];
    }
    if returned.first().is_none_or(|rate| *rate < middle) {
        return AfterIdle::StayedLow;
    }
    let back = returned.iter().position(|rate| *rate <= settled);
    let counted = back.map_or(returned.len(), |index| index + 1);
    spent += returned[..counted]
        .iter()
        .map(|rate| (rate - step.after).max(0.0))
        .sum::<f64>();
    AfterIdle::Returned {
        idle_seconds: idle_intervals * interval_seconds,
        spent_above_baseline: spent * interval_seconds,
        drained: back.is_some(),
    }
}

/// The step of the first active stretch of `rates` (which must start the series).
pub fn first_stretch_step(rates: &[f64]) -> Option<Step> {
    let mut first = active_stretches(rates).into_iter().next()?;
    if first.start != 0 {
        return None;
    }
    // The last interval before idle time may be partly idle.
    if first.end < rates.len() && first.len() > MIN_INTERVALS_BEFORE + MIN_INTERVALS_AFTER {
        first.end -= 1;
    }
    fit_step(&rates[first])
}

#[cfg(test)]
mod tests;
