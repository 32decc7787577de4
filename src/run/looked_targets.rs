//! One look (`statx`) at each target path before any target is opened, shared by the checks
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
use crate::targets::{PathStat, TargetSpec, stat_path};
use crate::workload::Plan;

/// What one `statx` of each target path of `plan` found (links followed); `None` for a target
/// that is not a path, or a path that cannot be looked at now (its check says why).
pub(super) fn look_at_targets(plan: &Plan) -> Vec<Option<PathStat>> {
    plan.targets
        .iter()
        .map(|spec| match spec {
            TargetSpec::Path { path, .. } => stat_path(path).ok(),
            _ => None,
        })
        .collect()
}

/// The descriptors the targets hold from their checks to the end of the run: those that do
/// not give theirs back (`released`), and every block device.
pub(super) fn held_by_targets(looks: &[Option<PathStat>], released: &[bool]) -> u64 {
    looks
        .iter()
        .zip(released)
        .filter(|&(look, &released)| !released || look.is_some_and(|stat| stat.is_block_device()))
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
