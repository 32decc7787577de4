//! What each file of a job of many files costs in memory: the peak resident memory of a run
//! of 20 000 existing files against one of 2 000, the same job otherwise. The storage paths
//! of files of one filesystem share the hops below their file hop; when each held a copy of
//! them a file cost about 5.5 KB (5 578 bytes measured), and about 3.3 KB since.

use crate::common::{disk_tempdir, iopath};
use std::path::Path;
use std::process::Stdio;

/// The most the peak resident memory may grow per file from 2 000 to 20 000 files, bytes.
const MOST_BYTES_PER_FILE: u64 = 4_000;

/// `files` existing 4 KiB files in `directory`, named as fio names a job's files, and a timed
/// 4 KiB random-read job over them (256 open at a time) written to `job`.
fn lay_out(directory: &Path, job: &Path, files: u32) {
    for index in 0..files {
        let file = std::fs::File::create(directory.join(format!("many.0.{index}"))).unwrap();
        file.set_len(4096).unwrap();
    }
    std::fs::write(
        job,
        format!(
            "[many]\nioengine=psync\nrw=randread\nbs=4k\nfilesize=4k\nnrfiles={files}\nopenfiles=256\ntime_based\nruntime=100ms\ndirectory={}\n",
            directory.display()
        ),
    )
    .unwrap();
}

/// Runs `iopath run --job JOB` in `dir` to its end: its exit status and its peak resident
/// memory, bytes (the kernel's count for the child, `ru_maxrss`).
// The child is reaped by `wait4`, which gives its resource use; `Child::wait` would not.
#[allow(clippy::zombie_processes)]
fn peak_resident_bytes(dir: &Path, job: &Path) -> (i32, u64) {
    let child = iopath()
        .current_dir(dir)
        .arg("run")
        .arg("--job")
        .arg(job)
        .arg("--no-history")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iopath starts");
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `child` is this process's own child, not waited for yet (nothing else waits
    // for it: the `Child` is dropped unwaited), and both pointers are to live locals.
    let waited = unsafe {
        libc::wait4(
            child.id() as libc::pid_t,
            &mut status,
            0,
            &mut usage as *mut libc::rusage,
        )
    };
    assert_eq!(waited, child.id() as libc::pid_t, "wait4 on the run");
    assert!(
        libc::WIFEXITED(status),
        "the run ended by a signal: {status}"
    );
    (libc::WEXITSTATUS(status), usage.ru_maxrss as u64 * 1024)
}

#[test]
fn memory_per_file_of_a_many_file_job_stays_small() {
    let dir = disk_tempdir();
    let mut peaks = Vec::new();
    for files in [2_000u32, 20_000] {
        let directory = dir.path().join(format!("files-{files}"));
        std::fs::create_dir(&directory).unwrap();
        let job = dir.path().join(format!("job-{files}.fio"));
        lay_out(&directory, &job, files);
        let (status, peak) = peak_resident_bytes(dir.path(), &job);
        assert_eq!(status, 0, "the run of {files} files");
        peaks.push(peak);
        std::fs::remove_dir_all(&directory).unwrap();
    }
    let per_file = peaks[1].saturating_sub(peaks[0]) / 18_000;
    assert!(
        per_file <= MOST_BYTES_PER_FILE,
        "peak resident memory {} bytes at 2 000 files, {} at 20 000: {per_file} bytes a file, more than {MOST_BYTES_PER_FILE}",
        peaks[0],
        peaks[1]
    );
    // The run did look at its files: it is the same job, growing with them.
    assert!(peaks[1] > peaks[0], "{peaks:?}");
}
