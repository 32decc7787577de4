//! Write saturation's rate over its rounds, looked at for one step down: a write cliff (a
//! write cache that filled, after so many bytes) or a burst bucket, by the same detectors as a
//! run's per-second series ([`crate::analysis::bucket_or_cliff`]). Each round is one interval
//! of the series: its bytes over the round's measured time, and its IOPS. Rounds follow each
//! other with no idle time worth the name (the runner's start of the next round), so a step
//! in this series is called a write cliff unless the rate came back.
//!
//! ```
//! use iopath::pts::rate_steps::rounds_rates;
//! use iopath::result::pts::PtsCell;
//! let cell = |bytes: u64| PtsCell {
//!     block_size_bytes: 4096, read_percent: 0, random: true, iops: bytes as f64 / 4096.0,
//!     read_bytes_per_second: 0.0, write_bytes_per_second: bytes as f64,
//!     mean_latency_ns: 0.0, p99_latency_ns: 0, p9999_latency_ns: 0, max_latency_ns: 0,
//!     bytes, rate_step: None,
//! };
//! let rates = rounds_rates(&[vec![cell(8_000_000)], vec![cell(2_000_000)]], 1_000_000_000);
//! assert_eq!(rates.bytes_per_second, [8e6, 2e6]);
//! ```

use super::plan::tracked_cells;
use crate::analysis::bucket_or_cliff::classify;
use crate::analysis::rate_step::IntervalRates;
use crate::result::RateStep;
use crate::result::pts::{PtsCell, PtsOutcome, PtsStepBeforeSteady, PtsTestKind, PtsTestResult};

/// The series of rounds whose cells are `rounds`, each measured for `element_ns`: bytes per
/// second (all the round's bytes over its time) and IOPS (summed over its elements).
pub fn rounds_rates(rounds: &[Vec<PtsCell>], element_ns: u64) -> IntervalRates {
    let seconds = element_ns as f64 / 1e9;
    IntervalRates {
        interval_seconds: seconds,
        bytes_per_second: rounds
            .iter()
            .map(|cells| cells.iter().map(|cell| cell.bytes as f64).sum::<f64>() / seconds)
            .collect(),
        iops: rounds
            .iter()
            .map(|cells| cells.iter().map(|cell| cell.iops).sum())
            .collect(),
    }
}

/// The step of `test`'s rate over its rounds (each element measured for `element_ns`): write
/// saturation only, whose rounds are one element of writes each.
pub fn rounds_step(test: &PtsTestResult, element_ns: u64) -> Option<RateStep> {
    if test.kind != PtsTestKind::Saturation || element_ns == 0 {
        return None;
    }
    let rounds: Vec<Vec<PtsCell>> = test.rounds.iter().map(|r| r.cells.clone()).collect();
    classify(&rounds_rates(&rounds, element_ns), true)
}

/// When `test` reached steady state after a step down of a tracking variable: that step,
/// found in the rounds of the variable's element (each round one interval of the element's
/// `element_ns`, its bytes and I/Os the element's own) and ended before the window that
/// held. A write-only element's step is called a write cliff, a reading one's a burst bucket,
/// as `iopath run` calls a step with no idle time to tell them apart.
pub fn step_before_steady(test: &PtsTestResult, element_ns: u64) -> Option<PtsStepBeforeSteady> {
    if test.outcome != PtsOutcome::Steady || element_ns == 0 {
        return None;
    }
    let element_seconds = element_ns as f64 / 1e9;
    test.windows
        .iter()
        .enumerate()
        .find_map(|(variable, window)| {
            let rounds: Vec<Vec<PtsCell>> = test
                .rounds
                .iter()
                .map(|round| {
                    let cells = tracked_cells(test.kind, &round.cells);
                    cells
                        .get(variable)
                        .copied()
                        .flatten()
                        .cloned()
                        .map(|cell| vec![cell])
                })
                .collect::<Option<_>>()?;
            let writes_only = rounds.first()?.first()?.read_percent == 0;
            let step = classify(&rounds_rates(&rounds, element_ns), writes_only)?;
            let seconds_before = match &step {
                RateStep::BurstBucket(bucket) => bucket.burst_seconds,
                RateStep::WriteCliff(cliff) => cliff.seconds_before,
            };
            let rounds_before = seconds_before / element_seconds;
            (rounds_before.round() < f64::from(window.first_round)).then(|| PtsStepBeforeSteady {
                variable: window.variable.clone(),
                rounds_before,
                step,
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::pts::{PtsOutcome, PtsRound};

    fn saturation(megabytes: &[f64]) -> PtsTestResult {
        let rounds = megabytes
            .iter()
            .enumerate()
            .map(|(index, mb)| {
                let bytes = (mb * 1e6) as u64;
                PtsRound {
                    number: index as u32 + 1,
                    cells: vec![PtsCell {
                        block_size_bytes: 4096,
                        read_percent: 0,
                        random: true,
                        iops: bytes as f64 / 4096.0 * 2.0,
                        read_bytes_per_second: 0.0,
                        write_bytes_per_second: bytes as f64 * 2.0,
                        mean_latency_ns: 1e5,
                        p99_latency_ns: 0,
                        p9999_latency_ns: 0,
                        max_latency_ns: 0,
                        bytes,
                        rate_step: None,
                    }],
                    tracked: vec![bytes as f64 / 4096.0 * 2.0],
                }
            })
            .collect();
        PtsTestResult {
            kind: PtsTestKind::Saturation,
            purged: true,
            preconditioned: false,
            rounds,
            tracking: vec!["4KiB random write IOPS".into()],
            outcome: PtsOutcome::Saturated,
            windows: Vec::new(),
            rate_step: None,
            steady_after_step: None,
        }
    }

    #[test]
    fn a_cliff_in_the_rounds_is_found_at_the_bytes_written_before_it() {
        // Half-second rounds: 4 MB each (8 MB/s) for three rounds and a quarter, then 1 MB.
        let test = saturation(&[4.0, 4.0, 4.0, 1.75, 1.0, 1.0, 1.0, 1.0]);
        let Some(RateStep::WriteCliff(cliff)) = rounds_step(&test, 500_000_000) else {
            panic!("a write cliff");
        };
        assert!((cliff.bytes_before - 13e6).abs() < 1e3, "{cliff:?}");
        assert!((cliff.before_bytes_per_second - 8e6).abs() < 1.0);
        assert!((cliff.after_bytes_per_second - 2e6).abs() < 1.0);
        assert!((cliff.seconds_before - 1.625).abs() < 1e-9);
    }

    #[test]
    fn a_flat_saturation_and_the_other_tests_have_no_step() {
        let flat = saturation(&[4.0, 4.1, 3.9, 4.0, 4.0, 4.05]);
        assert_eq!(rounds_step(&flat, 500_000_000), None);
        let mut iops = saturation(&[4.0, 4.0, 4.0, 1.0, 1.0, 1.0]);
        iops.kind = PtsTestKind::Iops;
        assert_eq!(rounds_step(&iops, 500_000_000), None);
    }

    /// An IOPS test (its 4 KiB random write element alone) at `megabytes` a round, judged
    /// as the runner judges it: steady when its last window holds.
    fn iops_test(megabytes: &[f64]) -> PtsTestResult {
        let mut test = saturation(megabytes);
        test.kind = PtsTestKind::Iops;
        let tracked: Vec<f64> = test.rounds.iter().map(|round| round.tracked[0]).collect();
        test.windows = vec![crate::pts::steady_rule::last_window(
            &test.tracking[0],
            &tracked,
        )];
        test.outcome = if test.windows[0].holds() {
            PtsOutcome::Steady
        } else {
            PtsOutcome::NotSteady
        };
        test
    }

    #[test]
    fn a_steady_state_after_a_step_down_is_the_level_after_it() {
        // Three rounds at 4 MB, then 1.3 MB: the window of rounds 4–8 holds at the baseline.
        let test = iops_test(&[4.0, 4.0, 4.0, 1.3, 1.3, 1.3, 1.3, 1.3]);
        assert_eq!(test.outcome, PtsOutcome::Steady);
        assert_eq!(test.windows[0].first_round, 4);
        let found = step_before_steady(&test, 500_000_000).expect("a step before the window");
        assert!((found.rounds_before - 3.0).abs() < 1e-9, "{found:?}");
        assert_eq!(found.variable, "4KiB random write IOPS");
        let RateStep::WriteCliff(cliff) = found.step else {
            panic!("a write-only element without idle time steps as a write cliff");
        };
        assert!((cliff.before_bytes_per_second - 8e6).abs() < 1.0);
        assert!((cliff.after_bytes_per_second - 2.6e6).abs() < 1.0);
    }

    #[test]
    fn a_steady_state_with_no_step_before_it_says_nothing_more() {
        let flat = iops_test(&[1.3, 1.32, 1.28, 1.3, 1.31, 1.29, 1.3]);
        assert_eq!(flat.outcome, PtsOutcome::Steady);
        assert_eq!(step_before_steady(&flat, 500_000_000), None);
        // The step is there, but no window held after it: nothing to qualify.
        let short = iops_test(&[4.0, 4.0, 4.0, 1.3, 1.3, 1.3]);
        assert_eq!(short.outcome, PtsOutcome::NotSteady);
        assert_eq!(step_before_steady(&short, 500_000_000), None);
    }
}
