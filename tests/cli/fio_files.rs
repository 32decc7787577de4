//! Several files per fio job (`nrfiles`, `filename=a:b:c`, `file_service_type`, `openfiles`,
//! and iopath's own `--files-per-worker`, `--file-service`): each clone is ONE worker moving
//! over its files with the job's `iodepth`. Read back from the I/O trace, whose lines carry each
//! I/O's target and the worker's I/Os in flight once it was issued.

use crate::common::{disk_tempdir, run_in, u64_at};
use crate::support::skip::io_uring_here;
use crate::trace::{Traced, read_trace, traced, traced_with_stderr};
use std::collections::{BTreeMap, BTreeSet};

/// The I/Os of `worker`, in issue order.
fn of_worker(ios: &[Traced], worker: u32) -> Vec<Traced> {
    ios.iter()
        .copied()
        .filter(|io| io.worker == worker)
        .collect()
}

/// How many I/Os went to each target.
fn per_target(ios: &[Traced]) -> BTreeMap<u32, usize> {
    let mut counts = BTreeMap::new();
    for io in ios {
        *counts.entry(io.target).or_insert(0) += 1;
    }
    counts
}

#[test]
fn a_24_file_job_keeps_its_iodepth_in_flight_in_total_round_robin() {
    if !io_uring_here() {
        return;
    }
    let dir = disk_tempdir();
    // Two clones with 24 files of their own each, on real files through io_uring.
    let job = "[many]\nioengine=io_uring\nrw=randread\nbs=4k\nnrfiles=24\nsize=24m\niodepth=16\nnumjobs=2\ntime_based\nruntime=300ms\n";
    let (ios, json) = traced(dir.path(), job, &[]);
    let result = &json["tests"][0]["jobs"][0];
    assert_eq!(
        u64_at(&json, &["tests", "0", "jobs", "0", "worker_threads"]),
        2,
        "one worker per clone: {result}"
    );
    assert_eq!(result["workload"]["worker_files"]["per_worker"], 24);
    let mut all_targets = BTreeSet::new();
    for worker in 0..2 {
        let mine = of_worker(&ios, worker);
        assert!(mine.len() > 24 * 10, "worker {worker}: {} I/Os", mine.len());
        // The job's iodepth in flight, over all 24 files together: never more, and reached.
        let deepest = mine.iter().map(|io| io.in_flight).max().unwrap();
        assert_eq!(deepest, 16, "worker {worker}");
        let files: BTreeSet<u32> = mine.iter().map(|io| io.target).collect();
        assert_eq!(files.len(), 24, "worker {worker} moves over its 24 files");
        // Round robin: every I/O goes to the next of its files, in order.
        let order: Vec<u32> = files.iter().copied().collect();
        for (index, io) in mine.iter().enumerate() {
            assert_eq!(io.target, order[index % 24], "worker {worker}, I/O {index}");
        }
        // Each file gets its share of the depth: no file more than one I/O ahead of another.
        let counts = per_target(&mine);
        let (least, most) = (
            counts.values().min().unwrap(),
            counts.values().max().unwrap(),
        );
        assert!(most - least <= 1, "{counts:?}");
        all_targets.extend(files);
    }
    assert_eq!(all_targets.len(), 48, "the clones' files are their own");
}

#[test]
fn shared_files_give_each_clone_all_of_them() {
    let dir = disk_tempdir();
    let job = "[shared]\nioengine=null\nfilename=a:b:c\nsize=3m\nrw=randread\niodepth=4\nnumjobs=2\ntime_based\nruntime=100ms\n";
    let (ios, json) = traced(dir.path(), job, &[]);
    assert_eq!(
        u64_at(&json, &["tests", "0", "jobs", "0", "worker_threads"]),
        2
    );
    for worker in 0..2 {
        let mine = of_worker(&ios, worker);
        let files: BTreeSet<u32> = mine.iter().map(|io| io.target).collect();
        assert_eq!(files, BTreeSet::from([0, 1, 2]), "worker {worker}");
        assert!(mine.iter().all(|io| io.in_flight <= 4));
    }
}

#[test]
fn round_robin_n_and_random_service_spread_the_ios_as_they_say() {
    let dir = disk_tempdir();
    let job = |service: &str| {
        format!(
            "[spread]\nioengine=null\nrw=randread\nbs=4k\nnrfiles=24\nsize=24m\niodepth=8\nfile_service_type={service}\nnumber_ios=4800\n"
        )
    };
    // roundrobin:4 — four I/Os to a file, then the next.
    let (ios, _) = traced(dir.path(), &job("roundrobin:4"), &[]);
    assert_eq!(ios.len(), 4800);
    let order: Vec<u32> = per_target(&ios).into_keys().collect();
    for (index, io) in ios.iter().enumerate() {
        assert_eq!(io.target, order[(index / 4) % 24], "I/O {index}");
    }
    assert!(ios.iter().all(|io| io.in_flight <= 8));
    // random — every file gets about its share (200 of 4800), not in order.
    let (ios, _) = traced(dir.path(), &job("random"), &[]);
    let counts = per_target(&ios);
    assert_eq!(counts.len(), 24, "{counts:?}");
    assert!(
        counts.values().all(|&count| (100..=300).contains(&count)),
        "{counts:?}"
    );
    let in_order = ios
        .windows(2)
        .filter(|pair| pair[1].target == (pair[0].target + 1) % 24)
        .count();
    assert!(
        in_order < ios.len() / 4,
        "{in_order} of {} in order",
        ios.len()
    );
}

#[test]
fn sequential_service_finishes_a_file_before_the_next() {
    let dir = disk_tempdir();
    // 4 files of 64 KiB read sequentially in 4 KiB blocks: 16 I/Os each, file after file.
    let job = "[seq]\nioengine=psync\nrw=read\nbs=4k\nnrfiles=4\nfilesize=64k\nsize=256k\niodepth=4\nfile_service_type=sequential\n";
    let (ios, _) = traced(dir.path(), job, &["--size", "64k"]);
    assert_eq!(ios.len(), 64);
    let order: Vec<u32> = per_target(&ios).into_keys().collect();
    for (index, io) in ios.iter().enumerate() {
        assert_eq!(io.target, order[index / 16], "I/O {index}");
        assert_eq!(io.offset, (index as u64 % 16) * 4096, "I/O {index}");
    }
}

#[test]
fn openfiles_bounds_the_files_in_use() {
    let dir = disk_tempdir();
    // 8 files of 64 KiB, 2 open at a time: files 0 and 1 until both are read through, then
    // 2 and 3, and so on.
    let job =
        "[window]\nioengine=psync\nrw=read\nbs=4k\nnrfiles=8\nsize=512k\niodepth=4\nopenfiles=2\n";
    let (ios, _) = traced(dir.path(), job, &["--size", "64k"]);
    assert_eq!(ios.len(), 128);
    let order: Vec<u32> = per_target(&ios).into_keys().collect();
    for (index, io) in ios.iter().enumerate() {
        let pair = index / 32;
        assert!(
            io.target == order[2 * pair] || io.target == order[2 * pair + 1],
            "I/O {index} went to {}",
            io.target
        );
    }
}

#[test]
fn the_run_flags_group_targets_per_worker() {
    let dir = disk_tempdir();
    let trace = dir.path().join("trace.csv");
    let outcome = run_in(
        dir.path(),
        &[
            "a.dat",
            "b.dat",
            "c.dat",
            "d.dat",
            "--size",
            "1m",
            "--engine",
            "null",
            "--rw",
            "randread",
            "--qd",
            "8",
            "--files-per-worker",
            "2",
            "--file-service",
            "random:2",
            "--duration",
            "0.1",
            "--ramp",
            "0",
            "--trace-io",
            trace.to_str().unwrap(),
        ],
    );
    assert_eq!(outcome.status, 0, "{}", outcome.stderr);
    let mut files_of_worker: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for io in read_trace(&trace) {
        assert!(io.in_flight <= 8, "{io:?}");
        files_of_worker
            .entry(io.worker)
            .or_default()
            .insert(io.target);
    }
    let groups: Vec<Vec<u32>> = files_of_worker
        .into_values()
        .map(|files| files.into_iter().collect())
        .collect();
    assert_eq!(
        groups,
        [vec![0, 1], vec![2, 3]],
        "two workers, two files each"
    );
    // Targets that do not make whole groups are refused before any I/O.
    let refused = run_in(
        dir.path(),
        &[
            "a.dat",
            "b.dat",
            "c.dat",
            "--size",
            "1m",
            "--files-per-worker",
            "2",
        ],
    );
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("3 targets do not make whole groups of 2"),
        "{}",
        refused.stderr
    );
    let bad = run_in(dir.path(), &["a.dat", "--file-service", "sideways"]);
    assert_eq!(bad.status, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("sideways"), "{}", bad.stderr);
}

/// The sizes of the files in `dir` whose names are in `names`.
fn file_sizes(dir: &std::path::Path, names: &[&str]) -> BTreeMap<String, u64> {
    names
        .iter()
        .map(|name| {
            let size = std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
            (name.to_string(), size)
        })
        .collect()
}

/// A job's `filename=` adds to the `[global]` section's files, as fio's does: the job works on
/// all of them, a name given twice is two of its files, and `size` is divided over the lot.
const ADDED_FILES_JOB: &str = "[global]\nfilename=a:b\nrw=read\nbs=64k\nioengine=psync\n\
[both]\nfilename=c\nsize=3m\ntime_based\nruntime=200ms\n\
[twice]\nfilename=a\nsize=6m\ntime_based\nruntime=200ms\n";

#[test]
fn a_job_s_filename_adds_to_the_global_section_s_files_as_in_fio() {
    let dir = disk_tempdir();
    let (ios, json, stderr) = traced_with_stderr(dir.path(), ADDED_FILES_JOB, &[]);
    assert!(
        stderr.contains("filename= adds to the 2 files named before it"),
        "the run says so: {stderr}"
    );
    let jobs = json["tests"][0]["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2, "two jobs");
    // `both`: a, b (from [global]) and c, 1 MiB each; `twice`: a, b, a, 2 MiB each, and the
    // file a is laid out for the larger of the two jobs' regions.
    assert_eq!(jobs[0]["workload"]["worker_files"]["per_worker"], 3);
    assert_eq!(jobs[1]["workload"]["worker_files"]["per_worker"], 3);
    let created = file_sizes(dir.path(), &["a", "b", "c"]);
    assert_eq!(
        created,
        BTreeMap::from([
            ("a".to_string(), 2 << 20),
            ("b".to_string(), 2 << 20),
            ("c".to_string(), 1 << 20)
        ])
    );
    // Each job's worker reads round robin over its three files.
    for worker in 0..2 {
        let targets: BTreeSet<u32> = of_worker(&ios, worker).iter().map(|io| io.target).collect();
        assert!(targets.len() >= 2, "worker {worker}: {targets:?}");
    }

    // fio lays out the same files at the same sizes.
    let fio_dir = disk_tempdir();
    std::fs::write(fio_dir.path().join("job.fio"), ADDED_FILES_JOB).unwrap();
    if crate::support::devices::fio_ran(fio_dir.path(), "job.fio") {
        assert_eq!(file_sizes(fio_dir.path(), &["a", "b", "c"]), created);
    }
}
