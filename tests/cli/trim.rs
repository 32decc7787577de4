//! Trims (discards) through the binary against real parts: a loop device, whose discards free
//! the blocks of its backing file, and files on ext4 and tmpfs, which get holes punched — each
//! checked against the file system (its block count and `SEEK_HOLE`), not against iopath's own
//! figures. A file system without holes (ramfs) is refused before any I/O, and a device is never
//! trimmed without `--allow-destructive`.

use crate::common::*;
use crate::support::devices::allocated_blocks;
use std::os::fd::AsRawFd;
use std::path::Path;

/// The first hole at or after `offset` (`SEEK_HOLE`; the file's size when it has none there).
fn first_hole(path: &Path, offset: u64) -> u64 {
    let file = std::fs::File::open(path).unwrap();
    // SAFETY: lseek on a descriptor we own; it takes no pointers.
    let found = unsafe { libc::lseek(file.as_raw_fd(), offset as libc::off_t, libc::SEEK_HOLE) };
    assert!(found >= 0, "SEEK_HOLE on {}", path.display());
    found as u64
}

/// Lines of a `--trace-io` file whose direction is `trim`.
fn traced_trims(trace: &Path) -> u64 {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter(|line| line.split(',').nth(2) == Some("trim"))
        .count() as u64
}

/// Asserts that test 0 of `json` trimmed `ios` ranges of `bytes` in all, with their latency
/// recorded, and moved no data unless `writes`.
fn assert_trimmed(json: &serde_json::Value, ios: u64, bytes: u64, writes: bool) {
    let test = at(json, &["tests", "0"]);
    assert_eq!(u64_at(test, &["trim", "io_count"]), ios, "{}", test["trim"]);
    assert_eq!(u64_at(test, &["trim", "bytes"]), bytes);
    assert_eq!(u64_at(test, &["trim", "error_count"]), 0);
    assert_eq!(u64_at(test, &["trim", "histogram", "count"]), ios);
    let mean = f64_at(test, &["trim", "latency", "mean_ns"]);
    let max = u64_at(test, &["trim", "latency", "max_ns"]);
    assert!(
        mean > 0.0 && max as f64 >= mean,
        "{}",
        test["trim"]["latency"]
    );
    assert_eq!(u64_at(test, &["read", "io_count"]), 0);
    assert_eq!(u64_at(test, &["write", "io_count"]) > 0, writes);
    // Trims move no data: reads and writes together leave them out.
    assert_eq!(
        u64_at(test, &["total", "io_count"]),
        u64_at(test, &["write", "io_count"])
    );
}

#[test]
fn discards_of_a_loop_device_free_its_backing_file_and_need_allow_destructive() {
    let dir = disk_tempdir();
    let backing = dir.path().join("disk.img");
    write_foreign_file(&backing, 32 << 20);
    let full = allocated_blocks(&backing);
    assert!(full >= (32 << 20) / 512, "the image is written out");
    let Some(device) = LoopDevice::attach(&backing) else {
        return;
    };
    let path = device.path().to_str().unwrap();
    let refused = plain_in(
        dir.path(),
        &["run", path, "--rw", "trim", "--bs", "1m", "--bytes", "16m"],
    );
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--allow-destructive") && refused.stderr.contains(path),
        "{}",
        refused.stderr
    );
    assert_eq!(allocated_blocks(&backing), full, "nothing was trimmed");

    // The sync engine (BLKDISCARD) trims the first half, io_uring (its block discard command,
    // four in flight) the second, each 1 MiB at a time; one worker each.
    for (engine, offset, depth) in [("sync", "0", "1"), ("io_uring", "16m", "4")] {
        let trace = dir.path().join(format!("{engine}.csv"));
        let outcome = run_in(
            dir.path(),
            &[
                path,
                "--rw",
                "trim",
                "--bs",
                "1m",
                "--bytes",
                "16m",
                "--offset",
                offset,
                "--engine",
                engine,
                "--qd",
                depth,
                "--allow-destructive",
                "--trace-io",
                trace.to_str().unwrap(),
            ],
        );
        outcome.expect_status(0);
        assert_trimmed(outcome.json(), 16, 16 << 20, false);
        assert_eq!(
            traced_trims(&trace),
            16,
            "{engine}: trims counted = trims issued"
        );
        assert_eq!(
            at(
                outcome.json(),
                &["tests", "0", "jobs", "0", "engine", "name"]
            ),
            engine
        );
    }
    let after = allocated_blocks(&backing);
    assert!(
        after < full / 8,
        "the backing file keeps {after} of {full} blocks after every range was discarded"
    );
    assert_eq!(first_hole(&backing, 0), 0);
}

#[test]
fn trims_punch_holes_in_files_on_ext4_and_tmpfs_and_trimwrite_writes_each_range_back() {
    let disk = disk_tempdir();
    let memory = tempfile::tempdir_in("/dev/shm").ok();
    for dir in std::iter::once(disk.path()).chain(memory.as_ref().map(|dir| dir.path())) {
        let file = dir.join("made.bin");
        run_in(
            dir,
            &["made.bin", "--size", "8m", "--rw", "read", "--bytes", "64k"],
        )
        .expect_status(0);
        let full = allocated_blocks(&file);
        assert!(
            full >= (8 << 20) / 512,
            "{}: iopath fills what it creates",
            dir.display()
        );

        let outcome = run_in(
            dir,
            &[
                "made.bin",
                "--rw",
                "randtrim",
                "--bs",
                "64k",
                "--random-map",
                "--bytes",
                "4m",
            ],
        );
        outcome.expect_status(0);
        assert_trimmed(outcome.json(), 64, 4 << 20, false);
        let after = allocated_blocks(&file);
        assert!(
            after <= full - (4 << 20) / 512 + 64,
            "{}: {after} of {full} blocks left after 4 MiB of holes",
            dir.display()
        );
        assert_eq!(
            std::fs::metadata(&file).unwrap().len(),
            8 << 20,
            "the size is kept"
        );

        // Each trim is followed by a write of its range: as many of each, and the file holds
        // data again where the sequential pass went.
        let outcome = run_in(
            dir,
            &[
                "made.bin",
                "--rw",
                "trimwrite",
                "--bs",
                "64k",
                "--bytes",
                "8m",
            ],
        );
        outcome.expect_status(0);
        let test = at(outcome.json(), &["tests", "0"]);
        assert_eq!(u64_at(test, &["trim", "io_count"]), 64);
        assert_eq!(u64_at(test, &["write", "io_count"]), 64);
        assert!(first_hole(&file, 0) >= 4 << 20, "{}", dir.display());
    }
}

#[test]
fn a_file_system_without_holes_is_refused_before_any_io() {
    // ramfs keeps files in the page cache and has no fallocate at all.
    let dir = disk_tempdir();
    let point = dir.path().join("ramfs");
    let Some(mount) = Mount::new(&["-t", "ramfs", "none"], &point) else {
        return;
    };
    // A file iopath would create there: refused, and not created.
    let refused = plain_in(
        &mount.point,
        &[
            "run", "made.bin", "--size", "1m", "--rw", "trim", "--bytes", "64k",
        ],
    );
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    for needle in ["made.bin", "cannot trim", "punch holes"] {
        assert!(
            refused.stderr.contains(needle),
            "{needle}: {}",
            refused.stderr
        );
    }
    assert!(!mount.point.join("made.bin").exists());
    // An existing file, even with --allow-destructive: refused, its data kept.
    let existing = mount.point.join("data.bin");
    write_foreign_file(&existing, 1 << 20);
    let before = std::fs::read(&existing).unwrap();
    let refused = plain_in(
        &mount.point,
        &[
            "run",
            "data.bin",
            "--rw",
            "randtrim",
            "--bytes",
            "64k",
            "--allow-destructive",
        ],
    );
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("data.bin") && refused.stderr.contains("punch holes"),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read(&existing).unwrap(), before);
}
