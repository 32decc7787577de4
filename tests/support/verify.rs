//! Verification tests over every kind of target: running the binary with `--verify` and
//! reading what its RunResult says, and the faults a storage path makes, done to a backing
//! file between the write and the verify run (flipped bits, a torn write, an older copy).

use serde_json::Value;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Bytes of each block the verify tests write.
pub const BLOCK: u64 = 4096;
/// Blocks of the region the verify tests write (1 MiB).
pub const BLOCKS: u64 = 256;

/// What one run of the binary did, and its verification.
pub struct VerifyRun {
    /// Exit status.
    pub status: i32,
    /// Standard output (the text report).
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The test's `verification`, when the run wrote a result.
    pub verification: Value,
    /// The test's errors by kind and errno.
    pub errors_by_kind: Value,
}

impl VerifyRun {
    /// Blocks checked.
    pub fn checked(&self) -> u64 {
        self.verification["blocks_checked"].as_u64().unwrap_or(0)
    }

    /// Bad blocks, all of them.
    pub fn bad(&self) -> u64 {
        self.verification["mismatch_count"]
            .as_u64()
            .unwrap_or(u64::MAX)
    }

    /// Blocks that read as never written (not errors).
    pub fn never_written(&self) -> u64 {
        self.verification["never_written_blocks"]
            .as_u64()
            .unwrap_or(0)
    }

    /// The kept bad blocks: (offset, kind).
    pub fn mismatches(&self) -> Vec<(u64, String)> {
        self.verification["mismatches"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|m| {
                        (
                            m["offset"].as_u64().unwrap_or(0),
                            m["kind"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The run id this run stamped.
    pub fn run_id(&self) -> String {
        self.verification["run_id"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// Everything, for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "exit {}\n{}\n{}\n{}",
            self.status, self.stdout, self.stderr, self.verification
        )
    }
}

/// Runs `BINARY run LEADING ARGS --json DIRECTORY/JSON` in `directory`: the output and the
/// result written (null when none was).
fn run_with_json<S: AsRef<std::ffi::OsStr>>(
    binary: &str,
    directory: &Path,
    leading: &[&str],
    args: &[S],
    json: &str,
) -> (std::process::Output, Value) {
    let json = directory.join(json);
    let _ = std::fs::remove_file(&json);
    let output = super::history::command(binary)
        .current_dir(directory)
        .arg("run")
        .args(leading)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("iopath runs");
    let result: Value = std::fs::read_to_string(&json)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    (output, result)
}

/// Runs `BINARY run TARGET --name vt ARGS --json FILE` in `directory` (where verify state
/// files go) and reads the first test's verification.
pub fn run<S: AsRef<std::ffi::OsStr>>(
    binary: &str,
    directory: &Path,
    target: &str,
    args: &[S],
) -> VerifyRun {
    let (output, result) = run_with_json(
        binary,
        directory,
        &[target, "--name", "vt", "--ramp", "0"],
        args,
        "verify-out.json",
    );
    VerifyRun {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        verification: result["tests"][0]["verification"].clone(),
        errors_by_kind: result["tests"][0]["errors"]["by_kind"].clone(),
    }
}

/// Writes `job` to `directory`/job.fio and runs `BINARY run --job job.fio TARGET --ramp 0
/// ARGS --json FILE` there: the exit status, stderr and the whole result (null when none was
/// written).
pub fn run_job_file(
    binary: &str,
    directory: &Path,
    job: &str,
    target: &str,
    args: &[&str],
) -> (i32, String, Value) {
    std::fs::write(directory.join("job.fio"), job).expect("the job file");
    let (output, result) = run_with_json(
        binary,
        directory,
        &["--job", "job.fio", target, "--ramp", "0"],
        args,
        "job.json",
    );
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        result,
    )
}

/// The arguments of a run that writes the whole 1 MiB region once, sequentially, in 4 KiB
/// blocks with `kind` headers, and reads it back (fio's default verify); `more` follow.
pub fn region_args(kind: &str, more: &[&str]) -> Vec<String> {
    [
        "--rw", "write", "--bs", "4k", "--qd", "4", "--bytes", "1m", "--size", "1m", "--verify",
        kind,
    ]
    .iter()
    .chain(more)
    .map(|arg| arg.to_string())
    .collect()
}

/// The arguments of a run that writes the region ([`region_args`]), saves its state and does
/// not read back.
pub fn write_args(kind: &str) -> Vec<String> {
    region_args(kind, &["--verify-read-back=false", "--verify-state-save"])
}

/// The arguments of a run that only checks the blocks the saved state names.
pub fn check_args(kind: &str) -> Vec<String> {
    region_args(kind, &["--verify-only", "--verify-state-load"])
}

/// Flips bit `bit` of the byte at `offset` of `path`.
pub fn flip_bit(path: &Path, offset: u64, bit: u8) {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut byte = [0u8];
    file.seek(SeekFrom::Start(offset)).unwrap();
    file.read_exact(&mut byte).unwrap();
    byte[0] ^= 1 << bit;
    file.seek(SeekFrom::Start(offset)).unwrap();
    file.write_all(&byte).unwrap();
    file.sync_all().unwrap();
}

/// Reads `length` bytes at `offset` of `path`.
pub fn read_at(path: &Path, offset: u64, length: u64) -> Vec<u8> {
    let mut file = std::fs::File::open(path).unwrap();
    file.seek(SeekFrom::Start(offset)).unwrap();
    let mut bytes = vec![0u8; length as usize];
    file.read_exact(&mut bytes).unwrap();
    bytes
}

/// Writes `bytes` at `offset` of `path`.
pub fn write_at(path: &Path, offset: u64, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(offset)).unwrap();
    file.write_all(bytes).unwrap();
    file.sync_all().unwrap();
}

/// Flips one bit in each of `blocks` (block numbers) of `path`, in the data past the header,
/// at a different place in each; returns their offsets.
pub fn flip_blocks(path: &Path, region_start: u64, blocks: &[u64]) -> Vec<u64> {
    blocks
        .iter()
        .map(|block| {
            let offset = region_start + block * BLOCK;
            flip_bit(path, offset + 100 + block * 13 % 3900, (*block % 8) as u8);
            offset
        })
        .collect()
}

/// Makes block `block` of `path` torn: its second half is the same block of `older`.
pub fn tear(path: &Path, older: &Path, region_start: u64, block: u64) -> u64 {
    let offset = region_start + block * BLOCK;
    let half = BLOCK / 2;
    let old_half = read_at(older, offset + half, half);
    // A tear between two identical halves changes nothing: the injection must change bytes.
    assert_ne!(
        old_half,
        read_at(path, offset + half, half),
        "the older copy's half of block {block} equals the current one: write it differently"
    );
    write_at(path, offset + half, &old_half);
    offset
}
