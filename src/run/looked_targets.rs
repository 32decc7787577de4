//! One look (`statx`, and a regular file's ownership mark) at each target path before any
//! target is opened, shared by the checks
//! that need it: the count of descriptors the targets hold, the look for the null device, and
//! the check of each regular file that gives its descriptor back once checked
//! ([`crate::targets::TargetHandle::look_sharing`]). A job of 100 000 files is looked at
//! 100 000 times, not once per check.
//!
//! The count is the one [`super::descriptors`] makes (a target holds a descriptor through the
//! run unless it gives it back once checked, and a block device always), taken from these
//! looks instead of a look of its own.

use super::PlanError;
use super::descriptors::{RESERVED_DESCRIPTORS, make_room_for, opened_by_workers};
use crate::targets::{PathStat, TargetHandle, TargetSpec, stat_path};
use crate::workload::Plan;

/// From this many targets on, the looks are taken by several threads at once (one `statx`
/// and one extended-attribute read a file, each a walk of its path in the kernel): 100 000
/// files are looked at in about half the time on two cores. Below, one thread.
pub const PARALLEL_LOOKS_FROM: usize = 2048;

/// The most threads that take the looks.
const LOOK_THREADS_AT_MOST: usize = 4;

/// One look at a target path: its `statx` (links followed), and for a regular file its
/// ownership mark read through the path, as its check would read it
/// ([`TargetHandle::read_mark`]).
pub(super) struct Look {
    /// What `statx` found.
    pub stat: PathStat,
    /// A regular file's ownership mark, or why it could not be read; `None` for anything
    /// else.
    pub mark: Option<std::io::Result<bool>>,
}

/// One look at each target path of `plan`; `None` for a target that is not a path, or a
/// path that cannot be looked at now (its check says why). The ownership mark is read only
/// for the targets `released` after their checks (the others are opened, and their mark read
/// through the descriptor). Many targets are looked at by
/// several threads ([`PARALLEL_LOOKS_FROM`]), each a contiguous share, in order.
pub(super) fn look_at_targets(plan: &Plan, released: &[bool]) -> Vec<Option<Look>> {
    let specs: Vec<(&TargetSpec, bool)> = plan
        .targets
        .iter()
        .zip(released.iter().copied().chain(std::iter::repeat(false)))
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(LOOK_THREADS_AT_MOST);
    if specs.len() < PARALLEL_LOOKS_FROM || threads < 2 {
        return specs
            .iter()
            .map(|&(spec, released)| look_at(spec, released))
            .collect();
    }
    let share = specs.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = specs
            .chunks(share)
            .map(|chunk| {
                std::thread::Builder::new()
                    .name("iopath-look".into())
                    .spawn_scoped(scope, || {
                        chunk
                            .iter()
                            .map(|&(spec, released)| look_at(spec, released))
                            .collect::<Vec<_>>()
                    })
            })
            .collect();
        let mut looks = Vec::with_capacity(specs.len());
        for (worker, chunk) in workers.into_iter().zip(specs.chunks(share)) {
            // A thread that could not start, or ended without its looks: its share is looked
            // at here.
            match worker.ok().and_then(|worker| worker.join().ok()) {
                Some(found) => looks.extend(found),
                None => looks.extend(
                    chunk
                        .iter()
                        .map(|&(spec, released)| look_at(spec, released)),
                ),
            }
        }
        looks
    })
}

/// The look at one target; its mark only when it is `released` after its check.
fn look_at(spec: &TargetSpec, released: bool) -> Option<Look> {
    let TargetSpec::Path { path, .. } = spec else {
        return None;
    };
    let stat = stat_path(path).ok()?;
    let mark = (released && stat.is_file()).then(|| TargetHandle::read_mark(path));
    Some(Look { stat, mark })
}

/// The descriptors the targets hold from their checks to the end of the run: those that do
/// not give theirs back (`released`), and every block device.
pub(super) fn held_by_targets(looks: &[Option<Look>], released: &[bool]) -> u64 {
    looks
        .iter()
        .zip(released)
        .filter(|&(look, &released)| {
            !released
                || look
                    .as_ref()
                    .is_some_and(|look| look.stat.is_block_device())
        })
        .count() as u64
}

/// Makes room for the `held` descriptors of the targets, before any is opened.
pub(super) fn make_room_for_targets(held: u64) -> Result<(), PlanError> {
    make_room_for(RESERVED_DESCRIPTORS + held)
}

/// Makes room for the `held` descriptors of the targets and the most any one test's workers
/// of `plan` open together.
pub(super) fn make_room_for_targets_and_workers(
    plan: &Plan,
    io_uring: Option<&std::io::Error>,
    held: u64,
) -> Result<(), PlanError> {
    let busiest_test = plan
        .tests
        .iter()
        .map(|test| opened_by_workers(test, io_uring))
        .max()
        .unwrap_or(0);
    make_room_for(RESERVED_DESCRIPTORS + held + busiest_test)
}
