//! Which test files are filled with data before the run and which are only sized, decided
//! per file from the jobs that use it, as fio decides when it lays out a file (`extend_file`
//! in its filesetup.c): a file is written out when a job reads it, when a job writes it with
//! `overwrite=1`, or when a job's engine cannot extend a file; a file that jobs only write
//! (or trim) gets its size as fio's `fallocate=` says (`native` by default: `fallocate(2)`,
//! blocks reserved and no data written), and the writes put the data in.
//!
//! Which job decides: fio lays a file out for the first job that finds it too short (all
//! files before any job starts, in job order), so a reading job after a writing one reads a
//! file fio only sized, and its reads of blocks not yet written are answered without the
//! device. Jobs from an fio job file ([`FileSetup::first_job_lays_out`]) get exactly that, and
//! the run says so ([`reads_of_files_only_sized`]). For iopath's own workloads (the default
//! suite, command-line runs, TOML jobs) a file that any job of the run reads is filled, since
//! a read of a hole or of an unwritten extent says nothing about the storage.
//!
//! [`FileSetup::first_job_lays_out`]: crate::result::FileSetup::first_job_lays_out

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
    // Files whose first job lays them out, as in fio: later jobs change nothing.
    let mut decided = vec![false; plan.targets.len()];
    for job in plan.tests.iter().flat_map(|test| &test.jobs) {
        let needs = needs_layout(&job.workload);
        let first_lays_out = job.workload.file_setup.first_job_lays_out;
        for &index in &job.targets {
            if let (Some(first), Some(layout), Some(decided)) = (
                first_use.get_mut(index),
                laid_out.get_mut(index),
                decided.get_mut(index),
            ) {
                if *decided {
                    continue;
                }
                if first.is_none() {
                    *first = Some(job.workload.file_setup.preallocation);
                    *decided = first_lays_out;
                }
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

/// The jobs of `plan` that may read blocks of a file created only sized (`sized[i]`: target
/// `i` is created without data) before any write reached them, as `(job name, file)`: such
/// reads are answered without the device (fio's layout, kept for fio job files). A reader is
/// named when it runs with the first job that used the file, or after a first job that may
/// not have written all of it (bounded by time, or by fewer bytes than its region).
pub fn reads_of_files_only_sized(plan: &Plan, sized: &[bool]) -> Vec<(String, usize)> {
    // For each file: the test of its first job, and whether that job wrote all of it.
    let mut first: Vec<Option<(usize, bool)>> = vec![None; plan.targets.len()];
    let mut found = Vec::new();
    for (test_index, test) in plan.tests.iter().enumerate() {
        for job in &test.jobs {
            for &index in &job.targets {
                if let Some(slot @ None) = first.get_mut(index) {
                    *slot = Some((test_index, writes_all_of_it(job)));
                }
            }
            if job.workload.engine == EngineKind::Null || !job.workload.reads() {
                continue;
            }
            let unwritten = job.targets.iter().copied().find(|&index| {
                sized.get(index).copied().unwrap_or(false)
                    && first[index].is_some_and(|(first_test, wrote_all)| {
                        first_test == test_index || !wrote_all
                    })
            });
            if let Some(index) = unwritten {
                found.push((job.name.clone(), index));
            }
        }
    }
    found
}

/// Whether `job` writes every block of its region before it ends: bounded by bytes alone, at
/// least its region on each of its files.
fn writes_all_of_it(job: &crate::workload::JobPlan) -> bool {
    let workload = &job.workload;
    match (workload.length, workload.region_size_bytes) {
        (
            crate::result::RunLength::Bytes {
                bytes,
                time_limit_ns: None,
            },
            Some(region),
        ) => workload.writes() && bytes >= region.saturating_mul(job.targets.len() as u64),
        _ => false,
    }
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
        // iopath's own workloads: a file any job reads is filled.
        let plan = plan(vec![job(0, vec![0, 1]), job(100, vec![1])]);
        assert_eq!(decided(&plan), [Some(Preallocation::Native), None]);
        assert!(reads_of_files_only_sized(&plan, &[true, false]).is_empty());
    }

    /// `job` as an fio job file maps it.
    fn from_fio(mut job: JobPlan) -> JobPlan {
        job.workload.file_setup.first_job_lays_out = true;
        job
    }

    #[test]
    fn in_fio_job_files_the_first_job_on_a_file_lays_it_out() {
        // fio lays each file out for the first job using it: a writer first leaves file b
        // only sized for the reader after it; a reader first fills file a for the writer.
        let plan = plan(vec![
            from_fio(job(100, vec![0])),
            from_fio(job(0, vec![0, 1])),
            from_fio(job(100, vec![1])),
        ]);
        assert_eq!(decided(&plan), [None, Some(Preallocation::Native)]);
        // The reader of b is named, with the file.
        let mut reader = from_fio(job(100, vec![1]));
        reader.name = "reader".into();
        let plan = super::tests::plan(vec![from_fio(job(0, vec![1])), reader]);
        assert_eq!(
            reads_of_files_only_sized(&plan, &[false, true]),
            [("reader".to_string(), 1)]
        );
        // A writer bounded by bytes that writes its whole region before the reader's test
        // leaves no block unwritten: nothing to say.
        let mut whole = from_fio(job(0, vec![1]));
        whole.workload.length = crate::result::RunLength::Bytes {
            bytes: 1 << 20,
            time_limit_ns: None,
        };
        whole.workload.region_size_bytes = Some(1 << 20);
        let plan = super::tests::plan(vec![whole.clone(), from_fio(job(100, vec![1]))]);
        assert!(reads_of_files_only_sized(&plan, &[false, true]).is_empty());
        // Run together, the reader may still get there first.
        let mut together = super::tests::plan(vec![whole, from_fio(job(100, vec![1]))]);
        let reader = together.tests.pop().unwrap().jobs;
        together.tests[0].jobs.extend(reader);
        assert_eq!(
            reads_of_files_only_sized(&together, &[false, true]).len(),
            1
        );
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
