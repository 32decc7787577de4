//! The file-operation engines (`--engine filecreate`, `filestat`, `filedelete`, `dircreate`,
//! `dirstat`, `dirdelete` with `--files N`): one operation per file and pass, counted as I/Os
//! of no bytes, and a removal only of what iopath made — anything else is refused before any
//! I/O, and stays.

use crate::common::*;
use std::path::Path;

/// Runs `iopath run --engine ENGINE --files N dir/f` in `dir` and returns the job's read
/// counts: operations, bytes, errors.
fn counts(dir: &Path, engine: &str, files: u32) -> (u64, u64, u64) {
    let files = files.to_string();
    let run = run_in(
        dir,
        &["--engine", engine, "--files", &files, "d/f", "--no-history"],
    );
    run.expect_status(0);
    let job = at(run.json(), &["tests", "0", "jobs", "0"]);
    assert_eq!(at(job, &["engine", "name"]), engine, "{job}");
    (
        u64_at(job, &["read", "io_count"]),
        u64_at(job, &["read", "bytes"]),
        u64_at(job, &["errors", "count"]),
    )
}

fn entries(dir: &Path) -> Vec<std::fs::Metadata> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().metadata().unwrap())
        .collect()
}

#[test]
fn each_file_engine_does_one_operation_per_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let files = dir.path().join("d");
    std::fs::create_dir(&files).unwrap();
    assert_eq!(counts(dir.path(), "filecreate", 300), (300, 0, 0));
    let made = entries(&files);
    assert_eq!(made.len(), 300);
    assert!(made.iter().all(|found| found.is_file() && found.len() == 0));
    assert_eq!(counts(dir.path(), "filestat", 300), (300, 0, 0));
    assert_eq!(entries(&files).len(), 300);
    // The files filecreate made are iopath's: filedelete removes them.
    assert_eq!(counts(dir.path(), "filedelete", 300), (300, 0, 0));
    assert!(entries(&files).is_empty());
}

#[test]
fn each_directory_engine_does_one_operation_per_directory() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let files = dir.path().join("d");
    std::fs::create_dir(&files).unwrap();
    assert_eq!(counts(dir.path(), "dircreate", 40), (40, 0, 0));
    let made = entries(&files);
    assert_eq!(made.len(), 40);
    assert!(made.iter().all(std::fs::Metadata::is_dir));
    assert_eq!(counts(dir.path(), "dirstat", 40), (40, 0, 0));
    std::fs::remove_dir_all(&files).unwrap();
    std::fs::create_dir(&files).unwrap();
    // dirstat and dirdelete find their directories made before the run, as in fio.
    assert_eq!(counts(dir.path(), "dirdelete", 40), (40, 0, 0));
    assert!(entries(&files).is_empty());
}

#[test]
fn removing_what_iopath_did_not_make_is_refused_before_any_io() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let files = dir.path().join("d");
    std::fs::create_dir(&files).unwrap();
    write_foreign_file(&files.join("f.1"), 100);
    let run = run_in(
        dir.path(),
        &[
            "--engine",
            "filedelete",
            "--files",
            "3",
            "d/f",
            "--no-history",
        ],
    );
    run.expect_status(2);
    assert!(
        run.stderr
            .contains("d/f.1: filedelete: refusing to remove a file iopath did not create"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::metadata(files.join("f.1")).unwrap().len(), 100);
    // Nothing was laid out for the other two either.
    assert_eq!(list_dir(&files), ["f.1"]);

    std::fs::create_dir(files.join("g.0")).unwrap();
    let job = "[t]\nioengine=dirdelete\nfilesize=4k\nfilename=d/g.0\n";
    std::fs::write(dir.path().join("rm.fio"), job).unwrap();
    let run = run_in(dir.path(), &["--job", "rm.fio", "--no-history"]);
    run.expect_status(2);
    assert!(
        run.stderr
            .contains("d/g.0: dirdelete: refusing to remove a directory that existed"),
        "{}",
        run.stderr
    );
    assert!(files.join("g.0").is_dir());
}

#[test]
fn a_job_file_of_the_file_engines_counts_each_jobs_files() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let job = "[global]\nfilesize=4k\nnrfiles=25\n\
               [create]\nioengine=filecreate\ncreate_on_open=1\nopenfiles=1\n\
               [stat]\nioengine=filestat\nstat_type=statx\nnumjobs=2\n\
               [delete]\nioengine=filedelete\nunlink=0\n\
               [dirs]\nioengine=dircreate\n";
    std::fs::write(dir.path().join("files.fio"), job).unwrap();
    let run = run_in(dir.path(), &["--job", "files.fio", "--no-history"]);
    run.expect_status(0);
    let jobs = at(run.json(), &["tests", "0", "jobs"]).as_array().unwrap();
    let found: Vec<(String, u64, u64)> = jobs
        .iter()
        .map(|job| {
            (
                job["name"].as_str().unwrap().to_string(),
                u64_at(job, &["read", "io_count"]),
                u64_at(job, &["read", "bytes"]),
            )
        })
        .collect();
    let expected = [("create", 25), ("stat", 50), ("delete", 25), ("dirs", 25)]
        .map(|(name, count)| (name.to_string(), count, 0));
    assert_eq!(found, expected);
    assert_eq!(
        at(&jobs[1], &["workload", "handling", "stat_call"]),
        "statx"
    );
    let names = list_dir(dir.path());
    let count = |prefix: &str| names.iter().filter(|n| n.starts_with(prefix)).count();
    assert_eq!(
        (
            count("create."),
            count("stat."),
            count("delete."),
            count("dirs.")
        ),
        (25, 50, 0, 25)
    );
}

#[test]
fn metadata_operations_get_no_page_cache_or_working_set_notes() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // A fio job file: buffered (fio's direct=0), as fio's examples of these engines run.
    let job = "[global]\nfilesize=4k\nnrfiles=200\n\
               [create]\nioengine=filecreate\n[stat]\nstonewall\nioengine=filestat\n";
    std::fs::write(dir.path().join("files.fio"), job).unwrap();
    let run = run_in(dir.path(), &["--job", "files.fio", "--no-history"]);
    run.expect_status(0);
    // A create or a look-up moves no data: no page cache between it and a device to warn of,
    // and no working set that reads could find in memory.
    for test in at(run.json(), &["tests"]).as_array().unwrap() {
        assert_eq!(u64_at(test, &["total", "io_count"]), 200, "{test}");
        let notes = at(test, &["analysis", "trust_notes"]);
        let kinds: Vec<&str> = notes
            .as_array()
            .unwrap()
            .iter()
            .map(|note| note["kind"].as_str().unwrap())
            .collect();
        assert!(
            !kinds.contains(&"buffered_io") && !kinds.contains(&"working_set_in_memory"),
            "{notes}"
        );
    }
    assert!(!run.stderr.contains("buffered I/O"), "{}", run.stderr);
    assert!(!run.stderr.contains("working set"), "{}", run.stderr);
}
