//! How a file iopath creates is laid out, as fio lays files out: filled with incompressible data
//! when a test reads it (or with `--overwrite` / `overwrite=1`), only sized when the tests only
//! write it — `fallocate` by default, or as `--fallocate` / `fallocate=` says — so that the
//! writes put the data in. Asserted on the file itself: what it holds past the writes, its
//! length and its allocated blocks.

use crate::common::*;
use crate::support::devices::allocated_blocks;
use std::path::Path;

const FILE_BYTES: u64 = 64 << 20;
const WRITTEN_BYTES: u64 = 4 << 20;

/// Runs a sequential job of `rw` over the first 4 MiB of a new 64 MiB `new.dat` in `dir`, with
/// `extra` flags; returns the run.
fn first_megabytes(dir: &Path, rw: &str, extra: &[&str]) -> RunOutput {
    let _ = std::fs::remove_file(dir.join("new.dat"));
    let run = run_in(
        dir,
        &[
            &[
                "new.dat",
                "--size",
                "64m",
                "--rw",
                rw,
                "--bs",
                "1m",
                "--bytes",
                "4m",
                "--ramp",
                "0",
                "--engine",
                "sync",
                "--no-history",
            ][..],
            extra,
        ]
        .concat(),
    );
    run.expect_status(0);
    run
}

/// The kinds of the trust notes of the run's first test.
fn note_kinds(run: &RunOutput) -> Vec<String> {
    at(run.json(), &["tests", "0", "analysis", "trust_notes"])
        .as_array()
        .unwrap()
        .iter()
        .map(|note| note["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Whether every byte of `path` past the first 4 MiB (what the job moved) is zero.
fn zero_past_the_writes(path: &Path) -> bool {
    let data = std::fs::read(path).unwrap();
    assert!(data.len() as u64 > WRITTEN_BYTES);
    data[WRITTEN_BYTES as usize..].iter().all(|byte| *byte == 0)
}

#[test]
fn a_write_job_on_a_new_file_sizes_it_and_writes_no_layout() {
    let dir = disk_tempdir();
    let path = dir.path().join("new.dat");
    let run = first_megabytes(dir.path(), "write", &[]);
    assert!(
        run.stderr.contains(
            "creating new.dat (64 MiB, sized with fallocate, no data written: no job reads it first"
        ),
        "{}",
        run.stderr
    );
    // The writes are all the file holds: fallocate reserved the rest and wrote nothing.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), FILE_BYTES);
    assert!(zero_past_the_writes(&path));
    assert!(
        allocated_blocks(&path) * 512 >= FILE_BYTES,
        "blocks reserved"
    );
    assert_eq!(
        u64_at(run.json(), &["tests", "0", "write", "bytes"]),
        WRITTEN_BYTES
    );
    let target = at(run.json(), &["targets", "0"]);
    assert_eq!(
        target["created_content"],
        serde_json::json!({ "sized": { "preallocation": "native" } }),
        "{target}"
    );
    // The writes were first writes, and the analysis says so.
    assert!(
        note_kinds(&run).contains(&"first_writes".to_string()),
        "{}",
        run.stderr
    );
    let hop = at(run.json(), &["paths", "0", "hops", "0", "description"]);
    assert!(
        hop.as_str()
            .unwrap()
            .contains("created by iopath, sized with fallocate, no data written before the run"),
        "{hop}"
    );

    // A read job reads what was laid out: the whole file holds incompressible data.
    let run = first_megabytes(dir.path(), "read", &[]);
    assert!(
        run.stderr
            .contains("creating new.dat (64 MiB of incompressible data)"),
        "{}",
        run.stderr
    );
    assert!(!zero_past_the_writes(&path));
    let target = at(run.json(), &["targets", "0"]);
    assert_eq!(target["created_content"], "filled", "{target}");

    // Reads and writes in one job (randrw) read the layout too.
    first_megabytes(dir.path(), "randrw", &[]);
    assert!(!zero_past_the_writes(&path));

    // --overwrite fills the file for a job that only writes it (fio's overwrite=1).
    let run = first_megabytes(dir.path(), "write", &["--overwrite"]);
    assert!(!zero_past_the_writes(&path));
    assert!(!note_kinds(&run).contains(&"first_writes".to_string()));
}

#[test]
fn fallocate_says_how_a_file_only_written_is_sized() {
    let dir = disk_tempdir();
    let path = dir.path().join("new.dat");
    // truncate: the full length, sparse: only the written blocks are allocated.
    first_megabytes(dir.path(), "write", &["--fallocate", "truncate"]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), FILE_BYTES);
    assert!(allocated_blocks(&path) * 512 < FILE_BYTES / 2, "sparse");
    assert!(zero_past_the_writes(&path));
    // none: empty, the writes extend it.
    let run = first_megabytes(dir.path(), "write", &["--fallocate", "none"]);
    assert!(
        run.stderr.contains("created empty, no data written"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), WRITTEN_BYTES);
    // keep: blocks reserved, the size left to the writes.
    first_megabytes(dir.path(), "write", &["--fallocate", "keep"]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), WRITTEN_BYTES);
    assert!(
        allocated_blocks(&path) * 512 >= FILE_BYTES,
        "blocks reserved"
    );
    // A mode fio does not have is refused before any I/O.
    let run = plain_in(
        dir.path(),
        &[
            "run",
            "other.dat",
            "--size",
            "1m",
            "--rw",
            "write",
            "--fallocate",
            "sparse",
        ],
    );
    run.expect_status(2);
    assert!(run.stderr.contains("sparse"), "{}", run.stderr);
    assert!(!dir.path().join("other.dat").exists());
}

#[test]
fn a_fio_job_lays_out_its_file_as_fio_does() {
    let dir = disk_tempdir();
    let job = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let common = "[global]\nioengine=psync\nsize=64m\nio_size=4m\nbs=1m\n";
    let run_job = |file: &Path| {
        let run = plain_in(
            dir.path(),
            &["run", "--job", file.to_str().unwrap(), "--no-history"],
        );
        run.expect_status(0);
        run
    };
    // A write job: sized, its writes are all there is; the check says so beforehand.
    let writer = job("w.fio", &format!("{common}[w]\nrw=write\nfilename=w.dat\n"));
    let check = plain_in(dir.path(), &["job", "check", writer.to_str().unwrap()]);
    check.expect_status(0);
    assert!(
        check.stdout.contains("w.dat (will be created, ")
            && check
                .stdout
                .contains(", sized with fallocate, no data written)"),
        "{}",
        check.stdout
    );
    run_job(&writer);
    assert!(zero_past_the_writes(&dir.path().join("w.dat")));
    // overwrite=1 and a read job: laid out.
    let overwriter = job(
        "o.fio",
        &format!("{common}[o]\nrw=write\noverwrite=1\nfilename=o.dat\n"),
    );
    run_job(&overwriter);
    assert!(!zero_past_the_writes(&dir.path().join("o.dat")));
    let reader = job("r.fio", &format!("{common}[r]\nrw=read\nfilename=r.dat\n"));
    run_job(&reader);
    assert!(!zero_past_the_writes(&dir.path().join("r.dat")));
    // fallocate=truncate: sparse.
    let sparse = job(
        "t.fio",
        &format!("{common}[t]\nrw=write\nfallocate=truncate\nfilename=t.dat\n"),
    );
    run_job(&sparse);
    assert!(allocated_blocks(&dir.path().join("t.dat")) * 512 < FILE_BYTES / 2);
    // A writer then a reader of the same file (two tests): laid out for the first job, the
    // writer, as fio does; the reader reads what the writes left, and the run says so.
    let both = job(
        "b.fio",
        &format!(
            "{common}[w]\nrw=write\nfilename=b.dat\n[r]\nstonewall\nrw=read\nfilename=b.dat\n"
        ),
    );
    let run = run_job(&both);
    assert!(zero_past_the_writes(&dir.path().join("b.dat")));
    assert!(
        run.stderr
            .contains("job 'r' reads b.dat, which the first job using it only sizes"),
        "{}",
        run.stderr
    );
    // A reader then a writer: filled for the reader.
    let reader_first = job(
        "rw.fio",
        &format!(
            "{common}[r]\nrw=read\nfilename=rw.dat\n[w]\nstonewall\nrw=write\nfilename=rw.dat\n"
        ),
    );
    let run = run_job(&reader_first);
    assert!(!zero_past_the_writes(&dir.path().join("rw.dat")));
    assert!(!run.stderr.contains("only sizes"), "{}", run.stderr);
}
