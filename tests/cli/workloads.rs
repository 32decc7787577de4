//! Workload options checked on the I/O really issued (the null engine with --trace-io).

use crate::common::*;
use std::collections::HashMap;

struct TracedIo {
    test: usize,
    worker: usize,
    write: bool,
    offset: u64,
    length: u64,
}

fn trace(dir: &std::path::Path, args: &[&str]) -> (Vec<TracedIo>, serde_json::Value) {
    let mut all = vec![
        "f.dat",
        "--size",
        "256m",
        "--engine",
        "null",
        "--trace-io",
        "trace.csv",
    ];
    all.extend_from_slice(args);
    let run = run_in(dir, &all);
    run.expect_status(0);
    let text = std::fs::read_to_string(dir.join("trace.csv")).unwrap();
    let ios = text
        .lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            TracedIo {
                test: f[0].parse().unwrap(),
                worker: f[1].parse().unwrap(),
                write: f[2] == "write",
                offset: f[3].parse().unwrap(),
                length: f[4].parse().unwrap(),
            }
        })
        .collect();
    (ios, run.json().clone())
}

fn share(count: usize, total: usize) -> f64 {
    count as f64 / total as f64 * 100.0
}

/// Share of I/Os that do not start where the previous one of the same worker ended.
fn random_share(ios: &[TracedIo]) -> f64 {
    let mut previous_end: HashMap<(usize, usize), u64> = HashMap::new();
    let mut random = 0;
    for io in ios {
        if let Some(end) = previous_end.insert((io.test, io.worker), io.offset + io.length)
            && end != io.offset
        {
            random += 1;
        }
    }
    share(random, ios.len())
}

#[test]
fn mixes_and_randomness_hold_on_the_issued_io() {
    let dir = disk_tempdir();
    let (ios, _) = trace(
        dir.path(),
        &[
            "--rw",
            "randrw",
            "--read-pct",
            "80",
            "--random-pct",
            "30",
            "--bs",
            "512/10,4k/60,64k/30",
            "--qd",
            "8",
            "--bytes",
            "1g",
            "--seed",
            "9",
        ],
    );
    let total = ios.len();
    assert!(total >= 30_000, "{total} I/Os");
    let reads = ios.iter().filter(|io| !io.write).count();
    assert!(
        (share(reads, total) - 80.0).abs() < 1.0,
        "{}",
        share(reads, total)
    );
    for (size, expected) in [(512, 10.0), (4096, 60.0), (65536, 30.0)] {
        let count = ios.iter().filter(|io| io.length == size).count();
        assert!(
            (share(count, total) - expected).abs() < 1.0,
            "{size}: {}",
            share(count, total)
        );
    }
    // A random I/O may land right after the previous one by chance; that is rare here.
    assert!(
        (random_share(&ios) - 30.0).abs() < 1.0,
        "{}",
        random_share(&ios)
    );
}

#[test]
fn an_iometer_spec_draws_size_direction_and_randomness_together() {
    let dir = disk_tempdir();
    let (ios, _) = trace(
        dir.path(),
        &[
            "--spec",
            "64k:30:100:100, 512:50:0:0, 1k:20:50:0",
            "--qd",
            "4",
            "--duration",
            "0.5",
            "--ramp",
            "0",
        ],
    );
    let total = ios.len();
    assert!(total > 20_000, "{total}");
    let count = |length: u64, write: bool| {
        share(
            ios.iter()
                .filter(|io| io.length == length && io.write == write)
                .count(),
            total,
        )
    };
    assert!((count(65536, false) - 30.0).abs() < 1.0);
    assert_eq!(count(65536, true), 0.0, "64k lines only read");
    assert_eq!(count(512, false), 0.0, "512 lines only write");
    assert!((count(512, true) - 50.0).abs() < 1.0);
    assert!((count(1024, false) - 10.0).abs() < 1.0);
    assert!((count(1024, true) - 10.0).abs() < 1.0);
    // 512-byte writes are sequential (0 % random): each follows the I/O before it.
    let ordered: Vec<&TracedIo> = ios.iter().filter(|io| io.worker == 0).collect();
    let sequential_512 = ordered
        .windows(2)
        .filter(|pair| pair[1].length == 512)
        .all(|pair| pair[1].offset == pair[0].offset + pair[0].length || pair[1].offset == 0);
    assert!(sequential_512);
}

#[test]
fn presets_issue_their_mix() {
    let dir = disk_tempdir();
    let (ios, json) = trace(
        dir.path(),
        &[
            "--preset",
            "file-server",
            "--qd",
            "light",
            "--duration",
            "0.5",
            "--ramp",
            "0",
        ],
    );
    assert_eq!(json["tests"][0]["name"], "File server");
    assert_eq!(json["tests"][0]["jobs"][0]["queue_depth_per_worker"], 8);
    let total = ios.len();
    let small = ios.iter().filter(|io| io.length == 4096).count();
    assert!((share(small, total) - 60.0).abs() < 1.5);
    let reads = ios.iter().filter(|io| !io.write).count();
    assert!((share(reads, total) - 80.0).abs() < 1.5);
    let refused = plain_in(
        dir.path(),
        &["run", "--preset", "file-server", "--bs", "4k"],
    );
    assert_eq!(refused.status, 2);
    assert!(refused.stderr.contains("--bs"), "{}", refused.stderr);
    let unknown = plain_in(dir.path(), &["run", "--preset", "nope"]);
    assert_eq!(unknown.status, 2);
    assert!(unknown.stderr.contains("file-server"));
    let listed = plain_in(dir.path(), &["presets"]);
    assert_eq!(listed.status, 0);
    for name in [
        "iometer-default",
        "database",
        "web-server",
        "workstation",
        "fc-review",
        "dd",
        "tiobench",
        "heavy",
    ] {
        assert!(listed.stdout.contains(name), "{name}");
    }
}

#[test]
fn sweeps_produce_their_points() {
    let dir = disk_tempdir();
    let (ios, json) = trace(
        dir.path(),
        &[
            "--rw",
            "randread",
            "--sweep",
            "qd=1,4",
            "--sweep",
            "bs=4k..16k/*4",
            "--duration",
            "0.2",
            "--ramp",
            "0",
        ],
    );
    let tests = json["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "randread 4k QD1",
            "randread 16k QD1",
            "randread 4k QD4",
            "randread 16k QD4"
        ]
    );
    assert_eq!(tests[3]["sweep"][0]["axis"], "qd");
    assert_eq!(tests[3]["sweep"][1]["value"], 16384);
    assert_eq!(tests[3]["jobs"][0]["queue_depth_per_worker"], 4);
    assert!(
        ios.iter()
            .filter(|io| io.test == 1)
            .all(|io| io.length == 16384)
    );
    assert!(
        ios.iter()
            .filter(|io| io.test == 2)
            .all(|io| io.length == 4096)
    );
}

#[test]
fn distributions_shape_the_issued_offsets() {
    let dir = disk_tempdir();
    let (ios, _) = trace(
        dir.path(),
        &[
            "--rw",
            "randread",
            "--distribution",
            "zoned:80/10:20/90",
            "--qd",
            "8",
            "--bytes",
            "400m",
        ],
    );
    let hot_end = (256u64 << 20) / 10;
    let hot = ios.iter().filter(|io| io.offset < hot_end).count();
    assert!(
        (share(hot, ios.len()) - 80.0).abs() < 1.0,
        "{}",
        share(hot, ios.len())
    );
}

#[test]
fn steady_state_ends_a_test_and_is_recorded() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "1m",
            "--engine",
            "null",
            "--null-delay",
            "200us",
            "--rw",
            "randread",
            "--duration",
            "30",
            "--ramp",
            "0",
            "--steady",
            "iops:20%:2s",
        ],
    );
    run.expect_status(0);
    let test = &run.json()["tests"][0];
    let after = test["steady_state"]["attained_after_ns"]
        .as_u64()
        .expect("attained");
    assert!((2_000_000_000..10_000_000_000).contains(&after), "{after}");
    let measured = test["measured_ns"].as_u64().unwrap();
    assert!(
        measured < 12_000_000_000,
        "the test ended early: {measured}"
    );
    assert_eq!(test["steady_state"]["criterion"], "iops:20%:2s");

    let never = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "1m",
            "--engine",
            "null",
            "--rw",
            "randread",
            "--rate-iops",
            "1000",
            "--duration",
            "3",
            "--ramp",
            "0",
            "--steady",
            "lat_slope:0.000001%:2s",
        ],
    );
    never.expect_status(0);
    let test = &never.json()["tests"][0];
    assert!(test["steady_state"]["attained_after_ns"].is_null());
    assert_eq!(test["measured_ns"], 3_000_000_000u64);
}

#[test]
fn drop_caches_runs_between_phases() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "8m",
            "--rw",
            "read",
            "--duration",
            "0.2",
            "--ramp",
            "0",
            "--drop-caches",
        ],
    );
    run.expect_status(0);
    let warnings = run.json()["warnings"].to_string();
    if is_root() {
        assert!(!warnings.contains("not dropped"), "{warnings}");
    } else {
        assert!(warnings.contains("needs root"), "{warnings}");
    }
}

#[test]
fn fsync_at_end_on_a_workload_that_only_reads_is_accepted_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.dat"), vec![7u8; 1 << 20]).unwrap();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--engine",
            "sync",
            "--buffered",
            "--rw",
            "read",
            "--fsync-at-end",
            "--duration",
            "0.3",
            "--ramp",
            "0",
        ],
    );
    run.expect_status(0);
    let notes: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.contains("--fsync-at-end"))
        .collect();
    assert_eq!(
        notes,
        [
            "note: --fsync-at-end has no effect: this workload only reads (as dd conv=fdatasync and fio end_fsync on reads)"
        ],
        "{}",
        run.stderr
    );
    let job = at(run.json(), &["tests", "0", "jobs", "0"]);
    assert_eq!(job["workload"]["fsync_at_end"], false, "{job}");
    assert!(u64_at(job, &["read", "io_count"]) > 0, "{job}");

    // --sync on reads stays an error: it names the flag, exit 2.
    let run = run_in(dir.path(), &["f.dat", "--rw", "read", "--sync"]);
    run.expect_status(2);
    assert!(
        run.stderr.contains("--sync only affects writes"),
        "{}",
        run.stderr
    );
}

/// fio users write `--runtime`; it is the same as `--duration`.
#[test]
fn runtime_is_another_name_for_duration() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--duration", "--runtime"] {
        let run = run_in(
            dir.path(),
            &[
                "f.dat", "--size", "16m", "--rw", "read", "--engine", "null", flag, "1",
            ],
        );
        run.expect_status(0);
        let measured_s = run.json()["tests"][0]["measured_ns"].as_f64().unwrap() / 1e9;
        assert!(
            (0.9..2.5).contains(&measured_s),
            "{flag} 1 measured {measured_s} s"
        );
    }
}
