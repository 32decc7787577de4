//! The coordinator of one test: while the workers run it publishes a live sample each second,
//! checks the steady-state criterion (and ends the test when it holds), and takes the CPU
//! snapshots at the edges of the measured window.

use super::job_links::TestLinks;
use super::progress::{LiveGroups, LiveSample, WorkerProgress, planned_test_ns};
use super::rendezvous::Rendezvous;
use crate::engine::StopSignal;
use crate::host::clock::{Clock, Ticks};
use crate::host::cpu::CpuSnapshot;
use crate::result::CpuResult;
use crate::workload::TestPlan;
use crate::workload::steady::SteadyMetric;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What the coordinator watches.
pub(super) struct Watch<'a> {
    /// The test being run.
    pub test: &'a TestPlan,
    /// The clock every worker reads.
    pub clock: &'a Clock,
    /// The common start of the workers, a reading of `clock`.
    pub start: Ticks,
    /// The live totals of every worker.
    pub progress: &'a [WorkerProgress],
    /// How many workers have ended.
    pub finished: &'a AtomicU64,
    /// How many workers there are.
    pub thread_count: u64,
    /// The test's links: raising every job's finish flag ends the workers' window when the
    /// test has reached steady state.
    pub links: &'a TestLinks,
    /// Raised when the rendezvous asks the test to stop.
    pub stop: &'a StopSignal,
}

/// CPU used by the process and every core between the edges of the measured window.
pub(super) struct WindowCpu(CpuResult);

impl WindowCpu {
    /// Writes the window's figures (wall time, process time, cores, the busiest other
    /// processes) into `cpu`.
    pub(super) fn apply_to(self, cpu: &mut CpuResult) {
        let WindowCpu(window) = self;
        cpu.wall_ns = window.wall_ns;
        cpu.user_ns = window.user_ns;
        cpu.system_ns = window.system_ns;
        cpu.cores = window.cores;
        cpu.other_processes = window.other_processes;
        cpu.block_devices = window.block_devices;
    }
}

/// What the coordinator measured.
pub(super) struct Watched {
    /// CPU during the window (`None`: the window never began).
    pub cpu: Option<WindowCpu>,
    /// When the steady-state criterion held, ns after the ramp.
    pub steady_after_ns: Option<u64>,
}

/// One CPU snapshot and when it was taken, ns after the start.
type Snapshot = (u64, CpuSnapshot);

fn snapshot(now_ns: u64) -> Snapshot {
    (now_ns, CpuSnapshot::with_processes())
}

/// What a live sample is taken from.
struct Sampling<'a> {
    test: &'a TestPlan,
    progress: &'a [WorkerProgress],
    planned_end: Option<u64>,
    ramp_ns: u64,
}

/// The live sample at `now_ns` (the last one was at `last_ns` with `last_totals`), and the
/// totals it was taken at.
fn live_sample(
    sampling: &Sampling<'_>,
    groups: &mut LiveGroups,
    now_ns: u64,
    last_ns: u64,
    last_totals: (u64, u64, u64),
) -> (LiveSample, (u64, u64, u64)) {
    let seconds = now_ns.saturating_sub(last_ns).max(1) as f64 / 1e9;
    let groups = groups.sample(sampling.progress, seconds);
    // Every worker is in one group: the groups' totals are the test's.
    let totals = groups.iter().flat_map(|group| group.directions()).fold(
        (0, 0, 0),
        |(b, i, l), (_, direction)| {
            let own = direction.totals;
            (b + own.bytes, i + own.io_count, l + own.latency_sum_ns)
        },
    );
    let ios = totals.1.saturating_sub(last_totals.1);
    let sample = LiveSample {
        test_name: sampling.test.name.clone(),
        elapsed_ns: now_ns,
        total_ns: sampling.planned_end,
        ramping: now_ns < sampling.ramp_ns,
        bytes_per_second: totals.0.saturating_sub(last_totals.0) as f64 / seconds,
        iops: ios as f64 / seconds,
        groups,
        last: false,
    };
    (sample, totals)
}

/// The coordinator's loop, until every worker has ended: a live sample each second to
/// `observer` (per job and target as `groups` says), CPU snapshots at the window edges.
/// `rendezvous` is asked at every wake-up whether to stop (a client of a multi-client run was
/// lost, or stopped).
pub(super) fn coordinate(
    watch: &Watch<'_>,
    groups: &mut LiveGroups,
    observer: &mut dyn FnMut(&LiveSample),
    rendezvous: &mut dyn Rendezvous,
) -> Watched {
    let Watch {
        test,
        clock,
        start,
        progress,
        finished,
        thread_count,
        links,
        stop,
    } = *watch;
    let ramp_ns = test
        .jobs
        .iter()
        .map(|job| job.workload.start_delay_ns + job.workload.ramp_ns)
        .min()
        .unwrap_or(0);
    let planned_end = planned_test_ns(test);
    // With a final fdatasync the window ends when the workers do, not at the planned time.
    let window_end_ns =
        planned_end.filter(|_| !test.jobs.iter().any(|job| job.workload.fsync_at_end));
    let sampling = Sampling {
        test,
        progress,
        planned_end,
        ramp_ns,
    };
    let mut window_start_snapshot = None;
    let mut window_end_snapshot = None;
    let mut next_sample_ns = 1_000_000_000u64;
    let mut last_totals = (0u64, 0u64, 0u64);
    let mut steady_samples = Vec::new();
    let mut steady_after_ns = None;
    let mut last_sample_ns = 0u64;
    loop {
        let now_ns = clock.nanos_between(start, clock.now());
        if window_start_snapshot.is_none() && now_ns >= ramp_ns {
            window_start_snapshot = Some(snapshot(now_ns));
        }
        let all_done = finished.load(Ordering::Acquire) == thread_count;
        if window_end_snapshot.is_none()
            && (all_done || window_end_ns.is_some_and(|end| now_ns >= end))
        {
            window_end_snapshot = Some(snapshot(now_ns));
        }
        if all_done {
            // The last figures, from the last sample to the end: the totals then are final.
            if now_ns > last_sample_ns {
                let (mut sample, _) =
                    live_sample(&sampling, groups, now_ns, last_sample_ns, last_totals);
                sample.last = true;
                observer(&sample);
            }
            break;
        }
        if rendezvous.polls() && !stop.is_raised() {
            let (bytes, io_count, _) = WorkerProgress::sum(progress);
            if rendezvous.poll(now_ns, bytes, io_count).is_some() {
                stop.raise();
            }
        }
        if now_ns >= next_sample_ns {
            let (sample, totals) =
                live_sample(&sampling, groups, now_ns, last_sample_ns, last_totals);
            if let Some(criterion) = &test.settings.steady
                && last_sample_ns >= ramp_ns.max(criterion.settle_ns)
                && steady_after_ns.is_none()
            {
                steady_samples.push(match criterion.metric {
                    SteadyMetric::Iops => sample.iops,
                    SteadyMetric::Bandwidth => sample.bytes_per_second,
                    SteadyMetric::Latency => {
                        let ios = totals.1 - last_totals.1;
                        (totals.2 - last_totals.2) as f64 / ios.max(1) as f64
                    }
                });
                if criterion.holds(&steady_samples) {
                    steady_after_ns = Some(now_ns - ramp_ns);
                    links.finish_all();
                }
            }
            observer(&sample);
            last_totals = totals;
            last_sample_ns = now_ns;
            next_sample_ns += 1_000_000_000;
        }
        let mut wake_ns = next_sample_ns;
        if window_start_snapshot.is_none() {
            wake_ns = wake_ns.min(ramp_ns);
        }
        if let (None, Some(end)) = (&window_end_snapshot, window_end_ns) {
            wake_ns = wake_ns.min(end);
        }
        let sleep_ns = wake_ns.saturating_sub(now_ns).clamp(100_000, 20_000_000);
        std::thread::sleep(Duration::from_nanos(sleep_ns));
    }
    let cpu = match (window_start_snapshot, window_end_snapshot) {
        (Some((t0, opened)), Some((t1, closed))) => {
            Some(WindowCpu(closed.used_since(&opened, t1.saturating_sub(t0))))
        }
        _ => None,
    };
    Watched {
        cpu,
        steady_after_ns,
    }
}
