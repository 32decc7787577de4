//! `read_iolog=a:b` with `numjobs`: each clone replays its own log, clone i the i-th (modulo
//! the list's length), as fio does. Checked on the null engine and on files iopath creates,
//! worker by worker from `--trace-io`, against fio's per-clone counts where fio is installed;
//! `iopath job check` names which clone replays which log; lists longer than the clones leave
//! the rest unread; a log a clone needs that cannot be read is refused before any I/O; each
//! clone of a blktrace capture keeps its own capture's queue depth.

use super::iolog_replay::{fio, fio_replay_json, iopath, iopath_as_given, scratch};
use std::collections::BTreeMap;
use std::path::Path;

/// Log `a`: a write and a read of file `one`.
const LOG_A: &str = "fio version 2 iolog\none add\none open\none write 0 4096\n\
                     one read 0 4096\none close\n";

/// Log `b:c` (a colon in its name): three writes of file `two`, at its own pace.
const LOG_BC: &str = "fio version 3 iolog\n0 two add\n0 two open\n10 two write 8192 4096\n\
                      20 two write 0 4096\n30 two write 4096 8192\n40 two close\n";

/// One issued I/O: (direction, offset, length, file name).
type Issued = (String, u64, u64, String);

/// What each log issues, in order, as [`Issued`].
fn expected(log: &str, file: &str) -> Vec<Issued> {
    let mut ios = Vec::new();
    for line in log.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let rest = if fields.len() == 5 {
            &fields[1..]
        } else {
            &fields[..]
        };
        if let [name, action, offset, length] = rest {
            assert_eq!(*name, file);
            ios.push((
                action.to_string(),
                offset.parse().unwrap(),
                length.parse().unwrap(),
                file.to_string(),
            ));
        }
    }
    ios
}

/// Runs `replay.fio` in `dir` with `--trace-io` and `extra`; returns the trace and standard
/// error of the run, which succeeded without an error or a warning.
fn run_traced(dir: &Path, extra: &[&str]) -> (String, String) {
    let _ = std::fs::remove_file(dir.join("trace.csv"));
    let mut args = vec!["run", "--job", "replay.fio", "--trace-io", "trace.csv"];
    args.extend_from_slice(extra);
    let run = iopath(dir, &args);
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        run.status.success() && !stderr.contains("error:") && !stderr.contains("warning:"),
        "{:?}\n{stderr}",
        run.status
    );
    (
        std::fs::read_to_string(dir.join("trace.csv")).unwrap(),
        stderr,
    )
}

/// Runs `replay.fio` in `dir` with `--trace-io` and returns each worker's I/Os in order (the
/// target's number turned into its file name by `files`), and standard error.
fn traced_by_worker(dir: &Path, files: &[&str]) -> (BTreeMap<u32, Vec<Issued>>, String) {
    let (trace, stderr) = run_traced(dir, &[]);
    let mut workers: BTreeMap<u32, Vec<Issued>> = BTreeMap::new();
    for line in trace.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let target: usize = fields[5].parse().unwrap();
        workers
            .entry(fields[1].parse().unwrap())
            .or_default()
            .push((
                fields[2].to_string(),
                fields[3].parse().unwrap(),
                fields[4].parse().unwrap(),
                files[target].to_string(),
            ));
    }
    (workers, stderr)
}

/// (reads, writes) of every job of fio's JSON output, sorted.
fn per_job_counts(json: &[u8]) -> Vec<(u64, u64)> {
    let text = String::from_utf8_lossy(json);
    let start = text.find('{').expect("JSON on standard output");
    let value: serde_json::Value = serde_json::from_str(&text[start..]).expect("fio JSON");
    let mut counts: Vec<(u64, u64)> = value["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|job| {
            (
                job["read"]["total_ios"].as_u64().unwrap(),
                job["write"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect();
    counts.sort_unstable();
    counts
}

/// Writes the two logs into `dir`.
fn write_logs(dir: &Path) {
    std::fs::write(dir.join("a"), LOG_A).unwrap();
    std::fs::write(dir.join("b:c"), LOG_BC).unwrap();
}

#[test]
fn each_clone_replays_its_own_log_in_turn_as_in_fio() {
    let scratch = scratch("clone-logs");
    let dir = scratch.path();
    write_logs(dir);
    let from_a = expected(LOG_A, "one");
    let from_bc = expected(LOG_BC, "two");
    for engine in ["null", "psync"] {
        for file in ["one", "two"] {
            let _ = std::fs::remove_file(dir.join(file));
        }
        let job = format!("[replay]\nioengine={engine}\nread_iolog=a:b\\:c\nnumjobs=3\n");
        std::fs::write(dir.join("replay.fio"), &job).unwrap();
        let (workers, stderr) = traced_by_worker(dir, &["one", "two"]);
        let issued: Vec<&Vec<Issued>> = workers.values().collect();
        assert_eq!(
            issued,
            [&from_a, &from_bc, &from_a],
            "{engine}: clone i replays log i modulo 2\n{stderr}"
        );
        assert!(
            stderr.contains("clones 0, 2: a (a version 2 I/O log of 2 I/Os")
                && stderr.contains("clone 1: b:c (a version 3 I/O log of 3 I/Os"),
            "{stderr}"
        );
        if engine == "psync" {
            // The files are the logs', created as large as the logs' furthest I/O.
            for file in ["one", "two"] {
                assert_eq!(std::fs::metadata(dir.join(file)).unwrap().len(), 12288);
            }
        }
    }
    let check = iopath_as_given(dir, &["job", "check", "replay.fio"]);
    let said = String::from_utf8_lossy(&check.stderr);
    assert!(check.status.success(), "{said}");
    assert!(
        said.contains("its 3 clones (numjobs) replay the logs read_iolog lists in turn")
            && said.contains("clones 0, 2: a (")
            && said.contains("clone 1: b:c ("),
        "{said}"
    );
    let Some(fio) = fio() else { return };
    for file in ["one", "two"] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    let by_fio = fio_replay_json(&fio, dir);
    assert_eq!(
        per_job_counts(&by_fio.stdout),
        [(0, 3), (1, 1), (1, 1)],
        "fio's clones: a, b:c, a"
    );
}

#[test]
fn logs_past_the_last_clone_are_not_read_and_a_needed_log_is_refused_before_any_io() {
    let scratch = scratch("clone-logs-count");
    let dir = scratch.path();
    write_logs(dir);
    // Two clones, three logs: the third is for a clone the job does not have (never read).
    std::fs::write(
        dir.join("replay.fio"),
        "[replay]\nioengine=null\nread_iolog=b\\:c:a:missing\nnumjobs=2\n",
    )
    .unwrap();
    let (workers, stderr) = traced_by_worker(dir, &["two", "one"]);
    let issued: Vec<&Vec<Issued>> = workers.values().collect();
    assert_eq!(
        issued,
        [&expected(LOG_BC, "two"), &expected(LOG_A, "one")],
        "{stderr}"
    );
    assert!(
        stderr.contains("read_iolog lists 3 logs for 2 clone(s) (numjobs): missing not read"),
        "{stderr}"
    );
    for (job, wanted) in [
        ("read_iolog=a:missing\nnumjobs=2\n", "read_iolog=missing: "),
        ("read_iolog=::\nnumjobs=2\n", "read_iolog=::: names no log"),
        ("read_iolog=a:.\nnumjobs=3\n", "read_iolog=.: "),
    ] {
        let _ = std::fs::remove_file(dir.join("one"));
        let text = format!("[replay]\nioengine=psync\n{job}");
        std::fs::write(dir.join("bad.fio"), text).unwrap();
        for args in [
            &["job", "check", "bad.fio"][..],
            &["run", "--job", "bad.fio", "--no-history"][..],
        ] {
            let refused = iopath_as_given(dir, args);
            let stderr = String::from_utf8_lossy(&refused.stderr);
            assert_eq!(refused.status.code(), Some(2), "{job} {args:?}: {stderr}");
            assert!(stderr.contains(wanted), "{job} {args:?}: {stderr}");
            assert!(
                !dir.join("one").exists(),
                "nothing is created before the refusal"
            );
        }
    }
}

/// A capture of `bursts` bursts of `depth` 4 KiB reads, each burst completed before the next:
/// its queue is `depth` deep.
fn capture_of_depth(depth: usize, bursts: usize) -> Vec<u8> {
    use super::support::blktrace::{Event, READ, device, encode};
    let disk = device(8, 48);
    let mut events = Vec::new();
    let mut time_ns = 1_000_000;
    let mut sector = 0;
    for _ in 0..bursts {
        for _ in 0..depth {
            time_ns += 1_000;
            events.push(Event::io(time_ns, disk, READ, sector, 4096));
            sector += 8;
        }
        time_ns += 1_000;
        events.push(super::blktrace_merge::completion(time_ns, disk, READ));
    }
    encode(&events, false)
}

#[test]
fn each_clone_keeps_the_queue_depth_of_its_own_capture_as_in_fio() {
    let scratch = scratch("clone-depths");
    let dir = scratch.path();
    std::fs::write(dir.join("deep"), capture_of_depth(4, 64)).unwrap();
    std::fs::write(dir.join("shallow"), capture_of_depth(1, 256)).unwrap();
    std::fs::write(
        dir.join("replay.fio"),
        "[replay]\nioengine=io_uring\nread_iolog=deep:shallow\nnumjobs=2\n\
         replay_redirect=data\nreplay_no_stall=1\n",
    )
    .unwrap();
    let (trace, stderr) = run_traced(dir, &["--allow-destructive"]);
    assert!(
        stderr.contains("iodepth=4 from the captures: each clone at its own log's depth (4, 1)"),
        "{stderr}"
    );
    let mut deepest: BTreeMap<u32, u32> = BTreeMap::new();
    for line in trace.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let in_flight = fields[6].parse().unwrap();
        let worker = deepest.entry(fields[1].parse().unwrap()).or_default();
        *worker = (*worker).max(in_flight);
    }
    let deepest: Vec<u32> = deepest.into_values().collect();
    assert_eq!(deepest.len(), 2, "{trace}");
    assert!(
        (2..=4).contains(&deepest[0]),
        "the deep capture's clone keeps more than one read in flight, at most 4: {deepest:?}"
    );
    assert_eq!(deepest[1], 1, "the shallow capture's clone keeps one");
}
