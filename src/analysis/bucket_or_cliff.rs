//! Whether a test's rate stepped down, and whether the step is a burst bucket or a write
//! cliff (docs/steady-state.md, "Burst bucket or write cliff"):
//!
//! - a rate that came back after idle time is a bucket (a full cache stays full);
//! - a step in a test that reads is a bucket (a write cache does not slow reads);
//! - a step in a test that only writes is a cliff, unless the rate came back after idle time:
//!   without idle time a bucket that ran dry and a cache that filled look the same, and the
//!   bytes written before the step are then the figure to keep.
//!
//! The step is looked for in the test's main direction, one interval per point
//! ([`super::rate_step::IntervalRates`]).

use super::burst_bucket::fit_burst_bucket;
use super::rate_step::IntervalRates;
use super::write_cliff::find_write_cliff;
use crate::result::{RateStep, TestResult};

/// The step of a series: `writes_only` when the test wrote and did not read.
pub fn classify(rates: &IntervalRates, writes_only: bool) -> Option<RateStep> {
    let bucket = fit_burst_bucket(rates);
    if writes_only
        && bucket
            .as_ref()
            .is_none_or(|b| b.refill_per_second.is_none())
        && let Some(cliff) = find_write_cliff(rates)
    {
        return Some(RateStep::WriteCliff(cliff));
    }
    bucket.map(RateStep::BurstBucket)
}

/// The step of `test`'s main direction, if its rate stepped down.
pub fn rate_step_of(test: &TestResult) -> Option<RateStep> {
    let direction = test.main_figures();
    if direction.io_count == 0 {
        return None;
    }
    let writes_only = test.write.io_count > 0 && test.read.io_count == 0;
    classify(&IntervalRates::of_series(&direction.series), writes_only)
}

/// The trust note of a step: what it was, and that the mean mixes both levels.
pub fn note(step: &RateStep, steady_after_seconds: Option<f64>) -> String {
    let mut note = match step {
        RateStep::BurstBucket(bucket) => format!(
            "burst bucket: {}; the mean mixes the burst and the baseline, and a longer run measures the baseline",
            super::burst_bucket::describe(bucket)
        ),
        RateStep::WriteCliff(cliff) => format!(
            "write cliff: {}; a write cache filled (or a burst bucket that no idle time in this run could refill ran dry); the mean mixes both sides",
            super::write_cliff::describe(cliff)
        ),
    };
    let step_seconds = match step {
        RateStep::BurstBucket(bucket) => bucket.burst_seconds,
        RateStep::WriteCliff(cliff) => cliff.seconds_before,
    };
    if let Some(steady) = steady_after_seconds
        && steady > step_seconds
    {
        note.push_str(&format!(
            "; the steady state found after {} s (--steady, fio's ss) is the level after the {}, not the rate before it",
            super::short_run::format_seconds(steady.round()),
            step.name()
        ));
    }
    note
}

/// The verdict's evidence of a step.
pub fn evidence(step: &RateStep) -> String {
    match step {
        RateStep::BurstBucket(bucket) => format!(
            "rate-limited by a burst bucket: {}",
            super::burst_bucket::describe(bucket)
        ),
        RateStep::WriteCliff(cliff) => format!(
            "a write cliff: {}; a write cache filled",
            super::write_cliff::describe(cliff)
        ),
    }
}

#[cfg(test)]
mod tests;
