//! fio's error policies (`continue_on_error`, `ignore_error`, `exitall_on_error`) against real
//! faults: nbdkit's error filter fails reads or writes with the errno asked for, and a small
//! tmpfs runs out of space (ENOSPC). Errors are counted by kind and errno in the result and
//! the text output.

use crate::common::*;
use serde_json::Value;

/// Runs the fio job `job` (its `[global]` says ioengine=nbd) for `seconds` against an nbdkit
/// whose memory disk sits behind the error filter with `filter_args`.
fn run_against_faulty_server(filter_args: &[&str], job: &str, seconds: &str) -> RunOutput {
    let server_dir = tempfile::tempdir().unwrap();
    let mut args = vec!["--filter=error", "memory", "64M"];
    args.extend_from_slice(filter_args);
    let server = Nbdkit::start(server_dir.path(), &args);
    let dir = disk_tempdir();
    std::fs::write(
        dir.path().join("job.fio"),
        format!("[global]\nioengine=nbd\niodepth=4\nbs=4k\n{job}"),
    )
    .unwrap();
    run_in(
        dir.path(),
        &[
            "--job",
            "job.fio",
            &server.url(),
            "--allow-destructive",
            "--duration",
            seconds,
            "--ramp",
            "0",
        ],
    )
}

/// The `errors.by_kind` rows of test `test` as (kind, errno name, count, continued).
fn by_kind(json: &Value, test: usize) -> Vec<(String, String, u64, u64)> {
    json["tests"][test]["errors"]["by_kind"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|row| {
                    (
                        row["kind"].as_str().unwrap().to_string(),
                        row["name"].as_str().unwrap().to_string(),
                        row["count"].as_u64().unwrap(),
                        row["continued"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn continue_on_error_goes_on_after_the_kinds_it_names_and_eio_only() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let reads_fail = ["error-pread=EIO", "error-pread-rate=5%"];
    // Read errors (EIO) with continue_on_error=read, io, all or 1: the job runs its time.
    for value in ["read", "io", "all", "1"] {
        let run = run_against_faulty_server(
            &reads_fail,
            &format!("[r]\nrw=randread\ncontinue_on_error={value}\n"),
            "0.5",
        );
        assert_eq!(run.status, 0, "{value}: {}", run.stderr);
        let json = run.json();
        assert_eq!(json["tests"][0]["stop_reason"], "completed", "{value}");
        let rows = by_kind(json, 0);
        let [(kind, name, count, continued)] = rows.as_slice() else {
            panic!("{value}: {rows:?}")
        };
        assert_eq!((kind.as_str(), name.as_str()), ("read", "EIO"));
        assert!(*count > 1, "{value}: {count}");
        assert_eq!(
            continued, count,
            "{value}: every read error was gone on after"
        );
        assert!(
            run.stdout.contains("by kind: read EIO"),
            "{value}: {}",
            run.stdout
        );
        assert!(u64_at(json, &["tests", "0", "total", "io_count"]) > *count);
    }
    // Kinds that do not cover reads, and none: the first read error ends the job.
    for value in ["none", "0", "write", "verify"] {
        let run = run_against_faulty_server(
            &reads_fail,
            &format!("[r]\nrw=randread\ncontinue_on_error={value}\n"),
            "2",
        );
        assert_eq!(run.status, 1, "{value}: {}", run.stderr);
        let json = run.json();
        assert_eq!(json["tests"][0]["stop_reason"], "error", "{value}");
        let rows = by_kind(json, 0);
        assert_eq!(rows.len(), 1, "{value}: {rows:?}");
        assert_eq!(rows[0].3, 0, "{value}: nothing was gone on after");
        assert!(u64_at(json, &["tests", "0", "measured_ns"]) < 2_000_000_000);
    }
}

#[test]
fn ignore_error_lists_replace_the_default_errnos_per_kind() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let writes_fail = ["error-pwrite=ENOSPC", "error-pwrite-rate=5%"];
    // ENOSPC is not among the errors continue_on_error goes on after by default.
    let run = run_against_faulty_server(
        &writes_fail,
        "[w]\nrw=randwrite\ncontinue_on_error=all\n",
        "2",
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    let rows = by_kind(run.json(), 0);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str()),
        ("write", "ENOSPC")
    );
    assert_eq!(rows[0].3, 0);
    // The write list names it (by name or number): the job goes on, and turns continuing on
    // for writes without continue_on_error.
    for list in ["ignore_error=,ENOSPC", "ignore_error=EIO,28:EDQUOT"] {
        let run =
            run_against_faulty_server(&writes_fail, &format!("[w]\nrw=randwrite\n{list}\n"), "0.5");
        assert_eq!(run.status, 0, "{list}: {}", run.stderr);
        let json = run.json();
        assert_eq!(json["tests"][0]["stop_reason"], "completed", "{list}");
        let rows = by_kind(json, 0);
        assert_eq!(rows.len(), 1, "{list}: {rows:?}");
        assert_eq!(rows[0].1, "ENOSPC");
        assert!(rows[0].2 > 1 && rows[0].3 == rows[0].2, "{list}: {rows:?}");
    }
    // A list for reads only leaves writes failing.
    let run = run_against_faulty_server(
        &writes_fail,
        "[w]\nrw=randwrite\nignore_error=ENOSPC\n",
        "2",
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    // An unknown name is refused before any I/O, naming the input.
    let run = run_against_faulty_server(
        &writes_fail,
        "[w]\nrw=randwrite\nignore_error=,ENOTHING\n",
        "2",
    );
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("ENOTHING") && run.stderr.contains("job.fio:7"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_error_ends_its_own_job_unless_exitall_on_error_ends_the_others() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    // One read in five fails (the reader ends within its first few I/Os, and the probe before
    // the run, which retries, gets its blocks); the writes of the other job succeed.
    let reads_fail = ["error-pread=EIO", "error-pread-rate=20%"];
    let two_jobs = "[bad]\nrw=randread\n[good]\nrw=randwrite\n";
    let measured = |json: &Value, job: usize| {
        u64_at(
            json,
            &["tests", "0", "jobs", &job.to_string(), "measured_ns"],
        )
    };

    // fio's default: the failing job ends; the other runs its whole time.
    let run = run_against_faulty_server(&reads_fail, two_jobs, "1");
    assert_eq!(run.status, 1, "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["tests"][0]["jobs"][0]["stop_reason"], "error");
    assert_eq!(json["tests"][0]["jobs"][1]["stop_reason"], "completed");
    let alone = measured(json, 1);
    assert!(alone >= 900_000_000, "the good job ran {alone} ns");

    // exitall_on_error: the failing job ends the other at once.
    let run = run_against_faulty_server(
        &reads_fail,
        "[bad]\nrw=randread\nexitall_on_error\n[good]\nrw=randwrite\n",
        "1",
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    let json = run.json();
    let ended = measured(json, 1);
    assert!(
        ended * 2 < alone,
        "with exitall_on_error the good job ran {ended} ns, alone {alone} ns"
    );
}

#[test]
fn a_full_filesystem_is_ignored_only_when_enospc_is_listed() {
    let dir = disk_tempdir();
    let point = dir.path().join("small");
    let Some(mount) = Mount::new(&["-t", "tmpfs", "-o", "size=4m", "tmpfs"], &point) else {
        return;
    };
    let file = mount.point.join("sparse.bin");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let run_job = |policy: &str| {
        std::fs::write(
            dir.path().join("fill.fio"),
            format!(
                "[fill]\nfilename={}\nrw=write\nbs=64k\n{policy}",
                file.display()
            ),
        )
        .unwrap();
        run_in(
            dir.path(),
            &[
                "--job",
                "fill.fio",
                "--allow-destructive",
                "--duration",
                "1",
                "--ramp",
                "0",
            ],
        )
    };
    let stopped = run_job("continue_on_error=write\n");
    assert_eq!(stopped.status, 1, "{}", stopped.stderr);
    let rows = by_kind(stopped.json(), 0);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str(), rows[0].3),
        ("write", "ENOSPC", 0)
    );

    let going_on = run_job("ignore_error=,ENOSPC\n");
    assert_eq!(going_on.status, 0, "{}", going_on.stderr);
    let json = going_on.json();
    assert_eq!(json["tests"][0]["stop_reason"], "completed");
    let rows = by_kind(json, 0);
    assert!(rows[0].2 > 1 && rows[0].2 == rows[0].3, "{rows:?}");
    assert!(
        going_on.stdout.contains("write ENOSPC"),
        "{}",
        going_on.stdout
    );
}

/// A job that reads the file `create_on_open` creates reads past what its writes laid out: fio's
/// io_uring and libaio engines complete such a read with no data (no error), its sync engines
/// fail it with `EIO` ("full resid"), which `continue_on_error=write` does not cover.
#[test]
fn reads_past_a_file_created_at_open_are_empty_on_io_uring_and_eio_on_sync() {
    let dir = disk_tempdir();
    let run_job = |engine: &str| {
        let _ = std::fs::remove_file(dir.path().join("grown.dat"));
        std::fs::write(
            dir.path().join("grow.fio"),
            format!(
                "[grow]\nioengine={engine}\nfilename=grown.dat\nsize=4m\nbs=4k\nrw=randrw\n\
                 create_on_open=1\ncontinue_on_error=write\nignore_error=,ENOSPC\n"
            ),
        )
        .unwrap();
        run_in(
            dir.path(),
            &["--job", "grow.fio", "--duration", "0.5", "--ramp", "0"],
        )
    };
    let uring = run_job("io_uring");
    assert_eq!(uring.status, 0, "{}", uring.stderr);
    let job = &uring.json()["tests"][0]["jobs"][0];
    let reads = job["read"]["io_count"].as_u64().unwrap();
    let read_bytes = job["read"]["bytes"].as_u64().unwrap();
    assert!(reads > 0, "{job}");
    assert!(
        read_bytes < reads * 4096,
        "some reads past the end got no data: {reads} reads, {read_bytes} bytes"
    );
    assert_eq!(job["errors"]["count"], 0, "{job}");

    let sync = run_job("psync");
    assert_eq!(sync.status, 1, "{}", sync.stderr);
    let rows = by_kind(sync.json(), 0);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str(), rows[0].3),
        ("read", "short", 0),
        "{rows:?}"
    );
}
