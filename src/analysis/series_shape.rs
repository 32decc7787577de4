//! What a per-second series of rates did, said in words that are true of it: a step (when,
//! from what to what), a straight line where a line fits, or else only where it started and
//! ended. A fall is measured from where the series started, so it is never more than 100 %.
//!
//! Two models are fitted by least squares: one step (two levels, the split that leaves the
//! least squared error) and a straight line. A model *fits* when it explains at least
//! [`FIT_R_SQUARED`] of the variance; of two that fit, the one that explains more is named.
//! A line is offered only where it fits and stays above zero over the run.
//!
//! ```
//! use iopath::analysis::series_shape::{Shape, shape};
//! // 5 s at 120, then 11 s at 26: a step, not a line falling through zero.
//! let mut rates = vec![120.0; 5];
//! rates.extend([26.0; 11]);
//! let Shape::Step { seconds_before, before, after, .. } = shape(&rates) else { panic!() };
//! assert_eq!((seconds_before, before, after), (5, 120.0, 26.0));
//! ```

use super::student_t::student_t_975;

/// Fewest full intervals for a trend or a step.
pub const TREND_MIN_INTERVALS: usize = 5;

/// A model that explains this share of a series' variance (R²) fits it.
pub const FIT_R_SQUARED: f64 = 0.8;

/// The shape of a series of rates, one per interval.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// One level, then another.
    Step {
        /// Intervals at the first level.
        seconds_before: usize,
        /// Intervals at the second level.
        seconds_after: usize,
        /// Mean of the first level.
        before: f64,
        /// Mean of the second level.
        after: f64,
        /// The step differs from zero at the 95 % level (t test with the pooled residual
        /// variance, n − 2 degrees of freedom).
        significant: bool,
    },
    /// A straight line, above zero from its first interval to its last.
    Line {
        /// Fitted rate at the first interval.
        first: f64,
        /// Fitted rate at the last interval.
        last: f64,
        /// Share of the variance the line explains.
        r_squared: f64,
        /// The slope differs from zero at the 95 % level.
        significant: bool,
    },
    /// Neither fits: the means of the two parts the best step would split it into.
    Uneven {
        /// Intervals of the first part.
        seconds_before: usize,
        /// Intervals of the second part.
        seconds_after: usize,
        /// Mean of the first part.
        before: f64,
        /// Mean of the second part.
        after: f64,
        /// Lowest interval.
        lowest: f64,
        /// Highest interval.
        highest: f64,
    },
    /// Too few intervals ([`TREND_MIN_INTERVALS`]), a mean of zero, or no variation at all.
    Flat,
}

/// A straight-line trend through a series of rates.
#[derive(Clone, Debug, PartialEq)]
pub struct Trend {
    /// Change of the fitted line from the first to the last interval, percent of the mean.
    pub change_percent: f64,
    /// The slope differs from zero at the 95 % level.
    pub significant: bool,
    /// Fitted rate at the first interval.
    pub first: f64,
    /// Fitted rate at the last interval.
    pub last: f64,
    /// Share of the variance the line explains (R²): whether a line describes the series at
    /// all.
    pub r_squared: f64,
}

/// Least-squares trend of `samples` (one per interval); `None` below
/// [`TREND_MIN_INTERVALS`] or with a mean of zero.
pub fn trend(samples: &[f64]) -> Option<Trend> {
    let n = samples.len();
    if n < TREND_MIN_INTERVALS {
        return None;
    }
    let mean_y = samples.iter().sum::<f64>() / n as f64;
    if mean_y <= 0.0 {
        return None;
    }
    let mean_x = (n as f64 - 1.0) / 2.0;
    let sxx: f64 = (0..n).map(|i| (i as f64 - mean_x).powi(2)).sum();
    let sxy: f64 = samples
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - mean_x) * (y - mean_y))
        .sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let residual: f64 = samples
        .iter()
        .enumerate()
        .map(|(i, y)| (y - (intercept + slope * i as f64)).powi(2))
        .sum::<f64>()
        / (n as f64 - 2.0);
    let standard_error = (residual / sxx).sqrt();
    let significant = if standard_error == 0.0 {
        slope != 0.0
    } else {
        (slope / standard_error).abs() > student_t_975(n as u32 - 2)
    };
    let first = intercept;
    let last = intercept + slope * (n as f64 - 1.0);
    let total: f64 = samples.iter().map(|y| (y - mean_y).powi(2)).sum();
    let r_squared = if total > 0.0 {
        1.0 - residual * (n as f64 - 2.0) / total
    } else {
        0.0
    };
    Some(Trend {
        change_percent: (last - first) / mean_y * 100.0,
        significant,
        first,
        last,
        r_squared,
    })
}

/// Sum of squared differences from the mean.
fn squares_about_mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    values.iter().map(|v| (v - mean).powi(2)).sum()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// The split (intervals before it) that leaves the least squared error about the two means.
fn best_split(samples: &[f64]) -> (usize, f64) {
    (1..samples.len())
        .map(|split| {
            let (a, b) = samples.split_at(split);
            (split, squares_about_mean(a) + squares_about_mean(b))
        })
        .fold((1, f64::INFINITY), |best, candidate| {
            if candidate.1 < best.1 {
                candidate
            } else {
                best
            }
        })
}

/// The shape of `samples` (one rate per interval).
pub fn shape(samples: &[f64]) -> Shape {
    let n = samples.len();
    if n < TREND_MIN_INTERVALS || mean(samples) <= 0.0 {
        return Shape::Flat;
    }
    let total = squares_about_mean(samples);
    if total <= 0.0 {
        return Shape::Flat;
    }
    let (split, step_error) = best_split(samples);
    let (a, b) = samples.split_at(split);
    let (before, after) = (mean(a), mean(b));
    let step_r_squared = 1.0 - step_error / total;
    let pooled = step_error / (n as f64 - 2.0);
    let step_significant = if pooled <= 0.0 {
        before != after
    } else {
        let standard_error = (pooled * (1.0 / a.len() as f64 + 1.0 / b.len() as f64)).sqrt();
        ((after - before) / standard_error).abs() > student_t_975(n as u32 - 2)
    };
    let line = trend(samples);
    let line_r_squared = line.as_ref().map_or(0.0, |line| line.r_squared);
    let line_fits = line
        .as_ref()
        .is_some_and(|line| line.r_squared >= FIT_R_SQUARED && line.first > 0.0 && line.last > 0.0);
    if step_r_squared >= FIT_R_SQUARED && !(line_fits && line_r_squared > step_r_squared) {
        return Shape::Step {
            seconds_before: a.len(),
            seconds_after: b.len(),
            before,
            after,
            significant: step_significant,
        };
    }
    if let Some(line) = line.filter(|_| line_fits) {
        return Shape::Line {
            first: line.first,
            last: line.last,
            r_squared: line.r_squared,
            significant: line.significant,
        };
    }
    Shape::Uneven {
        seconds_before: a.len(),
        seconds_after: b.len(),
        before,
        after,
        lowest: samples.iter().copied().fold(f64::INFINITY, f64::min),
        highest: samples.iter().copied().fold(0.0, f64::max),
    }
}

/// The change from `from` to `to`, percent of `from`: a fall to zero is −100 %.
pub fn change_percent(from: f64, to: f64) -> f64 {
    if from <= 0.0 {
        return 0.0;
    }
    (to - from) / from * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed, repeatable wobble of ±`amplitude` around zero.
    fn wobble(index: usize, amplitude: f64) -> f64 {
        const PATTERN: [f64; 7] = [0.3, -0.8, 0.5, -0.1, 0.9, -0.6, -0.2];
        PATTERN[index % PATTERN.len()] * amplitude
    }

    #[test]
    fn a_step_is_a_step_at_its_second_with_both_levels() {
        // The token bucket: 119.5 MB/s for 5 s, then about 26 MB/s.
        let rates: Vec<f64> = (0..16)
            .map(|i| if i < 5 { 119.5e6 } else { 26e6 } + wobble(i, 1e6))
            .collect();
        let Shape::Step {
            seconds_before,
            seconds_after,
            before,
            after,
            significant,
        } = shape(&rates)
        else {
            panic!("{:?}", shape(&rates));
        };
        assert_eq!((seconds_before, seconds_after), (5, 11));
        assert!((before - 119.5e6).abs() < 1e6 && (after - 26e6).abs() < 1e6);
        assert!(significant);
        let fall = change_percent(before, after);
        assert!((-100.0..-70.0).contains(&fall), "{fall}");
    }

    #[test]
    fn a_ramp_is_a_line_and_its_fall_is_from_where_it_started() {
        let rates: Vec<f64> = (0..10)
            .map(|i| 100.0 - 3.0 * i as f64 + wobble(i, 0.5))
            .collect();
        let Shape::Line {
            first,
            last,
            r_squared,
            significant,
        } = shape(&rates)
        else {
            panic!("{:?}", shape(&rates));
        };
        assert!(significant && r_squared > 0.95, "{r_squared}");
        assert!((first - 100.0).abs() < 1.0 && (last - 73.0).abs() < 1.0);
        assert!((change_percent(first, last) + 27.0).abs() < 1.5);
    }

    #[test]
    fn noise_fits_neither_and_a_constant_is_flat() {
        let rates: Vec<f64> = (0..12).map(|i| 100.0 + wobble(i, 4.0)).collect();
        assert!(
            matches!(shape(&rates), Shape::Uneven { .. }),
            "{:?}",
            shape(&rates)
        );
        assert_eq!(shape(&[50.0; 8]), Shape::Flat);
        assert_eq!(shape(&[1.0, 2.0, 3.0]), Shape::Flat);
        assert_eq!(shape(&[0.0; 6]), Shape::Flat);
    }

    #[test]
    fn a_plateau_then_a_slide_to_zero_is_never_a_line_through_zero() {
        // Steady, then falling to nothing: a line would end below zero.
        let rates = [
            100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 75.0, 50.0, 25.0, 0.0,
        ];
        match shape(&rates) {
            Shape::Line { last, .. } => panic!("a line to {last}"),
            Shape::Step { before, after, .. } | Shape::Uneven { before, after, .. } => {
                assert!(before > after && after >= 0.0);
                assert!(change_percent(before, after) >= -100.0);
            }
            Shape::Flat => panic!("flat"),
        }
        // A line fitted to a step from 118 to 0 would fall "203 %": a step it is.
        let mut bucket = vec![118.0; 4];
        bucket.extend([0.0; 12]);
        assert!(
            matches!(shape(&bucket), Shape::Step { .. }),
            "{:?}",
            shape(&bucket)
        );
    }
}
