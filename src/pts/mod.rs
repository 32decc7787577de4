//! `iopath pts`: the tests of the SNIA Solid State Storage Performance Test Specification
//! (PTS), Enterprise edition, with the Client edition's differences on request.
//!
//! Each test is run as the specification has it: purge ([`purge`]), workload-independent
//! preconditioning (twice the active range in 128 KiB sequential writes), then rounds — every
//! element of the test's matrix ([`plan`]) measured once per round through the runner, as
//! `iopath run` measures a test — until the steady-state rule ([`steady_rule`]) holds for every
//! tracking variable over the last five rounds, or the most rounds have run. Write saturation
//! has no rule: it runs until it has written four times the active range, or its time limit;
//! its rounds are then looked at for a write cliff or a burst bucket ([`rate_steps`]), as is
//! every element's own per-second series.
//!
//! [`check`] does everything that can fail on bad input before any I/O (the plans of every
//! test are prepared once); [`run`] then purges, preconditions and runs the rounds, handing the
//! result to the caller after every round (its state file), and continues a result read back
//! from that file ([`PtsResult`] with `complete` false) where it stopped.
//!
//! ```
//! use iopath::pts::steady_rule::{judge_window, WINDOW_ROUNDS};
//! assert_eq!(WINDOW_ROUNDS, 5);
//! assert!(!judge_window("IOPS", 1, &[100.0, 120.0, 140.0, 160.0, 180.0]).holds());
//! ```

pub mod plan;
pub mod purge;
pub mod rate_steps;
pub mod steady_rule;

use crate::analysis::{Analyser, DeclaredPath};
use crate::engine::StopSignal;
use crate::result::pts::{
    PTS_SCHEMA_VERSION, PtsConditions, PtsEdition, PtsOutcome, PtsResult, PtsRound, PtsTestKind,
    PtsTestResult,
};
use crate::result::{HopKind, RunResult, TargetInfo};
use crate::run::{RunError, RunObserver, RunOptions, execute, prepare};
use crate::targets::TargetSpec;
use crate::workload::{Plan, TestPlan};
use plan::{PtsElement, SATURATION_PASSES};
use purge::{PurgeMethod, PurgePlan, plan_purge};

/// Most rounds of write saturation (it normally ends on bytes or time first).
pub const SATURATION_MAX_ROUNDS: u32 = 10_000;
/// Smallest active range, bytes: the largest block of the IOPS test.
pub const MIN_ACTIVE_RANGE: u64 = 1 << 20;

/// What the user asked for (flags), before the target is known.
#[derive(Clone, Debug, PartialEq)]
pub struct PtsSettings {
    /// Enterprise or Client.
    pub edition: PtsEdition,
    /// The tests, in the order run.
    pub tests: Vec<PtsTestKind>,
    /// Measured time of one element of a round, ns.
    pub element_ns: u64,
    /// Share of the target's capacity the tests use, percent (1 to 100).
    pub capacity_percent: u32,
    /// Most rounds of a test with a steady-state rule (5 to 25).
    pub max_rounds: u32,
    /// Queue depth of each worker (IOPS, throughput, saturation).
    pub queue_depth: u32,
    /// Workers (IOPS, saturation).
    pub workers: u32,
    /// Block sizes of the IOPS and latency matrices, bytes.
    pub block_sizes: Vec<u64>,
    /// The purge before each test.
    pub purge: PurgeMethod,
    /// Longest time of write saturation, ns.
    pub saturation_limit_ns: u64,
}

impl PtsSettings {
    /// The settings a saved result was run with.
    pub fn of(result: &PtsResult) -> PtsSettings {
        let conditions = &result.conditions;
        PtsSettings {
            edition: conditions.edition,
            tests: result.tests.iter().map(|test| test.kind).collect(),
            element_ns: conditions.round_element_ns,
            capacity_percent: conditions.capacity_percent,
            max_rounds: conditions.max_rounds,
            queue_depth: conditions.queue_depth,
            workers: conditions.workers,
            block_sizes: conditions.block_sizes_bytes.clone(),
            purge: if conditions.purge_method.starts_with("none (--purge none)") {
                PurgeMethod::None
            } else {
                PurgeMethod::Discard
            },
            saturation_limit_ns: conditions.saturation_limit_ns,
        }
    }

    /// The elements of one round of `kind`.
    pub fn elements(&self, kind: PtsTestKind) -> Vec<PtsElement> {
        plan::elements(
            kind,
            self.edition,
            &self.block_sizes,
            self.queue_depth,
            self.workers,
        )
    }

    /// What differs from the specification, in words, for the report.
    pub fn scaled_down(&self, edition_defaults: (u32, u32)) -> Vec<String> {
        let mut scaled = Vec::new();
        if self.element_ns != 60_000_000_000 {
            scaled.push(format!(
                "each element of a round measured for {} (the specification: 1 minute)",
                crate::units::format_time(self.element_ns)
            ));
        }
        if self.capacity_percent != 100 {
            scaled.push(format!(
                "active range {} % of the capacity (the specification: 100 %)",
                self.capacity_percent
            ));
        }
        if self.max_rounds != steady_rule::MAX_ROUNDS {
            scaled.push(format!(
                "at most {} rounds (the specification: {})",
                self.max_rounds,
                steady_rule::MAX_ROUNDS
            ));
        }
        if self.block_sizes != plan::SPEC_BLOCK_SIZES {
            let names: Vec<String> = self
                .block_sizes
                .iter()
                .map(|&size| plan::block_size_name(size))
                .collect();
            scaled.push(format!(
                "block sizes {} only (the specification: 0.5 to 1024 KiB)",
                names.join(", ")
            ));
        }
        let all = [
            PtsTestKind::Iops,
            PtsTestKind::Throughput,
            PtsTestKind::Latency,
            PtsTestKind::Saturation,
        ];
        let left_out: Vec<&str> = all
            .iter()
            .filter(|kind| !self.tests.contains(kind))
            .map(|kind| kind.title())
            .collect();
        if !left_out.is_empty() {
            scaled.push(format!("tests left out: {}", left_out.join(", ")));
        }
        if self.saturation_limit_ns != 24 * 3_600_000_000_000
            && self.tests.contains(&PtsTestKind::Saturation)
        {
            scaled.push(format!(
                "write saturation limited to {} (the specification: 24 hours)",
                crate::units::format_time(self.saturation_limit_ns)
            ));
        }
        if (self.queue_depth, self.workers) != edition_defaults {
            scaled.push(format!(
                "queue depth {} × {} workers (iopath's default for this edition: {} × {})",
                self.queue_depth, self.workers, edition_defaults.0, edition_defaults.1
            ));
        }
        scaled
    }
}

/// The queue depth and workers iopath uses by default for `edition` (the specification leaves
/// the outstanding I/O to the tester): Enterprise QD 32 × 4 workers, Client QD 16 × 2.
pub fn default_load(edition: PtsEdition) -> (u32, u32) {
    match edition {
        PtsEdition::Enterprise => (32, 4),
        PtsEdition::Client => (16, 2),
    }
}

/// Errors of `iopath pts`. [`PtsError::is_bad_input`] tells which are the user's input.
#[derive(Debug, thiserror::Error)]
pub enum PtsError {
    /// A plan was refused, or a round or a purge failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The target or the settings do not allow the tests.
    #[error("{0}")]
    Unfit(String),
}

impl PtsError {
    /// Whether this is about the user's input (exit status 2; no I/O was done).
    pub fn is_bad_input(&self) -> bool {
        match self {
            PtsError::Run(error) => error.is_bad_input(),
            PtsError::Unfit(_) => true,
        }
    }
}

/// A checked `iopath pts`: its target, the sizes found, and the runner's options.
#[derive(Debug)]
pub struct PtsPlan {
    /// The target.
    pub target: TargetSpec,
    /// What was found about it.
    pub info: TargetInfo,
    /// The settings.
    pub settings: PtsSettings,
    /// Bytes of the active range.
    pub active_range_bytes: u64,
    /// Options of every run (write policy, command line).
    pub options: RunOptions,
    /// How each test's purge goes.
    pub purge: PurgePlan,
}

/// Checks everything before any I/O: the target exists and is large enough, and the
/// preconditioning and one round of every test are prepared as `iopath run` prepares a plan
/// (writes allowed, alignment, memory); so is the purge, or the reason there is none.
pub fn check(
    target: TargetSpec,
    settings: PtsSettings,
    options: RunOptions,
) -> Result<PtsPlan, PtsError> {
    let probe = Plan {
        targets: vec![target.clone()],
        tests: vec![plan::preconditioning_test(MIN_ACTIVE_RANGE)],
    };
    let prepared = prepare(probe, options.clone(), false)?;
    let Some(info) = prepared.existing_target(0).cloned() else {
        return Err(PtsError::Unfit(
            "iopath pts tests an existing file, block device or network volume; this target \
             does not exist"
                .into(),
        ));
    };
    drop(prepared);
    let active = (u128::from(info.size_bytes) * u128::from(settings.capacity_percent) / 100) as u64;
    let active_range_bytes = active / MIN_ACTIVE_RANGE * MIN_ACTIVE_RANGE;
    if active_range_bytes < MIN_ACTIVE_RANGE {
        return Err(PtsError::Unfit(format!(
            "{}: {} % of {} bytes is less than 1 MiB, the smallest active range (raise \
             --capacity-pct or use a larger target)",
            info.path, settings.capacity_percent, info.size_bytes
        )));
    }
    let round_range = plan::round_range(settings.edition, active_range_bytes);
    let mut tests = vec![plan::preconditioning_test(active_range_bytes)];
    for &kind in &settings.tests {
        tests.extend(plan::round_tests(
            &settings.elements(kind),
            round_range,
            settings.element_ns,
        ));
    }
    let whole = Plan {
        targets: vec![target.clone()],
        tests,
    };
    prepare(whole, options.clone(), false)?;
    let purge = plan_purge(settings.purge, &target, &info, &options)?;
    Ok(PtsPlan {
        target,
        info,
        settings,
        active_range_bytes,
        options,
        purge,
    })
}

impl PtsPlan {
    /// A result with every test not yet run.
    pub fn fresh_result(&self) -> PtsResult {
        let settings = &self.settings;
        PtsResult {
            schema_version: PTS_SCHEMA_VERSION,
            iopath_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at: crate::host::time::now_rfc3339(),
            label: None,
            conditions: PtsConditions {
                edition: settings.edition,
                target: self.info.clone(),
                host: crate::discovery::resources::describe(&crate::discovery::HostView::live())
                    .hostname,
                device_facts: Vec::new(),
                capacity_percent: settings.capacity_percent,
                active_range_bytes: self.active_range_bytes,
                purge_method: self.purge.method().to_string(),
                round_element_ns: settings.element_ns,
                max_rounds: settings.max_rounds,
                queue_depth: settings.queue_depth,
                workers: settings.workers,
                preconditioning_bytes: self.active_range_bytes * plan::PRECONDITIONING_PASSES,
                block_sizes_bytes: settings.block_sizes.clone(),
                saturation_limit_ns: settings.saturation_limit_ns,
                scaled_down: settings.scaled_down(default_load(settings.edition)),
                notes: Vec::new(),
            },
            tests: settings
                .tests
                .iter()
                .map(|&kind| PtsTestResult {
                    kind,
                    purged: false,
                    preconditioned: false,
                    rounds: Vec::new(),
                    tracking: plan::tracking_names(kind, &settings.elements(kind)),
                    outcome: PtsOutcome::NotFinished,
                    windows: Vec::new(),
                    rate_step: None,
                    steady_after_step: None,
                })
                .collect(),
            complete: false,
        }
    }
}

/// Hears what a PTS run does (the CLI prints it and saves the state file).
pub trait PtsObserver {
    /// A phase begins (`IOPS: purge`, `IOPS: preconditioning`…).
    fn phase(&mut self, _text: &str) {}
    /// A round of `test` ended (its last round is the new one).
    fn round_finished(&mut self, _test: &PtsTestResult) {}
    /// The result changed (a phase or a round ended): the caller saves it to resume from.
    fn checkpoint(&mut self, _result: &PtsResult) {}
}

/// The runner's own observer: PTS reports rounds, not each element's test.
struct Unobserved;

impl RunObserver for Unobserved {}

/// Runs every test of `result` that has not ended, from where it stopped. Returns the result
/// (with `complete` false when `stop` ended it early).
pub fn run(
    plan: &PtsPlan,
    mut result: PtsResult,
    stop: &StopSignal,
    observer: &mut dyn PtsObserver,
) -> Result<PtsResult, PtsError> {
    for index in 0..result.tests.len() {
        if result.tests[index].outcome != PtsOutcome::NotFinished {
            continue;
        }
        let kind = result.tests[index].kind;
        let test = &mut result.tests[index];
        let fresh =
            test.rounds.is_empty() && !(test.preconditioned && kind != PtsTestKind::Saturation);
        if fresh {
            test.purged = false;
            test.preconditioned = false;
            observer.phase(&format!("{}: purge", kind.title()));
            let Some((purged, method)) = run_purge(plan, stop)? else {
                return Ok(result);
            };
            result.tests[index].purged = purged;
            result.conditions.purge_method = method;
            if kind != PtsTestKind::Saturation {
                observer.phase(&format!(
                    "{}: preconditioning ({} of 128 KiB sequential writes)",
                    kind.title(),
                    crate::units::format_size(
                        plan.active_range_bytes * plan::PRECONDITIONING_PASSES
                    )
                ));
                let executed = run_tests(
                    plan,
                    vec![plan::preconditioning_test(plan.active_range_bytes)],
                    stop,
                )?;
                if stop.is_raised() || executed.partial {
                    return Ok(result);
                }
                keep_warnings(&mut result.conditions, &executed);
                note_device(&mut result.conditions, executed);
                result.tests[index].preconditioned = true;
            }
            observer.checkpoint(&result);
        }
        if !run_rounds(plan, &mut result, index, stop, observer)? {
            return Ok(result);
        }
    }
    result.complete = true;
    observer.checkpoint(&result);
    Ok(result)
}

/// Purges the target as planned: whether it was, and how in the report's words; `None` when
/// stopped before the trims ended.
fn run_purge(plan: &PtsPlan, stop: &StopSignal) -> Result<Option<(bool, String)>, PtsError> {
    let PurgePlan::Trim {
        tests,
        bytes,
        method,
    } = &plan.purge
    else {
        return Ok(Some((false, plan.purge.method().to_string())));
    };
    let executed = run_tests(plan, tests.clone(), stop)?;
    if stop.is_raised() || executed.partial {
        return Ok(None);
    }
    let trimmed: u64 = executed.tests.iter().map(|test| test.trim.bytes).sum();
    if trimmed < *bytes {
        return Ok(Some((
            false,
            format!(
                "{method}: only {trimmed} of {bytes} bytes were trimmed; results start from a \
                 partly used state"
            ),
        )));
    }
    Ok(Some((true, method.clone())))
}

/// Runs the rounds of test `index` until it ends; false when stopped early.
fn run_rounds(
    plan: &PtsPlan,
    result: &mut PtsResult,
    index: usize,
    stop: &StopSignal,
    observer: &mut dyn PtsObserver,
) -> Result<bool, PtsError> {
    let kind = result.tests[index].kind;
    let settings = &plan.settings;
    let elements = settings.elements(kind);
    let range = plan::round_range(settings.edition, plan.active_range_bytes);
    let max_rounds = match kind {
        PtsTestKind::Saturation => SATURATION_MAX_ROUNDS,
        _ => settings.max_rounds,
    };
    loop {
        let test = &result.tests[index];
        let number = test.rounds.len() as u32 + 1;
        if number > max_rounds || saturated(plan, test) {
            let test = &mut result.tests[index];
            test.outcome = match kind {
                PtsTestKind::Saturation => PtsOutcome::Saturated,
                _ => PtsOutcome::NotSteady,
            };
            observer.checkpoint(result);
            return Ok(true);
        }
        observer.phase(&format!("{}: round {number}", kind.title()));
        let executed = run_tests(
            plan,
            plan::round_tests(&elements, range, settings.element_ns),
            stop,
        )?;
        if stop.is_raised() || executed.partial || executed.tests.len() != elements.len() {
            return Ok(false);
        }
        keep_warnings(&mut result.conditions, &executed);
        if result.conditions.device_facts.is_empty() {
            note_device(&mut result.conditions, executed.clone());
        }
        let cells: Vec<_> = elements
            .iter()
            .zip(&executed.tests)
            .map(|(element, measured)| plan::cell_of(element, measured))
            .collect();
        let tracked = plan::tracked_values(kind, &cells);
        let test = &mut result.tests[index];
        test.rounds.push(PtsRound {
            number,
            cells,
            tracked,
        });
        test.windows = windows(test);
        test.rate_step = rate_steps::rounds_step(test, settings.element_ns);
        let steady = kind != PtsTestKind::Saturation
            && !test.windows.is_empty()
            && test.windows.iter().all(|window| window.holds());
        if steady {
            test.outcome = PtsOutcome::Steady;
            test.steady_after_step = rate_steps::step_before_steady(test, settings.element_ns);
        }
        observer.round_finished(test);
        observer.checkpoint(result);
        if steady {
            return Ok(true);
        }
    }
}

/// Write saturation has written four times the active range, or run its time.
fn saturated(plan: &PtsPlan, test: &PtsTestResult) -> bool {
    if test.kind != PtsTestKind::Saturation {
        return false;
    }
    let written: u64 = test
        .rounds
        .iter()
        .flat_map(|round| round.cells.iter().map(|cell| cell.bytes))
        .sum();
    let elapsed = u64::from(test.rounds.len() as u32) * plan.settings.element_ns;
    written >= plan.active_range_bytes * SATURATION_PASSES
        || elapsed >= plan.settings.saturation_limit_ns
}

/// The last window of each tracking variable of `test`.
fn windows(test: &PtsTestResult) -> Vec<crate::result::pts::PtsWindow> {
    test.tracking
        .iter()
        .enumerate()
        .map(|(variable, name)| {
            let values: Vec<f64> = test
                .rounds
                .iter()
                .map(|round| round.tracked.get(variable).copied().unwrap_or(0.0))
                .collect();
            steady_rule::last_window(name, &values)
        })
        .collect()
}

/// Runs `tests` against the plan's target through the runner, as `iopath run` does.
fn run_tests(
    plan: &PtsPlan,
    tests: Vec<TestPlan>,
    stop: &StopSignal,
) -> Result<RunResult, PtsError> {
    let whole = Plan {
        targets: vec![plan.target.clone()],
        tests,
    };
    let prepared = prepare(whole, plan.options.clone(), false)?;
    let executed = execute(prepared, stop, &mut Unobserved)?;
    if let Some(failure) = executed.failure {
        return Err(failure.into());
    }
    Ok(executed.result)
}

/// Most notes kept from the runner's warnings.
const MAX_NOTES: usize = 20;

/// Keeps the runner's warnings about a round (a fallback to buffered I/O, to another engine)
/// as notes of the conditions, each once, so that the report says what the figures rest on.
fn keep_warnings(conditions: &mut PtsConditions, result: &RunResult) {
    let warnings = result
        .warnings
        .iter()
        .chain(result.tests.iter().flat_map(|test| test.warnings.iter()));
    for warning in warnings {
        if conditions.notes.len() >= MAX_NOTES {
            return;
        }
        if !conditions.notes.contains(warning) {
            conditions.notes.push(warning.clone());
        }
    }
}

/// Keeps the device's model, firmware and link as discovery sees them (once).
fn note_device(conditions: &mut PtsConditions, mut result: RunResult) {
    if !conditions.device_facts.is_empty() {
        return;
    }
    Analyser::this_host(DeclaredPath::default()).analyse(&mut result);
    conditions.device_facts = result
        .paths
        .iter()
        .flat_map(|path| path.hops.iter())
        .filter(|hop| {
            matches!(
                hop.kind,
                HopKind::Disk
                    | HopKind::Loop
                    | HopKind::Bus
                    | HopKind::DeviceLink
                    | HopKind::Transport
            )
        })
        .map(|hop| format!("{}: {}", hop.name, hop.description))
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::fixtures::mixed;

    fn conditions(result: &RunResult) -> PtsConditions {
        PtsConditions {
            edition: PtsEdition::Enterprise,
            target: result.targets[0].clone(),
            host: String::new(),
            device_facts: Vec::new(),
            capacity_percent: 100,
            active_range_bytes: 1 << 20,
            purge_method: "none".into(),
            round_element_ns: 1_000_000_000,
            max_rounds: 25,
            queue_depth: 32,
            workers: 4,
            preconditioning_bytes: 2 << 20,
            block_sizes_bytes: plan::SPEC_BLOCK_SIZES.to_vec(),
            saturation_limit_ns: 1_000_000_000,
            scaled_down: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_runners_warnings_become_notes_once_each_and_at_most_twenty() {
        let mut result = mixed().clone();
        result.warnings = vec!["buffered I/O: O_DIRECT refused".into()];
        result.tests[0].warnings = vec!["buffered I/O: O_DIRECT refused".into()];
        let mut kept = conditions(&result);
        keep_warnings(&mut kept, &result);
        keep_warnings(&mut kept, &result);
        assert_eq!(kept.notes, ["buffered I/O: O_DIRECT refused"]);
        result.warnings = (0..30).map(|index| format!("warning {index}")).collect();
        keep_warnings(&mut kept, &result);
        assert_eq!(kept.notes.len(), MAX_NOTES);
    }

    #[test]
    fn the_report_lists_what_was_scaled_down() {
        let full = PtsSettings {
            edition: PtsEdition::Enterprise,
            tests: vec![
                PtsTestKind::Iops,
                PtsTestKind::Throughput,
                PtsTestKind::Latency,
                PtsTestKind::Saturation,
            ],
            element_ns: 60_000_000_000,
            capacity_percent: 100,
            max_rounds: 25,
            queue_depth: 32,
            workers: 4,
            block_sizes: plan::SPEC_BLOCK_SIZES.to_vec(),
            purge: PurgeMethod::Discard,
            saturation_limit_ns: 24 * 3_600_000_000_000,
        };
        assert!(full.scaled_down((32, 4)).is_empty());
        let small = PtsSettings {
            tests: vec![PtsTestKind::Iops],
            element_ns: 1_000_000_000,
            capacity_percent: 10,
            max_rounds: 8,
            block_sizes: vec![4096],
            ..full
        };
        let scaled = small.scaled_down((32, 4)).join("\n");
        for words in [
            "1s",
            "10 %",
            "at most 8 rounds",
            "4KiB only",
            "Throughput, Latency, Write Saturation",
        ] {
            assert!(scaled.contains(words), "{words} in {scaled}");
        }
    }
}
