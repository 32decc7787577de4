//! What a job of many existing files costs per file outside its I/O, counted from the
//! outside with strace: one `statx` of each file before the run (shared by the count of
//! descriptors, the look for the null device and the checks), one read of its ownership mark,
//! and one `statx` in the analysis; no open, no read of its head. The worker's own open of
//! each file (a `statx` of the path, then the open) is the I/O's, as fio's is.

use crate::common::{disk_tempdir, has_command, traced_run};
use crate::path_command::{as_nobody, nobody_runs_iopath};
use crate::support::devices::required_tool;
use crate::support::skip_unless;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Files of the job laid out by the test (not by iopath), each read once by one sequential
/// 4 KiB read, at most 16 open at once.
fn laid_out_job(files: u32) -> tempfile::TempDir {
    let dir = disk_tempdir();
    let data = dir.path().join("files");
    std::fs::create_dir(&data).unwrap();
    for index in 0..files {
        std::fs::write(data.join(format!("calls.0.{index}")), [5u8; 4096]).unwrap();
    }
    let job = format!(
        "[calls]\nioengine=psync\nrw=read\nbs=4k\nfilesize=4k\nnrfiles={files}\nopenfiles=16\ndirectory={}\n",
        data.display()
    );
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    dir
}

/// The calls of one `iopath run` of [`laid_out_job`] of `files` files, as strace logs them
/// (one line each, every thread).
fn traced_calls(strace: &Path, files: u32) -> Vec<String> {
    let dir = laid_out_job(files);
    traced_run(strace, dir.path(), &[], &["--job", "job.fio"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// How many of `calls` are `name(` calls naming one of the job's files.
fn naming_files(calls: &[String], name: &str) -> usize {
    calls
        .iter()
        .filter(|line| line.contains(&format!("{name}(")) && line.contains("/calls.0."))
        .count()
}

/// The calls `calls` logs of the main thread (the first in the log), which checks the targets
/// before the run and analyses it after: the run's workers and samplers are other threads.
fn main_thread(calls: &[String]) -> usize {
    let main = calls
        .first()
        .and_then(|line| line.split_whitespace().next())
        .unwrap_or_default();
    calls
        .iter()
        .filter(|line| line.split_whitespace().next() == Some(main))
        .filter(|line| !line.contains("<... "))
        .count()
}

/// How many more `count` gives for 450 files than for 50, per file added.
fn per_file(few: &[String], many: &[String], count: impl Fn(&[String]) -> usize) -> f64 {
    (count(many) as f64 - count(few) as f64) / 400.0
}

#[test]
fn an_existing_file_of_a_many_file_job_costs_one_statx_and_no_open_before_the_run() {
    let Some(strace) = required_tool("strace", "strace") else {
        return;
    };
    let few = traced_calls(&strace, 50);
    let many = traced_calls(&strace, 450);
    // Before: 7 statx, 2 opens (one to check, one to read the head), 2 reads, 2 closes,
    // 2 fcntl and an fgetxattr a file, 16 calls besides the worker's own open.
    let statx = per_file(&few, &many, |calls| naming_files(calls, "statx"));
    let opens = per_file(&few, &many, |calls| naming_files(calls, "openat"));
    let marks = per_file(&few, &many, |calls| naming_files(calls, "getxattr"));
    let main = per_file(&few, &many, main_thread);
    assert!(
        statx <= 3.05,
        "statx of a file: one before the run, the worker's, the analysis's; {statx} a file"
    );
    assert!(
        opens <= 1.05,
        "only the worker opens a file: {opens} opens a file"
    );
    assert!(marks <= 1.05, "one read of a file's mark: {marks} a file");
    assert!(
        main <= 3.5,
        "checks and analysis: a statx and a mark before, a statx after; {main} calls a file"
    );
}

#[test]
fn a_file_of_a_many_file_job_its_user_cannot_read_is_refused_before_the_run() {
    skip_unless!(
        has_command("setpriv"),
        "setpriv is not installed (apt-get install util-linux)"
    );
    let dir = laid_out_job(100);
    let open_to_all = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    open_to_all(dir.path(), 0o755);
    open_to_all(&dir.path().join("files"), 0o755);
    // The 51st file, on a filesystem known from the first: checked without an open.
    let closed = dir.path().join("files/calls.0.50");
    open_to_all(&closed, 0o600);
    let job = dir.path().join("job.fio");
    let job = job.to_str().unwrap();
    if !nobody_runs_iopath() {
        return;
    }
    let refused = as_nobody(&["run", "--job", job, "--no-history"]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("calls.0.50") && refused.stderr.contains("permission denied"),
        "{}",
        refused.stderr
    );
}
