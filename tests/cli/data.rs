//! What iopath writes, read back from the file: it compresses and deduplicates to the shares
//! asked for, patterns and zeros are written exactly, default data is neither compressible nor
//! repeated — through flags and through fio job files, and side by side with fio itself.

use crate::common::*;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// Share of `data` that deflate (gzip's compression, level 6) removes, percent.
fn compressed_away_percent(data: &[u8]) -> f64 {
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    encoder.write_all(data).unwrap();
    let compressed = encoder.finish().unwrap();
    100.0 * (1.0 - compressed.len() as f64 / data.len() as f64)
}

/// Share that deflate removes when it compresses each 4 KiB block on its own (as a device
/// that compresses per block does), percent.
fn per_block_compressed_away_percent(data: &[u8]) -> f64 {
    let compressed: f64 = data
        .chunks(4096)
        .map(|block| (100.0 - compressed_away_percent(block)) * block.len() as f64 / 100.0)
        .sum();
    100.0 * (1.0 - compressed / data.len() as f64)
}

/// Distinct 4 KiB blocks of `data`, percent of its blocks.
fn distinct_blocks_percent(data: &[u8]) -> f64 {
    let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
    100.0 * blocks.len() as f64 / data.len().div_ceil(4096) as f64
}

/// Runs a sequential write over all of a new `f.dat` of `size` with `extra` flags; returns its
/// bytes and the run's JSON.
fn write_file(dir: &Path, size: &str, block: &str, extra: &[&str]) -> (Vec<u8>, serde_json::Value) {
    let mut args = vec![
        "f.dat", "--size", size, "--bytes", size, "--rw", "write", "--bs", block,
    ];
    if !extra.contains(&"--qd") {
        args.extend_from_slice(&["--qd", "4"]);
    }
    args.extend_from_slice(extra);
    let run = run_in(dir, &args);
    run.expect_status(0);
    let data = std::fs::read(dir.join("f.dat")).unwrap();
    let _ = std::fs::remove_file(dir.join("f.dat"));
    (data, run.json().clone())
}

/// Field `field` of the first job's `write_data` in a run's JSON.
fn written<'a>(json: &'a serde_json::Value, field: &str) -> &'a serde_json::Value {
    &at(json, &["tests", "0", "jobs", "0", "workload"])["write_data"][field]
}

fn assert_near(measured: f64, asked: f64, what: &str) {
    assert!(
        (measured - asked).abs() <= 5.0,
        "{what}: {measured:.1} % measured, {asked} % asked"
    );
}

#[test]
fn written_data_compresses_to_the_asked_share() {
    let dir = disk_tempdir();
    for percent in [0u8, 25, 50, 75, 90] {
        let text = percent.to_string();
        let (data, json) = write_file(dir.path(), "8m", "64k", &["--compress-pct", &text]);
        assert_near(
            compressed_away_percent(&data),
            f64::from(percent),
            &format!("--compress-pct {percent}"),
        );
        let workload = at(&json, &["tests", "0", "jobs", "0", "workload"]);
        assert_eq!(
            workload["write_data"]["compress_percent"],
            u64::from(percent)
        );
        if percent > 0 {
            let name = at(&json, &["tests", "0", "name"]).as_str().unwrap();
            assert!(name.contains(&format!("{percent}% compressible")), "{name}");
        }
    }
    // Chunks of a whole block compress alike.
    let (data, _) = write_file(
        dir.path(),
        "8m",
        "16k",
        &["--compress-pct", "60", "--compress-chunk", "0"],
    );
    assert_near(compressed_away_percent(&data), 60.0, "per-block chunks");
}

#[test]
fn dedupe_runs_write_the_asked_share_of_distinct_blocks() {
    let dir = disk_tempdir();
    for percent in [0u8, 25, 50, 75] {
        let text = percent.to_string();
        let (data, json) = write_file(dir.path(), "16m", "4k", &["--dedupe-pct", &text]);
        assert_near(
            distinct_blocks_percent(&data),
            f64::from(100 - percent),
            &format!("--dedupe-pct {percent}"),
        );
        assert_eq!(written(&json, "dedupe_percent"), u64::from(percent));
    }
    let (data, _) = write_file(
        dir.path(),
        "16m",
        "4k",
        &[
            "--dedupe-pct",
            "40",
            "--dedupe-mode",
            "working_set",
            "--dedupe-working-set-pct",
            "10",
            "--compress-pct",
            "50",
        ],
    );
    assert_near(distinct_blocks_percent(&data), 60.0, "working set");
    // Copies of the working set lie far beyond deflate's 32 KiB window: only the chunks count.
    assert_near(
        compressed_away_percent(&data),
        50.0,
        "dedupe and compression",
    );
}

/// `data`, block by block of `block` bytes, is `pattern` repeated from each block's start.
fn assert_pattern(data: &[u8], pattern: &[u8], block: usize) {
    assert!(!data.is_empty());
    for (index, chunk) in data.chunks(block).enumerate() {
        for (offset, byte) in chunk.iter().enumerate() {
            assert_eq!(
                *byte,
                pattern[offset % pattern.len()],
                "block {index} byte {offset}"
            );
        }
    }
}

#[test]
fn patterns_and_zeros_are_written_exactly() {
    let dir = disk_tempdir();
    let (data, json) = write_file(
        dir.path(),
        "4m",
        "4k",
        &["--buffer-pattern", "0xdeadface\"iopath\"-2"],
    );
    let mut pattern = vec![0xde, 0xad, 0xfa, 0xce];
    pattern.extend_from_slice(b"iopath");
    pattern.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff]);
    assert_pattern(&data, &pattern, 4096);
    assert_eq!(written(&json, "pattern"), "0xdeadface696f70617468feffffff");
    let (data, _) = write_file(dir.path(), "4m", "4k", &["--zero-buffers"]);
    assert!(data.iter().all(|b| *b == 0), "zeros");
    // Scrambling zeros, asked for, stamps every sector.
    let (data, _) = write_file(
        dir.path(),
        "1m",
        "4k",
        &["--zero-buffers", "--scramble-buffers"],
    );
    assert!(
        data.chunks(512)
            .all(|sector| sector.iter().any(|b| *b != 0))
    );
}

#[test]
fn default_data_neither_compresses_nor_repeats() {
    let dir = disk_tempdir();
    // One buffer, written 2048 times: scrambling keeps every block distinct, and no block
    // compresses on its own (a compressor that sees many blocks at once finds them alike, as
    // with fio's default data).
    let (data, json) = write_file(dir.path(), "8m", "4k", &["--qd", "1"]);
    assert_eq!(distinct_blocks_percent(&data), 100.0);
    assert!(per_block_compressed_away_percent(&data) < 1.0);
    let workload = at(&json, &["tests", "0", "jobs", "0", "workload"]);
    assert!(workload.get("write_data").is_none(), "{workload}");
    // Without scrambling, that one buffer is every block.
    let (data, _) = write_file(
        dir.path(),
        "8m",
        "4k",
        &["--qd", "1", "--scramble-buffers=false"],
    );
    assert!(distinct_blocks_percent(&data) < 0.1);
    // Refilled, every write is new random data: nothing compresses, even across blocks.
    let (data, _) = write_file(dir.path(), "8m", "4k", &["--qd", "1", "--refill-buffers"]);
    assert_eq!(distinct_blocks_percent(&data), 100.0);
    assert!(compressed_away_percent(&data) < 1.0);
}

#[test]
fn reads_never_leak_into_writes() {
    let dir = disk_tempdir();
    let path = dir.path().join("f.dat");
    // Every block starts with its own number, so any block read and written elsewhere shows.
    let mut original = vec![0u8; 8 << 20];
    for (index, block) in original.chunks_mut(4096).enumerate() {
        block.fill(0x5a);
        block[..8].copy_from_slice(&(index as u64 + 1).to_le_bytes());
    }
    std::fs::write(&path, &original).unwrap();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--bytes",
            "16m",
            "--zero-buffers",
            "--allow-destructive",
        ],
    );
    run.expect_status(0);
    let data = std::fs::read(&path).unwrap();
    let mut zeroed = 0;
    for (index, (after, before)) in data.chunks(4096).zip(original.chunks(4096)).enumerate() {
        if after.iter().all(|b| *b == 0) {
            zeroed += 1;
        } else {
            assert_eq!(after, before, "block {index} holds data read elsewhere");
        }
    }
    assert!(zeroed > 100, "{zeroed} blocks written");
}

#[test]
fn bad_data_flags_are_refused_before_any_io() {
    let dir = disk_tempdir();
    for (args, expected) in [
        (vec!["--compress-pct", "101"], "percentage"),
        (vec!["--buffer-pattern", "0x"], "hex digits"),
        (vec!["--dedupe-mode", "often"], "repeat or working_set"),
        (
            vec!["--compress-pct", "100", "--dedupe-pct", "10"],
            "incompressible",
        ),
        (vec!["--rw", "read", "--zero-buffers"], "only reads"),
        (vec!["--refill-buffers=maybe"], "true or false"),
    ] {
        let mut all = vec!["f.dat", "--size", "1m"];
        if !args.contains(&"--rw") {
            all.extend(["--rw", "write"]);
        }
        all.extend(args.iter());
        let run = run_in(dir.path(), &all);
        run.expect_status(2);
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
        assert!(!dir.path().join("f.dat").exists(), "{args:?} wrote");
    }
}

/// A job file with one job per kind of data, each writing its own 4 MiB file once.
const DATA_JOBS: &str = "\
[global]
rw=write
bs=4k
size=4m
direct=1
ioengine=psync
[compress]
filename=compress.dat
buffer_compress_percentage=75
[dedupe]
stonewall
filename=dedupe.dat
dedupe_percentage=50
[pattern]
stonewall
filename=pattern.dat
buffer_pattern=0xdeadface\"ab\"
[zero]
stonewall
filename=zero.dat
zero_buffers
";

fn check_data_files(dir: &Path, writer: &str) {
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    assert_near(
        compressed_away_percent(&read("compress.dat")),
        75.0,
        &format!("{writer}: buffer_compress_percentage=75"),
    );
    assert_near(
        distinct_blocks_percent(&read("dedupe.dat")),
        50.0,
        &format!("{writer}: dedupe_percentage=50"),
    );
    assert_pattern(
        &read("pattern.dat"),
        &[0xde, 0xad, 0xfa, 0xce, b'a', b'b'],
        4096,
    );
    assert!(read("zero.dat").iter().all(|b| *b == 0), "{writer}: zeros");
}

#[test]
fn a_fio_job_file_writes_the_data_it_asks_for() {
    let dir = disk_tempdir();
    std::fs::write(dir.path().join("data.fio"), DATA_JOBS).unwrap();
    let run = run_in(dir.path(), &["--job", "data.fio"]);
    run.expect_status(0);
    check_data_files(dir.path(), "iopath");
    let json = run.json();
    assert_eq!(
        at(
            json,
            &[
                "tests",
                "1",
                "jobs",
                "0",
                "workload",
                "write_data",
                "dedupe_percent"
            ]
        ),
        50
    );
}

#[test]
fn fio_itself_writes_data_that_measures_the_same() {
    let dir = disk_tempdir();
    std::fs::write(dir.path().join("data.fio"), DATA_JOBS).unwrap();
    if !crate::support::devices::fio_ran(dir.path(), "data.fio") {
        return;
    }
    check_data_files(dir.path(), "fio");
}
