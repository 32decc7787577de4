//! Runs one test: opens a worker per (job, target, worker), starts them together, samples
//! progress and CPU while they run, and merges what they measured per job and for the test.

use super::caches::{invalidates_each_pass, prepare_cache};
use super::coordinator::{Watch, coordinate};
use super::engines::{AnyEngine, Endpoint};
use super::files_on_demand::{on_demand_endpoint, opens_files_on_demand};
use super::job_links::TestLinks;
use super::progress::{LiveGroups, LiveSample, WorkerProgress};
use super::rendezvous::Rendezvous;
use super::start_gate::{GateClosed, StartGate};
use super::target_identity::{KnownBy, identity_of};
use super::thread_start::{ThreadStartError, user_thread_limit};
use super::worker::{TracedIo, WorkerLength, WorkerLinks, WorkerOutcome, WorkerPlan, WorkerVerify};
use super::{PlanError, RunError, TestShape};
use crate::engine::null::InjectedDelay;
use crate::engine::volume::NetworkVolumeInfo;
use crate::engine::{EngineOptions, StopSignal};
use crate::fill::BufferFiller;
use crate::host::clock::Clock;
use crate::host::cpu::host_cpu_count;
use crate::result::io_log::IoLogRecords;
use crate::result::{
    CpuResult, DirectionResult, EngineKind, EngineReport, ErrorCount, ErrorKind, ErrorSummary,
    JobResult, LatencySummary, LatencyTargetResult, RunLength, SteadyOutcome, StopReason,
    TargetInfo, TestResult, VerificationResult,
};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::recorder::{DirectionRecorder, SplitHistograms};
use crate::stats::series::merge_series;
use crate::targets::TargetHandle;
use crate::targets::network_target::NetworkTarget;
use crate::targets::open::{CheckedPath, OpenRequest};
use crate::verify::header::BlockFormat;
use crate::verify::ledger::Ledger;
use crate::verify::log::VerifyPolicy;
use crate::verify::state::VerifyState;
use crate::verify::target_identity::TargetIdentity;
use crate::workload::file_set::FileSetPlanner;
use crate::workload::offset_rules::{clone_of_worker, clone_region};
use crate::workload::planner::{IoPlanner, worker_seed};
use crate::workload::verify_settings;
use crate::workload::{JobPlan, TestPlan};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Longest wait for every worker thread to be ready, and then for the start: a thread that
/// does not come in this time ends the test with an error naming the wait.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A target ready for a test.
#[derive(Debug)]
pub struct PreparedTarget {
    /// Index in the run's target list.
    pub index: usize,
    /// Path (or URL) for messages.
    pub path: PathBuf,
    /// What was found about it.
    pub info: TargetInfo,
    /// How workers reach it.
    pub access: TargetAccess,
    /// What the probe found about a network volume (its head left empty): every engine's
    /// connections must find the same.
    pub probed: Option<NetworkVolumeInfo>,
}

/// How workers reach a target.
#[derive(Debug)]
pub enum TargetAccess {
    /// A local file or block device, checked before the run: every worker's descriptor is a
    /// re-open of it, through the descriptor of its checks, or (a file that gave that back)
    /// by its path, refused unless it is the checked file.
    Local(TargetHandle),
    /// A network volume, reached by its protocol's engine.
    Network(NetworkTarget),
    /// Nothing: a test file left uncreated because only the null engine uses it, or a path
    /// the file-operation engines work on by name (no descriptor of it is held in the run).
    Nothing,
}

impl PreparedTarget {
    /// What tells this target from any other of its size, for verify states.
    pub fn identity(&self) -> TargetIdentity {
        let known_by = match &self.access {
            TargetAccess::Local(handle) => KnownBy::Local(handle.identity()),
            TargetAccess::Network(_) => KnownBy::Network(
                self.probed
                    .as_ref()
                    .and_then(|probed| probed.file_handle.as_deref()),
            ),
            TargetAccess::Nothing => KnownBy::Name,
        };
        identity_of(
            self.path.display().to_string(),
            self.info.size_bytes,
            known_by,
        )
    }

    /// The network volume, for targets reached by a protocol engine.
    pub fn network(&self) -> Option<&NetworkTarget> {
        match &self.access {
            TargetAccess::Network(network) => Some(network),
            TargetAccess::Local(_) | TargetAccess::Nothing => None,
        }
    }
}

/// What the runner needs besides the test and its targets.
pub struct TestContext<'a> {
    /// The run's clock.
    pub clock: &'a Clock,
    /// Raised on Ctrl-C and SIGTERM, and by a worker that failed.
    pub stop: &'a StopSignal,
    /// Series interval, ns.
    pub interval_ns: u64,
    /// Longest wait on a network server (connect and handshake; each reply).
    pub net_timeout: Duration,
    /// Latency injected into null-engine I/Os (tests).
    pub null_delay: Option<InjectedDelay>,
    /// Record every issued I/O.
    pub trace: bool,
    /// Stamp written blocks with their offsets.
    pub stamp_writes: bool,
    /// This run's id, in the header of every block it writes when verifying.
    pub verify_run_id: u64,
    /// Receives a live sample once a second.
    pub observer: &'a mut dyn FnMut(&LiveSample),
    /// Where the test meets the other clients of a multi-client run (the common start, a
    /// stop from outside).
    pub rendezvous: &'a mut dyn Rendezvous,
}

/// A finished test, with the issued I/O of every worker when tracing.
pub struct TestRun {
    /// The result.
    pub result: TestResult,
    /// Issued I/Os per worker thread (empty unless tracing).
    pub traces: Vec<Vec<TracedIo>>,
    /// What each worker thread kept for its job's log files, with the job's index.
    pub io_logs: Vec<(usize, IoLogRecords)>,
}

struct WorkerSlot {
    job: usize,
    /// What the live views call the worker's target (set of files).
    target_label: String,
    engine: AnyEngine,
    plan: WorkerPlan,
    /// CPUs the worker thread runs on (empty: any).
    cpus: Vec<u32>,
}

/// What a job opened: its engine description and whether O_DIRECT held everywhere.
struct JobSetup {
    engine: EngineReport,
    direct: bool,
    warnings: Vec<String>,
}

/// Runs `test` with the shapes of its jobs (same order as `test.jobs`) on `targets` (the run's
/// whole target list). `None` when a stop request came while the workers were being opened:
/// the test did not start.
pub fn run_test(
    test: &TestPlan,
    shapes: &[TestShape],
    targets: &[PreparedTarget],
    context: TestContext<'_>,
) -> Result<Option<TestRun>, RunError> {
    let clock = context.clock;
    let thread_count: usize = test
        .jobs
        .iter()
        .zip(shapes)
        .map(|(job, shape)| job.worker_threads(shape.workers_per_target))
        .sum();
    let mut workers = Vec::with_capacity(thread_count);
    let mut setups = Vec::with_capacity(test.jobs.len());
    for (job_index, (job, shape)) in test.jobs.iter().zip(shapes).enumerate() {
        match open_job(job_index, job, shape, targets, &context, &mut workers)? {
            Some(setup) => setups.push(setup),
            None => return Ok(None),
        }
    }

    // One pacer per job (its rate caps hold over all its workers together), the flows, and
    // the flags that end a job's window.
    let job_workers: Vec<u64> = (0..test.jobs.len())
        .map(|job| workers.iter().filter(|worker| worker.job == job).count() as u64)
        .collect();
    let links = TestLinks::new(test, &job_workers);
    let mut live_groups = live_groups(test, &workers);
    let pin_failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let progress: Vec<WorkerProgress> = (0..thread_count)
        .map(|_| WorkerProgress::default())
        .collect();
    let ready = StartGate::new(thread_count + 1, "every worker thread to be ready");
    let go = StartGate::new(thread_count + 1, "the start of the test");
    let start_tick = AtomicU64::new(0);
    let error_stop = AtomicBool::new(false);
    let outcomes: Mutex<Vec<Option<(usize, WorkerOutcome)>>> =
        Mutex::new((0..thread_count).map(|_| None).collect());
    let finished = AtomicU64::new(0);
    // Engines whose drop works on the target, dropped after the scope (after every worker).
    let finishing: Mutex<Vec<AnyEngine>> = Mutex::new(Vec::new());
    let mut cpu = CpuResult {
        cpu_count: host_cpu_count(),
        ..CpuResult::default()
    };
    let observer = context.observer;
    let rendezvous = context.rendezvous;
    let keep_buckets = rendezvous.keeps_interval_buckets();
    let mut steady = SteadyOutcome {
        criterion: test
            .settings
            .steady
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        attained_after_ns: None,
    };
    let interval_ns = context.interval_ns;

    let start_failure = std::thread::scope(|scope| {
        for (index, mut worker) in workers.into_iter().enumerate() {
            let (ready, go, start_tick, progress) = (&ready, &go, &start_tick, &progress[index]);
            let (stop, error_stop, outcomes, finished, links, pin_failures, finishing) = (
                context.stop.flag(),
                &error_stop,
                &outcomes,
                &finished,
                &links,
                &pin_failures,
                &finishing,
            );
            let spawned = std::thread::Builder::new()
                .name(format!("iopath-worker-{index}"))
                .spawn_scoped(scope, move || {
                    if let Err(reason) = crate::host::sys::pin_current_thread(&worker.cpus) {
                        pin_failures
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(format!(
                                "a worker could not be pinned to its CPUs: {reason}"
                            ));
                    }
                    let started = ready
                        .wait(stop, START_TIMEOUT)
                        .and_then(|()| go.wait(stop, START_TIMEOUT));
                    let outcome = match started {
                        Ok(()) => {
                            let start = start_tick.load(Ordering::Acquire);
                            let worker_links = WorkerLinks {
                                stop,
                                error_stop,
                                progress,
                                finish: links.finish(worker.job),
                                pacer: links.pacer(worker.job),
                                flow: links.flow(worker.job),
                            };
                            worker.engine.run(worker.plan, worker_links, clock, start)
                        }
                        // Stopped before the start: the test ends as interrupted, empty.
                        Err(GateClosed::Stopped { .. }) => {
                            WorkerOutcome::not_started(StopReason::Interrupted, interval_ns)
                        }
                        // The start was called off; the coordinator says why.
                        Err(_) => return,
                    };
                    if worker.engine.finishes_on_drop() {
                        finishing
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(worker.engine);
                    } else {
                        drop(worker.engine);
                    }
                    links.worker_ended(worker.job, outcome.stop_reason == StopReason::Error);
                    outcomes.lock().unwrap_or_else(|e| e.into_inner())[index] =
                        Some((worker.job, outcome));
                    finished.fetch_add(1, Ordering::Release);
                });
            if let Err(source) = spawned {
                // The threads already created are waiting at `ready`: release them unstarted.
                ready.close();
                return Some(RunError::Threads(ThreadStartError {
                    asked: thread_count,
                    started: index,
                    user_limit: user_thread_limit(),
                    source,
                }));
            }
        }
        let started = ready
            .wait(context.stop.flag(), START_TIMEOUT)
            .map_err(RunError::Start)
            .and_then(|()| {
                rendezvous.start_together(clock).map_err(|reason| {
                    // The workers waiting at `go` are released unstarted.
                    go.close();
                    RunError::Together(reason)
                })
            })
            .and_then(|start| {
                start_tick.store(start, Ordering::Release);
                go.wait(context.stop.flag(), START_TIMEOUT)
                    .map(|()| start)
                    .map_err(RunError::Start)
            });
        match started {
            Ok(start) => {
                let watch = Watch {
                    test,
                    clock,
                    start,
                    progress: &progress,
                    finished: &finished,
                    thread_count: thread_count as u64,
                    links: &links,
                    stop: context.stop,
                };
                let watched = coordinate(&watch, &mut live_groups, observer, rendezvous);
                if let Some(window) = watched.cpu {
                    window.apply_to(&mut cpu);
                }
                steady.attained_after_ns = watched.steady_after_ns;
                None
            }
            Err(RunError::Start(GateClosed::Stopped { .. })) => None,
            Err(error) => Some(error),
        }
    });
    // Every worker has ended: what the engines do as they go (marking the files `filecreate`
    // made) is measured by none of them.
    drop(finishing);
    if let Some(error) = start_failure {
        return Err(error);
    }

    let outcomes: Vec<(usize, WorkerOutcome)> = outcomes
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|outcome| outcome.ok_or(RunError::Start(GateClosed::Closed)))
        .collect::<Result<_, _>>()?;
    let mut result = merge_test(test, shapes, setups, &outcomes, cpu, targets, keep_buckets);
    for failure in pin_failures.into_inner().unwrap_or_else(|e| e.into_inner()) {
        if !result.warnings.contains(&failure) {
            result.warnings.push(failure);
        }
    }
    result.sweep = test.settings.sweep.clone();
    result.steady_state = test.settings.steady.as_ref().map(|_| steady);
    let mut traces = Vec::with_capacity(outcomes.len());
    let mut io_logs = Vec::with_capacity(outcomes.len());
    for (job, outcome) in outcomes {
        traces.push(outcome.trace);
        io_logs.push((job, outcome.io_log));
    }
    Ok(Some(TestRun {
        result,
        traces,
        io_logs,
    }))
}

/// What re-opens each of `set_targets`, local files of `job`, by its path.
fn checked_paths(
    job: &JobPlan,
    set_targets: &[&PreparedTarget],
) -> Result<Vec<CheckedPath>, RunError> {
    set_targets
        .iter()
        .map(|target| match &target.access {
            TargetAccess::Local(handle) => Ok(handle.checked_path()),
            TargetAccess::Network(network) => Err(RunError::from(PlanError::NetworkInFileSet {
                job: job.name.clone(),
                target: network.to_string(),
            })),
            // Left uncreated: only the null engine was to use it.
            TargetAccess::Nothing => Err(RunError::from(crate::targets::TargetError::Missing {
                path: target.path.clone(),
            })),
        })
        .collect()
}

/// How a worker of `workload` opens its files.
fn open_request(workload: &crate::result::Workload) -> OpenRequest {
    OpenRequest {
        write: workload.modifies(),
        direct: !workload.buffered,
        dsync: workload.sync_writes,
    }
}

/// The warning that O_DIRECT was refused on `target` and its I/O goes through the page cache.
fn buffered_fallback(target: &PreparedTarget) -> String {
    format!(
        "{}: O_DIRECT is not supported here; running buffered (page cache in the path)",
        target.path.display()
    )
}

/// The region of the `index`-th file of a set.
fn target_region(regions: &[(u64, u64)], index: usize) -> (u64, u64) {
    regions.get(index).copied().unwrap_or((0, 0))
}

/// What the live views call a set of targets: the first, and how many more.
fn target_label(targets: &[&PreparedTarget]) -> String {
    let first = targets
        .first()
        .map(|target| target.path.display().to_string())
        .unwrap_or_default();
    match targets.len() {
        0 | 1 => first,
        count => format!("{first} (+{} more)", count - 1),
    }
}

/// One live group per job and target, in the order the workers were opened.
fn live_groups(test: &TestPlan, workers: &[WorkerSlot]) -> LiveGroups {
    let mut names: Vec<(String, String)> = Vec::new();
    let worker_group = workers
        .iter()
        .map(|worker| {
            let name = (
                test.jobs[worker.job].name.clone(),
                worker.target_label.clone(),
            );
            names
                .iter()
                .position(|known| *known == name)
                .unwrap_or_else(|| {
                    names.push(name);
                    names.len() - 1
                })
        })
        .collect();
    LiveGroups::new(names, worker_group)
}

/// Opens every worker of one job (files, engines, planners) before the clock starts; `None`
/// when a stop request comes first (a job may have thousands of workers).
fn open_job(
    job_index: usize,
    job: &JobPlan,
    shape: &TestShape,
    targets: &[PreparedTarget],
    context: &TestContext<'_>,
    workers: &mut Vec<WorkerSlot>,
) -> Result<Option<JobSetup>, RunError> {
    let workload = &job.workload;
    // Each set of files is worked by `threads_per_set` workers, each moving over all of them.
    let threads_per_set = shape.workers_per_target;
    let job_threads = job.worker_threads(threads_per_set);
    let job_options = EngineOptions {
        write_through: workload.sync_writes,
        connections: workload.connections.max(1),
        net_timeout: context.net_timeout,
        stop: context.stop.clone(),
        force_async_every: workload.handling.force_async_every,
        data_path: workload.handling.data_path,
        stat_call: workload.handling.stat_call,
        ..shape.engine_options()
    };
    let mut warnings = shape.warnings.clone();
    let mut direct = !workload.buffered;
    let mut engine_report = None;
    let mut job_thread = 0u32;
    for file_set in job.file_sets() {
        let set_targets: Vec<&PreparedTarget> =
            file_set.iter().map(|&index| &targets[index]).collect();
        let first = set_targets[0];
        let options = EngineOptions {
            expected_volume: first.probed.clone(),
            ..job_options.clone()
        };
        for worker_index in 0..threads_per_set {
            if context.stop.is_raised() {
                return Ok(None);
            }
            let clone = clone_of_worker(worker_index, threads_per_set, workload.workers);
            // A replaying worker issues its clone's trace once: its own bytes, I/O count and,
            // from its own capture, queue depth.
            let replay = job.replay.as_ref().map(|traces| traces.of_clone(clone));
            let shape = &match job.replay.as_ref().and_then(|t| t.depth_of_clone(clone)) {
                Some(depth) if !shape.depth_as_workers => shape.at_most_deep(depth),
                _ => shape.clone(),
            };
            let options = EngineOptions {
                queue_depth: shape.queue_depth(),
                ..options.clone()
            };
            // One file operation per I/O: no data moves, no file is opened before the run.
            let file_operations = shape.engine.is_file_operation();
            let regions = set_targets
                .iter()
                .map(|target| {
                    if file_operations {
                        // One operation per file and pass: each file's region is one block.
                        return Ok((0, workload.access.max_size_bytes()));
                    }
                    clone_region(
                        workload.region_offset_bytes,
                        workload.region_size_bytes,
                        &workload.offsets,
                        target.info.size_bytes,
                        clone,
                    )
                    .ok_or_else(|| {
                        RunError::from(PlanError::CloneRegion {
                            target: target.path.display().to_string(),
                            clone,
                        })
                    })
                })
                .collect::<Result<Vec<(u64, u64)>, RunError>>()?;
            let fill_plan = workload.write_data.fill_plan(
                workload.access.min_write_size_bytes(),
                regions.iter().map(|&(_, size)| size).sum(),
            );
            let mut invalidate_each_pass = false;
            let (endpoint, kind) = match &first.access {
                TargetAccess::Network(network) => {
                    let kind = if shape.engine == EngineKind::Null {
                        EngineKind::Null
                    } else {
                        network.engine_kind()
                    };
                    (Endpoint::Network(network), kind)
                }
                _ if file_operations => (
                    Endpoint::Paths(set_targets.iter().map(|t| t.path.clone()).collect()),
                    shape.engine,
                ),
                TargetAccess::Nothing => (Endpoint::Nothing, EngineKind::Null),
                TargetAccess::Local(_) if opens_files_on_demand(job, shape.engine) => {
                    let checked = checked_paths(job, &set_targets)?;
                    let (endpoint, opened_direct) =
                        on_demand_endpoint(job, checked, &regions, open_request(workload))?;
                    if !workload.buffered && !opened_direct && direct {
                        warnings.push(buffered_fallback(first));
                    }
                    direct &= opened_direct;
                    (endpoint, shape.engine)
                }
                TargetAccess::Local(_) => {
                    let mut files = Vec::with_capacity(set_targets.len());
                    for target in &set_targets {
                        let handle = match &target.access {
                            TargetAccess::Local(handle) => handle,
                            // An uncreated file of a null-engine job: nothing to open.
                            TargetAccess::Nothing => continue,
                            TargetAccess::Network(network) => {
                                return Err(PlanError::NetworkInFileSet {
                                    job: job.name.clone(),
                                    target: network.to_string(),
                                }
                                .into());
                            }
                        };
                        let opened = handle.reopen(open_request(workload))?;
                        if !workload.buffered && !opened.direct && direct {
                            warnings.push(buffered_fallback(target));
                        }
                        direct &= opened.direct;
                        if let Err(error) = prepare_cache(
                            &opened.file,
                            workload,
                            target_region(&regions, files.len()),
                        ) {
                            let warning = format!(
                                "{}: the page-cache advice (posix_fadvise) was refused: {error}",
                                target.path.display()
                            );
                            if !warnings.contains(&warning) {
                                warnings.push(warning);
                            }
                        }
                        files.push(opened.file);
                    }
                    invalidate_each_pass = invalidates_each_pass(workload, set_targets.len());
                    (Endpoint::Files(files), shape.engine)
                }
            };
            let mut engine =
                AnyEngine::open(kind, endpoint, &options, context.null_delay, context.clock)
                    .map_err(|source| RunError::Engine {
                        target: first.path.display().to_string(),
                        source,
                    })?;
            if let Some(warning) = engine.slot_warning(&first.path.display().to_string())
                && !warnings.contains(&warning)
            {
                warnings.push(warning);
            }
            if engine_report.is_none() {
                let (name, capabilities) = engine.describe();
                let connections = engine.connections(options.connections);
                if let Some(note) = connections.as_ref().and_then(|c| c.note.clone())
                    && !warnings.contains(&note)
                {
                    warnings.push(note);
                }
                engine_report = Some(EngineReport {
                    name: name.to_string(),
                    capabilities,
                    write_stability: engine
                        .write_stability(workload.fsync_at_end)
                        .filter(|_| workload.writes()),
                    connections,
                });
            }
            let mut data = BufferFiller::new(
                fill_plan,
                worker_seed(workload.seed ^ 0x5752_4954, job_thread),
            );
            if workload.writes() {
                let engine = engine.as_engine();
                for slot in 0..shape.queue_depth() as usize {
                    data.fill(engine.buffer_mut(slot));
                }
            }
            let mut length = match workload.length {
                RunLength::Time { duration_ns } => WorkerLength::Time {
                    ramp_ns: workload.ramp_ns,
                    duration_ns,
                },
                RunLength::Bytes { time_limit_ns, .. } if file_operations => WorkerLength::Bytes {
                    // One pass: one operation on each of the worker's files.
                    bytes: set_targets.len() as u64 * workload.access.max_size_bytes(),
                    time_limit_ns,
                    ramp_ns: workload.ramp_ns,
                },
                RunLength::Bytes {
                    bytes,
                    time_limit_ns,
                } => WorkerLength::Bytes {
                    bytes: byte_share(
                        bytes,
                        workload.access.single_size(),
                        job_thread,
                        job_threads as u32,
                    ),
                    time_limit_ns,
                    ramp_ns: workload.ramp_ns,
                },
            };
            if let (Some(trace), WorkerLength::Bytes { bytes, .. }) = (&replay, &mut length) {
                *bytes = trace.byte_budget(workload.access.max_size_bytes());
            }
            let io_limit = replay
                .as_ref()
                .map_or(workload.io_limit, |trace| Some(trace.ios.len() as u64));
            let planners = regions
                .iter()
                .enumerate()
                .map(|(file, &(region_start, region_size))| {
                    IoPlanner::new(
                        workload,
                        region_start,
                        region_size,
                        worker_index,
                        threads_per_set,
                    )
                    .for_file(file as u32)
                })
                .collect();
            let mut planner = FileSetPlanner::new(
                planners,
                &workload.worker_files,
                worker_seed(workload.seed, job_thread),
                matches!(workload.length, RunLength::Time { .. }),
            );
            if let Some(trace) = replay {
                planner = planner.replaying(trace);
            }
            let identities: Vec<TargetIdentity> =
                set_targets.iter().map(|target| target.identity()).collect();
            let verify = worker_verify(
                job,
                job_thread,
                (&regions, &identities),
                kind,
                context.verify_run_id,
            )?;
            let controls = &workload.controls;
            let io_log = super::worker::io_log::plan_for(
                controls.logs.as_ref(),
                length,
                io_limit,
                planner.smallest_io_bytes(),
            );
            workers.push(WorkerSlot {
                job: job_index,
                target_label: target_label(&set_targets),
                engine,
                cpus: controls.cpus_of_worker(job_thread),
                plan: WorkerPlan {
                    target_paths: set_targets
                        .iter()
                        .map(|target| target.path.display().to_string())
                        .collect(),
                    target_indexes: file_set.iter().map(|&index| index as u32).collect(),
                    // A clone with a region of its own starts at its beginning, as in fio.
                    planner: if workload.offsets.clone_increment_bytes > 0 {
                        planner.starting_at_region_start()
                    } else {
                        planner
                    },
                    shape: shape.clone(),
                    length,
                    fsync_at_end: workload.fsync_at_end,
                    continue_on_error: workload.continue_on_error,
                    error_policy: workload.error_policy.clone(),
                    invalidate_each_pass,
                    interval_ns: context.interval_ns,
                    trace: context.trace,
                    io_log,
                    stamp_writes: context.stamp_writes,
                    data,
                    start_delay_ns: controls.start_delay_of_worker(
                        workload.start_delay_ns,
                        workload.seed,
                        job_thread,
                    ),
                    io_limit,
                    fsync_every_writes: workload.fsync_every_writes,
                    // io_uring starts each request as it is queued (one enter per request, as
                    // fio does by default); protocol engines send a whole refill at once.
                    submit_batch: if kind == EngineKind::IoUring { 1 } else { 0 },
                    latency_target: controls.latency_target,
                    flow_weight: controls.flow.map_or(0, |flow| u64::from(flow.weight)),
                    flow_sleep_ns: controls.flow.map_or(0, |flow| flow.sleep_ns),
                    verify,
                    empty_reads_complete: workload.handling.create_on_open
                        && kind == EngineKind::IoUring,
                    moves_no_bytes: file_operations,
                    serialize_overlap: workload.handling.serialize_overlap,
                },
            });
            job_thread += 1;
        }
    }
    // Network volumes have no page cache in front of them: their I/O is always direct.
    if job
        .targets
        .iter()
        .all(|&index| targets[index].network().is_some())
    {
        direct = true;
    }
    Ok(Some(JobSetup {
        engine: engine_report.unwrap_or(EngineReport {
            name: shape.engine.name().to_string(),
            capabilities: Default::default(),
            write_stability: None,
            connections: None,
        }),
        direct,
        warnings,
    }))
}

/// The verification of worker `job_thread` of `job` on `regions` of the targets `identities`
/// (`None` when the job does not verify): its format, an empty ledger or the state an earlier
/// run saved for those targets, where to save its own.
fn worker_verify(
    job: &JobPlan,
    job_thread: u32,
    (regions, identities): (&[(u64, u64)], &[TargetIdentity]),
    engine: EngineKind,
    run_id: u64,
) -> Result<Option<WorkerVerify>, RunError> {
    let workload = &job.workload;
    let Some(settings) = &workload.verify else {
        return Ok(None);
    };
    let interval = verify_settings::interval_bytes(workload);
    let ledger = Ledger::new(interval, regions).map_err(|error| PlanError::Verify {
        job: job.name.clone(),
        problem: error.to_string(),
    })?;
    let state_path = super::prepare::verify_state_path(&job.name, job_thread);
    let (ledger, ledger_run) = if settings.state_load {
        let state = VerifyState::load(&state_path, identities, &ledger).map_err(|error| {
            PlanError::Verify {
                job: job.name.clone(),
                problem: error.to_string(),
            }
        })?;
        (state.ledger, state.run_id)
    } else {
        (ledger, run_id)
    };
    Ok(Some(WorkerVerify {
        format: BlockFormat::new(
            settings.kind,
            interval as usize,
            settings.header_offset_bytes as usize,
            settings.pattern.as_ref().map(|p| p.bytes().to_vec()),
        ),
        run_id,
        ledger,
        ledger_run,
        after_writes: settings.after_writes && workload.modifies(),
        time_based: matches!(workload.length, RunLength::Time { .. }),
        only: settings.only,
        // fio's continue_on_error=verify (or an ignore_error list naming EILSEQ) keeps a
        // verify_fatal job going.
        policy: VerifyPolicy {
            stop_at_first: settings.fatal
                && !(workload.continue_on_error
                    || workload
                        .error_policy
                        .continues(ErrorKind::Verify, crate::result::error_policy::EILSEQ)),
        },
        state_save: settings.state_save.then_some(state_path),
        targets: identities.to_vec(),
        checks_data: engine != EngineKind::Null,
        backlog_writes: settings.backlog_writes.filter(|_| workload.writes()),
        trim: settings.trim.filter(|_| workload.writes()),
        trim_seed: worker_seed(workload.seed, job_thread) ^ 0x7452_494d,
    }))
}

/// What every worker's verification found together (`None` when none verified).
fn merged_verification<'a>(
    outcomes: impl Iterator<Item = &'a WorkerOutcome>,
) -> Option<VerificationResult> {
    let mut merged: Option<VerificationResult> = None;
    for found in outcomes.filter_map(|o| o.verification.as_ref()) {
        match &mut merged {
            None => merged = Some(found.clone()),
            Some(merged) => merged.absorb(found),
        }
    }
    merged
}

/// Bytes of a `--bytes` total that worker `index` of `count` issues: whole blocks when the
/// block size is single, the remainder going to the first workers.
fn byte_share(total: u64, single_block: Option<u64>, index: u32, count: u32) -> u64 {
    let unit = single_block.unwrap_or(1).max(1);
    let units = total / unit;
    let count = count.max(1) as u64;
    let base = units / count;
    let extra = u64::from((index as u64) < units % count);
    (base + extra) * unit
}

/// One direction of `recorders` over `measured_ns` (`keep_buckets`: see [`merge_series`]).
fn direction_result(
    recorders: &[&DirectionRecorder],
    measured_ns: u64,
    keep_buckets: bool,
) -> DirectionResult {
    let mut histogram = LatencyHistogram::new();
    let mut bytes = 0;
    let mut error_count = 0;
    for recorder in recorders {
        histogram.merge(&recorder.histogram);
        bytes += recorder.bytes;
        error_count += recorder.error_count;
    }
    let series: Vec<_> = recorders.iter().map(|r| &r.series).collect();
    let seconds = measured_ns as f64 / 1e9;
    let io_count = histogram.count();
    DirectionResult {
        io_count,
        bytes,
        iops: if seconds > 0.0 {
            io_count as f64 / seconds
        } else {
            0.0
        },
        bytes_per_second: if seconds > 0.0 {
            bytes as f64 / seconds
        } else {
            0.0
        },
        latency: LatencySummary::from_histogram(&histogram),
        error_count,
        series: merge_series(&series, measured_ns, keep_buckets),
        histogram: histogram.to_sparse(),
        split: SplitHistograms::merged(recorders.iter().filter_map(|r| r.split.as_ref()))
            .map(|split| split.to_result()),
    }
}

/// The figures of each direction of a set of worker outcomes, over `measured_ns`.
struct Directions {
    read: DirectionResult,
    write: DirectionResult,
    trim: DirectionResult,
    /// Reads and writes together (trims move no data over the path).
    total: DirectionResult,
}

/// Read, write, trim, and reads and writes together of a set of worker outcomes, over
/// `measured_ns` (`keep_buckets`: see [`merge_series`]).
fn directions(outcomes: &[&WorkerOutcome], measured_ns: u64, keep_buckets: bool) -> Directions {
    let reads: Vec<_> = outcomes.iter().map(|o| &o.read).collect();
    let writes: Vec<_> = outcomes.iter().map(|o| &o.write).collect();
    let trims: Vec<_> = outcomes.iter().map(|o| &o.trim).collect();
    let both: Vec<_> = reads.iter().chain(writes.iter()).copied().collect();
    Directions {
        read: direction_result(&reads, measured_ns, keep_buckets),
        write: direction_result(&writes, measured_ns, keep_buckets),
        trim: direction_result(&trims, measured_ns, keep_buckets),
        total: direction_result(&both, measured_ns, keep_buckets),
    }
}

fn worst_stop_reason<'a>(outcomes: impl Iterator<Item = &'a WorkerOutcome>) -> StopReason {
    let mut reason = StopReason::Completed;
    for outcome in outcomes {
        match outcome.stop_reason {
            StopReason::Error => return StopReason::Error,
            StopReason::Interrupted => reason = StopReason::Interrupted,
            StopReason::Completed => {}
        }
    }
    reason
}

fn error_summary<'a>(
    outcomes: impl Iterator<Item = &'a WorkerOutcome>,
    count: u64,
) -> ErrorSummary {
    let outcomes: Vec<&WorkerOutcome> = outcomes.collect();
    let mut by_kind: Vec<ErrorCount> = Vec::new();
    for counted in outcomes.iter().flat_map(|o| &o.error_counts) {
        crate::result::error_policy::add_error_count(&mut by_kind, counted);
    }
    ErrorSummary {
        count,
        first: outcomes
            .iter()
            .flat_map(|o| o.errors.iter().cloned())
            .take(16)
            .collect(),
        by_kind,
    }
}

/// What the latency-target search of a job found: each worker's depth, whether the target
/// held at all of them, and the IOPS of the final windows (the job's measured figures).
fn latency_outcome(
    workload: &crate::result::Workload,
    outcomes: &[&WorkerOutcome],
    iops: f64,
) -> Option<LatencyTargetResult> {
    let target = workload.controls.latency_target?;
    let depths: Vec<(u32, bool)> = outcomes.iter().filter_map(|o| o.latency_depth).collect();
    Some(LatencyTargetResult {
        target_ns: target.target_ns,
        window_ns: target.window_ns,
        percentile: target.percentile,
        depths: depths.iter().map(|(depth, _)| *depth).collect(),
        met: depths.iter().all(|(_, met)| *met),
        iops,
    })
}

fn merge_test(
    test: &TestPlan,
    shapes: &[TestShape],
    setups: Vec<JobSetup>,
    outcomes: &[(usize, WorkerOutcome)],
    mut cpu: CpuResult,
    targets: &[PreparedTarget],
    keep_buckets: bool,
) -> TestResult {
    let mut warnings = Vec::new();
    let mut jobs = Vec::with_capacity(test.jobs.len());
    for (job_index, ((job, shape), setup)) in test.jobs.iter().zip(shapes).zip(setups).enumerate() {
        let mine: Vec<&WorkerOutcome> = outcomes
            .iter()
            .filter(|(job, _)| *job == job_index)
            .map(|(_, outcome)| outcome)
            .collect();
        let measured_ns = mine.iter().map(|o| o.window_end_ns).max().unwrap_or(0);
        let Directions {
            read,
            write,
            trim,
            total,
        } = directions(
            &mine,
            measured_ns,
            // A test of one job has that job's series: its buckets travel once.
            keep_buckets && test.jobs.len() > 1,
        );
        for warning in setup.warnings {
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
        for failure in mine.iter().filter_map(|o| o.verify_failure.as_ref()) {
            let failure = format!("verification: {failure}");
            if !warnings.contains(&failure) {
                warnings.push(failure);
            }
        }
        if job.workload.verify.is_some() && setup.engine.name == "null" {
            let note = "verification: the null engine moves no data; headers were written, no read was checked".to_string();
            if !warnings.contains(&note) {
                warnings.push(note);
            }
        }
        for failure in mine.iter().filter_map(|o| o.engine_failure.as_ref()) {
            let failure = failure.to_string();
            if !warnings.contains(&failure) {
                warnings.push(failure);
            }
        }
        let mut workload = job.workload.clone();
        if workload.region_size_bytes.is_none()
            && let [only] = job.targets.as_slice()
        {
            workload.region_size_bytes =
                Some(targets[*only].info.size_bytes - workload.region_offset_bytes);
        }
        jobs.push(JobResult {
            name: job.name.clone(),
            group: job.group,
            workload,
            target_indexes: job.targets.clone(),
            engine: setup.engine,
            direct: setup.direct,
            worker_threads: mine.len() as u32,
            queue_depth_per_worker: shape.queue_depth(),
            ramp_ns: job.workload.ramp_ns,
            measured_ns,
            fsync_ns: mine.iter().map(|o| o.fsync_ns).max().unwrap_or(0),
            stop_reason: worst_stop_reason(mine.iter().copied()),
            errors: error_summary(mine.iter().copied(), total.error_count + trim.error_count),
            latency_target: latency_outcome(&job.workload, &mine, total.iops),
            verification: merged_verification(mine.iter().copied()),
            read,
            write,
            trim,
            total,
        });
    }
    let everyone: Vec<&WorkerOutcome> = outcomes.iter().map(|(_, o)| o).collect();
    let trace_overflow_ios = everyone.iter().map(|o| o.trace_overflow_ios).sum();
    if trace_overflow_ios > 0 {
        warnings.push(format!(
            "the I/O trace is incomplete: {trace_overflow_ios} issued I/Os did not fit in the room reserved before the start"
        ));
    }
    let measured_ns = jobs.iter().map(|j| j.measured_ns).max().unwrap_or(0);
    let Directions {
        read,
        write,
        trim,
        total,
    } = directions(&everyone, measured_ns, keep_buckets);
    cpu.busiest_thread_ns = everyone.iter().map(|o| o.thread_cpu_ns).max().unwrap_or(0);
    cpu.busiest_thread_cpu_wait_ns = everyone
        .iter()
        .map(|o| o.thread_cpu_wait_ns)
        .max()
        .unwrap_or(0);
    if cpu.wall_ns == 0 {
        cpu.wall_ns = measured_ns;
    }
    TestResult {
        name: test.name.clone(),
        measured_ns,
        stop_reason: worst_stop_reason(everyone.iter().copied()),
        errors: error_summary(
            everyone.iter().copied(),
            total.error_count + trim.error_count,
        ),
        jobs,
        read,
        write,
        trim,
        total,
        cpu,
        warnings,
        sweep: Vec::new(),
        steady_state: None,
        analysis: None,
        trace_overflow_ios,
        verification: merged_verification(everyone.iter().copied()),
        server_metrics: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::suite::base_workload;

    #[test]
    fn trace_overflow_reaches_the_result_and_its_warnings() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("target");
        std::fs::write(&path, vec![0u8; 1 << 20]).unwrap();
        let handle = TargetHandle::open(&path).unwrap();
        let target = PreparedTarget {
            index: 0,
            path: path.clone(),
            info: handle.info().clone(),
            access: TargetAccess::Local(handle),
            probed: None,
        };
        let test = TestPlan::single("traced", base_workload(), vec![0]);
        let shapes: Vec<TestShape> = test
            .jobs
            .iter()
            .map(|job| TestShape::of(job, None))
            .collect();
        let setup = JobSetup {
            engine: EngineReport {
                name: "null".into(),
                capabilities: Default::default(),
                write_stability: None,
                connections: None,
            },
            direct: false,
            warnings: Vec::new(),
        };
        let outcome = |overflow| {
            let mut outcome = WorkerOutcome::not_started(StopReason::Completed, 1_000_000_000);
            outcome.trace_overflow_ios = overflow;
            (0, outcome)
        };
        let outcomes = [outcome(3), outcome(4)];
        let result = merge_test(
            &test,
            &shapes,
            vec![setup],
            &outcomes,
            CpuResult::default(),
            std::slice::from_ref(&target),
            false,
        );
        assert_eq!(result.trace_overflow_ios, 7);
        assert!(
            result
                .warnings
                .iter()
                .any(|warning| warning.contains("I/O trace is incomplete: 7 issued I/Os")),
            "{:?}",
            result.warnings
        );
    }

    #[test]
    fn byte_shares_are_whole_blocks_adding_up() {
        let shares: Vec<u64> = (0..3)
            .map(|i| byte_share(10 * 4096, Some(4096), i, 3))
            .collect();
        assert_eq!(shares, [4 * 4096, 3 * 4096, 3 * 4096]);
        assert_eq!(byte_share(1000, None, 0, 1), 1000);
    }
}
