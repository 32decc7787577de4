//! Checks a plan against its targets before any I/O: targets exist or can be created, network
//! volumes answer (probed within the network timeout), regions fit, block sizes suit O_DIRECT
//! and the server's largest request, writes are allowed, and each job's engine, workers and
//! queue depth are settled (with every fallback announced).

use super::budget::{HostLimits, JobDemand, check_test};
use super::file_layout::{reads_of_files_only_sized, size_files_only_written};
use super::looked_targets::{
    Look, held_by_targets, look_at_targets, make_room_for_targets,
    make_room_for_targets_and_workers,
};
use super::operated_targets;
pub(super) use super::pending_target::PendingTarget;
use super::shape::TestShape;
use super::trim_check::{TrimTarget, check_trims};
use super::{PlanError, RunError};
use crate::engine::file_operations::FileOperation;
use crate::engine::io_uring_available;
use crate::engine::network;
use crate::engine::null::InjectedDelay;
use crate::engine::volume::NetworkVolumeInfo;
use crate::gate::read::open_regular;
use crate::gate::replace::OutputFile;
use crate::result::{EngineKind, TargetInfo, TargetKind};
use crate::targets::filesystem_cache::FilesystemCache;
use crate::targets::network_target::NetworkTarget;
use crate::targets::safety::{WritePolicy, check_volume_write_allowed, check_write_allowed};
use crate::targets::signature::detect_signature;
use crate::targets::test_file::{
    check_room_for, check_test_file_directory, default_test_file_size, temporary_test_file_path,
};
use crate::targets::{TargetError, TargetHandle, TargetSpec};
use crate::verify::state::STATE_FILE_LIMIT;
use crate::workload::file_set::check_worker_files;
use crate::workload::limits::PlanLimits;
use crate::workload::{JobPlan, Plan, TestPlan};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the user allows and asks for, beside the plan.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Write permissions.
    pub write_policy: WritePolicy,
    /// Label for comparisons.
    pub label: Option<String>,
    /// The command line, for the result.
    pub command_line: Vec<String>,
    /// Latency injected into null-engine I/Os (tests).
    pub null_delay: Option<InjectedDelay>,
    /// Record every issued I/O.
    pub trace: bool,
    /// Stamp every written block with its offset.
    pub stamp_writes: bool,
    /// Series interval, ns (1 s when 0).
    pub interval_ns: u64,
    /// Most jobs and worker threads one test may start (`--max-jobs`, `--max-threads`).
    pub limits: PlanLimits,
    /// Longest wait on a network server (`--net-timeout`); `None`:
    /// [`DEFAULT_NET_TIMEOUT`](crate::engine::volume::DEFAULT_NET_TIMEOUT).
    pub net_timeout: Option<Duration>,
    /// Which confirming experiments to run (`--confirm`, the default suite); they are checked
    /// with the tests, for [`execute_and_confirm`](super::execute_and_confirm).
    pub confirm: ConfirmMode,
}

impl RunOptions {
    /// The network timeout in effect.
    pub fn net_timeout(&self) -> Duration {
        self.net_timeout
            .unwrap_or(crate::engine::volume::DEFAULT_NET_TIMEOUT)
    }
}

/// Which confirming experiments a run does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConfirmMode {
    /// None.
    #[default]
    Off,
    /// The experiment of every verdict that has one (`--confirm`).
    Every,
    /// The experiments that fit, in the order of the tests, in `percent` of the time the tests
    /// took (from the start of the first to the end of the last); the others are recorded as
    /// left out. The default suite's mode, at [`DEFAULT_SUITE_PERCENT`] ([`super::confirm`]
    /// says how an experiment is found to fit).
    WithinTestTime {
        /// Share of the tests' time the experiments may take, percent.
        percent: u32,
    },
    /// As [`ConfirmMode::WithinTestTime`], but only the experiments of verdicts that rest on
    /// the fallback (latency-bound: a full queue and nothing seen to limit), so that such a
    /// verdict never stands untested when the experiment fits. Every run's mode unless
    /// `--confirm`, `--no-confirm` or the default suite says otherwise.
    FallbackWithinTestTime {
        /// Share of the tests' time the experiments may take, percent.
        percent: u32,
    },
}

impl ConfirmMode {
    /// Whether the run does any experiment.
    pub fn is_on(self) -> bool {
        self != ConfirmMode::Off
    }

    /// Whether the run tests a verdict of `verdict` by experiment.
    pub fn tests(self, verdict: crate::result::Verdict) -> bool {
        match self {
            ConfirmMode::Off => false,
            ConfirmMode::Every | ConfirmMode::WithinTestTime { .. } => true,
            ConfirmMode::FallbackWithinTestTime { .. } => {
                verdict == crate::result::Verdict::LatencyBound
            }
        }
    }
}

/// Share of its tests' time the default suite's experiments may take, percent: with them the
/// suite takes at most about twice as long as without.
pub const DEFAULT_SUITE_PERCENT: u32 = 100;

/// A plan checked against its targets; nothing has been written yet.
#[derive(Debug)]
pub struct PreparedRun {
    pub(super) plan: Plan,
    pub(super) shapes: Vec<Vec<TestShape>>,
    pub(super) targets: Vec<PendingTarget>,
    /// Per target: it gives its descriptor back once checked, and holds none in the run
    /// ([`super::files_on_demand::targets_released_after_checks`]).
    pub(super) released: Vec<bool>,
    /// The descriptors the targets hold through the run, counted from the one look at each
    /// path before any was opened ([`super::looked_targets::held_by_targets`]).
    pub(super) held_by_targets: u64,
    pub(super) warnings: Vec<String>,
    pub(super) options: RunOptions,
    /// What the host could give when the plan was checked (the confirming experiments of
    /// `--confirm` are checked against it too, before any I/O).
    pub(super) host: HostLimits,
    /// Whether io_uring can be used, or why not.
    pub(super) io_uring: Result<(), std::io::Error>,
}

impl PreparedRun {
    /// Tests and the shapes of their jobs.
    pub fn tests(&self) -> impl Iterator<Item = (&TestPlan, &[TestShape])> {
        self.plan
            .tests
            .iter()
            .zip(self.shapes.iter().map(Vec::as_slice))
    }

    /// What was found about target `index` before the run, when it exists already (a local
    /// file or device, or a probed network volume).
    pub fn existing_target(&self, index: usize) -> Option<&crate::result::TargetInfo> {
        match self.targets.get(index)? {
            PendingTarget::Existing(handle) => Some(handle.info()),
            PendingTarget::Network(_, info, _) => Some(info),
            _ => None,
        }
    }

    /// Warnings found while preparing (fallbacks, skipped tests).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Paths of targets iopath will create, their sizes, and whether they are temporary.
    pub fn files_to_create(&self) -> Vec<(PathBuf, u64, bool)> {
        self.test_files(true)
    }

    /// The test files iopath will create without writing data into them (the tests only
    /// write them: [`super::file_layout`]), with what they will hold.
    pub fn files_only_sized(&self) -> Vec<(PathBuf, crate::result::CreatedContent)> {
        self.targets
            .iter()
            .filter_map(|target| match target {
                PendingTarget::CreateSized {
                    path,
                    preallocation,
                    ..
                } => Some((
                    path.clone(),
                    crate::result::CreatedContent::Sized {
                        preallocation: *preallocation,
                    },
                )),
                _ => None,
            })
            .collect()
    }

    /// Test files iopath would create but does not, because only the null engine (no I/O)
    /// uses them: their paths, sizes, and whether they are temporary.
    pub fn files_not_created(&self) -> Vec<(PathBuf, u64, bool)> {
        self.test_files(false)
    }

    /// Files on file servers (`nfs://`, `smb://`) the run will create, fill and remove: their
    /// URLs and sizes.
    pub fn remote_files_to_create(&self) -> Vec<(String, u64)> {
        self.targets
            .iter()
            .filter_map(|target| match target {
                PendingTarget::Network(network, info, volume) if volume.to_create => {
                    Some((network.to_string(), info.size_bytes))
                }
                _ => None,
            })
            .collect()
    }

    /// The test files that will be `created`, or those left uncreated.
    fn test_files(&self, created: bool) -> Vec<(PathBuf, u64, bool)> {
        self.targets
            .iter()
            .filter_map(|target| match (target, created) {
                (
                    PendingTarget::Create {
                        path,
                        size,
                        temporary,
                    }
                    | PendingTarget::CreateSized {
                        path,
                        size,
                        temporary,
                        ..
                    },
                    true,
                )
                | (
                    PendingTarget::Uncreated {
                        path,
                        size,
                        temporary,
                    },
                    false,
                ) => Some((path.clone(), *size, *temporary)),
                _ => None,
            })
            .collect()
    }
}

/// Turns each test file to create that only null-engine jobs use into
/// [`PendingTarget::Uncreated`]: the null engine does no I/O, so filling a file for it would
/// only cost time and space.
fn leave_uncreated_for_null(plan: &Plan, targets: &mut [PendingTarget]) {
    retag_files_to_create(
        plan,
        targets,
        false,
        |job| job.workload.engine == EngineKind::Null,
        |path, size, temporary| PendingTarget::Uncreated {
            path,
            size,
            temporary,
        },
    );
}

/// Turns each test file to create that only `create_on_open` jobs use into
/// [`PendingTarget::CreateSized`] with no preallocation: fio creates such a file when the job
/// opens it, empty, and the job's writes extend it.
fn create_on_open(plan: &Plan, targets: &mut [PendingTarget]) {
    retag_files_to_create(
        plan,
        targets,
        true,
        |job| job.workload.handling.create_on_open,
        |path, size, temporary| PendingTarget::CreateSized {
            path,
            size,
            temporary,
            preallocation: crate::result::Preallocation::None,
        },
    );
}

/// Replaces each [`PendingTarget::Create`] whose every job satisfies `all_jobs` (and that some
/// job uses, when `used`) with what `retag` makes of its path, size and temporariness.
fn retag_files_to_create(
    plan: &Plan,
    targets: &mut [PendingTarget],
    used: bool,
    all_jobs: impl Fn(&crate::workload::JobPlan) -> bool,
    retag: impl Fn(PathBuf, u64, bool) -> PendingTarget,
) {
    // One pass over the jobs, not one per target: a job may have a million files.
    let mut used_by = vec![false; targets.len()];
    let mut every_job_satisfies = vec![true; targets.len()];
    for job in plan.tests.iter().flat_map(|test| &test.jobs) {
        let satisfies = all_jobs(job);
        for &index in &job.targets {
            if let (Some(used), Some(all)) =
                (used_by.get_mut(index), every_job_satisfies.get_mut(index))
            {
                *used = true;
                *all &= satisfies;
            }
        }
    }
    for (index, target) in targets.iter_mut().enumerate() {
        if (!used || used_by[index])
            && every_job_satisfies[index]
            && let PendingTarget::Create {
                path,
                size,
                temporary,
            } = target
        {
            *target = retag(std::mem::take(path), *size, *temporary);
        }
    }
}

/// What `spec` will be when the run starts; what files on one filesystem share is looked up
/// once through `filesystems`. `look` is the `statx` of a path taken before any target was
/// opened ([`look_at_targets`]): a file that gives its descriptor back once checked
/// (`released`) is checked from it, without being opened, where its filesystem is known.
fn pending_target(
    spec: &TargetSpec,
    net_timeout: Duration,
    filesystems: &FilesystemCache,
    released: bool,
    look: Option<Look>,
) -> Result<PendingTarget, RunError> {
    Ok(match spec {
        TargetSpec::Path { path, .. }
            if look
                .as_ref()
                .is_some_and(|look| crate::targets::null_sink::is_null_device_stat(&look.stat)) =>
        {
            PendingTarget::NullSink { path: path.clone() }
        }
        TargetSpec::Path { path, create_size } => {
            let checked = match look {
                Some(Look { stat, mark }) if released => {
                    TargetHandle::look_sharing_marked(path, &stat, mark, filesystems)
                }
                _ => TargetHandle::open_sharing(path, filesystems),
            };
            match checked {
                // Every check of a regular file is done on opening; its workers open it again.
                Ok(handle) if released => PendingTarget::Existing(handle.without_descriptor()),
                Ok(handle) => PendingTarget::Existing(handle),
                Err(TargetError::Missing { .. }) if create_size.is_some() => {
                    let parent = path
                        .parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .unwrap_or(Path::new("."));
                    filesystems.check_directory_once(parent, |parent| {
                        if is_device_directory(parent) {
                            return Err(RunError::from(PlanError::NoSuchDevice {
                                path: path.clone(),
                            }));
                        }
                        check_test_file_directory(parent).map_err(RunError::from)
                    })?;
                    PendingTarget::Create {
                        path: path.clone(),
                        size: create_size.unwrap_or(0),
                        temporary: false,
                    }
                }
                Err(TargetError::Missing { path }) => {
                    return Err(PlanError::NoSuchFile { path }.into());
                }
                Err(other) => return Err(other.into()),
            }
        }
        TargetSpec::Network(target) => {
            let (info, volume) = probe_network(target, net_timeout)?;
            PendingTarget::Network(target.clone(), info, Box::new(volume))
        }
        TargetSpec::TempFile { directory, size } => {
            check_test_file_directory(directory)?;
            let size = match size {
                Some(size) => *size,
                None => default_test_file_size(directory)?,
            };
            PendingTarget::Create {
                path: temporary_test_file_path(directory),
                size,
                temporary: true,
            }
        }
    })
}

/// The test files the run fills, or sizes for the jobs' writes, with their sizes (not those
/// created empty, whose size the writes decide, nor those left uncreated).
fn files_to_allocate(targets: &[PendingTarget]) -> Vec<(&Path, u64)> {
    targets
        .iter()
        .filter_map(|target| match target {
            PendingTarget::Create { path, size, .. } => Some((path.as_path(), *size)),
            PendingTarget::CreateSized {
                path,
                size,
                preallocation,
                ..
            } if *preallocation != crate::result::Preallocation::None => {
                Some((path.as_path(), *size))
            }
            _ => None,
        })
        .collect()
}

/// Checks everything before any I/O. Tests that would write to a target that may not be
/// written (or that O_DIRECT forbids) are dropped with a warning when `drop_unwritable` (the
/// default suite), else refused.
pub fn prepare(
    mut plan: Plan,
    options: RunOptions,
    drop_unwritable: bool,
) -> Result<PreparedRun, RunError> {
    if plan.targets.is_empty() {
        return Err(PlanError::NoTarget.into());
    }
    let io_uring_answer = io_uring_available();
    let io_uring = io_uring_answer.as_ref().err();
    check_limits(&plan, io_uring, &options.limits)?;
    let operations = super::target_operations::operations_of_targets(&plan);
    let released = super::files_on_demand::targets_released_after_checks(&plan, io_uring);
    // One look at each path, shared by the count of descriptors and the checks.
    let looks = look_at_targets(&plan, &released);
    let held = held_by_targets(&looks, &released);
    make_room_for_targets(held)?;
    let filesystems = FilesystemCache::default();
    let mut targets = plan
        .targets
        .iter()
        .zip(&operations)
        .zip(released.iter().zip(looks))
        .map(|((spec, operation), (&released, look))| {
            let pending =
                || pending_target(spec, options.net_timeout(), &filesystems, released, look);
            match operation {
                Some(operation) => match operated_targets::operated_target(spec, *operation)? {
                    Some(named) => Ok(named),
                    None => pending(),
                },
                None => pending(),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut warnings = Vec::new();
    let mut kept_tests = Vec::new();
    for test in &plan.tests {
        check_verified_targets_alone(test)?;
    }
    for test in plan.tests.drain(..) {
        let refusal = test.jobs.iter().find_map(|job| {
            job.targets.iter().find_map(|&index| {
                check_job_against_target(job, &targets[index], options.write_policy).err()
            })
        });
        match refusal {
            None => kept_tests.push(test),
            Some(RunError::Target(TargetError::WriteRefused { path, reason }))
                if drop_unwritable =>
            {
                warnings.push(format!(
                    "skipped '{}': {}: refusing to write: {reason}",
                    test.name,
                    path.display()
                ));
            }
            Some(RunError::Plan(error @ PlanError::DirectAlignment { .. })) if drop_unwritable => {
                warnings.push(format!("skipped '{}': {error}", test.name));
            }
            Some(error) => return Err(error),
        }
    }
    if kept_tests.is_empty() {
        return Err(PlanError::NothingToRun.into());
    }
    plan.tests = kept_tests;
    leave_uncreated_for_null(&plan, &mut targets);
    name_smb_connections(&plan, &mut targets);
    create_on_open(&plan, &mut targets);
    size_files_only_written(&plan, &mut targets);
    warnings.extend(reads_of_unwritten_blocks(&plan, &targets));
    check_room_for(&files_to_allocate(&targets))?;
    claim_written_devices(&plan, &targets)?;
    let mut shapes: Vec<Vec<TestShape>> = plan
        .tests
        .iter()
        .map(|test| {
            test.jobs
                .iter()
                .map(|job| TestShape::of(job, io_uring))
                .collect()
        })
        .collect();
    for (test, shapes) in plan.tests.iter().zip(&shapes) {
        check_verify_state_files(test, shapes)?;
    }
    let host = HostLimits::read();
    for (test, shapes) in plan.tests.iter().zip(shapes.iter_mut()) {
        warnings.extend(check_budget(test, shapes, &targets, &host)?);
    }
    make_room_for_targets_and_workers(&plan, io_uring, held)?;
    Ok(PreparedRun {
        plan,
        shapes,
        targets,
        released,
        held_by_targets: held,
        warnings,
        options,
        host,
        io_uring: io_uring_answer,
    })
}

/// Refuses a test with more jobs, or more worker threads at once, than `limits` allow, before
/// any target is looked at.
fn check_limits(
    plan: &Plan,
    io_uring: Option<&std::io::Error>,
    limits: &PlanLimits,
) -> Result<(), PlanError> {
    for test in &plan.tests {
        let refuse = |source| PlanError::OverLimit {
            test: test.name.clone(),
            source,
        };
        limits.check_jobs(test.jobs.len()).map_err(refuse)?;
        for job in &test.jobs {
            check_worker_files(&job.workload.worker_files, job.targets.len()).map_err(
                |source| PlanError::WorkerFiles {
                    test: test.name.clone(),
                    job: job.name.clone(),
                    source,
                },
            )?;
        }
        for job in &test.jobs {
            check_connections(plan, job)?;
        }
        let threads: u64 = test
            .jobs
            .iter()
            .map(|job| {
                let shape = TestShape::of(job, io_uring);
                job.worker_threads(shape.workers_per_target) as u64
            })
            .sum();
        limits.check_worker_threads(threads).map_err(refuse)?;
    }
    Ok(())
}

/// Says what a sync job (fio's default `psync`, or `--engine sync`) does on a network volume:
/// the volume's protocol engine moves its I/O, one request in flight per worker, as the sync
/// engine would (the job's queue depth above 1 already became workers).
fn note_sync_on_network(test: &TestPlan, shapes: &mut [TestShape], targets: &[PendingTarget]) {
    for (job, shape) in test.jobs.iter().zip(shapes.iter_mut()) {
        if shape.engine != EngineKind::Sync {
            continue;
        }
        let network = job.targets.iter().find_map(|&index| match &targets[index] {
            PendingTarget::Network(network, _, _) => Some(network),
            _ => None,
        });
        if let Some(network) = network {
            shape.warnings.push(format!(
                "the sync engine on {network}: runs as iopath's {} client with one I/O in flight per worker, as sync would",
                network.engine_kind().name()
            ));
        }
    }
}

/// Refuses more `--connections` than an SMB session takes channels, on a job with an
/// `smb://` target.
fn check_connections(plan: &Plan, job: &JobPlan) -> Result<(), PlanError> {
    let asked = job.workload.connections;
    if asked <= crate::engine::smb::MAX_CHANNELS {
        return Ok(());
    }
    for &index in &job.targets {
        if let Some(TargetSpec::Network(target @ NetworkTarget::Smb { .. })) =
            plan.targets.get(index)
        {
            return Err(PlanError::TooManyConnections {
                target: target.to_string(),
                asked,
                max: crate::engine::smb::MAX_CHANNELS,
            });
        }
    }
    Ok(())
}

/// Adds to the session of every `smb://` target how its workers' connections are used: the
/// most per worker of any job on it (`--connections`, no more than the job's queue depth),
/// as channels of one session where the server offers multichannel, else as independent
/// sessions. One connection adds nothing.
fn name_smb_connections(plan: &Plan, targets: &mut [PendingTarget]) {
    for (index, target) in targets.iter_mut().enumerate() {
        let PendingTarget::Network(NetworkTarget::Smb { .. }, info, volume) = target else {
            continue;
        };
        let most = plan
            .tests
            .iter()
            .flat_map(|test| &test.jobs)
            .filter(|job| job.targets.contains(&index))
            .map(|job| {
                job.workload
                    .connections
                    .clamp(1, job.workload.queue_depth.max(1))
            })
            .max()
            .unwrap_or(1);
        let channels = crate::engine::smb::SmbChannels {
            count: most,
            asked: most,
            multichannel: volume.multichannel,
        };
        if most > 1
            && let Some(session) = &mut info.file_session
        {
            *session = format!(
                "{session}, {}",
                channels.describe_with(&volume.server_interfaces)
            );
        }
    }
}

/// Checks what `test` asks of the host (queue depths, memory, threads) and turns io_uring
/// buffer registration off, with a warning each, for jobs `RLIMIT_MEMLOCK` has no room for.
pub(super) fn check_budget(
    test: &TestPlan,
    shapes: &mut [TestShape],
    targets: &[PendingTarget],
    host: &HostLimits,
) -> Result<Vec<String>, PlanError> {
    note_sync_on_network(test, shapes, targets);
    let mut demands: Vec<(usize, JobDemand)> = Vec::new();
    for (index, (job, shape)) in test.jobs.iter().zip(shapes.iter()).enumerate() {
        let engine_of = |target: &PendingTarget| match (target, shape.engine) {
            (_, EngineKind::Null) => EngineKind::Null,
            (PendingTarget::Network(network, _, _), _) => network.engine_kind(),
            _ => shape.engine,
        };
        for file_set in job.file_sets() {
            let set_targets: Vec<&PendingTarget> =
                file_set.iter().map(|&target| &targets[target]).collect();
            if set_targets.len() > 1
                && let Some(PendingTarget::Network(network, _, _)) = set_targets
                    .iter()
                    .find(|target| matches!(target, PendingTarget::Network(..)))
            {
                return Err(PlanError::NetworkInFileSet {
                    job: job.name.clone(),
                    target: network.to_string(),
                });
            }
            let engine = engine_of(set_targets[0]);
            let set_shape = shape.on_engine(&job.name, engine)?;
            let threads = u64::from(shape.workers_per_target);
            let mut ledger_bytes = 0u64;
            let map_bytes: u64 = set_targets
                .iter()
                .map(|target| {
                    let target_bytes = match target {
                        PendingTarget::Existing(handle) => handle.info().size_bytes,
                        PendingTarget::Network(_, info, _) => info.size_bytes,
                        PendingTarget::Create { size, .. }
                        | PendingTarget::CreateSized { size, .. }
                        | PendingTarget::Uncreated { size, .. } => *size,
                        PendingTarget::NullSink { .. } => 0,
                        PendingTarget::Named { .. } => 0,
                    };
                    ledger_bytes = ledger_bytes.saturating_add(
                        crate::workload::verify_settings::ledger_bytes(&job.workload, target_bytes),
                    );
                    crate::workload::target_fit::random_map_bytes(&job.workload, target_bytes)
                })
                .fold(0u64, u64::saturating_add);
            let maps = threads.saturating_mul(map_bytes);
            let ledgers = threads.saturating_mul(ledger_bytes);
            match demands
                .iter_mut()
                .find(|(known, demand)| *known == index && demand.shape.engine == engine)
            {
                Some((_, demand)) => {
                    demand.threads += threads;
                    demand.random_map_bytes = demand.random_map_bytes.saturating_add(maps);
                    demand.verify_ledger_bytes = demand.verify_ledger_bytes.saturating_add(ledgers);
                }
                None => demands.push((
                    index,
                    JobDemand {
                        name: job.name.clone(),
                        shape: set_shape,
                        threads,
                        random_map_bytes: maps,
                        verify_ledger_bytes: ledgers,
                    },
                )),
            }
        }
    }
    let jobs: Vec<JobDemand> = demands.iter().map(|(_, demand)| demand.clone()).collect();
    let unregistered = check_test(&test.name, &jobs, host).map_err(PlanError::from)?;
    let mut warnings = Vec::new();
    for (position, message) in unregistered {
        shapes[demands[position].0].register_buffers = false;
        warnings.push(message);
    }
    Ok(warnings)
}

/// Claims every block device some test writes or trims, exclusively, for as long as the run lasts: once
/// checked, nothing can mount or claim it before or while iopath writes it.
fn claim_written_devices(plan: &Plan, targets: &[PendingTarget]) -> Result<(), RunError> {
    for job in plan.tests.iter().flat_map(|test| &test.jobs) {
        if !job.workload.modifies()
            || job.workload.engine == EngineKind::Null
            || job.workload.engine.is_file_operation()
        {
            continue;
        }
        for &index in &job.targets {
            if let PendingTarget::Existing(handle) = &targets[index]
                && handle.info().kind == TargetKind::BlockDevice
            {
                handle.claim_exclusive()?;
            }
        }
    }
    Ok(())
}

/// Connects once to a network volume to learn what it is, and reads its first blocks for a
/// signature check; returns what the run needs to know, and the volume without its head.
fn probe_network(
    target: &NetworkTarget,
    timeout: Duration,
) -> Result<(TargetInfo, NetworkVolumeInfo), PlanError> {
    let volume = network::probe(target, timeout).map_err(|source| PlanError::Probe {
        target: target.to_string(),
        source,
    })?;
    let info = TargetInfo {
        path: target.to_string(),
        kind: target.target_kind(),
        size_bytes: volume.size_bytes,
        logical_block_size_bytes: volume.logical_block_size.max(1),
        physical_block_size_bytes: volume
            .preferred_block_size
            .max(volume.logical_block_size)
            .max(1),
        rotational: None,
        filesystem: detect_signature(&volume.head).map(str::to_string),
        device: None,
        direct_io_alignment_bytes: Some(volume.logical_block_size.max(1)),
        created_by_iopath: volume.to_create,
        transfer_sizes: volume.transfer_sizes,
        file_session: volume.file_session.clone(),
        read_only: volume.read_only,
        created_content: volume
            .to_create
            .then_some(crate::result::CreatedContent::Filled),
        allocated_bytes_looked: None,
    };
    Ok((info, volume.without_head()))
}

/// Whether `directory` lies on the kernel's device filesystem (devtmpfs, /dev): a missing
/// "device" there is a typo, not a file to create. /dev/shm (tmpfs) is an ordinary place.
fn is_device_directory(directory: &Path) -> bool {
    let resolved = std::fs::canonicalize(directory).unwrap_or_else(|_| directory.to_path_buf());
    let Ok(mounts) = crate::discovery::mounts::read_mounts() else {
        return resolved == Path::new("/dev");
    };
    mounts
        .iter()
        .filter(|mount| resolved.starts_with(&mount.mount_point))
        .max_by_key(|mount| mount.mount_point.as_os_str().len())
        .is_some_and(|mount| mount.filesystem == "devtmpfs")
}

/// Refuses a job whose largest block is more than an NBD server takes in one request (its
/// maximum block size, which the NBD engine obeys): it would fail at its first such I/O.
fn check_request_size(
    job: &JobPlan,
    network: &NetworkTarget,
    volume: &NetworkVolumeInfo,
) -> Result<(), PlanError> {
    let largest = job.workload.access.max_size_bytes();
    let limit = u64::from(volume.max_request_bytes);
    let limited = matches!(
        network,
        NetworkTarget::Nbd { .. } | NetworkTarget::Nfs { .. } | NetworkTarget::Smb { .. }
    );
    if !limited || job.workload.engine == EngineKind::Null || limit == 0 || largest <= limit {
        return Ok(());
    }
    Err(PlanError::RequestTooLarge {
        target: network.to_string(),
        largest_bytes: largest,
        limit_bytes: limit,
    })
}

/// The verify state file of worker `job_thread` of the job named `job_name`:
/// `JOB-N-verify.state` in the current directory, the job's name kept to letters, digits and
/// `._-`.
pub(super) fn verify_state_path(job_name: &str, job_thread: u32) -> PathBuf {
    let file_name: String = job_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    PathBuf::from(format!("{file_name}-{job_thread}-verify.state"))
}

/// Checks the verify state files a test's workers will save or load, before any I/O: a state
/// to save must go to a regular file or a new one (never a device or a FIFO, directly or
/// through a link), and a state to load must be a regular file within
/// [`STATE_FILE_LIMIT`] (a FIFO would block, a device such as /dev/zero never ends).
fn check_verify_state_files(
    test: &crate::workload::TestPlan,
    shapes: &[TestShape],
) -> Result<(), PlanError> {
    for (job, shape) in test.jobs.iter().zip(shapes) {
        let Some(verify) = &job.workload.verify else {
            continue;
        };
        if !verify.state_save && !verify.state_load {
            continue;
        }
        let refuse = |problem: String| PlanError::Verify {
            job: job.name.clone(),
            problem,
        };
        for job_thread in 0..job.worker_threads(shape.workers_per_target) as u32 {
            let path = verify_state_path(&job.name, job_thread);
            if verify.state_save {
                OutputFile::check(&path)
                    .map_err(|error| refuse(format!("verify state file {error}")))?;
            }
            if verify.state_load {
                open_regular(&path, STATE_FILE_LIMIT).map_err(|error| {
                    refuse(format!("verify state file {}: {error}", path.display()))
                })?;
            }
        }
    }
    Ok(())
}

/// Refuses a verifying job that shares a target with another job of its test when either
/// writes and their regions overlap: the other's writes and trims would change the blocks it
/// checks while it runs. Jobs on disjoint regions of one file (fio's `offset`) verify apart.
fn check_verified_targets_alone(test: &crate::workload::TestPlan) -> Result<(), PlanError> {
    for (index, job) in test.jobs.iter().enumerate() {
        if job.workload.verify.is_none() {
            continue;
        }
        let span = region_span(&job.workload);
        for (other_index, other) in test.jobs.iter().enumerate() {
            let shared = other.targets.iter().any(|t| job.targets.contains(t));
            let other_span = region_span(&other.workload);
            let overlap = span.start < other_span.end && other_span.start < span.end;
            if other_index != index
                && shared
                && overlap
                && (job.workload.modifies() || other.workload.modifies())
            {
                return Err(PlanError::Verify {
                    job: job.name.clone(),
                    problem: format!(
                        "verify: job '{}' uses the same target at the same time and one of the two writes, so the blocks this job checks could change under it; give the jobs targets of their own, or run them one after the other (stonewall)",
                        other.name
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The bytes of a target a job's workers may touch: from its region's start to the end of its
/// last clone's region (to the end of the target where the region has no size).
fn region_span(workload: &crate::result::Workload) -> std::ops::Range<u64> {
    let start = workload.region_offset_bytes;
    let clones_after_first = u64::from(workload.workers.saturating_sub(1));
    let end = workload.region_size_bytes.map_or(u64::MAX, |size| {
        start
            .saturating_add(
                clones_after_first.saturating_mul(workload.offsets.clone_increment_bytes),
            )
            .saturating_add(size)
    });
    start..end
}

pub(super) fn check_job_against_target(
    job: &JobPlan,
    target: &PendingTarget,
    policy: WritePolicy,
) -> Result<(), RunError> {
    let workload = &job.workload;
    if let Some(operation) = FileOperation::of(workload.engine) {
        // No data moves: only what may be removed matters.
        return operated_targets::check_removal(operation, target);
    }
    let url_path;
    let (path, size, logical, dio_alignment, is_device) = match target {
        PendingTarget::Network(network, info, volume) => {
            check_request_size(job, network, volume)?;
            if workload.modifies() && workload.engine != EngineKind::Null {
                check_volume_write_allowed(info, policy)?;
            }
            url_path = PathBuf::from(network.to_string());
            (
                url_path.as_path(),
                info.size_bytes,
                info.logical_block_size_bytes,
                info.logical_block_size_bytes,
                true,
            )
        }
        PendingTarget::Existing(handle) => {
            if workload.modifies() && workload.engine != EngineKind::Null {
                check_write_allowed(handle, policy)?;
            }
            let path = handle.path();
            let info = handle.info();
            let alignment = info
                .direct_io_alignment_bytes
                .unwrap_or(info.logical_block_size_bytes);
            (
                path,
                info.size_bytes,
                info.logical_block_size_bytes,
                alignment,
                info.kind == TargetKind::BlockDevice,
            )
        }
        PendingTarget::Create { path, size, .. }
        | PendingTarget::CreateSized { path, size, .. }
        | PendingTarget::Uncreated { path, size, .. } => (path.as_path(), *size, 512, 512, false),
        PendingTarget::NullSink { path } => (
            path.as_path(),
            crate::targets::null_sink::NULL_SINK_BYTES,
            512,
            512,
            false,
        ),
        PendingTarget::Named { path, .. } => (path.as_path(), 0, 512, 512, false),
    };
    check_trims(
        job,
        match target {
            PendingTarget::Network(network, _, volume) => TrimTarget::Network(network, volume),
            PendingTarget::Existing(handle) => TrimTarget::Existing(handle),
            PendingTarget::Create { path, .. } | PendingTarget::CreateSized { path, .. } => {
                TrimTarget::Create(path)
            }
            PendingTarget::Uncreated { .. }
            | PendingTarget::NullSink { .. }
            | PendingTarget::Named { .. } => TrimTarget::Nothing,
        },
    )?;
    let name = || path.display().to_string();
    let loads_state = workload
        .verify
        .as_ref()
        .is_some_and(|verify| verify.state_load);
    if loads_state
        && matches!(
            target,
            PendingTarget::Create { .. } | PendingTarget::CreateSized { .. }
        )
    {
        // A state names the file it was saved for; a file still to be made is not it.
        return Err(PlanError::Verify {
            job: job.name.clone(),
            problem: format!(
                "--verify-state-load checks the target its state was saved for, and {} does not \
                 exist",
                crate::text::shown(&name())
            ),
        }
        .into());
    }
    let offset = workload.region_offset_bytes;
    if offset >= size {
        return Err(PlanError::OffsetPastEnd {
            target: name(),
            offset_bytes: offset,
            size_bytes: size,
        }
        .into());
    }
    let region = workload.region_size_bytes.unwrap_or(size - offset);
    if offset + region > size {
        return Err(PlanError::RegionPastEnd {
            target: name(),
            offset_bytes: offset,
            region_bytes: region,
            size_bytes: size,
        }
        .into());
    }
    crate::workload::target_fit::check(workload, size).map_err(|problem| {
        PlanError::DoesNotFit {
            target: name(),
            problem,
        }
    })?;
    let largest = workload.access.max_size_bytes();
    if region < largest {
        return Err(PlanError::RegionTooSmall {
            target: name(),
            region_bytes: region,
            largest_bytes: largest,
        }
        .into());
    }
    let direct = (!workload.buffered || matches!(target, PendingTarget::Network(..)))
        && workload.engine != EngineKind::Null;
    let alignment = dio_alignment.max(1) as u64;
    if direct
        && let Some(value) = workload
            .access
            .sizes_and_alignments()
            .chain([offset])
            .find(|value| !value.is_multiple_of(alignment))
    {
        return Err(PlanError::DirectAlignment {
            target: name(),
            value_bytes: value,
            alignment_bytes: alignment,
            logical_block_bytes: logical,
        }
        .into());
    }
    if is_device
        && !workload
            .access
            .min_size_bytes()
            .is_multiple_of(logical.max(1) as u64)
    {
        return Err(PlanError::DeviceBlockSize {
            target: name(),
            block_bytes: workload.access.min_size_bytes(),
            logical_block_bytes: logical,
        }
        .into());
    }
    Ok(())
}

/// A warning for each job that reads a file created without data (an fio job file whose
/// first job on the file only writes it: fio's layout): its reads of blocks no write has
/// reached are answered without the device.
fn reads_of_unwritten_blocks(plan: &Plan, targets: &[PendingTarget]) -> Vec<String> {
    let sized: Vec<bool> = targets
        .iter()
        .map(|target| matches!(target, PendingTarget::CreateSized { .. }))
        .collect();
    reads_of_files_only_sized(plan, &sized)
        .into_iter()
        .filter_map(|(job, index)| match &targets[index] {
            PendingTarget::CreateSized { path, .. } => Some(format!(
                "job '{}' reads {}, which the first job using it only sizes (it writes, and fio lays a file out for its first job): reads of blocks no write has reached yet are answered without the device, as in fio (overwrite=1 on that job fills the file first)",
                job,
                path.display()
            )),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::workload::suite::base_workload;

    /// A job of one worker group on target 0: `engine`, `queue_depth`, `workers`.
    pub(in crate::run) fn job(engine: EngineKind, queue_depth: u32, workers: u32) -> JobPlan {
        let mut workload = base_workload();
        workload.engine = engine;
        workload.queue_depth = queue_depth;
        workload.workers = workers;
        JobPlan {
            name: "j".into(),
            group: 0,
            workload,
            targets: vec![0],
            replay: None,
        }
    }

    #[test]
    fn verifying_writers_clash_only_where_their_regions_overlap() {
        let writer = |offset: u64| {
            let mut job = job(EngineKind::Sync, 1, 1);
            job.workload.set_simple(
                &crate::workload::BlockSizeMix::parse("4k").unwrap(),
                0,
                100,
                4096,
            );
            job.workload.verify = Some(crate::result::VerifySettings::default());
            job.workload.region_offset_bytes = offset;
            job.workload.region_size_bytes = Some(10 << 20);
            job
        };
        let test = |jobs: Vec<JobPlan>| crate::workload::TestPlan {
            name: "t".into(),
            jobs,
            settings: Default::default(),
        };
        // fio's t0003: one writer at 0, one at 1 GiB, 10 MiB each, on one file.
        assert!(check_verified_targets_alone(&test(vec![writer(0), writer(1 << 30)])).is_ok());
        assert!(check_verified_targets_alone(&test(vec![writer(0), writer(5 << 20)])).is_err());
        let mut unbounded = writer(0);
        unbounded.workload.region_size_bytes = None;
        assert!(check_verified_targets_alone(&test(vec![unbounded, writer(1 << 30)])).is_err());
    }
}
