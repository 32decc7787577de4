//! Jobs whose workers open their files as they come to them, at most `openfiles` at once
//! (fio's rule), instead of opening every file before the run; and the targets that give
//! their checked descriptor back once checked (those, the file-operation engines' and the
//! files of a run of many targets).
//!
//! A worker of such a job holds at most its bound of descriptors whatever the number of its
//! files: a job of 100 000 files with `openfiles=64` runs within a descriptor limit of a few
//! hundred. It applies where a file can be opened at any moment of the run with nothing else
//! to set up: local regular files, moved on the sync engine (by pread / pwrite, through a
//! mapping of each file made and unmade with its descriptor — fio's `mmap` — or through a
//! pipe — fio's `splice`) or by io_uring (whose files are then not registered, and closed only with no request in flight on them;
//! see [`crate::engine::io_uring`]). Each file is
//! re-opened by its path and refused unless it is still the checked file
//! ([`crate::targets::open::CheckedPath`]).

use super::RunError;
use super::engines::Endpoint;
use super::shape::TestShape;
use crate::engine::EngineError;
use crate::engine::data_path::FileMapping;
use crate::engine::file_operations::FileOperation;
use crate::engine::files_on_demand::{FilesOnDemand, OpenFile};
use crate::result::{DataPath, EngineKind, Workload};
use crate::targets::open::{CheckedPath, OpenRequest};
use crate::workload::{JobPlan, Plan};

/// Whether the workers of `job`, on `engine` (its shape's), open their files on demand: it
/// bounds the files open at once below the files of a worker, and moves bytes on the sync
/// engine (by any of its data paths) or by io_uring.
pub fn opens_files_on_demand(job: &JobPlan, engine: EngineKind) -> bool {
    let files = &job.workload.worker_files;
    files.open_at_once() < files.per_worker
        && matches!(engine, EngineKind::Sync | EngineKind::IoUring)
}

/// Runs of more targets than this give back the checked descriptor of each regular file they
/// use ([`targets_released_after_checks`]); runs of fewer keep it to the end.
pub const HELD_TARGETS_AT_MOST: usize = 64;

/// Per target of `plan`: whether it gives its checked descriptor back once its checks are
/// done, each later open following its path and refused unless it finds the checked file
/// ([`CheckedPath`]). So it does when every job that uses it opens its files on demand or
/// works on it by name (the file-operation engines, as fio's, hold no descriptor of their
/// files), and in a run of more than [`HELD_TARGETS_AT_MOST`] targets: a job of 10 000 files
/// then holds one descriptor per file and worker, as fio does, not one more per file for
/// its checks. A block device always keeps its descriptor (its exclusive claim, the safety
/// checks of its contents).
pub fn targets_released_after_checks(plan: &Plan, io_uring: Option<&std::io::Error>) -> Vec<bool> {
    let many = plan.targets.len() > HELD_TARGETS_AT_MOST;
    let mut used = vec![false; plan.targets.len()];
    let mut released = vec![true; plan.targets.len()];
    for job in plan.tests.iter().flat_map(|test| &test.jobs) {
        let releases = many
            || FileOperation::of(job.workload.engine).is_some()
            || opens_files_on_demand(job, TestShape::of(job, io_uring).engine);
        for &index in &job.targets {
            if let (Some(used), Some(released)) = (used.get_mut(index), released.get_mut(index)) {
                *used = true;
                *released &= releases;
            }
        }
    }
    used.iter()
        .zip(released)
        .map(|(&used, released)| used && released)
        .collect()
}

/// The endpoint of a worker that opens the local files `checked` on demand, at most
/// `bound` at once, each with `request`, the page-cache advice of `workload` given on each
/// open for the file's region in `regions`. The first file is opened (and mapped, for a job
/// that moves bytes through mappings) once now, so that a file that cannot be opened stops
/// the test before it starts; the answer says whether O_DIRECT held there.
pub(super) fn on_demand_endpoint(
    job: &JobPlan,
    checked: Vec<CheckedPath>,
    regions: &[(u64, u64)],
    request: OpenRequest,
) -> Result<(Endpoint<'static>, bool), RunError> {
    let workload = &job.workload;
    let first = checked[0].reopen(request)?;
    let direct = first.direct;
    if workload.handling.data_path == DataPath::Mmap {
        // A file that cannot be mapped (an empty one) stops the test before it starts too.
        FileMapping::new(&first.file).map_err(|source| RunError::Engine {
            target: checked[0].path().display().to_string(),
            source: EngineError::Setup {
                engine: "sync",
                source,
            },
        })?;
    }
    drop(first);
    let cache_workload: Workload = workload.clone();
    let regions = regions.to_vec();
    let count = checked.len();
    let opener: OpenFile = Box::new(move |file| {
        let path = &checked[file as usize];
        let opened = path
            .reopen(request)
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        // Advice only: a refusal changes nothing the worker relies on.
        let _ = super::caches::prepare_cache(
            &opened.file,
            &cache_workload,
            regions.get(file as usize).copied().unwrap_or((0, 0)),
        );
        Ok(opened.file)
    });
    let mut files =
        FilesOnDemand::new(count, workload.worker_files.open_at_once() as usize, opener);
    if workload.fsync_at_end {
        files = files.syncing_before_close();
    }
    Ok((Endpoint::FilesOnDemand(files), direct))
}
