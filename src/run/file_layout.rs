//! Which test files are filled with data before the run and which are only sized, decided
//! per file from the jobs that use it, as fio decides when it lays out a file (`extend_file`
//! in its filesetup.c): a file is written out when a job reads it, when a job writes it with
//! `overwrite=1`, or when a job's engine cannot extend a file; a file that jobs only write
//! (or trim) gets its size as fio's `fallocate=` says (`native` by default: `fallocate(2)`,
//! blocks reserved and no data written), and the writes put the data in.
//!
//! iopath keeps one rule of its own on top: a file iopath reads is always filled with
//! incompressible data, whichever job reads it. fio lays a file out for the first job that
//! finds it too short, so a reading job after a writing one may read a file fio only sized;
//! iopath fills a file that any job of the run reads, since a read of a hole or of an
//! unwritten extent is answered without the device and says nothing about the storage.

use super::pending_target::PendingTarget;
use crate::result::{DataPath, EngineKind, Preallocation, Workload};
use crate::workload::Plan;

/// Whether `workload` needs the files it uses filled with data before it runs: it reads them,
/// or it writes them and overwrites (fio's `overwrite=1`, `--overwrite`) or maps them (fio's
/// `mmap` engine cannot extend a file). The null engine does no I/O and needs nothing.
pub fn needs_layout(workload: &Workload) -> bool {
    if workload.engine == EngineKind::Null {
        return false;
    }
    let cannot_extend = workload.handling.data_path == DataPath::Mmap;
    workload.reads() || (workload.writes() && (workload.file_setup.overwrite || cannot_extend))
}

/// For each target of `plan` (by index): the preallocation to size it with when some job uses
/// it and none needs it laid out (that of the first job using it, as in fio, where the first
/// job to find the file short sets it up); `None` when a job needs it filled or none uses it.
fn sized_only(plan: &Plan) -> Vec<Option<Preallocation>> {
    // One pass over the jobs, not one per target: a job may have a million files.
    let mut first_use: Vec<Option<Preallocation>> = vec![None; plan.targets.len()];
    let mut laid_out = vec![false; plan.targets.len()];
    for job in plan.tests.iter().flat_map(|test| &test.jobs) {
        let needs = needs_layout(&job.workload);
        for &index in &job.targets {
            if let (Some(first), Some(layout)) = (first_use.get_mut(index), laid_out.get_mut(index))
            {
                first.get_or_insert(job.workload.file_setup.preallocation);
                *layout |= needs;
            }
        }
    }
    first_use
        .into_iter()
        .zip(laid_out)
        .map(|(first, laid_out)| first.filter(|_| !laid_out))
        .collect()
}

/// Turns each test file to create that no job needs laid out into
/// [`PendingTarget::CreateSized`]: it is created without data, sized as its first job's
/// `fallocate=` says, and the jobs' writes put the data in.
pub(super) fn size_files_only_written(plan: &Plan, targets: &mut [PendingTarget]) {
    for (target, preallocation) in targets.iter_mut().zip(sized_only(plan)) {
        if let (
            Some(preallocation),
            PendingTarget::Create {
                path,
                size,
                temporary,
            },
        ) = (preallocation, &mut *target)
        {
            *target = PendingTarget::CreateSized {
                path: std::mem::take(path),
                size: *size,
                temporary: *temporary,
                preallocation,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::TargetSpec;
    use crate::workload::suite::base_workload;
    use crate::workload::{BlockSizeMix, JobPlan, TestPlan};
    use std::path::PathBuf;

    /// A job on `targets` with `read_percent` reads (the rest writes).
    fn job(read_percent: u8, targets: Vec<usize>) -> JobPlan {
        let mut workload = base_workload();
        workload.set_simple(&BlockSizeMix::parse("4k").unwrap(), read_percent, 100, 4096);
        JobPlan {
            name: "j".into(),
            group: 0,
            workload,
            targets,
            replay: None,
        }
    }

    /// A plan of two files to create, one test per job.
    fn plan(jobs: Vec<JobPlan>) -> Plan {
        let target = |name: &str| TargetSpec::Path {
            path: PathBuf::from(name),
            create_size: Some(1 << 20),
        };
        Plan {
            targets: vec![target("a"), target("b")],
            tests: jobs
                .into_iter()
                .map(|job| TestPlan {
                    name: job.name.clone(),
                    jobs: vec![job],
                    settings: Default::default(),
                })
                .collect(),
        }
    }

    fn to_create() -> Vec<PendingTarget> {
        ["a", "b"]
            .into_iter()
            .map(|name| PendingTarget::Create {
                path: PathBuf::from(name),
                size: 1 << 20,
                temporary: false,
            })
            .collect()
    }

    /// What becomes of the two files: `Some(preallocation)` when only sized, `None` when
    /// filled.
    fn decided(plan: &Plan) -> Vec<Option<Preallocation>> {
        let mut targets = to_create();
        size_files_only_written(plan, &mut targets);
        targets
            .iter()
            .map(|target| match target {
                PendingTarget::Create { .. } => None,
                PendingTarget::CreateSized { preallocation, .. } => Some(*preallocation),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_file_only_written_is_sized_and_a_file_read_is_filled() {
        let plan = plan(vec![job(0, vec![0]), job(100, vec![1])]);
        assert_eq!(decided(&plan), [Some(Preallocation::Native), None]);
        // Reads and writes in one job (randrw) read what the layout holds: filled.
        let plan = super::tests::plan(vec![job(70, vec![0, 1])]);
        assert_eq!(decided(&plan), [None, None]);
    }

    #[test]
    fn a_file_any_job_reads_is_filled_even_after_a_writer() {
        // fio would read what its first (writing) job only sized; iopath fills it.
        let plan = plan(vec![job(0, vec![0, 1]), job(100, vec![1])]);
        assert_eq!(decided(&plan), [Some(Preallocation::Native), None]);
    }

    #[test]
    fn overwrite_and_a_mapping_lay_the_file_out_for_writes() {
        let mut overwriting = job(0, vec![0]);
        overwriting.workload.file_setup.overwrite = true;
        let mut mapping = job(0, vec![1]);
        mapping.workload.handling.data_path = DataPath::Mmap;
        assert_eq!(decided(&plan(vec![overwriting, mapping])), [None, None]);
    }

    #[test]
    fn the_first_job_says_how_the_file_is_sized() {
        let mut first = job(0, vec![0]);
        first.workload.file_setup.preallocation = Preallocation::Truncate;
        let mut second = job(0, vec![0, 1]);
        second.workload.file_setup.preallocation = Preallocation::Keep;
        assert_eq!(
            decided(&plan(vec![first, second])),
            [Some(Preallocation::Truncate), Some(Preallocation::Keep)]
        );
    }

    #[test]
    fn the_null_engine_needs_no_layout_and_an_unused_file_is_left_as_it_was() {
        let mut null_reader = job(100, vec![0]);
        null_reader.workload.engine = EngineKind::Null;
        assert!(!needs_layout(&null_reader.workload));
        // Nothing uses file b: left as it was.
        assert_eq!(
            decided(&plan(vec![null_reader, job(0, vec![0])])),
            [Some(Preallocation::Native), None]
        );
    }

    #[test]
    fn a_trim_only_job_needs_no_layout() {
        let mut trimmer = job(0, vec![0]);
        trimmer.workload.set_simple_with_trims(
            &BlockSizeMix::parse("4k").unwrap(),
            0,
            100,
            100,
            4096,
        );
        assert!(!trimmer.workload.reads() && !trimmer.workload.writes());
        assert!(!needs_layout(&trimmer.workload));
    }
}
