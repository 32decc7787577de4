//! The engine against scripted servers on a Unix socket: replies out of order and in pieces,
//! failed requests, flush, disconnect, and servers that break the protocol or vanish — none of
//! which may panic or hang.

use super::engine::NbdEngine;
use crate::engine::{Completion, Engine, EngineError, EngineOptions, IoRequest};
use crate::result::Direction;
use crate::targets::network_target::{NbdTransport, NetworkTarget};
use nbd_client::scripted::{accept_go, greet, read_option};
use nbd_client::wire;
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Transmission flags of the scripted export: flags field valid, flush, FUA.
const FLAGS: u16 = 0b1101;

/// Size of the scripted export.
const SIZE: u64 = 16 << 20;

/// A scripted server: accepts connections on a Unix socket and runs a script on each.
struct Scripted {
    _directory: tempfile::TempDir,
    target: NetworkTarget,
    thread: Option<JoinHandle<()>>,
}

impl Scripted {
    /// Accepts one connection, negotiates an export with `flags`, then runs `script`.
    fn start(flags: u16, script: impl FnOnce(UnixStream) + Send + 'static) -> Scripted {
        let mut script = Some(script);
        Scripted::raw(1, move |_, mut stream| {
            greet(&mut stream, 3);
            read_option(&mut stream);
            accept_go(&mut stream, SIZE, flags, Some([512, 4096, 4 << 20]));
            if let Some(script) = script.take() {
                script(stream);
            }
        })
    }

    /// Accepts `connections` connections one after the other and runs `script` on each, with
    /// its index, from the first byte on.
    fn raw(
        connections: usize,
        mut script: impl FnMut(usize, UnixStream) + Send + 'static,
    ) -> Scripted {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("scripted.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let thread = std::thread::spawn(move || {
            for index in 0..connections {
                let (stream, _) = listener.accept().unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(20)))
                    .unwrap();
                script(index, stream);
            }
        });
        Scripted {
            _directory: directory,
            target: NetworkTarget::Nbd {
                transport: NbdTransport::Unix(path),
                export: String::new(),
            },
            thread: Some(thread),
        }
    }

    /// Waits for the script to end (re-raising its panic).
    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

/// One request as the server reads it.
#[derive(Debug)]
struct Received {
    flags: u16,
    command: u16,
    handle: u64,
    offset: u64,
    length: u32,
    payload: Vec<u8>,
}

/// Reads one request (and a write's payload); `None` at the end of the stream.
fn read_request(stream: &mut UnixStream) -> Option<Received> {
    let mut header = [0u8; wire::REQUEST_BYTES];
    stream.read_exact(&mut header).ok()?;
    assert_eq!(wire::be_u32(&header[0..4]), wire::REQUEST_MAGIC);
    let mut request = Received {
        flags: wire::be_u16(&header[4..6]),
        command: wire::be_u16(&header[6..8]),
        handle: wire::be_u64(&header[8..16]),
        offset: wire::be_u64(&header[16..24]),
        length: wire::be_u32(&header[24..28]),
        payload: Vec::new(),
    };
    if request.command == wire::CMD_WRITE {
        request.payload = vec![0; request.length as usize];
        stream.read_exact(&mut request.payload).unwrap();
    }
    Some(request)
}

/// A simple reply header.
fn reply(error: u32, handle: u64) -> Vec<u8> {
    let mut bytes = wire::SIMPLE_REPLY_MAGIC.to_be_bytes().to_vec();
    bytes.extend_from_slice(&error.to_be_bytes());
    bytes.extend_from_slice(&handle.to_be_bytes());
    bytes
}

/// Serves an in-memory export sequentially (one request at a time: read it, answer it) until
/// the client disconnects; returns the commands seen.
fn serve_memory(mut stream: UnixStream) -> Vec<u16> {
    let mut memory = vec![0u8; SIZE as usize];
    let mut commands = Vec::new();
    while let Some(request) = read_request(&mut stream) {
        commands.push(request.command);
        let range = request.offset as usize..(request.offset + u64::from(request.length)) as usize;
        match request.command {
            wire::CMD_READ => {
                let mut message = reply(0, request.handle);
                message.extend_from_slice(&memory[range]);
                stream.write_all(&message).unwrap();
            }
            wire::CMD_WRITE => {
                memory[range].copy_from_slice(&request.payload);
                stream.write_all(&reply(0, request.handle)).unwrap();
            }
            wire::CMD_FLUSH => stream.write_all(&reply(0, request.handle)).unwrap(),
            wire::CMD_DISC => break,
            other => panic!("unexpected command {other}"),
        }
    }
    commands
}

fn read(slot: u32, offset: u64, length: u32) -> IoRequest {
    IoRequest {
        file: 0,
        slot,
        direction: Direction::Read,
        offset,
        length,
    }
}

fn write(slot: u32, offset: u64, length: u32) -> IoRequest {
    IoRequest {
        file: 0,
        slot,
        direction: Direction::Write,
        offset,
        length,
    }
}

/// Reaps until `count` completions arrived; returns them sorted by slot.
fn reap_all(engine: &mut NbdEngine, count: usize) -> Vec<Completion> {
    let mut all = Vec::new();
    let mut done = vec![Completion::default(); count.max(1)];
    while all.len() < count {
        let reaped = engine.reap(1, &mut done).unwrap();
        assert!(reaped >= 1);
        all.extend_from_slice(&done[..reaped]);
    }
    all.sort_by_key(|completion| completion.slot);
    all
}

#[test]
fn replies_out_of_order_and_in_pieces_reach_their_slots() {
    let mut server = Scripted::start(FLAGS, |mut stream| {
        let requests: Vec<Received> = (0..4).map(|_| read_request(&mut stream).unwrap()).collect();
        for index in [3usize, 1, 0, 2] {
            let request = &requests[index];
            assert_eq!(request.command, wire::CMD_READ);
            let mut message = reply(0, request.handle);
            message.extend(std::iter::repeat_n(
                request.handle as u8 + 1,
                request.length as usize,
            ));
            // Header and payload trickle in: 5, 13, then the rest.
            for piece in [&message[..5], &message[5..18], &message[18..]] {
                stream.write_all(piece).unwrap();
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        assert_eq!(read_request(&mut stream).unwrap().command, wire::CMD_DISC);
        assert!(read_request(&mut stream).is_none());
    });
    let mut engine = NbdEngine::open(&server.target, &EngineOptions::new(4, 8192)).unwrap();
    for slot in 0..4 {
        engine
            .submit(read(slot, u64::from(slot) * 8192, 512 * (slot + 1)))
            .unwrap();
    }
    engine.flush().unwrap();
    let completions = reap_all(&mut engine, 4);
    for (slot, completion) in completions.iter().enumerate() {
        assert_eq!(completion.result, 512 * (slot as i64 + 1));
        let length = 512 * (slot + 1);
        assert!(
            engine.buffer_mut(slot)[..length]
                .iter()
                .all(|byte| *byte == slot as u8 + 1)
        );
    }
    drop(engine);
    server.join();
}

#[test]
fn failed_requests_are_negative_completions_without_payload() {
    let mut server = Scripted::start(FLAGS, |mut stream| {
        let first = read_request(&mut stream).unwrap();
        let second = read_request(&mut stream).unwrap();
        let third = read_request(&mut stream).unwrap();
        assert_eq!(third.command, wire::CMD_WRITE);
        assert_eq!(third.payload, vec![0x77; 1024]);
        let mut message = reply(5, first.handle);
        message.extend(reply(0, second.handle));
        message.extend(vec![0x42; second.length as usize]);
        message.extend(reply(28, third.handle));
        stream.write_all(&message).unwrap();
        serve_memory(stream);
    });
    let mut engine = NbdEngine::open(&server.target, &EngineOptions::new(4, 4096)).unwrap();
    engine.buffer_mut(2)[..1024].fill(0x77);
    engine.submit(read(0, 0, 4096)).unwrap();
    engine.submit(read(1, 4096, 4096)).unwrap();
    engine.submit(write(2, 8192, 1024)).unwrap();
    engine.flush().unwrap();
    let completions = reap_all(&mut engine, 3);
    assert_eq!(
        completions,
        [
            Completion {
                slot: 0,
                result: -i64::from(libc::EIO)
            },
            Completion {
                slot: 1,
                result: 4096
            },
            Completion {
                slot: 2,
                result: -i64::from(libc::ENOSPC)
            },
        ]
    );
    assert!(
        engine.buffer_mut(1)[..4096]
            .iter()
            .all(|byte| *byte == 0x42)
    );
    drop(engine);
    server.join();
}

#[test]
fn large_mixed_batches_do_not_deadlock_a_sequential_server() {
    let mut server = Scripted::start(FLAGS, |stream| {
        let commands = serve_memory(stream);
        assert_eq!(commands.last(), Some(&wire::CMD_DISC));
    });
    let length = 1 << 20;
    let mut engine = NbdEngine::open(&server.target, &EngineOptions::new(16, length)).unwrap();
    for round in 0..4u64 {
        for slot in 0..16u32 {
            let offset = u64::from(slot / 2) * length as u64;
            if slot % 2 == 0 {
                engine
                    .buffer_mut(slot as usize)
                    .fill(round as u8 + slot as u8);
                engine.submit(write(slot, offset, length as u32)).unwrap();
            } else {
                engine
                    .submit(read(slot, offset + 8 * length as u64, length as u32))
                    .unwrap();
            }
        }
        engine.flush().unwrap();
        let completions = reap_all(&mut engine, 16);
        assert!(completions.iter().all(|c| c.result == length as i64));
    }
    for slot in 0..8u32 {
        engine
            .submit(read(slot, u64::from(slot) * length as u64, length as u32))
            .unwrap();
    }
    engine.flush().unwrap();
    reap_all(&mut engine, 8);
    // Block k was written last (round 3) by slot 2k.
    for block in 0..8usize {
        let expected = 3 + 2 * block as u8;
        assert!(
            engine
                .buffer_mut(block)
                .iter()
                .all(|byte| *byte == expected)
        );
    }
    engine.sync_data().unwrap();
    drop(engine);
    server.join();
}

#[test]
fn flush_is_sent_and_its_error_reported() {
    let mut server = Scripted::start(FLAGS, |mut stream| {
        for error in [0, 28] {
            let request = read_request(&mut stream).unwrap();
            assert_eq!(request.command, wire::CMD_FLUSH);
            assert_eq!((request.offset, request.length, request.flags), (0, 0, 0));
            stream.write_all(&reply(error, request.handle)).unwrap();
        }
        // Write-through is off: no FUA.
        let request = read_request(&mut stream).unwrap();
        assert_eq!((request.command, request.flags), (wire::CMD_WRITE, 0));
        stream.write_all(&reply(0, request.handle)).unwrap();
        serve_memory(stream);
    });
    let mut engine = NbdEngine::open(&server.target, &EngineOptions::new(2, 4096)).unwrap();
    engine.sync_data().unwrap();
    let error = engine.sync_data().unwrap_err();
    assert!(
        matches!(&error, EngineError::Operation { operation: "flush", source, .. } if source.raw_os_error() == Some(libc::ENOSPC)),
        "{error}"
    );
    engine.submit(write(0, 0, 512)).unwrap();
    engine.flush().unwrap();
    assert_eq!(reap_all(&mut engine, 1)[0].result, 512);
    drop(engine);
    server.join();
}

#[test]
fn write_through_sets_fua_and_flush_needs_server_support() {
    let mut server = Scripted::start(0b1001, |mut stream| {
        let request = read_request(&mut stream).unwrap();
        assert_eq!(request.flags, wire::CMD_FLAG_FUA);
        stream.write_all(&reply(0, request.handle)).unwrap();
        serve_memory(stream);
    });
    let options = EngineOptions {
        write_through: true,
        ..EngineOptions::new(2, 4096)
    };
    let mut engine = NbdEngine::open(&server.target, &options).unwrap();
    engine.submit(write(1, 4096, 4096)).unwrap();
    engine.flush().unwrap();
    assert_eq!(reap_all(&mut engine, 1)[0].result, 4096);
    let error = engine.sync_data().unwrap_err().to_string();
    assert!(error.contains("does not support NBD_CMD_FLUSH"), "{error}");
    drop(engine);
    server.join();
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    let mut server = Scripted::start(FLAGS, |stream| {
        serve_memory(stream);
    });
    let mut engine = NbdEngine::open(&server.target, &EngineOptions::new(2, 4096)).unwrap();
    let mut done = [Completion::default(); 2];
    assert_eq!(engine.reap(1, &mut done).unwrap(), 0, "nothing in flight");
    assert!(engine.submit(read(2, 0, 512)).is_err(), "no slot 2");
    assert!(
        engine.submit(read(0, 0, 8192)).is_err(),
        "beyond the buffer"
    );
    assert!(engine.submit(read(0, 100, 512)).is_err(), "unaligned");
    let other_file = IoRequest {
        file: 1,
        ..read(0, 0, 512)
    };
    assert!(engine.submit(other_file).is_err(), "one export: file 0");
    engine.submit(read(0, 0, 512)).unwrap();
    assert!(engine.submit(read(0, 0, 512)).is_err(), "slot 0 in flight");
    assert!(engine.sync_data().is_err(), "a request in flight");
    // reap sends what flush has not.
    assert_eq!(engine.reap(2, &mut done).unwrap(), 1);
    assert_eq!(
        done[0],
        Completion {
            slot: 0,
            result: 512
        }
    );
    engine.submit(read(1, 512, 512)).unwrap();
    engine.flush().unwrap();
    let mut got = 0;
    while got == 0 {
        got = engine.reap(0, &mut done).unwrap();
    }
    assert_eq!(
        done[0],
        Completion {
            slot: 1,
            result: 512
        }
    );
    drop(engine);
    server.join();
}

/// Runs one read against a server that answers with `answer(handle)` and then closes; returns
/// the error of the reap and of the call after it.
fn broken_reply(answer: fn(u64) -> Vec<u8>) -> (String, String) {
    let mut server = Scripted::start(FLAGS, move |mut stream| {
        let request = read_request(&mut stream).unwrap();
        stream.write_all(&answer(request.handle)).unwrap();
    });
    let mut engine = NbdEngine::open(&server.target, &EngineOptions::new(2, 4096)).unwrap();
    engine.submit(read(1, 0, 4096)).unwrap();
    engine.flush().unwrap();
    let mut done = [Completion::default(); 2];
    let mut first = engine.reap(1, &mut done);
    if first.is_ok() {
        first = engine.reap(1, &mut done);
    }
    let first = first.unwrap_err();
    assert!(matches!(
        first,
        EngineError::Operation {
            operation: "receive replies",
            ..
        }
    ));
    let second = engine.flush().unwrap_err().to_string();
    drop(engine);
    server.join();
    (first.to_string(), second)
}

#[test]
fn servers_that_break_the_protocol_fail_the_engine() {
    let (error, later) = broken_reply(|handle| {
        let mut bytes = reply(0, handle);
        bytes[0] = 0x12;
        bytes
    });
    assert!(error.contains("magic"), "{error}");
    assert!(later.contains("failed earlier"), "{later}");

    let (error, _) = broken_reply(|_| reply(0, 7));
    assert!(error.contains("handle 0x7"), "{error}");

    let (error, _) = broken_reply(|handle| {
        let mut bytes = reply(0, handle);
        bytes[0..4].copy_from_slice(&wire::STRUCTURED_REPLY_MAGIC.to_be_bytes());
        bytes
    });
    assert!(error.contains("structured"), "{error}");

    let (error, _) = broken_reply(|handle| {
        let mut bytes = reply(0, handle);
        bytes.extend_from_slice(&[0; 100]);
        bytes
    });
    assert!(error.contains("closed the connection"), "{error}");

    let (error, _) = broken_reply(|handle| {
        // The same reply twice.
        let mut bytes = reply(5, handle);
        bytes.extend(reply(5, handle));
        bytes
    });
    assert!(error.contains("names no request in flight"), "{error}");
}

#[test]
fn refused_open_still_disconnects_politely() {
    // Flush but no FUA: write-through cannot be had.
    let mut server = Scripted::start(0b0101, |mut stream| {
        let request = read_request(&mut stream).unwrap();
        assert_eq!(request.command, wire::CMD_DISC);
        assert!(read_request(&mut stream).is_none());
    });
    let options = EngineOptions {
        write_through: true,
        ..EngineOptions::new(2, 4096)
    };
    let error = NbdEngine::open(&server.target, &options).err().unwrap();
    assert!(matches!(error, EngineError::Setup { .. }));
    assert!(error.to_string().contains("FUA"), "{error}");
    server.join();
}

/// Options with a network timeout of `timeout`.
fn impatient(queue_depth: u32, timeout: Duration) -> EngineOptions {
    EngineOptions {
        net_timeout: timeout,
        ..EngineOptions::new(queue_depth, 4096)
    }
}

/// Waits until the client hangs up (at most 20 s, the stream's read timeout).
fn until_hang_up(mut stream: UnixStream) {
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink), Ok(read) if read > 0) {}
}

#[test]
fn timing_a_dripping_handshake_ends_at_its_deadline() {
    let mut server = Scripted::raw(1, |_, mut stream| {
        // One byte of the greeting every 50 ms: far slower than the deadline allows.
        for byte in b"NBDMAGICIHAVEOPT\0\x03" {
            if stream.write_all(&[*byte]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        until_hang_up(stream);
    });
    let started = Instant::now();
    let error = NbdEngine::open(&server.target, &impatient(1, Duration::from_millis(300)))
        .err()
        .unwrap();
    let elapsed = started.elapsed();
    server.join();
    assert!(matches!(error, EngineError::Setup { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("no reply within 300 ms to the handshake (stuck at the greeting)")
            && message.contains("scripted.sock"),
        "{message}"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn endless_information_replies_fail_the_open() {
    let mut server = Scripted::raw(1, |_, mut stream| {
        greet(&mut stream, 3);
        read_option(&mut stream);
        for _ in 0..10_000 {
            let mut reply = wire::OPTION_REPLY_MAGIC.to_be_bytes().to_vec();
            reply.extend_from_slice(&wire::OPT_GO.to_be_bytes());
            reply.extend_from_slice(&wire::REP_INFO.to_be_bytes());
            reply.extend_from_slice(&6u32.to_be_bytes());
            reply.extend_from_slice(b"\0\x04more");
            if stream.write_all(&reply).is_err() {
                return;
            }
        }
    });
    let error = NbdEngine::open(&server.target, &EngineOptions::new(1, 4096))
        .err()
        .unwrap()
        .to_string();
    server.join();
    assert!(
        error.contains("more than 32 replies to NBD_OPT_GO"),
        "{error}"
    );
}

/// Submits one 4 KiB read to a server that stalls as `stall` does, and returns the error of
/// the reap and how long it took.
fn stalled_read(stall: fn(UnixStream, u64), timeout: Duration) -> (String, Duration) {
    let mut server = Scripted::start(FLAGS, move |mut stream| {
        let request = read_request(&mut stream).unwrap();
        stall(stream, request.handle);
    });
    let mut engine = NbdEngine::open(&server.target, &impatient(2, timeout)).unwrap();
    engine.submit(read(0, 0, 4096)).unwrap();
    engine.flush().unwrap();
    let started = Instant::now();
    let mut done = [Completion::default(); 2];
    let error = engine.reap(1, &mut done).unwrap_err();
    let elapsed = started.elapsed();
    drop(engine);
    server.join();
    (error.to_string(), elapsed)
}

#[test]
fn timing_a_reply_stalled_part_way_ends_at_the_reply_timeout() {
    let (error, elapsed) = stalled_read(
        |mut stream, handle| {
            let mut message = reply(0, handle);
            message.extend_from_slice(&[0x55; 1000]);
            stream.write_all(&message).unwrap();
            until_hang_up(stream);
        },
        Duration::from_millis(400),
    );
    assert!(
        error.contains("no reply within 400 ms") && error.contains("a reply stopped part-way"),
        "{error}"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn timing_a_dripped_reply_cannot_stretch_the_reply_timeout() {
    let (error, elapsed) = stalled_read(
        |mut stream, handle| {
            let mut message = reply(0, handle);
            message.extend_from_slice(&[0x55; 4096]);
            // One byte every 20 ms: the whole reply would take 82 s.
            for byte in message {
                if stream.write_all(&[byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        },
        Duration::from_millis(400),
    );
    assert!(error.contains("no reply within 400 ms"), "{error}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn a_stop_abandons_requests_the_server_sits_on() {
    let mut server = Scripted::start(FLAGS, |mut stream| {
        read_request(&mut stream).unwrap();
        until_hang_up(stream);
    });
    // A long timeout: only the stop may end the wait.
    let options = impatient(2, Duration::from_secs(30));
    let stop = options.stop.clone();
    let mut engine = NbdEngine::open(&server.target, &options).unwrap();
    engine.submit(read(0, 0, 4096)).unwrap();
    engine.flush().unwrap();
    let raiser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        stop.raise();
    });
    let started = Instant::now();
    let mut done = [Completion::default(); 2];
    let error = engine.reap(1, &mut done).unwrap_err();
    let elapsed = started.elapsed();
    raiser.join().unwrap();
    assert!(error.is_stop(), "{error}");
    assert!(
        matches!(error, EngineError::Stopped { unanswered: 1, .. }),
        "{error}"
    );
    // The stop came after 0.2 s; the grace is 2 s; the timeout, 30 s.
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(10),
        "{elapsed:?}"
    );
    assert!(engine.flush().is_err(), "abandoned requests end the engine");
    drop(engine);
    server.join();
}

#[test]
fn a_connection_that_finds_another_export_is_refused() {
    // The probe saw a bigger export than this server offers now.
    let mut server = Scripted::start(FLAGS, |stream| {
        let commands = serve_memory(stream);
        assert_eq!(
            commands,
            [wire::CMD_DISC],
            "no request may reach the export"
        );
    });
    let mut expected = EngineOptions::new(1, 4096);
    let mut volume = crate::engine::volume::NetworkVolumeInfo {
        size_bytes: SIZE * 2,
        logical_block_size: 512,
        preferred_block_size: 4096,
        max_request_bytes: 4 << 20,
        flush: true,
        fua: true,
        ..Default::default()
    };
    expected.expected_volume = Some(volume.clone());
    let error = NbdEngine::open(&server.target, &expected).err().unwrap();
    server.join();
    assert!(
        matches!(&error, EngineError::VolumeChanged { connection: 1, changes, .. } if changes.len() == 1),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("size 33554432 bytes at the probe, 16777216 bytes now"),
        "{error}"
    );

    // The same export passes.
    volume.size_bytes = SIZE;
    let mut server = Scripted::start(FLAGS, |stream| {
        serve_memory(stream);
    });
    expected.expected_volume = Some(volume);
    NbdEngine::open(&server.target, &expected).unwrap();
    server.join();
}

#[test]
fn later_connections_must_find_the_first_ones_block_sizes() {
    // Multi-conn announced; the second connection's maximum block size is smaller.
    let mut first = None;
    let mut server = Scripted::raw(2, move |index, mut stream| {
        greet(&mut stream, 3);
        read_option(&mut stream);
        let maximum = if index == 0 { 4 << 20 } else { 64 << 10 };
        accept_go(&mut stream, SIZE, FLAGS | 0x100, Some([512, 4096, maximum]));
        // Both connections are told to disconnect when the open fails; nothing else.
        let serving = std::thread::spawn(move || serve_memory(stream));
        if index == 0 {
            first = Some(serving);
        } else {
            assert_eq!(serving.join().unwrap(), [wire::CMD_DISC]);
            assert_eq!(first.take().unwrap().join().unwrap(), [wire::CMD_DISC]);
        }
    });
    let options = EngineOptions {
        connections: 2,
        ..EngineOptions::new(2, 4096)
    };
    let error = NbdEngine::open(&server.target, &options).err().unwrap();
    server.join();
    assert!(
        error.to_string().contains(
            "connection 2 found the volume changed since the probe (largest request 4194304 bytes at the probe, 65536 bytes now)"
        ),
        "{error}"
    );
}
