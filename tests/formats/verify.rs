//! Data verification through the real binary on files and loop devices: a run writes 256
//! blocks with headers and saves its state, the test corrupts the backing file the way a
//! storage path does (flipped bits, a torn write, a misdirected write, a lost write, an older
//! copy after a restart), and a verify-only run must report exactly the corrupted blocks —
//! each by offset and kind — and nothing on clean data. NBD and iSCSI are covered in
//! tests/protocols/nbd/verify.rs and tests/protocols/iscsi.rs.

use crate::support;

use std::path::Path;
use support::devices::LoopDevice;
use support::verify::{self, BLOCK, BLOCKS, VerifyRun};

const BINARY: &str = env!("CARGO_BIN_EXE_iopath");

fn run<S: AsRef<std::ffi::OsStr>>(directory: &Path, target: &str, args: &[S]) -> VerifyRun {
    verify::run(BINARY, directory, target, args)
}

fn with(mut args: Vec<String>, more: &[&str]) -> Vec<String> {
    args.extend(more.iter().map(|s| s.to_string()));
    args
}

/// Writes the region of `target` with `kind` headers (state saved) and checks it clean.
fn write_clean(directory: &Path, target: &str, kind: &str, extra: &[&str]) -> VerifyRun {
    let written = run(directory, target, &with(verify::write_args(kind), extra));
    assert_eq!(written.status, 0, "{}", written.describe());
    let clean = run(directory, target, &with(verify::check_args(kind), extra));
    assert_eq!(clean.status, 0, "{}", clean.describe());
    assert_eq!(
        (clean.checked(), clean.bad()),
        (BLOCKS, 0),
        "{}",
        clean.describe()
    );
    written
}

fn assert_reported(found: &VerifyRun, offsets: &[u64], kind: &str) {
    assert_eq!(found.status, 1, "{}", found.describe());
    assert_eq!(found.bad(), offsets.len() as u64, "{}", found.describe());
    let mut reported = found.mismatches();
    reported.sort();
    let expected: Vec<(u64, String)> = offsets.iter().map(|o| (*o, kind.to_string())).collect();
    assert_eq!(reported, expected, "{}", found.describe());
}

#[test]
fn every_kind_writes_then_verifies_a_file_clean() {
    let directory = tempfile::tempdir().unwrap();
    for kind in ["crc32c", "crc32", "md5", "sha256", "xxhash", "meta"] {
        let target = format!("data-{kind}.bin");
        let found = run(
            directory.path(),
            &target,
            &[
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--qd",
                "8",
                "--bytes",
                "1m",
                "--size",
                "1m",
                "--random-map",
                "--verify",
                kind,
            ]
            .map(String::from),
        );
        assert_eq!(found.status, 0, "{kind}: {}", found.describe());
        assert_eq!((found.checked(), found.bad()), (BLOCKS, 0), "{kind}");
        assert!(
            found
                .stdout
                .contains(&format!("verify {kind}: 256 blocks checked"))
        );
    }
}

#[test]
fn flipped_bits_in_a_file_are_each_reported_as_a_checksum_mismatch() {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("data.bin");
    write_clean(directory.path(), "data.bin", "crc32c", &[]);
    let offsets = verify::flip_blocks(&file, 0, &[3, 77, 78, 200, 255]);
    let found = run(directory.path(), "data.bin", &verify::check_args("crc32c"));
    assert_reported(&found, &offsets, "checksum");
    // Each bad block is an error of the verify kind, EILSEQ as in fio.
    assert_eq!(found.errors_by_kind[0]["kind"], "verify");
    assert_eq!(found.errors_by_kind[0]["name"], "EILSEQ");
    assert_eq!(found.errors_by_kind[0]["count"], 5);
    assert!(
        found
            .stdout
            .contains("BAD data.bin at offset 12288 (4096 bytes): checksum: expected crc32c")
    );
}

#[test]
fn a_torn_write_a_misdirected_write_and_a_lost_write_are_told_apart() {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("data.bin");
    let older = directory.path().join("older.bin");
    // The older copy is written with another seed, so its data differs from the newer one's
    // (with the same seed both runs can fill a block with the same bytes, and a tear between
    // equal halves would change nothing).
    write_clean(directory.path(), "data.bin", "sha256", &["--seed", "11"]);
    std::fs::copy(&file, &older).unwrap();
    write_clean(directory.path(), "data.bin", "sha256", &[]);
    let torn = [
        verify::tear(&file, &older, 0, 10),
        verify::tear(&file, &older, 0, 11),
    ];
    // Block 40 landed where block 41 should have.
    verify::write_at(
        &file,
        41 * BLOCK,
        &verify::read_at(&file, 40 * BLOCK, BLOCK),
    );
    // Block 90's write never reached the medium (the file is made of zeros before).
    verify::write_at(&file, 90 * BLOCK, &vec![0u8; BLOCK as usize]);
    let found = run(directory.path(), "data.bin", &verify::check_args("sha256"));
    assert_eq!(found.bad(), 4, "{}", found.describe());
    let reported = found.mismatches();
    assert_eq!(
        reported,
        vec![
            (torn[0], "checksum".to_string()),
            (torn[1], "checksum".to_string()),
            (41 * BLOCK, "wrong_offset".to_string()),
            (90 * BLOCK, "never_written".to_string()),
        ]
    );
    assert!(
        found
            .stdout
            .contains("wrong_offset: expected offset 167936, run"),
        "{}",
        found.stdout
    );
}

#[test]
fn an_older_copy_after_a_restart_is_stale_and_names_the_run_that_wrote_it() {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("data.bin");
    let older = directory.path().join("older.bin");
    let first = write_clean(directory.path(), "data.bin", "crc32c", &[]);
    std::fs::copy(&file, &older).unwrap();
    let second = write_clean(directory.path(), "data.bin", "crc32c", &[]);
    assert_ne!(first.run_id(), second.run_id());
    // Four blocks come back from the older copy...
    for block in [5u64, 6, 7, 100] {
        verify::write_at(
            &file,
            block * BLOCK,
            &verify::read_at(&older, block * BLOCK, BLOCK),
        );
    }
    let found = run(directory.path(), "data.bin", &verify::check_args("crc32c"));
    assert_reported(
        &found,
        &[5 * BLOCK, 6 * BLOCK, 7 * BLOCK, 100 * BLOCK],
        "stale",
    );
    let by = &found.verification["mismatches"][0]["written_by_run"];
    assert_eq!(by.as_str(), Some(first.run_id().as_str()));
    // ...then the whole older copy: every block is stale.
    std::fs::copy(&older, &file).unwrap();
    let found = run(directory.path(), "data.bin", &verify::check_args("crc32c"));
    assert_eq!(
        (found.status, found.bad()),
        (1, BLOCKS),
        "{}",
        found.describe()
    );
}

#[test]
fn verify_fatal_stops_at_the_first_bad_block() {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("data.bin");
    write_clean(directory.path(), "data.bin", "crc32c", &[]);
    verify::flip_blocks(&file, 0, &[1, 2, 3]);
    let found = run(
        directory.path(),
        "data.bin",
        &with(verify::check_args("crc32c"), &["--verify-fatal"]),
    );
    assert_eq!(found.status, 1, "{}", found.describe());
    assert!(found.bad() >= 1 && found.bad() < 3, "{}", found.describe());
}

#[test]
fn a_region_never_written_reads_as_never_written_not_as_corrupt() {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("blank.bin");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let found = run(
        directory.path(),
        "blank.bin",
        &[
            "--rw",
            "read",
            "--bs",
            "4k",
            "--bytes",
            "1m",
            "--verify",
            "crc32c",
            "--verify-only",
            "--allow-destructive",
        ]
        .map(String::from),
    );
    assert_eq!(found.status, 0, "{}", found.describe());
    assert_eq!((found.bad(), found.never_written()), (0, BLOCKS));
}

#[test]
fn reads_of_a_mixed_workload_check_what_the_same_run_wrote() {
    let directory = tempfile::tempdir().unwrap();
    let found = run(
        directory.path(),
        "mixed.bin",
        &[
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--qd",
            "16",
            "--size",
            "1m",
            "--duration",
            "1",
            "--verify",
            "xxhash",
        ]
        .map(String::from),
    );
    assert_eq!(found.status, 0, "{}", found.describe());
    assert_eq!(found.bad(), 0, "{}", found.describe());
    assert!(found.checked() > BLOCKS, "{}", found.describe());
}

#[test]
fn verify_settings_that_cannot_work_are_refused_before_any_io() {
    let directory = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["--verify", "crc7"], "crc7"),
        (
            vec!["--verify", "crc32c", "--verify-interval", "64"],
            "does not fit",
        ),
        (vec!["--verify", "pattern"], "verify_pattern"),
        (
            vec!["--verify", "md5", "--bs", "6k", "--verify-interval", "4k"],
            "multiple of the verify interval",
        ),
        (vec!["--verify", "md5", "--workers", "2"], "several workers"),
    ] {
        let mut all = vec!["--rw", "write", "--size", "3m", "--bytes", "3m"];
        all.extend(args);
        let found = run(directory.path(), "refused.bin", &all);
        assert_eq!(found.status, 2, "{needle}: {}", found.describe());
        assert!(found.stderr.contains(needle), "{needle}: {}", found.stderr);
    }
    assert!(!directory.path().join("refused.bin").exists());
}

#[test]
fn flipped_bits_in_a_loop_devices_backing_file_are_each_reported() {
    let Some(device) = LoopDevice::attach_zeroed(4) else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let target = device.path().display().to_string();
    write_clean(
        directory.path(),
        &target,
        "crc32c",
        &["--allow-destructive"],
    );
    let offsets = verify::flip_blocks(device.backing_file(), 0, &[0, 64, 128, 129]);
    // The loop device's own cache may hold the old blocks: drop it.
    device.run("blockdev", &["--flushbufs"]);
    let found = run(
        directory.path(),
        &target,
        &with(verify::check_args("crc32c"), &["--allow-destructive"]),
    );
    assert_reported(&found, &offsets, "checksum");
}

#[test]
fn fios_verify_examples_check_every_block_they_wrote() {
    let Some(corpus) = support::corpus::shared_dir("fio-examples") else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    for (file, jobs) in [
        ("basic-verify.fio", vec![("write-and-verify", 4096u64)]),
        (
            "surface-scan.fio",
            vec![("write-phase", 0), ("verify-phase", 32768)],
        ),
    ] {
        let json = directory.path().join("out.json");
        let output = support::history::command(BINARY)
            .current_dir(directory.path())
            .arg("run")
            .arg("--job")
            .arg(corpus.join(file))
            .args(["--size", "16m", "--json"])
            .arg(&json)
            .arg("target.dat")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let found: Vec<(String, u64, u64)> = result["tests"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|test| test["jobs"].as_array().unwrap().clone())
            .map(|job| {
                (
                    job["name"].as_str().unwrap().to_string(),
                    job["verification"]["blocks_checked"].as_u64().unwrap(),
                    job["verification"]["mismatch_count"].as_u64().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(String, u64, u64)> = jobs
            .iter()
            .map(|(name, checked)| (name.to_string(), *checked, 0))
            .collect();
        assert_eq!(found, expected, "{file}");
        std::fs::remove_file(directory.path().join("target.dat")).unwrap();
    }
}

#[test]
fn a_verify_backlog_reads_back_while_the_workload_writes() {
    let directory = tempfile::tempdir().unwrap();
    let json_args = [
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--size",
        "1m",
        "--bytes",
        "1m",
        "--random-map",
        "--verify",
        "crc32c",
        "--verify-backlog",
        "16",
        "--verify-read-back=false",
    ];
    let found = run(directory.path(), "backlog.bin", &json_args);
    assert_eq!(found.status, 0, "{}", found.describe());
    // Every write was read back in batches of 16 while the workload ran (256 = 16 × 16).
    assert_eq!(
        (found.checked(), found.bad()),
        (BLOCKS, 0),
        "{}",
        found.describe()
    );
}

#[test]
fn trimmed_blocks_read_back_as_never_written_not_as_corrupt() {
    let directory = tempfile::tempdir().unwrap();
    write_clean(directory.path(), "data.bin", "crc32c", &[]);
    // Holes punched in the first 16 blocks: read back, they hold no header.
    let trimmed = run(
        directory.path(),
        "data.bin",
        &[
            "--rw",
            "trim",
            "--bs",
            "4k",
            "--size",
            "1m",
            "--bytes",
            "64k",
            "--verify",
            "crc32c",
            "--allow-destructive",
        ],
    );
    assert_eq!(trimmed.status, 0, "{}", trimmed.describe());
    assert_eq!(
        (trimmed.checked(), trimmed.never_written(), trimmed.bad()),
        (16, 16, 0),
        "{}",
        trimmed.describe()
    );
    // Trims and writes back in turn: every block holds its last write, or reads as trimmed.
    let mixed = run(
        directory.path(),
        "data.bin",
        &[
            "--rw",
            "randtrimwrite",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--size",
            "1m",
            "--bytes",
            "1m",
            "--verify",
            "crc32c",
            "--allow-destructive",
        ],
    );
    assert_eq!(mixed.status, 0, "{}", mixed.describe());
    assert_eq!(mixed.bad(), 0, "{}", mixed.describe());
    assert!(mixed.checked() > 0, "{}", mixed.describe());
}

/// fio's trims of verified blocks: half the completed writes are picked, and after every 16
/// writes 8 of them are trimmed; checked with `trim_verify_zero=1` (fio's default).
const TRIM_JOB: &str = "[tv]\nsize=1m\nbs=4k\nrw=randwrite\nnumber_ios=256\nverify=crc32c\n\
    trim_percentage=50\ntrim_backlog=16\ntrim_backlog_batch=8\nverify_state_save=1\n";

/// Runs `iopath run --job JOB_FILE TARGET ARGS --json FILE` in `directory`: the exit status,
/// stderr and test 0 of the result.
fn run_job(
    directory: &Path,
    job: &str,
    target: &str,
    args: &[&str],
) -> (i32, String, serde_json::Value) {
    let (status, stderr, result) = verify::run_job_file(BINARY, directory, job, target, args);
    (status, stderr, result["tests"][0].clone())
}

/// Trims were issued and every trimmed block read back as zeroes, none bad.
fn assert_trimmed_zeroes(test: &serde_json::Value) {
    let trims = test["trim"]["io_count"].as_u64().unwrap_or(0);
    let found = &test["verification"];
    let trimmed = found["trimmed_blocks_checked"].as_u64().unwrap_or(0);
    assert!(trims > 0 && trimmed > 0, "{test}");
    assert!(
        trimmed <= trims,
        "{trimmed} trimmed blocks checked of {trims} trims"
    );
    assert!(
        found["blocks_checked"].as_u64().unwrap() > trimmed,
        "{found}"
    );
    assert_eq!(found["mismatch_count"], 0, "{found}");
}

#[test]
fn verified_blocks_trimmed_on_a_file_read_back_as_zeroes_and_a_filled_one_is_caught() {
    let directory = tempfile::tempdir().unwrap();
    let (status, stderr, test) = run_job(directory.path(), TRIM_JOB, "tv.dat", &[]);
    assert_eq!(status, 0, "{stderr}\n{test}");
    assert_trimmed_zeroes(&test);
    // The holes are real: the file holds fewer blocks than its 1 MiB.
    let target = directory.path().join("tv.dat");
    assert!(support::devices::allocated_blocks(&target) < (1 << 20) / 512);

    // A trimmed block that reads back with data is reported as such.
    let file = std::fs::File::open(&target).unwrap();
    // SAFETY: lseek on a descriptor we own; it takes no pointers.
    let hole = unsafe { libc::lseek(std::os::fd::AsRawFd::as_raw_fd(&file), 0, libc::SEEK_HOLE) };
    assert!(
        hole >= 0 && (hole as u64) < 1 << 20,
        "a hole in {}",
        target.display()
    );
    verify::write_at(&target, hole as u64 + 100, b"not zero");
    let check = TRIM_JOB.replace("verify_state_save=1", "verify_only=1\nverify_state_load=1");
    let (status, stderr, test) = run_job(directory.path(), &check, "tv.dat", &[]);
    assert_eq!(status, 1, "{stderr}\n{test}");
    let found = &test["verification"];
    assert_eq!(found["mismatch_count"], 1, "{found}");
    assert_eq!(found["mismatches"][0]["kind"], "not_zero_after_trim");
    assert_eq!(found["mismatches"][0]["offset"], hole, "{found}");
    assert_eq!(found["mismatches"][0]["found"], "byte 100: 0x6e");
}

#[test]
fn verified_blocks_trimmed_on_a_loop_device_read_back_as_zeroes() {
    let Some(device) = LoopDevice::attach_zeroed(4) else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let target = device.path().display().to_string();
    for engine in ["sync", "io_uring"] {
        // Direct I/O: a discard of a range whose written pages are still dirty in the
        // device's page cache fails with EBUSY (the kernel cannot drop them).
        let job = TRIM_JOB.replace("[tv]\n", &format!("[tv]\nioengine={engine}\ndirect=1\n"));
        let (status, stderr, test) =
            run_job(directory.path(), &job, &target, &["--allow-destructive"]);
        if engine == "io_uring" && status == 2 && stderr.contains("Linux 6.12") {
            support::skip::kernel_lacks("io_uring's block discard command (Linux 6.12)");
            continue;
        }
        assert_eq!(status, 0, "{engine}: {stderr}\n{test}");
        assert_trimmed_zeroes(&test);
    }
}

#[test]
fn a_state_saved_for_one_file_is_refused_for_another_of_the_same_size() {
    let directory = tempfile::tempdir().unwrap();
    // a.bin is written and checked clean from its state; b.bin, as large, is written too.
    write_clean(directory.path(), "a.bin", "crc32c", &[]);
    let state = directory.path().join("vt-0-verify.state");
    let saved_for_a = std::fs::read(&state).unwrap();
    let other = run(directory.path(), "b.bin", &verify::write_args("crc32c"));
    assert_eq!(other.status, 0, "{}", other.describe());
    std::fs::write(&state, &saved_for_a).unwrap();
    let found = run(directory.path(), "b.bin", &verify::check_args("crc32c"));
    assert_eq!(found.status, 2, "{}", found.describe());
    assert!(
        found
            .stderr
            .contains("saved for a.bin (1048576 bytes, inode")
            && found.stderr.contains("not for b.bin (1048576 bytes, inode"),
        "{}",
        found.stderr
    );
    // Refused before any I/O: no result, no blocks checked.
    assert_eq!(found.verification, serde_json::Value::Null);
    // A file still to be made is not the one the state was saved for: refused before it is
    // created.
    let missing = run(directory.path(), "c.bin", &verify::check_args("crc32c"));
    assert_eq!(missing.status, 2, "{}", missing.describe());
    assert!(
        missing.stderr.contains("c.bin does not exist"),
        "{}",
        missing.stderr
    );
    assert!(!directory.path().join("c.bin").exists());
    // The file it was saved for still verifies from it, under another name too.
    let linked = directory.path().join("a-linked.bin");
    std::fs::hard_link(directory.path().join("a.bin"), &linked).unwrap();
    let again = run(
        directory.path(),
        "a-linked.bin",
        &verify::check_args("crc32c"),
    );
    assert_eq!(again.status, 0, "{}", again.describe());
    assert_eq!(
        (again.checked(), again.bad()),
        (BLOCKS, 0),
        "{}",
        again.describe()
    );
}

#[test]
fn a_state_of_the_first_layout_is_refused_with_the_way_forward() {
    let directory = tempfile::tempdir().unwrap();
    write_clean(directory.path(), "a.bin", "crc32c", &[]);
    // The first layout: magic, version 1, interval, run id, one region of 256 blocks, each
    // written once — no word of its target.
    let mut bytes = b"IOPVSTAT".to_vec();
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&BLOCK.to_le_bytes());
    bytes.extend_from_slice(&7u64.to_le_bytes());
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&0u64.to_le_bytes());
    bytes.extend_from_slice(&BLOCKS.to_le_bytes());
    for _ in 0..BLOCKS {
        bytes.extend_from_slice(&1u32.to_le_bytes());
    }
    std::fs::write(directory.path().join("vt-0-verify.state"), bytes).unwrap();
    let found = run(directory.path(), "a.bin", &verify::check_args("crc32c"));
    assert_eq!(found.status, 2, "{}", found.describe());
    assert!(
        found.stderr.contains("did not record which target")
            && found.stderr.contains("a.bin (1048576 bytes")
            && found.stderr.contains("--verify-state-save"),
        "{}",
        found.stderr
    );
}
