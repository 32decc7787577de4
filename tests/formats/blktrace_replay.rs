//! blktrace captures replayed (`read_iolog` on a binary capture), against fio: a capture built
//! from the documented event layout (tests/support/blktrace.rs) that names two loop devices
//! replays in iopath and in fio with the same I/Os in the same order, and the same bytes
//! written to each device by the kernel's counters. Also: a capture redirected to a file in
//! either byte order, and broken captures refused before any I/O with their event.

use super::iolog_replay::{fio, iopath, replay_traced, scratch};
use super::support::blktrace::{
    ACTION_BACKMERGE, ACTION_COMPLETE, ACTION_ISSUE, COMPLETE, DISCARD, Event, FLUSH, ISSUE,
    NOTIFY, QUEUE, READ, WRITE, device, encode,
};
use super::support::devices::{LoopDevice, is_root};
use super::support::require;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

/// A replay of `capture` as fast as it can go, on what `extra` names (nothing: the capture's
/// own devices).
fn replay_job(extra: &str) -> String {
    format!("[replay]\nioengine=psync\ndirect=1\nread_iolog=capture\nreplay_no_stall=1\n{extra}")
}

/// A capture on devices `first` and `second`: a process notice, queued writes, reads, a
/// discard and a flush among the block layer's other events (issues, a merge, a completion)
/// and a write of 0 bytes.
fn capture_events(first: u32, second: u32) -> Vec<Event> {
    let notice = Event {
        time_ns: 900_000,
        action: NOTIFY,
        device: first,
        payload: b"app\0\0\0\0\0".to_vec(),
        ..Event::default()
    };
    let other = |time_ns, action, device, sector, bytes| Event {
        action,
        ..Event::io(time_ns, device, 0, sector, bytes)
    };
    vec![
        notice,
        Event::io(1_000_000, first, WRITE, 0, 8192),
        other(1_000_400, ACTION_ISSUE | ISSUE | WRITE, first, 0, 8192),
        Event::io(1_200_000, second, READ, 16, 4096),
        other(1_200_100, ACTION_BACKMERGE | QUEUE | READ, second, 24, 4096),
        Event::io(1_300_000, first, DISCARD, 64, 65536),
        other(
            1_350_000,
            ACTION_COMPLETE | COMPLETE | WRITE,
            first,
            0,
            8192,
        ),
        Event::io(1_400_000, first, FLUSH, 0, 0),
        Event::io(1_500_000, second, WRITE, 4, 0),
        Event::io(1_600_000, second, WRITE, 2048, 16384),
        Event::io(1_700_000, first, READ, 8, 4096),
    ]
}

/// The I/Os of [`capture_events`] as replayed: (direction, offset, length, device 0 or 1).
const EXPECTED: [(&str, u64, u64, u32); 5] = [
    ("write", 0, 8192, 0),
    ("read", 8192, 4096, 1),
    ("trim", 32768, 65536, 0),
    ("write", 1 << 20, 16384, 1),
    ("read", 4096, 4096, 0),
];

fn expected() -> Vec<(String, u64, u64, u32)> {
    EXPECTED
        .iter()
        .map(|(direction, offset, length, target)| {
            (direction.to_string(), *offset, *length, *target)
        })
        .collect()
}

#[test]
fn a_capture_redirected_to_a_file_replays_its_queued_ios_in_either_byte_order() {
    let scratch = scratch("blktrace-redirected");
    let dir = scratch.path();
    for big_endian in [false, true] {
        let events = capture_events(device(8, 16), device(8, 32));
        std::fs::write(dir.join("capture"), encode(&events, big_endian)).unwrap();
        std::fs::write(dir.join("replay.fio"), replay_job("replay_redirect=data\n")).unwrap();
        let _ = std::fs::remove_file(dir.join("data"));
        let (issued, stderr) = replay_traced(dir);
        assert!(
            stderr.contains("replays a blktrace capture of 5 I/Os")
                && stderr.contains("I/O(s) of 0 bytes are left out"),
            "{stderr}"
        );
        let on_one_file: Vec<_> = expected()
            .into_iter()
            .map(|(direction, offset, length, _)| (direction, offset, length, 0))
            .collect();
        assert_eq!(issued, on_one_file, "big-endian: {big_endian}");
        assert!(
            std::fs::metadata(dir.join("data")).unwrap().len() >= (1 << 20) + 16384,
            "the redirect target was created as large as the furthest I/O"
        );
    }
}

#[test]
fn a_broken_capture_or_a_device_not_here_is_refused_before_any_io() {
    let scratch = scratch("blktrace-refused");
    let dir = scratch.path();
    let whole = encode(&capture_events(device(8, 16), device(8, 32)), false);
    std::fs::write(dir.join("capture"), &whole[..whole.len() - 1]).unwrap();
    std::fs::write(dir.join("replay.fio"), replay_job("replay_redirect=data\n")).unwrap();
    for args in [
        &["run", "--job", "replay.fio"][..],
        &["run", "--replay", "capture", "data"][..],
    ] {
        let refused = iopath(dir, args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("capture") && stderr.contains("event 11 at byte"),
            "{args:?}: {stderr}"
        );
        assert!(!dir.join("data").exists(), "no I/O: {args:?}");
    }

    // A device number no machine has, and nothing named to replay it on.
    let missing = device(4095, 1_048_575);
    std::fs::write(
        dir.join("capture"),
        encode(&capture_events(missing, missing), false),
    )
    .unwrap();
    std::fs::write(dir.join("replay.fio"), replay_job("")).unwrap();
    let refused = iopath(dir, &["run", "--job", "replay.fio"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("device 4095:1048575 is not on this machine"),
        "{stderr}"
    );
}

/// The kernel's device number of the block device at `path`, as blktrace records it.
fn device_of(path: &Path) -> u32 {
    let rdev = std::fs::metadata(path).unwrap().rdev();
    device(libc::major(rdev), libc::minor(rdev))
}

/// The reads, writes and trims of fio's completion-latency log with offsets (`log_offset`):
/// (direction, offset, length) in completion order (one at a time with psync: issue order).
pub(super) fn fio_logged(log: &str) -> Vec<(String, u64, u64)> {
    log.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let direction = match *fields.get(2)? {
                "0" => "read",
                "1" => "write",
                "2" => "trim",
                _ => return None,
            };
            Some((
                direction.to_string(),
                fields[4].parse().unwrap(),
                fields[3].parse().unwrap(),
            ))
        })
        .collect()
}

#[test]
fn a_capture_of_two_devices_replays_on_them_as_fio_replays_it() {
    if !require(is_root(), "root (loop devices)") {
        return;
    }
    let Some(fio) = fio() else { return };
    let (Some(first), Some(second)) = (LoopDevice::attach_zeroed(4), LoopDevice::attach_zeroed(4))
    else {
        return;
    };
    let scratch = scratch("blktrace-devices");
    let dir = scratch.path();
    let events = capture_events(device_of(first.path()), device_of(second.path()));
    std::fs::write(dir.join("capture"), encode(&events, false)).unwrap();
    std::fs::write(dir.join("replay.fio"), replay_job("")).unwrap();
    let written = || [first.sectors().1, second.sectors().1];

    let before = written();
    let (issued, _) = replay_traced(dir);
    let by_iopath = written();
    assert_eq!(
        issued,
        expected(),
        "each device's I/Os go to its loop device, in the capture's order"
    );

    std::fs::write(
        dir.join("replay.fio"),
        replay_job("write_lat_log=fio\nlog_offset=1\n"),
    )
    .unwrap();
    let by_fio = Command::new(fio)
        .current_dir(dir)
        .arg("replay.fio")
        .output()
        .unwrap();
    assert!(by_fio.status.success(), "{by_fio:?}");
    let after_fio = written();
    let log = std::fs::read_to_string(dir.join("fio_clat.1.log")).unwrap();
    let by_position: Vec<_> = expected()
        .into_iter()
        .map(|(direction, offset, length, _)| (direction, offset, length))
        .collect();
    assert_eq!(fio_logged(&log), by_position, "fio replays the same I/Os");
    let sectors = |after: [u64; 2], before: [u64; 2]| [after[0] - before[0], after[1] - before[1]];
    assert_eq!(
        sectors(by_iopath, before),
        [16, 32],
        "8 KiB written to the first device, 16 KiB to the second (the kernel's counters)"
    );
    assert_eq!(
        sectors(after_fio, by_iopath),
        sectors(by_iopath, before),
        "fio writes the same bytes to each device"
    );
}
