//! Property tests of every reader of what a server sends: the handshake ([`negotiate`]) and a
//! connection's reply parser ([`Connection::receive`]), fed a well-formed exchange altered by
//! random edits (bytes overwritten, inserted, removed, the stream cut short) or plain random
//! bytes. Each must end with a result or an error whose text shows no control characters;
//! never a panic, never a hang, never a completion for a slot that was not in flight.
//!
//! A fixed seed gives the same cases every run; `NBD_FUZZ_CASES=N` runs N cases from a random
//! seed instead.

use nbd_client::{Completion, Connection, DeadlineStream, Slots, Socket, negotiate, wire};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Longest a case may take; far above what any takes.
const HANG: Duration = Duration::from_secs(20);

/// The deadline the client's reads get.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);

/// One change to a byte stream.
#[derive(Clone, Debug)]
enum Edit {
    /// Overwrite the byte at this position (modulo the length) with this value.
    Set(usize, u8),
    /// Insert bytes at this position.
    Insert(usize, Vec<u8>),
    /// Remove this many bytes from this position.
    Remove(usize, usize),
    /// Keep only this many bytes (modulo the length plus one).
    Cut(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Set(at, byte)),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Edit::Insert(at, bytes)),
        1 => (any::<usize>(), 1usize..32).prop_map(|(at, count)| Edit::Remove(at, count)),
        1 => any::<usize>().prop_map(Edit::Cut),
    ]
}

/// `bytes` with `edits` applied in order.
fn apply(bytes: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    for edit in edits {
        let length = bytes.len();
        match edit {
            Edit::Set(at, byte) if length > 0 => bytes[at % length] = *byte,
            Edit::Insert(at, inserted) => {
                let at = at % (length + 1);
                bytes.splice(at..at, inserted.iter().copied());
            }
            Edit::Remove(at, count) if length > 0 => {
                let at = at % length;
                bytes.drain(at..(at + count).min(length));
            }
            Edit::Cut(keep) => bytes.truncate(keep % (length + 1)),
            _ => {}
        }
    }
    bytes
}

fn runner(default_cases: u32) -> TestRunner {
    let asked: Option<u32> = std::env::var("NBD_FUZZ_CASES")
        .ok()
        .and_then(|text| text.parse().ok());
    TestRunner::new(Config {
        cases: asked.unwrap_or(default_cases),
        rng_seed: match asked {
            Some(_) => RngSeed::Random,
            None => RngSeed::Fixed(0x0b_d0),
        },
        failure_persistence: None,
        ..Config::default()
    })
}

/// Runs `body` on a thread of its own: a panic or a run longer than [`HANG`] fails the case.
fn bounded<T: Send + 'static>(
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TestCaseError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = sender.send(body());
    });
    match receiver.recv_timeout(HANG) {
        Ok(value) => {
            let _ = worker.join();
            Ok(value)
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(TestCaseError::fail(
            "the client panicked (see the message above)",
        )),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            Err(TestCaseError::fail(format!("the client hung for {HANG:?}")))
        }
    }
}

/// One reply to `NBD_OPT_GO`: its header and `data`.
fn option_reply(reply: u32, data: &[u8]) -> Vec<u8> {
    let mut message = wire::OPTION_REPLY_MAGIC.to_be_bytes().to_vec();
    message.extend_from_slice(&wire::OPT_GO.to_be_bytes());
    message.extend_from_slice(&reply.to_be_bytes());
    message.extend_from_slice(&(data.len() as u32).to_be_bytes());
    message.extend_from_slice(data);
    message
}

/// What a fixed newstyle server sends for a successful `NBD_OPT_GO`: the greeting, the
/// export's size and flags, its block sizes and the acknowledgement.
fn handshake_bytes() -> Vec<u8> {
    let mut bytes = b"NBDMAGICIHAVEOPT".to_vec();
    bytes.extend_from_slice(&3u16.to_be_bytes());
    let mut export = wire::INFO_EXPORT.to_be_bytes().to_vec();
    export.extend_from_slice(&(1u64 << 20).to_be_bytes());
    export.extend_from_slice(&0b1101u16.to_be_bytes());
    bytes.extend(option_reply(wire::REP_INFO, &export));
    let mut sizes = wire::INFO_BLOCK_SIZE.to_be_bytes().to_vec();
    for size in [512u32, 4096, 1 << 20] {
        sizes.extend_from_slice(&size.to_be_bytes());
    }
    bytes.extend(option_reply(wire::REP_INFO, &sizes));
    bytes.extend(option_reply(wire::REP_ACK, &[]));
    bytes
}

/// Negotiates against a server that sends `served` whatever the client says, then closes;
/// the error text, if any.
fn negotiate_against(served: Vec<u8>) -> Result<Option<String>, TestCaseError> {
    bounded(move || {
        let (client, mut server) = UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = server.write_all(&served);
            let _ = server.shutdown(std::net::Shutdown::Write);
            // Drain what the client sends until it hangs up.
            let _ = std::io::copy(&mut server, &mut std::io::sink());
        });
        let mut socket = Socket::Unix(client);
        let stop = AtomicBool::new(false);
        let outcome = {
            let mut stream =
                DeadlineStream::new(&mut socket, Instant::now(), CLIENT_TIMEOUT, &stop).unwrap();
            negotiate(&mut stream, "disk")
        };
        drop(socket);
        writer.join().unwrap();
        outcome.err().map(|error| error.to_string())
    })
}

fn shows_no_controls(error: &str) -> Result<(), TestCaseError> {
    prop_assert!(!error.is_empty());
    prop_assert!(!error.chars().any(char::is_control), "{error:?}");
    Ok(())
}

#[test]
fn mutated_handshakes_end_in_an_export_or_an_error() {
    let original = handshake_bytes();
    assert_eq!(
        negotiate_against(original.clone()).unwrap(),
        None,
        "unaltered"
    );
    runner(256)
        .run(
            &prop::collection::vec(edit(), 1..6),
            |edits| match negotiate_against(apply(&original, &edits))? {
                Some(error) => shows_no_controls(&error),
                None => Ok(()),
            },
        )
        .unwrap();
}

#[test]
fn random_bytes_are_no_handshake() {
    runner(128)
        .run(
            &prop::collection::vec(any::<u8>(), 0..512),
            |bytes| match negotiate_against(bytes)? {
                Some(error) => shows_no_controls(&error),
                None => Ok(()),
            },
        )
        .unwrap();
}

/// Requests of the reply tests: (command, length) for slots 0, 1, 2, 3.
const REQUESTS: [(u16, u32); 4] = [
    (wire::CMD_READ, 4096),
    (wire::CMD_WRITE, 512),
    (wire::CMD_READ, 32 * 1024),
    (wire::CMD_TRIM, 1 << 20),
];

/// The simple replies to [`REQUESTS`], in the order 2, 0, 3, 1 (a read's data after its header).
fn reply_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    for slot in [2usize, 0, 3, 1] {
        bytes.extend_from_slice(&wire::SIMPLE_REPLY_MAGIC.to_be_bytes());
        bytes.extend_from_slice(&0u32.to_be_bytes());
        bytes.extend_from_slice(&(slot as u64).to_be_bytes());
        let (command, length) = REQUESTS[slot];
        if command == wire::CMD_READ {
            bytes.extend(std::iter::repeat_n(slot as u8 + 1, length as usize));
        }
    }
    bytes
}

/// Sends [`REQUESTS`] on one connection to a server that answers with `served` and closes;
/// the completions gathered and the error that ended the exchange, if any.
fn exchange(served: Vec<u8>) -> Result<(Vec<Completion>, Option<String>), TestCaseError> {
    bounded(move || {
        let (client, mut server) = UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            // Take the requests (4 headers and the write's payload), then answer.
            let mut requests = vec![0u8; 4 * wire::REQUEST_BYTES + 512];
            let _ = server.read_exact(&mut requests);
            let _ = server.write_all(&served);
            let _ = server.shutdown(std::net::Shutdown::Write);
            let _ = std::io::copy(&mut server, &mut std::io::sink());
        });
        let socket = Socket::Unix(client);
        socket.set_timeouts(CLIENT_TIMEOUT, CLIENT_TIMEOUT).unwrap();
        let mut slots = Slots::new(vec![vec![0u8; 32 * 1024].into_boxed_slice(); 4]);
        let mut connection = Connection::new(socket, 0, "the test server".into(), 4);
        for (slot, (command, length)) in REQUESTS.into_iter().enumerate() {
            slots.begin(slot, 0, command, length);
            let request = wire::Request {
                flags: 0,
                command,
                handle: slot as u64,
                offset: 0,
                length,
            };
            connection.queue(slot as u32, &request);
        }
        let mut error = None;
        match connection.send(&slots) {
            Ok(true) => {
                while slots.ready() < REQUESTS.len() {
                    match connection.receive(&mut slots, true) {
                        Ok(true) => {}
                        Ok(false) => {
                            error = Some("no reply within the receive timeout".to_string());
                            break;
                        }
                        Err(failed) => {
                            error = Some(failed.to_string());
                            break;
                        }
                    }
                }
            }
            Ok(false) => error = Some("the send buffer filled".to_string()),
            Err(failed) => error = Some(failed.to_string()),
        }
        let mut done = [Completion::default(); 4];
        let count = slots.take_ready(&mut done, |completion| completion);
        drop(connection);
        writer.join().unwrap();
        (done[..count].to_vec(), error)
    })
}

/// Every completion names a slot that was in flight, once, with its length or an errno.
fn sound(completions: &[Completion]) -> Result<(), TestCaseError> {
    let mut seen = [false; 4];
    for completion in completions {
        let slot = completion.slot as usize;
        prop_assert!(slot < 4 && !seen[slot], "{completions:?}");
        seen[slot] = true;
        let length = i64::from(REQUESTS[slot].1);
        prop_assert!(
            completion.result == length || (-4095..0).contains(&completion.result),
            "{completions:?}"
        );
    }
    Ok(())
}

#[test]
fn mutated_replies_complete_in_flight_slots_or_fail() {
    let original = reply_bytes();
    let (completions, error) = exchange(original.clone()).unwrap();
    assert_eq!((completions.len(), error), (4, None), "unaltered");
    runner(256)
        .run(&prop::collection::vec(edit(), 1..6), |edits| {
            let (completions, error) = exchange(apply(&original, &edits))?;
            sound(&completions)?;
            if let Some(error) = error {
                shows_no_controls(&error)?;
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn random_bytes_are_no_replies() {
    runner(128)
        .run(&prop::collection::vec(any::<u8>(), 0..256), |bytes| {
            let (completions, error) = exchange(bytes)?;
            sound(&completions)?;
            prop_assert!(error.is_some() || completions.len() == 4);
            if let Some(error) = error {
                shows_no_controls(&error)?;
            }
            Ok(())
        })
        .unwrap();
}
