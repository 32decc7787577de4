//! Verdicts confirmed by experiment (`iopath run --confirm`): which limit to move for a
//! verdict, and what the change of rate says of it. Pure functions; the runner does the I/O.
//!
//! Each verdict predicts how the rate reacts when a limit moves:
//!
//! | verdict | experiment | prediction |
//! |---|---|---|
//! | queue-depth-bound | queue depth × 2 | more |
//! | latency-bound | queue depth × 2 | the same (more: the far end had idle parallelism) |
//! | host-CPU-bound on one busy core or thread | workers × 2 | more |
//! | host-CPU-bound with every core busy | queue depth × 2 | the same |
//! | device-bound at blocks of 16 KiB or less | blocks × 4 | more bytes/s (the limit is per I/O) |
//! | link-, bus-, device-bound, rate-limited | queue depth × 2 | the same |
//! | inconclusive | queue depth × 2 | (none: the experiment decides) |
//! | read-ahead-bound, write-back-bound | O_DIRECT at the same depth | much less (the kernel's queue carried more than iopath's) |
//!
//! A change of [`GAIN_PERCENT`] or more is "more"; [`SAME_PERCENT`] or less (a loss too) is
//! "the same"; in between says nothing. Both thresholds move up by how far counting alone can
//! move the rate ([`counting_resolution_percent`]: one I/O in each run's count), which
//! matters only for experiments of a few dozen I/Os, such as a second of a server paced to
//! 20 I/Os a second.
//!
//! ```
//! use iopath::analysis::confirmation::decide;
//! use iopath::result::{ConfirmationOutcome, Experiment, Verdict};
//! let (outcome, derived) =
//!     decide(Verdict::QueueDepthBound, Experiment::QueueDepth, 41.0, Verdict::QueueDepthBound);
//! assert_eq!((outcome, derived), (ConfirmationOutcome::Confirmed, Verdict::QueueDepthBound));
//! ```

use super::small_io::SMALL_BLOCK_BYTES;
use super::verdict::{CORE_BOUND_PERCENT, HOST_BOUND_PERCENT, THREAD_BOUND_PERCENT};
use crate::result::{
    Confirmation, ConfirmationOutcome, Experiment, StopReason, TestAnalysis, TestResult, Verdict,
};
use crate::units::format_bytes;

/// A rate this much higher (percent) is a gain: it confirms a verdict that predicts one and
/// refutes one that predicts none.
pub const GAIN_PERCENT: f64 = 15.0;

/// A rate at most this much higher (percent, or lower) is no gain: it confirms a verdict that
/// predicts none and refutes one that predicts a gain.
pub const SAME_PERCENT: f64 = 5.0;

/// O_DIRECT at the same depth losing this much (percent) confirms that the kernel's hidden
/// queue (read-ahead, write-back) carried the buffered test; losing less than
/// [`GAIN_PERCENT`] refutes it.
pub const HIDDEN_QUEUE_LOSS_PERCENT: f64 = 50.0;

/// The experiment that tests the verdict of an analysed test, if one fits. None for a test
/// that did not complete, has no analysis, did no I/O, or is cached (the experiment would
/// measure the cache again).
pub fn experiment_for(test: &TestResult) -> Option<Experiment> {
    let analysis = test.analysis.as_ref()?;
    if test.stop_reason != StopReason::Completed || test.total.io_count == 0 {
        return None;
    }
    match analysis.verdict {
        // The server's own counters named the wall; nothing run from the client tests it.
        Verdict::Cached
        | Verdict::ServerDiskBound
        | Verdict::ServerCpuBound
        | Verdict::ServerLinkBound
        | Verdict::SwitchLinkBound
        // A step in time is seen in the series itself; no other run of the same length
        // confirms it better.
        | Verdict::BurstBucket
        | Verdict::WriteCliff => None,
        Verdict::HostCpuBound => {
            let cpu = &analysis.cpu;
            let cores = cpu.cores.len().max(1) as f64;
            let host_busy = cpu.cores.iter().map(|c| c.busy_percent).sum::<f64>() / cores;
            let one_busy = cpu.busiest_thread_percent >= THREAD_BOUND_PERCENT
                || cpu.busiest_core_percent >= CORE_BOUND_PERCENT;
            if one_busy && cpu.cores.len() > 1 && host_busy < HOST_BOUND_PERCENT {
                Some(Experiment::Workers)
            } else {
                // Every core busy: more workers cannot help, and neither should more queue.
                Some(Experiment::QueueDepth)
            }
        }
        Verdict::DeviceBound if limited_per_io(test, analysis) => Some(Experiment::BlockSize),
        Verdict::ReadAheadBound | Verdict::WriteBackBound => Some(Experiment::Direct),
        Verdict::QueueDepthBound
        | Verdict::LatencyBound
        | Verdict::DeviceBound
        | Verdict::LinkBound
        | Verdict::BusBound
        | Verdict::RateLimited
        | Verdict::Inconclusive => Some(Experiment::QueueDepth),
    }
}

/// Whether a device-bound test may be limited per I/O, so that larger blocks should carry
/// more: the hop it names is at its I/O rate rather than its bandwidth, or it names none and
/// the I/Os are small. A hop at its bandwidth (a declared `server:2.7MB/s`) is tested with a
/// deeper queue instead.
fn limited_per_io(test: &TestResult, analysis: &TestAnalysis) -> bool {
    let hop = analysis
        .limiting_hop
        .as_ref()
        .and_then(|key| analysis.hops.iter().find(|hop| &hop.hop_key == key));
    match hop {
        Some(hop) => hop.iops_capacity.is_some_and(|capacity| {
            capacity > 0 && hop.iops * 100.0 / capacity as f64 >= hop.utilisation_percent - 0.5
        }),
        None => mean_io_bytes(test) <= SMALL_BLOCK_BYTES,
    }
}

fn mean_io_bytes(test: &TestResult) -> f64 {
    test.total.bytes as f64 / test.total.io_count.max(1) as f64
}

/// Whether `verdict` predicts a gain when `experiment` moves its limit (`None`: it predicts
/// nothing, as for an inconclusive verdict).
pub fn predicts_gain(verdict: Verdict, experiment: Experiment) -> Option<bool> {
    match (verdict, experiment) {
        (Verdict::Inconclusive, _) => None,
        (Verdict::QueueDepthBound, Experiment::QueueDepth)
        | (Verdict::HostCpuBound, Experiment::Workers)
        | (Verdict::DeviceBound, Experiment::BlockSize) => Some(true),
        _ => Some(false),
    }
}

/// The verdict a gain from `experiment` points to: the limit it moved.
fn lever(experiment: Experiment) -> Verdict {
    match experiment {
        Experiment::QueueDepth => Verdict::QueueDepthBound,
        Experiment::Workers => Verdict::HostCpuBound,
        Experiment::BlockSize => Verdict::DeviceBound,
        Experiment::Direct => Verdict::ReadAheadBound,
    }
}

/// What O_DIRECT at the same depth says of a verdict on the kernel's hidden queue: a loss of
/// [`HIDDEN_QUEUE_LOSS_PERCENT`] or more confirms it; less than [`GAIN_PERCENT`] of a loss (or
/// a gain) refutes it, naming the experiment's own verdict; in between says nothing.
fn decide_direct(
    tested: Verdict,
    change_percent: f64,
    experiment_verdict: Verdict,
) -> (ConfirmationOutcome, Verdict) {
    let hidden_queue = matches!(tested, Verdict::ReadAheadBound | Verdict::WriteBackBound);
    if !hidden_queue {
        return (ConfirmationOutcome::Inconclusive, tested);
    }
    if change_percent <= -HIDDEN_QUEUE_LOSS_PERCENT {
        (ConfirmationOutcome::Confirmed, tested)
    } else if change_percent > -GAIN_PERCENT {
        let derived = match experiment_verdict {
            verdict if verdict == tested => Verdict::Inconclusive,
            verdict => verdict,
        };
        (ConfirmationOutcome::Refuted, derived)
    } else {
        (ConfirmationOutcome::Inconclusive, tested)
    }
}

/// How far (percent) a change of rate can move from counting alone, when the test counted
/// `counted_before` I/Os and the experiment `counted_after`, each over its own window: a
/// steady stream of I/Os puts one more or one fewer completion inside a window depending on
/// where the window's edges fall, so each rate is known to one I/O in its count. Negligible
/// for the thousands of I/Os of most runs; for a server paced to 20 I/Os a second, whose
/// experiment of one second counts 20 or 21, it is 5 % and more.
///
/// ```
/// use iopath::analysis::confirmation::counting_resolution_percent;
/// assert!((counting_resolution_percent(60, 21) - 6.43).abs() < 0.01);
/// assert!(counting_resolution_percent(100_000, 30_000) < 0.01);
/// assert_eq!(counting_resolution_percent(0, 10), 0.0);
/// ```
pub fn counting_resolution_percent(counted_before: u64, counted_after: u64) -> f64 {
    if counted_before == 0 || counted_after == 0 {
        return 0.0;
    }
    100.0 * (1.0 / counted_before as f64 + 1.0 / counted_after as f64)
}

/// Decides what a change of `change_percent` in the experiment says of `tested`, and the
/// verdict re-derived from it. `experiment_verdict` is the analysis of the experiment itself;
/// it names the limit when moving the suspected one did not help.
pub fn decide(
    tested: Verdict,
    experiment: Experiment,
    change_percent: f64,
    experiment_verdict: Verdict,
) -> (ConfirmationOutcome, Verdict) {
    decide_within(tested, experiment, change_percent, 0.0, experiment_verdict)
}

/// [`decide`] for rates known only to `resolution_percent` (see
/// [`counting_resolution_percent`]): a change within [`SAME_PERCENT`] plus the resolution is
/// "the same", a gain must pass [`GAIN_PERCENT`] plus the resolution, so that an I/O more or
/// less in a short experiment is never read as a gain or a loss.
///
/// ```
/// use iopath::analysis::confirmation::decide_within;
/// use iopath::result::{ConfirmationOutcome, Experiment, Verdict};
/// let latency = Verdict::LatencyBound;
/// // 21 I/Os in the experiment's second against 20 a second in the test: +7 % is one I/O.
/// let (outcome, _) = decide_within(latency, Experiment::QueueDepth, 7.0, 6.4, latency);
/// assert_eq!(outcome, ConfirmationOutcome::Confirmed);
/// let (outcome, _) = decide_within(latency, Experiment::QueueDepth, 7.0, 0.0, latency);
/// assert_eq!(outcome, ConfirmationOutcome::Inconclusive);
/// ```
pub fn decide_within(
    tested: Verdict,
    experiment: Experiment,
    change_percent: f64,
    resolution_percent: f64,
    experiment_verdict: Verdict,
) -> (ConfirmationOutcome, Verdict) {
    if experiment == Experiment::Direct {
        return decide_direct(tested, change_percent, experiment_verdict);
    }
    let resolution = resolution_percent.max(0.0);
    let gain = change_percent >= GAIN_PERCENT + resolution;
    let same = change_percent <= SAME_PERCENT + resolution;
    if !gain && !same {
        return (ConfirmationOutcome::Inconclusive, tested);
    }
    match predicts_gain(tested, experiment) {
        None if gain => (ConfirmationOutcome::Refuted, lever(experiment)),
        None => (ConfirmationOutcome::Inconclusive, tested),
        Some(predicted) if predicted == gain => (ConfirmationOutcome::Confirmed, tested),
        Some(_) if gain => (ConfirmationOutcome::Refuted, lever(experiment)),
        Some(_) => {
            // The suspected limit moved and nothing changed: something else limits. A deeper
            // queue that still looks queue-bound points at the device; another experiment whose
            // own analysis still names the tested limit cannot tell (larger blocks gave
            // nothing to a device limited by its bandwidth, not per I/O).
            let derived = match experiment_verdict {
                Verdict::Inconclusive => Verdict::Inconclusive,
                verdict if verdict != tested => verdict,
                _ if experiment == Experiment::QueueDepth => Verdict::DeviceBound,
                _ => tested,
            };
            if derived == tested {
                (ConfirmationOutcome::Inconclusive, tested)
            } else {
                (ConfirmationOutcome::Refuted, derived)
            }
        }
    }
}

/// What one experiment was: the limit moved, from what to what, for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExperimentSetting {
    /// The limit moved.
    pub experiment: Experiment,
    /// Queue depth, workers per target or largest block (bytes) of the test's first job.
    pub before: u64,
    /// The same in the experiment.
    pub after: u64,
    /// The experiment's ramp, ns.
    pub ramp_ns: u64,
}

impl ExperimentSetting {
    /// The setting as a person says it: `QD 16`, `4 workers`, `16.0 KiB blocks`.
    pub fn describe(&self) -> String {
        match self.experiment {
            Experiment::QueueDepth => format!("QD {}", self.after),
            Experiment::Workers => format!("{} workers", self.after),
            Experiment::BlockSize => format!("{} blocks", format_bytes(self.after)),
            Experiment::Direct => format!("O_DIRECT at QD {}", self.after),
        }
    }
}

/// The record of an experiment on `tested` (an analysed test): its rates against the test's,
/// the change, and what it says. `experiment_verdict` is the experiment's own analysis; an
/// experiment that did not complete or did no I/O is inconclusive.
pub fn confirmation(
    tested: &TestResult,
    setting: ExperimentSetting,
    experiment: &TestResult,
    experiment_verdict: Verdict,
) -> Confirmation {
    let tested_verdict = tested
        .analysis
        .as_ref()
        .map_or(Verdict::Inconclusive, |analysis| analysis.verdict);
    let before = tested.total.bytes_per_second;
    let after = experiment.total.bytes_per_second;
    let measured = experiment.stop_reason == StopReason::Completed
        && experiment.total.io_count > 0
        && before > 0.0;
    let change_percent = if measured {
        (after / before - 1.0) * 100.0
    } else {
        0.0
    };
    let (outcome, derived_verdict, summary) = if measured {
        let counted = Counted {
            before: tested.total.io_count,
            after: experiment.total.io_count,
        };
        let (outcome, derived) = decide_within(
            tested_verdict,
            setting.experiment,
            change_percent,
            counted.resolution_percent(),
            experiment_verdict,
        );
        let summary = summarise(
            setting,
            change_percent,
            counted,
            tested_verdict,
            outcome,
            derived,
        );
        (outcome, derived, summary)
    } else {
        let why = match experiment.stop_reason {
            StopReason::Completed if before > 0.0 => "no I/O completed".to_string(),
            StopReason::Completed => "the test had no rate to compare with".to_string(),
            StopReason::Interrupted => "interrupted".to_string(),
            _ => format!("stopped ({:?})", experiment.stop_reason).to_lowercase(),
        };
        return not_run(tested, setting, &why);
    };
    Confirmation {
        tested_verdict,
        experiment: setting.experiment,
        setting_before: setting.before,
        setting_after: setting.after,
        ramp_ns: setting.ramp_ns,
        measured_ns: experiment.measured_ns,
        bytes_per_second_before: before,
        bytes_per_second_after: after,
        iops_before: tested.total.iops,
        iops_after: experiment.total.iops,
        change_percent,
        outcome,
        derived_verdict,
        summary,
    }
}

/// The record of an experiment that could not run or did not finish (refused by the checks
/// before the run, interrupted, failed): inconclusive, with `reason`.
pub fn not_run(tested: &TestResult, setting: ExperimentSetting, reason: &str) -> Confirmation {
    let tested_verdict = tested
        .analysis
        .as_ref()
        .map_or(Verdict::Inconclusive, |analysis| analysis.verdict);
    Confirmation {
        tested_verdict,
        experiment: setting.experiment,
        setting_before: setting.before,
        setting_after: setting.after,
        ramp_ns: setting.ramp_ns,
        measured_ns: 0,
        bytes_per_second_before: tested.total.bytes_per_second,
        bytes_per_second_after: 0.0,
        iops_before: tested.total.iops,
        iops_after: 0.0,
        change_percent: 0.0,
        outcome: ConfirmationOutcome::Inconclusive,
        derived_verdict: tested_verdict,
        summary: format!(
            "{} not measured ({reason}): {} not tested",
            setting.describe(),
            tested_verdict.name()
        ),
    }
}

/// The counting resolution is named in a summary from this many percent on.
const SHOWN_RESOLUTION_PERCENT: f64 = 1.0;

/// The I/Os the test and its experiment counted in their measured windows.
#[derive(Clone, Copy, Debug, Default)]
struct Counted {
    before: u64,
    after: u64,
}

impl Counted {
    fn resolution_percent(self) -> f64 {
        counting_resolution_percent(self.before, self.after)
    }
}

/// `QD 16 gave +41 %: queue-depth-bound, confirmed`, `QD 16 gave +2 %: not
/// queue-depth-bound; device-bound`.
fn summarise(
    setting: ExperimentSetting,
    change_percent: f64,
    counted: Counted,
    tested: Verdict,
    outcome: ConfirmationOutcome,
    derived: Verdict,
) -> String {
    // Rounded before the sign is chosen: -0.3 % reads "+0 %", not "-0 %".
    let shown = change_percent.round() + 0.0;
    let resolution = counted.resolution_percent();
    let head = if resolution >= SHOWN_RESOLUTION_PERCENT {
        format!(
            "{} gave {:+.0} % (±{resolution:.0} % from counting {} and {} I/Os)",
            setting.describe(),
            shown,
            counted.after,
            counted.before
        )
    } else {
        format!("{} gave {:+.0} %", setting.describe(), shown)
    };
    if setting.experiment == Experiment::Direct {
        return match outcome {
            ConfirmationOutcome::Confirmed => format!(
                "{head}: the kernel's queue carried more than iopath's; {}, confirmed",
                tested.name()
            ),
            ConfirmationOutcome::Refuted => {
                format!("{head}: not {}; {}", tested.name(), derived.name())
            }
            ConfirmationOutcome::Inconclusive => format!(
                "{head}: {} neither confirmed nor refuted (a loss of {HIDDEN_QUEUE_LOSS_PERCENT:.0} % or more confirms it)",
                tested.name()
            ),
        };
    }
    let suspect = match setting.experiment {
        Experiment::BlockSize => "limited per I/O",
        Experiment::Direct => "carried by the kernel's queue",
        Experiment::QueueDepth | Experiment::Workers => lever(setting.experiment).name(),
    };
    let gain = change_percent >= GAIN_PERCENT + resolution;
    match outcome {
        ConfirmationOutcome::Confirmed if gain => {
            format!("{head}: {}, confirmed", tested.name())
        }
        ConfirmationOutcome::Confirmed => {
            format!("{head}: not {suspect}; {}, confirmed", tested.name())
        }
        ConfirmationOutcome::Refuted
            if gain && matches!(tested, Verdict::Inconclusive | Verdict::LatencyBound) =>
        {
            format!("{head}: {}", derived.name())
        }
        ConfirmationOutcome::Refuted if gain => {
            format!("{head}: not {}; {}", tested.name(), derived.name())
        }
        ConfirmationOutcome::Refuted => format!("{head}: not {suspect}; {}", derived.name()),
        ConfirmationOutcome::Inconclusive if change_percent <= SAME_PERCENT + resolution => {
            if tested == Verdict::Inconclusive {
                format!("{head}: not {suspect}; still inconclusive")
            } else {
                format!("{head}: not {suspect}; {} not confirmed", tested.name())
            }
        }
        ConfirmationOutcome::Inconclusive => format!(
            "{head}: between {:.0} % and {:.0} %, {} neither confirmed nor refuted",
            SAME_PERCENT + resolution,
            GAIN_PERCENT + resolution,
            tested.name()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::HopUtilisation;
    use ConfirmationOutcome::{Confirmed, Inconclusive as Undecided, Refuted};
    use Experiment::{BlockSize, QueueDepth, Workers};
    use Verdict::*;

    /// A device-bound test of 4 KiB reads at QD 32, 2.6 MB/s, with `hop` named as its limit.
    fn device_bound(hop: Option<HopUtilisation>) -> TestResult {
        use crate::analysis::test_results::{
            direction, empty_direction, idle_cpu, test_of, workload,
        };
        use crate::analysis::test_support::facts;
        let mut test = test_of(
            workload(4096, 100, 100, 32),
            direction(2.6e6, 4096, 50e6, 0.01),
            empty_direction(),
            idle_cpu(),
        );
        let mut analysis = super::super::verdict::analyse_test(&test, &[], &[], &facts());
        analysis.verdict = DeviceBound;
        analysis.limiting_hop = hop.as_ref().map(|hop| hop.hop_key.clone());
        analysis.hops = hop.into_iter().collect();
        test.analysis = Some(analysis);
        test
    }

    fn server_hop(
        iops: f64,
        iops_capacity: Option<u64>,
        utilisation_percent: f64,
    ) -> HopUtilisation {
        HopUtilisation {
            hop_key: "server".into(),
            hop_name: "server".into(),
            kind: crate::result::HopKind::Device,
            declared: true,
            inbound_bytes_per_second: 2.6e6,
            outbound_bytes_per_second: 0.0,
            protocol_overhead_bytes_per_second: 0.0,
            capacity_bytes_per_second: 2_700_000,
            iops,
            iops_capacity,
            utilisation_percent,
            below_page_cache: false,
        }
    }

    #[test]
    fn a_device_at_its_bandwidth_gets_a_deeper_queue_one_at_its_io_rate_larger_blocks() {
        // Declared at 2.7 MB/s and running at 96 % of it: blocks cannot help, the queue is
        // what the experiment moves.
        let by_bandwidth = device_bound(Some(server_hop(635.0, None, 96.3)));
        assert_eq!(experiment_for(&by_bandwidth), Some(QueueDepth));
        // Declared at 650 IOPS and running at 98 % of that: larger blocks should carry more.
        let by_io_rate = device_bound(Some(server_hop(635.0, Some(650), 97.7)));
        assert_eq!(experiment_for(&by_io_rate), Some(BlockSize));
        // No hop named and small I/Os: the device's own limit may be per I/O.
        assert_eq!(experiment_for(&device_bound(None)), Some(BlockSize));
    }

    #[test]
    fn a_gain_confirms_the_verdicts_that_predict_one() {
        assert_eq!(
            decide(QueueDepthBound, QueueDepth, 15.0, QueueDepthBound),
            (Confirmed, QueueDepthBound)
        );
        assert_eq!(
            decide(HostCpuBound, Workers, 90.0, HostCpuBound),
            (Confirmed, HostCpuBound)
        );
        assert_eq!(
            decide(DeviceBound, BlockSize, 250.0, DeviceBound),
            (Confirmed, DeviceBound)
        );
    }

    #[test]
    fn no_gain_refutes_them_and_names_the_limit_the_experiment_found() {
        assert_eq!(
            decide(QueueDepthBound, QueueDepth, 5.0, LinkBound),
            (Refuted, LinkBound)
        );
        // The experiment itself still looks queue-bound: the device took the deeper queue
        // without getting faster.
        assert_eq!(
            decide(QueueDepthBound, QueueDepth, 2.0, QueueDepthBound),
            (Refuted, DeviceBound)
        );
        assert_eq!(
            decide(HostCpuBound, Workers, -3.0, Inconclusive),
            (Refuted, Inconclusive)
        );
        // Larger blocks gave nothing, and the device is still the limit: by its bandwidth,
        // which this experiment cannot tell from its per-I/O limit.
        assert_eq!(
            decide(DeviceBound, BlockSize, 0.0, DeviceBound),
            (Undecided, DeviceBound)
        );
    }

    #[test]
    fn capacity_verdicts_are_confirmed_by_no_gain_and_refuted_by_one() {
        for verdict in [LinkBound, BusBound, DeviceBound, RateLimited] {
            assert_eq!(
                decide(verdict, QueueDepth, 4.9, verdict),
                (Confirmed, verdict)
            );
            assert_eq!(
                decide(verdict, QueueDepth, -20.0, verdict),
                (Confirmed, verdict)
            );
            assert_eq!(
                decide(verdict, QueueDepth, 15.1, verdict),
                (Refuted, QueueDepthBound)
            );
        }
    }

    /// A latency-bound verdict claims no gain from a deeper queue: none confirms it (the far
    /// end serves no more at once), a gain replaces it with queue-depth-bound.
    #[test]
    fn a_deeper_queue_decides_a_latency_bound_verdict() {
        assert_eq!(experiment_for_verdict(LatencyBound), Some(QueueDepth));
        assert_eq!(
            decide(LatencyBound, QueueDepth, -1.0, LatencyBound),
            (Confirmed, LatencyBound)
        );
        assert_eq!(
            decide(LatencyBound, QueueDepth, 41.0, LatencyBound),
            (Refuted, QueueDepthBound)
        );
        let setting = ExperimentSetting {
            experiment: QueueDepth,
            before: 8,
            after: 16,
            ramp_ns: 0,
        };
        assert_eq!(
            summarise(
                setting,
                -1.0,
                Counted::default(),
                LatencyBound,
                Confirmed,
                LatencyBound
            ),
            "QD 16 gave -1 %: not queue-depth-bound; latency-bound, confirmed"
        );
        assert_eq!(
            summarise(
                setting,
                41.0,
                Counted::default(),
                LatencyBound,
                Refuted,
                QueueDepthBound
            ),
            "QD 16 gave +41 %: queue-depth-bound"
        );
    }

    /// The experiment of a test analysed as `verdict`.
    fn experiment_for_verdict(verdict: Verdict) -> Option<Experiment> {
        let mut test = device_bound(None);
        test.analysis.as_mut().unwrap().verdict = verdict;
        experiment_for(&test)
    }

    #[test]
    fn between_the_thresholds_nothing_is_decided() {
        for change in [5.1, 10.0, 14.9] {
            assert_eq!(
                decide(QueueDepthBound, QueueDepth, change, DeviceBound),
                (Undecided, QueueDepthBound)
            );
            assert_eq!(
                decide(LinkBound, QueueDepth, change, LinkBound),
                (Undecided, LinkBound)
            );
        }
    }

    /// A server paced to 20 I/Os a second: the test counted 60 in 3 s at QD 8; QD 16 counted
    /// 21 in its second (+7 %). One I/O more in so short a count is no gain: latency-bound is
    /// confirmed, and the summary says how far counting alone moves the rate. The same +7 %
    /// over thousands of I/Os stays between the thresholds.
    #[test]
    fn a_change_of_one_io_in_a_short_count_is_no_change() {
        let mut tested = device_bound(None);
        tested.analysis.as_mut().unwrap().verdict = LatencyBound;
        tested.total.bytes_per_second = 20.0 * 1048576.0;
        tested.total.io_count = 60;
        let mut experiment = tested.clone();
        experiment.total.bytes_per_second = 1.07 * tested.total.bytes_per_second;
        experiment.total.io_count = 21;
        let setting = ExperimentSetting {
            experiment: QueueDepth,
            before: 8,
            after: 16,
            ramp_ns: 0,
        };
        let found = confirmation(&tested, setting, &experiment, LatencyBound);
        assert_eq!(
            (found.outcome, found.derived_verdict),
            (Confirmed, LatencyBound)
        );
        assert_eq!(
            found.summary,
            "QD 16 gave +7 % (±6 % from counting 21 and 60 I/Os): not queue-depth-bound; \
             latency-bound, confirmed"
        );
        tested.total.io_count = 60_000;
        experiment.total.io_count = 21_000;
        let found = confirmation(&tested, setting, &experiment, LatencyBound);
        assert_eq!(found.outcome, Undecided);
        assert_eq!(
            found.summary,
            "QD 16 gave +7 %: between 5 % and 15 %, latency-bound neither confirmed nor refuted"
        );
        // A real gain still shows through the resolution.
        experiment.total.io_count = 42;
        experiment.total.bytes_per_second = 2.0 * tested.total.bytes_per_second;
        tested.total.io_count = 60;
        let found = confirmation(&tested, setting, &experiment, LatencyBound);
        assert_eq!(
            (found.outcome, found.derived_verdict),
            (Refuted, QueueDepthBound)
        );
    }

    #[test]
    fn an_inconclusive_verdict_is_replaced_only_by_a_gain() {
        assert_eq!(
            decide(Inconclusive, QueueDepth, 40.0, Inconclusive),
            (Refuted, QueueDepthBound)
        );
        assert_eq!(
            decide(Inconclusive, QueueDepth, 1.0, Inconclusive),
            (Undecided, Inconclusive)
        );
    }

    #[test]
    fn summaries_read_as_findings() {
        let setting = |experiment, after| ExperimentSetting {
            experiment,
            before: 8,
            after,
            ramp_ns: 0,
        };
        let line = |verdict, experiment, after, change: f64, found| {
            let (outcome, derived) = decide(verdict, experiment, change, found);
            summarise(
                setting(experiment, after),
                change,
                Counted::default(),
                verdict,
                outcome,
                derived,
            )
        };
        assert_eq!(
            line(QueueDepthBound, QueueDepth, 16, 41.0, QueueDepthBound),
            "QD 16 gave +41 %: queue-depth-bound, confirmed"
        );
        assert_eq!(
            line(QueueDepthBound, QueueDepth, 16, 2.0, QueueDepthBound),
            "QD 16 gave +2 %: not queue-depth-bound; device-bound"
        );
        assert_eq!(
            line(LinkBound, QueueDepth, 16, 0.4, LinkBound),
            "QD 16 gave +0 %: not queue-depth-bound; link-bound, confirmed"
        );
        assert_eq!(
            line(LinkBound, QueueDepth, 64, -0.3, LinkBound),
            "QD 64 gave +0 %: not queue-depth-bound; link-bound, confirmed"
        );
        assert_eq!(
            line(Inconclusive, QueueDepth, 64, -1.0, Inconclusive),
            "QD 64 gave -1 %: not queue-depth-bound; still inconclusive"
        );
        assert_eq!(
            line(Inconclusive, QueueDepth, 2, 98.0, Inconclusive),
            "QD 2 gave +98 %: queue-depth-bound"
        );
        assert_eq!(
            line(DeviceBound, BlockSize, 16384, 280.0, DeviceBound),
            "16.0 KiB blocks gave +280 %: device-bound, confirmed"
        );
        assert_eq!(
            line(HostCpuBound, Workers, 4, 1.0, DeviceBound),
            "4 workers gave +1 %: not host-CPU-bound; device-bound"
        );
    }
}
