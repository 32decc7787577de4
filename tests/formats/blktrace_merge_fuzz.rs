//! Property tests of merging blktrace captures (`merge_blktrace_file`): captures of random
//! events (tests/formats/blktrace_fuzz.rs builds them) with random scales and passes merge into
//! every pass of each capture's queued requests, each capture's in its own order, all in time
//! order; captures with bytes changed, cut or inserted and `merge_blktrace_*` lists of random
//! text give a replay or an error naming the job file, never a panic, within
//! [`support::fuzz::HANG`], and reading the job writes nothing. `IOPATH_FUZZ_CASES=N` runs N
//! cases from a random seed.

use super::blktrace_fuzz::{Generated, Kind, apply, build, edit, events};
use crate::support;
use iopath::input::fio::blktrace_merge::{CaptureToMerge, MergeError, merge_captures};
use iopath::input::fio::expand::Environment;
use iopath::input::fio::load_with;
use iopath::input::job_file::JobFileRequest;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use support::blktrace::{device, encode};
use support::fuzz::{bounded, config};

/// One capture: its events, byte order, scale (percent) and passes.
type Capture = (Vec<Generated>, bool, u64, u64);

fn captures() -> impl Strategy<Value = Vec<Capture>> {
    prop::collection::vec((events(), any::<bool>(), 1u64..300, 1u64..4), 1..4)
}

/// The events of capture `index`: its generated events on device 9:`index`, their clock
/// never going back (a merge of captures in time order is then in time order as a whole).
fn built(index: usize, capture: &Capture) -> Vec<support::blktrace::Event> {
    let mut built = build(&capture.0);
    let mut latest = 0;
    for event in &mut built {
        event.device = device(9, index as u32);
        latest = event.time_ns.max(latest);
        event.time_ns = latest;
    }
    built
}

/// The bytes of capture `index` ([`built`]).
fn capture_bytes(index: usize, capture: &Capture) -> Vec<u8> {
    encode(&built(index, capture), capture.1)
}

/// What capture `index` gives the merge, worked out from its events rather than its bytes:
/// (time, sector, bytes) of each merged request, pass after pass.
fn model(index: usize, capture: &Capture) -> Vec<(u64, u64, u32)> {
    let (generated, _, scale, passes) = capture;
    let built = built(index, capture);
    let length = built.last().map_or(0, |event| event.time_ns);
    let kept: Vec<_> = built
        .iter()
        .zip(generated)
        .filter(|(_, (kind, ..))| matches!(kind, Kind::Read | Kind::Write | Kind::Discard))
        .map(|(event, _)| event)
        .collect();
    (0..*passes)
        .flat_map(|pass| {
            kept.iter()
                .map(move |event| {
                    let time = (event.time_ns + pass * length) * scale / 100;
                    (time, event.sector, event.bytes)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// (device, time, sector, bytes) of each event of a merge (this machine's byte order).
fn read_merge(merged: &[u8]) -> Vec<(u32, u64, u64, u32)> {
    let u32_at =
        |event: &[u8], at: usize| u32::from_ne_bytes(event[at..at + 4].try_into().unwrap());
    let u64_at =
        |event: &[u8], at: usize| u64::from_ne_bytes(event[at..at + 8].try_into().unwrap());
    merged
        .chunks(48)
        .map(|event| {
            (
                u32_at(event, 36),
                u64_at(event, 8),
                u64_at(event, 16),
                u32_at(event, 24),
            )
        })
        .collect()
}

#[test]
fn random_captures_merge_every_pass_of_each_in_time_order() {
    let mut runner = TestRunner::new(config(200));
    runner
        .run(&captures(), |captures| {
            let bytes: Vec<Vec<u8>> = captures
                .iter()
                .enumerate()
                .map(|(index, capture)| capture_bytes(index, capture))
                .collect();
            let expected: Vec<_> = captures
                .iter()
                .enumerate()
                .map(|(index, capture)| model(index, capture))
                .collect();
            let to_merge: Vec<CaptureToMerge<'_>> = bytes
                .iter()
                .zip(&captures)
                .map(|(bytes, capture)| CaptureToMerge {
                    name: "capture",
                    bytes,
                    scale_percent: capture.2,
                    iterations: capture.3,
                })
                .collect();
            let merged = merge_captures(&to_merge);
            if expected.iter().any(Vec::is_empty) {
                prop_assert!(
                    matches!(merged, Err(MergeError::NothingQueued { .. })),
                    "{merged:?}"
                );
                return Ok(());
            }
            let merged = read_merge(&merged.unwrap());
            prop_assert!(
                merged.windows(2).all(|pair| pair[0].1 <= pair[1].1),
                "in time order"
            );
            for (index, expected) in expected.iter().enumerate() {
                let own: Vec<_> = merged
                    .iter()
                    .filter(|event| event.0 == device(9, index as u32))
                    .map(|&(_, time, sector, bytes)| (time, sector, bytes))
                    .collect();
                prop_assert_eq!(&own, expected, "capture {}", index);
            }
            Ok(())
        })
        .unwrap();
}

/// Text for a `merge_blktrace_*` list: numbers, colons and a few other characters.
fn list_text() -> impl Strategy<Value = Option<String>> {
    prop::option::of("[0-9.:x \\-]{0,12}")
}

#[test]
fn mutated_captures_and_random_lists_merge_or_are_refused_never_panic() {
    let strategy = (
        captures(),
        prop::collection::vec(edit(), 0..4),
        list_text(),
        list_text(),
    );
    let mut runner = TestRunner::new(config(150));
    runner
        .run(&strategy, |(captures, edits, scalars, iterations)| {
            let dir = tempfile::tempdir().unwrap();
            let mut names = Vec::new();
            for (index, capture) in captures.iter().enumerate() {
                let mut bytes = capture_bytes(index, capture);
                if index == 0 {
                    for edit in &edits {
                        apply(&mut bytes, edit);
                    }
                }
                let path = dir.path().join(format!("capture{index}"));
                std::fs::write(&path, &bytes).unwrap();
                names.push(path.display().to_string());
            }
            let mut text = format!(
                "[replay]\nread_iolog={}\nmerge_blktrace_file={}/merged\nreplay_redirect={}/data\nreplay_no_stall=1\n",
                names.join(":"),
                dir.path().display(),
                dir.path().display()
            );
            if let Some(scalars) = &scalars {
                text.push_str(&format!("merge_blktrace_scalars={scalars}\n"));
            }
            if let Some(iterations) = &iterations {
                text.push_str(&format!("merge_blktrace_iters={iterations}\n"));
            }
            let job = dir.path().join("main.fio");
            std::fs::write(&job, text).unwrap();
            let loaded = bounded(format!("{}", job.display()), move || {
                load_with(&job, &JobFileRequest::default(), &Environment::fixed(&[]))
            })?;
            match loaded {
                Ok(loaded) => {
                    prop_assert_eq!(loaded.merged_captures.len(), 1);
                    prop_assert!(!loaded.merged_captures[0].present);
                }
                Err(error) => {
                    let shown = error.to_string();
                    prop_assert!(error.file.starts_with(dir.path()), "{shown}");
                    prop_assert!(!shown.chars().any(char::is_control), "{shown:?}");
                }
            }
            prop_assert!(!dir.path().join("merged").exists(), "reading writes nothing");
            Ok(())
        })
        .unwrap();
}
