//! File descriptors a run holds at once, checked against the process's limit
//! (`RLIMIT_NOFILE`, `ulimit -n`) before any target is opened.
//!
//! Every worker opens each file it moves over (one descriptor per file and worker, as in
//! fio; a file's cached pages dropped at each pass are dropped through that same
//! descriptor). A target keeps the descriptor of its checks to the end of the run only in a
//! run of at most [`super::files_on_demand::HELD_TARGETS_AT_MOST`] targets (and a block
//! device always): the files of a larger run, and the files of the file-operation engines and
//! of jobs that open them on demand, give it back once checked
//! ([`super::files_on_demand::targets_released_after_checks`]). A job of 20 000 files
//! therefore needs 20 000 descriptors and a reserve. When that is above the soft limit, the
//! soft limit is raised (to the hard limit, and the hard one too where the process may); when
//! it still does not fit, the run is refused with the figures, before anything is opened or
//! written. The targets' own descriptors are
//! checked before they are opened, counted from one look at each path
//! (the `looked_targets` module); the workers' once the plan has passed its thread and memory
//! budget, whose refusal says more about a plan of too many workers; a confirming
//! experiment's before the run, as its test's ([`super::confirm`]).
//!
//! A job whose workers open their files on demand, at most `openfiles` at once
//! ([`super::files_on_demand`]), counts that bound per worker, and its files hold no
//! descriptor of their own: 100 000 files with `openfiles=64` need 64 per worker (and, moving
//! bytes through mappings, hold 64 mappings, not 100 000).

use super::plan_error::PlanError;
use super::shape::TestShape;
use crate::engine::file_operations::FileOperation;
use crate::workload::TestPlan;

/// Descriptors kept for everything else: the standard streams, rings, sockets, /proc reads.
pub const RESERVED_DESCRIPTORS: u64 = 256;

/// The most descriptors the workers of `test` open together: one per file and worker, or
/// the `openfiles` bound per worker and file set of a job that opens its files on demand.
pub fn opened_by_workers(test: &TestPlan, io_uring: Option<&std::io::Error>) -> u64 {
    test.jobs
        .iter()
        .map(|job| {
            let shape = TestShape::of(job, io_uring);
            let workers = u64::from(shape.workers_per_target);
            if FileOperation::of(job.workload.engine).is_some() {
                // Each operation opens and closes its file, or opens none.
                return workers;
            }
            if super::files_on_demand::opens_files_on_demand(job, shape.engine) {
                let sets = job.file_sets().len() as u64;
                let bound = u64::from(job.workload.worker_files.open_at_once());
                return workers * sets * bound;
            }
            workers * job.targets.len() as u64
        })
        .sum()
}

/// Makes room for `needed` descriptors at once: the soft limit raised when it is lower (up to
/// the hard one, and that too where the process may), or the figures of the refusal.
pub fn make_room_for(needed: u64) -> Result<(), PlanError> {
    let (soft, hard) = descriptor_limits();
    if needed <= soft {
        return Ok(());
    }
    // Up to the hard limit anyone may raise the soft one; above it only a privileged process.
    if set_descriptor_limits(needed, hard.max(needed)) {
        return Ok(());
    }
    Err(PlanError::TooManyDescriptors {
        needed,
        limit: descriptor_limits().1,
    })
}

/// The soft and hard `RLIMIT_NOFILE`.
pub fn descriptor_limits() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct it is given, which lives here.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return (1024, 1024);
    }
    (limit.rlim_cur, limit.rlim_max)
}

/// Sets the soft and hard `RLIMIT_NOFILE`; false when the kernel refuses (a hard limit above
/// `fs.nr_open`, or raised without `CAP_SYS_RESOURCE`).
fn set_descriptor_limits(soft: u64, hard: u64) -> bool {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit only reads the rlimit it is given, which lives here.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_read_back_as_the_kernel_keeps_them() {
        let (soft, hard) = descriptor_limits();
        assert!(soft >= 3 && soft <= hard, "{soft} {hard}");
        let text = std::fs::read_to_string("/proc/self/limits").unwrap();
        let line = text
            .lines()
            .find(|line| line.starts_with("Max open files"))
            .unwrap();
        let figures: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
        assert_eq!(figures, [soft.to_string(), hard.to_string()]);
    }
}
