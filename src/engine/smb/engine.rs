//! [`SmbEngine`]: SMB2 READ and WRITE pipelined on one logged-in connection, up to the queue
//! depth in flight, within the credits the server grants.
//!
//! - **Credits.** Every request spends credits (one per 64 KiB on SMB 2.1+) and asks for
//!   enough to keep the whole queue depth in flight; a request that finds too few waits in
//!   submit order until responses grant more (a *credit stall*, counted: see
//!   [`SmbEngine::credits`]).
//! - **Message ids.** Each request takes the next ids (as many as its charge); a response
//!   finds its slot by the id it answers, and a response to no request in flight is a
//!   protocol error.
//! - **Signing and encryption** happen in place in one frame buffer (AES-128-CMAC or
//!   HMAC-SHA256; AES-GCM or AES-CCM), each response checked or decrypted the same way:
//!   nothing is allocated per I/O.
//! - **Sends never block**, as in the NFS engine: while the socket takes no more, responses
//!   are read and kept for `reap`.
//! - **Durability.** `EngineOptions::write_through` sets `WRITE_THROUGH` on every WRITE;
//!   otherwise [`Engine::sync_data`] sends FLUSH.
//! - **Failures.** An NT status on a READ or WRITE is a completion with the matching
//!   negative errno; a dead or lying server fails `flush` / `reap` with an [`EngineError`]
//!   naming it.

use super::connection::{
    MESSAGE_AT, SmbConnection, SmbSecurity, SmbSessionFacts, credit_charge, finish_frame,
    open_frame,
};
use super::crypto::TRANSFORM_HEADER_BYTES;
use super::target::{self, target_error};
use super::url::{SmbCredentials, SmbUrl};
use super::wire::{self, HEADER_BYTES, command, status, u16_at, u32_at};
use crate::engine::{
    Completion, Engine, EngineError, EngineOptions, IoRequest, StopSignal, pipelined, sys,
};
use crate::result::{Capabilities, Direction};
use std::collections::VecDeque;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Bytes a READ or WRITE message carries besides the data: transform header, SMB2 header and
/// the READ/WRITE body.
pub const MESSAGE_OVERHEAD_BYTES: usize = TRANSFORM_HEADER_BYTES + HEADER_BYTES + 49;
/// Highest queue depth of one engine.
pub const MAX_QUEUE_DEPTH: u32 = u16::MAX as u32;
/// Longest single blocking receive: the stop signal and the deadline are looked at this often.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// Receive buffer beyond two of the longest responses.
const RECEIVE_EXTRA_BYTES: usize = 64 * 1024;
/// The message id of an unsolicited notice (an oplock or lease break).
const UNSOLICITED: u64 = u64::MAX;
/// WRITE flag: durable before the response.
const WRITE_THROUGH: u32 = 0x1;
const ENGINE: &str = "smb";

/// What the credit window was like for one engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditReport {
    /// Credits asked for: enough for the whole queue depth at the largest block size.
    pub wanted: u32,
    /// The most credits held at once (unspent plus spent on requests in flight).
    pub highest: u32,
    /// Requests that waited for credits before they could be sent.
    pub stalls: u64,
}

#[derive(Debug)]
struct Slot {
    buffer: Vec<u8>,
    /// The request in flight: message id, direction, length, credit charge.
    waiting: Option<(u64, Direction, u32, u16)>,
}

/// The SMB engine on one file.
#[derive(Debug)]
pub struct SmbEngine {
    connection: SmbConnection,
    file: [u8; 16],
    write_through: bool,
    slots: Vec<Slot>,
    /// One request's frame while it is signed or sealed.
    frame: Vec<u8>,
    outgoing: Vec<u8>,
    incoming: Vec<u8>,
    parsed: usize,
    filled: usize,
    /// The longest frame accepted, bytes.
    max_frame: usize,
    ready: VecDeque<Completion>,
    short_of_credits: VecDeque<IoRequest>,
    in_flight: usize,
    /// Credits spent on requests in flight.
    spent: u32,
    credits: CreditReport,
    timeout: Duration,
    stop: StopSignal,
    capabilities: Capabilities,
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

impl SmbEngine {
    /// Logs in to `url`'s share as `credentials` and opens its file for reading, and for
    /// writing with `write` (the file must exist: see [`super::create_file`]).
    pub fn open(
        url: &SmbUrl,
        credentials: &SmbCredentials,
        security: SmbSecurity,
        options: &EngineOptions,
        write: bool,
    ) -> Result<Self, EngineError> {
        let setup = |problem: String| EngineError::Setup {
            engine: ENGINE,
            source: io::Error::other(problem),
        };
        if options.queue_depth == 0 || options.queue_depth > MAX_QUEUE_DEPTH {
            return Err(setup(format!(
                "queue depth {} (1 to {MAX_QUEUE_DEPTH})",
                options.queue_depth
            )));
        }
        let mut connection = target::connect(url, credentials, security, options.net_timeout)
            .map_err(|error| setup(error.to_string()))?;
        let facts = connection.facts;
        let largest = if write {
            facts.max_read_bytes.min(facts.max_write_bytes)
        } else {
            facts.max_read_bytes
        };
        if options.buffer_size > largest as usize {
            return Err(setup(format!(
                "{url}: blocks of {} bytes are larger than the server's largest {} ({largest} bytes)",
                options.buffer_size,
                if write { "READ or WRITE" } else { "READ" }
            )));
        }
        let file = target::open_for_io(&mut connection, url, write).map_err(|error| {
            setup(target_error(url, credentials, "opening the file", error).to_string())
        })?;
        // What the probe found (or the size the test file was made with) must still hold.
        EngineError::unless_same_volume(
            ENGINE,
            || url.server.to_string(),
            options.expected_volume.as_ref(),
            |found| found.size_bytes = file.size_bytes,
        )?;
        connection
            .stream
            .set_read_timeout(Some(WAIT_SLICE))
            .map_err(|error| setup(format!("{url}: {error}")))?;
        let depth = options.queue_depth as usize;
        let charge = credit_charge(connection.large_mtu, options.buffer_size);
        let frame_bytes = MESSAGE_AT + HEADER_BYTES + 49 + options.buffer_size;
        let max_frame = MESSAGE_OVERHEAD_BYTES + options.buffer_size + 64;
        Ok(SmbEngine {
            file: file.id,
            write_through: options.write_through,
            slots: (0..depth)
                .map(|_| Slot {
                    buffer: vec![0; options.buffer_size],
                    waiting: None,
                })
                .collect(),
            frame: Vec::with_capacity(frame_bytes),
            outgoing: Vec::with_capacity(frame_bytes * depth),
            incoming: vec![0; 2 * (max_frame + 4) + RECEIVE_EXTRA_BYTES],
            parsed: 0,
            filled: 0,
            max_frame,
            ready: VecDeque::with_capacity(depth),
            short_of_credits: VecDeque::with_capacity(depth),
            in_flight: 0,
            spent: 0,
            credits: CreditReport {
                wanted: (depth as u32 * u32::from(charge)).min(u16::MAX as u32),
                highest: connection.credits,
                stalls: 0,
            },
            timeout: options.net_timeout,
            stop: options.stop.clone(),
            capabilities: Capabilities {
                max_queue_depth: options.queue_depth,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
            },
            connection,
        })
    }

    /// Opens the engine on an `smb://` target (credentials from its credentials file or the
    /// environment), for writing too unless the probe found the share read-only.
    pub fn open_target(
        target: &crate::engine::network_target::NetworkTarget,
        options: &EngineOptions,
    ) -> Result<Self, EngineError> {
        let crate::engine::network_target::NetworkTarget::Smb {
            url,
            security,
            credentials_file,
            ..
        } = target
        else {
            return Err(EngineError::Setup {
                engine: ENGINE,
                source: io::Error::other(format!("{target} is not an smb:// target")),
            });
        };
        let credentials =
            super::target_credentials(url, credentials_file.as_deref()).map_err(|error| {
                EngineError::Setup {
                    engine: ENGINE,
                    source: io::Error::other(error.to_string()),
                }
            })?;
        let write = options
            .expected_volume
            .as_ref()
            .is_none_or(|volume| !volume.read_only);
        Self::open(url, &credentials, *security, options, write)
    }

    /// What the session negotiated (dialect, signing, encryption).
    pub fn session(&self) -> SmbSessionFacts {
        self.connection.facts
    }

    /// The credit window so far: asked for, held at most, and the stalls.
    pub fn credits(&self) -> CreditReport {
        self.credits
    }

    /// Encodes `request` into `outgoing`, spending its credits (the caller checked there are
    /// enough).
    fn encode(&mut self, request: IoRequest) {
        let connection = &mut self.connection;
        let charge = credit_charge(connection.large_mtu, request.length as usize);
        let message_id = connection.next_message_id;
        connection.next_message_id += u64::from(charge);
        connection.credits -= u32::from(charge);
        self.spent += u32::from(charge);
        // Ask for what keeps the whole depth in flight.
        let held = connection.credits + self.spent;
        let ask = u32::from(charge) + self.credits.wanted.saturating_sub(held);
        let write = request.direction == Direction::Write;
        let data = if write { request.length as usize } else { 0 };
        self.frame.clear();
        self.frame.resize(MESSAGE_AT + HEADER_BYTES + 49 + data, 0);
        let (head, body) = self.frame[MESSAGE_AT..].split_at_mut(HEADER_BYTES);
        wire::request_header(
            head,
            if write { command::WRITE } else { command::READ },
            charge,
            ask.min(u16::MAX as u32) as u16,
            message_id,
            connection.tree_id,
            connection.session_id,
        );
        body[0..2].copy_from_slice(&49u16.to_le_bytes());
        body[4..8].copy_from_slice(&request.length.to_le_bytes());
        body[8..16].copy_from_slice(&request.offset.to_le_bytes());
        body[16..32].copy_from_slice(&self.file);
        if write {
            body[2..4].copy_from_slice(&((HEADER_BYTES + 48) as u16).to_le_bytes());
            let flags = if self.write_through { WRITE_THROUGH } else { 0 };
            body[44..48].copy_from_slice(&flags.to_le_bytes());
            body[48..48 + data].copy_from_slice(&self.slots[request.slot as usize].buffer[..data]);
        } else {
            // Where the data should start in the response: right after its 16-byte body.
            body[2] = (HEADER_BYTES + 16) as u8;
            body[32..36].copy_from_slice(&request.length.to_le_bytes());
        }
        let start = finish_frame(
            &mut self.frame,
            connection.signer.as_ref(),
            connection.sealer.as_mut(),
        );
        self.outgoing.extend_from_slice(&self.frame[start..]);
        self.slots[request.slot as usize].waiting =
            Some((message_id, request.direction, request.length, charge));
    }

    /// Moves requests that waited for credits into `outgoing` while credits last.
    fn encode_waiting(&mut self) {
        while let Some(request) = self.short_of_credits.front().copied() {
            let charge = credit_charge(self.connection.large_mtu, request.length as usize);
            if self.connection.credits < u32::from(charge) {
                break;
            }
            self.short_of_credits.pop_front();
            self.encode(request);
        }
    }

    /// Sends everything queued; reads responses into `ready` while the socket takes no more.
    fn send_queued(&mut self) -> io::Result<()> {
        let outgoing = std::mem::take(&mut self.outgoing);
        let fd = self.connection.stream.as_raw_fd();
        let sent = pipelined::send_all(fd, &outgoing, self.timeout, || {
            if let Some(completion) = self.receive()? {
                self.ready.push_back(completion);
            }
            Ok(())
        });
        self.outgoing = outgoing;
        sent.map_err(|error| pipelined::name_server(error, &self.connection.server))?;
        self.outgoing.clear();
        Ok(())
    }

    /// Receives more bytes into `incoming` (see [`pipelined::receive_some`]).
    fn fill(&mut self) -> io::Result<()> {
        if self.parsed > 0 {
            self.incoming.copy_within(self.parsed..self.filled, 0);
            self.filled -= self.parsed;
            self.parsed = 0;
        }
        self.filled += pipelined::receive_some(
            self.connection.stream.as_raw_fd(),
            &mut self.incoming[self.filled..],
            self.timeout,
            &self.stop,
            &self.connection.server,
        )?;
        Ok(())
    }

    /// The length of the frame at the start of the unparsed bytes, once four are there.
    fn frame_length_at_parsed(&self) -> io::Result<usize> {
        let head = &self.incoming[self.parsed..self.parsed + 4];
        let length = u32::from_be_bytes(head.try_into().expect("4 bytes")) as usize;
        if length > self.max_frame {
            return Err(protocol(format!(
                "{} sent a message of {length} bytes (at most {} expected)",
                self.connection.server, self.max_frame
            )));
        }
        Ok(length)
    }

    /// Whether `incoming` holds a whole frame already.
    fn has_whole_frame(&self) -> bool {
        self.filled - self.parsed >= 4
            && self
                .frame_length_at_parsed()
                .is_ok_and(|length| self.filled - self.parsed >= 4 + length)
    }

    /// Reads one response (waiting up to the timeout) and finishes its slot; `None` for an
    /// interim response or an unsolicited notice.
    fn receive(&mut self) -> io::Result<Option<Completion>> {
        while self.filled - self.parsed < 4 {
            self.fill()?;
        }
        let length = self.frame_length_at_parsed()?;
        while self.filled - self.parsed < 4 + length {
            self.fill()?;
        }
        let start = self.parsed + 4;
        self.parsed = start + length;
        let connection = &self.connection;
        let frame = &mut self.incoming[start..start + length];
        let range = open_frame(
            frame,
            connection.signer.as_ref(),
            connection.sealer.as_ref(),
            &connection.server,
        )
        .map_err(protocol)?;
        let message = &frame[range];
        let header = wire::response_header(message)
            .map_err(|problem| protocol(format!("{} sent {problem}", connection.server)))?;
        self.connection.credits += u32::from(header.credits);
        if header.message_id == UNSOLICITED
            || (header.status == status::PENDING && header.flags & wire::FLAG_ASYNC != 0)
        {
            return Ok(None);
        }
        let found = self.slots.iter().position(|slot| {
            slot.waiting
                .is_some_and(|(message_id, ..)| message_id == header.message_id)
        });
        let Some(slot) = found else {
            return Err(protocol(format!(
                "{} answered a request that was not made (message id {})",
                self.connection.server, header.message_id
            )));
        };
        let (_, direction, length, charge) =
            self.slots[slot].waiting.take().expect("the slot waits");
        self.in_flight -= 1;
        self.spent -= u32::from(charge);
        let held = self.connection.credits + self.spent;
        self.credits.highest = self.credits.highest.max(held);
        let body = &message[HEADER_BYTES..];
        let result = if header.status != status::SUCCESS {
            if header.status == status::END_OF_FILE && direction == Direction::Read {
                0
            } else {
                status::errno(header.status)
            }
        } else if direction == Direction::Read {
            let bad = || {
                protocol(format!(
                    "{} sent a READ response out of bounds",
                    self.connection.server
                ))
            };
            if body.len() < 16 {
                return Err(bad());
            }
            let data_at = (body[2] as usize)
                .checked_sub(HEADER_BYTES)
                .ok_or_else(bad)?;
            let data_length = u32_at(body, 4) as usize;
            if data_length > length as usize {
                return Err(bad());
            }
            let data = body.get(data_at..data_at + data_length).ok_or_else(bad)?;
            self.slots[slot].buffer[..data_length].copy_from_slice(data);
            data_length as i64
        } else {
            if body.len() < 8 || u16_at(body, 0) != 17 {
                return Err(protocol(format!(
                    "{} sent a WRITE response too short",
                    self.connection.server
                )));
            }
            let count = u32_at(body, 4);
            if count > length {
                return Err(protocol(format!(
                    "{}: {count} bytes written of a {length}-byte WRITE",
                    self.connection.server
                )));
            }
            i64::from(count)
        };
        Ok(Some(Completion {
            slot: slot as u32,
            result,
        }))
    }
}

impl Engine for SmbEngine {
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
        let waiting_for_credits = |slot| self.short_of_credits.iter().any(|r| r.slot == slot);
        let slot = self.slots.get(request.slot as usize);
        pipelined::check_request(
            ENGINE,
            &request,
            self.slots.len(),
            slot.map(|slot| {
                let busy = slot.waiting.is_some() || waiting_for_credits(request.slot);
                (busy, slot.buffer.len())
            }),
        )?;
        if !matches!(request.direction, Direction::Read | Direction::Write) {
            return Err(operation(
                "submit",
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!(
                        "SMB has no {:?} here (not supported yet)",
                        request.direction
                    ),
                ),
            ));
        }
        self.in_flight += 1;
        let charge = credit_charge(self.connection.large_mtu, request.length as usize);
        if !self.short_of_credits.is_empty() || self.connection.credits < u32::from(charge) {
            self.credits.stalls += 1;
            self.short_of_credits.push_back(request);
        } else {
            self.encode(request);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), EngineError> {
        self.send_queued()
            .map_err(|error| operation("flush", error))
    }

    fn reap(
        &mut self,
        min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        let failed = |error| operation("reap", error);
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
            let sent = self.in_flight - self.short_of_credits.len();
            if sent == 0 {
                return Err(failed(io::Error::other(format!(
                    "{} granted no credits: {} requests cannot be sent",
                    self.connection.server,
                    self.short_of_credits.len()
                ))));
            }
            if written >= min_completions && !self.has_whole_frame() {
                let mut fds = [libc::pollfd {
                    fd: self.connection.stream.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                }];
                if sys::poll(&mut fds, Duration::ZERO).map_err(failed)? == 0 {
                    break;
                }
            }
            if let Some(completion) = self.receive().map_err(failed)? {
                completions[written] = completion;
                written += 1;
            }
            if !self.short_of_credits.is_empty() {
                self.encode_waiting();
                self.send_queued().map_err(failed)?;
            }
        }
        Ok(written)
    }

    fn sync_data(&mut self) -> Result<(), EngineError> {
        if self.write_through {
            return Ok(());
        }
        let failed = |error: io::Error| operation("FLUSH", error);
        if self.in_flight > 0 || !self.outgoing.is_empty() {
            return Err(failed(io::Error::other("requests are still in flight")));
        }
        let stream = &self.connection.stream;
        stream
            .set_read_timeout(Some(self.timeout))
            .map_err(failed)?;
        let flushed = target::flush(&mut self.connection, &self.file);
        self.connection
            .stream
            .set_read_timeout(Some(WAIT_SLICE))
            .map_err(failed)?;
        flushed.map_err(|error| {
            failed(io::Error::other(format!(
                "{}: {error}",
                self.connection.server
            )))
        })
    }
}
