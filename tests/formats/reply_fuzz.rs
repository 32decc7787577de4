//! Property tests of every reader of what a network storage server sends back: the NBD
//! handshake and replies, ONC RPC record marking and reply headers, the NFSv3 and NFSv4.1
//! results (setup calls, COMPOUNDs, the engines' pipelined READ, WRITE and COMMIT replies),
//! and the SMB2 responses of a session's setup, of the calls that find a file and of the
//! engine's READs and WRITEs (sealed and signed messages too). Each is fed arbitrary bytes and
//! structured mutations of valid replies (built here per the protocols' specifications, each
//! checked to work unchanged by `the_unchanged_replies_work`): flipped bytes, truncations,
//! insertions, and length, count, offset and credit fields set to 0, 1, 0xFFFF, 2 GiB,
//! 0xFFFFFFFF and the like. Real servers' replies (nbdkit, nfs-ganesha, smbd) are altered on
//! their way by a proxy. Every exchange must end in a value or an error, never a panic, within
//! [`support::fuzz::HANG`] (the client waits at most [`NET_TIMEOUT`] for each reply); a
//! completion never claims more bytes than its request asked.
//!
//! The replies go over real loopback sockets: a scripted server on a thread answers the
//! client's calls in order, one of them altered. The end-to-end tests at the bottom run the
//! probes and the CLI against servers that send garbage, endless bytes or nothing.
//!
//! The number of cases keeps the whole binary to some seconds, from a fixed seed (the same
//! inputs every run); `IOPATH_FUZZ_CASES=N` runs N cases of each property from a random seed
//! instead, for a longer search by hand.

use crate::support;

use iopath::engine::nbd::{self, NbdEngine};
use iopath::engine::nfs::NfsEngine;
use iopath::engine::nfs::nfs4::{self, Nfs4Client, Stateid};
use iopath::engine::nfs::rpc::{self, Credentials};
use iopath::engine::nfs::xdr::{Decoder, Encoder};
use iopath::engine::nfs::{self, Nfs3Session, nfs3};
use iopath::engine::smb::SmbEngine;
use iopath::engine::smb::{self, SmbCredentials, SmbSecurity, SmbUrl, connection, wire};
use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
use iopath::result::Direction;
use iopath::targets::network_target::{NetworkTarget, NfsUrl};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{TestCaseError, TestRunner};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use support::fuzz::{bounded, config};

/// How long the client waits for each reply: short, so that a mutation that leaves the
/// client waiting for bytes that never come ends quickly.
const NET_TIMEOUT: Duration = Duration::from_millis(300);

/// How long the client waits for each reply when no reply is altered, or where a test asserts
/// one outcome: long enough for a loaded machine, and never waited out there (a scripted
/// server answers at once or closes the connection). Below [`ENDED_WITHIN`], so a wait for it
/// still fails a test that asserts an end within that.
const UNALTERED_TIMEOUT: Duration = Duration::from_secs(5);

/// The reply timeout of an exchange in which reply `altered` is changed (`usize::MAX`: none).
fn reply_timeout(altered: usize) -> Duration {
    if altered == usize::MAX {
        UNALTERED_TIMEOUT
    } else {
        NET_TIMEOUT
    }
}

/// The longest an end-to-end exchange with a hostile server may take (timeouts included).
const ENDED_WITHIN: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------
// Mutations.

/// One change to a valid reply.
#[derive(Clone, Debug)]
enum Edit {
    /// XOR one byte with a mask.
    Flip(Index, u8),
    /// Overwrite the aligned 4-byte word at an index with a value (in the protocol's order).
    Word(Index, u32),
    /// Overwrite the 2-byte field at an index.
    Half(Index, u16),
    /// Cut the reply short.
    Truncate(Index),
    /// Insert bytes.
    Insert(Index, Vec<u8>),
    /// Remove some bytes.
    Remove(Index, usize),
}

/// 32-bit values that lengths, counts and offsets are tested with.
fn word_value() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(2),
        Just(3),
        Just(0xFFFF),
        Just(0x1_0000),
        Just(0x7FFF_FFFF),
        Just(0x8000_0000),
        Just(0xFFFF_FFFC),
        Just(0xFFFF_FFFF),
        0u32..512,
        any::<u32>(),
    ]
}

/// 16-bit values: SMB offsets, lengths, counts and credit grants.
fn half_value() -> impl Strategy<Value = u16> {
    prop_oneof![
        Just(0u16),
        Just(1),
        Just(64),
        Just(0x7FFF),
        Just(0xFFFF),
        0u16..256,
        any::<u16>(),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<Index>(), 1u8..=255).prop_map(|(at, mask)| Edit::Flip(at, mask)),
        (any::<Index>(), word_value()).prop_map(|(at, value)| Edit::Word(at, value)),
        (any::<Index>(), half_value()).prop_map(|(at, value)| Edit::Half(at, value)),
        any::<Index>().prop_map(Edit::Truncate),
        (any::<Index>(), prop::collection::vec(any::<u8>(), 1..12))
            .prop_map(|(at, bytes)| Edit::Insert(at, bytes)),
        (any::<Index>(), 1usize..16).prop_map(|(at, length)| Edit::Remove(at, length)),
    ]
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), 1..4)
}

/// `bytes` with `edits` applied; words and halves written big-endian unless `little_endian`.
fn apply(bytes: &[u8], edits: &[Edit], little_endian: bool) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    for edit in edits {
        let length = bytes.len();
        match edit {
            Edit::Flip(at, mask) if length > 0 => bytes[at.index(length)] ^= mask,
            Edit::Word(at, value) if length >= 4 => {
                let start = at.index(length / 4) * 4;
                let value = if little_endian {
                    value.to_le_bytes()
                } else {
                    value.to_be_bytes()
                };
                bytes[start..start + 4].copy_from_slice(&value);
            }
            Edit::Half(at, value) if length >= 2 => {
                let start = at.index(length / 2) * 2;
                let value = if little_endian {
                    value.to_le_bytes()
                } else {
                    value.to_be_bytes()
                };
                bytes[start..start + 2].copy_from_slice(&value);
            }
            Edit::Truncate(at) if length > 0 => bytes.truncate(at.index(length)),
            Edit::Insert(at, inserted) => {
                let start = at.index(length + 1);
                bytes.splice(start..start, inserted.iter().copied());
            }
            Edit::Remove(at, count) if length > 0 => {
                let start = at.index(length);
                bytes.drain(start..(start + count).min(length));
            }
            _ => {}
        }
    }
    bytes
}

/// Runs `property` on `cases` cases of `strategy` (see [`config`]).
fn check<S: Strategy>(
    cases: u32,
    strategy: S,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    TestRunner::new(config(cases))
        .run(&strategy, property)
        .unwrap();
}

// ---------------------------------------------------------------------------------------
// A scripted server on a loopback socket.

/// What a scripted server does with a connection, given the calls answered so far (over all
/// connections) and the stream.
type Script = dyn Fn(&AtomicUsize, TcpStream) + Send + Sync;

/// A listener on 127.0.0.1 whose thread serves each connection with a script on a thread
/// of its own, until the `Scripted` is dropped (which closes the listener; a connection's
/// thread ends when the client closes its end).
struct Scripted {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Scripted {
    fn start(script: Arc<Script>) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let answered = Arc::new(AtomicUsize::new(0));
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { return };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
                let (script, answered) = (script.clone(), answered.clone());
                std::thread::spawn(move || script(&answered, stream));
            }
        });
        Scripted {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then ends and closes the listener.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Checks that an error is printable as it is shown: no control characters.
fn shown_safely(error: &impl std::fmt::Display) -> Result<(), TestCaseError> {
    let shown = error.to_string();
    prop_assert!(!shown.is_empty());
    prop_assert!(
        !shown.chars().any(|c| c.is_control() && c != '\n'),
        "control characters shown: {shown:?}"
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// ONC RPC and NFS.

/// An accepted RPC reply to `xid` with `results`, as a record with its mark.
fn rpc_record(xid: u32, results: &[u8]) -> Vec<u8> {
    let mut reply = Encoder::default();
    reply.u32(0).u32(xid).u32(1).u32(0).u32(0).u32(0).u32(0);
    reply.bytes.extend_from_slice(results);
    let length = (reply.bytes.len() - 4) as u32;
    reply.bytes[..4].copy_from_slice(&(0x8000_0000 | length).to_be_bytes());
    reply.bytes
}

/// Results in XDR, built by `build`.
fn xdr(build: impl FnOnce(&mut Encoder)) -> Vec<u8> {
    let mut encoder = Encoder::default();
    build(&mut encoder);
    encoder.bytes
}

/// An `fattr3` of a regular file of `size` bytes.
fn fattr3(encoder: &mut Encoder, size: u64) {
    encoder
        .u32(1)
        .u32(0o644)
        .u32(1)
        .u32(0)
        .u32(0)
        .u64(size)
        .u64(size);
    encoder.u32(0).u32(0).u64(1).u64(2);
    for _ in 0..6 {
        encoder.u32(0);
    }
}

/// The results of the NFSv3 calls [`nfs3_calls`] makes, in order (MOUNT first).
fn nfs3_results() -> Vec<Vec<u8>> {
    let handle = [7u8; 16];
    vec![
        xdr(|e| {
            e.u32(0).opaque(&handle).u32(0);
        }),
        xdr(|e| {
            e.u32(0);
            fattr3(e, 1 << 20);
        }),
        xdr(|e| {
            e.u32(0).opaque(&handle).u32(1);
            fattr3(e, 4096);
            e.u32(0);
        }),
        xdr(|e| {
            e.u32(0).u32(0).u32(0x3f);
        }),
        xdr(|e| {
            e.u32(0).u32(0);
            for value in [1 << 20, 1 << 20, 4096, 1 << 20, 1 << 20, 4096, 4096] {
                e.u32(value);
            }
            e.u64(u64::MAX).u32(0).u32(1).u32(0x1b);
        }),
        xdr(|e| {
            e.u32(0).u32(0);
            for value in [1u64 << 30, 1 << 29, 1 << 29, 1000, 500, 500] {
                e.u64(value);
            }
            e.u32(0);
        }),
        xdr(|e| {
            e.u32(0).u32(1).opaque(&handle).u32(0).u32(0).u32(0);
        }),
        xdr(|e| {
            e.u32(0).u32(0).u32(0).u32(100).u32(2).u64(9);
        }),
        xdr(|e| {
            e.u32(0).u32(0).u32(0).u64(9);
        }),
        xdr(|e| {
            e.u32(0).u32(0).u32(0);
        }),
    ]
}

/// MOUNT, then every call of an NFSv3 session on a scripted server at `port`; the first
/// error ends it.
fn nfs3_calls(port: u16, timeout: Duration) -> Result<(), String> {
    let credentials = Credentials {
        uid: 1000,
        gid: 1000,
        machine: "fuzz".into(),
    };
    let shown = |error: nfs3::NfsError| error.to_string();
    let root = nfs3::mount("127.0.0.1", port, "/export", timeout, &credentials).map_err(shown)?;
    let mut session = Nfs3Session::open("127.0.0.1", port, timeout, credentials).map_err(shown)?;
    session.getattr(&root, "root").map_err(shown)?;
    let file = session.lookup(&root, "file", "file").map_err(shown)?;
    session.access(&file, 0x3f, "file").map_err(shown)?;
    session.fsinfo(&file, "file").map_err(shown)?;
    session.fsstat(&file, "file").map_err(shown)?;
    let created = session.create(&root, "new", "new").map_err(shown)?;
    session
        .write(&created, 0, &[5; 100], nfs3::Stability::Unstable, "new")
        .map_err(shown)?;
    session.commit(&created, "new").map_err(shown)?;
    session.remove(&root, "new", "new").map_err(shown)?;
    Ok(())
}

/// What a scripted server sends for one call: bytes, and whether the connection ends after
/// them (so that a client waiting for more learns at once that none come).
type Answer = Option<(Vec<u8>, bool)>;

/// A server answering RPC call `n` (over all connections) with `reply(n, xid)`: raw bytes,
/// record mark included. Calls past the script's end are left unanswered; the connection
/// is closed.
fn rpc_server(reply: impl Fn(usize, u32) -> Answer + Send + Sync + 'static) -> Scripted {
    Scripted::start(Arc::new(move |answered, mut stream| {
        let mut call = Vec::new();
        while rpc::read_record(&mut stream, &mut call, 1 << 20).is_ok() && call.len() >= 4 {
            let xid = u32::from_be_bytes(call[..4].try_into().unwrap());
            let Some((bytes, last)) = reply(answered.fetch_add(1, Ordering::SeqCst), xid) else {
                return;
            };
            if stream.write_all(&bytes).is_err() || last {
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return;
            }
        }
    }))
}

/// Runs the NFSv3 calls against a server answering them with `results`, call `altered`
/// changed by `change` (given the whole record), bounded.
fn nfs3_exchange(
    altered: usize,
    change: impl Fn(Vec<u8>) -> Vec<u8> + Send + Sync + 'static,
) -> Result<Result<(), String>, TestCaseError> {
    let results = nfs3_results();
    let server = rpc_server(move |call, xid| {
        let record = rpc_record(xid, results.get(call)?);
        Some(if call == altered {
            (change(record), true)
        } else {
            (record, false)
        })
    });
    let (port, timeout) = (server.port, reply_timeout(altered));
    bounded(format!("NFSv3 call {altered}"), move || {
        nfs3_calls(port, timeout)
    })
}

/// The SEQUENCE result every NFSv4.1 COMPOUND reply starts with.
fn sequence_ok(encoder: &mut Encoder) {
    encoder.u32(nfs4::op::SEQUENCE).u32(0);
    encoder.bytes.extend_from_slice(&[3; 16]);
    encoder.u32(1).u32(0).u32(0).u32(0).u32(0);
}

/// A COMPOUND reply: status 0, empty tag, `count` results built by `build`.
fn compound(count: u32, build: impl FnOnce(&mut Encoder)) -> Vec<u8> {
    xdr(|e| {
        e.u32(0).opaque(b"").u32(count);
        build(e);
    })
}

/// An OPEN result: stateid, change info, flags, no attributes set, no delegation.
fn open_result(encoder: &mut Encoder) {
    encoder.u32(nfs4::op::OPEN).u32(0);
    encoder.u32(1);
    encoder.bytes.extend_from_slice(&[4; 12]);
    encoder.u32(1).u64(1).u64(2).u32(0).u32(0).u32(0);
}

/// The results of the NFSv4.1 calls [`nfs4_calls`] makes, in order.
fn nfs4_results() -> Vec<Vec<u8>> {
    use nfs4::op;
    let handle = [8u8; 20];
    vec![
        compound(1, |e| {
            e.u32(op::EXCHANGE_ID).u32(0).u64(0x1234).u32(1);
            e.u32(0).u32(0);
        }),
        compound(1, |e| {
            e.u32(op::CREATE_SESSION).u32(0);
            e.bytes.extend_from_slice(&[3; 16]);
            e.u32(1).u32(0);
            e.u32(0)
                .u32(1 << 20)
                .u32(1 << 20)
                .u32(4096)
                .u32(8)
                .u32(4)
                .u32(0);
            e.u32(0).u32(4096).u32(4096).u32(0).u32(2).u32(1).u32(0);
        }),
        compound(2, |e| {
            sequence_ok(e);
            e.u32(58).u32(0);
        }),
        compound(5, |e| {
            sequence_ok(e);
            e.u32(op::PUTROOTFH).u32(0);
            e.u32(op::LOOKUP).u32(0);
            e.u32(op::LOOKUP).u32(0);
            e.u32(op::GETFH).u32(0).opaque(&handle);
        }),
        compound(3, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            e.u32(op::GETATTR).u32(0);
            // TYPE (1), SIZE (4), MAXREAD (30), MAXWRITE (31); SPACE_AVAIL (42), SPACE_TOTAL (44).
            e.u32(2).u32((1 << 1) | (1 << 4) | (1 << 30) | (1 << 31));
            e.u32((1 << 10) | (1 << 12));
            let values = xdr(|v| {
                v.u32(1)
                    .u64(4096)
                    .u64(1 << 20)
                    .u64(1 << 20)
                    .u64(1 << 30)
                    .u64(1 << 31);
            });
            e.opaque(&values);
        }),
        compound(3, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            e.u32(op::ACCESS).u32(0).u32(0x3f).u32(0x3f);
        }),
        compound(3, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            open_result(e);
        }),
        compound(3, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            e.u32(op::WRITE).u32(0).u32(100).u32(2).u64(9);
        }),
        compound(3, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            e.u32(op::COMMIT).u32(0).u64(9);
        }),
        compound(3, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            e.u32(op::CLOSE).u32(0).u32(2);
            e.bytes.extend_from_slice(&[4; 12]);
        }),
        compound(4, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            open_result(e);
            e.u32(op::GETFH).u32(0).opaque(&handle);
        }),
        compound(3, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            e.u32(op::REMOVE).u32(0).u32(1).u64(1).u64(2);
        }),
    ]
}

/// Sets up an NFSv4.1 client and session on a scripted server at `port` and makes every call
/// of [`Nfs4Client`] once; the first error ends it.
fn nfs4_calls(port: u16, timeout: Duration) -> Result<(), String> {
    let credentials = Credentials {
        uid: 1000,
        gid: 1000,
        machine: "fuzz".into(),
    };
    let shown = |error: nfs3::NfsError| error.to_string();
    let mut client =
        Nfs4Client::open("127.0.0.1", port, timeout, credentials, 4, 1 << 20).map_err(shown)?;
    let handle = client.lookup(&["export", "file"]).map_err(shown)?;
    client.attributes(&handle, "file").map_err(shown)?;
    client.access(&handle, 0x3f, "file").map_err(shown)?;
    let stateid: Stateid = client.open_existing(&handle, true, "file").map_err(shown)?;
    client
        .write(&handle, stateid, 0, &[5; 100], "file")
        .map_err(shown)?;
    client.commit(&handle, "file").map_err(shown)?;
    client.close(&handle, stateid, "file").map_err(shown)?;
    client.create(&handle, "new", "new").map_err(shown)?;
    client.remove(&handle, "new", "new").map_err(shown)?;
    Ok(())
}

/// Runs the NFSv4.1 calls against a server answering them, call `altered` changed by
/// `change` (given the whole record), bounded.
fn nfs4_exchange(
    altered: usize,
    change: impl Fn(Vec<u8>) -> Vec<u8> + Send + Sync + 'static,
) -> Result<Result<(), String>, TestCaseError> {
    let results = nfs4_results();
    let server = rpc_server(move |call, xid| {
        // DESTROY_SESSION and anything after the script: a plain success.
        let results = results
            .get(call)
            .cloned()
            .unwrap_or_else(|| compound(0, |_| {}));
        let record = rpc_record(xid, &results);
        Some(if call == altered {
            (change(record), true)
        } else {
            (record, false)
        })
    });
    let (port, timeout) = (server.port, reply_timeout(altered));
    bounded(format!("NFSv4.1 call {altered}"), move || {
        nfs4_calls(port, timeout)
    })
}

/// How a record is altered: its body mutated (the mark fixed up to the new length, the xid
/// kept), or the whole record, mark included.
fn alter_record(edits: Vec<Edit>, keep_frame: bool) -> impl Fn(Vec<u8>) -> Vec<u8> {
    move |record| {
        if !keep_frame {
            return apply(&record, &edits, false);
        }
        let mut body = apply(&record[8..], &edits, false);
        let mut altered = Vec::with_capacity(body.len() + 8);
        altered.extend_from_slice(&(0x8000_0000 | (body.len() as u32 + 4)).to_be_bytes());
        altered.extend_from_slice(&record[4..8]);
        altered.append(&mut body);
        altered
    }
}

#[test]
fn rpc_reply_headers_of_arbitrary_bytes_never_panic() {
    check(256, prop::collection::vec(any::<u8>(), 0..128), |bytes| {
        let mut decoder = Decoder::new(&bytes);
        if let Err(error) = rpc::reply_header(&mut decoder) {
            shown_safely(&error)?;
        }
        let mut decoder = Decoder::new(&bytes);
        let _ = nfs4::reply_head(&mut decoder);
        let _ = nfs4::result_head(&mut decoder, nfs4::op::SEQUENCE);
        let _ = nfs4::sequence_result(&mut decoder);
        let _ = Stateid::decode(&mut Decoder::new(&bytes));
        let mut decoder = Decoder::new(&bytes);
        let _ = nfs3::post_op_attributes(&mut decoder);
        let _ = nfs3::skip_wcc_data(&mut decoder);
        Ok(())
    });
}

#[test]
fn records_of_arbitrary_marks_are_bounded() {
    check(
        256,
        (
            prop::collection::vec((word_value(), 0usize..64), 1..12),
            any::<u8>(),
        ),
        |(fragments, fill)| {
            let mut stream = Vec::new();
            for (mark, length) in &fragments {
                stream.extend_from_slice(&mark.to_be_bytes());
                stream.extend(std::iter::repeat_n(fill, *length));
            }
            let mut record = Vec::new();
            let limit = 256;
            if rpc::read_record(&mut stream.as_slice(), &mut record, limit).is_ok() {
                prop_assert!(record.len() <= limit);
            }
            prop_assert!(record.capacity() <= 4 * limit, "{}", record.capacity());
            Ok(())
        },
    );
}

#[test]
fn a_record_of_endless_empty_fragments_is_cut_off() {
    // Marks of 0 bytes, never the last: the reader stops after MAX_FRAGMENTS.
    let mut endless = std::io::repeat(0);
    let mut record = Vec::new();
    let error = rpc::read_record(&mut endless, &mut record, 1024).unwrap_err();
    assert!(error.to_string().contains("fragments"), "{error}");
}

#[test]
fn a_compound_failing_with_no_results_is_an_error() {
    // A failed COMPOUND that claims no results: the failed operation is not named by
    // counting back from zero.
    let records: Vec<Vec<u8>> = nfs4_results();
    let head = records[3].clone();
    let outcome = nfs4_exchange(3, move |record| {
        let xid = u32::from_be_bytes(record[4..8].try_into().unwrap());
        let mut failed = head.clone();
        failed[..4].copy_from_slice(&10_002u32.to_be_bytes());
        failed[8..12].copy_from_slice(&0u32.to_be_bytes());
        rpc_record(xid, &failed)
    })
    .unwrap();
    assert!(outcome.is_err(), "{outcome:?}");
}

#[test]
fn an_rpc_server_answering_other_calls_forever_is_cut_off() {
    let server = rpc_server(|call, xid| {
        (call < 10).then(|| {
            let mut endless = Vec::new();
            for other in 1..=200u32 {
                endless.extend(rpc_record(xid.wrapping_add(other), &[0, 0, 0, 0]));
            }
            (endless, false)
        })
    });
    let port = server.port;
    let outcome = bounded("other replies".into(), move || {
        nfs3_calls(port, UNALTERED_TIMEOUT)
    })
    .unwrap();
    let error = outcome.unwrap_err();
    assert!(error.contains("not made"), "{error}");
}

#[test]
fn mutated_nfs3_replies_never_panic() {
    mutated_replies(192, nfs3_results().len(), nfs3_exchange, alter_record);
}

#[test]
fn mutated_nfs4_replies_never_panic() {
    mutated_replies(192, nfs4_results().len(), nfs4_exchange, alter_record);
}

#[test]
fn nfs_replies_of_arbitrary_bytes_never_panic() {
    check(
        96,
        (
            0..4usize,
            prop::collection::vec(any::<u8>(), 0..200),
            any::<bool>(),
        ),
        |(altered, results, v4)| {
            let change = move |record: Vec<u8>| {
                let xid = u32::from_be_bytes(record[4..8].try_into().unwrap());
                rpc_record(xid, &results)
            };
            let outcome = if v4 {
                nfs4_exchange(altered, change)?
            } else {
                nfs3_exchange(altered, change)?
            };
            if let Err(error) = outcome {
                prop_assert!(!error.chars().any(char::is_control), "{error:?}");
            }
            Ok(())
        },
    );
}

// ---------------------------------------------------------------------------------------
// NBD.

const NBD_OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
const NBD_OPT_GO: u32 = 7;
const NBD_REP_ACK: u32 = 1;
const NBD_REP_INFO: u32 = 3;
const NBD_SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// The export size the scripted NBD server offers.
const NBD_EXPORT_BYTES: u64 = 8192;

fn nbd_option_reply(reply: u32, data: &[u8]) -> Vec<u8> {
    let mut message = NBD_OPTION_REPLY_MAGIC.to_be_bytes().to_vec();
    message.extend_from_slice(&NBD_OPT_GO.to_be_bytes());
    message.extend_from_slice(&reply.to_be_bytes());
    message.extend_from_slice(&(data.len() as u32).to_be_bytes());
    message.extend_from_slice(data);
    message
}

/// What a fixed newstyle server sends up to the end of a successful NBD_OPT_GO.
fn nbd_handshake() -> Vec<u8> {
    let mut bytes = b"NBDMAGICIHAVEOPT".to_vec();
    bytes.extend_from_slice(&3u16.to_be_bytes());
    let mut export = 0u16.to_be_bytes().to_vec();
    export.extend_from_slice(&NBD_EXPORT_BYTES.to_be_bytes());
    // Flags: has flags, flush, FUA.
    export.extend_from_slice(&(1u16 | 4 | 8).to_be_bytes());
    bytes.extend(nbd_option_reply(NBD_REP_INFO, &export));
    let mut sizes = 3u16.to_be_bytes().to_vec();
    for size in [512u32, 4096, 1 << 20] {
        sizes.extend_from_slice(&size.to_be_bytes());
    }
    bytes.extend(nbd_option_reply(NBD_REP_INFO, &sizes));
    bytes.extend(nbd_option_reply(NBD_REP_ACK, &[]));
    bytes
}

/// How a scripted NBD server answers.
#[derive(Clone, Debug)]
struct NbdScript {
    /// The handshake is altered by these.
    handshake: Vec<Edit>,
    /// Which reply is altered (counting the requests), and how.
    altered: usize,
    reply: Vec<Edit>,
}

/// Serves the NBD handshake, then answers each request (a simple reply, with data for a
/// READ), as `script` alters them; closes once the altered reply is sent.
fn nbd_server(script: NbdScript) -> Scripted {
    Scripted::start(Arc::new(move |_, mut stream| {
        let handshake = apply(&nbd_handshake(), &script.handshake, false);
        if stream
            .write_all(&handshake[..18.min(handshake.len())])
            .is_err()
        {
            return;
        }
        // Client flags, then NBD_OPT_GO (header and data).
        let mut flags = [0u8; 4];
        let mut header = [0u8; 16];
        if stream.read_exact(&mut flags).is_err() || stream.read_exact(&mut header).is_err() {
            return;
        }
        let mut data = vec![0u8; u32::from_be_bytes(header[12..16].try_into().unwrap()) as usize];
        if stream.read_exact(&mut data).is_err()
            || stream
                .write_all(&handshake[18.min(handshake.len())..])
                .is_err()
        {
            return;
        }
        if !script.handshake.is_empty() {
            // An altered handshake is all the client gets.
            let _ = stream.shutdown(std::net::Shutdown::Write);
            return;
        }
        for answered in 0.. {
            let mut request = [0u8; 28];
            if stream.read_exact(&mut request).is_err() {
                return;
            }
            let kind = u16::from_be_bytes([request[6], request[7]]);
            let length = u32::from_be_bytes(request[24..28].try_into().unwrap());
            if kind == 2 {
                return;
            }
            if kind == 1 {
                let mut data = vec![0u8; length.min(1 << 20) as usize];
                if stream.read_exact(&mut data).is_err() {
                    return;
                }
            }
            let mut reply = NBD_SIMPLE_REPLY_MAGIC.to_be_bytes().to_vec();
            reply.extend_from_slice(&0u32.to_be_bytes());
            reply.extend_from_slice(&request[8..16]);
            if kind == 0 {
                reply.extend(std::iter::repeat_n(0x5a, length.min(1 << 20) as usize));
            }
            if answered == script.altered {
                let _ = stream.write_all(&apply(&reply, &script.reply, false));
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return;
            }
            if stream.write_all(&reply).is_err() {
                return;
            }
        }
    }))
}

fn nbd_probe(port: u16, timeout: Duration) -> Result<Result<(), String>, TestCaseError> {
    let target = NetworkTarget::parse(&format!("nbd://127.0.0.1:{port}/export")).unwrap();
    bounded(format!("NBD probe of port {port}"), move || {
        nbd::probe(&target, timeout)
            .map(drop)
            .map_err(|error| error.to_string())
    })
}

/// Drives an NBD engine against a scripted server (see [`nbd_server`]).
fn nbd_engine_exchange(script: NbdScript) -> Result<Result<(), String>, TestCaseError> {
    let timeout = reply_timeout(script.altered);
    let server = nbd_server(script);
    let target = NetworkTarget::parse(&format!("nbd://127.0.0.1:{}/export", server.port)).unwrap();
    bounded(format!("NBD engine on port {}", server.port), move || {
        let mut engine = NbdEngine::open(&target, &engine_options(timeout))
            .map_err(|error| error.to_string())?;
        drive(&mut engine, 1)
    })
}

#[test]
fn mutated_nbd_io_replies_never_panic() {
    check(128, (0usize..5, edits()), |(altered, reply)| {
        let script = NbdScript {
            handshake: Vec::new(),
            altered,
            reply,
        };
        match nbd_engine_exchange(script)? {
            Err(error) => a_sound_error(&error),
            Ok(()) => Ok(()),
        }
    });
}

#[test]
fn mutated_nbd_handshakes_and_replies_never_panic() {
    check(
        192,
        (prop_oneof![Just(Vec::new()), edits()], 0usize..3, edits()),
        |(handshake, altered, reply)| {
            let server = nbd_server(NbdScript {
                handshake,
                altered,
                reply,
            });
            if let Err(error) = nbd_probe(server.port, NET_TIMEOUT)? {
                prop_assert!(!error.chars().any(char::is_control), "{error:?}");
                prop_assert!(
                    error.contains("127.0.0.1"),
                    "the server is not named: {error}"
                );
            }
            Ok(())
        },
    );
}

// ---------------------------------------------------------------------------------------
// SMB2.

const SMB_STATUS_NOT_SUPPORTED: u32 = 0xC000_00BB;

/// An SMB2 response message (header and body) to `message_id`.
fn smb_response(command: u16, status: u32, message_id: u64, body: &[u8]) -> Vec<u8> {
    let mut message = vec![0u8; wire::HEADER_BYTES];
    message[..4].copy_from_slice(&wire::PROTOCOL_ID);
    message[4..6].copy_from_slice(&64u16.to_le_bytes());
    message[8..12].copy_from_slice(&status.to_le_bytes());
    message[12..14].copy_from_slice(&command.to_le_bytes());
    message[14..16].copy_from_slice(&64u16.to_le_bytes());
    message[16..20].copy_from_slice(&wire::FLAG_RESPONSE.to_le_bytes());
    message[24..32].copy_from_slice(&message_id.to_le_bytes());
    message[36..40].copy_from_slice(&1u32.to_le_bytes());
    message[40..48].copy_from_slice(&0x1234u64.to_le_bytes());
    message.extend_from_slice(body);
    message
}

/// An NTLM CHALLENGE message with a timestamp in its target information.
fn ntlm_challenge() -> Vec<u8> {
    let mut info = Vec::new();
    info.extend_from_slice(&2u16.to_le_bytes());
    info.extend_from_slice(&4u16.to_le_bytes());
    info.extend_from_slice(&[b'S', 0, b'V', 0]);
    info.extend_from_slice(&7u16.to_le_bytes());
    info.extend_from_slice(&8u16.to_le_bytes());
    info.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    info.extend_from_slice(&[0; 4]);
    let mut message = b"NTLMSSP\0".to_vec();
    message.extend_from_slice(&2u32.to_le_bytes());
    message.extend_from_slice(&[0, 0, 0, 0, 56, 0, 0, 0]);
    message.extend_from_slice(&0x628a_8215u32.to_le_bytes());
    message.extend_from_slice(&[9; 8]);
    message.extend_from_slice(&[0; 8]);
    message.extend_from_slice(&(info.len() as u16).to_le_bytes());
    message.extend_from_slice(&(info.len() as u16).to_le_bytes());
    message.extend_from_slice(&56u32.to_le_bytes());
    message.extend_from_slice(&[6, 1, 0, 0, 0, 0, 0, 15]);
    message.extend(info);
    message
}

/// The body of a NEGOTIATE response choosing `dialect` (with the negotiate contexts of 3.1.1).
fn smb_negotiate_body(dialect: u16) -> Vec<u8> {
    let mut body = vec![0u8; 64];
    body[0..2].copy_from_slice(&65u16.to_le_bytes());
    body[2..4].copy_from_slice(&1u16.to_le_bytes());
    body[4..6].copy_from_slice(&dialect.to_le_bytes());
    // DFS, leasing, large MTU, multichannel.
    body[24..28].copy_from_slice(&0x0fu32.to_le_bytes());
    for at in [28, 32, 36] {
        body[at..at + 4].copy_from_slice(&(1u32 << 20).to_le_bytes());
    }
    if dialect == 0x0311 {
        let contexts: [(u16, Vec<u8>); 3] = [
            (1, {
                let mut data = vec![1, 0, 32, 0, 1, 0];
                data.extend_from_slice(&[7; 32]);
                data
            }),
            (2, vec![1, 0, 2, 0]),
            (8, vec![1, 0, 2, 0]),
        ];
        body[6..8].copy_from_slice(&(contexts.len() as u16).to_le_bytes());
        body[60..64].copy_from_slice(&128u32.to_le_bytes());
        for (kind, data) in contexts {
            connection::push_negotiate_context(&mut body, kind, &data);
        }
    }
    body
}

/// The response a simple SMB2 server gives to `request` (a message without its transport
/// header), the `setups`-th SESSION_SETUP counted from 0.
fn smb_answer(request: &[u8], dialect: u16, setups: &mut usize) -> Vec<u8> {
    if request.len() < wire::HEADER_BYTES {
        return Vec::new();
    }
    let command = u16::from_le_bytes([request[12], request[13]]);
    let message_id = u64::from_le_bytes(request[24..32].try_into().unwrap());
    let body = &request[wire::HEADER_BYTES..];
    let ok = |response: &[u8]| smb_response(command, 0, message_id, response);
    use wire::command as c;
    match command {
        c::NEGOTIATE => ok(&smb_negotiate_body(dialect)),
        c::SESSION_SETUP => {
            *setups += 1;
            let mut response = vec![9, 0, 0, 0, 72, 0, 0, 0];
            if *setups == 1 {
                let challenge = ntlm_challenge();
                response[6..8].copy_from_slice(&(challenge.len() as u16).to_le_bytes());
                response.extend(challenge);
                smb_response(command, 0xC000_0016, message_id, &response)
            } else {
                response.push(0);
                ok(&response)
            }
        }
        c::TREE_CONNECT => {
            let mut response = vec![0u8; 16];
            response[0] = 16;
            response[2] = 1;
            response[12..16].copy_from_slice(&0x001f_01ffu32.to_le_bytes());
            ok(&response)
        }
        c::CREATE => {
            let mut response = vec![0u8; 89];
            response[0] = 89;
            response[48..56].copy_from_slice(&NBD_EXPORT_BYTES.to_le_bytes());
            let directory = body.len() > 44 && body[40] & 1 != 0;
            response[56] = if directory { 0x10 } else { 0x80 };
            response[64..80].copy_from_slice(&[6; 16]);
            ok(&response)
        }
        c::QUERY_INFO => {
            let info: Vec<u8> = if body.get(2) == Some(&2) {
                let mut info = Vec::new();
                for value in [1u64 << 20, 1 << 19, 1 << 19] {
                    info.extend_from_slice(&value.to_le_bytes());
                }
                info.extend_from_slice(&8u32.to_le_bytes());
                info.extend_from_slice(&512u32.to_le_bytes());
                info
            } else {
                42u64.to_le_bytes().to_vec()
            };
            let mut response = vec![9, 0, 72, 0];
            response.extend_from_slice(&(info.len() as u32).to_le_bytes());
            response.extend(info);
            ok(&response)
        }
        c::IOCTL => {
            let mut response = vec![0u8; 48];
            response[0] = 49;
            response[32..36].copy_from_slice(&112u32.to_le_bytes());
            response[36..40].copy_from_slice(&304u32.to_le_bytes());
            for (index, last) in [(0u8, false), (1, true)] {
                let mut entry = vec![0u8; 152];
                entry[0..4].copy_from_slice(&(if last { 0u32 } else { 152 }).to_le_bytes());
                entry[8] = 1;
                entry[16..24].copy_from_slice(&10_000_000_000u64.to_le_bytes());
                entry[24] = 2;
                entry[28..32].copy_from_slice(&[10, 0, 0, index + 1]);
                response.extend(entry);
            }
            ok(&response)
        }
        c::CLOSE => {
            let mut response = vec![0u8; 60];
            response[0] = 60;
            ok(&response)
        }
        c::WRITE => {
            let mut response = vec![0u8; 17];
            response[0] = 17;
            let count = body
                .get(4..8)
                .map_or([0; 4], |count| count.try_into().unwrap());
            response[4..8].copy_from_slice(&count);
            ok(&response)
        }
        c::READ => {
            let length = body.get(4..8).map_or(0, |length| {
                u32::from_le_bytes(length.try_into().unwrap()).min(1 << 20)
            });
            let mut response = vec![0u8; 16];
            response[0] = 17;
            response[2] = 80;
            response[4..8].copy_from_slice(&length.to_le_bytes());
            response.extend(std::iter::repeat_n(0x5a, length as usize));
            ok(&response)
        }
        c::FLUSH => ok(&[4, 0, 0, 0]),
        c::SET_INFO => ok(&[2, 0]),
        _ => smb_response(
            command,
            SMB_STATUS_NOT_SUPPORTED,
            message_id,
            &[9, 0, 0, 0, 0, 0, 0, 0, 0],
        ),
    }
}

/// How a scripted SMB server answers.
#[derive(Clone, Debug)]
struct SmbScript {
    dialect: u16,
    /// Which response is altered (counting every response of every connection), and how:
    /// the message only (the transport header fixed up), or the whole frame.
    altered: usize,
    edits: Vec<Edit>,
    keep_frame: bool,
    /// Every response grants this many credits instead of 64.
    credits: Option<u16>,
}

fn smb_server(script: SmbScript) -> Scripted {
    Scripted::start(Arc::new(move |answered, mut stream| {
        let mut setups = 0;
        loop {
            let mut head = [0u8; 4];
            if stream.read_exact(&mut head).is_err() {
                return;
            }
            let length = u32::from_be_bytes(head) as usize;
            if length > 1 << 20 {
                return;
            }
            let mut request = vec![0u8; length];
            if stream.read_exact(&mut request).is_err() {
                return;
            }
            let mut message = smb_answer(&request, script.dialect, &mut setups);
            if let Some(credits) = script.credits {
                message[14..16].copy_from_slice(&credits.to_le_bytes());
            }
            let index = answered.fetch_add(1, Ordering::SeqCst);
            let altered = index == script.altered;
            let message = if altered && script.keep_frame {
                apply(&message, &script.edits, true)
            } else {
                message
            };
            let mut frame = (message.len() as u32).to_be_bytes().to_vec();
            frame.extend(message);
            let frame = if altered && !script.keep_frame {
                apply(&frame, &script.edits, true)
            } else {
                frame
            };
            if stream.write_all(&frame).is_err() || altered {
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return;
            }
        }
    }))
}

fn smb_credentials() -> SmbCredentials {
    SmbCredentials {
        user: "fuzz".into(),
        password: "secret".into(),
        domain: String::new(),
    }
}

/// Finds a file (connection, login, share, CREATE, QUERY_INFO, IOCTL …) on a scripted
/// server at `port`.
fn smb_find(port: u16, timeout: Duration) -> Result<Result<(), String>, TestCaseError> {
    let url = SmbUrl::parse(&format!("smb://fuzz@127.0.0.1:{port}/share/dir/file")).unwrap();
    bounded(format!("SMB find on port {port}"), move || {
        smb::find(&url, &smb_credentials(), SmbSecurity::default(), timeout)
            .map(drop)
            .map_err(|error| error.to_string())
    })
}

#[test]
fn mutated_smb_responses_never_panic() {
    check(
        256,
        (
            prop::sample::select(vec![0x0210u16, 0x0300, 0x0302, 0x0311]),
            0usize..10,
            edits(),
            any::<bool>(),
        ),
        |(dialect, altered, edits, keep_frame)| {
            let server = smb_server(SmbScript {
                dialect,
                altered,
                edits,
                keep_frame,
                credits: None,
            });
            if let Err(error) = smb_find(server.port, NET_TIMEOUT)? {
                prop_assert!(!error.chars().any(char::is_control), "{error:?}");
                prop_assert!(
                    error.contains("127.0.0.1"),
                    "the server is not named: {error}"
                );
            }
            Ok(())
        },
    );
}

#[test]
fn smb_messages_of_arbitrary_bytes_never_panic() {
    check(
        512,
        prop::collection::vec(any::<u8>(), 0..160),
        |mut bytes| {
            if let Ok(header) = wire::response_header(&bytes) {
                prop_assert!(bytes.len() >= wire::HEADER_BYTES, "{header:?}");
            }
            if bytes.len() >= 4 && coin(&bytes) {
                bytes[..4].copy_from_slice(&wire::PROTOCOL_ID);
            }
            let _ = wire::response_header(&bytes);
            let _ = smb::connection::open_frame(&mut bytes, None, None, "server");
            Ok(())
        },
    );
}

#[test]
fn mutated_sealed_and_signed_messages_never_panic() {
    use smb::crypto::{Cipher, Sealer, Signer, TRANSFORM_HEADER_BYTES, TRANSFORM_PROTOCOL_ID};
    check(
        256,
        (
            prop::sample::select(Cipher::OFFERED.to_vec()),
            prop_oneof![Just(Vec::new()), edits()],
            prop::collection::vec(any::<u8>(), 0..96),
            any::<bool>(),
        ),
        |(cipher, edits, junk, smb3)| {
            let (ours, theirs) = (vec![1u8; cipher.key_bytes()], vec![2u8; cipher.key_bytes()]);
            let client = Sealer::new(cipher, &ours, &theirs, 0x1234);
            let mut server = Sealer::new(cipher, &theirs, &ours, 0x1234);
            let message = smb_response(wire::command::READ, 0, 7, &[17, 0, 80, 0, 4, 0, 0, 0]);
            let mut frame = vec![0u8; TRANSFORM_HEADER_BYTES];
            frame.extend_from_slice(&message);
            server.seal(&mut frame);
            let mut altered = apply(&frame, &edits, true);
            let opened = smb::connection::open_frame(&mut altered, None, Some(&client), "server");
            if edits.is_empty() {
                let range = opened.map_err(TestCaseError::fail)?;
                prop_assert_eq!(&altered[range], &message[..]);
            }
            let mut junk_frame = TRANSFORM_PROTOCOL_ID.to_vec();
            junk_frame.extend_from_slice(&junk);
            let _ = smb::connection::open_frame(&mut junk_frame, None, Some(&client), "server");
            // Signed messages: a wrong signature is an error, whatever the bytes.
            let signer = Signer::new(smb3, &[3; 16]);
            let mut signed = apply(&message, &edits, true);
            if signed.len() >= 4 {
                signed[..4].copy_from_slice(&wire::PROTOCOL_ID);
            }
            let _ = smb::connection::open_frame(&mut signed, Some(&signer), None, "server");
            Ok(())
        },
    );
}

/// A coin from the bytes themselves (half the cases get a valid protocol id).
fn coin(bytes: &[u8]) -> bool {
    bytes.iter().fold(0u8, |sum, byte| sum.wrapping_add(*byte)) % 2 == 0
}

#[test]
fn endless_interim_responses_are_cut_off() {
    // Every response STATUS_PENDING (async) granting 65535 credits: the client gives up
    // after MAX_INTERIM_RESPONSES, and never overflows its count of credits.
    let server = Scripted::start(Arc::new(|_, mut stream| {
        let mut head = [0u8; 4];
        let mut request = vec![0u8; 4096];
        if stream.read_exact(&mut head).is_err() {
            return;
        }
        let length = (u32::from_be_bytes(head) as usize).min(4096);
        if stream.read_exact(&mut request[..length]).is_err() {
            return;
        }
        let message_id = u64::from_le_bytes(request[24..32].try_into().unwrap());
        let mut pending = smb_response(0, 0x0000_0103, message_id, &[9, 0, 0, 0, 0, 0, 0, 0, 0]);
        pending[14..16].copy_from_slice(&u16::MAX.to_le_bytes());
        pending[16..20].copy_from_slice(&(wire::FLAG_RESPONSE | wire::FLAG_ASYNC).to_le_bytes());
        let mut frame = (pending.len() as u32).to_be_bytes().to_vec();
        frame.extend(pending);
        let many = frame.repeat(70_000);
        let _ = stream.write_all(&many);
    }));
    let port = server.port;
    let outcome = smb_find(port, UNALTERED_TIMEOUT).unwrap();
    let error = outcome.unwrap_err();
    assert!(error.contains("interim"), "{error}");
}

#[test]
fn a_query_info_response_without_a_body_is_an_error() {
    // A QUERY_INFO success with no body at all (header only): an error, not a panic.
    let server = Scripted::start(Arc::new(|_, mut stream| {
        let mut setups = 0;
        loop {
            let mut head = [0u8; 4];
            if stream.read_exact(&mut head).is_err() {
                return;
            }
            let mut request = vec![0u8; u32::from_be_bytes(head) as usize];
            if stream.read_exact(&mut request).is_err() {
                return;
            }
            let mut message = smb_answer(&request, 0x0300, &mut setups);
            if u16::from_le_bytes([request[12], request[13]]) == wire::command::QUERY_INFO {
                message.truncate(wire::HEADER_BYTES);
            }
            let mut frame = (message.len() as u32).to_be_bytes().to_vec();
            frame.extend(message);
            if stream.write_all(&frame).is_err() {
                return;
            }
        }
    }));
    let error = smb_find(server.port, UNALTERED_TIMEOUT)
        .unwrap()
        .unwrap_err();
    assert!(error.contains("too short"), "{error}");
}

// ---------------------------------------------------------------------------------------
// The engines' pipelined READ and WRITE replies.

/// The bytes each request of [`drive`] moves.
const IO_BYTES: u32 = 4096;

/// What [`drive`] says of a completion claiming more bytes than its request asked.
const OVERCLAIMED: &str = "a completion claimed more bytes than asked";

/// Puts `rounds` rounds of two reads and two writes through `engine`, then makes the writes
/// durable; the first error ends it. A completion never claims more bytes than were asked.
fn drive(engine: &mut impl Engine, rounds: usize) -> Result<(), String> {
    let shown = |error: iopath::engine::EngineError| error.to_string();
    for round in 0..rounds {
        for slot in 0..4u32 {
            engine
                .submit(IoRequest {
                    slot,
                    file: 0,
                    direction: if slot < 2 {
                        Direction::Read
                    } else {
                        Direction::Write
                    },
                    offset: u64::from(IO_BYTES) * (round as u64 * 4 + u64::from(slot)),
                    length: IO_BYTES,
                })
                .map_err(shown)?;
        }
        engine.flush().map_err(shown)?;
        let mut done = 0;
        let mut completions = [Completion::default(); 4];
        while done < 4 {
            let reaped = engine.reap(1, &mut completions).map_err(shown)?;
            for completion in &completions[..reaped] {
                if completion.result > i64::from(IO_BYTES) {
                    return Err(format!(
                        "{OVERCLAIMED}: {} bytes of a {IO_BYTES}-byte request",
                        completion.result
                    ));
                }
            }
            done += reaped;
        }
    }
    engine.sync_data().map_err(shown)
}

fn engine_options(net_timeout: Duration) -> EngineOptions {
    EngineOptions {
        net_timeout,
        ..EngineOptions::new(4, IO_BYTES as usize)
    }
}

/// The results of an NFSv3 READ, WRITE or COMMIT call (the record after its mark), or
/// `None` for another call.
fn nfs3_io_results(call: &[u8]) -> Option<Vec<u8>> {
    let mut decoder = Decoder::new(call);
    decoder.skip(20, "call header").ok()?;
    let procedure = decoder.u32("procedure").ok()?;
    for _ in 0..2 {
        decoder.u32("flavor").ok()?;
        decoder.opaque(400, "authentication").ok()?;
    }
    decoder.opaque(64, "handle").ok()?;
    decoder.u64("offset").ok()?;
    let count = decoder.u32("count").ok()?;
    Some(match procedure {
        nfs3::procedure::READ => xdr(|e| {
            e.u32(0)
                .u32(0)
                .u32(count)
                .u32(0)
                .opaque(&vec![0x5a; count as usize]);
        }),
        nfs3::procedure::WRITE => xdr(|e| {
            e.u32(0).u32(0).u32(0).u32(count).u32(0).u64(9);
        }),
        nfs3::procedure::COMMIT => xdr(|e| {
            e.u32(0).u32(0).u32(0).u64(9);
        }),
        _ => return None,
    })
}

/// Drives an NFSv3 engine against a server whose `altered`-th reply `change` alters.
fn nfs3_engine_exchange(
    altered: usize,
    change: impl Fn(Vec<u8>) -> Vec<u8> + Send + Sync + 'static,
) -> Result<Result<(), String>, TestCaseError> {
    let server = Scripted::start(Arc::new(move |answered, mut stream| {
        let mut call = Vec::new();
        while rpc::read_record(&mut stream, &mut call, 1 << 20).is_ok() && call.len() >= 4 {
            let xid = u32::from_be_bytes(call[..4].try_into().unwrap());
            let Some(results) = nfs3_io_results(&call) else {
                return;
            };
            let record = rpc_record(xid, &results);
            let last = answered.fetch_add(1, Ordering::SeqCst) == altered;
            let record = if last { change(record) } else { record };
            if stream.write_all(&record).is_err() || last {
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return;
            }
        }
    }));
    let url = NfsUrl::parse(&format!("nfs://127.0.0.1:{}/export/file", server.port)).unwrap();
    nfs_engine_driven(url, format!("NFSv3 engine, reply {altered}"), altered)
}

/// Opens an NFS engine on `url` (a scripted server in which reply `altered` is changed) and
/// drives it (see [`drive`]), bounded.
fn nfs_engine_driven(
    url: NfsUrl,
    what: String,
    altered: usize,
) -> Result<Result<(), String>, TestCaseError> {
    let timeout = reply_timeout(altered);
    bounded(what, move || {
        let mut engine = NfsEngine::open(&url, vec![7; 16], &engine_options(timeout))
            .map_err(|error| error.to_string())?;
        drive(&mut engine, 2)
    })
}

/// A client's error after mutated replies: neither a completion claiming more bytes than
/// asked nor control characters.
fn a_sound_error(error: &str) -> Result<(), TestCaseError> {
    prop_assert!(!error.contains(OVERCLAIMED), "{error}");
    prop_assert!(!error.chars().any(char::is_control), "{error:?}");
    Ok(())
}

/// Property over `cases` cases: one of the first `replies` replies a client (a probe's calls
/// or an engine) gets, mutated and given to it by `exchange` (altered reply, its change), ends
/// in a value or an error that neither claims more bytes than asked nor carries control
/// characters.
fn mutated_replies<F: Fn(Vec<u8>) -> Vec<u8>>(
    cases: u32,
    replies: usize,
    exchange: impl Fn(usize, F) -> Result<Result<(), String>, TestCaseError>,
    change: impl Fn(Vec<Edit>, bool) -> F,
) {
    check(
        cases,
        (0..replies, edits(), any::<bool>()),
        |(altered, edits, keep_frame)| match exchange(altered, change(edits, keep_frame))? {
            Err(error) => a_sound_error(&error),
            Ok(()) => Ok(()),
        },
    );
}

#[test]
fn mutated_nfs3_io_replies_never_panic() {
    mutated_replies(128, 9, nfs3_engine_exchange, alter_record);
}

/// The results of an NFSv4.1 READ, WRITE or COMMIT COMPOUND of the engine (the record after
/// its mark), or `None` for another call.
fn nfs41_io_results(call: &[u8]) -> Option<Vec<u8>> {
    use nfs4::op;
    let mut decoder = Decoder::new(call);
    decoder.skip(24, "call header").ok()?;
    for _ in 0..2 {
        decoder.u32("flavor").ok()?;
        decoder.opaque(400, "authentication").ok()?;
    }
    decoder.opaque(64, "tag").ok()?;
    decoder.skip(8, "minor version, count").ok()?;
    if decoder.u32("operation").ok()? != op::SEQUENCE {
        return None;
    }
    decoder.skip(32, "SEQUENCE").ok()?;
    if decoder.u32("operation").ok()? == op::PUTFH {
        decoder.opaque(128, "handle").ok()?;
    }
    let operation = decoder.u32("operation").ok()?;
    Some(match operation {
        op::READ => {
            decoder.skip(16 + 8, "stateid, offset").ok()?;
            let count = decoder.u32("count").ok()?;
            compound(3, |e| {
                sequence_ok(e);
                e.u32(op::PUTFH).u32(0);
                e.u32(op::READ)
                    .u32(0)
                    .u32(0)
                    .opaque(&vec![0x5a; count as usize]);
            })
        }
        op::WRITE => {
            decoder.skip(16 + 8 + 4, "stateid, offset, stable").ok()?;
            let count = decoder.opaque(1 << 20, "data").ok()?.len() as u32;
            compound(3, |e| {
                sequence_ok(e);
                e.u32(op::PUTFH).u32(0);
                e.u32(op::WRITE).u32(0).u32(count).u32(0).u64(9);
            })
        }
        op::COMMIT => compound(3, |e| {
            sequence_ok(e);
            e.u32(op::PUTFH).u32(0);
            e.u32(op::COMMIT).u32(0).u64(9);
        }),
        _ => return None,
    })
}

/// Drives an NFSv4.1 engine (client, session and OPEN first) against a server whose
/// `altered`-th reply `change` alters.
fn nfs41_engine_exchange(
    altered: usize,
    change: impl Fn(Vec<u8>) -> Vec<u8> + Send + Sync + 'static,
) -> Result<Result<(), String>, TestCaseError> {
    let setup = nfs4_results();
    let setup = [0, 1, 2, 6].map(|index| setup[index].clone());
    let server = Scripted::start(Arc::new(move |answered, mut stream| {
        let mut call = Vec::new();
        while rpc::read_record(&mut stream, &mut call, 1 << 20).is_ok() && call.len() >= 4 {
            let xid = u32::from_be_bytes(call[..4].try_into().unwrap());
            let index = answered.fetch_add(1, Ordering::SeqCst);
            let results = match setup.get(index) {
                Some(results) => results.clone(),
                None => nfs41_io_results(&call).unwrap_or_else(|| compound(0, |_| {})),
            };
            let record = rpc_record(xid, &results);
            let last = index == altered;
            let record = if last { change(record) } else { record };
            if stream.write_all(&record).is_err() || last {
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return;
            }
        }
    }));
    let url = NfsUrl::parse(&format!(
        "nfs://127.0.0.1:{}/export/file?version=4.1",
        server.port
    ))
    .unwrap();
    nfs_engine_driven(url, format!("NFSv4.1 engine, reply {altered}"), altered)
}

#[test]
fn mutated_nfs41_io_replies_never_panic() {
    mutated_replies(64, 13, nfs41_engine_exchange, alter_record);
}

/// Drives an SMB engine against a scripted server (see [`smb_server`]).
fn smb_engine_exchange(script: SmbScript) -> Result<Result<(), String>, TestCaseError> {
    let timeout = reply_timeout(script.altered);
    let server = smb_server(script);
    let url = SmbUrl::parse(&format!("smb://fuzz@127.0.0.1:{}/share/file", server.port)).unwrap();
    bounded(format!("SMB engine on port {}", server.port), move || {
        let mut engine = SmbEngine::open(
            &url,
            &smb_credentials(),
            SmbSecurity::default(),
            &engine_options(timeout),
            true,
        )
        .map_err(|error| error.to_string())?;
        drive(&mut engine, 2)
    })
}

#[test]
fn credit_grants_of_none_or_all_end_or_work() {
    for (credits, works) in [(0u16, false), (1, true), (u16::MAX, true)] {
        let script = SmbScript {
            dialect: 0x0300,
            altered: usize::MAX,
            edits: Vec::new(),
            keep_frame: true,
            credits: Some(credits),
        };
        let started = Instant::now();
        let outcome = smb_engine_exchange(script).unwrap();
        assert_eq!(outcome.is_ok(), works, "{credits} credits: {outcome:?}");
        assert!(started.elapsed() < ENDED_WITHIN, "{:?}", started.elapsed());
    }
}

#[test]
fn endless_interim_responses_to_a_read_are_cut_off() {
    // READs answered with STATUS_PENDING (async) without end: the engine gives up instead of
    // reading them for as long as they come.
    let server = Scripted::start(Arc::new(|_, mut stream| {
        let mut setups = 0;
        loop {
            let mut head = [0u8; 4];
            if stream.read_exact(&mut head).is_err() {
                return;
            }
            let mut request = vec![0u8; (u32::from_be_bytes(head) as usize).min(1 << 20)];
            if stream.read_exact(&mut request).is_err() {
                return;
            }
            let command = u16::from_le_bytes([request[12], request[13]]);
            let mut message = smb_answer(&request, 0x0300, &mut setups);
            if command == wire::command::READ {
                message = smb_response(command, 0x0000_0103, 0, &[9, 0, 0, 0, 0, 0, 0, 0, 0]);
                message[16..20]
                    .copy_from_slice(&(wire::FLAG_RESPONSE | wire::FLAG_ASYNC).to_le_bytes());
                message[24..32].copy_from_slice(&request[24..32]);
                let mut frame = (message.len() as u32).to_be_bytes().to_vec();
                frame.extend(message);
                let started = Instant::now();
                while started.elapsed() < ENDED_WITHIN && stream.write_all(&frame).is_ok() {}
                return;
            }
            let mut frame = (message.len() as u32).to_be_bytes().to_vec();
            frame.extend(message);
            if stream.write_all(&frame).is_err() {
                return;
            }
        }
    }));
    let url = SmbUrl::parse(&format!("smb://fuzz@127.0.0.1:{}/share/file", server.port)).unwrap();
    let started = Instant::now();
    let outcome = bounded("endless interim responses".into(), move || {
        let mut engine = SmbEngine::open(
            &url,
            &smb_credentials(),
            SmbSecurity::default(),
            &engine_options(UNALTERED_TIMEOUT),
            true,
        )
        .map_err(|error| error.to_string())?;
        drive(&mut engine, 1)
    })
    .unwrap();
    let error = outcome.unwrap_err();
    assert!(error.contains("interim"), "{error}");
    assert!(started.elapsed() < ENDED_WITHIN, "{:?}", started.elapsed());
}

#[test]
fn mutated_smb_io_responses_never_panic() {
    check(
        48,
        (
            prop::sample::select(vec![0x0210u16, 0x0300]),
            // Setup takes 6 or 7 responses: the later ones answer READs and WRITEs.
            5usize..16,
            edits(),
            any::<bool>(),
        ),
        |(dialect, altered, edits, keep_frame)| {
            let script = SmbScript {
                dialect,
                altered,
                edits,
                keep_frame,
                credits: None,
            };
            match smb_engine_exchange(script)? {
                Err(error) => a_sound_error(&error),
                Ok(()) => Ok(()),
            }
        },
    );
}

// ---------------------------------------------------------------------------------------
// Real servers' replies, altered on their way: nbdkit, nfs-ganesha, smbd.

/// A change to what a server sends on one connection: `bytes` written over the stream from
/// byte `at` on.
#[derive(Clone, Debug)]
struct StreamEdit {
    connection: usize,
    at: usize,
    bytes: Vec<u8>,
}

fn stream_edit(connections: usize, span: usize) -> impl Strategy<Value = StreamEdit> {
    (
        0..connections,
        prop_oneof![0..256usize, 0..span],
        prop_oneof![
            any::<u8>().prop_map(|byte| vec![byte]),
            half_value().prop_map(|value| value.to_le_bytes().to_vec()),
            half_value().prop_map(|value| value.to_be_bytes().to_vec()),
            word_value().prop_map(|value| value.to_le_bytes().to_vec()),
            word_value().prop_map(|value| value.to_be_bytes().to_vec()),
        ],
    )
        .prop_map(|(connection, at, bytes)| StreamEdit {
            connection,
            at,
            bytes,
        })
}

/// A proxy on 127.0.0.1 to the server at `upstream`, altering what the server sends on one
/// of the connections made through it (numbered from 0) by `edit`.
fn altering_proxy(upstream: u16, edit: Option<StreamEdit>) -> Scripted {
    Scripted::start(Arc::new(move |connections, client| {
        let index = connections.fetch_add(1, Ordering::SeqCst);
        let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
            return;
        };
        let (mut from_client, mut to_server) =
            (client.try_clone().unwrap(), server.try_clone().unwrap());
        let forward = std::thread::spawn(move || {
            let _ = std::io::copy(&mut from_client, &mut to_server);
            let _ = to_server.shutdown(std::net::Shutdown::Write);
        });
        let (mut from_server, mut to_client) = (server, client);
        let _ = from_server.set_read_timeout(Some(ENDED_WITHIN));
        let edit = edit.as_ref().filter(|edit| edit.connection == index);
        let mut offset = 0usize;
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let got = match from_server.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(got) => got,
            };
            if let Some(edit) = edit {
                for (position, byte) in edit.bytes.iter().enumerate() {
                    let at = edit.at + position;
                    if (offset..offset + got).contains(&at) {
                        chunk[at - offset] = *byte;
                    }
                }
            }
            offset += got;
            if to_client.write_all(&chunk[..got]).is_err() {
                break;
            }
        }
        let _ = to_client.shutdown(std::net::Shutdown::Both);
        let _ = forward.join();
    }))
}

/// Runs `probe` through a proxy to `upstream` altering one reply by each case's edit.
fn real_server_cases(
    what: &str,
    upstream: u16,
    connections: usize,
    span: usize,
    probe: impl Fn(u16, Duration) -> Result<(), String> + Clone + Send + 'static,
) {
    // Through the proxy unchanged, the probe works (with time to spare).
    let proxy = altering_proxy(upstream, None);
    let (port, unchanged) = (proxy.port, probe.clone());
    bounded(format!("{what} unchanged"), move || {
        unchanged(port, Duration::from_secs(10))
    })
    .unwrap()
    .unwrap_or_else(|error| panic!("{what} through the proxy: {error}"));
    check(24, stream_edit(connections, span), |edit| {
        let proxy = altering_proxy(upstream, Some(edit.clone()));
        let (port, probe) = (proxy.port, probe.clone());
        if let Err(error) = bounded(format!("{what} {edit:?}"), move || probe(port, NET_TIMEOUT))? {
            prop_assert!(!error.chars().any(char::is_control), "{error:?}");
        }
        Ok(())
    });
}

#[test]
fn altered_replies_of_nbdkit_never_panic() {
    let Some(nbdkit) = support::devices::required_tool("nbdkit", "nbdkit") else {
        return;
    };
    let port = support::free_port();
    let mut child = std::process::Command::new(nbdkit)
        .args([
            "--exit-with-parent",
            "-f",
            "-i",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ])
        .args(["memory", "1M"])
        .spawn()
        .unwrap();
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < ENDED_WITHIN, "nbdkit did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    real_server_cases("nbdkit", port, 1, 80_000, |port, timeout| {
        let target = NetworkTarget::parse(&format!("nbd://127.0.0.1:{port}/")).unwrap();
        nbd::probe(&target, timeout)
            .map(drop)
            .map_err(|error| error.to_string())
    });
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn altered_replies_of_nfs_ganesha_never_panic() {
    let Some(ganesha) = support::nas::GaneshaServer::start("RW") else {
        return;
    };
    std::fs::write(ganesha.export_directory().join("file"), vec![7u8; 65536]).unwrap();
    let mount_port = ganesha.mount_port;
    real_server_cases(
        "nfs-ganesha NFSv3",
        ganesha.port,
        1,
        2000,
        move |port, timeout| {
            let url = NfsUrl::parse(&format!(
                "nfs://127.0.0.1:{port}/export/file?mountport={mount_port}"
            ))
            .unwrap();
            nfs::probe(&url, None, timeout)
                .map(drop)
                .map_err(|error| error.to_string())
        },
    );
    real_server_cases(
        "nfs-ganesha NFSv4.1",
        ganesha.port,
        1,
        3000,
        |port, timeout| {
            let url =
                NfsUrl::parse(&format!("nfs://127.0.0.1:{port}/export/file?version=4.1")).unwrap();
            nfs::probe(&url, None, timeout)
                .map(drop)
                .map_err(|error| error.to_string())
        },
    );
}

#[test]
fn altered_replies_of_smbd_never_panic() {
    let Some(samba) = support::nas::SambaServer::start(&[]) else {
        return;
    };
    std::fs::write(samba.share_directory().join("file"), vec![7u8; 65536]).unwrap();
    real_server_cases("smbd", samba.port, 1, 4000, |port, timeout| {
        let url = SmbUrl::parse(&format!(
            "smb://{}@127.0.0.1:{port}/{}/file",
            support::nas::SAMBA_USER,
            support::nas::SAMBA_SHARE
        ))
        .unwrap();
        let credentials = SmbCredentials {
            user: support::nas::SAMBA_USER.into(),
            password: support::nas::SAMBA_PASSWORD.into(),
            domain: String::new(),
        };
        smb::find(&url, &credentials, SmbSecurity::default(), timeout)
            .map(drop)
            .map_err(|error| error.to_string())
    });
}

// ---------------------------------------------------------------------------------------
// The unchanged replies, and hostile servers end to end.

#[test]
fn the_unchanged_replies_work() {
    nfs3_exchange(usize::MAX, |record| record).unwrap().unwrap();
    nfs4_exchange(usize::MAX, |record| record).unwrap().unwrap();
    let server = nbd_server(NbdScript {
        handshake: Vec::new(),
        altered: usize::MAX,
        reply: Vec::new(),
    });
    nbd_probe(server.port, UNALTERED_TIMEOUT).unwrap().unwrap();
    nbd_engine_exchange(NbdScript {
        handshake: Vec::new(),
        altered: usize::MAX,
        reply: Vec::new(),
    })
    .unwrap()
    .unwrap();
    nfs3_engine_exchange(usize::MAX, |record| record)
        .unwrap()
        .unwrap();
    nfs41_engine_exchange(usize::MAX, |record| record)
        .unwrap()
        .unwrap();
    for dialect in [0x0210, 0x0300] {
        smb_engine_exchange(SmbScript {
            dialect,
            altered: usize::MAX,
            edits: Vec::new(),
            keep_frame: true,
            credits: None,
        })
        .unwrap()
        .unwrap();
    }
    for dialect in [0x0210, 0x0300, 0x0302] {
        let server = smb_server(SmbScript {
            dialect,
            altered: usize::MAX,
            edits: Vec::new(),
            keep_frame: true,
            credits: None,
        });
        smb_find(server.port, UNALTERED_TIMEOUT).unwrap().unwrap();
    }
}

/// What a hostile server does with every connection.
#[derive(Clone, Copy, Debug)]
enum Hostile {
    /// Sends nothing and keeps the connection open.
    Silent,
    /// Sends the same byte without end.
    Endless(u8),
    /// Sends these bytes, then waits.
    Says(&'static [u8]),
}

fn hostile(behaviour: Hostile) -> Scripted {
    Scripted::start(Arc::new(move |_, mut stream| match behaviour {
        Hostile::Silent => std::thread::sleep(ENDED_WITHIN),
        Hostile::Endless(byte) => {
            let chunk = [byte; 64 * 1024];
            let started = Instant::now();
            while started.elapsed() < ENDED_WITHIN && stream.write_all(&chunk).is_ok() {}
        }
        Hostile::Says(bytes) => {
            let _ = stream.write_all(bytes);
            std::thread::sleep(ENDED_WITHIN);
        }
    }))
}

/// An NBD greeting, then a refusal of the export whose message carries control characters.
const NBD_REFUSAL: &[u8] =
    b"NBDMAGICIHAVEOPT\x00\x03\x00\x03\xe8\x89\x04\x55\x65\xa9\x00\x00\x00\x07\
    \x80\x00\x00\x06\x00\x00\x00\x0a\x1b[31mno\x07\r\n";

/// The hostile servers each probe must give up on.
const HOSTILE: [Hostile; 7] = [
    Hostile::Silent,
    Hostile::Endless(0),
    Hostile::Endless(0xFF),
    Hostile::Endless(b'A'),
    // A record mark of 2 GiB (the last fragment), and an SMB frame of 2 GiB.
    Hostile::Says(&[0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1]),
    Hostile::Says(b"\x1b[31mNBDMAGIC\x07garbage\r\n"),
    Hostile::Says(NBD_REFUSAL),
];

/// Runs `probe` against each hostile server: an error naming the server, without control
/// characters, within [`ENDED_WITHIN`].
fn against_hostile_servers(
    protocol: &str,
    probe: impl Fn(u16) -> Result<(), String> + Clone + Send + 'static,
) {
    for behaviour in HOSTILE {
        let server = hostile(behaviour);
        let port = server.port;
        let started = Instant::now();
        let probe = probe.clone();
        let outcome = bounded(format!("{protocol} against {behaviour:?}"), move || {
            probe(port)
        })
        .unwrap();
        let error = outcome.expect_err(&format!("{protocol} accepted {behaviour:?}"));
        assert!(
            started.elapsed() < ENDED_WITHIN,
            "{protocol} against {behaviour:?} took {:?}",
            started.elapsed()
        );
        assert!(
            !error.chars().any(char::is_control),
            "{protocol} against {behaviour:?}: {error:?}"
        );
        assert!(
            error.contains(&format!("127.0.0.1:{port}")) || error.contains("127.0.0.1"),
            "{protocol} against {behaviour:?} does not name the server: {error}"
        );
    }
}

#[test]
fn nbd_probes_give_up_on_hostile_servers() {
    against_hostile_servers("NBD", |port| nbd_probe(port, NET_TIMEOUT).unwrap());
}

#[test]
fn nfs_probes_give_up_on_hostile_servers() {
    for version in ["3", "4.1"] {
        against_hostile_servers(&format!("NFSv{version}"), move |port| {
            let mount = if version == "3" {
                format!("&mountport={port}")
            } else {
                String::new()
            };
            let url = NfsUrl::parse(&format!(
                "nfs://127.0.0.1:{port}/export/file?version={version}{mount}"
            ))
            .unwrap();
            nfs::probe(&url, None, NET_TIMEOUT)
                .map(drop)
                .map_err(|error| error.to_string())
        });
    }
}

#[test]
fn smb_probes_give_up_on_hostile_servers() {
    against_hostile_servers("SMB", |port| smb_find(port, NET_TIMEOUT).unwrap());
}

#[test]
fn the_cli_names_a_hostile_server_and_exits_with_an_error() {
    let urls: [fn(u16) -> String; 3] = [
        |port| format!("nbd://127.0.0.1:{port}/export"),
        |port| format!("nfs://127.0.0.1:{port}/export/file?mountport={port}"),
        |port| format!("smb://fuzz@127.0.0.1:{port}/share/file"),
    ];
    for url in urls {
        for behaviour in [
            Hostile::Says(NBD_REFUSAL),
            Hostile::Endless(0),
            Hostile::Silent,
        ] {
            let server = hostile(behaviour);
            let url = url(server.port);
            let started = Instant::now();
            let output = support::history::command(env!("CARGO_BIN_EXE_iopath"))
                .args(["run", &url, "--net-timeout", "300ms", "--duration", "1"])
                .args(["--no-history", "--size", "1m"])
                .env("IOPATH_SMB_PASSWORD", "secret")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                matches!(output.status.code(), Some(1 | 2)),
                "{url} {behaviour:?}: {:?}\n{stderr}",
                output.status
            );
            assert!(
                stderr.contains("127.0.0.1"),
                "{url} {behaviour:?}: {stderr}"
            );
            assert!(
                !stderr.contains("panicked"),
                "{url} {behaviour:?}: {stderr}"
            );
            assert!(
                !stderr.chars().any(|c| c.is_control() && c != '\n'),
                "{url} {behaviour:?}: {stderr:?}"
            );
            assert!(
                started.elapsed() < ENDED_WITHIN,
                "{url} {behaviour:?}: {:?}",
                started.elapsed()
            );
        }
    }
}
