//! Jobs whose workers open their files as they come to them, at most `openfiles` at once
//! (fio's rule), instead of opening every file before the run; and the targets that therefore
//! give their checked descriptor back once checked.
//!
//! A worker of such a job holds at most its bound of descriptors whatever the number of its
//! files: a job of 100 000 files with `openfiles=64` runs within a descriptor limit of a few
//! hundred. It applies where a file can be opened at any moment of the run with nothing else
//! to set up: local regular files, the sync engine moving bytes by pread / pwrite. Each file is
//! re-opened by its path and refused unless it is still the checked file
//! ([`crate::targets::open::CheckedPath`]).

use super::RunError;
use super::engines::Endpoint;
use super::shape::TestShape;
use crate::engine::files_on_demand::{FilesOnDemand, OpenFile};
use crate::result::{DataPath, EngineKind, Workload};
use crate::targets::open::{CheckedPath, OpenRequest};
use crate::workload::{JobPlan, Plan};

/// Whether the workers of `job`, on `engine` (its shape's), open their files on demand: it
/// bounds the files open at once below the files of a worker, and moves bytes by pread /
/// pwrite on the sync engine.
pub fn opens_files_on_demand(job: &JobPlan, engine: EngineKind) -> bool {
    let files = &job.workload.worker_files;
    files.open_at_once() < files.per_worker
        && engine == EngineKind::Sync
        && job.workload.handling.data_path == DataPath::Pread
}

/// Per target of `plan`: whether every job that uses it opens its files on demand (so that
/// the target need not hold a descriptor from its checks to the end of the run).
pub fn targets_opened_on_demand(plan: &Plan, io_uring: Option<&std::io::Error>) -> Vec<bool> {
    let mut used = vec![false; plan.targets.len()];
    let mut on_demand = vec![true; plan.targets.len()];
    for job in plan.tests.iter().flat_map(|test| &test.jobs) {
        let opens = opens_files_on_demand(job, TestShape::of(job, io_uring).engine);
        for &index in &job.targets {
            if let (Some(used), Some(on_demand)) = (used.get_mut(index), on_demand.get_mut(index)) {
                *used = true;
                *on_demand &= opens;
            }
        }
    }
    used.iter()
        .zip(on_demand)
        .map(|(&used, on)| used && on)
        .collect()
}

/// The endpoint of a worker that opens the local files `checked` on demand, at most
/// `bound` at once, each with `request`, the page-cache advice of `workload` given on each
/// open for the file's region in `regions`. The first file is opened once now, so that a
/// file that cannot be opened stops the test before it starts; the answer says whether
/// O_DIRECT held there.
pub(super) fn on_demand_endpoint(
    job: &JobPlan,
    checked: Vec<CheckedPath>,
    regions: &[(u64, u64)],
    request: OpenRequest,
) -> Result<(Endpoint<'static>, bool), RunError> {
    let workload = &job.workload;
    let first = checked[0].reopen(request)?;
    let direct = first.direct;
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
