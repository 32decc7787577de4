//! [`NfsEngine`]: NFSv3 READ and WRITE pipelined on one TCP connection, one RPC per I/O and up
//! to the queue depth in flight; or NFSv4.1, one COMPOUND (SEQUENCE, PUTFH, READ or WRITE)
//! per I/O.
//!
//! - **NFSv4.1: one client per engine.** Each engine (each worker) sets up a client id and a
//!   session of its own on its own connection (EXCHANGE_ID with an owner of its own,
//!   CREATE_SESSION asking for as many fore channel slots as the queue depth), and opens the
//!   file itself (share access read, or read and write; deny none), so workers share no state
//!   and no lock. A server that grants fewer slots than the queue depth gets no more than
//!   it granted in flight: a request that finds no free slot waits, in order, until a reply
//!   frees one, and is counted as a slot stall ([`NfsEngine::slots`]). Dropping the engine
//!   closes the file and ends the session and the client id.
//!
//! - **Transaction ids carry slots.** A call's xid is `sequence << 16 | slot`, so a reply finds
//!   its slot without a table, and a reply for a slot that is not waiting (or for an older
//!   sequence) is a protocol error, not a silent mix-up.
//! - **Sends never block.** Calls are encoded into one outgoing buffer at submit and sent by
//!   `flush` with `MSG_DONTWAIT`; when the socket's send buffer is full the engine reads
//!   replies meanwhile (keeping them for `reap`), so a server that answers before it reads on
//!   cannot deadlock against us however large the writes in flight.
//! - **Each reply handed back as it arrives.** Once `reap` has the completions it was asked
//!   for, it reads on only while a whole reply is waiting (buffered, or in the socket's unread
//!   bytes), never for one whose first bytes have come: over a paced link each 1 MiB READ
//!   reply takes its own time on the wire, and waiting for it would make the worker refill
//!   its queue in lockstep batches of the depth.
//! - **Bounded reads.** Replies are received into one buffer (several small replies in one
//!   `recv`) and parsed where they lie; a reply may not exceed the slot buffer size plus
//!   [`REPLY_OVERHEAD_BYTES`], checked on each record mark before its bytes are awaited. The
//!   server must send something at least once per network timeout; once the run's stop signal
//!   is raised, requests in flight get [`STOP_GRACE`](crate::engine::volume::STOP_GRACE) instead.
//! - **Large READ data lands in its slot** (NFSv3). A READ reply in one fragment whose data has not all
//!   arrived yet is parsed as far as its data's length; the data already received is copied to
//!   the slot's buffer and the rest is received straight into it (with the bytes after it into
//!   the receive buffer, in one `recvmsg`). After a READ of [`LARGE_READ_BYTES`] or more, the
//!   receive buffer takes at most one reply header at a time, so the next large reply's data
//!   is not received into it first. Replies in several fragments are put together and copied.
//! - **Durability.** Writes are `FILE_SYNC` with `EngineOptions::write_through`, else
//!   `UNSTABLE`; [`Engine::sync_data`] then sends COMMIT (with nothing in flight).
//! - **Failures.** An NFS status other than OK is a completion with the matching negative
//!   errno (`EACCES`, `ENOSPC`, `EROFS`, `ESTALE` …); a dead or lying connection fails
//!   `flush` / `reap` with an [`EngineError`] naming the operation.

use super::nfs3::{self, NFS_PROGRAM, NfsError, Stability, procedure, skip_wcc_data, status_errno};
use super::nfs4::{self, Nfs4Client, SessionFacts, Stateid};
use super::rpc::{self, Credentials, RpcConnection, RpcError, call_header, finish_record};
use super::target4::COMPOUND_OVERHEAD_BYTES;
use super::xdr::{self, Decoder, Encoder};
use crate::engine::{
    Completion, Engine, EngineError, EngineOptions, IoRequest, StopSignal, pipelined, sys,
};
use crate::result::{Capabilities, Direction};
use crate::targets::network_target::{NetworkTarget, NfsUrl, NfsVersion};
use std::collections::VecDeque;
use std::io::{self, IoSliceMut};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Highest queue depth of one engine (slots are the low 16 bits of an xid, one value kept for
/// COMMIT).
pub const MAX_QUEUE_DEPTH: u32 = 0xFFFF;
/// Bytes a READ or WRITE reply may carry besides the data: RPC header with the largest
/// verifier, status and attributes.
pub const REPLY_OVERHEAD_BYTES: usize = 1024;
/// Longest single blocking receive: the stop signal and the deadline are looked at this often.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// Receive buffer beyond two of the longest replies (many small replies arrive in one `recv`).
const RECEIVE_EXTRA_BYTES: usize = 64 * 1024;
/// A READ of at least this many bytes limits what the receive buffer takes at once to one
/// reply header (its record mark and [`REPLY_OVERHEAD_BYTES`]), so the data of the next such
/// reply is received straight into its slot.
pub const LARGE_READ_BYTES: u32 = 16 * 1024;
/// The most the receive buffer takes at once while READs are large.
const HEADER_WINDOW_BYTES: usize = 4 + REPLY_OVERHEAD_BYTES;
/// The slot value of a COMMIT's xid.
const COMMIT_SLOT: u32 = 0xFFFF;
const ENGINE: &str = "nfs";

#[derive(Debug)]
struct Slot {
    buffer: Vec<u8>,
    /// The xid of the call in flight, if one is.
    waiting: Option<(u32, Direction, u32)>,
    /// NFSv4.1: the request waits for a session slot (not sent yet).
    queued: bool,
    /// NFSv4.1: the session slot of the call in flight.
    session_slot: u32,
}

/// What the session's slot table was like for one NFSv4.1 engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotReport {
    /// Slots asked for: the queue depth.
    pub wanted: u32,
    /// Slots the server granted (CREATE_SESSION).
    pub granted: u32,
    /// Requests that waited for a free slot before they could be sent.
    pub stalls: u64,
}

/// An NFSv4.1 engine's session, open and slot table.
#[derive(Debug)]
struct Session41 {
    facts: SessionFacts,
    stateid: Stateid,
    /// The next sequence number of each session slot in use.
    sequences: Vec<u32>,
    /// Session slots no request holds (lowest last).
    free: Vec<u32>,
    /// Requests waiting for a session slot, oldest first.
    short_of_slots: VecDeque<IoRequest>,
    report: SlotReport,
}

/// The NFS engine on one file (NFSv3, or NFSv4.1 with a session of its own).
#[derive(Debug)]
pub struct NfsEngine {
    stream: TcpStream,
    handle: Vec<u8>,
    credentials: Credentials,
    stability: Stability,
    slots: Vec<Slot>,
    outgoing: Encoder,
    /// Bytes received and not parsed yet: `incoming[parsed..filled]`.
    incoming: Vec<u8>,
    parsed: usize,
    filled: usize,
    /// A reply that came in several fragments, put together.
    record: Vec<u8>,
    /// The longest reply accepted, bytes.
    max_record: usize,
    /// The last READ answered was of [`LARGE_READ_BYTES`] or more: receive one reply header at
    /// a time.
    large_reads: bool,
    ready: VecDeque<Completion>,
    in_flight: usize,
    sequence: u32,
    timeout: Duration,
    stop: StopSignal,
    server: String,
    capabilities: Capabilities,
    /// NFSv4.1's session; `None` for NFSv3.
    session: Option<Box<Session41>>,
}

fn operation(operation: &'static str, source: io::Error) -> EngineError {
    EngineError::Operation {
        engine: ENGINE,
        operation,
        source,
    }
}

fn protocol(problem: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, problem)
}

impl NfsEngine {
    /// Connects to the NFS service of `url` for I/O on the file `handle` (found by
    /// [`super::find`] or made by [`super::create_file`]).
    pub fn open(
        url: &NfsUrl,
        handle: Vec<u8>,
        options: &EngineOptions,
    ) -> Result<Self, EngineError> {
        let setup = |source| EngineError::Setup {
            engine: ENGINE,
            source,
        };
        if options.queue_depth == 0 || options.queue_depth > MAX_QUEUE_DEPTH {
            return Err(setup(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "queue depth {} (1 to {MAX_QUEUE_DEPTH})",
                    options.queue_depth
                ),
            )));
        }
        let named = |error: io::Error| {
            setup(io::Error::new(
                error.kind(),
                format!("{}: {error}", url.server),
            ))
        };
        let (stream, session) = match url.version {
            NfsVersion::V3 => (
                rpc::connect(&url.server.host, url.server.port, options.net_timeout)
                    .map_err(named)?,
                None,
            ),
            NfsVersion::V41 => {
                let (stream, session) = Self::open_session(url, &handle, options)
                    .map_err(|error| setup(io::Error::other(format!("{url}: {error}"))))?;
                (stream, Some(Box::new(session)))
            }
        };
        // Each blocking receive ends after a slice, to look at the deadline and the run's stop
        // signal.
        stream.set_read_timeout(Some(WAIT_SLICE)).map_err(named)?;
        let slots = (0..options.queue_depth)
            .map(|_| Slot {
                buffer: vec![0; options.buffer_size],
                waiting: None,
                queued: false,
                session_slot: 0,
            })
            .collect();
        let call_bytes = 256 + options.buffer_size;
        Ok(NfsEngine {
            stream,
            handle,
            credentials: Credentials::of_process(),
            stability: if options.write_through {
                Stability::FileSync
            } else {
                Stability::Unstable
            },
            slots,
            outgoing: Encoder {
                bytes: Vec::with_capacity(call_bytes * options.queue_depth as usize),
            },
            incoming: vec![
                0;
                2 * (options.buffer_size + REPLY_OVERHEAD_BYTES) + RECEIVE_EXTRA_BYTES
            ],
            parsed: 0,
            filled: 0,
            record: Vec::new(),
            max_record: options.buffer_size + REPLY_OVERHEAD_BYTES,
            large_reads: false,
            ready: VecDeque::with_capacity(options.queue_depth as usize),
            in_flight: 0,
            sequence: 0,
            timeout: options.net_timeout,
            stop: options.stop.clone(),
            server: url.server.to_string(),
            capabilities: Capabilities {
                max_queue_depth: options.queue_depth,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
                separates_submission: false,
            },
            session,
        })
    }

    /// Sets up an NFSv4.1 client and session of this engine's own (as many slots as the
    /// queue depth, messages for the largest block) and opens the file `handle` (for writing
    /// too unless the probe found it read-only); returns the connection for pipelined I/O.
    fn open_session(
        url: &NfsUrl,
        handle: &[u8],
        options: &EngineOptions,
    ) -> Result<(TcpStream, Session41), NfsError> {
        let credentials = Credentials::of_process();
        let connection = RpcConnection::open(
            &url.server.host,
            url.server.port,
            options.net_timeout,
            credentials.clone(),
        )
        .map_err(RpcError::from)?;
        let message_bytes = (options.buffer_size as u32).saturating_add(COMPOUND_OVERHEAD_BYTES);
        let mut client = Nfs4Client::on_connection(
            connection,
            &credentials,
            options.queue_depth,
            message_bytes,
        )?;
        let facts = client.facts().clone();
        if facts.max_request_bytes < message_bytes || facts.max_response_bytes < message_bytes {
            return Err(RpcError::Refused(format!(
                "the session takes messages of {} bytes at most, too small for {}-byte I/O",
                facts.max_request_bytes.min(facts.max_response_bytes),
                options.buffer_size
            ))
            .into());
        }
        let write = options
            .expected_volume
            .as_ref()
            .is_none_or(|volume| !volume.read_only);
        let stateid = client.open_existing(handle, write, &url.path)?;
        let (connection, facts, next_sequence) = client.into_parts();
        let used = facts.slots.min(options.queue_depth);
        let mut sequences = vec![1; used as usize];
        sequences[0] = next_sequence;
        Ok((
            connection.into_stream(),
            Session41 {
                report: SlotReport {
                    wanted: options.queue_depth,
                    granted: facts.slots,
                    stalls: 0,
                },
                facts,
                stateid,
                sequences,
                free: (0..used).rev().collect(),
                short_of_slots: VecDeque::with_capacity(options.queue_depth as usize),
            },
        ))
    }

    /// NFSv4.1: the session's slot table so far (asked for, granted, stalls); `None` for
    /// NFSv3.
    pub fn slots(&self) -> Option<SlotReport> {
        self.session.as_ref().map(|session| session.report)
    }

    /// Encodes `request` as a COMPOUND (SEQUENCE on a free session slot, PUTFH, READ or
    /// WRITE with the open's stateid) into `outgoing`; the caller checked a slot is free.
    fn encode41(&mut self, request: IoRequest) {
        let xid = self.next_xid(request.slot);
        let session_slot = self
            .session
            .as_mut()
            .and_then(|session| session.free.pop())
            .expect("a free session slot");
        let start = self.compound41_head(xid, session_slot);
        let session = self.session.as_ref().expect("NFSv4.1");
        let slot = &mut self.slots[request.slot as usize];
        if request.direction == Direction::Write {
            self.outgoing.u32(nfs4::op::WRITE);
            session.stateid.encode(&mut self.outgoing);
            self.outgoing
                .u64(request.offset)
                .u32(self.stability as u32)
                .opaque(&slot.buffer[..request.length as usize]);
        } else {
            self.outgoing.u32(nfs4::op::READ);
            session.stateid.encode(&mut self.outgoing);
            self.outgoing.u64(request.offset).u32(request.length);
        }
        finish_record(&mut self.outgoing, start);
        slot.waiting = Some((xid, request.direction, request.length));
        slot.queued = false;
        slot.session_slot = session_slot;
    }

    /// NFSv4.1: appends the call header of a COMPOUND of three operations, its SEQUENCE on
    /// `session_slot` and PUTFH of the file to `outgoing`; returns where the record starts.
    fn compound41_head(&mut self, xid: u32, session_slot: u32) -> usize {
        let session = self.session.as_ref().expect("NFSv4.1");
        let start = call_header(
            &mut self.outgoing,
            xid,
            NFS_PROGRAM,
            nfs4::NFS4_VERSION,
            nfs4::COMPOUND,
            &self.credentials,
        );
        nfs4::compound_head(&mut self.outgoing, 3);
        nfs4::sequence(
            &mut self.outgoing,
            &session.facts.session,
            session.sequences[session_slot as usize],
            session_slot,
            session.sequences.len() as u32 - 1,
        );
        nfs4::put_handle(&mut self.outgoing, &self.handle);
        start
    }

    /// NFSv4.1: moves requests that waited for a session slot into `outgoing` while slots
    /// are free; whether any was.
    fn encode_waiting(&mut self) -> bool {
        let mut moved = false;
        while let Some(session) = self.session.as_mut() {
            if session.free.is_empty() {
                break;
            }
            let Some(request) = session.short_of_slots.pop_front() else {
                break;
            };
            self.encode41(request);
            moved = true;
        }
        moved
    }

    /// Finds the file of an `nfs://` target again (MOUNT, LOOKUP) and connects to its server
    /// for I/O on it; a file that is gone, or whose size differs from
    /// `options.expected_volume`'s (the probe's, or the size it was created with), is refused.
    pub fn open_target(
        target: &NetworkTarget,
        options: &EngineOptions,
    ) -> Result<Self, EngineError> {
        let NetworkTarget::Nfs { url, .. } = target else {
            return Err(EngineError::Setup {
                engine: ENGINE,
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{target} is not an nfs:// target"),
                ),
            });
        };
        let setup = |problem: String| EngineError::Setup {
            engine: ENGINE,
            source: io::Error::other(problem),
        };
        let file = super::find(url, options.net_timeout).map_err(|error| setup(error.problem))?;
        let Some((handle, attributes)) = file.existing else {
            return Err(setup(format!("{url}: the file is gone from the server")));
        };
        EngineError::unless_same_volume(
            ENGINE,
            || url.server.to_string(),
            options.expected_volume.as_ref(),
            |found| found.size_bytes = attributes.size_bytes,
        )?;
        Self::open(url, handle, options)
    }

    /// How writes are made durable: `FILE_SYNC` on each, or `UNSTABLE` and COMMIT at
    /// [`Engine::sync_data`].
    pub fn stability(&self) -> Stability {
        self.stability
    }

    fn next_xid(&mut self, slot: u32) -> u32 {
        self.sequence = self.sequence.wrapping_add(1);
        (self.sequence << 16) | slot
    }

    /// Sends everything queued; reads replies into `ready` while the socket cannot take more.
    fn send_queued(&mut self) -> io::Result<()> {
        let outgoing = std::mem::take(&mut self.outgoing.bytes);
        let fd = self.stream.as_raw_fd();
        let sent = pipelined::send_all(fd, &outgoing, self.timeout, || {
            let completion = self.receive()?;
            self.ready.push_back(completion);
            Ok(())
        });
        self.outgoing.bytes = outgoing;
        sent.map_err(|error| pipelined::name_server(error, &self.server))?;
        self.outgoing.bytes.clear();
        Ok(())
    }

    /// Receives more bytes into `incoming` (see [`pipelined::receive_some`]).
    fn fill(&mut self) -> io::Result<()> {
        self.fill_at_most(usize::MAX)
    }

    /// Receives more bytes into `incoming`, at most `limit` (at least one).
    fn fill_at_most(&mut self, limit: usize) -> io::Result<()> {
        if self.parsed > 0 {
            self.incoming.copy_within(self.parsed..self.filled, 0);
            self.filled -= self.parsed;
            self.parsed = 0;
        }
        let end = self.incoming.len().min(self.filled.saturating_add(limit));
        self.filled += pipelined::receive_some(
            self.stream.as_raw_fd(),
            &mut self.incoming[self.filled..end],
            self.timeout,
            &self.stop,
            &self.server,
        )?;
        Ok(())
    }

    /// Receives into `incoming` while a reply's header is awaited: one header's worth after
    /// large READs, else as much as there is room for.
    fn fill_for_header(&mut self) -> io::Result<()> {
        if self.large_reads {
            let have = self.filled - self.parsed;
            self.fill_at_most(HEADER_WINDOW_BYTES.saturating_sub(have).max(1))
        } else {
            self.fill()
        }
    }

    /// The next whole reply, waiting for it: a range of `incoming` (one fragment, the usual
    /// case) or, for a reply in several fragments, `record`.
    fn next_record(&mut self) -> io::Result<(usize, usize, bool)> {
        let mut pieces = 0usize;
        self.record.clear();
        loop {
            while self.filled - self.parsed < 4 {
                self.fill()?;
            }
            let (length, last) = self.mark_at_parsed();
            if self.record.len() + length > self.max_record {
                return Err(protocol(format!(
                    "{} sent a reply of more than {} bytes",
                    self.server, self.max_record
                )));
            }
            while self.filled - self.parsed < 4 + length {
                self.fill()?;
            }
            let start = self.parsed + 4;
            self.parsed = start + length;
            if last && pieces == 0 {
                return Ok((start, start + length, false));
            }
            self.record
                .extend_from_slice(&self.incoming[start..start + length]);
            pieces += 1;
            if last {
                return Ok((0, self.record.len(), true));
            }
            if pieces >= rpc::MAX_FRAGMENTS {
                return Err(protocol(format!(
                    "{} sent a reply in more than {} fragments",
                    self.server,
                    rpc::MAX_FRAGMENTS
                )));
            }
        }
    }

    /// Reads one reply (waiting up to the timeout) and finishes its slot: a READ reply whose
    /// data has not all arrived goes straight into its slot ([`Self::receive_read_data`]).
    fn receive(&mut self) -> io::Result<Completion> {
        while self.filled - self.parsed < 4 {
            self.fill_for_header()?;
        }
        let (length, last) = self.mark_at_parsed();
        // NFSv3 only: an NFSv4.1 reply is a COMPOUND, received whole.
        if self.session.is_none()
            && last
            && length <= self.max_record
            && self.filled - self.parsed - 4 < length
        {
            // The reply's header (all of it, or as much as the longest header) first.
            let header = length.min(REPLY_OVERHEAD_BYTES);
            while self.filled - self.parsed - 4 < header {
                self.fill_for_header()?;
            }
            if let Some(completion) = self.receive_read_data(length)? {
                return Ok(completion);
            }
        }
        let (start, end, assembled) = self.next_record()?;
        let reply = if assembled {
            &self.record[start..end]
        } else {
            &self.incoming[start..end]
        };
        let mut decoder = Decoder::new(reply);
        let xid = rpc::reply_header(&mut decoder).map_err(|error| protocol(error.to_string()))?;
        let (slot, direction, length) = self.answered(xid)?;
        let entry = &mut self.slots[slot as usize];
        let result = if self.session.is_none() {
            Self::decode_result(&mut decoder, direction, length, &mut entry.buffer)
        } else {
            Self::decode_result41(&mut decoder, direction, length, &mut entry.buffer)
        }
        .map_err(|error| protocol(format!("{}: {error}", self.server)))?;
        if let Some(session) = self.session.as_mut() {
            // The reply frees its session slot for the slot's next sequence number.
            let session_slot = entry.session_slot as usize;
            session.sequences[session_slot] = session.sequences[session_slot].wrapping_add(1);
            session.free.push(entry.session_slot);
        }
        Ok(self.finish(slot, direction, length, result))
    }

    /// The slot waiting for the reply `xid`, with its call's direction and length; a reply to
    /// no call in flight is an error.
    fn answered(&self, xid: u32) -> io::Result<(u32, Direction, u32)> {
        let slot = xid & 0xFFFF;
        if slot == COMMIT_SLOT {
            return Err(protocol(format!(
                "{} answered a COMMIT that was not sent",
                self.server
            )));
        }
        let waiting = self
            .slots
            .get(slot as usize)
            .and_then(|entry| entry.waiting)
            .filter(|(expected, _, _)| *expected == xid);
        let Some((_, direction, length)) = waiting else {
            return Err(protocol(format!(
                "{} answered a call that was not made (xid {xid:#x})",
                self.server
            )));
        };
        Ok((slot, direction, length))
    }

    /// Frees `slot` and makes its completion.
    fn finish(&mut self, slot: u32, direction: Direction, length: u32, result: i64) -> Completion {
        if direction == Direction::Read && self.session.is_none() {
            self.large_reads = length >= LARGE_READ_BYTES;
        }
        self.slots[slot as usize].waiting = None;
        self.in_flight -= 1;
        Completion { slot, result }
    }

    /// For the one-fragment reply of `length` bytes at `parsed` (its header in `incoming`, its
    /// end not yet): when it is a successful READ reply whose data ends it, moves the data
    /// received so far into the slot's buffer, receives the rest straight into it, and
    /// finishes the slot. `None` (nothing consumed) for any other reply, which is then
    /// received whole.
    fn receive_read_data(&mut self, length: usize) -> io::Result<Option<Completion>> {
        let start = self.parsed + 4;
        let available = (self.filled - start).min(length);
        let mut decoder = Decoder::new(&self.incoming[start..start + available]);
        let parsed = (|| {
            let xid = rpc::reply_header(&mut decoder).ok()?;
            let status = decoder.u32("status").ok()?;
            nfs3::post_op_attributes(&mut decoder).ok()?;
            if status != 0 {
                return None;
            }
            decoder.u32("count").ok()?;
            decoder.bool("eof").ok()?;
            let data = decoder.u32("read data length").ok()? as usize;
            Some((xid, decoder.position(), data))
        })();
        let Some((xid, data_at, data_length)) = parsed else {
            return Ok(None);
        };
        let (slot, direction, asked) = self.answered(xid)?;
        if direction != Direction::Read {
            return Ok(None);
        }
        if data_length > asked as usize {
            return Err(protocol(format!(
                "{}: read data: {data_length} bytes announced, at most {asked} expected",
                self.server
            )));
        }
        let padded = data_length + xdr::padding(data_length);
        if data_at + padded != length {
            return Err(protocol(format!(
                "{} sent a READ reply of {length} bytes whose {data_length} bytes of data end \
                 at byte {}",
                self.server,
                data_at + padded
            )));
        }
        // The data received so far, then the rest straight into the slot's buffer; what
        // follows it (padding, the next replies) into `incoming`.
        let here = (self.filled - start - data_at).min(data_length);
        let buffer = &mut self.slots[slot as usize].buffer;
        buffer[..here].copy_from_slice(&self.incoming[start + data_at..start + data_at + here]);
        self.parsed = start + data_at + here;
        let mut received = here;
        if received < data_length {
            // Everything in `incoming` is consumed: it starts afresh.
            self.parsed = 0;
            self.filled = 0;
        }
        while received < data_length {
            // After a large READ, only the next reply's header joins the data.
            let window = if asked >= LARGE_READ_BYTES {
                HEADER_WINDOW_BYTES
            } else {
                self.incoming.len()
            };
            let got = pipelined::receive_some_vectored(
                self.stream.as_raw_fd(),
                &mut [
                    IoSliceMut::new(&mut buffer[received..data_length]),
                    IoSliceMut::new(&mut self.incoming[self.filled..window]),
                ],
                self.timeout,
                &self.stop,
                &self.server,
            )?;
            let into_data = got.min(data_length - received);
            received += into_data;
            self.filled += got - into_data;
        }
        let padding = padded - data_length;
        while self.filled - self.parsed < padding {
            self.fill_for_header()?;
        }
        self.parsed += padding;
        Ok(Some(self.finish(
            slot,
            Direction::Read,
            asked,
            data_length as i64,
        )))
    }

    /// Whether a whole reply can be read without waiting: `incoming` holds one, or it and the
    /// socket's unread bytes do. Readable bytes alone are not enough: the next 1 MiB READ
    /// reply takes a 1 Gbit/s link 9 ms to arrive, and waiting for it would hand the
    /// completions back in lockstep batches of the queue depth. (A reply in several fragments
    /// is judged by its first.)
    fn reply_waiting(&mut self) -> io::Result<bool> {
        if self.has_whole_record() {
            return Ok(true);
        }
        let fd = self.stream.as_raw_fd();
        let buffered = self.filled - self.parsed;
        if buffered < 4 {
            if buffered + sys::unread_bytes(fd)? < 4 {
                return Ok(false);
            }
            // The record mark has arrived: reading it does not wait.
            while self.filled - self.parsed < 4 {
                self.fill_for_header()?;
            }
        }
        let buffered = self.filled - self.parsed;
        Ok(buffered + sys::unread_bytes(fd)? >= 4 + self.mark_at_parsed().0)
    }

    /// Whether `incoming` holds a whole record already (no need to wait for the socket).
    fn has_whole_record(&self) -> bool {
        let available = self.filled - self.parsed;
        if available < 4 {
            return false;
        }
        available >= 4 + self.mark_at_parsed().0
    }

    /// The record mark at the start of the unparsed bytes of `incoming` (at least four):
    /// the fragment's length and whether it is the record's last.
    fn mark_at_parsed(&self) -> (usize, bool) {
        let at = self.parsed;
        rpc::record_mark([
            self.incoming[at],
            self.incoming[at + 1],
            self.incoming[at + 2],
            self.incoming[at + 3],
        ])
    }

    /// Reads an NFSv4.1 READ or WRITE COMPOUND's results; a failed SEQUENCE is an error (the
    /// session is broken), a failed PUTFH, READ or WRITE a completion's negative errno.
    fn decode_result41(
        decoder: &mut Decoder<'_>,
        direction: Direction,
        length: u32,
        buffer: &mut [u8],
    ) -> Result<i64, super::xdr::XdrError> {
        let (status, _) = nfs4::reply_head(decoder)?;
        let sequenced = nfs4::result_head(decoder, nfs4::op::SEQUENCE)?;
        if sequenced != 0 {
            return Err(super::xdr::XdrError(format!(
                "SEQUENCE failed: {}",
                nfs4::status_text(sequenced)
            )));
        }
        nfs4::sequence_result(decoder)?;
        if status != 0 {
            return Ok(nfs4::status_errno(status));
        }
        nfs4::result_head(decoder, nfs4::op::PUTFH)?;
        if direction == Direction::Read {
            nfs4::result_head(decoder, nfs4::op::READ)?;
            decoder.bool("eof")?;
            let data = decoder.opaque(length as usize, "read data")?;
            buffer[..data.len()].copy_from_slice(data);
            Ok(data.len() as i64)
        } else {
            nfs4::result_head(decoder, nfs4::op::WRITE)?;
            let count = decoder.u32("count")?;
            if count > length {
                return Err(super::xdr::XdrError(format!(
                    "{count} bytes written of a {length}-byte write"
                )));
            }
            Ok(i64::from(count))
        }
    }

    fn decode_result(
        decoder: &mut Decoder<'_>,
        direction: Direction,
        length: u32,
        buffer: &mut [u8],
    ) -> Result<i64, super::xdr::XdrError> {
        let status = decoder.u32("status")?;
        match direction {
            Direction::Read => {
                nfs3::post_op_attributes(decoder)?;
                if status != 0 {
                    return Ok(status_errno(status));
                }
                decoder.u32("count")?;
                decoder.bool("eof")?;
                let data = decoder.opaque(length as usize, "read data")?;
                buffer[..data.len()].copy_from_slice(data);
                Ok(data.len() as i64)
            }
            _ => {
                skip_wcc_data(decoder)?;
                if status != 0 {
                    return Ok(status_errno(status));
                }
                let count = decoder.u32("count")?;
                if count > length {
                    return Err(super::xdr::XdrError(format!(
                        "{count} bytes written of a {length}-byte write"
                    )));
                }
                Ok(i64::from(count))
            }
        }
    }
}

impl Engine for NfsEngine {
    fn name(&self) -> &'static str {
        ENGINE
    }

    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        &mut self.slots[slot].buffer
    }

    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        let slot = self.slots.get(request.slot as usize);
        pipelined::check_request(
            ENGINE,
            &request,
            self.slots.len(),
            slot.map(|slot| (slot.waiting.is_some() || slot.queued, slot.buffer.len())),
        )?;
        let procedure = match request.direction {
            Direction::Read => procedure::READ,
            Direction::Write => procedure::WRITE,
            other => {
                return Err(operation(
                    "submit",
                    io::Error::new(
                        io::ErrorKind::Unsupported,
                        format!("NFS has no {other:?} here (not supported yet)"),
                    ),
                ));
            }
        };
        if let Some(session) = self.session.as_mut() {
            self.in_flight += 1;
            if !session.short_of_slots.is_empty() || session.free.is_empty() {
                session.report.stalls += 1;
                session.short_of_slots.push_back(request);
                self.slots[request.slot as usize].queued = true;
            } else {
                self.encode41(request);
            }
            return Ok(());
        }
        let xid = self.next_xid(request.slot);
        let start = call_header(
            &mut self.outgoing,
            xid,
            NFS_PROGRAM,
            3,
            procedure,
            &self.credentials,
        );
        self.outgoing
            .opaque(&self.handle)
            .u64(request.offset)
            .u32(request.length);
        if request.direction == Direction::Write {
            self.outgoing.u32(self.stability as u32);
            self.outgoing
                .opaque(&self.slots[request.slot as usize].buffer[..request.length as usize]);
        }
        finish_record(&mut self.outgoing, start);
        self.slots[request.slot as usize].waiting = Some((xid, request.direction, request.length));
        self.in_flight += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), EngineError> {
        self.encode_waiting();
        self.send_queued()
            .map_err(|error| operation("flush", error))
    }

    fn reap(
        &mut self,
        min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        let mut written = 0;
        while written < completions.len() {
            if let Some(completion) = self.ready.pop_front() {
                completions[written] = completion;
                written += 1;
                continue;
            }
            if self.in_flight == 0 {
                break;
            }
            if self.encode_waiting() {
                self.send_queued()
                    .map_err(|error| operation("reap", error))?;
            }
            if written >= min_completions
                && !self
                    .reply_waiting()
                    .map_err(|error| operation("reap", error))?
            {
                break;
            }
            completions[written] = self.receive().map_err(|error| operation("reap", error))?;
            written += 1;
        }
        Ok(written)
    }

    fn sync_data(&mut self) -> Result<(), EngineError> {
        if self.stability == Stability::FileSync {
            return Ok(());
        }
        let failed = |error: io::Error| operation("COMMIT", error);
        if self.in_flight > 0 || !self.outgoing.bytes.is_empty() {
            return Err(failed(io::Error::other("requests are still in flight")));
        }
        self.sequence = self.sequence.wrapping_add(1);
        let xid = (self.sequence << 16) | COMMIT_SLOT;
        match self.session.as_ref() {
            None => {
                let start = call_header(
                    &mut self.outgoing,
                    xid,
                    NFS_PROGRAM,
                    3,
                    procedure::COMMIT,
                    &self.credentials,
                );
                self.outgoing.opaque(&self.handle).u64(0).u32(0);
                finish_record(&mut self.outgoing, start);
            }
            Some(_) => {
                // SEQUENCE on slot 0 (every slot is free), PUTFH, COMMIT of the whole file.
                let start = self.compound41_head(xid, 0);
                self.outgoing.u32(nfs4::op::COMMIT).u64(0).u32(0);
                finish_record(&mut self.outgoing, start);
            }
        }
        self.send_queued().map_err(failed)?;
        let (start, end, assembled) = self.next_record().map_err(failed)?;
        let reply = if assembled {
            &self.record[start..end]
        } else {
            &self.incoming[start..end]
        };
        let mut decoder = Decoder::new(reply);
        let replied =
            rpc::reply_header(&mut decoder).map_err(|error| failed(protocol(error.to_string())))?;
        if replied != xid {
            return Err(failed(protocol(format!(
                "{} answered another call (xid {replied:#x})",
                self.server
            ))));
        }
        let malformed = |error: super::xdr::XdrError| failed(protocol(error.to_string()));
        let Some(session) = self.session.as_mut() else {
            let status = decoder.u32("status").map_err(malformed)?;
            if status != 0 {
                return Err(failed(io::Error::other(format!(
                    "{}: {}",
                    self.server,
                    nfs3::status_text(status)
                ))));
            }
            return Ok(());
        };
        let (status, _) = nfs4::reply_head(&mut decoder).map_err(malformed)?;
        let sequenced = nfs4::result_head(&mut decoder, nfs4::op::SEQUENCE).map_err(malformed)?;
        if sequenced == 0 {
            session.sequences[0] = session.sequences[0].wrapping_add(1);
        }
        let status = if sequenced != 0 { sequenced } else { status };
        if status != 0 {
            return Err(failed(io::Error::other(format!(
                "{}: {}",
                self.server,
                nfs4::status_text(status)
            ))));
        }
        Ok(())
    }
}

impl Drop for NfsEngine {
    /// NFSv4.1: closes the file and ends the session and the client id (best effort, a
    /// couple of seconds at most), unless requests are still in flight (the server then
    /// forgets them when the lease runs out).
    fn drop(&mut self) {
        let Some(session) = self.session.take() else {
            return;
        };
        if self.in_flight > 0 || self.filled > self.parsed {
            return;
        }
        let Ok(stream) = self.stream.try_clone() else {
            return;
        };
        let mut connection = RpcConnection::from_stream(stream, self.credentials.clone());
        if connection.set_timeout(Duration::from_secs(2)).is_err() {
            return;
        }
        let mut client = Nfs4Client::from_parts(connection, session.facts, session.sequences[0]);
        let _ = client.close(&self.handle, session.stateid, "");
    }
}
