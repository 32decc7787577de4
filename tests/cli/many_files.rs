//! Jobs of thousands of files: fio's `nrfiles` beyond the old 4096, the descriptor limit
//! checked before anything is opened, and the storage path discovered once per filesystem, not
//! once per file (counted from the outside, with strace).

use crate::common::{disk_tempdir, list_dir, run_in};
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
    let log = dir.path().join("strace.log");
    let output = Command::new(strace)
        .current_dir(dir.path())
        .args(["-f", "-e", "trace=openat", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_iopath"))
        .args(["run", "--job", "job.fio", "--no-history"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(&log)
        .unwrap()
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
