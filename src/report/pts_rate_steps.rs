//! The rate steps of a PTS run — write saturation's over its rounds, and any element's within
//! its own per-second series — in words (`write cliff after 24.1 MB written: 8.0 → 2.0 MB/s`)
//! and as the rows of `pts-rate-steps.csv`. Formatting only: the steps were found when the
//! rounds ran (`crate::pts::rate_steps`).
//!
//! ```
//! use iopath::report::pts_rate_steps::step_words;
//! use iopath::result::{RateStep, WriteCliff};
//! let cliff = WriteCliff {
//!     bytes_before: 24.1e6, seconds_before: 3.0, before_bytes_per_second: 8e6,
//!     after_bytes_per_second: 2e6, before_iops: 1953.0, after_iops: 488.0,
//!     stayed_low_after_idle: false,
//! };
//! assert_eq!(
//!     step_words(&RateStep::WriteCliff(cliff)),
//!     "write cliff after 24.1 MB written: 8.0 → 2.0 MB/s (1953 → 488 IOPS)"
//! );
//! ```

use crate::result::pts::{PtsCell, PtsResult, PtsStepBeforeSteady, PtsTestKind, element_name};
use crate::result::{BurstBucket, RateStep, WriteCliff};
use crate::units::format_decimal_bytes;

/// Bytes written before the step: a cliff's own figure, a bucket's burst rate × its time.
pub fn bytes_before(step: &RateStep) -> f64 {
    match step {
        RateStep::WriteCliff(cliff) => cliff.bytes_before,
        RateStep::BurstBucket(bucket) => bucket.burst_bytes_per_second * bucket.burst_seconds,
    }
}

/// The two levels of a step: (bytes per second before, after, IOPS before, after).
pub fn levels(step: &RateStep) -> (f64, f64, f64, f64) {
    match step {
        RateStep::WriteCliff(WriteCliff {
            before_bytes_per_second,
            after_bytes_per_second,
            before_iops,
            after_iops,
            ..
        }) => (
            *before_bytes_per_second,
            *after_bytes_per_second,
            *before_iops,
            *after_iops,
        ),
        RateStep::BurstBucket(BurstBucket {
            burst_bytes_per_second,
            baseline_bytes_per_second,
            burst_iops,
            baseline_iops,
            ..
        }) => (
            *burst_bytes_per_second,
            *baseline_bytes_per_second,
            *burst_iops,
            *baseline_iops,
        ),
    }
}

/// The rates on both sides of a step: `8.0 → 2.0 MB/s (1953 → 488 IOPS)`.
fn rates_words(step: &RateStep) -> String {
    let (before, after, before_iops, after_iops) = levels(step);
    format!(
        "{:.1} → {:.1} MB/s ({before_iops:.0} → {after_iops:.0} IOPS)",
        before / 1e6,
        after / 1e6
    )
}

/// A step in words: where it came and the rates on both sides.
pub fn step_words(step: &RateStep) -> String {
    let rates = rates_words(step);
    match step {
        RateStep::WriteCliff(cliff) => format!(
            "write cliff after {} written: {rates}",
            format_decimal_bytes(cliff.bytes_before)
        ),
        RateStep::BurstBucket(bucket) => format!(
            "burst bucket of {} spent above the baseline in {:.1} s: {rates}",
            format_decimal_bytes(bucket.bucket_bytes),
            bucket.burst_seconds
        ),
    }
}

/// What a steady state found after a step down is: the level after it, not the rate the
/// target gave before (`It is the level after a step down: …`).
pub fn steady_after_step_words(found: &PtsStepBeforeSteady) -> String {
    let cause = match found.step {
        RateStep::BurstBucket(_) => {
            "a burst bucket that ran dry (a write cache does not slow reads)"
        }
        RateStep::WriteCliff(_) => {
            "a write cliff, or a burst bucket that ran dry: rounds with no idle time between them do not tell them apart"
        }
    };
    format!(
        "It is the level after a step down, not the rate the target gave before it: {} stepped \
         down after round {}, {} — {cause}.",
        found.variable,
        found.rounds_before.round(),
        rates_words(&found.step)
    )
}

/// One step of a run: which test, and which round and element (none: over the test's rounds).
pub struct StepRow<'a> {
    /// The test.
    pub test: PtsTestKind,
    /// The round and the element's name, for a step within one element.
    pub element: Option<(u32, String)>,
    /// The step.
    pub step: &'a RateStep,
}

impl StepRow<'_> {
    /// `Write Saturation` or `IOPS round 3, 4KiB 0/100 random`.
    pub fn place(&self) -> String {
        match &self.element {
            None => format!("{} over its rounds", self.test.title()),
            Some((round, name)) => format!("{} round {round}, {name}", self.test.title()),
        }
    }
}

/// Every step of `result`: each test's over its rounds, then each element's, in order.
pub fn step_rows(result: &PtsResult) -> Vec<StepRow<'_>> {
    let mut rows = Vec::new();
    for test in &result.tests {
        if let Some(step) = &test.rate_step {
            rows.push(StepRow {
                test: test.kind,
                element: None,
                step,
            });
        }
        for round in &test.rounds {
            for cell in &round.cells {
                if let Some(step) = &cell.rate_step {
                    rows.push(StepRow {
                        test: test.kind,
                        element: Some((round.number, cell_name(cell))),
                        step,
                    });
                }
            }
        }
    }
    rows
}

fn cell_name(cell: &PtsCell) -> String {
    element_name(cell.block_size_bytes, cell.read_percent, cell.random)
}

/// `pts-rate-steps.csv`: one row per step, or `None` when the run has none.
pub fn steps_csv(result: &PtsResult) -> Option<String> {
    let rows = step_rows(result);
    if rows.is_empty() {
        return None;
    }
    let mut csv = String::from(
        "test,round,element,step,bytes_before,seconds_before,before_mb_per_s,after_mb_per_s,before_iops,after_iops\n",
    );
    for row in rows {
        let (before, after, before_iops, after_iops) = levels(row.step);
        let seconds = match row.step {
            RateStep::WriteCliff(cliff) => cliff.seconds_before,
            RateStep::BurstBucket(bucket) => bucket.burst_seconds,
        };
        let (round, element) = match &row.element {
            None => (String::new(), String::new()),
            Some((round, name)) => (round.to_string(), name.clone()),
        };
        csv.push_str(&format!(
            "{},{round},{element},{},{:.0},{seconds:.3},{:.3},{:.3},{before_iops:.1},{after_iops:.1}\n",
            row.test.name(),
            row.step.name(),
            bytes_before(row.step),
            before / 1e6,
            after / 1e6,
        ));
    }
    Some(csv)
}
