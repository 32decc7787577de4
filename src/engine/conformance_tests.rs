//! One conformance suite for every engine: each test runs the same requests through the null,
//! sync (pread/pwrite and through a pipe) and io_uring engines (the latter with and without
//! registered buffers and file) on real
//! files in a temporary directory, and checks what the [`Engine`] contract promises — data at
//! the right offsets, completions naming their slots, short reads at the end of the file,
//! `reap` that never waits for what is not in flight, `sync_data`, `O_DIRECT`, requests
//! that name one of several files, and trims that complete with their length and leave zeroes.
//!
//! Engines that do not perform I/O (`performs_io == false`) are held to everything except the
//! contents of the file and of read buffers.

use super::io_uring::{self, IoUringEngine};
use super::null::NullEngine;
use super::sync::SyncEngine;
use super::{Completion, Engine, EngineFile, EngineOptions, IoRequest};
use crate::fill::fill_random_bytes;
use crate::host::clock::Clock;
use crate::result::Direction;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Block size of most requests: O_DIRECT-aligned.
const BLOCK: usize = 4096;

/// An engine configuration under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EngineUnderTest {
    Null,
    Sync,
    /// The sync engine moving bytes through a pipe (fio's splice engine).
    SyncSplice,
    IoUringPlain,
    IoUringRegistered,
}

/// Every configuration this machine can run (io_uring ones only where the kernel offers it).
fn engines_under_test() -> Vec<EngineUnderTest> {
    let mut engines = vec![
        EngineUnderTest::Null,
        EngineUnderTest::Sync,
        EngineUnderTest::SyncSplice,
    ];
    match io_uring::probe() {
        Ok(()) => engines.extend([
            EngineUnderTest::IoUringPlain,
            EngineUnderTest::IoUringRegistered,
        ]),
        Err(error) => crate::support::skip(format_args!(
            "io_uring is unavailable here ({error}); only the other engines are tested"
        )),
    }
    engines
}

/// Opens `kind` on `file` with up to `queue_depth` slots of `buffer_size` bytes.
fn open_engine(
    kind: EngineUnderTest,
    file: EngineFile,
    queue_depth: u32,
    buffer_size: usize,
) -> Box<dyn Engine> {
    open_engine_on_files(kind, vec![file], queue_depth, buffer_size)
}

/// Opens `kind` on `files` (requests name them by index) with up to `queue_depth` slots of
/// `buffer_size` bytes.
fn open_engine_on_files(
    kind: EngineUnderTest,
    files: Vec<EngineFile>,
    queue_depth: u32,
    buffer_size: usize,
) -> Box<dyn Engine> {
    let io_uring_options = |register| EngineOptions {
        register,
        ..EngineOptions::new(queue_depth, buffer_size)
    };
    match kind {
        EngineUnderTest::Null => Box::new(NullEngine::new(
            queue_depth,
            buffer_size,
            None,
            Clock::new(),
        )),
        EngineUnderTest::Sync => Box::new(SyncEngine::with_files(files, buffer_size)),
        EngineUnderTest::SyncSplice => Box::new(
            SyncEngine::with_data_path(files, buffer_size, super::data_path::DataPath::Splice)
                .expect("a pipe opens"),
        ),
        EngineUnderTest::IoUringPlain => Box::new(
            IoUringEngine::open_files(files, &io_uring_options(false)).expect("io_uring opens"),
        ),
        EngineUnderTest::IoUringRegistered => {
            let engine =
                IoUringEngine::open_files(files, &io_uring_options(true)).expect("io_uring opens");
            if crate::host::sys::is_root() {
                assert!(engine.capabilities().registered_buffers);
                assert!(engine.capabilities().registered_files);
            }
            Box::new(engine)
        }
    }
}

/// Opens (creating) `path` for reading and writing, with O_DIRECT when `direct`.
fn open_read_write(path: &Path, direct: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    if direct {
        options.custom_flags(libc::O_DIRECT);
    }
    options.open(path)
}

/// The pattern of block `block`: pseudo-random, different for every block.
fn pattern(block: u64, length: usize) -> Vec<u8> {
    let mut bytes = vec![0; length];
    fill_random_bytes(&mut fastrand::Rng::with_seed(0x1234 + block), &mut bytes);
    bytes
}

/// Runs `requests` through `engine`, keeping as many in flight as the engine allows.
/// `before_submit(index, buffer)` prepares a request's buffer (write data); `on_completion(index,
/// result, buffer)` sees every completion with the request it belongs to. Checks that every
/// completion names a slot in flight and every request completes exactly once.
fn run_requests(
    engine: &mut dyn Engine,
    requests: &[IoRequest],
    mut before_submit: impl FnMut(usize, &mut [u8]),
    mut on_completion: impl FnMut(usize, i64, &[u8]),
) {
    let queue_depth = engine.capabilities().max_queue_depth as usize;
    let mut free_slots: Vec<u32> = (0..queue_depth as u32).rev().collect();
    let mut request_of_slot: Vec<Option<usize>> = vec![None; queue_depth];
    let mut completions = vec![Completion::default(); queue_depth];
    let mut next = 0;
    let mut completed = 0;
    while completed < requests.len() {
        while next < requests.len()
            && let Some(slot) = free_slots.pop()
        {
            before_submit(next, engine.buffer_mut(slot as usize));
            engine
                .submit(IoRequest {
                    slot,
                    ..requests[next]
                })
                .unwrap();
            request_of_slot[slot as usize] = Some(next);
            next += 1;
        }
        engine.flush().unwrap();
        let reaped = engine.reap(1, &mut completions).unwrap();
        assert!(
            reaped >= 1,
            "{}: reap(1) with I/O in flight returned 0",
            engine.name()
        );
        for completion in &completions[..reaped] {
            let slot = completion.slot as usize;
            let index = request_of_slot
                .get_mut(slot)
                .and_then(Option::take)
                .unwrap_or_else(|| {
                    panic!(
                        "{}: completion names slot {slot}, not in flight",
                        engine.name()
                    )
                });
            on_completion(index, completion.result, engine.buffer_mut(slot));
            free_slots.push(completion.slot);
            completed += 1;
        }
    }
    assert!(request_of_slot.iter().all(Option::is_none));
    let mut extra = [Completion::default(); 4];
    assert_eq!(
        engine.reap(0, &mut extra).unwrap(),
        0,
        "{}: stray completions",
        engine.name()
    );
}

/// Requests of one `direction` for blocks `blocks` (in that order), `BLOCK` bytes each; the slot
/// is filled in by [`run_requests`].
fn block_requests(direction: Direction, blocks: &[u64]) -> Vec<IoRequest> {
    blocks
        .iter()
        .map(|block| IoRequest {
            file: 0,
            slot: 0,
            direction,
            offset: block * BLOCK as u64,
            length: BLOCK as u32,
        })
        .collect()
}

/// Block numbers 0..count in a scrambled order (a stride coprime to `count`).
fn scrambled_blocks(count: u64) -> Vec<u64> {
    (0..count).map(|index| (index * 7 + 3) % count).collect()
}

/// Writes blocks `blocks` with their patterns through `engine`; every write must be complete.
fn write_blocks(engine: &mut dyn Engine, blocks: &[u64]) {
    let name = engine.name();
    run_requests(
        engine,
        &block_requests(Direction::Write, blocks),
        |index, buffer| buffer[..BLOCK].copy_from_slice(&pattern(blocks[index], BLOCK)),
        |index, result, _| {
            assert_eq!(
                result, BLOCK as i64,
                "{name}: write of block {}",
                blocks[index]
            )
        },
    );
}

/// Reads blocks `blocks` through `engine` and checks them against their patterns (contents only
/// for engines that perform I/O).
fn read_and_check_blocks(engine: &mut dyn Engine, blocks: &[u64]) {
    let name = engine.name();
    let performs_io = engine.capabilities().performs_io;
    run_requests(
        engine,
        &block_requests(Direction::Read, blocks),
        |_, buffer| buffer.fill(0),
        |index, result, buffer| {
            assert_eq!(
                result, BLOCK as i64,
                "{name}: read of block {}",
                blocks[index]
            );
            if performs_io {
                assert!(
                    buffer[..BLOCK] == pattern(blocks[index], BLOCK)[..],
                    "{name}: block {} read back wrong",
                    blocks[index]
                );
            }
        },
    );
}

/// Checks with std that `path` holds the pattern of every block in `blocks`.
fn check_file_holds_patterns(path: &Path, blocks: &[u64]) {
    let file = File::open(path).unwrap();
    let mut data = vec![0; BLOCK];
    for &block in blocks {
        file.read_exact_at(&mut data, block * BLOCK as u64).unwrap();
        assert!(
            data == pattern(block, BLOCK),
            "block {block} in the file is wrong"
        );
    }
}

#[test]
fn writes_land_at_their_offsets() {
    let directory = tempfile::tempdir().unwrap();
    for kind in engines_under_test() {
        let path = directory.path().join(format!("{kind:?}"));
        let mut engine = open_engine(kind, open_read_write(&path, false).unwrap(), 8, BLOCK);
        let blocks = scrambled_blocks(16);
        write_blocks(engine.as_mut(), &blocks);
        if engine.capabilities().performs_io {
            drop(engine);
            check_file_holds_patterns(&path, &blocks);
        }
    }
}

#[test]
fn trims_complete_with_their_length_and_leave_zeroes() {
    let directory = tempfile::tempdir().unwrap();
    for kind in engines_under_test() {
        let path = directory.path().join(format!("{kind:?}"));
        let file = open_read_write(&path, false).unwrap();
        if super::trim::probe(&file, super::trim::LocalTrim::PunchHole).is_err() {
            crate::support::skip("the temporary directory's file system has no holes");
            return;
        }
        let mut engine = open_engine(kind, file, 8, BLOCK);
        let blocks = scrambled_blocks(16);
        write_blocks(engine.as_mut(), &blocks);
        let trimmed: Vec<u64> = blocks.iter().copied().filter(|b| b % 2 == 0).collect();
        let name = engine.name();
        run_requests(
            engine.as_mut(),
            &block_requests(Direction::Trim, &trimmed),
            |_, _| {},
            |index, result, _| {
                assert_eq!(
                    result, BLOCK as i64,
                    "{name}: trim of block {}",
                    trimmed[index]
                )
            },
        );
        if engine.capabilities().performs_io {
            drop(engine);
            let data = std::fs::read(&path).unwrap();
            for block in 0..16u64 {
                let bytes = &data[block as usize * BLOCK..(block as usize + 1) * BLOCK];
                if block % 2 == 0 {
                    assert!(bytes.iter().all(|&b| b == 0), "{kind:?}: block {block}");
                } else {
                    assert!(
                        bytes == &pattern(block, BLOCK)[..],
                        "{kind:?}: block {block}"
                    );
                }
            }
        }
    }
}

#[test]
fn requests_reach_the_file_they_name() {
    // One engine on three files (a worker moving over a job's files): block b goes to file
    // b % 3 at its own offset, in a scrambled order with several requests in flight.
    let directory = tempfile::tempdir().unwrap();
    for kind in engines_under_test() {
        let paths: Vec<_> = (0..3)
            .map(|index| directory.path().join(format!("{kind:?}-{index}")))
            .collect();
        let files = paths
            .iter()
            .map(|path| open_read_write(path, false).unwrap())
            .collect();
        let mut engine = open_engine_on_files(kind, files, 4, BLOCK);
        let blocks = scrambled_blocks(12);
        let requests: Vec<IoRequest> = block_requests(Direction::Write, &blocks)
            .into_iter()
            .zip(&blocks)
            .map(|(request, block)| IoRequest {
                file: (block % 3) as u32,
                ..request
            })
            .collect();
        let name = engine.name();
        run_requests(
            engine.as_mut(),
            &requests,
            |index, buffer| buffer[..BLOCK].copy_from_slice(&pattern(blocks[index], BLOCK)),
            |index, result, _| assert_eq!(result, BLOCK as i64, "{name}: write {index}"),
        );
        engine.sync_data().unwrap();
        let stray = IoRequest {
            file: 3,
            ..requests[0]
        };
        if kind != EngineUnderTest::Null {
            let refused = engine.submit(stray).expect_err("file 3 of 3");
            assert!(
                refused
                    .to_string()
                    .ends_with("submit failed: file is not one of the engine's"),
                "{name}: {refused}"
            );
        }
        if engine.capabilities().performs_io {
            drop(engine);
            for (index, path) in paths.iter().enumerate() {
                let own: Vec<u64> = blocks
                    .iter()
                    .copied()
                    .filter(|block| block % 3 == index as u64)
                    .collect();
                check_file_holds_patterns(path, &own);
                let length = std::fs::metadata(path).unwrap().len();
                assert_eq!(length, (own.iter().max().unwrap() + 1) * BLOCK as u64);
            }
        }
    }
}

#[test]
fn reads_return_the_file_contents() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("data");
    let file = open_read_write(&path, false).unwrap();
    for block in 0..16 {
        file.write_all_at(&pattern(block, BLOCK), block * BLOCK as u64)
            .unwrap();
    }
    for kind in engines_under_test() {
        let mut engine = open_engine(kind, open_read_write(&path, false).unwrap(), 8, BLOCK);
        read_and_check_blocks(engine.as_mut(), &scrambled_blocks(16));
    }
}

#[test]
fn completions_name_their_slots() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("data");
    open_read_write(&path, false)
        .unwrap()
        .set_len(64 * 1024)
        .unwrap();
    for kind in engines_under_test() {
        let mut engine = open_engine(kind, open_read_write(&path, false).unwrap(), 4, BLOCK);
        let queue_depth = engine.capabilities().max_queue_depth;
        // Every slot in flight at once, each with its own length: the result tells the slot.
        let length_of_slot = |slot: u32| 512 * (slot + 1);
        for slot in 0..queue_depth {
            engine
                .submit(IoRequest {
                    file: 0,
                    slot,
                    direction: Direction::Read,
                    offset: u64::from(slot) * BLOCK as u64,
                    length: length_of_slot(slot),
                })
                .unwrap();
        }
        engine.flush().unwrap();
        let mut seen = vec![false; queue_depth as usize];
        let mut completions = vec![Completion::default(); queue_depth as usize];
        let mut reaped = 0;
        while reaped < queue_depth as usize {
            let count = engine.reap(1, &mut completions).unwrap();
            assert!(
                count >= 1,
                "{kind:?}: reap(1) with I/O in flight returned 0"
            );
            for completion in &completions[..count] {
                let slot = completion.slot as usize;
                assert!(
                    slot < seen.len() && !seen[slot],
                    "{kind:?}: unexpected slot {slot}"
                );
                seen[slot] = true;
                assert_eq!(
                    completion.result,
                    i64::from(length_of_slot(completion.slot))
                );
            }
            reaped += count;
        }
        assert_eq!(engine.reap(1, &mut completions).unwrap(), 0);
    }
}

#[test]
fn read_past_end_of_file_is_short_or_empty() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("data");
    open_read_write(&path, false)
        .unwrap()
        .set_len(6000)
        .unwrap();
    for kind in engines_under_test() {
        let mut engine = open_engine(kind, open_read_write(&path, false).unwrap(), 2, BLOCK);
        let performs_io = engine.capabilities().performs_io;
        // (offset, result an engine that performs I/O must return)
        let cases = [(4096, 6000 - 4096), (6000, 0), (1 << 20, 0)];
        let requests: Vec<IoRequest> = cases
            .iter()
            .map(|&(offset, _)| IoRequest {
                file: 0,
                slot: 0,
                direction: Direction::Read,
                offset,
                length: BLOCK as u32,
            })
            .collect();
        run_requests(
            engine.as_mut(),
            &requests,
            |_, _| {},
            |index, result, _| {
                if performs_io {
                    assert_eq!(
                        result, cases[index].1,
                        "{kind:?}: read at {}",
                        cases[index].0
                    );
                } else {
                    assert!((0..=BLOCK as i64).contains(&result));
                }
            },
        );
    }
}

#[test]
fn reap_with_nothing_in_flight_returns_zero() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("data");
    for kind in engines_under_test() {
        let mut engine = open_engine(kind, open_read_write(&path, false).unwrap(), 4, BLOCK);
        let mut completions = [Completion::default(); 4];
        assert_eq!(engine.reap(0, &mut completions).unwrap(), 0, "{kind:?}");
        assert_eq!(
            engine.reap(1, &mut completions).unwrap(),
            0,
            "{kind:?}: must not wait"
        );
        engine.flush().unwrap();
        write_blocks(engine.as_mut(), &[0, 1]);
        assert_eq!(engine.reap(0, &mut completions).unwrap(), 0, "{kind:?}");
        assert_eq!(
            engine.reap(4, &mut completions).unwrap(),
            0,
            "{kind:?}: must not wait"
        );
    }
}

#[test]
fn sync_data_succeeds_with_nothing_in_flight() {
    let directory = tempfile::tempdir().unwrap();
    for kind in engines_under_test() {
        let path = directory.path().join(format!("{kind:?}"));
        let mut engine = open_engine(kind, open_read_write(&path, false).unwrap(), 4, BLOCK);
        engine.sync_data().unwrap();
        write_blocks(engine.as_mut(), &[3, 0, 2, 1]);
        engine.sync_data().unwrap();
    }
}

/// A temporary directory on a file system that accepts O_DIRECT: the system temporary directory,
/// or else this crate's `target` directory (for machines whose /tmp is tmpfs).
fn direct_io_directory() -> Option<tempfile::TempDir> {
    let candidates = [
        std::env::temp_dir(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
    ];
    candidates.iter().find_map(|parent| {
        let directory = tempfile::tempdir_in(parent).ok()?;
        match open_read_write(&directory.path().join("probe"), true) {
            Ok(_) => Some(directory),
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => None,
            Err(error) => panic!("open O_DIRECT in {parent:?}: {error}"),
        }
    })
}

#[test]
fn direct_io_round_trip() {
    let Some(directory) = direct_io_directory() else {
        crate::support::skip("no directory here accepts O_DIRECT");
        return;
    };
    for kind in engines_under_test() {
        let path = directory.path().join(format!("{kind:?}"));
        let file = open_read_write(&path, true).unwrap();
        let mut engine = open_engine(kind, file, 8, 2 * BLOCK);
        let blocks = scrambled_blocks(32);
        write_blocks(engine.as_mut(), &blocks);
        read_and_check_blocks(engine.as_mut(), &blocks);
        engine.sync_data().unwrap();
        if engine.capabilities().performs_io {
            drop(engine);
            check_file_holds_patterns(&path, &blocks);
        }
    }
}
