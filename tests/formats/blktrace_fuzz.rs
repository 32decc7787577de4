//! Property tests of the blktrace reader (`read_iolog` on a binary capture): captures built
//! from random events (tests/support/blktrace.rs) read back as the queued I/Os they hold, in
//! either byte order; the same captures with bytes changed, cut or inserted give a replay or
//! an error naming the job file and the event, never a panic, within
//! [`support::fuzz::HANG`]. `IOPATH_FUZZ_CASES=N` runs N cases from a random seed.

use crate::support;

use iopath::input::fio::blktrace::{is_blktrace, parse_blktrace};
use iopath::input::fio::expand::Environment;
use iopath::input::fio::iolog::TraceAction;
use iopath::input::fio::load_with;
use iopath::input::job_file::JobFileRequest;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use support::blktrace::{
    ACTION_COMPLETE, ACTION_ISSUE, COMPLETE, DISCARD, Event, FLUSH, ISSUE, NOTIFY, READ, WRITE,
    device, encode,
};
use support::fuzz::{bounded, config};

/// What a generated event is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    Read,
    Write,
    Discard,
    Flush,
    Issue,
    Complete,
    Notice,
}

/// One generated event: kind, device (0–2), nanoseconds after the one before (or before it,
/// when negative), sector, bytes, payload length.
pub(super) type Generated = (Kind, u32, i64, u64, u32, usize);

pub(super) fn events() -> impl Strategy<Value = Vec<Generated>> {
    let kind = prop::sample::select(vec![
        Kind::Read,
        Kind::Write,
        Kind::Discard,
        Kind::Flush,
        Kind::Issue,
        Kind::Complete,
        Kind::Notice,
    ]);
    let bytes =
        prop_oneof![3 => (1u32..64).prop_map(|n| n * 512), 1 => Just(0u32), 1 => any::<u32>()];
    let one = (
        kind,
        0u32..3,
        -1_000i64..5_000_000,
        0u64..1 << 30,
        bytes,
        prop_oneof![3 => Just(0usize), 1 => 0usize..40],
    );
    prop::collection::vec(one, 1..60)
}

/// The events of `generated`, timed from 1 s.
pub(super) fn build(generated: &[Generated]) -> Vec<Event> {
    let mut time_ns = 1_000_000_000i64;
    generated
        .iter()
        .map(|&(kind, number, delta, sector, bytes, payload)| {
            time_ns = (time_ns + delta).max(0);
            let action = match kind {
                Kind::Read => READ,
                Kind::Write => WRITE,
                Kind::Discard => DISCARD,
                Kind::Flush => FLUSH,
                Kind::Issue | Kind::Complete | Kind::Notice => 0,
            };
            let mut event = Event::io(
                time_ns as u64,
                device(8, number * 16),
                action,
                sector,
                bytes,
            );
            event.action = match kind {
                Kind::Issue => ACTION_ISSUE | ISSUE | WRITE,
                Kind::Complete => ACTION_COMPLETE | COMPLETE | READ,
                Kind::Notice => NOTIFY,
                _ => event.action,
            };
            event.payload = vec![b'x'; payload];
            event
        })
        .collect()
}

/// The I/Os `generated` holds, worked out from the events rather than their bytes:
/// (µs since the first, device, action, offset, length).
fn model(generated: &[Generated]) -> Vec<(u64, u32, TraceAction, u64, u32)> {
    let events = build(generated);
    let mut previous: Option<u64> = None;
    let mut waited_ns = 0u64;
    let mut devices: Vec<u32> = Vec::new();
    let mut ios = Vec::new();
    for (event, &(kind, ..)) in events.iter().zip(generated) {
        let action = match kind {
            Kind::Read => TraceAction::Read,
            Kind::Write => TraceAction::Write,
            Kind::Discard => TraceAction::Trim,
            Kind::Flush => TraceAction::Sync,
            _ => continue,
        };
        if let Some(previous) = previous
            && event.time_ns > previous
        {
            waited_ns += event.time_ns - previous;
        }
        previous = Some(event.time_ns);
        if action != TraceAction::Sync && event.bytes == 0 {
            continue;
        }
        if !devices.contains(&event.device) {
            devices.push(event.device);
        }
        let file = devices.iter().position(|d| *d == event.device).unwrap() as u32;
        let (offset, length) = match action {
            TraceAction::Sync => (0, 0),
            _ => (event.sector * 512, event.bytes),
        };
        ios.push((waited_ns / 1000, file, action, offset, length));
    }
    ios
}

#[test]
fn captures_of_random_events_read_as_their_queued_ios_in_either_byte_order() {
    let mut runner = TestRunner::new(config(300));
    runner
        .run(&(events(), any::<bool>()), |(generated, big_endian)| {
            let bytes = encode(&build(&generated), big_endian);
            let expected = model(&generated);
            let read = bounded("a capture".into(), move || parse_blktrace(&bytes))?;
            match read {
                Ok(log) => {
                    let ios: Vec<_> = log
                        .ios
                        .iter()
                        .map(|io| (io.at_us, io.file, io.action, io.offset, io.length))
                        .collect();
                    prop_assert_eq!(ios, expected);
                }
                Err(error) => {
                    prop_assert!(expected.is_empty(), "{error} for {expected:?}");
                }
            }
            Ok(())
        })
        .unwrap();
}

/// A change to a capture's bytes.
#[derive(Clone, Debug)]
pub(super) enum Edit {
    Set(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
}

pub(super) fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Set(at, byte)),
        1 => any::<usize>().prop_map(Edit::Cut),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..60))
            .prop_map(|(at, bytes)| Edit::Insert(at, bytes)),
    ]
}

pub(super) fn apply(bytes: &mut Vec<u8>, edit: &Edit) {
    let at = |index: usize, len: usize| if len == 0 { 0 } else { index % len };
    match edit {
        Edit::Set(index, byte) if !bytes.is_empty() => {
            let position = at(*index, bytes.len());
            bytes[position] = *byte;
        }
        Edit::Cut(index) => bytes.truncate(at(*index, bytes.len() + 1)),
        Edit::Insert(index, inserted) => {
            let position = at(*index, bytes.len() + 1);
            bytes.splice(position..position, inserted.iter().copied());
        }
        _ => {}
    }
}

#[test]
fn mutated_captures_replay_or_are_refused_with_their_event_never_panic() {
    let strategy = (events(), any::<bool>(), prop::collection::vec(edit(), 1..6));
    let mut runner = TestRunner::new(config(300));
    runner
        .run(&strategy, |(generated, big_endian, edits)| {
            let mut bytes = encode(&build(&generated), big_endian);
            for edit in &edits {
                apply(&mut bytes, edit);
            }
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("capture"), &bytes).unwrap();
            let job = dir.path().join("main.fio");
            // A log is found from the working directory, as in fio: name it whole.
            let text = format!(
                "[replay]\nread_iolog={0}/capture\nreplay_redirect={0}/data\nreplay_no_stall=1\n",
                dir.path().display()
            );
            std::fs::write(&job, text).unwrap();
            let still_a_capture = is_blktrace(&bytes);
            let loaded = bounded(format!("{}", job.display()), move || {
                load_with(&job, &JobFileRequest::default(), &Environment::fixed(&[]))
            })?;
            if let Err(error) = loaded {
                let shown = error.to_string();
                prop_assert!(error.file.starts_with(dir.path()), "{shown}");
                prop_assert!(!shown.chars().any(char::is_control), "{shown:?}");
                prop_assert!(
                    !still_a_capture || shown.contains("event") || shown.contains("more than"),
                    "{shown}"
                );
            }
            Ok(())
        })
        .unwrap();
}
