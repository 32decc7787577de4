//! Whole job files through [`super::load_with`]: inheritance, units, phases and groups, files,
//! run lengths, rates, overrides, errors with their lines, and junk that must never panic.

use super::expand::Environment;
use super::load_with;
use crate::input::job_file::{JobFileError, JobFileRequest, LoadedJob};
use crate::input::options::WorkloadOptions;
use crate::result::{AccessHint, AccessLine, EngineKind, OffsetDistribution, RunLength};
use crate::targets::TargetSpec;
use crate::workload::steady::SteadyMetric;
use std::path::{Path, PathBuf};

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

struct JobDir {
    dir: tempfile::TempDir,
}

impl JobDir {
    fn new() -> Self {
        JobDir {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn load(&self, text: &str, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
        let path = self.write("job.fio", text);
        load_with(&path, request, &Environment::fixed(&[("BS", "8k")]))
    }
}

fn load(text: &str) -> Result<LoadedJob, JobFileError> {
    JobDir::new().load(text, &JobFileRequest::default())
}

fn path_of(spec: &TargetSpec) -> (&Path, Option<u64>) {
    match spec {
        TargetSpec::Path { path, create_size } => (path, *create_size),
        other => panic!("not a path: {other:?}"),
    }
}

#[test]
fn globals_apply_below_and_later_options_win() {
    let loaded = load(
        "[global]\nrw=randread\nbs=4k\nsize=1g\n[a]\nbs=${BS}\n[global]\niodepth=8\n[b]\nrw=write\nrw=randwrite\n[a]\n",
    )
    .unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    assert_eq!(jobs.len(), 3, "duplicate names are separate jobs");
    assert_eq!(jobs[0].name, "a");
    assert_eq!(
        jobs[0].workload.access.lines,
        [AccessLine::new(8192, 1, 100, 100)]
    );
    assert_eq!(
        jobs[0].workload.queue_depth, 1,
        "a later [global] does not reach back"
    );
    assert_eq!(jobs[1].workload.access.lines[0].read_percent, 0);
    assert_eq!(jobs[1].workload.access.lines[0].random_percent, 100);
    assert_eq!(
        jobs[2].workload.engine,
        EngineKind::Sync,
        "psync by default"
    );
    assert!(jobs[1].workload.buffered, "fio's default is buffered I/O");
}

#[test]
fn a_global_name_is_replaced_by_the_section_name() {
    let loaded =
        load("[global]\nname=everyone\nsize=1m\n[first]\n[second]\nname=renamed\n").unwrap();
    let names: Vec<&str> = loaded.plan.tests[0]
        .jobs
        .iter()
        .map(|j| j.name.as_str())
        .collect();
    assert_eq!(names, ["first", "renamed"]);
}

#[test]
fn kb_base_applies_to_its_whole_section_and_below() {
    let loaded =
        load("[global]\nsize=1m\nbs=4k\nkb_base=1000\n[a]\n[b]\nkb_base=1024\nbs=4KiB\n").unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    assert_eq!(jobs[0].workload.access.lines[0].size_bytes, 4000);
    assert_eq!(jobs[0].workload.region_size_bytes, Some(1_000_000));
    assert_eq!(jobs[1].workload.access.lines[0].size_bytes, 4000);
    assert!(
        loaded
            .notes
            .iter()
            .any(|n| n.contains("4KiB") && n.contains("4000")),
        "{:?}",
        loaded.notes
    );
}

#[test]
fn per_direction_block_sizes_and_splits() {
    let loaded = load(
        "[a]\nsize=1g\nrw=randrw\nrwmixread=70\nbs=4k,64k\n[b]\nsize=1g\nrw=rw\nbssplit=2k/50:4k/50,4k/90:8k/10\n",
    )
    .unwrap();
    let a = &loaded.plan.tests[0].jobs[0].workload.access;
    assert_eq!(
        a.lines
            .iter()
            .map(|l| (l.size_bytes, l.weight, l.read_percent))
            .collect::<Vec<_>>(),
        [(4096, 7, 100), (65536, 3, 0)]
    );
    let b = &loaded.plan.tests[0].jobs[1].workload.access;
    assert_eq!(b.lines.len(), 4);
    assert!((b.read_percent() - 50.0).abs() < 1e-9);
}

#[test]
fn rwmixwrite_given_later_overrides_rwmixread() {
    let loaded = load("[a]\nsize=1m\nrw=randrw\nrwmixread=60\nrwmixwrite=10\n").unwrap();
    let access = &loaded.plan.tests[0].jobs[0].workload.access;
    assert!((access.read_percent() - 90.0).abs() < 1e-9);
}

#[test]
fn stonewalls_start_tests_and_groups_follow_fio() {
    let loaded = load(
        "[global]\nsize=1m\n[a]\n[b]\nnew_group\n[c]\nstonewall\n[d]\nwait_for_previous\nnew_group\n[e]\n",
    )
    .unwrap();
    let tests = &loaded.plan.tests;
    let shape: Vec<Vec<(&str, u32)>> = tests
        .iter()
        .map(|t| t.jobs.iter().map(|j| (j.name.as_str(), j.group)).collect())
        .collect();
    assert_eq!(
        shape,
        [
            vec![("a", 0), ("b", 1)],
            vec![("c", 2)],
            vec![("d", 3), ("e", 3)]
        ]
    );
    assert_eq!(tests[0].name, "a + b");
    let first_stonewalled = load("[a]\nsize=1m\nstonewall\n[b]\nsize=1m\n").unwrap();
    assert_eq!(first_stonewalled.plan.tests.len(), 1);
    assert_eq!(first_stonewalled.plan.tests[0].jobs[1].group, 0);
}

#[test]
fn wait_for_starts_a_test_after_a_lone_job_and_is_refused_beside_others() {
    let shape = |text: &str| -> Vec<Vec<(String, u32)>> {
        load(text)
            .unwrap()
            .plan
            .tests
            .iter()
            .map(|t| t.jobs.iter().map(|j| (j.name.clone(), j.group)).collect())
            .collect()
    };
    // fio's examples/nfs.fio: the reader waits for the writer, in the writer's group.
    assert_eq!(
        shape("[global]\nsize=1m\n[write]\nrw=write\nstonewall\n[read]\nwait_for=write\nrw=read\n"),
        [
            vec![("write".to_string(), 0)],
            vec![("read".to_string(), 0)]
        ]
    );
    // The named job ran in an earlier test: nothing more to wait for.
    assert_eq!(
        shape("[global]\nsize=1m\n[a]\n[b]\nstonewall\n[c]\nwait_for=a\n").len(),
        2
    );
    let error = load("[global]\nsize=1m\n[a]\n[b]\n[c]\nwait_for=a\n").unwrap_err();
    assert_eq!(error.line, Some(6));
    assert!(error.message.contains("beside"), "{}", error.message);
    let error = load("[a]\nsize=1m\nwait_for=later\n[later]\nsize=1m\n").unwrap_err();
    assert_eq!(error.line, Some(3));
    assert!(
        error.message.contains("no job of that name"),
        "{}",
        error.message
    );
}

#[test]
fn numjobs_without_filename_gives_each_clone_its_files() {
    let loaded = load("[w]\nsize=64m\nnumjobs=3\nnrfiles=2\ndirectory=d1:d2\nrw=write\n").unwrap();
    let plan = &loaded.plan;
    let names: Vec<(PathBuf, Option<u64>)> = plan
        .targets
        .iter()
        .map(|t| {
            let (path, size) = path_of(t);
            (path.to_path_buf(), size)
        })
        .collect();
    assert_eq!(names.len(), 6);
    assert_eq!(names[0], (PathBuf::from("d1/w.0.0"), Some(32 * MIB)));
    assert_eq!(names[1].0, PathBuf::from("d1/w.0.1"));
    assert_eq!(names[2].0, PathBuf::from("d2/w.1.0"));
    assert_eq!(names[5].0, PathBuf::from("d1/w.2.1"));
    let job = &plan.tests[0].jobs[0];
    assert_eq!(job.workload.workers, 1);
    assert_eq!(job.targets, (0..6).collect::<Vec<_>>());
    assert_eq!(job.workload.region_size_bytes, Some(32 * MIB));
    assert_eq!(
        job.workload.length,
        RunLength::Bytes {
            bytes: 3 * 64 * MIB,
            time_limit_ns: None
        }
    );
}

#[test]
fn numjobs_with_filename_shares_the_files() {
    let loaded = load(
        "[global]\nfilename=/data/a\\:b:shared\ndirectory=/mnt\n[r]\nsize=1g\nnumjobs=4\n[s]\nsize=2g\nfilename_format=x\n",
    )
    .unwrap();
    let plan = &loaded.plan;
    assert_eq!(
        plan.targets.len(),
        2,
        "two jobs on the same files share the targets"
    );
    assert_eq!(
        path_of(&plan.targets[0]),
        (Path::new("/data/a:b"), Some(GIB))
    );
    assert_eq!(path_of(&plan.targets[1]).0, Path::new("/mnt/shared"));
    let jobs = &plan.tests[0].jobs;
    assert_eq!(jobs[0].workload.workers, 4);
    assert_eq!(jobs[0].targets, [0, 1]);
    assert_eq!(jobs[0].workload.region_size_bytes, Some(GIB / 2));
    assert_eq!(jobs[1].targets, [0, 1]);
}

#[test]
fn default_file_names_follow_fio() {
    let loaded = load("[job one]\nsize=1m\n").unwrap();
    assert_eq!(path_of(&loaded.plan.targets[0]).0, Path::new("job one.0.0"));
}

#[test]
fn run_lengths_follow_time_based_size_and_loops() {
    let timed = load("[a]\nsize=1g\ntime_based\nruntime=2m\nramp_time=5\n").unwrap();
    let workload = &timed.plan.tests[0].jobs[0].workload;
    assert_eq!(
        workload.length,
        RunLength::Time {
            duration_ns: 120_000_000_000
        }
    );
    assert_eq!(workload.ramp_ns, 5_000_000_000);
    let sized = load("[a]\nsize=1g\nloops=2\nruntime=30\nnumjobs=2\n").unwrap();
    assert_eq!(
        sized.plan.tests[0].jobs[0].workload.length,
        RunLength::Bytes {
            bytes: 4 * GIB,
            time_limit_ns: Some(30_000_000_000)
        }
    );
    let io_size = load("[a]\nsize=48k\nio_size=24k\n").unwrap();
    assert!(matches!(
        io_size.plan.tests[0].jobs[0].workload.length,
        RunLength::Bytes { bytes: 24576, .. }
    ));
    assert_eq!(timed.plan.tests[0].jobs[0].workload.ramp_ns, 5_000_000_000);
}

#[test]
fn ramp_time_on_a_byte_count_and_time_based_without_runtime_run_as_fio_runs_them() {
    let loaded = load("[a]\nsize=1g\n\nramp_time=5\n").unwrap();
    let workload = &loaded.plan.tests[0].jobs[0].workload;
    assert_eq!(workload.ramp_ns, 5_000_000_000);
    assert!(matches!(
        workload.length,
        RunLength::Bytes { bytes: GIB, .. }
    ));
    assert!(
        loaded
            .notes
            .iter()
            .any(|n| n.contains("job.fio:4:") && n.contains("counts towards the bytes")),
        "{:?}",
        loaded.notes
    );
    // fio drops time_based without runtime ("time_based requires a runtime") and runs the
    // byte count.
    let loaded = load("[a]\nsize=1g\ntime_based\n").unwrap();
    assert!(matches!(
        loaded.plan.tests[0].jobs[0].workload.length,
        RunLength::Bytes { bytes: GIB, .. }
    ));
    assert!(
        loaded
            .notes
            .iter()
            .any(|n| n.contains("job.fio:3:") && n.contains("time_based without runtime")),
        "{:?}",
        loaded.notes
    );
}

#[test]
fn rates_are_per_clone_and_direction() {
    let loaded = load(
        "[a]\nsize=1g\nrw=read\nrate=1m\nnumjobs=2\nfilename=f\n[b]\nsize=1g\nrw=randrw\nrwmixread=50\nrate_iops=100,\n[c]\nsize=1g\nrate=,1m\n",
    )
    .unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    assert_eq!(jobs[0].workload.rate_bytes_per_second, Some(2 * MIB));
    assert_eq!(
        jobs[1].workload.rate_iops,
        Some(200),
        "reads at 100 are half of a 200 total"
    );
    assert_eq!(jobs[2].workload.rate_bytes_per_second, None);
    assert!(loaded.notes.iter().any(|n| n.contains("has no effect")));
}

#[test]
fn engines_depths_and_sync_options() {
    let loaded = load(
        "[global]\nsize=1g\n[a]\nioengine=libaio\niodepth=32\ndirect=1\n[b]\niodepth=16\n[c]\nioengine=null\n[d]\nrw=write\nsync=dsync\nfsync=8\nend_fsync=1\n",
    )
    .unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    assert_eq!(jobs[0].workload.engine, EngineKind::IoUring);
    assert_eq!(jobs[0].workload.queue_depth, 32);
    assert!(!jobs[0].workload.buffered);
    assert_eq!(jobs[1].workload.engine, EngineKind::Sync);
    assert_eq!(
        jobs[1].workload.queue_depth, 1,
        "sync engines keep one I/O in flight"
    );
    assert_eq!(jobs[2].workload.engine, EngineKind::Null);
    assert_eq!(jobs[2].workload.region_size_bytes, None);
    let d = &jobs[3].workload;
    assert!(d.sync_writes && d.fsync_at_end);
    assert_eq!(d.fsync_every_writes, Some(8));
    assert!(
        loaded
            .notes
            .iter()
            .any(|n| n.contains("libaio runs as io_uring"))
    );
}

#[test]
fn buffered_libaio_runs_one_io_at_a_time_as_linux_aio_does() {
    // Linux AIO performs a buffered read or write inside io_submit: fio's libaio job without
    // O_DIRECT has one I/O in flight, whatever its iodepth; with O_DIRECT it queues.
    let loaded = load(
        "[global]\nsize=1g\nioengine=libaio\niodepth=16\n[buffered]\ndirect=0\n[direct]\ndirect=1\n",
    )
    .unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    assert_eq!(jobs[0].workload.engine, EngineKind::Sync);
    assert_eq!(jobs[0].workload.queue_depth, 1);
    assert!(jobs[0].workload.buffered);
    assert_eq!(jobs[1].workload.engine, EngineKind::IoUring);
    assert_eq!(jobs[1].workload.queue_depth, 16);
    assert!(
        !loaded
            .notes
            .iter()
            .any(|n| n.contains("iodepth=16 with a sync engine")),
        "the engine's own note says why: {:?}",
        loaded.notes
    );
}

#[test]
fn protocol_engines_run_on_their_network_targets() {
    let loaded = load(
        "[global]\nioengine=nbd\nuri=nbd://127.0.0.1/disk\ntime_based\nruntime=60\n[job0]\noffset=0\n[job1]\noffset=64m\n",
    )
    .unwrap();
    assert_eq!(loaded.plan.targets.len(), 1);
    assert!(matches!(loaded.plan.targets[0], TargetSpec::Network(_)));
    let jobs = &loaded.plan.tests[0].jobs;
    assert_eq!(jobs[1].workload.engine, EngineKind::Nbd);
    assert_eq!(jobs[1].workload.region_offset_bytes, 64 * MIB);
    assert!(!loaded.plan.tests[0].settings.drop_caches_before);
    let iscsi = load(
        "[iscsi]\nioengine=libiscsi\nfilename=iscsi\\://127.0.0.1/iqn.2016-02.com.fio\\:system\\:fio/1\nsize=1m\n",
    )
    .unwrap();
    assert_eq!(
        iscsi.plan.tests[0].jobs[0].workload.engine,
        EngineKind::Iscsi
    );
    let TargetSpec::Network(target) = &iscsi.plan.targets[0] else {
        panic!("{:?}", iscsi.plan.targets)
    };
    assert!(
        target
            .to_string()
            .contains("iqn.2016-02.com.fio:system:fio"),
        "{target}"
    );
    // fio's libnfs engine: each clone's file is named in the directory of nfs_url.
    let nfs = load(
        "[global]\nioengine=nfs\nnfs_url=nfs://127.0.0.1/export/dir?version=3\nsize=8m\nnumjobs=2\nfilename_format=f.$clientuid.$jobnum\n[w]\nrw=write\n",
    )
    .unwrap();
    let urls: Vec<String> = nfs
        .plan
        .targets
        .iter()
        .map(|target| match target {
            TargetSpec::Network(network) => network.to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        urls,
        [
            "nfs://127.0.0.1:2049/export/dir/f..0",
            "nfs://127.0.0.1:2049/export/dir/f..1"
        ]
    );
    let job = &nfs.plan.tests[0].jobs[0];
    assert_eq!(job.workload.engine, EngineKind::Nfs);
    assert_eq!(job.workload.workers, 1);
    let error = load("[a]\nioengine=nfs\nsize=1m\n").unwrap_err();
    assert!(error.message.contains("nfs_url="), "{}", error.message);
    let error = load("[a]\nioengine=nfs\nnfs_url=nfs://h/e\nnrfiles=2\nsize=1m\n").unwrap_err();
    assert!(error.message.contains("numjobs=2"), "{}", error.message);
    let error = load("[a]\nioengine=nfs\nnfs_url=/mnt/nfs\nsize=1m\n").unwrap_err();
    assert_eq!(error.line, Some(3));
    let error = load("[a]\nioengine=nbd\nsize=1m\n").unwrap_err();
    assert_eq!(error.line, Some(2));
    assert!(error.message.contains("uri="), "{}", error.message);
    let error = load("[a]\nioengine=nbd\nuri=${NOT_SET}\n").unwrap_err();
    assert_eq!(error.line, Some(3));
    let error = load("[a]\nioengine=nbd\nuri=iscsi://h/iqn.x/1\nsize=1m\n").unwrap_err();
    assert!(
        error.message.contains("not a target of ioengine=nbd"),
        "{}",
        error.message
    );
}

#[test]
fn distributions_seeds_and_alignment() {
    let loaded = load(
        "[a]\nsize=1g\nrw=randread\nrandom_distribution=zoned:50/5:30/15:20/\nblockalign=512\nbs=4k\nrandseed=42\nnorandommap\n",
    )
    .unwrap();
    let workload = &loaded.plan.tests[0].jobs[0].workload;
    assert!(matches!(
        workload.distribution,
        OffsetDistribution::Zoned { .. }
    ));
    assert_eq!(workload.access.lines[0].alignment_bytes, 512);
    assert_eq!(workload.seed, 42);
    assert!(!loaded.notes.iter().any(|n| n.contains("norandommap")));
}

#[test]
fn steady_state_becomes_the_test_criterion() {
    let loaded = load(
        "[a]\nsize=1g\ntime_based\nruntime=5m\nramp_time=10\nss=bw_slope:1%\nss_dur=11s\nss_ramp=10s\n",
    )
    .unwrap();
    let steady = loaded.plan.tests[0].settings.steady.clone().unwrap();
    assert_eq!(steady.metric, SteadyMetric::Bandwidth);
    assert!(steady.slope);
    assert!(
        (steady.limit_percent - 10.0).abs() < 1e-9,
        "1 %/s over 10 s"
    );
    assert_eq!(steady.window_ns, 11_000_000_000);
    // ss_ramp longer than the ramp: samples start after it; ss_interval groups the seconds,
    // and fio's slope (per sample) scales by the samples of the window.
    let loaded = load(
        "[a]\nsize=1g\ntime_based\nruntime=5m\nss=iops_slope:1%\nss_dur=30s\nss_ramp=10s\nss_interval=10s\n",
    )
    .unwrap();
    let steady = loaded.plan.tests[0].settings.steady.clone().unwrap();
    assert_eq!(steady.settle_ns, 10_000_000_000);
    assert_eq!(steady.interval_ns, 10_000_000_000);
    assert!(
        (steady.limit_percent - 2.0).abs() < 1e-9,
        "1 % per sample, 3 samples"
    );
    let error =
        load("[a]\nsize=1g\ntime_based\nruntime=5m\nss=iops:10%\nss_dur=30s\nss_interval=4s\n")
            .unwrap_err();
    assert_eq!(error.line, Some(7));
    assert!(
        error.message.contains("steadystate_check_interval"),
        "{}",
        error.message
    );
}

#[test]
fn buffered_jobs_invalidate_their_own_files_unless_invalidate_is_off() {
    let loaded = load(
        "[a]\nsize=1m\nrw=randread\n[b]\nstonewall\nsize=1m\ninvalidate=0\nfadvise_hint=0\n[c]\nstonewall\nsize=1m\ndirect=1\n[d]\nsize=1m\nfadvise_hint=sequential\n",
    )
    .unwrap();
    let jobs: Vec<_> = loaded
        .plan
        .tests
        .iter()
        .flat_map(|test| &test.jobs)
        .map(|job| &job.workload.handling)
        .collect();
    // Never the whole page cache: each buffered job drops its own files' pages.
    assert!(
        loaded
            .plan
            .tests
            .iter()
            .all(|t| !t.settings.drop_caches_before)
    );
    assert_eq!(
        jobs.iter().map(|h| h.invalidate_cache).collect::<Vec<_>>(),
        [true, false, false, true]
    );
    assert_eq!(
        jobs.iter().map(|h| h.access_hint).collect::<Vec<_>>(),
        [
            AccessHint::ByPattern,
            AccessHint::None,
            AccessHint::ByPattern,
            AccessHint::Sequential
        ]
    );
    assert!(load("[a]\nfadvise_hint=sideways\n").is_err());
}

#[test]
fn create_on_open_and_force_async_are_read_as_fio_reads_them() {
    let loaded = load(
        "[w]\nrw=write\nsize=1m\ncreate_on_open=1\n[u]\nioengine=io_uring\niodepth=8\nsize=1m\nforce_async=4\n",
    )
    .unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    assert!(jobs[0].workload.handling.create_on_open);
    assert_eq!(jobs[1].workload.handling.force_async_every, 4);
    assert_eq!(jobs[0].workload.handling.force_async_every, 0);
    // A job that reads a file created at open reads what its writes laid out, as in fio.
    let loaded = load("[r]\nrw=randrw\nsize=1m\ncreate_on_open=1\n").unwrap();
    assert!(
        loaded.plan.tests[0].jobs[0]
            .workload
            .handling
            .create_on_open
    );
}

#[test]
fn experimental_verify_reads_back_as_verify_does_with_a_note() {
    let loaded = load("[v]\nsize=128k\nrw=write\nverify=md5\nexperimental_verify=1\n").unwrap();
    let plain = load("[v]\nsize=128k\nrw=write\nverify=md5\n").unwrap();
    let workload = |loaded: &LoadedJob| loaded.plan.tests[0].jobs[0].workload.clone();
    assert!(workload(&loaded).verify.is_some());
    assert_eq!(workload(&loaded), workload(&plain));
    assert!(
        loaded
            .notes
            .iter()
            .any(|note| note.contains("experimental_verify=1")),
        "{:?}",
        loaded.notes
    );
}

#[test]
fn serialize_overlap_is_read_per_job() {
    let loaded = load("[s]\nsize=1m\nserialize_overlap=1\n[t]\nsize=1m\n").unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    assert!(jobs[0].workload.handling.serialize_overlap);
    assert!(!jobs[1].workload.handling.serialize_overlap);
}

#[test]
fn error_policies_are_read_as_fio_reads_them() {
    use crate::result::{ErrorKind, ErrorScope};
    let policy = |text: &str| {
        load(&format!("[a]\nsize=1m\n{text}"))
            .map(|loaded| loaded.plan.tests[0].jobs[0].workload.error_policy.clone())
    };
    let none = policy("").unwrap();
    assert_eq!(none.error_ends, ErrorScope::Worker);
    assert!(!none.continues(ErrorKind::Read, libc::EIO));
    for (value, kinds) in [
        ("none", [false, false, false]),
        ("0", [false, false, false]),
        ("read", [true, false, false]),
        ("write", [false, true, false]),
        ("io", [true, true, false]),
        ("verify", [false, false, true]),
        ("all", [true, true, true]),
        ("1", [true, true, true]),
    ] {
        let read = policy(&format!("continue_on_error={value}\n")).unwrap();
        assert_eq!(read.continue_on, kinds, "{value}");
    }
    assert!(policy("continue_on_error=some\n").is_err());
    let all = policy("continue_on_error=all\n").unwrap();
    assert!(all.continues(ErrorKind::Write, libc::EIO));
    assert!(!all.continues(ErrorKind::Write, libc::ENOSPC));
    let ignoring = policy("ignore_error=,ENOSPC:122\n").unwrap();
    assert!(ignoring.continues(ErrorKind::Write, libc::ENOSPC));
    assert!(ignoring.continues(ErrorKind::Write, 122));
    assert!(!ignoring.continues(ErrorKind::Write, libc::EIO));
    assert!(!ignoring.continues(ErrorKind::Read, libc::EIO));
    let error = policy("ignore_error=EBOGUS\n").unwrap_err();
    assert!(error.message.contains("EBOGUS"), "{}", error.message);
    let exiting = policy("exitall_on_error\n").unwrap();
    assert_eq!(exiting.error_ends, ErrorScope::Group);
    let exiting = policy("exitall_on_error\nexit_what=all\n").unwrap();
    assert_eq!(exiting.error_ends, ErrorScope::Run);
}

#[test]
fn overrides_and_command_line_targets_apply_to_every_job() {
    let dir = JobDir::new();
    let request = JobFileRequest {
        overrides: WorkloadOptions {
            duration: Some(300_000_000),
            ramp: Some(0),
            size: Some(16 * MIB),
            qd: Some(2),
            ..WorkloadOptions::default()
        },
        targets: vec![PathBuf::from("t.dat")],
        ignore_unsupported: false,
        ..JobFileRequest::default()
    };
    let loaded = dir
        .load(
            "[global]\nsize=10g\nnumjobs=4\nramp_time=9\nfilename=/dev/nvme0n1\n[a]\n[b]\ndirectory=/x\n",
            &request,
        )
        .unwrap();
    assert_eq!(
        loaded.plan.targets,
        [TargetSpec::Path {
            path: "t.dat".into(),
            create_size: Some(16 * MIB)
        }]
    );
    for job in &loaded.plan.tests[0].jobs {
        assert_eq!(job.targets, [0]);
        assert_eq!(job.workload.workers, 4);
        assert_eq!(job.workload.queue_depth, 2);
        assert_eq!(job.workload.ramp_ns, 0);
        assert_eq!(job.workload.region_size_bytes, Some(16 * MIB));
        assert_eq!(
            job.workload.length,
            RunLength::Time {
                duration_ns: 300_000_000
            }
        );
    }
}

#[test]
fn a_directory_on_the_command_line_replaces_each_jobs_directory() {
    let dir = JobDir::new();
    let scratch = dir.dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let request = JobFileRequest {
        overrides: WorkloadOptions {
            size: Some(MIB),
            ..WorkloadOptions::default()
        },
        targets: vec![scratch.clone()],
        ..JobFileRequest::default()
    };
    let loaded = dir
        .load(
            "[global]\ndirectory=/scratch\n[a]\nfilename=shared\n[b]\nfilename=shared\n[c]\n",
            &request,
        )
        .unwrap();
    let paths: Vec<&Path> = loaded
        .plan
        .targets
        .iter()
        .map(|spec| path_of(spec).0)
        .collect();
    assert_eq!(
        paths,
        [scratch.join("shared").as_path(), &scratch.join("c.0.0")]
    );
    let jobs = &loaded.plan.tests[0].jobs;
    assert_eq!(
        (jobs[0].targets.as_slice(), jobs[1].targets.as_slice()),
        (&[0][..], &[0][..])
    );
    assert_eq!(jobs[2].targets, [1]);
}

#[test]
fn unsupported_options_name_the_line_and_nearby_options() {
    let error = load("[a]\nsize=1m\nnumjob=2\n").unwrap_err();
    assert_eq!(error.line, Some(3));
    assert!(error.file.ends_with("job.fio"));
    assert!(
        error.message.contains("unsupported option 'numjob'") && error.message.contains("numjobs"),
        "{}",
        error.message
    );
    let error = load("[a]\nverify_header_seed=0\n").unwrap_err();
    assert!(
        error.message.contains("not by replaying the workload"),
        "{}",
        error.message
    );
    let error = load("[a]\nverify=crc32c\ntrim_percentage=101\n").unwrap_err();
    assert!(error.message.contains("percentage"), "{}", error.message);
    let error = load("[a]\nioengine=sg\n").unwrap_err();
    assert!(error.message.contains("'ioengine=sg'"), "{}", error.message);
    assert_eq!(error.to_string().split(':').nth(1), Some("2"));
}

#[test]
fn trim_patterns_map_to_trims_of_the_trim_block_size() {
    let plan =
        load("[t]\nsize=1m\nrw=randtrim\nbs=4k,8k,64k\n[tw]\nsize=1m\nrw=trimwrite\nbs=16k\n")
            .unwrap()
            .plan;
    let trims = &plan.tests[0].jobs[0].workload;
    assert_eq!(trims.access.lines.len(), 1);
    let line = &trims.access.lines[0];
    assert_eq!((line.size_bytes, line.trim_percent), (65536, 100));
    assert_eq!(line.random_percent, 100);
    assert!(trims.trims() && !trims.writes() && !trims.offsets.write_after_trim);
    let trim_write = &plan.tests[0].jobs[1].workload;
    let line = &trim_write.access.lines[0];
    assert_eq!((line.size_bytes, line.trim_percent), (16384, 50));
    assert_eq!(line.random_percent, 0);
    assert!(trim_write.trims() && trim_write.writes() && trim_write.offsets.write_after_trim);
}

#[test]
fn a_trimwrite_trims_and_writes_the_whole_size() {
    // fio counts a trimwrite's trims and writes both: twice the size, twice number_ios.
    let plan = load(
        "[tw]\nfilesize=1m\nrw=randtrimwrite\nioengine=null\n\
         [counted]\nsize=1m\nrw=trimwrite\nnumber_ios=10\n[plain]\nsize=1m\nrw=randtrim\n",
    )
    .unwrap()
    .plan;
    let jobs = &plan.tests[0].jobs;
    let bytes = |index: usize| match jobs[index].workload.length {
        RunLength::Bytes { bytes, .. } => bytes,
        ref other => panic!("{other:?}"),
    };
    assert_eq!(bytes(0), 2 << 20);
    assert_eq!(jobs[1].workload.io_limit, Some(20));
    assert_eq!(bytes(2), 1 << 20);
}

#[test]
fn bad_values_name_the_option_and_value() {
    for (text, line, needle) in [
        ("[a]\nbs=4kk\n", 2, "bs=4kk"),
        ("[a]\n\niodepth=0\n", 3, "iodepth=0"),
        ("[a]\nrw=raed\n", 2, "rw=raed"),
        ("[a]\nrwmixread=150\n", 2, "rwmixread=150"),
        ("[a]\nruntime=1.5\n", 2, "runtime=1.5"),
        ("[a]\nbssplit=4k/50:8k/40\n", 2, "bssplit"),
        ("[a]\nsize\n", 2, "size"),
        ("bs=4k\n[a]\n", 1, "bs"),
    ] {
        let error = load(text).unwrap_err();
        assert_eq!(error.line, Some(line), "{text:?}: {error}");
        assert!(error.message.contains(needle), "{text:?}: {error}");
    }
}

#[test]
fn ignore_unsupported_lists_what_it_skipped() {
    let dir = JobDir::new();
    let request = JobFileRequest {
        ignore_unsupported: true,
        ..JobFileRequest::default()
    };
    let loaded = dir
        .load(
            "[a]\nsize=1m\nverify=crc64\nverify_header_seed=0\nnice=5\nverify_write_sequence=0\n",
            &request,
        )
        .unwrap();
    assert_eq!(loaded.ignored.len(), 4, "{:?}", loaded.ignored);
    assert!(
        loaded.ignored[0].ends_with("job.fio:3: verify=crc64"),
        "{:?}",
        loaded.ignored
    );
    assert!(loaded.ignored[1].ends_with(":4: verify_header_seed=0"));
    assert!(matches!(
        loaded.plan.tests[0].jobs[0].workload.length,
        RunLength::Bytes { .. }
    ));
}

#[test]
fn trims_of_verified_blocks_are_read_as_fio_reads_them() {
    use crate::result::VerifyTrim;
    let trim = |text: &str| {
        load(text).unwrap().plan.tests[0].jobs[0]
            .workload
            .verify
            .as_ref()
            .and_then(|verify| verify.trim)
    };
    let base = "[a]\nsize=1m\nrw=randwrite\nverify=crc32c\ntrim_percentage=10\n";
    // As in fio, nothing is trimmed without trim_backlog.
    assert_eq!(trim(base), None);
    assert_eq!(
        trim(&format!("{base}trim_backlog=4\n")),
        Some(VerifyTrim {
            percent: 10,
            backlog_writes: 4,
            batch: 4,
            verify_zero: true
        })
    );
    assert_eq!(
        trim(&format!(
            "{base}trim_backlog=4\ntrim_backlog_batch=2\ntrim_verify_zero=0\n"
        )),
        Some(VerifyTrim {
            percent: 10,
            backlog_writes: 4,
            batch: 2,
            verify_zero: false
        })
    );
}

#[test]
fn harmless_options_are_accepted_with_a_note() {
    let loaded =
        load("[a]\nsize=1m\nbwavgtime=500\ngtod_reduce=1\nallow_mounted_write=1\n").unwrap();
    for needle in ["bwavgtime", "gtod_reduce", "allow_mounted_write"] {
        assert!(
            loaded.notes.iter().any(|n| n.contains(needle)),
            "{needle}: {:?}",
            loaded.notes
        );
    }
}

#[test]
fn arithmetic_and_keywords_in_values() {
    let loaded = load("[a]\nsize=(1g/2)\nbs=($pagesize*2)\niodepth=$ncpus\n").unwrap();
    let workload = &loaded.plan.tests[0].jobs[0].workload;
    assert_eq!(workload.region_size_bytes, Some(GIB / 2));
    assert_eq!(workload.access.lines[0].size_bytes, 8192);
}

#[test]
fn an_empty_file_or_only_globals_is_refused() {
    assert!(load("").unwrap_err().message.contains("no job"));
    assert!(
        load("[global]\nbs=4k\n")
            .unwrap_err()
            .message
            .contains("no job")
    );
}

#[test]
fn junk_never_panics() {
    let pieces = [
        "[",
        "]",
        "=",
        "[a]",
        "[global]",
        "bs",
        "bs=",
        "rw=",
        "size=",
        "(",
        ")",
        "$ncpus",
        "${",
        "}",
        "4k",
        "-",
        ",",
        ":",
        "/",
        "%",
        "0x",
        "include",
        " ",
        "\t",
        ";",
        "#",
        "1e9",
        "\u{e9}",
        "zoned:",
        "bssplit=",
        "rate=",
        "random_distribution=",
        "numjobs=",
        "99999999999999999999",
        "offset=",
        "filename=",
        "\\:",
        "ss=",
        "iodepth=",
        "kb_base=1000",
        "nrfiles=",
        "bsrange=",
        "percentage_random=",
        "stonewall",
        "startdelay=",
        "thinktime=",
        "(1/0)",
        "^",
        "*",
        "k",
    ];
    let dir = JobDir::new();
    let path = dir.dir.path().join("junk.fio");
    let environment = Environment::fixed(&[]);
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..rng.usize(1..8) {
            for _ in 0..rng.usize(1..5) {
                text.push_str(pieces[rng.usize(..pieces.len())]);
            }
            text.push('\n');
        }
        std::fs::write(&path, &text).unwrap();
        let _ = load_with(&path, &JobFileRequest::default(), &environment);
        let request = JobFileRequest {
            ignore_unsupported: true,
            ..JobFileRequest::default()
        };
        let _ = load_with(&path, &request, &environment);
    }
}

#[test]
fn the_corpus_loads_or_is_refused_at_a_line() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fio-examples");
    let Ok(entries) = std::fs::read_dir(&corpus) else {
        crate::support::skip(format_args!("{} is not here", corpus.display()));
        return;
    };
    let request = JobFileRequest {
        overrides: WorkloadOptions {
            duration: Some(300_000_000),
            size: Some(16 * MIB),
            ..WorkloadOptions::default()
        },
        ..JobFileRequest::default()
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "fio") {
            continue;
        }
        match load_with(&path, &request, &Environment::fixed(&[])) {
            Ok(loaded) => assert!(!loaded.plan.tests.is_empty(), "{}", path.display()),
            Err(error) => assert!(error.line.is_some(), "{}: {error}", path.display()),
        }
    }
}

#[test]
fn what_the_file_holds_is_shown_with_control_characters_escaped() {
    let request = JobFileRequest {
        ignore_unsupported: true,
        ..JobFileRequest::default()
    };
    let loaded = JobDir::new()
        .load(
            "[a]\nsize=1g\nfilename=f\nevil\u{1b}[2J=1\nsize=${NO\rPE}1g\n",
            &request,
        )
        .unwrap();
    let shown: Vec<&String> = loaded.ignored.iter().chain(&loaded.notes).collect();
    assert!(
        shown.iter().any(|line| line.contains("evil\\u{1b}[2J")),
        "{shown:?}"
    );
    assert!(
        shown.iter().any(|line| line.contains("NO\\rPE")),
        "{shown:?}"
    );
    for line in shown {
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
    let error = load("[a]\nrw=\u{1b}[1mbold\u{7}\n")
        .unwrap_err()
        .to_string();
    assert!(!error.chars().any(char::is_control), "{error:?}");
    assert!(error.contains("\\u{1b}[1mbold\\u{7}"), "{error}");
}

#[test]
fn rwmixread_with_a_single_direction_is_ignored_with_a_note() {
    let loaded = load(
        "[a]\nsize=1m\nrw=read\nrwmixread=0\n[b]\nsize=1m\nrw=randwrite\nrwmixwrite=0\n[c]\nsize=1m\nrw=randrw\nrwmixread=0\n",
    )
    .unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    assert!(jobs[0].workload.reads() && !jobs[0].workload.writes());
    assert!(jobs[1].workload.writes() && !jobs[1].workload.reads());
    assert!(jobs[2].workload.writes() && !jobs[2].workload.reads());
    let notes: Vec<&String> = loaded
        .notes
        .iter()
        .filter(|note| note.contains("rwmixread"))
        .collect();
    assert_eq!(notes.len(), 2, "{:?}", loaded.notes);
    assert!(
        notes[0].contains(":4:") && notes[0].contains("job 'a'"),
        "{notes:?}"
    );
    assert!(
        notes[1].contains(":8:") && notes[1].contains("job 'b'"),
        "{notes:?}"
    );
}

#[test]
fn verify_counts_take_size_suffixes_and_intervals_fit_the_blocks_as_in_fio() {
    let loaded = load(
        "[a]\nsize=1m\nrw=randwrite\nverify=crc32c\nverify_backlog=1m\n\
         [b]\nstonewall\nsize=1m\nrw=write\nbs=512\nverify=md5\nverify_interval=1m\n\
         [c]\nstonewall\nsize=1m\nrw=write\nbssplit=3k/50:4k/50\nverify=md5\nverify_interval=2k\n",
    )
    .unwrap();
    let verify = |test: usize| {
        loaded.plan.tests[test].jobs[0]
            .workload
            .verify
            .clone()
            .unwrap()
    };
    assert_eq!(verify(0).backlog_writes, Some(1 << 20));
    // Larger than the block: the block's size. Not a factor of 3k and 4k: their gcd, 1k.
    assert_eq!(verify(1).interval_bytes, Some(512));
    assert_eq!(verify(2).interval_bytes, Some(1024));
}

#[test]
fn verify_options_map_to_the_workloads_verification() {
    use crate::result::VerifyKind;
    let loaded = load(
        "[a]\nsize=1m\nrw=write\nbs=64k\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\ndo_verify=0\nverify_fatal=1\nverify_state_save=1\n[b]\nsize=1m\nrw=read\nverify=crc32c-intel\nverify_only=1\nverify_state_load=1\nverify_offset=16\nverify_backlog=32\n[c]\nsize=1m\nverify=0\n",
    )
    .unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    let a = jobs[0].workload.verify.as_ref().unwrap();
    assert_eq!(a.kind, VerifyKind::Meta);
    assert_eq!(a.interval_bytes, Some(512));
    assert_eq!(
        a.pattern.as_ref().unwrap().bytes(),
        &[0xaa, 0x55, 0x5a, 0xa5]
    );
    assert!(!a.after_writes && a.fatal && a.state_save && !a.state_load);
    let b = jobs[1].workload.verify.as_ref().unwrap();
    assert_eq!(b.kind, VerifyKind::Crc32c);
    assert!(b.only && b.state_load && b.after_writes);
    assert_eq!(b.header_offset_bytes, 16);
    assert_eq!(b.backlog_writes, Some(32));
    assert!(jobs[2].workload.verify.is_none());
    let error = load("[a]\nsize=1m\nverify=sha512\n").unwrap_err();
    assert!(error.message.contains("sha512"), "{error}");
}

#[test]
fn log_options_reach_the_job_and_bad_ones_are_refused() {
    let loaded = load(
        "[global]\nsize=1m\nlog_offset=1\n[a]\nwrite_bw_log\nwrite_lat_log=lat\nlog_avg_msec=100\nlog_window_value=both\nper_job_logs=0\n[b]\n",
    )
    .unwrap();
    let jobs = &loaded.plan.tests[0].jobs;
    let logs = jobs[0].workload.controls.logs.as_ref().unwrap();
    assert_eq!(logs.bandwidth.as_deref(), Some("a"));
    assert_eq!(logs.latency.as_deref(), Some("lat"));
    assert_eq!(logs.average_ms, 100);
    assert_eq!(
        logs.window_value,
        crate::result::log_options::WindowValue::Both
    );
    assert!(logs.offset && !logs.per_job);
    assert!(jobs[1].workload.controls.logs.is_none());
    for (line, needle) in [
        ("log_compression=4m", "log_compression"),
        ("log_window_value=median", "median"),
        ("log_hist_msec=10", "log_hist_msec"),
        ("log_avg_msec=1.5", "log_avg_msec"),
    ] {
        let error = load(&format!("[a]\nsize=1m\nwrite_bw_log=x\n{line}\n")).unwrap_err();
        assert!(error.message.contains(needle), "{line}: {}", error.message);
    }
}
