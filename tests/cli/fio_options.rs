//! fio options that change the experiment, through the real binary: what each does to the
//! I/O is read back from the I/O trace (`--trace-io`), the JSON result, or the worker
//! threads themselves.

use crate::common::{disk_tempdir, iopath, plain_in, run_in, run_measured_in, u64_at};
use crate::trace::{Traced, traced};
use serde_json::Value;
use std::time::{Duration, Instant};

fn offsets(ios: &[Traced]) -> Vec<u64> {
    ios.iter().map(|io| io.offset).collect()
}

#[test]
fn job_check_takes_the_targets_and_flags_run_takes() {
    let dir = disk_tempdir();
    let job = "[disk]\nfilename=/dev/iopath-no-such-disk\nrw=randread\nbs=4k\ndirect=1\n";
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let alone = plain_in(dir.path(), &["job", "check", "job.fio"]);
    assert_eq!(alone.status, 2, "{}", alone.stderr);
    assert!(alone.stderr.contains("job.fio:2:"), "{}", alone.stderr);
    let checked = plain_in(
        dir.path(),
        &["job", "check", "job.fio", "target.dat", "--size", "64m"],
    );
    assert_eq!(checked.status, 0, "{}", checked.stderr);
    assert!(
        checked.stdout.contains("target.dat (will be created, 64m)"),
        "{}",
        checked.stdout
    );
    assert!(!dir.path().join("target.dat").exists(), "check does no I/O");
    let ran = run_in(
        dir.path(),
        &[
            "--job",
            "job.fio",
            "target.dat",
            "--size",
            "64m",
            "--duration",
            "0.2",
            "--ramp",
            "0",
        ],
    );
    assert_eq!(ran.status, 0, "{}", ran.stderr);
}

#[test]
fn backwards_reads_and_holes_follow_fio() {
    let dir = disk_tempdir();
    // rw=read:-8k: the first block, then backwards from the end, 4k at a time.
    let (ios, _) = traced(
        dir.path(),
        "[back]\nfilename=data\nsize=64k\nbs=4k\nrw=read:-8k\n",
        &[],
    );
    assert_eq!(ios.len(), 16);
    let expected: Vec<u64> = std::iter::once(0)
        .chain((0..15).map(|step| 57_344 - step * 4096))
        .collect();
    assert_eq!(offsets(&ios), expected);
    // rw=write:4k: a 4k hole after each write; the pass ends at the region's end, as fio's.
    let (ios, json) = traced(
        dir.path(),
        "[holes]\nfilename=data\nsize=64k\nbs=4k\nrw=write:4k\n",
        &[],
    );
    assert_eq!(
        offsets(&ios),
        (0..8).map(|index| index * 8192).collect::<Vec<u64>>()
    );
    assert!(ios.iter().all(|io| io.write));
    assert_eq!(
        u64_at(&json, &["tests", "0", "jobs", "0", "write", "bytes"]),
        32_768
    );
}

#[test]
fn a_random_offset_every_n_ios_and_identical_offsets() {
    let dir = disk_tempdir();
    let (ios, _) = traced(
        dir.path(),
        "[every]\nfilename=data\nsize=4m\nbs=4k\nrw=randread:4\nnumber_ios=64\n",
        &[],
    );
    assert_eq!(ios.len(), 64);
    let mut jumps = 0;
    for (index, pair) in ios.windows(2).enumerate() {
        if (index + 1) % 4 == 0 {
            jumps += u32::from(pair[1].offset != pair[0].offset + 4096);
        } else {
            assert_eq!(pair[1].offset, pair[0].offset + 4096, "{index}: {ios:?}");
        }
    }
    assert!(jumps >= 12, "a new random offset every 4 I/Os: {jumps}");
    let (ios, _) = traced(
        dir.path(),
        "[same]\nfilename=data\nsize=4m\nbs=4k\nrw=randread:4\nrw_sequencer=identical\nnumber_ios=16\n",
        &[],
    );
    for run in ios.chunks(4) {
        assert!(run.iter().all(|io| io.offset == run[0].offset), "{ios:?}");
    }
}

#[test]
fn shares_of_an_existing_file_and_clone_increments() {
    let dir = disk_tempdir();
    let file = std::fs::File::create(dir.path().join("disk.img")).unwrap();
    file.set_len(8 << 20).unwrap();
    drop(file);
    // offset=50% size=25%: the third quarter of the 8 MiB file, read once.
    let (ios, _) = traced(
        dir.path(),
        "[part]\nfilename=disk.img\nrw=read\nbs=64k\noffset=50%\nsize=25%\n",
        &[],
    );
    assert_eq!(ios.len(), 32);
    assert_eq!(ios[0].offset, 4 << 20);
    assert!(
        ios.iter()
            .all(|io| io.offset >= 4 << 20 && io.offset < 6 << 20)
    );
    assert_eq!(
        std::fs::metadata(dir.path().join("disk.img"))
            .unwrap()
            .len(),
        8 << 20,
        "the file is left as it was"
    );
    // offset_increment: each clone reads its own megabyte from its start.
    let (ios, _) = traced(
        dir.path(),
        "[clones]\nfilename=split.dat\nrw=read\nbs=64k\nsize=1m\nnumjobs=2\noffset_increment=1m\n",
        &[],
    );
    for worker in 0..2u64 {
        let mine: Vec<u64> = ios
            .iter()
            .filter(|io| u64::from(io.worker) == worker)
            .map(|io| io.offset)
            .collect();
        assert_eq!(mine.len(), 16);
        assert_eq!(mine[0], worker << 20, "clone {worker} starts at its region");
        assert!(
            mine.iter()
                .all(|o| (worker << 20..(worker + 1) << 20).contains(o))
        );
    }
}

#[test]
fn fio_s_random_map_visits_each_block_once_and_norandommap_does_not() {
    let dir = disk_tempdir();
    let job = "[map]\nfilename=data\nsize=256k\nbs=4k\nrw=randread\n";
    let (ios, _) = traced(dir.path(), job, &[]);
    let mut blocks: Vec<u64> = ios.iter().map(|io| io.offset / 4096).collect();
    assert_eq!(blocks.len(), 64);
    blocks.sort_unstable();
    assert_eq!(blocks, (0..64).collect::<Vec<u64>>(), "every block once");
    let (ios, _) = traced(dir.path(), &format!("{job}norandommap\n"), &[]);
    let mut blocks: Vec<u64> = ios.iter().map(|io| io.offset / 4096).collect();
    blocks.sort_unstable();
    blocks.dedup();
    assert!(blocks.len() < 64, "independent draws repeat blocks");
    // Outside job files the map is a flag.
    let trace = dir.path().join("flag.csv");
    let outcome = run_in(
        dir.path(),
        &[
            "data",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "256k",
            "--bytes",
            "256k",
            "--random-map",
            "--buffered",
            "--trace-io",
            trace.to_str().unwrap(),
        ],
    );
    assert_eq!(outcome.status, 0, "{}", outcome.stderr);
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut offsets: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap())
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    assert_eq!(offsets.len(), 64);
}

/// The CPUs a thread may run on, from its status file (`Cpus_allowed_list`).
fn allowed_list(status: &str) -> Option<String> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
        .map(|list| list.trim().to_string())
}

#[test]
fn cpus_allowed_pins_every_worker_thread() {
    let dir = disk_tempdir();
    let own = std::fs::read_to_string("/proc/self/status").unwrap();
    let own = allowed_list(&own).unwrap();
    // The last CPU this process may use.
    let cpu = own
        .split(',')
        .next_back()
        .and_then(|part| part.split('-').next_back())
        .unwrap()
        .to_string();
    let job = format!(
        "[pinned]\nioengine=null\nfilename=data\nsize=1m\nnumjobs=2\ntime_based\nruntime=3\ncpus_allowed={cpu}\n"
    );
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let mut child = crate::common::spawn_in(
        dir.path(),
        &["run".as_ref(), "--job".as_ref(), "job.fio".as_ref()],
    );
    let tasks = format!("/proc/{}/task", child.id());
    let started = Instant::now();
    let mut seen = Vec::new();
    while seen.len() < 2 && started.elapsed() < Duration::from_secs(20) {
        seen.clear();
        for task in std::fs::read_dir(&tasks).into_iter().flatten().flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            if comm.starts_with("iopath-worker") {
                let status =
                    std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
                seen.extend(allowed_list(&status));
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(
        seen,
        [cpu.clone(), cpu],
        "both workers on the CPU asked for"
    );
}

/// Timing-sensitive: both runs must hold the rate they ask for (in the real-time class).
#[test]
fn timing_poisson_arrivals_vary_where_linear_ones_do_not() {
    let dir = disk_tempdir();
    let spread = |process: &str| -> (f64, f64) {
        let job = format!(
            "[rated]\nioengine=null\nfilename=data\nsize=1m\ntime_based\nruntime=3\nrate_iops=400\nrate_process={process}\n"
        );
        std::fs::write(dir.path().join("job.fio"), job).unwrap();
        let outcome = run_measured_in(dir.path(), &["--job", "job.fio", "--interval", "100ms"]);
        assert_eq!(outcome.status, 0, "{}", outcome.stderr);
        let json = outcome.json.unwrap();
        let series = json["tests"][0]["jobs"][0]["read"]["series"]
            .as_array()
            .unwrap()
            .clone();
        let counts: Vec<f64> = series
            .iter()
            .filter(|point| point["duration_ns"].as_u64() == Some(100_000_000))
            .map(|point| point["io_count"].as_u64().unwrap() as f64)
            .collect();
        let mean = counts.iter().sum::<f64>() / counts.len() as f64;
        let variance = counts
            .iter()
            .map(|count| (count - mean).powi(2))
            .sum::<f64>()
            / counts.len() as f64;
        (mean, variance)
    };
    let (linear_mean, linear_variance) = spread("linear");
    let (poisson_mean, poisson_variance) = spread("poisson");
    // Both hold the rate on average; a Poisson count's variance equals its mean (40 per
    // 100 ms), evenly spaced I/Os barely vary.
    assert!(
        (poisson_mean / linear_mean - 1.0).abs() < 0.25,
        "{poisson_mean} vs {linear_mean}"
    );
    assert!(
        poisson_variance > 4.0 * linear_variance.max(1.0),
        "{poisson_variance} vs {linear_variance}"
    );
}

#[test]
fn exitall_ends_the_group_and_flows_keep_their_ratio() {
    let dir = disk_tempdir();
    // 'short' transfers 64 KiB and ends; with exitall, 'long' ends with it, long before its
    // 60 s.
    let job = "[global]\nioengine=null\nfilename=data\nsize=1m\n[short]\nsize=64k\nrate_iops=100\nexitall\n[long]\ntime_based\nruntime=60\n";
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let outcome = run_in(dir.path(), &["--job", "job.fio"]);
    assert_eq!(outcome.status, 0, "{}", outcome.stderr);
    let json = outcome.json.unwrap();
    let long = u64_at(&json, &["tests", "0", "jobs", "1", "measured_ns"]);
    assert!(long < 30_000_000_000, "long ran {long} ns");
    // Weights 2 and 1 in one flow: I/O counts 2:1, whatever each job could do alone. Each job
    // waits for the other at almost every I/O, so on a busy machine the counts are small (19
    // light I/Os in 1 s beside a CPU hog on every core): the run is made longer until the
    // light job has done the 30 I/Os the ratio is judged on; the ratio holds whatever they are.
    let mut counts = Vec::new();
    for runtime in [1, 2, 4, 8] {
        let job = format!(
            "[global]\nioengine=null\nfilename=data\nsize=1m\ntime_based\nruntime={runtime}\nrw=randread\nnorandommap\n[heavy]\nflow=2\n[light]\nflow=1\niodepth=8\nioengine=null\n"
        );
        std::fs::write(dir.path().join("job.fio"), job).unwrap();
        let outcome = run_in(dir.path(), &["--job", "job.fio"]);
        assert_eq!(outcome.status, 0, "{}", outcome.stderr);
        let json = outcome.json.unwrap();
        let heavy = u64_at(&json, &["tests", "0", "jobs", "0", "total", "io_count"]) as f64;
        let light = u64_at(&json, &["tests", "0", "jobs", "1", "total", "io_count"]) as f64;
        counts.push((runtime, heavy, light));
        if light >= 30.0 {
            assert!((heavy / light - 2.0).abs() < 0.15, "{heavy} : {light}");
            return;
        }
    }
    panic!("under 30 light I/Os in every run, (s, heavy, light): {counts:?}");
}

#[test]
fn ramp_time_on_a_byte_count_is_issued_but_not_counted() {
    let dir = disk_tempdir();
    let job = "[ramped]\nioengine=null\nfilename=data\nsize=1m\nbs=4k\nrate_iops=200\nio_size=400k\nramp_time=250ms\n";
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let trace = dir.path().join("trace.csv");
    let outcome = run_in(
        dir.path(),
        &["--job", "job.fio", "--trace-io", trace.to_str().unwrap()],
    );
    assert_eq!(outcome.status, 0, "{}", outcome.stderr);
    let issued = std::fs::read_to_string(&trace).unwrap().lines().count() - 1;
    let json = outcome.json.unwrap();
    let counted = u64_at(&json, &["tests", "0", "jobs", "0", "read", "io_count"]);
    assert_eq!(issued, 100, "the ramp's I/O counts towards io_size");
    assert!(counted < 100 && counted > 0, "{counted} counted");
}

/// Timing-sensitive: it holds the rate the search found to the depth it found (at a raised
/// priority, so that other work on the machine does not take the worker's cores).
#[test]
fn timing_a_latency_target_search_reports_its_depth_and_iops() {
    let dir = disk_tempdir();
    let search = |target: &str, runtime: u32| -> Value {
        let job = format!(
            "[search]\nioengine=null\nfilename=data\nsize=1m\nrw=randread\niodepth=16\ntime_based\nruntime={runtime}\nlatency_target={target}\nlatency_window=200ms\nlatency_percentile=50\n"
        );
        std::fs::write(dir.path().join("job.fio"), job).unwrap();
        let outcome = run_measured_in(dir.path(), &["--job", "job.fio", "--null-delay", "1ms"]);
        assert_eq!(outcome.status, 0, "{}", outcome.stderr);
        outcome.json.unwrap()["tests"][0]["jobs"][0].clone()
    };
    // Every I/O takes 1 ms whatever the depth: a 20 ms target holds (for half the I/Os of each
    // window, however busy the machine) all the way to 16.
    let job = search("20ms", 20);
    let found = &job["latency_target"];
    assert_eq!(found["depths"], serde_json::json!([16]), "{found}");
    assert_eq!(found["met"], true);
    assert!(
        job["measured_ns"].as_u64().unwrap() < 20_000_000_000,
        "ends after the final window"
    );
    let iops = found["iops"].as_f64().unwrap();
    assert!(iops > 2000.0, "about 16 per ms: {iops}");
    // A target below the delay: not even depth 1 holds (the job stays there to its end).
    let job = search("500us", 1);
    assert_eq!(job["latency_target"]["depths"], serde_json::json!([1]));
    assert_eq!(job["latency_target"]["met"], false);
}

#[test]
fn the_run_flags_still_reach_the_unmapped_default() {
    // iopath's own runs keep independent random draws unless --random-map is given.
    let dir = disk_tempdir();
    let outcome = iopath()
        .current_dir(dir.path())
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&outcome.stdout);
    assert!(help.contains("--random-map"), "{help}");
}
