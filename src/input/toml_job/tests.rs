use super::super::options::WorkloadOptions;
use super::*;
use crate::result::BufferPattern;
use crate::result::{
    AccessLine, AccessSpec, EngineKind, OffsetDistribution, RunLength, Workload, Zone,
};
use crate::result::{DedupeMode, FileService, WorkerFiles, WriteData};
use crate::targets::TargetSpec;
use crate::workload::suite::{DEFAULT_SEED, base_workload, default_suite};
use crate::workload::{AccessPattern, BlockSizeMix, JobPlan, Plan, TestPlan};
use std::path::PathBuf;

fn plan_of(text: &str) -> Plan {
    read_with(text, &JobFileRequest::default())
}

fn read_with(text: &str, request: &JobFileRequest) -> Plan {
    match read(text, "t.toml".as_ref(), request) {
        Ok(loaded) => loaded.plan,
        Err(error) => panic!("{error}\n{text}"),
    }
}

/// The error of `text`: its line and message.
fn error_of(text: &str) -> (Option<usize>, String) {
    let error = read(text, "t.toml".as_ref(), &JobFileRequest::default())
        .map(|loaded| loaded.plan)
        .expect_err(text);
    assert_eq!(error.file, PathBuf::from("t.toml"));
    (error.line, error.message)
}

fn file(path: &str, size: u64) -> TargetSpec {
    TargetSpec::Path {
        path: PathBuf::from(path),
        create_size: Some(size),
    }
}

#[test]
fn a_test_is_built_like_the_flags_build_it() {
    let plan = plan_of(
        r#"
        targets = [{ path = "a.dat", size = "1g" }]
        [[test]]
        name = "mixed"
        rw = "randrw"
        read-pct = 70
        bs = "4k/50,64k/50"
        qd = 16
        duration = "30s"
        fsync-at-end = true
        "#,
    );
    let options = WorkloadOptions {
        rw: Some(AccessPattern::RandRw),
        read_pct: Some(70),
        bs: Some(BlockSizeMix::parse("4k/50,64k/50").unwrap()),
        qd: Some(16),
        duration: Some(30_000_000_000),
        fsync_at_end: true,
        ..WorkloadOptions::default()
    };
    let expected = options.apply(&base_workload()).unwrap();
    assert_eq!(plan.targets, vec![file("a.dat", 1 << 30)]);
    assert_eq!(plan.tests.len(), 1);
    let test = &plan.tests[0];
    assert_eq!(test.name, "mixed");
    assert_eq!(test.jobs.len(), 1);
    assert_eq!(test.jobs[0].name, "mixed");
    assert_eq!(test.jobs[0].targets, vec![0]);
    assert_eq!(test.jobs[0].workload, expected);
    assert_eq!(test.jobs[0].workload.seed, DEFAULT_SEED);
}

#[test]
fn defaults_come_first_and_tests_replace_what_says_the_same_thing() {
    let plan = plan_of(
        r#"
        targets = [{ path = "a.dat", size = "64m" }]
        [defaults]
        spec = "512:100:100:0"
        duration = "10s"
        ramp = "2s"
        qd = 4

        [[test]]
        rw = "randwrite"

        [[test]]
        bytes = "1m"
        time-limit = "3s"

        [[test]]
        qd = 8
        "#,
    );
    let [by_rw, by_bytes, by_defaults] = &plan.tests[..] else {
        panic!("three tests");
    };
    let rw = &by_rw.jobs[0].workload;
    assert_eq!(rw.access.lines, vec![AccessLine::new(4096, 100, 0, 100)]);
    assert_eq!(rw.queue_depth, 4);
    assert_eq!(by_rw.name, "randwrite 4k QD4");
    let bytes = &by_bytes.jobs[0].workload;
    assert_eq!(
        bytes.length,
        RunLength::Bytes {
            bytes: 1 << 20,
            time_limit_ns: Some(3_000_000_000)
        }
    );
    assert_eq!(bytes.ramp_ns, 0);
    let defaults = &by_defaults.jobs[0].workload;
    assert_eq!(
        defaults.access.lines,
        vec![AccessLine::new(512, 100, 100, 0)]
    );
    assert_eq!(defaults.queue_depth, 8);
    assert_eq!(defaults.ramp_ns, 2_000_000_000);
}

#[test]
fn jobs_of_a_test_run_together_with_their_own_keys_and_targets() {
    let plan = plan_of(
        r#"
        targets = [{ path = "a.dat", size = "64m" }]
        [[test]]
        name = "two"
        qd = 2
        [[test.job]]
        name = "reader"
        rw = "randread"
        [[test.job]]
        group = 1
        rw = "write"
        targets = [{ path = "b.dat", size = "8m" }, "a.dat"]
        start-delay = "1s"
        io-limit = 500
        fsync-every = 8
        "#,
    );
    assert_eq!(
        plan.targets,
        vec![file("a.dat", 64 << 20), file("b.dat", 8 << 20)]
    );
    let test = &plan.tests[0];
    assert_eq!(test.name, "two");
    let [reader, writer] = &test.jobs[..] else {
        panic!("two jobs");
    };
    assert_eq!((reader.name.as_str(), reader.group), ("reader", 0));
    assert_eq!((writer.name.as_str(), writer.group), ("job 2", 1));
    assert_eq!(reader.targets, vec![0]);
    assert_eq!(writer.targets, vec![1, 0]);
    assert_eq!(reader.workload.queue_depth, 2);
    assert_eq!(writer.workload.queue_depth, 2);
    assert_eq!(writer.workload.start_delay_ns, 1_000_000_000);
    assert_eq!(writer.workload.io_limit, Some(500));
    assert_eq!(writer.workload.fsync_every_writes, Some(8));
    assert!(!reader.workload.writes());
}

#[test]
fn a_missing_file_is_created_with_the_size_of_its_jobs() {
    let plan = plan_of(
        r#"
        [[test]]
        targets = ["iopath-no-such-file.dat"]
        size = "16m"
        offset = "4m"
        [[test]]
        size = "2m"
        "#,
    );
    assert_eq!(
        plan.targets,
        vec![
            file("iopath-no-such-file.dat", 20 << 20),
            TargetSpec::TempFile {
                directory: PathBuf::from("."),
                size: Some(2 << 20)
            }
        ]
    );
}

#[test]
fn command_line_flags_apply_on_top_and_its_targets_replace_the_files() {
    let text = r#"
        targets = ["iopath-no-such-file.dat"]
        [defaults]
        size = "8m"
        [[test]]
        spec = "64k:100:100:100"
        duration = "30s"
        ramp = "1s"
        [[test]]
        rw = "randread"
        bs = "4k"
        "#;
    let request = JobFileRequest {
        overrides: WorkloadOptions {
            bs: Some(BlockSizeMix::single(8192)),
            bytes: Some(1 << 20),
            seed: Some(7),
            ..WorkloadOptions::default()
        },
        targets: vec![PathBuf::from("x.dat"), PathBuf::from("y.dat")],
        ignore_unsupported: false,
        ..JobFileRequest::default()
    };
    let plan = read_with(text, &request);
    assert_eq!(
        plan.targets,
        vec![file("x.dat", 8 << 20), file("y.dat", 8 << 20)]
    );
    for test in &plan.tests {
        let workload = &test.jobs[0].workload;
        assert_eq!(test.jobs[0].targets, vec![0, 1]);
        assert_eq!(workload.seed, 7);
        assert_eq!(workload.ramp_ns, 0, "bytes replaces the file's ramp");
        assert!(matches!(workload.length, RunLength::Bytes { bytes, .. } if bytes == 1 << 20));
        assert_eq!(workload.access.single_size(), Some(8192));
    }
    // --bs replaces the spec (sequential reads by default), and keeps the file's rw.
    assert_eq!(plan.tests[0].jobs[0].workload.access.random_percent(), 0.0);
    assert_eq!(
        plan.tests[1].jobs[0].workload.access.random_percent(),
        100.0
    );
}

#[test]
fn every_problem_names_its_line() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "[[test]]\nqd = 4\nqueue-depth = 4\n",
            3,
            "unknown key 'queue-depth'",
        ),
        ("[[test]]\nqd = 4\nbs = \"4kk\"\n", 3, "4kk"),
        ("[[test]]\n\nqd = 0\n", 3, "qd"),
        ("[[test]]\nrw = \"randomread\"\n", 2, "randomread"),
        (
            "[defaults]\nqd = 1\nrw = 'sideways'\n[[test]]\n",
            3,
            "sideways",
        ),
        (
            "[[test]]\nspec = \"4k:1:0:0\"\nrw = \"read\"\n",
            3,
            "'rw' and 'spec'",
        ),
        (
            "[[test]]\nduration = 5\nbytes = \"1m\"\n",
            3,
            "'bytes' and 'duration'",
        ),
        ("[[test]]\n[[test.job]]\nname = 'a'\nbs = [4096]\n", 4, "bs"),
        ("[[test]]\nthink-blocks = 4\n", 2, "think-time"),
        ("[[test]]\ntime-limit = '5s'\n", 2, "time-limit"),
        ("[[test]]\nbytes = '1m'\nramp = '1s'\n", 3, "--ramp"),
        ("[[test]]\nbs = '4k'\nbytes = '6k'\n", 3, "--bytes"),
        ("[[test]]\nrw = 'read'\nsync = true\n", 3, "--sync"),
        ("[[test]]\nio-limit = 0\n", 2, "io-limit"),
        ("[[test]]\ngroup = -1\n", 2, "group"),
        ("[[test]]\nname = 4\n", 2, "name"),
        ("[defaults]\nname = 'x'\n[[test]]\n", 2, "not to [defaults]"),
        ("qd = 4\n[[test]]\n", 1, "outside any table"),
        ("[[tests]]\nqd = 4\n", 1, "unknown key 'tests'"),
        ("[test]\nqd = 4\n", 1, "[[test]]"),
        ("[[test]]\nqd = 4\nqd = 8\n", 3, "duplicate key"),
        ("[[test]]\nqd = \n", 2, ""),
        (
            "[[test]]\ntargets = [\n  'Cargo.toml',\n  'iopath-no-such-file.dat',\n]\n",
            4,
            "no such file",
        ),
        ("[[test]]\ntargets = [{ size = '1g' }]\n", 2, "path"),
        (
            "[[test]]\ntargets = [{ path = 'a', size = '1x' }]\n",
            2,
            "size",
        ),
        ("targets = []\n[[test]]\n", 1, "empty"),
        ("[[test]]\ntargets = ['nbd://host:99999/x']\n", 2, "port"),
    ];
    for &(text, line, needle) in cases {
        let (found_line, message) = error_of(text);
        assert_eq!(found_line, Some(line), "{text}\n→ {message}");
        assert!(message.contains(needle), "{text}\n→ {message}");
    }
    assert_eq!(error_of("targets = ['a.dat']\n").0, None, "no test at all");
}

#[test]
fn command_line_problems_have_no_line() {
    let request = JobFileRequest {
        overrides: WorkloadOptions {
            sync: true,
            ..WorkloadOptions::default()
        },
        ..JobFileRequest::default()
    };
    let text = "[[test]]\nrw = 'randread'\ntargets = [{ path = 'a', size = '1m' }]\n";
    let error = read(text, "t.toml".as_ref(), &request).unwrap_err();
    assert_eq!(error.line, None);
    assert!(error.message.contains("--sync"), "{}", error.message);
}

fn rich_workload() -> Workload {
    Workload {
        queue_depth: 16,
        workers: 2,
        ..base_workload()
    }
}

/// A plan as a fio job file could give: concurrent jobs, groups, Iometer lines with bursts and
/// delays, every distribution, byte counts with a time limit, pauses and limits.
fn rich_plan() -> Plan {
    let spec = AccessSpec {
        lines: vec![
            AccessLine {
                alignment_bytes: 512,
                burst_length: 8,
                delay_ns: 2_500,
                ..AccessLine::new(4096, 4200, 70, 100)
            },
            AccessLine {
                delay_ns: 3_000_000,
                ..AccessLine::new(65536, 1800, 0, 0)
            },
            AccessLine::new(512, 0, 100, 50),
        ],
    };
    let zipf = Workload {
        access: spec,
        distribution: OffsetDistribution::Zipf {
            theta: 1.2,
            center: None,
        },
        region_offset_bytes: 1 << 20,
        region_size_bytes: Some(32 << 20),
        start_delay_ns: 1_500_000_000,
        think_time_ns: 250_000,
        think_time_blocks: 4,
        rate_iops: Some(5000),
        fsync_every_writes: Some(32),
        buffered: true,
        seed: 42,
        engine: EngineKind::Sync,
        register_buffers: false,
        continue_on_error: true,
        ..rich_workload()
    };
    let bytes = Workload {
        access: AccessSpec {
            lines: vec![AccessLine::new(1 << 20, 1, 0, 0)],
        },
        distribution: OffsetDistribution::Zoned {
            zones: vec![
                Zone {
                    access_percent: 60.0,
                    size_percent: 10.0,
                },
                Zone {
                    access_percent: 40.0,
                    size_percent: 90.0,
                },
            ],
        },
        length: RunLength::Bytes {
            bytes: 256 << 20,
            time_limit_ns: Some(20_000_000_000),
        },
        ramp_ns: 0,
        io_limit: Some(u64::MAX - 1),
        rate_bytes_per_second: Some(100 << 20),
        sync_writes: true,
        fsync_at_end: true,
        seed: u64::MAX,
        write_data: WriteData {
            compress_percent: Some(60),
            compress_chunk_bytes: Some(0),
            dedupe_percent: Some(20),
            dedupe_mode: DedupeMode::WorkingSet,
            dedupe_working_set_percent: Some(10),
            pattern: Some(BufferPattern::parse("0x00ff\"ab\"").unwrap()),
            zero: true,
            refill: Some(false),
            scramble: Some(true),
        },
        ..rich_workload()
    };
    let pauses = Workload {
        distribution: OffsetDistribution::Pareto {
            h: 0.2,
            center: None,
        },
        think_time_ns: 0,
        think_time_blocks: 3,
        length: RunLength::Time {
            duration_ns: 7_500_000,
        },
        ramp_ns: 0,
        engine: EngineKind::Null,
        ..rich_workload()
    };
    let normal = Workload {
        distribution: OffsetDistribution::Normal {
            stddev_percent: 12.5,
            center: None,
        },
        ..base_workload()
    };
    // One worker moving over both files of its job.
    let spread = Workload {
        worker_files: WorkerFiles {
            per_worker: 2,
            service: FileService::Random { ios_per_file: 3 },
            open_files: Some(1),
        },
        ..bytes.clone()
    };
    let job = |name: &str, group, workload: &Workload, targets: Vec<usize>| JobPlan {
        name: name.into(),
        group,
        workload: workload.clone(),
        targets,
        replay: None,
    };
    let mut together = TestPlan::single("together", zipf.clone(), vec![0]);
    together.jobs = vec![
        job("hot reads", 0, &zipf, vec![0]),
        job("log writer", 1, &spread, vec![1, 0]),
        job("idle", 1, &pauses, vec![2]),
    ];
    let mut renamed = TestPlan::single("renamed", normal.clone(), vec![0]);
    renamed.jobs[0].name = "the only job".into();
    let mut grouped = TestPlan::single("grouped", pauses.clone(), vec![2]);
    grouped.jobs[0].group = 3;
    Plan {
        targets: vec![
            file("data.bin", 64 << 20),
            file("log.bin", 1 << 30),
            TargetSpec::TempFile {
                directory: PathBuf::from("/var/tmp"),
                size: None,
            },
        ],
        tests: vec![
            TestPlan::single("bytes", bytes.clone(), vec![1]),
            together,
            renamed,
            grouped,
        ],
    }
}

/// Reads `to_toml(plan)` back and checks every test, job, workload and target.
fn assert_round_trip(plan: &Plan) -> String {
    let written = to_toml(plan);
    let again = match read(&written, "w.toml".as_ref(), &JobFileRequest::default()) {
        Ok(loaded) => loaded.plan,
        Err(error) => panic!("{error}\n{written}"),
    };
    assert_eq!(again.tests.len(), plan.tests.len(), "{written}");
    for (before, after) in plan.tests.iter().zip(&again.tests) {
        assert_eq!(after.name, before.name, "{written}");
        assert_eq!(after.jobs.len(), before.jobs.len(), "{written}");
        for (job_before, job_after) in before.jobs.iter().zip(&after.jobs) {
            assert_eq!(job_after.name, job_before.name, "{written}");
            assert_eq!(job_after.group, job_before.group, "{written}");
            assert_eq!(job_after.workload, job_before.workload, "{written}");
            let targets = |plan: &Plan, job: &JobPlan| -> Vec<TargetSpec> {
                job.targets
                    .iter()
                    .map(|&i| plan.targets[i].clone())
                    .collect()
            };
            assert_eq!(
                targets(&again, job_after),
                targets(plan, job_before),
                "{written}"
            );
        }
    }
    assert_eq!(to_toml(&again), written, "writing is stable");
    written
}

#[test]
fn any_plan_reads_back_into_equal_workloads() {
    let written = assert_round_trip(&rich_plan());
    assert!(written.starts_with("# iopath job file"), "{written}");
    assert!(written.contains("[[test.job]]"));
    assert!(written.contains("time-limit = \"20s\""));
    assert!(
        written.contains("2500ns"),
        "sub-microsecond delays stay exact"
    );
}

#[test]
fn the_default_suite_reads_back_with_shared_keys_in_defaults() {
    let plan = Plan {
        targets: vec![TargetSpec::TempFile {
            directory: PathBuf::from("."),
            size: None,
        }],
        tests: default_suite(&base_workload(), &[0]),
    };
    let written = assert_round_trip(&plan);
    let defaults = written
        .split("[defaults]")
        .nth(1)
        .and_then(|rest| rest.split("[[test]]").next())
        .expect("a [defaults] table");
    for key in ["duration = \"5s\"", "ramp = \"1s\"", "seed = "] {
        assert!(defaults.contains(key), "{key} in\n{defaults}");
    }
    assert!(
        !written.contains("targets"),
        "the temporary file is implicit:\n{written}"
    );
}

#[test]
fn values_the_format_cannot_hold_become_comments() {
    let reads_only = Workload {
        fsync_at_end: true,
        ..base_workload()
    };
    let plan = Plan {
        targets: vec![file("a.dat", 1 << 20)],
        tests: vec![TestPlan::single("read", reads_only, vec![0])],
    };
    let written = to_toml(&plan);
    assert!(
        written.contains("# not written: fsync-at-end = true"),
        "{written}"
    );
    plan_of(&written);
}

/// The TOML examples of docs/job-files.md.
fn documented_examples() -> Vec<&'static str> {
    include_str!("../../../docs/job-files.md")
        .split("```toml")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .collect()
}

#[test]
fn the_documented_examples_read() {
    let examples = documented_examples();
    assert!(examples.len() >= 5);
    let request = JobFileRequest {
        targets: vec![PathBuf::from("elsewhere.dat")],
        ..JobFileRequest::default()
    };
    for example in examples {
        read_with(example, &request);
    }
}

#[test]
fn the_documented_default_suite_is_the_default_suite() {
    let example = documented_examples()
        .into_iter()
        .find(|example| example.contains("SEQ1M Q8 read"))
        .expect("the default suite in docs/job-files.md");
    let plan = plan_of(example);
    let expected = default_suite(&base_workload(), &[0]);
    assert_eq!(plan.tests.len(), expected.len());
    for (test, expected) in plan.tests.iter().zip(&expected) {
        assert_eq!(test.name, expected.name);
        assert_eq!(
            test.jobs[0].workload, expected.jobs[0].workload,
            "{}",
            test.name
        );
    }
}

#[test]
fn a_read_percentage_never_turns_a_single_direction_into_a_mix() {
    let text =
        "[[test]]\nrw = \"read\"\nread-pct = 0\n[[test]]\nrw = \"randwrite\"\nread-pct = 100\n";
    let loaded = read(text, "t.toml".as_ref(), &JobFileRequest::default()).unwrap();
    let reads = &loaded.plan.tests[0].jobs[0].workload;
    assert!(reads.reads() && !reads.writes());
    let writes = &loaded.plan.tests[1].jobs[0].workload;
    assert!(writes.writes() && !writes.reads());
    assert_eq!(loaded.notes.len(), 2, "{:?}", loaded.notes);
    assert!(
        loaded.notes[0].starts_with("t.toml:3: --read-pct 0 is ignored: --rw read"),
        "{:?}",
        loaded.notes
    );
    assert!(
        loaded.notes[1].contains("--rw randwrite"),
        "{:?}",
        loaded.notes
    );
}
