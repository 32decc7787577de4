//! A time-based verifying job reads back each pass as it goes, as fio does: on a 256 KiB file
//! a pass is 64 blocks of 4 KiB, and once the planner begins the next pass every block the
//! last one wrote is read back and checked, the reads counted as the job's reads. So a
//! `randwrite` job reads about as many blocks as it writes, and a `randrw` job about twice
//! (its own reads and the read-back), in iopath's fio-format JSON as in fio's.

use crate::support::skip::io_uring_here;

use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_iopath");

/// Blocks of one pass over the 256 KiB file.
const PASS_BLOCKS: u64 = 64;

/// The job file: `rw` over a 256 KiB file for `seconds`, verified with crc32c, on `engine`.
fn job(rw: &str, engine: &str, seconds: u32) -> String {
    format!(
        "[passes]\nfilename=passes.dat\nsize=256k\nbs=4k\nrw={rw}\nioengine={engine}\n\
         verify=crc32c\ntime_based=1\nruntime={seconds}\n"
    )
}

/// Read and write I/O counts of the first job of fio-format JSON.
fn counts(stdout: &[u8]) -> (u64, u64) {
    let text = String::from_utf8_lossy(stdout);
    let start = text.find('{').expect("JSON on standard output");
    let value: Value = serde_json::from_str(&text[start..]).expect("fio-format JSON");
    let job = &value["jobs"][0];
    let ios = |direction: &str| job[direction]["total_ios"].as_u64().unwrap();
    (ios("read"), ios("write"))
}

/// What one iopath run of a job did.
struct Run {
    status: i32,
    /// Read and write I/Os of its fio-format JSON.
    reads: u64,
    writes: u64,
    /// The RunResult's verification.
    verification: Value,
    stderr: String,
}

/// Runs `job` with iopath in `directory`.
fn iopath(directory: &Path, job: &str) -> Run {
    std::fs::write(directory.join("job.fio"), job).unwrap();
    let output = Command::new(BINARY)
        .current_dir(directory)
        .args(["run", "--job", "job.fio", "--ramp", "0"])
        .args(["--output-format", "json", "--json", "result.json"])
        .output()
        .expect("iopath runs");
    let result: Value = std::fs::read_to_string(directory.join("result.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.stdout.contains(&b'{'),
        "{stderr}\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let (reads, writes) = counts(&output.stdout);
    Run {
        status: output.status.code().unwrap_or(-1),
        reads,
        writes,
        verification: result["tests"][0]["verification"].clone(),
        stderr,
    }
}

/// Runs `job` with fio in `directory`: its read and write I/Os.
fn fio(fio: &Path, directory: &Path, job: &str) -> (u64, u64) {
    std::fs::write(directory.join("job.fio"), job).unwrap();
    counts(&crate::iolog_replay::fio_json(fio, directory, "job.fio").stdout)
}

/// A clean run: every read was checked, none bad, and the read-back after the workload held
/// at most the pass the time cut short.
fn assert_clean(run: &Run) {
    let found = &run.verification;
    assert_eq!(run.status, 0, "{}\n{found}", run.stderr);
    assert_eq!(found["mismatch_count"], 0, "{found}");
    assert!(
        found["blocks_checked"].as_u64().unwrap() >= run.reads,
        "every read is checked: {} reads, {found}",
        run.reads
    );
    assert!(
        found["read_back_ios"].as_u64().unwrap_or(0) <= PASS_BLOCKS,
        "{found}"
    );
    assert!(
        run.writes >= 4 * PASS_BLOCKS,
        "a few passes at least: {} writes",
        run.writes
    );
}

#[test]
fn a_time_based_verifying_randwrite_job_reads_back_each_pass() {
    let directory = tempfile::tempdir().unwrap();
    let run = iopath(directory.path(), &job("randwrite", "psync", 1));
    assert_clean(&run);
    // Each whole pass read back as the job ran, the last one, cut short by the time, after it
    // (fio leaves that one unchecked); the fio-format JSON counts both as reads.
    assert!(
        // (A write still in flight when the time ran out is read back too: depth 1 here.)
        run.reads <= run.writes + 1 && run.reads + PASS_BLOCKS >= run.writes,
        "{} reads of {} writes",
        run.reads,
        run.writes
    );
}

#[test]
fn a_time_based_verifying_randrw_job_reads_its_own_and_the_read_back() {
    if !io_uring_here() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let run = iopath(directory.path(), &job("randrw", "io_uring", 1));
    assert_clean(&run);
    let ratio = run.reads as f64 / run.writes as f64;
    assert!(
        (1.6..=2.4).contains(&ratio),
        "{} reads of {} writes",
        run.reads,
        run.writes
    );
}

/// A device too large for one pass in the run's time (64 MiB written at 2 MiB/s for a second):
/// no pass ends, and everything the run wrote is read back and checked after the workload.
/// fio 3.33 checks nothing in such a run.
#[test]
fn a_time_based_run_that_ends_no_pass_reads_back_what_it_wrote_after_the_workload() {
    let directory = tempfile::tempdir().unwrap();
    let job = job("randwrite", "psync", 1).replace("size=256k", "size=64m\nrate=2m");
    let run = iopath(directory.path(), &job);
    let found = &run.verification;
    assert_eq!(run.status, 0, "{}\n{found}", run.stderr);
    assert_eq!(found["mismatch_count"], 0, "{found}");
    assert!(run.writes > 100, "{} writes", run.writes);
    assert_eq!(
        found["read_back_ios"].as_u64().unwrap(),
        run.writes,
        "every block written read back: {found}"
    );
    assert!(
        found["blocks_checked"].as_u64().unwrap() >= run.writes,
        "{found}"
    );
}

/// fio 3.33 reads each pass back only with an engine that queues (io_uring, libaio): with a
/// synchronous one its pass never ends in a time-based job (it says so: "verification read
/// phase will never start"), so the comparison runs on io_uring.
#[test]
fn fio_and_iopath_read_as_much_per_write_in_a_time_based_verifying_job() {
    if !io_uring_here() {
        return;
    }
    let Some(fio_binary) = crate::iolog_replay::fio() else {
        return;
    };
    for rw in ["randwrite", "randrw"] {
        let job = job(rw, "io_uring", 1);
        let ours = tempfile::tempdir().unwrap();
        let run = iopath(ours.path(), &job);
        assert_clean(&run);
        let theirs = tempfile::tempdir().unwrap();
        let (fio_reads, fio_writes) = fio(&fio_binary, theirs.path(), &job);
        let fio_ratio = fio_reads as f64 / fio_writes.max(1) as f64;
        let ratio = run.reads as f64 / run.writes as f64;
        assert!(
            (ratio - fio_ratio).abs() <= 0.2 * fio_ratio,
            "{rw}: iopath {} reads of {} writes, fio {fio_reads} of {fio_writes}",
            run.reads,
            run.writes
        );
    }
}

/// Another writer overwrites block 5 again and again in the first 700 ms of a 2 s run: a
/// read-back after the pass that wrote the block finds it. The read-back after the workload,
/// alone, would not: block 5 is written anew in every pass after the other writer stopped.
#[test]
fn a_block_overwritten_by_another_writer_mid_run_is_caught_by_a_pass_read_back_timing() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("passes.dat");
    let block = 5 * 4096u64;
    let corrupter = std::thread::spawn(move || {
        let waiting = Instant::now();
        let file = loop {
            match std::fs::OpenOptions::new().write(true).open(&path) {
                Ok(file) if file.metadata().unwrap().len() >= 256 << 10 => break file,
                _ if waiting.elapsed() > Duration::from_secs(20) => return 0,
                _ => std::thread::sleep(Duration::from_millis(2)),
            }
        };
        let started = Instant::now();
        let mut writes = 0;
        while started.elapsed() < Duration::from_millis(700) {
            file.write_at(&[0xa5; 4096], block).unwrap();
            writes += 1;
            std::thread::sleep(Duration::from_millis(5));
        }
        writes
    });
    let job = job("randwrite", "psync", 1).replace("runtime=1", "runtime=2");
    let run = iopath(directory.path(), &job);
    assert!(corrupter.join().unwrap() > 0, "the file was made");
    let found = &run.verification;
    assert_eq!(run.status, 1, "{}\n{found}", run.stderr);
    assert!(found["mismatch_count"].as_u64().unwrap() > 0, "{found}");
    for mismatch in found["mismatches"].as_array().unwrap() {
        assert_eq!(mismatch["offset"], block, "{found}");
    }
}
