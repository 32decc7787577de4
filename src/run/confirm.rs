//! `iopath run --confirm`: after the tests have run and been analysed, each test runs again
//! briefly with the limit its verdict names moved (a deeper queue, more workers, larger
//! blocks), and the change of rate is stored as the verdict's confirmation.
//!
//! Every experiment is a variant of a test that passed the checks: same jobs, same targets,
//! same read and write mix, so the same write permission. Each variant is checked like a
//! test before any I/O (`ExperimentChecks::plan`: region, alignment, queue-depth limits,
//! memory and threads), and runs on the run's open target handles, never on a new lookup of a
//! path. A stop request ends an experiment like a test; the experiments left are not run.
//! Which experiment fits which verdict, and what its change means, is decided in
//! [`crate::analysis::confirmation`].
//!
//! `--confirm` runs every experiment ([`ConfirmMode::Every`]). Any other run without
//! `--no-confirm` tests the verdicts that rest on the fallback (latency-bound: a full queue
//! and nothing seen to limit) within the same time bound as the default suite
//! ([`ConfirmMode::FallbackWithinTestTime`]). The default suite confirms
//! its verdicts unasked, within a time bound ([`ConfirmMode::WithinTestTime`] at
//! [`DEFAULT_SUITE_PERCENT`]): the experiments may take as long as its tests took, so that
//! the suite takes at most about twice its time. An experiment runs only when the time the
//! experiments have taken so far, plus its own ramp and measured time, plus the most any
//! test or experiment took beyond its own (starting and stopping workers, draining the
//! queue), still fits ([`fits`]); the others are recorded as left out, and `--confirm` runs
//! them all.

use super::descriptors::{RESERVED_DESCRIPTORS, make_room_for, opened_by_workers};
pub use super::prepare::{ConfirmMode, DEFAULT_SUITE_PERCENT};
use super::prepare::{PendingTarget, check_budget, check_job_against_target};
use super::shape::TestShape;
use super::test_runner::{PreparedTarget, TestContext, run_test};
use super::{RunObserver, RunOptions};
use crate::analysis::HostFacts;
use crate::analysis::confirmation::{ExperimentSetting, confirmation, experiment_for, not_run};
use crate::analysis::verdict::analyse_test;
use crate::engine::StopSignal;
use crate::host::clock::Clock;
use crate::result::{Experiment, RunLength, RunResult, TestResult};
use crate::targets::safety::WritePolicy;
use crate::workload::TestPlan;
use std::time::Instant;

use super::budget::HostLimits;

/// Whether an experiment of `planned_ns` (ramp and measured time) fits when the experiments
/// have taken `spent_ns` of `allowed_ns`, and a test or experiment has taken up to
/// `overhead_ns` beyond its own ramp and measured time.
///
/// ```
/// use iopath::run::confirm::fits;
/// assert!(fits(4_000, 3_000, 500, 8_000));
/// assert!(!fits(4_000, 3_000, 1_500, 8_000));
/// ```
pub fn fits(spent_ns: u64, planned_ns: u64, overhead_ns: u64, allowed_ns: u64) -> bool {
    spent_ns
        .checked_add(planned_ns)
        .and_then(|total| total.checked_add(overhead_ns))
        .is_some_and(|total| total <= allowed_ns)
}

/// The time the experiments of a [`ConfirmMode::WithinTestTime`] run may take, and what they
/// have taken.
struct TimeBound {
    percent: u32,
    tests_wall_ns: u64,
    allowed_ns: u64,
    overhead_ns: u64,
    started: Instant,
}

impl TimeBound {
    /// The bound of `mode` for tests that took `tests_wall_ns` for `planned_ns` of ramps and
    /// measured time; `None` when every experiment runs.
    fn new(mode: ConfirmMode, tests_wall_ns: u64, planned_ns: u64, tests: usize) -> Option<Self> {
        let (ConfirmMode::WithinTestTime { percent }
        | ConfirmMode::FallbackWithinTestTime { percent }) = mode
        else {
            return None;
        };
        let beyond = tests_wall_ns.saturating_sub(planned_ns);
        Some(TimeBound {
            percent,
            tests_wall_ns,
            allowed_ns: (tests_wall_ns as u128 * u128::from(percent) / 100) as u64,
            overhead_ns: beyond / tests.max(1) as u64,
            started: Instant::now(),
        })
    }

    fn spent_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    /// Whether an experiment of `planned_ns` still fits.
    fn admits(&self, planned_ns: u64) -> bool {
        fits(
            self.spent_ns(),
            planned_ns,
            self.overhead_ns,
            self.allowed_ns,
        )
    }

    /// Counts an experiment that took `took_ns` for `planned_ns`.
    fn ran(&mut self, planned_ns: u64, took_ns: u64) {
        self.overhead_ns = self.overhead_ns.max(took_ns.saturating_sub(planned_ns));
    }

    /// Why an experiment was left out.
    fn reason(&self) -> String {
        format!(
            "left out: experiments run unasked take at most {} % of the {:.1} s the tests \
             took; --confirm runs every one",
            self.percent,
            self.tests_wall_ns as f64 / 1e9
        )
    }
}

/// Longest measured time of an experiment, ns (a third of the test's when that is shorter).
pub const EXPERIMENT_NS: u64 = 3_000_000_000;

/// Longest ramp of an experiment, ns (the test's own ramp when that is shorter).
pub const EXPERIMENT_RAMP_NS: u64 = 1_000_000_000;

/// The experiments a test may need, and ones that failed their checks.
const EXPERIMENTS: [Experiment; 4] = [
    Experiment::QueueDepth,
    Experiment::Workers,
    Experiment::BlockSize,
    Experiment::Direct,
];

/// One experiment of a test, as checked before any I/O.
#[derive(Debug)]
pub struct PlannedExperiment {
    /// The limit it moves.
    pub experiment: Experiment,
    /// The variant of the test and its job shapes, or why the checks refused it.
    pub checked: Result<(TestPlan, Vec<TestShape>), String>,
}

/// What the checks of an experiment need: the same as the test's.
pub(super) struct ExperimentChecks<'a> {
    pub(super) targets: &'a [PendingTarget],
    pub(super) policy: WritePolicy,
    pub(super) host: &'a HostLimits,
    pub(super) io_uring: &'a Result<(), std::io::Error>,
    /// The descriptors the run's targets hold throughout (`looked_targets::held_by_targets`): an
    /// experiment's workers open theirs beside them, once the test's have been closed.
    pub(super) held_by_targets: u64,
}

impl ExperimentChecks<'_> {
    /// Every experiment of `test`, checked as a test is.
    pub(super) fn plan(&self, test: &TestPlan) -> Vec<PlannedExperiment> {
        EXPERIMENTS
            .iter()
            .map(|&experiment| PlannedExperiment {
                experiment,
                checked: self.check(variant(test, experiment)),
            })
            .collect()
    }

    fn check(&self, test: TestPlan) -> Result<(TestPlan, Vec<TestShape>), String> {
        for job in &test.jobs {
            for &index in &job.targets {
                check_job_against_target(job, &self.targets[index], self.policy)
                    .map_err(|error| error.to_string())?;
            }
        }
        let mut shapes: Vec<TestShape> = test
            .jobs
            .iter()
            .map(|job| TestShape::of(job, self.io_uring.as_ref().err()))
            .collect();
        check_budget(&test, &mut shapes, self.targets, self.host)
            .map_err(|error| error.to_string())?;
        // Twice the workers (or the queue depth of a synchronous engine) open each file once
        // more: checked now, so that an experiment that cannot open its files is left out
        // before any I/O rather than failing half-way through opening them.
        let workers = opened_by_workers(&test, self.io_uring.as_ref().err());
        make_room_for(RESERVED_DESCRIPTORS + self.held_by_targets + workers)
            .map_err(|error| error.to_string())?;
        Ok((test, shapes))
    }
}

/// `test` with `experiment`'s limit moved in every job; its length is set when it runs
/// (`timed`). No start delay, byte limit, steady-state end or cache drop: only the limit
/// differs from the test.
pub fn variant(test: &TestPlan, experiment: Experiment) -> TestPlan {
    let mut variant = test.clone();
    variant.settings.steady = None;
    variant.settings.drop_caches_before = false;
    for job in &mut variant.jobs {
        let workload = &mut job.workload;
        match experiment {
            Experiment::QueueDepth => workload.queue_depth = workload.queue_depth.saturating_mul(2),
            Experiment::Workers => workload.workers = workload.workers.saturating_mul(2),
            Experiment::BlockSize => {
                for line in &mut workload.access.lines {
                    line.size_bytes = line.size_bytes.saturating_mul(4);
                    line.alignment_bytes = line.alignment_bytes.saturating_mul(4);
                }
            }
            Experiment::Direct => workload.buffered = false,
        }
        workload.start_delay_ns = 0;
        workload.io_limit = None;
    }
    variant
}

/// The setting an experiment moves, in the first job of `test` and of `variant`.
fn setting_of(test: &TestPlan, variant: &TestPlan, experiment: Experiment) -> (u64, u64) {
    let value = |plan: &TestPlan| {
        plan.jobs.first().map_or(0, |job| match experiment {
            Experiment::QueueDepth | Experiment::Direct => u64::from(job.workload.queue_depth),
            Experiment::Workers => u64::from(job.workload.workers),
            Experiment::BlockSize => job.workload.access.max_size_bytes(),
        })
    };
    (value(test), value(variant))
}

/// Ramp and measured time of an experiment on a test that ramped `test_ramp_ns` and measured
/// `measured_ns`: a third of the test, at most [`EXPERIMENT_NS`] and at least a second (or
/// the whole test when shorter), after a ramp of at most [`EXPERIMENT_RAMP_NS`].
pub fn timing(test_ramp_ns: u64, measured_ns: u64) -> (u64, u64) {
    let shortest = measured_ns.min(1_000_000_000);
    let duration = (measured_ns / 3).clamp(shortest, EXPERIMENT_NS);
    (test_ramp_ns.min(EXPERIMENT_RAMP_NS), duration.max(1))
}

/// `variant` running for `duration_ns` after `ramp_ns`, named after its test.
fn timed(mut variant: TestPlan, setting: &ExperimentSetting, duration_ns: u64) -> TestPlan {
    variant.name = format!("{} [confirm: {}]", variant.name, setting.describe());
    for job in &mut variant.jobs {
        job.workload.ramp_ns = setting.ramp_ns;
        job.workload.length = RunLength::Time { duration_ns };
    }
    variant
}

/// What the experiments run with: the run's clock, stop signal, options and targets, and the
/// wall time its tests took.
pub(super) struct ConfirmContext<'a> {
    pub(super) clock: &'a Clock,
    pub(super) stop: &'a StopSignal,
    pub(super) options: &'a RunOptions,
    pub(super) interval_ns: u64,
    pub(super) targets: &'a [PreparedTarget],
    pub(super) tests_wall_ns: u64,
}

/// Runs the experiment of every test of the analysed `result` whose verdict has one (within
/// the time bound of the options' [`ConfirmMode`]) and stores its confirmation in the test's
/// analysis; an experiment's own verdict is judged on the host `facts` the result was
/// analysed with. `plans[i]` and `experiments[i]` belong to `result.tests[i]`. Stops at a
/// stop request. Returns how many experiments the time bound left out.
pub(super) fn confirm_tests(
    result: &mut RunResult,
    plans: &[TestPlan],
    experiments: &[Vec<PlannedExperiment>],
    context: &ConfirmContext<'_>,
    observer: &mut dyn RunObserver,
    facts: &HostFacts,
) -> usize {
    let planned_tests_ns = result
        .tests
        .iter()
        .zip(plans)
        .map(|(test, plan)| plan_ramp(plan).saturating_add(test.measured_ns))
        .fold(0u64, u64::saturating_add);
    let mut bound = TimeBound::new(
        context.options.confirm,
        context.tests_wall_ns,
        planned_tests_ns,
        result.tests.len(),
    );
    let mut left_out = 0;
    for index in 0..result.tests.len() {
        if context.stop.is_raised() {
            break;
        }
        let (Some(plan), Some(planned)) = (plans.get(index), experiments.get(index)) else {
            break;
        };
        let tested = &result.tests[index];
        let Some(experiment) = experiment_for(tested) else {
            continue;
        };
        if !tested
            .analysis
            .as_ref()
            .is_some_and(|analysis| context.options.confirm.tests(analysis.verdict))
        {
            continue;
        }
        let Some(planned) = planned.iter().find(|p| p.experiment == experiment) else {
            continue;
        };
        let (ramp_ns, duration_ns) = timing(plan_ramp(plan), tested.measured_ns);
        let after = variant(plan, experiment);
        let (before, after) = setting_of(plan, &after, experiment);
        let setting = ExperimentSetting {
            experiment,
            before,
            after,
            ramp_ns,
        };
        let planned_ns = ramp_ns.saturating_add(duration_ns);
        let found = match &planned.checked {
            Err(reason) => not_run(tested, setting, reason),
            Ok(_)
                if bound
                    .as_ref()
                    .is_some_and(|bound| !bound.admits(planned_ns)) =>
            {
                left_out += 1;
                let reason = bound.as_ref().map(TimeBound::reason).unwrap_or_default();
                not_run(tested, setting, &reason)
            }
            Ok((variant, shapes)) => {
                let variant = timed(variant.clone(), &setting, duration_ns);
                let started = Instant::now();
                let run = run_experiment(&variant, shapes, context, observer);
                if let Some(bound) = bound.as_mut() {
                    bound.ran(planned_ns, started.elapsed().as_nanos() as u64);
                }
                observer.experiment_finished();
                match run {
                    Ok(run) => {
                        let verdict =
                            analyse_test(&run, &result.targets, &result.paths, facts).verdict;
                        confirmation(tested, setting, &run, verdict)
                    }
                    Err(reason) => not_run(tested, setting, &reason),
                }
            }
        };
        if let Some(analysis) = result.tests[index].analysis.as_mut() {
            analysis.confirmation = Some(found);
        }
    }
    left_out
}

/// The longest ramp of the test's jobs, ns.
fn plan_ramp(plan: &TestPlan) -> u64 {
    plan.jobs
        .iter()
        .map(|job| job.workload.ramp_ns)
        .max()
        .unwrap_or(0)
}

fn run_experiment(
    variant: &TestPlan,
    shapes: &[TestShape],
    context: &ConfirmContext<'_>,
    observer: &mut dyn RunObserver,
) -> Result<TestResult, String> {
    observer.test_starting(variant, shapes);
    let mut live = |sample: &super::progress::LiveSample| observer.live(sample);
    let outcome = run_test(
        variant,
        shapes,
        context.targets,
        TestContext {
            clock: context.clock,
            stop: context.stop,
            interval_ns: context.interval_ns,
            net_timeout: context.options.net_timeout(),
            null_delay: context.options.null_delay,
            trace: false,
            stamp_writes: context.options.stamp_writes,
            // Experiments repeat a test's I/O to see what limits it; their blocks are not kept.
            verify_run_id: 0,
            observer: &mut live,
            rendezvous: &mut super::rendezvous::Alone,
        },
    );
    match outcome {
        Ok(Some(run)) => Ok(run.result),
        Ok(None) => Err("interrupted".into()),
        Err(error) => Err(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::BlockSizeMix;
    use crate::workload::suite::base_workload;

    #[test]
    fn an_experiment_lasts_a_third_of_its_test_within_one_and_three_seconds() {
        const S: u64 = 1_000_000_000;
        assert_eq!(timing(2 * S, 60 * S), (S, 3 * S));
        assert_eq!(timing(0, 6 * S), (0, 2 * S));
        assert_eq!(timing(S / 2, 2 * S), (S / 2, S));
        assert_eq!(timing(0, S / 2), (0, S / 2));
    }

    #[test]
    fn an_experiment_fits_with_the_overhead_seen() {
        const S: u64 = 1_000_000_000;
        assert!(fits(0, 3 * S, 0, 3 * S));
        assert!(!fits(S, 3 * S, 1, 4 * S));
        assert!(fits(u64::MAX, 0, 0, u64::MAX));
        assert!(!fits(u64::MAX, 1, 0, u64::MAX));
        // Seven tests of 6 s that took 43.4 s: 200 ms each beyond their ramp and measure.
        let bound = TimeBound::new(
            ConfirmMode::WithinTestTime { percent: 100 },
            43_400_000_000,
            42 * S,
            7,
        )
        .unwrap();
        assert_eq!(
            (bound.allowed_ns, bound.overhead_ns),
            (43_400_000_000, S / 5)
        );
        assert!(bound.reason().contains("100 % of the 43.4 s"));
        assert!(TimeBound::new(ConfirmMode::Every, S, S, 1).is_none());
    }

    struct Quiet;
    impl RunObserver for Quiet {}

    /// A plan of null-engine 4 KiB random-read tests named `names`, each `duration_ns` long
    /// without ramp, on a 1 MiB file in `directory`.
    fn null_plan(
        directory: &std::path::Path,
        names: &[&str],
        duration_ns: u64,
    ) -> crate::workload::Plan {
        let mut workload = base_workload();
        workload.set_simple(&BlockSizeMix::single(4096), 100, 100, 4096);
        workload.engine = crate::result::EngineKind::Null;
        workload.ramp_ns = 0;
        workload.length = RunLength::Time { duration_ns };
        crate::workload::Plan {
            targets: vec![crate::targets::TargetSpec::Path {
                path: directory.join("f.dat"),
                create_size: Some(1 << 20),
            }],
            tests: names
                .iter()
                .map(|name| TestPlan::single(*name, workload.clone(), vec![0]))
                .collect(),
        }
    }

    /// Two null-engine tests confirmed within their own time: both experiments run, and take
    /// less than the tests; with no time for experiments, both are recorded as left out,
    /// naming --confirm.
    #[test]
    fn the_time_bound_decides_which_experiments_run() {
        use crate::analysis::{Analyser, DeclaredPath};
        use crate::engine::StopSignal;
        use crate::result::ConfirmationOutcome;
        use crate::run::{RunOptions, execute_and_confirm, prepare};

        let directory = tempfile::tempdir().unwrap();
        let run = |percent: u32| {
            // Experiments of 1 s (a third of the test, at least 1 s): 2 s of 3 s.
            let plan = null_plan(directory.path(), &["a", "b"], 1_500_000_000);
            let options = RunOptions {
                confirm: ConfirmMode::WithinTestTime { percent },
                ..RunOptions::default()
            };
            let prepared = prepare(plan, options, false).unwrap();
            let started = Instant::now();
            let analyser = Analyser::this_host(DeclaredPath::default());
            let executed =
                execute_and_confirm(prepared, &StopSignal::new(), &mut Quiet, &analyser).unwrap();
            // The experiments read the run's one analysis: the result is analysed once.
            assert_eq!(analyser.analyses(), 1);
            (executed, started.elapsed())
        };
        let (none, _) = run(0);
        assert_eq!(none.confirmations_left_out, 2);
        for test in &none.result.tests {
            let confirmation = test.analysis.as_ref().unwrap().confirmation.as_ref();
            let confirmation = confirmation.expect("a left-out experiment is recorded");
            assert_eq!(confirmation.measured_ns, 0);
            assert_eq!(confirmation.outcome, ConfirmationOutcome::Inconclusive);
            assert!(
                confirmation.summary.contains("--confirm"),
                "{}",
                confirmation.summary
            );
        }
        let (all, took) = run(100);
        assert_eq!(all.confirmations_left_out, 0);
        let tests_ns: u64 = all.result.tests.iter().map(|test| test.measured_ns).sum();
        let mut experiments_ns = 0;
        for test in &all.result.tests {
            let confirmation = test.analysis.as_ref().unwrap().confirmation.as_ref();
            let confirmation = confirmation.expect("confirmed");
            assert!(confirmation.measured_ns > 0, "{confirmation:?}");
            experiments_ns += confirmation.ramp_ns + confirmation.measured_ns;
        }
        assert!(experiments_ns <= tests_ns, "{experiments_ns} > {tests_ns}");
        assert!(took.as_nanos() as u64 > tests_ns + experiments_ns);
    }

    #[test]
    fn a_run_that_confirms_nothing_is_analysed_once_too() {
        use crate::analysis::{Analyser, DeclaredPath};
        use crate::engine::StopSignal;
        use crate::run::{RunOptions, execute_together, prepare, rendezvous::Alone};

        let directory = tempfile::tempdir().unwrap();
        let plan = null_plan(directory.path(), &["a"], 200_000_000);
        let options = RunOptions {
            confirm: ConfirmMode::Off,
            ..RunOptions::default()
        };
        let prepared = prepare(plan, options, false).unwrap();
        let analyser = Analyser::this_host(DeclaredPath::default());
        let executed = execute_together(
            prepared,
            &StopSignal::new(),
            &mut Quiet,
            &mut Alone,
            &analyser,
        )
        .unwrap();
        assert_eq!(analyser.analyses(), 1);
        assert_eq!(executed.result.paths.len(), 1);
        let analysis = executed.result.tests[0]
            .analysis
            .as_ref()
            .expect("analysed");
        assert!(analysis.confirmation.is_none());
    }

    #[test]
    fn a_variant_moves_only_its_limit() {
        let mut workload = base_workload();
        workload.set_simple(&BlockSizeMix::single(4096), 70, 100, 4096);
        workload.queue_depth = 4;
        workload.workers = 2;
        workload.start_delay_ns = 5;
        let test = TestPlan::single("t", workload, vec![0]);
        let deeper = variant(&test, Experiment::QueueDepth);
        assert_eq!(setting_of(&test, &deeper, Experiment::QueueDepth), (4, 8));
        let wider = variant(&test, Experiment::Workers);
        assert_eq!(setting_of(&test, &wider, Experiment::Workers), (2, 4));
        let larger = variant(&test, Experiment::BlockSize);
        assert_eq!(
            setting_of(&test, &larger, Experiment::BlockSize),
            (4096, 16384)
        );
        for changed in [deeper, wider, larger] {
            let (a, b) = (&test.jobs[0].workload, &changed.jobs[0].workload);
            assert_eq!(a.access.read_percent(), b.access.read_percent());
            assert_eq!(a.writes(), b.writes());
            assert_eq!(b.start_delay_ns, 0);
            assert_eq!(changed.jobs[0].targets, test.jobs[0].targets);
        }
    }
}
