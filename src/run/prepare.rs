//! Checks a plan against its targets before any I/O: targets exist or can be created, regions
//! fit, block sizes suit O_DIRECT, writes are allowed, and each job's engine, workers and queue
//! depth are settled (with every fallback announced).

use super::RunError;
use crate::engine::network;
use crate::engine::null::InjectedDelay;
use crate::engine::{EngineKind, io_uring_available};
use crate::target::network::NetworkTarget;
use crate::target::safety::{WritePolicy, check_write_allowed};
use crate::target::signature::detect_signature;
use crate::target::test_file::{check_test_file_directory, default_test_file_size};
use crate::target::{TargetError, TargetInfo, TargetKind, TargetSpec, inspect};
use crate::units::format_size;
use crate::workload::{JobPlan, Plan, TestPlan};
use std::path::{Path, PathBuf};

/// Engine, workers and queue depth a job really runs with, and why they differ from what was
/// asked.
#[derive(Clone, Debug, PartialEq)]
pub struct EffectiveShape {
    /// Engine in effect.
    pub engine: EngineKind,
    /// Worker threads per target.
    pub workers_per_target: u32,
    /// I/Os in flight per worker.
    pub queue_depth: u32,
    /// What was changed and why.
    pub warnings: Vec<String>,
}

/// Works out the engine, workers and queue depth of a job: io_uring falls back to sync
/// (announced) when the kernel refuses it; sync maps a queue depth above 1 onto workers.
pub fn effective_shape(job: &JobPlan, io_uring: &Result<(), String>) -> EffectiveShape {
    let workload = &job.workload;
    let mut warnings = Vec::new();
    let mut engine = workload.engine;
    if engine == EngineKind::IoUring
        && let Err(reason) = io_uring
    {
        warnings.push(format!(
            "io_uring is not available ({reason}); using the sync engine"
        ));
        engine = EngineKind::Sync;
    }
    let (workers_per_target, queue_depth) = if engine == EngineKind::Sync
        && workload.queue_depth > 1
    {
        warnings.push(format!(
                "the sync engine keeps one I/O in flight per worker: queue depth {} runs as {} workers of depth 1 ({} workers x {})",
                workload.queue_depth,
                workload.workers * workload.queue_depth,
                workload.workers,
                workload.queue_depth
            ));
        (workload.workers * workload.queue_depth, 1)
    } else {
        (workload.workers, workload.queue_depth)
    };
    EffectiveShape {
        engine,
        workers_per_target,
        queue_depth,
        warnings,
    }
}

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
}

/// A plan checked against its targets; nothing has been written yet.
#[derive(Debug)]
pub struct PreparedRun {
    pub(super) plan: Plan,
    pub(super) shapes: Vec<Vec<EffectiveShape>>,
    pub(super) targets: Vec<PendingTarget>,
    pub(super) warnings: Vec<String>,
    pub(super) options: RunOptions,
}

/// A target as it will be when the run starts.
#[derive(Debug)]
pub(super) enum PendingTarget {
    /// Exists and was inspected.
    Existing(PathBuf, TargetInfo),
    /// A network volume, probed.
    Network(NetworkTarget, TargetInfo),
    /// Will be created (and removed afterwards when temporary).
    Create {
        path: PathBuf,
        size: u64,
        temporary: bool,
    },
}

impl PreparedRun {
    /// Tests and the shapes of their jobs.
    pub fn tests(&self) -> impl Iterator<Item = (&TestPlan, &[EffectiveShape])> {
        self.plan
            .tests
            .iter()
            .zip(self.shapes.iter().map(Vec::as_slice))
    }

    /// Warnings found while preparing (fallbacks, skipped tests).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Paths of targets iopath will create, their sizes, and whether they are temporary.
    pub fn files_to_create(&self) -> Vec<(PathBuf, u64, bool)> {
        self.targets
            .iter()
            .filter_map(|t| match t {
                PendingTarget::Create {
                    path,
                    size,
                    temporary,
                } => Some((path.clone(), *size, *temporary)),
                PendingTarget::Existing(..) | PendingTarget::Network(..) => None,
            })
            .collect()
    }
}

fn temp_file_path(directory: &Path) -> PathBuf {
    directory.join(format!(".iopath-test-{}.tmp", std::process::id()))
}

fn pending_target(spec: &TargetSpec) -> Result<PendingTarget, RunError> {
    Ok(match spec {
        TargetSpec::Path { path, create_size } => match inspect(path) {
            Ok(info) => PendingTarget::Existing(path.clone(), info),
            Err(TargetError::Missing { .. }) if create_size.is_some() => {
                let parent = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                if is_device_directory(parent) {
                    return Err(RunError::Input(format!(
                        "{}: no such device (iopath never creates files under /dev)",
                        path.display()
                    )));
                }
                check_test_file_directory(parent)?;
                PendingTarget::Create {
                    path: path.clone(),
                    size: create_size.unwrap_or(0),
                    temporary: false,
                }
            }
            Err(TargetError::Missing { path }) => {
                return Err(RunError::Input(format!(
                    "{}: no such file or device (give a size to create a test file there)",
                    path.display()
                )));
            }
            Err(other) => return Err(other.into()),
        },
        TargetSpec::Network(target) => {
            let info = probe_network(target)?;
            PendingTarget::Network(target.clone(), info)
        }
        TargetSpec::TempFile { directory, size } => {
            check_test_file_directory(directory)?;
            let size = match size {
                Some(size) => *size,
                None => default_test_file_size(directory)?,
            };
            PendingTarget::Create {
                path: temp_file_path(directory),
                size,
                temporary: true,
            }
        }
    })
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
        return Err(RunError::Input("no target given".into()));
    }
    let targets = plan
        .targets
        .iter()
        .map(pending_target)
        .collect::<Result<Vec<_>, _>>()?;
    let mut warnings = Vec::new();
    let mut kept_tests = Vec::new();
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
            Some(RunError::Input(message)) if drop_unwritable && message.contains("O_DIRECT") => {
                warnings.push(format!("skipped '{}': {message}", test.name));
            }
            Some(error) => return Err(error),
        }
    }
    if kept_tests.is_empty() {
        return Err(RunError::Input(
            "no test can run on these targets (see the warnings above)".into(),
        ));
    }
    plan.tests = kept_tests;
    let io_uring = io_uring_available().map_err(|error| error.to_string());
    let shapes = plan
        .tests
        .iter()
        .map(|test| {
            test.jobs
                .iter()
                .map(|job| effective_shape(job, &io_uring))
                .collect()
        })
        .collect();
    Ok(PreparedRun {
        plan,
        shapes,
        targets,
        warnings,
        options,
    })
}

/// Connects once to a network volume to learn what it is, and reads its first blocks for a
/// signature check.
fn probe_network(target: &NetworkTarget) -> Result<TargetInfo, RunError> {
    let volume =
        network::probe(target).map_err(|error| RunError::Input(format!("{target}: {error}")))?;
    Ok(TargetInfo {
        path: target.to_string(),
        kind: match target {
            NetworkTarget::Nbd { .. } => TargetKind::Nbd,
            NetworkTarget::Iscsi { .. } => TargetKind::Iscsi,
        },
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
        created_by_iopath: false,
        read_only: volume.read_only,
    })
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

fn check_job_against_target(
    job: &JobPlan,
    target: &PendingTarget,
    policy: WritePolicy,
) -> Result<(), RunError> {
    let workload = &job.workload;
    let url_path;
    let (path, size, logical, dio_alignment, is_device) = match target {
        PendingTarget::Network(network, info) => {
            if workload.engine == EngineKind::Sync {
                return Err(RunError::Input(format!(
                    "{network}: the sync engine works on local files; network targets use their protocol's engine"
                )));
            }
            if workload.writes() && workload.engine != EngineKind::Null {
                check_write_allowed(info, policy)?;
            }
            url_path = PathBuf::from(network.to_string());
            (
                &url_path,
                info.size_bytes,
                info.logical_block_size_bytes,
                info.logical_block_size_bytes,
                true,
            )
        }
        PendingTarget::Existing(path, info) => {
            if workload.writes() && workload.engine != EngineKind::Null {
                check_write_allowed(info, policy)?;
            }
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
        PendingTarget::Create { path, size, .. } => (path, *size, 512, 512, false),
    };
    let name = path.display();
    let offset = workload.region_offset_bytes;
    if offset >= size {
        return Err(RunError::Input(format!(
            "--offset {} is past the end of {name} ({} bytes)",
            format_size(offset),
            size
        )));
    }
    let region = workload.region_size_bytes.unwrap_or(size - offset);
    if offset + region > size {
        return Err(RunError::Input(format!(
            "the region {}+{} ends past the end of {name} ({} bytes)",
            format_size(offset),
            format_size(region),
            size
        )));
    }
    let largest = workload.access.max_size_bytes();
    if region < largest {
        return Err(RunError::Input(format!(
            "the region of {name} ({} bytes) is smaller than the block size {}",
            region,
            format_size(largest)
        )));
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
        return Err(RunError::Input(format!(
            "{} breaks O_DIRECT alignment on {name}: offsets and block sizes must be multiples of {} bytes (logical block size {}); use --buffered or a multiple of {}",
            format_size(value),
            alignment,
            logical,
            alignment
        )));
    }
    if is_device
        && !workload
            .access
            .min_size_bytes()
            .is_multiple_of(logical.max(1) as u64)
    {
        return Err(RunError::Input(format!(
            "block size {} is not a multiple of {name}'s logical block size ({logical})",
            format_size(workload.access.min_size_bytes())
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::suite::base_workload;

    fn job(engine: EngineKind, queue_depth: u32, workers: u32) -> JobPlan {
        let mut workload = base_workload();
        workload.engine = engine;
        workload.queue_depth = queue_depth;
        workload.workers = workers;
        JobPlan {
            name: "j".into(),
            group: 0,
            workload,
            targets: vec![0],
        }
    }

    #[test]
    fn a_refused_io_uring_falls_back_to_sync_and_says_why() {
        let refused = Err("Operation not permitted".to_string());
        let shape = effective_shape(&job(EngineKind::IoUring, 8, 2), &refused);
        assert_eq!(shape.engine, EngineKind::Sync);
        assert_eq!((shape.workers_per_target, shape.queue_depth), (16, 1));
        assert!(shape.warnings[0].contains("io_uring is not available (Operation not permitted)"));
        assert!(shape.warnings[1].contains("16 workers of depth 1"));
        let shape = effective_shape(&job(EngineKind::IoUring, 8, 2), &Ok(()));
        assert_eq!(shape.engine, EngineKind::IoUring);
        assert!(shape.warnings.is_empty());
    }

    #[test]
    fn queue_depth_one_with_sync_needs_no_mapping() {
        let shape = effective_shape(&job(EngineKind::Sync, 1, 3), &Ok(()));
        assert_eq!((shape.workers_per_target, shape.queue_depth), (3, 1));
        assert!(shape.warnings.is_empty());
    }
}
