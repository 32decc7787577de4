//! The steady-state rule of the SNIA PTS: a measurement window of [`WINDOW_ROUNDS`] rounds
//! is steady when
//!
//! - the data excursion, the largest minus the smallest value in the window, is within
//!   [`EXCURSION_LIMIT`] (20 %) of the window's average, and
//! - the least-squares line through the window moves within [`SLOPE_LIMIT`] (10 %) of that
//!   average across the window (its slope × (rounds − 1)).
//!
//! "Within" includes the limit itself. The window is always the last rounds: a test checks it
//! after every round from the fifth on and stops at the first that holds.
//!
//! ```
//! use iopath::pts::steady_rule::judge_window;
//! let window = judge_window("iops", 1, &[100.0, 110.0, 90.0, 100.0, 100.0]);
//! assert!(window.holds());
//! assert_eq!(window.average, 100.0);
//! assert_eq!(window.excursion, 20.0); // exactly 20 % of the average: still steady
//! ```

use crate::result::pts::PtsWindow;

/// Rounds in a measurement window.
pub const WINDOW_ROUNDS: usize = 5;
/// Most a window's values may spread, as a share of their average.
pub const EXCURSION_LIMIT: f64 = 0.20;
/// Most the least-squares line may move across the window, as a share of the average.
pub const SLOPE_LIMIT: f64 = 0.10;
/// Most rounds of a test, as the specification has it.
pub const MAX_ROUNDS: u32 = 25;

/// Relative slack for floating-point noise when a figure is exactly at a limit.
const AT_LIMIT_SLACK: f64 = 1e-9;

/// Judges `values` (the rounds of a window, the first being round `first_round`) against the
/// rule.
pub fn judge_window(variable: &str, first_round: u32, values: &[f64]) -> PtsWindow {
    let count = values.len().max(1) as f64;
    let average = values.iter().sum::<f64>() / count;
    let largest = values.iter().copied().fold(f64::MIN, f64::max);
    let smallest = values.iter().copied().fold(f64::MAX, f64::min);
    let excursion = if values.is_empty() {
        0.0
    } else {
        largest - smallest
    };
    let (slope, intercept) = least_squares(values);
    let slope_excursion = (slope * (count - 1.0)).abs();
    let within = |figure: f64, limit: f64| {
        let bound = limit * average.abs();
        figure <= bound + AT_LIMIT_SLACK * bound.max(1.0)
    };
    let judged = values.len() >= WINDOW_ROUNDS && average > 0.0;
    PtsWindow {
        variable: variable.to_string(),
        first_round,
        values: values.to_vec(),
        average,
        excursion,
        slope,
        intercept,
        slope_excursion,
        excursion_holds: judged && within(excursion, EXCURSION_LIMIT),
        slope_holds: judged && within(slope_excursion, SLOPE_LIMIT),
    }
}

/// The window of the last [`WINDOW_ROUNDS`] values of a tracking variable (fewer when fewer
/// rounds ran; such a window never holds). `values` start at round 1.
pub fn last_window(variable: &str, values: &[f64]) -> PtsWindow {
    let start = values.len().saturating_sub(WINDOW_ROUNDS);
    judge_window(variable, start as u32 + 1, &values[start..])
}

/// Slope per round and value at the first round of the least-squares line through
/// `values` (x = 0, 1, 2 …).
fn least_squares(values: &[f64]) -> (f64, f64) {
    let count = values.len() as f64;
    if values.len() < 2 {
        return (0.0, values.first().copied().unwrap_or(0.0));
    }
    let mean_x = (count - 1.0) / 2.0;
    let mean_y = values.iter().sum::<f64>() / count;
    let (mut covariance, mut variance) = (0.0, 0.0);
    for (index, value) in values.iter().enumerate() {
        let dx = index as f64 - mean_x;
        covariance += dx * (value - mean_y);
        variance += dx * dx;
    }
    let slope = covariance / variance;
    (slope, mean_y - slope * mean_x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_window_is_steady() {
        let window = judge_window("v", 3, &[50.0, 52.0, 49.0, 51.0, 50.0]);
        assert!(window.holds());
        assert_eq!(window.first_round, 3);
        assert!((window.average - 50.4).abs() < 1e-12);
        assert!((window.excursion - 3.0).abs() < 1e-12);
        // x = 0..4, mean 2; Σdx·dy = (-2)(-0.4)+(-1)(1.6)+0+(1)(0.6)+(2)(-0.4) = -1.0; Σdx² = 10
        assert!((window.slope - -0.1).abs() < 1e-12);
        assert!((window.intercept - 50.6).abs() < 1e-12);
        assert!((window.slope_excursion - 0.4).abs() < 1e-12);
    }

    #[test]
    fn too_much_excursion_is_not_steady() {
        // Average 100, spread 25 > 20; the line is flat (symmetric values).
        let window = judge_window("v", 1, &[100.0, 87.5, 112.5, 87.5, 112.5]);
        assert!((window.average - 100.0).abs() < 1e-12);
        assert!((window.excursion - 25.0).abs() < 1e-12);
        assert!(!window.excursion_holds);
        assert!(!window.holds());
    }

    #[test]
    fn too_much_slope_is_not_steady() {
        // 96, 98, 100, 102, 104: spread 8 (8 %), slope 2 per round, moves 8 across… steady;
        // 94, 97, 100, 103, 106: spread 12 (12 %) but the line moves 12 > 10.
        let steady = judge_window("v", 1, &[96.0, 98.0, 100.0, 102.0, 104.0]);
        assert!(steady.holds());
        let drifting = judge_window("v", 1, &[94.0, 97.0, 100.0, 103.0, 106.0]);
        assert!((drifting.slope - 3.0).abs() < 1e-12);
        assert!((drifting.slope_excursion - 12.0).abs() < 1e-12);
        assert!(drifting.excursion_holds);
        assert!(!drifting.slope_holds);
        assert!(!drifting.holds());
    }

    #[test]
    fn exactly_at_both_limits_is_steady() {
        let values = [90.0, 105.0, 100.0, 95.0, 110.0];
        // mean 100; Σdx·dy = (-2)(-10)+(-1)(5)+0+(1)(-5)+(2)(10) = 30 → slope 3, moves 12: too much.
        assert!(!judge_window("v", 1, &values).slope_holds);
        let at_limits = [90.0, 107.5, 100.0, 92.5, 110.0];
        // mean 100; Σdx·dy = 20 - 7.5 + 0 - 7.5 + 20 = 25 → slope 2.5, moves exactly 10;
        // spread 110 - 90 = 20, exactly 20 %.
        let window = judge_window("v", 1, &at_limits);
        assert!((window.average - 100.0).abs() < 1e-12);
        assert!((window.slope_excursion - 10.0).abs() < 1e-12);
        assert!((window.excursion - 20.0).abs() < 1e-12);
        assert!(window.holds());
        // Just past either limit fails.
        let past = [89.9, 107.5, 100.0, 92.5, 110.0];
        assert!(!judge_window("v", 1, &past).excursion_holds);
    }

    #[test]
    fn fewer_rounds_than_a_window_never_hold() {
        assert!(!last_window("v", &[100.0, 100.0, 100.0, 100.0]).holds());
        let window = last_window("v", &[10.0, 500.0, 100.0, 100.0, 100.0, 100.0, 100.0]);
        assert_eq!(window.first_round, 3);
        assert!(window.holds());
    }

    #[test]
    fn a_zero_average_never_holds() {
        assert!(!judge_window("v", 1, &[0.0; 5]).holds());
    }
}
