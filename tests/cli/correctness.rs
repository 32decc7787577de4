//! The numbers are right: offsets, counts, percentiles, seeds, kernel counters.

use crate::common::*;
use std::fs;

#[test]
fn sequential_writes_land_at_their_offsets() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "16m",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--bytes",
            "16m",
            "--qd",
            "4",
            "--workers",
            "2",
            "--stamp-writes",
        ],
    );
    run.expect_status(0);
    let data = fs::read(dir.path().join("f.dat")).unwrap();
    assert_eq!(data.len(), 16 << 20);
    for (index, block) in data.chunks(65536).enumerate() {
        let offset = u64::from_le_bytes(block[..8].try_into().unwrap());
        assert_eq!(offset, index as u64 * 65536, "block {index}");
        assert_eq!(&block[8..16], b"iopathST", "block {index}");
    }
    assert_eq!(
        u64_at(run.json(), &["tests", "0", "write", "io_count"]),
        256
    );
}

#[test]
fn a_byte_count_gives_exactly_bytes_over_block_size_ios() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "8m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--bytes",
            "4m",
            "--qd",
            "8",
            "--workers",
            "3",
        ],
    );
    run.expect_status(0);
    let json = run.json();
    assert_eq!(u64_at(json, &["tests", "0", "read", "io_count"]), 1024);
    assert_eq!(u64_at(json, &["tests", "0", "read", "bytes"]), 4 << 20);
    assert_eq!(
        u64_at(json, &["tests", "0", "jobs", "0", "worker_threads"]),
        3
    );
}

fn percentile(json: &serde_json::Value, key: &str) -> f64 {
    json["tests"][0]["read"]["latency"]["percentiles_ns"][key]
        .as_u64()
        .unwrap() as f64
}

/// The stated relative error of every percentile (0.79 %), plus 0.2 % for iopath's own cost
/// per I/O on top of the injected delay.
const ALLOWED: f64 = 1.0 / 128.0 + 0.002;

#[test]
fn timing_a_fixed_delay_comes_out_within_the_stated_error() {
    // A preempted worker sees its completions late, which is real latency but not the injected
    // delay: the run is at a raised priority, so that other work on the machine (a CPU hog on
    // every core) preempts it little, and the best of three runs must hold.
    let dir = disk_tempdir();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let run = run_measured_in(
            dir.path(),
            &[
                "f.dat",
                "--size",
                "1m",
                "--engine",
                "null",
                "--null-delay",
                "1ms",
                "--rw",
                "randread",
                "--qd",
                "1",
                "--duration",
                "1",
                "--ramp",
                "0",
            ],
        );
        run.expect_status(0);
        let json = run.json();
        let io_count = u64_at(json, &["tests", "0", "read", "io_count"]);
        let min = u64_at(json, &["tests", "0", "read", "latency", "min_ns"]);
        assert!(
            min >= 1_000_000,
            "no I/O can be faster than its delay: {min}"
        );
        let p50 = percentile(json, "50");
        let p90 = percentile(json, "90");
        if io_count > 500
            && [p50, p90]
                .iter()
                .all(|value| (value - 1e6).abs() / 1e6 <= ALLOWED)
        {
            return;
        }
        seen.push((io_count, p50, p90));
    }
    panic!(
        "(I/Os, p50, p90) not over 500 I/Os and within the stated error of a fixed 1 ms delay: {seen:?}"
    );
}

#[test]
fn timing_a_two_valued_delay_shows_both_values() {
    // As above: at a raised priority, the best of three runs must hold on a busy machine.
    let dir = disk_tempdir();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let run = run_measured_in(
            dir.path(),
            &[
                "f.dat",
                "--size",
                "1m",
                "--engine",
                "null",
                "--null-delay",
                "200us,2ms,10",
                "--rw",
                "randread",
                "--qd",
                "8",
                "--duration",
                "1.5",
                "--ramp",
                "0",
                "--seed",
                "5",
            ],
        );
        run.expect_status(0);
        let json = run.json();
        let p50 = percentile(json, "50");
        let p95 = percentile(json, "95");
        if (p50 - 200e3).abs() / 200e3 <= ALLOWED && (p95 - 2e6).abs() / 2e6 <= ALLOWED {
            return;
        }
        seen.push((p50, p95));
    }
    panic!("(p50, p95) not within the stated error of 200 µs and 2 ms: {seen:?}");
}

/// The issued I/O of a seeded run: every trace column but the last (the I/Os in flight, which
/// depend on when completions arrive, not on the seed).
fn traced(dir: &std::path::Path, seed: &str, trace: &str) -> String {
    run_in(
        dir,
        &[
            "f.dat",
            "--size",
            "8m",
            "--rw",
            "randrw",
            "--bs",
            "4k/50,16k/50",
            "--bytes",
            "2m",
            "--qd",
            "4",
            "--workers",
            "2",
            "--seed",
            seed,
            "--trace-io",
            trace,
        ],
    )
    .expect_status(0);
    fs::read_to_string(dir.join(trace))
        .unwrap()
        .lines()
        .map(|line| line.rsplit_once(',').map_or(line, |(kept, _)| kept))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_same_seed_repeats_its_offsets() {
    let dir = disk_tempdir();
    let first = traced(dir.path(), "42", "a.csv");
    let second = traced(dir.path(), "42", "b.csv");
    let other = traced(dir.path(), "43", "c.csv");
    assert!(first.lines().count() > 100);
    assert_eq!(first, second);
    assert_ne!(first, other);
}

#[test]
fn timing_loop_device_bytes_agree_with_the_kernel_counters() {
    let dir = disk_tempdir();
    let backing = dir.path().join("backing.img");
    sparse_image(&backing, 128 << 20);
    let Some(device) = LoopDevice::attach(&backing) else {
        return;
    };
    let device_path = device.path().to_str().unwrap().to_string();
    for (pattern, flags) in [
        ("randread", vec!["--qd", "8"]),
        ("write", vec!["--qd", "4", "--allow-destructive"]),
    ] {
        let (read_before, written_before) = device.sectors();
        let mut args = vec![
            device_path.as_str(),
            "--rw",
            pattern,
            "--bs",
            "64k",
            "--duration",
            "2",
            "--ramp",
            "0",
            // A confirming experiment (run unasked when the verdict is the latency-bound
            // fallback, as on a loaded host) would add I/O the kernel counts and the test not.
            "--no-confirm",
        ];
        args.extend(flags);
        let run = run_in(dir.path(), &args);
        run.expect_status(0);
        let (read_after, written_after) = device.sectors();
        let (kernel_sectors, direction) = if pattern == "write" {
            (written_after - written_before, "write")
        } else {
            (read_after - read_before, "read")
        };
        let kernel_bytes = kernel_sectors as f64 * 512.0;
        let measured = u64_at(run.json(), &["tests", "0", direction, "bytes"]) as f64;
        assert!(measured > 0.0);
        // The kernel also saw the I/Os still in flight when the window closed (≤ QD blocks).
        assert!(
            (kernel_bytes - measured).abs() / measured < 0.02,
            "{pattern}: kernel {kernel_bytes} bytes, iopath {measured}"
        );
        let seconds = u64_at(run.json(), &["tests", "0", "measured_ns"]) as f64 / 1e9;
        let rate = f64_at(run.json(), &["tests", "0", direction, "bytes_per_second"]);
        assert!((rate * seconds - measured).abs() / measured < 1e-6);
    }
}

#[test]
fn timing_a_rate_limit_holds() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "64m",
            "--rw",
            "randread",
            "--bs",
            "64k",
            "--rate",
            "20m",
            "--duration",
            "2",
            "--ramp",
            "0",
            "--qd",
            "4",
        ],
    );
    run.expect_status(0);
    let rate = f64_at(run.json(), &["tests", "0", "read", "bytes_per_second"]);
    let target = 20.0 * 1048576.0;
    assert!(
        (rate - target).abs() / target < 0.05,
        "{rate} B/s for a 20m cap"
    );
}

#[test]
fn a_rate_below_one_block_a_second_holds_over_all_workers() {
    let dir = disk_tempdir();
    let ios = |extra: &[&str]| {
        let args = [
            &[
                "f.dat",
                "--size",
                "16m",
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--duration",
                "3",
                "--ramp",
                "0",
            ][..],
            extra,
        ]
        .concat();
        let run = run_in(dir.path(), &args);
        run.expect_status(0);
        u64_at(run.json(), &["tests", "0", "read", "io_count"])
    };
    // One 4 KiB block a second for 3 s: about 3 I/Os, with one worker or eight, and with
    // eight sync workers standing in for a queue depth of 8.
    for extra in [
        &["--rate", "4k"][..],
        &["--rate", "4k", "--workers", "8"],
        &["--rate", "4k", "--engine", "sync", "--qd", "8"],
        &["--rate-iops", "1", "--workers", "8"],
    ] {
        let count = ios(extra);
        assert!((2..=4).contains(&count), "{extra:?}: {count} I/Os");
    }
    // One byte a second: the first block, and nothing more for 4096 s.
    assert_eq!(ios(&["--rate", "1", "--workers", "4"]), 1);
}

#[test]
fn fsync_at_end_is_inside_the_measured_time() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "16m",
            "--rw",
            "write",
            "--bs",
            "1m",
            "--bytes",
            "16m",
            "--buffered",
            "--fsync-at-end",
        ],
    );
    run.expect_status(0);
    let json = run.json();
    let fsync = u64_at(json, &["tests", "0", "jobs", "0", "fsync_ns"]);
    let measured = u64_at(json, &["tests", "0", "measured_ns"]);
    assert!(
        fsync > 0 && measured > fsync,
        "fsync {fsync} ns of {measured} ns"
    );
}

#[test]
fn the_sync_engine_maps_queue_depth_onto_workers_and_says_so() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "8m",
            "--engine",
            "sync",
            "--rw",
            "randread",
            "--qd",
            "4",
            "--duration",
            "0.5",
            "--ramp",
            "0",
        ],
    );
    run.expect_status(0);
    let json = run.json();
    assert_eq!(
        u64_at(json, &["tests", "0", "jobs", "0", "worker_threads"]),
        4
    );
    assert_eq!(
        u64_at(json, &["tests", "0", "jobs", "0", "queue_depth_per_worker"]),
        1
    );
    assert!(
        run.stderr.contains("4 workers of depth 1"),
        "{}",
        run.stderr
    );
    assert!(json["tests"][0]["warnings"].to_string().contains("workers"));
}

#[test]
fn a_filesystem_without_o_direct_falls_back_to_buffered_and_records_it() {
    let dir = disk_tempdir();
    let point = dir.path().join("ramfs");
    let Some(mount) = Mount::new(&["-t", "ramfs", "ramfs"], &point) else {
        return;
    };
    let run = run_in(
        &mount.point,
        &[
            "f.dat",
            "--size",
            "8m",
            "--rw",
            "randread",
            "--duration",
            "0.3",
            "--ramp",
            "0",
        ],
    );
    run.expect_status(0);
    let json = run.json();
    assert_eq!(json["tests"][0]["jobs"][0]["direct"], false);
    assert!(run.stderr.contains("O_DIRECT"), "{}", run.stderr);
    assert!(
        json["tests"][0]["warnings"]
            .to_string()
            .contains("O_DIRECT")
    );
    assert_eq!(json["targets"][0]["filesystem"], "ramfs");
}
