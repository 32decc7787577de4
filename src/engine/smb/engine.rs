//! [`SmbEngine`]: SMB2 READ and WRITE pipelined on one or more logged-in connections
//! (`--connections N`: channels of one session where the server offers multichannel, else
//! independent sessions; see `channel`), up to the queue depth in flight, within the credits
//! the server grants.
//!
//! - **Spreading.** Requests go to the connections round robin, as NBD's multi-conn does; a
//!   slot remembers its connection and message id.
//! - **Credits.** Each connection has its own: every request spends credits (one per 64 KiB
//!   on SMB 2.1+) and asks for enough to keep that connection's share of the queue depth in
//!   flight; a request that finds too few waits in submit order until responses grant more
//!   (a *credit stall*, counted: see [`SmbEngine::credits`]).
//! - **Message ids.** Each request takes its connection's next ids (as many as its charge); a
//!   response finds its slot by the id it answers, and a response to no request in flight is
//!   a protocol error.
//! - **Signing and encryption** happen in place in one frame buffer (AES-128-CMAC,
//!   AES-128-GMAC or HMAC-SHA256; AES-GCM or AES-CCM), each response checked or decrypted the
//!   same way: nothing is allocated per I/O.
//! - **Sends never block**, as in the NFS engine: while a socket takes no more, responses
//!   are read and kept for `reap`.
//! - **Each response handed back as it arrives**, as in the NFS engine: once `reap` has the
//!   completions it was asked for, it reads on only while a whole response is waiting.
//! - **Durability.** `EngineOptions::write_through` sets `WRITE_THROUGH` on every WRITE;
//!   otherwise [`Engine::sync_data`] sends FLUSH on every open of the file.
//! - **Failures.** An NT status on a READ or WRITE is a completion with the matching
//!   negative errno; a dead or lying server fails `flush` / `reap` with an [`EngineError`]
//!   naming it.

use super::channel::{Channel, CreditReport, REQUEST_FRAME_BYTES, SmbChannels, open_connections};
use super::target;
use super::url::{SmbCredentials, SmbUrl};
use crate::engine::volume::STOP_GRACE;
use crate::engine::{
    Completion, Engine, EngineError, EngineOptions, IoRequest, StopSignal, pipelined, sys,
};
use crate::result::{Capabilities, Direction};
use crate::targets::network_target::SmbSecurity;
use smb_client::SmbSessionFacts;
use smb_client::connection::{
    MAX_INTERIM_RESPONSES, MESSAGE_AT, add_credits, credit_charge, finish_frame, open_frame,
};
use smb_client::wire::{self, HEADER_BYTES, command, status, u16_at, u32_at};
use std::collections::VecDeque;
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Highest queue depth of one engine.
pub const MAX_QUEUE_DEPTH: u32 = u16::MAX as u32;
/// Longest single blocking receive: the stop signal and the deadline are looked at this often.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// The message id of an unsolicited notice (an oplock or lease break).
const UNSOLICITED: u64 = u64::MAX;
/// WRITE flag: durable before the response.
const WRITE_THROUGH: u32 = 0x1;
const ENGINE: &str = "smb";

/// A request in flight: its connection, message id, direction, length and credit charge.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    channel: u16,
    message_id: u64,
    direction: Direction,
    length: u32,
    charge: u16,
}

#[derive(Debug)]
struct Slot {
    buffer: Vec<u8>,
    waiting: Option<Waiting>,
}

/// The SMB engine on one file.
#[derive(Debug)]
pub struct SmbEngine {
    channels: Vec<Channel>,
    /// Connection the next request goes to (round robin).
    next_channel: usize,
    how: SmbChannels,
    write_through: bool,
    slots: Vec<Slot>,
    /// Which slots wait for credits (their requests sit in a channel's queue).
    short_of_credits: Vec<bool>,
    /// One request's frame while it is signed or sealed.
    frame: Vec<u8>,
    ready: VecDeque<Completion>,
    in_flight: usize,
    /// The `poll` set, one entry per connection.
    poll_set: Vec<libc::pollfd>,
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
    /// Logs in to `url`'s share as `credentials` with `options.connections` connections and
    /// opens its file for reading, and for writing with `write` (the file must exist: see
    /// [`super::create_file`]).
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
        let (connections, how) = open_connections(url, credentials, security, options, write)?;
        let (first, first_file) = &connections[0];
        let file = first_file.expect("the first connection opens the file");
        let facts = first.facts;
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
        // What the probe found (or the size the test file was made with) must still hold.
        EngineError::unless_same_volume(
            ENGINE,
            || url.server.to_string(),
            options.expected_volume.as_ref(),
            |found| found.size_bytes = file.size_bytes,
        )?;
        let depth = options.queue_depth as usize;
        let channel_depth = depth.div_ceil(connections.len());
        let mut channels = Vec::with_capacity(connections.len());
        let mut poll_set = Vec::with_capacity(connections.len());
        for (connection, opened) in connections {
            connection
                .stream
                .set_read_timeout(Some(WAIT_SLICE))
                .map_err(|error| setup(format!("{url}: {error}")))?;
            poll_set.push(libc::pollfd {
                fd: connection.stream.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            let own_open = opened.is_some();
            let id = opened.map_or(file.id, |opened| opened.id);
            channels.push(Channel::new(
                connection,
                id,
                own_open,
                depth,
                channel_depth,
                options.buffer_size,
            ));
        }
        let frame_bytes = REQUEST_FRAME_BYTES + options.buffer_size;
        Ok(SmbEngine {
            channels,
            next_channel: 0,
            how,
            write_through: options.write_through,
            slots: (0..depth)
                .map(|_| Slot {
                    buffer: vec![0; options.buffer_size],
                    waiting: None,
                })
                .collect(),
            short_of_credits: vec![false; depth],
            frame: Vec::with_capacity(frame_bytes),
            ready: VecDeque::with_capacity(depth),
            in_flight: 0,
            poll_set,
            timeout: options.net_timeout,
            stop: options.stop.clone(),
            capabilities: Capabilities {
                max_queue_depth: options.queue_depth,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
                separates_submission: false,
            },
        })
    }

    /// Opens the engine on an `smb://` target (credentials from its credentials file or the
    /// environment), for writing too unless the probe found the share read-only.
    pub fn open_target(
        target: &crate::targets::network_target::NetworkTarget,
        options: &EngineOptions,
    ) -> Result<Self, EngineError> {
        let crate::targets::network_target::NetworkTarget::Smb {
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

    /// What the session negotiated (dialect, signing, encryption) on the first connection.
    pub fn session(&self) -> SmbSessionFacts {
        self.channels[0].connection.facts
    }

    /// How the connections are used: how many, and whether they are one session's channels.
    pub fn channels(&self) -> SmbChannels {
        self.how
    }

    /// The credit window so far, summed over the connections: asked for, held at most, and
    /// the stalls.
    pub fn credits(&self) -> CreditReport {
        self.channels
            .iter()
            .fold(CreditReport::default(), |total, channel| CreditReport {
                wanted: total.wanted + channel.credits.wanted,
                highest: total.highest + channel.credits.highest,
                stalls: total.stalls + channel.credits.stalls,
            })
    }

    /// Encodes `request` into its channel's `outgoing`, spending its credits (the caller
    /// checked there are enough).
    fn encode(&mut self, index: usize, request: IoRequest) {
        let channel = &mut self.channels[index];
        let connection = &mut channel.connection;
        let charge = credit_charge(connection.large_mtu, request.length as usize);
        let message_id = connection.next_message_id;
        connection.next_message_id += u64::from(charge);
        connection.credits -= u32::from(charge);
        channel.spent += u32::from(charge);
        // Ask for what keeps this channel's share of the depth in flight.
        let held = connection.credits + channel.spent;
        let ask = u32::from(charge) + channel.credits.wanted.saturating_sub(held);
        let write = request.direction == Direction::Write;
        let data = if write { request.length as usize } else { 0 };
        self.frame.clear();
        self.frame.resize(REQUEST_FRAME_BYTES + data, 0);
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
        body[16..32].copy_from_slice(&channel.file);
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
        channel.outgoing.extend_from_slice(&self.frame[start..]);
        self.slots[request.slot as usize].waiting = Some(Waiting {
            channel: index as u16,
            message_id,
            direction: request.direction,
            length: request.length,
            charge,
        });
    }

    /// Moves a channel's requests that waited for credits into its `outgoing` while credits
    /// last.
    fn encode_waiting(&mut self, index: usize) {
        while let Some(request) = self.channels[index].short_of_credits.front().copied() {
            let channel = &mut self.channels[index];
            let charge = credit_charge(channel.connection.large_mtu, request.length as usize);
            if channel.connection.credits < u32::from(charge) {
                break;
            }
            channel.short_of_credits.pop_front();
            self.short_of_credits[request.slot as usize] = false;
            self.encode(index, request);
        }
    }

    /// Sends everything queued on channel `index`; reads its responses into `ready` while
    /// its socket takes no more.
    fn send_queued(&mut self, index: usize) -> io::Result<()> {
        if self.channels[index].outgoing.is_empty() {
            return Ok(());
        }
        let outgoing = std::mem::take(&mut self.channels[index].outgoing);
        let fd = self.channels[index].connection.stream.as_raw_fd();
        let sent = pipelined::send_all(fd, &outgoing, self.timeout, || {
            if let Some(completion) = self.receive(index)? {
                self.ready.push_back(completion);
            }
            Ok(())
        });
        let channel = &mut self.channels[index];
        channel.outgoing = outgoing;
        sent.map_err(|error| pipelined::name_server(error, &channel.connection.server))?;
        channel.outgoing.clear();
        Ok(())
    }

    /// Reads one response on channel `index` (waiting up to the timeout) and finishes its
    /// slot; `None` for an interim response or an unsolicited notice.
    fn receive(&mut self, index: usize) -> io::Result<Option<Completion>> {
        let channel = &mut self.channels[index];
        let range = channel.next_frame(self.timeout, &self.stop)?;
        let connection = &mut channel.connection;
        let frame = &mut channel.incoming[range];
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
        connection.credits = add_credits(connection.credits, header.credits);
        if header.message_id == UNSOLICITED
            || (header.status == status::PENDING && header.flags & wire::FLAG_ASYNC != 0)
        {
            return Ok(None);
        }
        let found = self.slots.iter().position(|slot| {
            slot.waiting.is_some_and(|waiting| {
                waiting.message_id == header.message_id && waiting.channel as usize == index
            })
        });
        let Some(slot) = found else {
            return Err(protocol(format!(
                "{} answered a request that was not made (message id {})",
                connection.server, header.message_id
            )));
        };
        let waiting = self.slots[slot].waiting.take().expect("the slot waits");
        let length = waiting.length;
        self.in_flight -= 1;
        channel.in_flight -= 1;
        channel.spent -= u32::from(waiting.charge);
        let held = connection.credits + channel.spent;
        channel.credits.highest = channel.credits.highest.max(held);
        let server = &connection.server;
        let body = &message[HEADER_BYTES..];
        let result = if header.status != status::SUCCESS {
            if header.status == status::END_OF_FILE && waiting.direction == Direction::Read {
                0
            } else {
                status::errno(header.status)
            }
        } else if waiting.direction == Direction::Read {
            let bad = || protocol(format!("{server} sent a READ response out of bounds"));
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
                    "{server} sent a WRITE response too short"
                )));
            }
            let count = u32_at(body, 4);
            if count > length {
                return Err(protocol(format!(
                    "{server}: {count} bytes written of a {length}-byte WRITE"
                )));
            }
            i64::from(count)
        };
        Ok(Some(Completion {
            slot: slot as u32,
            result,
        }))
    }

    /// The channel to read from next: one with a whole response buffered; without `wait`, one
    /// whose socket holds the rest of a whole response; with it, the only channel, or
    /// (several channels) the first whose socket has bytes within one slice; `None` when
    /// nothing came.
    fn readable_channel(&mut self, wait: bool) -> io::Result<Option<usize>> {
        if let Some(index) = self
            .channels
            .iter()
            .position(|channel| channel.sent() > 0 && channel.has_whole_frame())
        {
            return Ok(Some(index));
        }
        if !wait {
            // Only a whole response waiting is read on: the requests whose completions are
            // already taken are waiting for their slots.
            for index in 0..self.channels.len() {
                let channel = &mut self.channels[index];
                if channel.sent() > 0 && channel.frame_waiting(self.timeout, &self.stop)? {
                    return Ok(Some(index));
                }
            }
            return Ok(None);
        }
        if self.channels.len() == 1 {
            return Ok(Some(0));
        }
        for (entry, channel) in self.poll_set.iter_mut().zip(&self.channels) {
            entry.fd = if channel.sent() > 0 {
                channel.connection.stream.as_raw_fd()
            } else {
                -1
            };
            entry.events = libc::POLLIN;
            entry.revents = 0;
        }
        if sys::poll(&mut self.poll_set, WAIT_SLICE)? == 0 {
            return Ok(None);
        }
        Ok(self.poll_set.iter().position(|entry| entry.revents != 0))
    }

    /// A channel with requests waiting for credits and none sent, which no response will
    /// ever grant more: an error naming the server.
    fn starved(&self) -> Option<io::Error> {
        self.channels
            .iter()
            .find(|channel| channel.in_flight > 0 && channel.sent() == 0)
            .map(|channel| {
                io::Error::other(format!(
                    "{} granted no credits: {} requests cannot be sent",
                    channel.connection.server,
                    channel.short_of_credits.len()
                ))
            })
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
        let slot = self.slots.get(request.slot as usize);
        pipelined::check_request(
            ENGINE,
            &request,
            self.slots.len(),
            slot.map(|slot| {
                let busy = slot.waiting.is_some() || self.short_of_credits[request.slot as usize];
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
        let index = self.next_channel;
        self.next_channel = (index + 1) % self.channels.len();
        self.in_flight += 1;
        let channel = &mut self.channels[index];
        channel.in_flight += 1;
        let charge = credit_charge(channel.connection.large_mtu, request.length as usize);
        if !channel.short_of_credits.is_empty() || channel.connection.credits < u32::from(charge) {
            channel.credits.stalls += 1;
            channel.short_of_credits.push_back(request);
            self.short_of_credits[request.slot as usize] = true;
        } else {
            self.encode(index, request);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), EngineError> {
        for index in 0..self.channels.len() {
            self.send_queued(index)
                .map_err(|error| operation("flush", error))?;
        }
        Ok(())
    }

    fn reap(
        &mut self,
        min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        let failed = |error| operation("reap", error);
        let mut written = 0;
        // When the last response came, for a wait over several connections.
        let mut waiting_since: Option<Instant> = None;
        // Interim responses and notices since the last completion: a server sends one interim
        // response per request at most, so one sending them without end is cut off.
        let mut interim = 0usize;
        while written < completions.len() {
            if let Some(completion) = self.ready.pop_front() {
                completions[written] = completion;
                written += 1;
                continue;
            }
            if self.in_flight == 0 {
                break;
            }
            if let Some(error) = self.starved() {
                return Err(failed(error));
            }
            let wait = written < min_completions;
            let Some(index) = self.readable_channel(wait).map_err(failed)? else {
                if !wait {
                    break;
                }
                // Several connections, none answered within a slice.
                let since = *waiting_since.get_or_insert_with(Instant::now);
                let limit = if self.stop.is_raised() {
                    STOP_GRACE.min(self.timeout)
                } else {
                    self.timeout
                };
                if since.elapsed() >= limit {
                    return Err(failed(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "{} sent no reply within {limit:?} ({} requests unanswered)",
                            self.channels[0].connection.server, self.in_flight
                        ),
                    )));
                }
                continue;
            };
            waiting_since = None;
            if let Some(completion) = self.receive(index).map_err(failed)? {
                completions[written] = completion;
                written += 1;
                interim = 0;
            } else {
                interim += 1;
                let limit = MAX_INTERIM_RESPONSES + self.in_flight;
                if interim > limit {
                    return Err(failed(protocol(format!(
                        "{} sent more than {limit} interim responses without a final one",
                        self.channels[index].connection.server
                    ))));
                }
            }
            if !self.channels[index].short_of_credits.is_empty() {
                self.encode_waiting(index);
                self.send_queued(index).map_err(failed)?;
            }
        }
        Ok(written)
    }

    fn sync_data(&mut self) -> Result<(), EngineError> {
        if self.write_through {
            return Ok(());
        }
        let failed = |error: io::Error| operation("FLUSH", error);
        if self.in_flight > 0 || self.channels.iter().any(|c| !c.outgoing.is_empty()) {
            return Err(failed(io::Error::other("requests are still in flight")));
        }
        // Every open of the file (one, when the connections are one session's channels).
        for channel in self.channels.iter_mut().filter(|channel| channel.own_open) {
            let connection = &mut channel.connection;
            connection
                .stream
                .set_read_timeout(Some(self.timeout))
                .map_err(failed)?;
            let flushed = target::flush(connection, &channel.file);
            connection
                .stream
                .set_read_timeout(Some(WAIT_SLICE))
                .map_err(failed)?;
            flushed.map_err(|error| {
                failed(io::Error::other(format!("{}: {error}", connection.server)))
            })?;
        }
        Ok(())
    }
}
