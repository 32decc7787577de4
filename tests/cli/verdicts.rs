//! Verdicts on real runs: what limits the result, with its evidence.

use crate::common::*;

fn verdict_of(run: &RunOutput) -> (String, String) {
    let analysis = &run.json()["tests"][0]["analysis"];
    (
        analysis["verdict"].as_str().unwrap_or("none").to_string(),
        analysis["evidence"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn buffered_reads_of_a_small_file_are_cached() {
    let dir = disk_tempdir();
    // The file is written here, so its pages are in the page cache when the run starts (a file
    // iopath lays out itself starts uncached, and a busy disk may not warm it in the ramp).
    write_foreign_file(&dir.path().join("f.dat"), 16 << 20);
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "16m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--buffered",
            "--duration",
            "1",
            "--ramp",
            "0.5",
        ],
    );
    run.expect_status(0);
    let (verdict, evidence) = verdict_of(&run);
    let notes = run.json()["tests"][0]["analysis"]["trust_notes"].to_string();
    assert!(
        notes.contains("buffered") || notes.contains("page cache"),
        "{notes}"
    );
    // Reads from memory are as fast as a core lets them be: when other processes hold the
    // cores (a busy build machine), that is what the verdict must name, with their share.
    if verdict == "host_cpu_bound" && evidence.contains("taken by other processes") {
        return;
    }
    assert_eq!(verdict, "cached", "{evidence}");
    assert!(run.stdout.contains("cached"), "{}", run.stdout);
}

/// Timing-sensitive: one worker saturating a core is the evidence, and tests running beside it
/// take that core from it (seen once: busiest core 93 %, inconclusive), so it runs alone.
#[test]
fn timing_a_tmpfs_run_with_one_worker_is_host_cpu_bound() {
    crate::support::skip_unless!(
        std::path::Path::new("/dev/shm").is_dir(),
        "no /dev/shm (a tmpfs) here"
    );
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "64m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--engine",
            "sync",
            "--duration",
            "2",
            "--ramp",
            "0.5",
        ],
    );
    run.expect_status(0);
    let (verdict, evidence) = verdict_of(&run);
    assert_eq!(verdict, "host_cpu_bound", "{evidence}");
}

#[test]
fn timing_a_rate_cap_is_named_as_the_limit() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "16m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--rate-iops",
            "500",
            "--duration",
            "1",
            "--ramp",
            "0",
        ],
    );
    run.expect_status(0);
    let (verdict, evidence) = verdict_of(&run);
    assert_eq!(verdict, "rate_limited", "{evidence}");
}

#[test]
fn links_and_path_describe_the_hops() {
    let dir = disk_tempdir();
    let links = plain_in(dir.path(), &["links"]);
    assert_eq!(links.status, 0);
    for name in ["4gfc", "10gbe", "pcie3x8"] {
        assert!(links.stdout.to_lowercase().contains(name), "{name}");
    }
    write_foreign_file(&dir.path().join("x.bin"), 4096);
    let path = plain_in(dir.path(), &["path", "x.bin", "--link", "4gfc"]);
    assert_eq!(path.status, 0, "{}", path.stderr);
    assert!(path.stdout.contains("x.bin"));
    assert!(
        path.stdout.to_lowercase().contains("declared"),
        "{}",
        path.stdout
    );
    let bad = plain_in(
        dir.path(),
        &["run", "x.bin", "--rw", "read", "--link", "4gfcc"],
    );
    assert_eq!(bad.status, 2);
    assert!(bad.stderr.contains("4gfcc"), "{}", bad.stderr);
    // --shared takes the items of --path, and a bad one is refused before any I/O too.
    let shared = plain_in(dir.path(), &["path", "x.bin", "--shared", "array:800MB/s"]);
    assert_eq!(shared.status, 0, "{}", shared.stderr);
    assert!(
        shared.stdout.contains("shared by every target"),
        "{}",
        shared.stdout
    );
    let bad = plain_in(
        dir.path(),
        &["run", "new.dat", "--rw", "write", "--shared", "array:fast"],
    );
    assert_eq!(bad.status, 2);
    assert!(bad.stderr.contains("'array:fast'"), "{}", bad.stderr);
    assert!(!dir.path().join("new.dat").exists());
}

/// `--confirm` on a latency-bound workload: the null engine with 4 ms per I/O at QD 1 keeps
/// one I/O in flight, so QD 2 doubles the rate (4 ms, not 1 ms: what a busy host adds to each
/// I/O is then small beside the delay). Whatever the verdict (the null engine is
/// inconclusive on an idle host, host-CPU-bound on a busy one), the experiment finds the
/// queue depth to be the limit.
#[test]
fn timing_confirm_finds_a_latency_bound_test_queue_depth_bound() {
    let dir = disk_tempdir();
    let args = [
        "f.dat",
        "--size",
        "16m",
        "--engine",
        "null",
        "--null-delay",
        "4ms",
        "--qd",
        "1",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--duration",
        "3",
        "--ramp",
        "0",
    ];
    let plain = run_in(dir.path(), &args);
    assert_eq!(plain.status, 0, "{}", plain.stderr);
    let analysis = &plain.json()["tests"][0]["analysis"];
    assert!(analysis.get("confirmation").is_none(), "{analysis}");

    let mut confirming = args.to_vec();
    confirming.push("--confirm");
    let run = run_in(dir.path(), &confirming);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let analysis = &run.json()["tests"][0]["analysis"];
    let confirmation = &analysis["confirmation"];
    assert_eq!(confirmation["experiment"], "queue_depth", "{confirmation}");
    assert_eq!(confirmation["setting_before"], 1);
    assert_eq!(confirmation["setting_after"], 2);
    let (before, after) = (
        f64_at(confirmation, &["iops_before"]),
        f64_at(confirmation, &["iops_after"]),
    );
    assert!(
        after >= 1.5 * before,
        "QD 2 gave {after} IOPS, QD 1 {before}"
    );
    assert_eq!(confirmation["derived_verdict"], "queue_depth_bound");
    let expected = if analysis["verdict"] == "queue_depth_bound" {
        "confirmed"
    } else {
        "refuted"
    };
    assert_eq!(confirmation["outcome"], expected, "{confirmation}");
    assert!(
        run.stdout.contains("  experiment: QD 2 gave +"),
        "{}",
        run.stdout
    );
}

/// The default suite confirms its verdicts unasked when that keeps it within about twice its
/// time: on the null engine with tests of 1.5 s, every experiment (1 s, a third of its test
/// but at least 1 s) runs and is stored, the experiments take less than the tests, and the run
/// takes less than twice the same suite with --no-confirm. Relations only: no speed is
/// assumed.
#[test]
fn timing_the_default_suite_confirms_its_verdicts_within_twice_its_time() {
    let dir = disk_tempdir();
    let args = [
        "f.dat",
        "--engine",
        "null",
        "--size",
        "16m",
        "--duration",
        "1.5",
        "--ramp",
        "0",
    ];
    let timed = |extra: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(extra);
        let started = std::time::Instant::now();
        let run = run_in(dir.path(), &all);
        (run, started.elapsed())
    };
    let (plain, plain_took) = timed(&["--no-confirm"]);
    plain.expect_status(0);
    for test in plain.json()["tests"].as_array().unwrap() {
        assert!(test["analysis"].get("confirmation").is_none(), "{test}");
    }

    let (run, took) = timed(&[]);
    run.expect_status(0);
    let tests = run.json()["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 7);
    let (mut tests_ns, mut experiments_ns) = (0.0, 0.0);
    for test in tests {
        tests_ns += f64_at(test, &["measured_ns"]) + f64_at(test, &["jobs", "0", "ramp_ns"]);
        let confirmation = &test["analysis"]["confirmation"];
        let measured = f64_at(confirmation, &["measured_ns"]);
        assert!(measured > 0.0, "{}: {confirmation}", test["name"]);
        experiments_ns += measured + f64_at(confirmation, &["ramp_ns"]);
    }
    assert!(
        experiments_ns <= tests_ns,
        "experiments {experiments_ns} ns, tests {tests_ns} ns"
    );
    assert!(
        took < 2 * plain_took,
        "with experiments {took:?}, without {plain_took:?}"
    );
    assert_eq!(
        run.stdout.matches("  experiment: ").count(),
        7,
        "{}",
        run.stdout
    );
    assert!(!run.stderr.contains("not confirmed"), "{}", run.stderr);

    let both = run_in(dir.path(), &["f.dat", "--confirm", "--no-confirm"]);
    assert_eq!(both.status, 2, "{}", both.stderr);
    assert!(both.stderr.contains("--no-confirm"), "{}", both.stderr);
}
