//! Jobs of thousands of files: fio's `nrfiles` beyond the old 4096, the descriptor limit
//! checked before anything is opened, and the storage path discovered once per filesystem, not
//! once per file (counted from the outside, with strace).

use crate::common::{disk_tempdir, list_dir, run_in, traced_run};
use crate::support::devices::required_tool;
use std::path::Path;
use std::process::Command;

/// A timed 4 KiB random-read job of `files` files of 4 KiB, in `directory`.
fn many_file_job(directory: &Path, files: u32) -> String {
    format!(
        "[many]\nioengine=psync\nrw=randread\nbs=4k\nfilesize=4k\nnrfiles={files}\ntime_based\nruntime=200ms\ndirectory={}\n",
        directory.display()
    )
}

/// A temporary directory holding `job.fio`, a job of `files` files to be made in its
/// `files` directory (returned too, empty).
fn job_directory(files: u32) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = disk_tempdir();
    let data = dir.path().join("files");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(dir.path().join("job.fio"), many_file_job(&data, files)).unwrap();
    (dir, data)
}

#[test]
fn twenty_thousand_files_beyond_the_descriptor_limit_are_refused_before_any_file_is_made() {
    let (dir, files) = job_directory(20_000);
    // The child may hold at most 1024 descriptors, and may not raise that.
    let output = Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(r#"ulimit -Sn 1024 && ulimit -Hn 1024 && exec "$0" run --job job.fio --no-history"#)
        .arg(env!("CARGO_BIN_EXE_iopath"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("file descriptors") && stderr.contains("limit of 1024"),
        "{stderr}"
    );
    assert!(
        list_dir(&files).is_empty(),
        "no file was made before the refusal"
    );
}

#[test]
fn a_job_of_2000_files_runs_on_every_file() {
    let (dir, files) = job_directory(2000);
    let output = run_in(dir.path(), &["--job", "job.fio", "--no-history"]);
    output.expect_status(0);
    let json = output.json();
    assert_eq!(output.result().targets.len(), 2000);
    assert_eq!(
        json["tests"][0]["jobs"][0]["workload"]["worker_files"]["per_worker"],
        2000
    );
    assert!(json["tests"][0]["read"]["io_count"].as_u64().unwrap() > 0);
    assert_eq!(list_dir(&files).len(), 2000);
}

#[test]
fn bad_file_counts_exit_2() {
    let dir = disk_tempdir();
    for (job, message) in [
        ("[j]\nnrfiles=0\nsize=1m\n", "nrfiles"),
        ("[j]\nnrfiles=1048577\nsize=1m\n", "nrfiles"),
        ("[j]\nnrfiles=4\nopenfiles=0\nsize=1m\n", "openfiles"),
        (
            "[j]\nnrfiles=2048\nnumjobs=1024\nsize=1m\n",
            "more than 1048576 files",
        ),
    ] {
        std::fs::write(dir.path().join("job.fio"), job).unwrap();
        let output = run_in(dir.path(), &["--job", "job.fio", "--no-history"]);
        output.expect_status(2);
        assert!(output.stderr.contains(message), "{job}: {}", output.stderr);
        assert_eq!(list_dir(dir.path()), ["job.fio"], "{job}: nothing made");
    }
    let output = run_in(
        dir.path(),
        &["a", "b", "--size", "1m", "--files-per-worker", "1048577"],
    );
    output.expect_status(2);
    assert!(
        output.stderr.contains("--files-per-worker"),
        "{}",
        output.stderr
    );
}

/// Opens of the mount table and of sysfs by `iopath run` on a job of `files` files, counted
/// by strace.
fn discovery_opens(strace: &Path, files: u32) -> usize {
    let (dir, _) = job_directory(files);
    traced_run(
        strace,
        dir.path(),
        &["-e", "trace=openat"],
        &["--job", "job.fio"],
    )
    .lines()
    .filter(|line| line.contains("/mountinfo\"") || line.contains("\"/sys/"))
    .count()
}

#[test]
fn the_path_is_discovered_once_per_filesystem_not_per_file() {
    let Some(strace) = required_tool("strace", "strace") else {
        return;
    };
    let few = discovery_opens(&strace, 20);
    let many = discovery_opens(&strace, 400);
    // Per file, the opens grew by about 24 a file (9 000 more for 380 more files); once per
    // filesystem they stay as they are, give or take the samplers' reads during the run.
    assert!(few > 0, "discovery reads the mount table and sysfs");
    assert!(many <= few + 40, "20 files: {few} opens; 400 files: {many}");
}

/// `readlink` calls of `iopath run` on a job of `files` files, counted by strace: what
/// resolving the files' directory costs.
fn directory_resolutions(strace: &Path, files: u32) -> usize {
    let (dir, _) = job_directory(files);
    traced_run(
        strace,
        dir.path(),
        &["-e", "trace=readlink"],
        &["--job", "job.fio"],
    )
    .lines()
    .filter(|line| line.contains("readlink("))
    .count()
}

#[test]
fn the_directory_of_many_files_is_resolved_once_not_per_file() {
    let Some(strace) = required_tool("strace", "strace") else {
        return;
    };
    let few = directory_resolutions(&strace, 20);
    let many = directory_resolutions(&strace, 400);
    // Per file, each part of the directory's path was read as a link: six or more calls a
    // file here (2 300 more for 380 more files).
    assert!(
        many <= few + 40,
        "20 files: {few} readlink calls; 400 files: {many}"
    );
}

/// A sequential 4 KiB read job of `files` files of 4 KiB, at most `open_files` open at once
/// (every I/O ends a file's pass, so the worker keeps moving to files it has not opened),
/// one read of each file.
fn bounded_open_job(directory: &Path, files: u32, open_files: Option<u32>) -> String {
    file_job(directory, files, open_files, "ioengine=psync\nrw=read")
}

/// A job `[bounded]` of `files` files of 4 KiB in `directory` (fio's names `bounded.0.N`),
/// at most `open_files` open at once, with the lines of `settings`: one pass over the files
/// unless they make it timed.
fn file_job(directory: &Path, files: u32, open_files: Option<u32>, settings: &str) -> String {
    let bound = open_files.map_or(String::new(), |bound| format!("openfiles={bound}\n"));
    format!(
        "[bounded]\n{settings}\nbs=4k\nfilesize=4k\nnrfiles={files}\n{bound}directory={}\n",
        directory.display()
    )
}

/// Lays out `count` files of 4 KiB in `directory` as fio names those of the job `bounded`.
fn lay_out(directory: &Path, count: u32) {
    for index in 0..count {
        std::fs::write(directory.join(format!("bounded.0.{index}")), [7u8; 4096]).unwrap();
    }
}

/// A temporary directory holding `job.fio`, the [`file_job`] of `count` files (laid out
/// already) in its `files` directory (returned too).
fn laid_out_job(
    count: u32,
    open_files: Option<u32>,
    settings: &str,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = disk_tempdir();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    lay_out(&files, count);
    let job = file_job(&files, count, open_files, settings);
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    (dir, files)
}

/// The result a run in `dir` saved.
fn saved_result(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap()
}

/// Runs `iopath run --job job.fio` in `dir` with a soft and hard descriptor limit of `limit`;
/// returns its exit status, its stderr and the most descriptors it held at once, counted in
/// /proc/PID/fd every few milliseconds while it ran (at most 120 s).
fn run_with_descriptor_limit(dir: &Path, limit: u32) -> (Option<i32>, String, usize) {
    let held = run_sampling_what_is_held(dir, limit, None);
    (held.status, held.stderr, held.most_descriptors)
}

/// What a run of [`run_sampling_what_is_held`] ended with and held at most.
struct Held {
    status: Option<i32>,
    stderr: String,
    /// The most entries of /proc/PID/fd in one sample.
    most_descriptors: usize,
    /// The most lines of /proc/PID/maps in one sample naming a file under the directory
    /// asked for (0 when none was asked for).
    most_mappings: usize,
}

/// As [`run_with_descriptor_limit`], counting also in /proc/PID/maps the mappings of files
/// under `mapped_under` at each sample.
fn run_sampling_what_is_held(dir: &Path, limit: u32, mapped_under: Option<&Path>) -> Held {
    let mut child = Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            r#"ulimit -Sn {limit} && ulimit -Hn {limit} && exec "$0" run --job job.fio --no-history --json result.json"#
        ))
        .arg(env!("CARGO_BIN_EXE_iopath"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let descriptors = format!("/proc/{}/fd", child.id());
    let maps = format!("/proc/{}/maps", child.id());
    let mapped_under = mapped_under.map(|directory| format!("{}/", directory.display()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let (mut most_descriptors, mut most_mappings) = (0, 0);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        if let Ok(entries) = std::fs::read_dir(&descriptors) {
            most_descriptors = most_descriptors.max(entries.count());
        }
        if let Some(under) = &mapped_under
            && let Ok(text) = std::fs::read_to_string(&maps)
        {
            let mapped = text.lines().filter(|line| line.contains(under)).count();
            most_mappings = most_mappings.max(mapped);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    Held {
        status: output.status.code(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        most_descriptors,
        most_mappings,
    }
}

#[test]
fn openfiles_bounds_the_descriptors_of_a_job_of_more_files_than_the_limit() {
    let dir = disk_tempdir();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    // 3000 files under a limit of 512: every file open at once cannot fit.
    std::fs::write(
        dir.path().join("job.fio"),
        bounded_open_job(&files, 3000, None),
    )
    .unwrap();
    let (status, stderr, _) = run_with_descriptor_limit(dir.path(), 512);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("limit of 512"), "{stderr}");
    // The files are laid out here, as fio's names them, so that the run only reads them.
    lay_out(&files, 3000);

    std::fs::write(
        dir.path().join("job.fio"),
        bounded_open_job(&files, 3000, Some(16)),
    )
    .unwrap();
    let (status, stderr, most) = run_with_descriptor_limit(dir.path(), 512);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(list_dir(&files).len(), 3000, "no file was added");
    let reads = saved_result(dir.path())["tests"][0]["read"]["io_count"]
        .as_u64()
        .unwrap();
    assert_eq!(reads, 3000, "the worker read every file once");
    // 16 files, the standard streams, the result and the samplers' reads of /proc.
    assert!(
        most > 16 && most <= 16 + 48,
        "at most 16 files open at once, and a few descriptors beside: {most} held"
    );
}

#[test]
fn openfiles_bounds_the_descriptors_of_an_io_uring_job_with_requests_in_flight() {
    if !crate::support::skip::io_uring_here() {
        return;
    }
    // Eight reads in flight over 3000 files, 16 open at most, under a limit of 512.
    let settings = "ioengine=io_uring\niodepth=8\nrw=randread";
    let (dir, _) = laid_out_job(3000, Some(16), settings);
    let (status, stderr, most) = run_with_descriptor_limit(dir.path(), 512);
    assert_eq!(status, Some(0), "{stderr}");
    let result = saved_result(dir.path());
    let job = &result["tests"][0]["jobs"][0];
    assert_eq!(job["engine"]["name"], "io_uring", "{}", job["engine"]);
    let (reads, errors) = (
        job["read"]["io_count"].as_u64().unwrap(),
        job["errors"]["count"].as_u64().unwrap(),
    );
    assert_eq!(reads, 3000, "the worker read every file once");
    assert_eq!(errors, 0);
    // 16 files, the ring, the standard streams, the result and the samplers' reads of /proc.
    assert!(
        most > 16 && most <= 16 + 48,
        "at most 16 files open at once, and a few descriptors beside: {most} held"
    );
}

#[test]
fn openfiles_bounds_the_descriptors_and_mappings_of_mmap_and_splice_jobs() {
    for engine in ["mmap", "splice"] {
        // One read of each of 3000 files, 16 open at most, under a limit of 512.
        let settings = format!("ioengine={engine}\nrw=read");
        let (dir, files) = laid_out_job(3000, Some(16), &settings);
        let held = run_sampling_what_is_held(dir.path(), 512, Some(&files));
        assert_eq!(held.status, Some(0), "{engine}: {}", held.stderr);
        let result = saved_result(dir.path());
        let job = &result["tests"][0]["jobs"][0];
        let (reads, errors) = (
            job["read"]["io_count"].as_u64().unwrap(),
            job["errors"]["count"].as_u64().unwrap(),
        );
        assert_eq!(reads, 3000, "{engine}: the worker read every file once");
        assert_eq!(errors, 0, "{engine}");
        // 16 files, a pipe, the standard streams, the result and the samplers' reads of /proc.
        let most = held.most_descriptors;
        assert!(
            most > 16 && most <= 16 + 48,
            "{engine}: at most 16 files open at once, and a few descriptors beside: {most} held"
        );
        let mapped = held.most_mappings;
        if engine == "mmap" {
            assert!(
                (1..=16).contains(&mapped),
                "mmap: at most 16 files mapped at once: {mapped} mapped"
            );
        } else {
            assert_eq!(mapped, 0, "splice maps no file");
        }
    }
}

#[test]
fn a_job_of_many_files_holds_one_descriptor_per_file_and_says_so_when_refused() {
    // fio's defaults: buffered, the cached pages of each file dropped at each pass.
    let settings = "ioengine=psync\nrw=randread\ntime_based\nruntime=1500ms";
    let (dir, _) = laid_out_job(3000, None, settings);
    // 3000 files and the reserve of 256: 3256, above a limit of 2000, and refused so.
    let (status, stderr, _) = run_with_descriptor_limit(dir.path(), 2000);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("about 3256 file descriptors") && stderr.contains("limit of 2000"),
        "{stderr}"
    );
    // Within a limit of 3400: one descriptor per file, none more for its checks.
    let (status, stderr, most) = run_with_descriptor_limit(dir.path(), 3400);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(
        saved_result(dir.path())["tests"][0]["read"]["io_count"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(
        most > 3000 && most <= 3000 + 48,
        "each file open once, and a few descriptors beside: {most} held"
    );
    // An experiment of twice the queue depth or workers would open every file once more:
    // left out before it opens any, with the figures, never half-way through its files.
    let result = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
    assert!(!result.contains("Too many open files"), "{result}");
    let confirmation = &saved_result(dir.path())["tests"][0]["analysis"]["confirmation"];
    if let Some(summary) = confirmation["summary"].as_str()
        && summary.contains("not measured")
    {
        assert!(summary.contains("about 6256 file descriptors"), "{summary}");
    }
}

#[test]
fn filestat_checks_its_files_without_holding_them_open() {
    let (dir, files) = laid_out_job(3000, None, "ioengine=filestat");
    // 3000 files found and checked under a limit of 512.
    let (status, stderr, most) = run_with_descriptor_limit(dir.path(), 512);
    assert_eq!(status, Some(0), "{stderr}");
    let looked_up = saved_result(dir.path())["tests"][0]["read"]["io_count"]
        .as_u64()
        .unwrap();
    assert_eq!(looked_up, 3000, "every file looked up once");
    assert_eq!(list_dir(&files).len(), 3000);
    assert!(most <= 48, "no descriptor per file: {most} held");
}
