//! Several blktrace captures merged and replayed (`merge_blktrace_file` with
//! `read_iolog=a:b`, `merge_blktrace_scalars`, `merge_blktrace_iters`), and the queue depth a
//! replay takes from its capture: two captures built from the documented event layout
//! (tests/support/blktrace.rs) merge into the order worked out by hand from fio's rule; fio
//! replays iopath's merge with the same I/Os in the same order; where the fio here can merge,
//! its merge is the same to the byte. Bad lists and a file in the merge's place: exit 2, before
//! any I/O, nothing written.

use super::blktrace_replay::fio_logged;
use super::iolog_replay::{fio, iopath, replay_traced, scratch};
use super::support::blktrace::{
    ACTION_COMPLETE, ACTION_ISSUE, COMPLETE, DISCARD, Event, FLUSH, ISSUE, NOTIFY, READ, WRITE,
    device, encode,
};
use std::path::Path;
use std::process::Command;

/// A completion of `categories` at `time_ns`.
pub(super) fn completion(time_ns: u64, disk: u32, categories: u32) -> Event {
    Event {
        action: ACTION_COMPLETE | COMPLETE | categories,
        ..Event::io(time_ns, disk, 0, 0, 0)
    }
}

/// Capture `a` (little-endian): a notice, a write and its issue, a read, a completion, a bare
/// flush (not merged), a discard; its last event, a completion, at 1.4 ms.
fn capture_a() -> Vec<u8> {
    let disk = device(8, 16);
    let notice = Event {
        action: NOTIFY,
        payload: b"app\0".to_vec(),
        ..Event::io(900_000, disk, 0, 0, 0)
    };
    let issue = Event {
        action: ACTION_ISSUE | ISSUE | WRITE,
        ..Event::io(1_000_100, disk, 0, 0, 8192)
    };
    encode(
        &[
            notice,
            Event::io(1_000_000, disk, WRITE, 0, 8192),
            issue,
            Event::io(1_200_000, disk, READ, 16, 4096),
            completion(1_250_000, disk, WRITE),
            Event::io(1_260_000, disk, FLUSH, 0, 0),
            Event::io(1_300_000, disk, DISCARD, 64, 65536),
            completion(1_400_000, disk, READ),
        ],
        false,
    )
}

/// Capture `b` (big-endian): a write and a read; its last event, a completion, at 1.5 ms.
fn capture_b() -> Vec<u8> {
    let disk = device(8, 32);
    encode(
        &[
            Event::io(1_100_000, disk, WRITE, 2048, 16384),
            Event::io(1_250_000, disk, READ, 8, 4096),
            completion(1_500_000, disk, WRITE),
        ],
        true,
    )
}

/// A job replaying the merge of `a` and `b` into `merged` as fast as it can go, on `data`.
fn merge_job(merged: &str, extra: &str) -> String {
    format!(
        "[replay]\nioengine=psync\nread_iolog=a:b\nmerge_blktrace_file={merged}\nreplay_redirect=data\nreplay_no_stall=1\n{extra}"
    )
}

/// `iopath job check replay.fio` in `dir`.
fn job_check(dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(dir)
        .args(["job", "check", "replay.fio"])
        .output()
        .expect("iopath runs")
}

/// Writes the two captures into `dir`.
fn write_captures(dir: &Path) {
    std::fs::write(dir.join("a"), capture_a()).unwrap();
    std::fs::write(dir.join("b"), capture_b()).unwrap();
}

#[test]
fn two_captures_merge_in_time_order_and_fio_replays_the_merge_the_same() {
    let scratch = scratch("blktrace-merge");
    let dir = scratch.path();
    write_captures(dir);
    let job = merge_job(
        "merged",
        "merge_blktrace_scalars=100:50\nmerge_blktrace_iters=1:2\n",
    );
    std::fs::write(dir.join("replay.fio"), &job).unwrap();
    let (issued, stderr) = replay_traced(dir);
    assert!(
        stderr.contains("merges 2 blktrace capture(s) (a, b at 50 % × 2) into merged")
            && stderr.contains("7 queued request(s) in time order, written before the run"),
        "{stderr}"
    );
    // By hand: `b` at half its times, its second pass 1.5 ms (its length) later before
    // scaling: 0.55, 0.625, 1.3 and 1.375 ms; `a` as logged: 1.0, 1.2, 1.3 ms. On the tie at
    // 1.3 ms the capture listed first goes first.
    let expected = [
        ("write", 1 << 20, 16384),
        ("read", 4096, 4096),
        ("write", 0, 8192),
        ("read", 8192, 4096),
        ("trim", 32768, 65536),
        ("write", 1 << 20, 16384),
        ("read", 4096, 4096),
    ];
    let by_position = |ios: Vec<(String, u64, u64, u32)>| -> Vec<(String, u64, u64)> {
        ios.into_iter()
            .map(|(direction, offset, length, _)| (direction, offset, length))
            .collect()
    };
    let expected: Vec<(String, u64, u64)> = expected
        .iter()
        .map(|(direction, offset, length)| (direction.to_string(), *offset, *length))
        .collect();
    assert_eq!(by_position(issued), expected);
    let merged = std::fs::read(dir.join("merged")).unwrap();
    assert_eq!(merged.len(), 7 * 48, "the merged requests' headers only");

    // The same job again: the merge is there, byte for byte, and is replayed as it is.
    let (again, stderr) = replay_traced(dir);
    assert!(stderr.contains("already holds this merge"), "{stderr}");
    assert_eq!(by_position(again), expected);
    assert_eq!(std::fs::read(dir.join("merged")).unwrap(), merged);

    // fio trims a regular file with a block device's ioctl (ENOTTY): its replay leaves the
    // trim out.
    let Some(fio) = fio() else { return };
    std::fs::write(
        dir.join("fio-replay.fio"),
        "[replay]\nioengine=psync\nread_iolog=merged\nreplay_redirect=data\nreplay_no_stall=1\nreplay_skip=trim\nwrite_lat_log=fio\nlog_offset=1\n",
    )
    .unwrap();
    let by_fio = Command::new(&fio)
        .current_dir(dir)
        .arg("fio-replay.fio")
        .output()
        .unwrap();
    assert!(by_fio.status.success(), "{by_fio:?}");
    let log = std::fs::read_to_string(dir.join("fio_clat.1.log")).unwrap();
    let untrimmed: Vec<_> = expected
        .iter()
        .filter(|(direction, ..)| direction != "trim")
        .cloned()
        .collect();
    assert_eq!(
        fio_logged(&log),
        untrimmed,
        "fio replays iopath's merge the same"
    );

    // fio's own merge of one pass each (fio repeats a capture's last event between passes,
    // so passes are left out here): the same bytes, where the fio here can merge. fio leaves
    // each capture's pass counter and length as malloc returns them: glibc hands out zeroed
    // memory with MALLOC_PERTURB_=255, which fio's merge counts on.
    let one_pass = merge_job("by-iopath", "merge_blktrace_scalars=100:50\n");
    std::fs::write(dir.join("replay.fio"), &one_pass).unwrap();
    replay_traced(dir);
    std::fs::write(
        dir.join("fio-merge.fio"),
        merge_job("by-fio", "merge_blktrace_scalars=100:50\n"),
    )
    .unwrap();
    let merging = Command::new(&fio)
        .current_dir(dir)
        .args(["--merge-blktrace-only", "fio-merge.fio"])
        .env("MALLOC_PERTURB_", "255")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&merging.stdout).into_owned()
        + &String::from_utf8_lossy(&merging.stderr);
    if said.contains("iolog short read") {
        // fio up to 3.40 reads a pointer's 8 bytes where an event's 48 belong, and merges
        // nothing.
        eprintln!("skipped: the fio here cannot merge blktrace captures ({said})");
        return;
    }
    assert_eq!(
        std::fs::read(dir.join("by-fio")).unwrap(),
        std::fs::read(dir.join("by-iopath")).unwrap(),
        "fio's merge: {merging:?}"
    );
}

#[test]
fn bad_merge_lists_and_a_file_in_the_merges_place_are_refused_before_any_io() {
    let scratch = scratch("blktrace-merge-refused");
    let dir = scratch.path();
    write_captures(dir);
    for (extra, expected) in [
        (
            "merge_blktrace_iters=2\n",
            "merge_blktrace_iters has 1 value(s) for the 2 capture(s)",
        ),
        (
            "merge_blktrace_scalars=100:50:25\n",
            "merge_blktrace_scalars has 3 value(s)",
        ),
        (
            "merge_blktrace_iters=1:0\n",
            "merge_blktrace_iters=1:0: '0' is not from 1",
        ),
        (
            "merge_blktrace_scalars=half:100\n",
            "'half' is not a number",
        ),
    ] {
        std::fs::write(dir.join("replay.fio"), merge_job("merged", extra)).unwrap();
        let refused = iopath(dir, &["run", "--job", "replay.fio"]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{extra}: {stderr}");
        assert!(stderr.contains(expected), "{extra}: {stderr}");
        assert!(!dir.join("merged").exists() && !dir.join("data").exists());
    }

    std::fs::write(dir.join("merged"), "notes of mine\n").unwrap();
    std::fs::write(dir.join("replay.fio"), merge_job("merged", "")).unwrap();
    for check in [false, true] {
        let refused = if check {
            job_check(dir)
        } else {
            iopath(dir, &["run", "--job", "replay.fio"])
        };
        let args = if check { "job check" } else { "run" };
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args}: {stderr}");
        assert!(
            stderr.contains(
                "merge_blktrace_file=merged: a file is there that does not hold this merge"
            ),
            "{args}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("merged")).unwrap(),
        "notes of mine\n",
        "a file iopath did not write is left as it was"
    );
    assert!(!dir.join("data").exists(), "no I/O");

    // Two jobs writing the same merge to one file write it once; at other scales, refused.
    let twice = format!(
        "{}{}",
        merge_job("merged2", ""),
        merge_job("merged2", "").replace("[replay]", "[again]")
    );
    std::fs::write(dir.join("replay.fio"), twice).unwrap();
    let checked = job_check(dir);
    assert!(checked.status.success(), "{checked:?}");
    std::fs::write(
        dir.join("replay.fio"),
        format!(
            "{}{}",
            merge_job("merged2", ""),
            merge_job("merged2", "merge_blktrace_scalars=50:100\n").replace("[replay]", "[other]")
        ),
    )
    .unwrap();
    let refused = job_check(dir);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("job 'other': merge_blktrace_file=merged2: an earlier job writes another merge to that file"),
        "{refused:?}"
    );

    std::fs::write(
        dir.join("replay.fio"),
        "[replay]\nmerge_blktrace_file=merged\nfilename=data\n",
    )
    .unwrap();
    let refused = job_check(dir);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("the job has no read_iolog"));
}

/// A capture of reads queued three at a time between completions (one merged away), then
/// one at a time.
fn deep_capture() -> Vec<u8> {
    let disk = device(8, 48);
    let mut events = Vec::new();
    let mut time_ns = 1_000_000;
    let mut sector = 0;
    let mut queue = |events: &mut Vec<Event>, count: usize| {
        for _ in 0..count {
            time_ns += 1_000;
            sector += 8;
            events.push(Event::io(time_ns, disk, READ, sector, 4096));
        }
        time_ns += 1_000;
        events.push(completion(time_ns, disk, READ));
    };
    queue(&mut events, 4);
    events.insert(
        3,
        Event {
            action: super::support::blktrace::ACTION_BACKMERGE
                | super::support::blktrace::QUEUE
                | READ,
            ..Event::io(1_002_500, disk, 0, 16, 4096)
        },
    );
    queue(&mut events, 1);
    queue(&mut events, 2);
    encode(&events, false)
}

/// The queue depth per worker of the first job of the run result at `path`.
fn queue_depth(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    let result: serde_json::Value = serde_json::from_str(&text).unwrap();
    result["tests"][0]["jobs"][0]["workload"]["queue_depth"]
        .as_u64()
        .unwrap()
}

#[test]
fn a_replay_without_iodepth_takes_the_depth_its_capture_shows() {
    let scratch = scratch("blktrace-depth");
    let dir = scratch.path();
    std::fs::write(dir.join("capture"), deep_capture()).unwrap();
    let job = |extra: &str| {
        format!(
            "[replay]\nioengine=io_uring\nread_iolog=capture\nreplay_redirect=data\nreplay_no_stall=1\n{extra}"
        )
    };
    std::fs::write(dir.join("replay.fio"), job("")).unwrap();
    let checked = job_check(dir);
    let said = String::from_utf8_lossy(&checked.stdout).into_owned()
        + &String::from_utf8_lossy(&checked.stderr);
    assert!(checked.status.success(), "{said}");
    assert!(
        said.contains(
            "iodepth=3 from the capture (its deepest queue between completions, at most 1024)"
        ),
        "{said}"
    );
    let (depth, stderr) = run_depth(dir, &[]);
    assert!(stderr.contains("iodepth=3 from the capture"), "{stderr}");
    assert_eq!(depth, 3);

    // A job's own iodepth, or the command line's, wins; the note is left out.
    let (depth, stderr) = run_depth(dir, &["--qd", "5"]);
    assert!(!stderr.contains("from the capture"), "{stderr}");
    assert_eq!(depth, 5);
    std::fs::write(dir.join("replay.fio"), job("iodepth=2\n")).unwrap();
    let (depth, stderr) = run_depth(dir, &[]);
    assert!(!stderr.contains("from the capture"), "{stderr}");
    assert_eq!(depth, 2);

    // fio without iodepth keeps more than 2 requests in flight on this capture (its depth
    // counts fall in the "up to 4" bucket), and at iodepth=2 it does not.
    let Some(fio) = fio() else { return };
    let deepest_bucket = |extra: &str| {
        std::fs::write(dir.join("fio.fio"), job(extra)).unwrap();
        let out = Command::new(&fio)
            .current_dir(dir)
            .args(["--output-format=json", "fio.fio"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let value: serde_json::Value =
            serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        value["jobs"][0]["iodepth_level"]["4"].as_f64().unwrap()
    };
    assert!(deepest_bucket("") > 0.0, "fio takes the capture's depth");
    assert_eq!(deepest_bucket("iodepth=2\n"), 0.0);
}

/// Runs `replay.fio` in `dir` with `extra` flags; the queue depth its result records and
/// what it printed on standard error.
fn run_depth(dir: &Path, extra: &[&str]) -> (u64, String) {
    let mut args = vec![
        "run",
        "--job",
        "replay.fio",
        "--json",
        "depth.json",
        "--allow-destructive",
    ];
    args.extend_from_slice(extra);
    let _ = std::fs::remove_file(dir.join("depth.json"));
    let run = iopath(dir, &args);
    assert!(run.status.success(), "{run:?}");
    (
        queue_depth(&dir.join("depth.json")),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}
