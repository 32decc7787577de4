//! I/O logs both ways, against fio itself: a log iopath records (`write_iolog`) replays in fio
//! and in iopath with the same I/O count, and a log fio records replays in iopath at the same
//! offsets in the same order. Also: `iopath run --replay`, and bad logs refused before any I/O.

use super::support;
use super::support::scratch::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A job that writes sequentially for a short time and records what it issued.
const RECORD_JOB: &str = "[record]\nrw=write\nbs=4k\nioengine=libaio\niodepth=8\nsize=1m\n\
                          time_based=1\nruntime=300ms\nfilename=data\nwrite_iolog=iolog\n";

/// A job that replays `iolog` onto the same file.
const REPLAY_JOB: &str = "[replay]\nrw=read\nioengine=libaio\niodepth=32\nfilename=data\n\
                          read_iolog=iolog\n";

/// A fresh scratch directory for the case `name`.
pub(super) fn scratch(name: &str) -> Scratch {
    Scratch::fresh(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolog-replay"),
        name,
    )
}

/// Runs the binary in `dir` with `args` (and no history).
pub(super) fn iopath(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(dir)
        .args(args)
        .args(["--no-history"])
        .output()
        .expect("iopath runs")
}

/// Runs the binary in `dir` with exactly `args`.
pub(super) fn iopath_as_given(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("iopath runs")
}

/// fio's run of `replay.fio` in `dir`, with fio-format JSON on standard output; it succeeded.
pub(super) fn fio_replay_json(fio: &Path, dir: &Path) -> Output {
    fio_json(fio, dir, "replay.fio")
}

/// fio's run of the job file `job` in `dir`, with fio-format JSON on standard output; it
/// succeeded.
pub(super) fn fio_json(fio: &Path, dir: &Path, job: &str) -> Output {
    let by_fio = Command::new(fio)
        .current_dir(dir)
        .args(["--output-format=json", job])
        .output()
        .unwrap();
    assert!(by_fio.status.success(), "{by_fio:?}");
    by_fio
}

/// fio, or `None` after skipping the test.
pub(super) fn fio() -> Option<PathBuf> {
    let fio = PathBuf::from("/usr/bin/fio");
    support::skip::require(fio.is_file(), "fio (apt-get install fio)").then_some(fio)
}

/// I/O count and bytes of each direction of the first job of fio-format JSON (`read`, `write`).
fn counts(json: &[u8]) -> [(u64, u64); 2] {
    let text = String::from_utf8_lossy(json);
    let start = text.find('{').expect("JSON on standard output");
    let value: serde_json::Value = serde_json::from_str(&text[start..]).expect("fio JSON");
    let job = &value["jobs"][0];
    ["read", "write"].map(|direction| {
        (
            job[direction]["total_ios"].as_u64().unwrap(),
            job[direction]["io_bytes"].as_u64().unwrap(),
        )
    })
}

/// The I/O lines of a log: (action, offset, length).
fn logged_ios(log: &str) -> Vec<(String, u64, u64)> {
    log.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let rest = match fields.first() {
                Some(first) if first.bytes().all(|b| b.is_ascii_digit()) => &fields[1..],
                _ => &fields[..],
            };
            match rest {
                [_, action, offset, length] if *action != "wait" => Some((
                    action.to_string(),
                    offset.parse().unwrap(),
                    length.parse().unwrap(),
                )),
                _ => None,
            }
        })
        .collect()
}

/// Runs `replay.fio` in `dir` (writes allowed) and returns the I/Os it issued, from
/// `--trace-io` (direction, offset, length, target), and what it printed on standard error.
pub(super) fn replay_traced(dir: &Path) -> (Vec<(String, u64, u64, u32)>, String) {
    let _ = std::fs::remove_file(dir.join("trace.csv"));
    let args = [
        "run",
        "--job",
        "replay.fio",
        "--trace-io",
        "trace.csv",
        "--allow-destructive",
    ];
    let replayed = iopath(dir, &args);
    assert_clean(&replayed, "iopath's replay");
    let trace = std::fs::read_to_string(dir.join("trace.csv")).unwrap();
    let issued = trace
        .lines()
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            (
                fields[2].to_string(),
                fields[3].parse().unwrap(),
                fields[4].parse().unwrap(),
                fields[5].parse().unwrap(),
            )
        })
        .collect();
    (
        issued,
        String::from_utf8_lossy(&replayed.stderr).into_owned(),
    )
}

/// Asserts that a run succeeded without an error or a warning.
fn assert_clean(output: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && !stderr.contains("error:") && !stderr.contains("warning:"),
        "{what}: {:?}\n{stderr}",
        output.status
    );
}

#[test]
fn a_log_iopath_records_replays_in_fio_and_in_iopath_with_the_same_ios() {
    let Some(fio) = fio() else { return };
    let scratch = scratch("iopath-recorded");
    let dir = scratch.path();
    std::fs::write(dir.join("record.fio"), RECORD_JOB).unwrap();
    std::fs::write(dir.join("replay.fio"), REPLAY_JOB).unwrap();
    let recorded = iopath(
        dir,
        &["run", "--job", "record.fio", "--output-format", "json"],
    );
    assert_clean(&recorded, "recording");
    let log = std::fs::read_to_string(dir.join("iolog")).unwrap();
    assert!(log.starts_with("fio version 3 iolog\n"), "{log:.200}");
    let ios = logged_ios(&log);
    let recorded_writes = counts(&recorded.stdout)[1];
    assert_eq!(ios.len() as u64, recorded_writes.0, "every write is logged");
    let log_bytes: u64 = ios.iter().map(|io| io.2).sum();
    assert_eq!(log_bytes, recorded_writes.1);
    assert!(ios.len() > 10, "{} I/Os recorded", ios.len());

    let replayed = iopath(
        dir,
        &["run", "--job", "replay.fio", "--output-format", "json"],
    );
    assert_clean(&replayed, "iopath's replay");
    assert_eq!(
        counts(&replayed.stdout),
        [(0, 0), recorded_writes],
        "iopath replays the writes it recorded, not the job's reads"
    );

    let by_fio = fio_replay_json(&fio, dir);
    let [fio_reads, fio_writes] = counts(&by_fio.stdout);
    assert_eq!(fio_reads.0, 0);
    assert_eq!(
        fio_writes.0, recorded_writes.0,
        "fio replays as many writes"
    );

    // A second recording to the same log is refused before any I/O: the log is not replaced.
    let again = iopath(dir, &["run", "--job", "record.fio"]);
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("write_iolog=iolog: the file exists"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("iolog")).unwrap(), log);
}

#[test]
fn a_log_fio_records_replays_in_iopath_at_the_same_offsets() {
    let Some(fio) = fio() else { return };
    let scratch = scratch("fio-recorded");
    let dir = scratch.path();
    let job = "[record]\nrw=randrw\nbs=4k\nioengine=psync\nsize=256k\nnumber_ios=64\n\
               filename=data\nwrite_iolog=iolog\nrandseed=7\n";
    std::fs::write(dir.join("record.fio"), job).unwrap();
    let by_fio = Command::new(fio)
        .current_dir(dir)
        .args(["record.fio"])
        .output()
        .unwrap();
    assert!(by_fio.status.success(), "{by_fio:?}");
    let log = std::fs::read_to_string(dir.join("iolog")).unwrap();
    let logged = logged_ios(&log);
    assert!(logged.len() >= 32, "{log}");
    std::fs::write(
        dir.join("replay.fio"),
        "[replay]\nioengine=psync\nread_iolog=iolog\nreplay_no_stall=1\n",
    )
    .unwrap();
    // fio made the file: writing it needs the flag, as for any file iopath did not create.
    let issued: Vec<(String, u64, u64)> = replay_traced(dir)
        .0
        .into_iter()
        .map(|(direction, offset, length, _)| (direction, offset, length))
        .collect();
    assert_eq!(issued, logged, "iopath issues fio's log as logged");
}

#[test]
fn the_replay_flag_runs_a_log_and_bad_logs_are_refused_with_their_line() {
    let scratch = scratch("flag");
    let dir = scratch.path();
    std::fs::write(
        dir.join("log"),
        "fio version 2 iolog\nfile add\nfile open\nfile write 0 8192\nfile wait 2000 0\n\
         file read 0 4096\nfile close\n",
    )
    .unwrap();
    let replayed = iopath(dir, &["run", "--replay", "log", "--output-format", "json"]);
    assert_clean(&replayed, "--replay");
    assert_eq!(counts(&replayed.stdout), [(1, 4096), (1, 8192)]);
    assert!(dir.join("file").is_file(), "the log's file was created");
    // The flag names one log, whatever its name holds (':' lists clones' logs in read_iolog).
    std::fs::copy(dir.join("log"), dir.join("a:log")).unwrap();
    let replayed = iopath(
        dir,
        &["run", "--replay", "a:log", "--output-format", "json"],
    );
    assert_clean(&replayed, "--replay a:log");
    assert_eq!(counts(&replayed.stdout), [(1, 4096), (1, 8192)]);

    std::fs::write(
        dir.join("bad"),
        "fio version 2 iolog\nfile add\nfile open\nfile write 0 x\n",
    )
    .unwrap();
    std::fs::write(dir.join("bad.fio"), "[bad]\nread_iolog=bad\n").unwrap();
    for args in [
        &["run", "--replay", "bad"][..],
        &["run", "--job", "bad.fio"][..],
    ] {
        let refused = iopath(dir, args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("line 4"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_replaying_job_is_refused_by_job_convert_rather_than_converted_without_its_log() {
    let scratch = scratch("convert");
    let dir = scratch.path();
    std::fs::write(
        dir.join("log"),
        "fio version 2 iolog\nfile add\nfile open\nfile write 0 8192\nfile close\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("replay.fio"),
        "[plain]\nrw=read\nsize=1m\nfilename=other\n[replay]\nread_iolog=log\n",
    )
    .unwrap();
    let converted = iopath_as_given(dir, &["job", "convert", "replay.fio"]);
    let stderr = String::from_utf8_lossy(&converted.stderr);
    assert_eq!(converted.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("replay.fio: job(s) 'replay' replay an I/O log"),
        "{stderr}"
    );
    assert!(converted.stdout.is_empty(), "no TOML is written");
}

/// I/O counts of reads and writes over every job of fio-format JSON.
fn total_counts(json: &[u8]) -> (u64, u64) {
    let text = String::from_utf8_lossy(json);
    let start = text.find('{').expect("JSON on standard output");
    let value: serde_json::Value = serde_json::from_str(&text[start..]).expect("fio JSON");
    let jobs = value["jobs"].as_array().expect("jobs");
    let sum = |direction: &str| {
        jobs.iter()
            .map(|job| job[direction]["total_ios"].as_u64().unwrap())
            .sum()
    };
    (sum("read"), sum("write"))
}

#[test]
fn each_clone_replays_the_whole_log_and_loops_do_not_repeat_it_as_in_fio() {
    let Some(fio) = fio() else { return };
    let scratch = scratch("clones");
    let dir = scratch.path();
    std::fs::write(
        dir.join("log"),
        "fio version 2 iolog\ndata add\ndata open\ndata write 0 4096\ndata write 4096 4096\n\
         data read 0 4096\ndata close\n",
    )
    .unwrap();
    for (extra, expected) in [("numjobs=3\n", (3, 6)), ("loops=3\n", (1, 2))] {
        let job = format!("[replay]\nioengine=psync\nread_iolog=log\n{extra}");
        std::fs::write(dir.join("replay.fio"), job).unwrap();
        let _ = std::fs::remove_file(dir.join("data"));
        let replayed = iopath(
            dir,
            &["run", "--job", "replay.fio", "--output-format", "json"],
        );
        assert_clean(&replayed, extra);
        assert_eq!(total_counts(&replayed.stdout), expected, "iopath, {extra}");
        let by_fio = fio_replay_json(&fio, dir);
        assert_eq!(total_counts(&by_fio.stdout), expected, "fio, {extra}");
    }
}

#[test]
fn a_list_of_logs_gives_the_first_to_a_single_clone() {
    let scratch = scratch("log-list");
    let dir = scratch.path();
    std::fs::write(
        dir.join("a"),
        "fio version 2 iolog\ndata add\ndata open\ndata write 0 4096\ndata close\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b:c"),
        "fio version 2 iolog\ndata add\ndata open\ndata write 0 4096\n\
         data write 4096 4096\ndata read 0 4096\ndata close\n",
    )
    .unwrap();
    // fio: clone i replays log i of the list; one clone, the first log ('\\:' escapes a colon).
    for (list, expected) in [("a:b\\:c", (0, 1)), ("b\\:c:a", (1, 2))] {
        let job = format!("[replay]\nioengine=null\nread_iolog={list}\n");
        std::fs::write(dir.join("replay.fio"), job).unwrap();
        let replayed = iopath(
            dir,
            &["run", "--job", "replay.fio", "--output-format", "json"],
        );
        assert_clean(&replayed, list);
        assert_eq!(total_counts(&replayed.stdout), expected, "{list}");
    }
    for (job, wanted) in [
        ("read_iolog=::\n", "names no log"),
        ("read_iolog=a:missing\nnumjobs=1\n", "missing"),
    ] {
        let text = format!("[replay]\nioengine=null\n{job}");
        std::fs::write(dir.join("bad.fio"), text).unwrap();
        for command in ["check", "run"] {
            let args: &[&str] = if command == "check" {
                &["job", "check", "bad.fio"]
            } else {
                &["run", "--job", "bad.fio"]
            };
            let refused = iopath_as_given(dir, args);
            let stderr = String::from_utf8_lossy(&refused.stderr);
            if wanted == "missing" {
                // The second log is for a second clone: never read, the job runs.
                assert_eq!(refused.status.code(), Some(0), "{job}: {stderr}");
                continue;
            }
            assert_eq!(refused.status.code(), Some(2), "{job} {command}: {stderr}");
            assert!(stderr.contains(wanted), "{job} {command}: {stderr}");
        }
    }
}
