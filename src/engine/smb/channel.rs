//! The channels of one [`SmbEngine`](super::SmbEngine) (`--connections N`): each a logged-in
//! TCP connection with its own message ids, credits, send queue and receive buffer, and the
//! file handle its requests name.
//!
//! - **Multichannel.** When the server offers it (`SMB2_GLOBAL_CAP_MULTI_CHANNEL`, SMB 3.x),
//!   the connections after the first are bound to the first one's session as channels
//!   ([`SmbConnection::bind`]): one session, one tree connect, one open of the file, used by
//!   every channel.
//! - **Independent sessions.** Otherwise (SMB 2.1, or a server with multichannel off) each
//!   connection logs in and opens the file on its own, as N clients would — what fio's jobs
//!   on N mounts do — and [`SmbChannels::note`] says so.
//!
//! Either way no more connections are opened than the queue depth keeps busy.

use super::target::{self, OpenFile, client_security, target_error};
use super::url::{SmbCredentials, SmbUrl, share_address};
use crate::engine::{EngineError, EngineOptions, IoRequest, StopSignal, pipelined, sys};
use crate::targets::network_target::SmbSecurity;
use smb_client::connection::MESSAGE_AT;
use smb_client::crypto::TRANSFORM_HEADER_BYTES;
use smb_client::wire::HEADER_BYTES;
use smb_client::{SmbConnection, SmbError};
use std::collections::VecDeque;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// The most channels one engine opens: what Windows servers take per session by default
/// (`MaxChannelPerSession`, 32). `--connections` above it is refused before any I/O.
pub const MAX_CHANNELS: u32 = 32;
/// Bytes a READ or WRITE message carries besides the data: transform header, SMB2 header and
/// the READ/WRITE body.
pub const MESSAGE_OVERHEAD_BYTES: usize =
    TRANSFORM_HEADER_BYTES + HEADER_BYTES + READ_WRITE_BODY_BYTES;
/// A READ or WRITE request's body before its data (its structure size).
const READ_WRITE_BODY_BYTES: usize = 49;
/// A READ or WRITE request's frame without its data: transport header, room for a transform
/// header, the SMB2 header and the READ/WRITE body.
pub(super) const REQUEST_FRAME_BYTES: usize = MESSAGE_AT + HEADER_BYTES + READ_WRITE_BODY_BYTES;
/// What the credit window was like for one engine (summed over its connections, or of one channel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditReport {
    /// Credits asked for: enough for the whole queue depth at the largest block size.
    pub wanted: u32,
    /// The most credits held at once (unspent plus spent on requests in flight).
    pub highest: u32,
    /// Requests that waited for credits before they could be sent.
    pub stalls: u64,
}

/// Receive buffer beyond two of the longest responses.
const RECEIVE_EXTRA_BYTES: usize = 64 * 1024;
const ENGINE: &str = "smb";

/// How an engine's connections are used: how many, and whether they are channels of one
/// session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmbChannels {
    /// Connections per worker in use.
    pub count: u32,
    /// Connections asked for (`--connections`).
    pub asked: u32,
    /// The connections are channels of one session (SMB multichannel); otherwise each has a
    /// session of its own.
    pub multichannel: bool,
}

impl SmbChannels {
    /// Why the connections are not what was asked, or not one session: `None` when they are.
    pub fn note(&self) -> Option<String> {
        let mut notes = Vec::new();
        if self.count < self.asked {
            notes.push(format!(
                "{} SMB connections asked, but only {} requests are ever in flight; using {}",
                self.asked, self.count, self.count
            ));
        }
        if self.count > 1 && !self.multichannel {
            notes.push(format!(
                "multichannel not offered by the server: {} independent SMB sessions per worker, each with its own open of the file",
                self.count
            ));
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// In words: `4 channels per worker bound to one session (multichannel)`, `4 independent
    /// sessions per worker (multichannel not offered by the server)`, `1 connection per
    /// worker`.
    pub fn describe(&self) -> String {
        self.describe_with(&[])
    }

    /// [`Self::describe`], with the interfaces a multichannel server lists (`127.0.0.1 at
    /// 10 Gbit/s with RSS`): `4 channels per worker bound to one session (multichannel;
    /// server interfaces: …)`.
    pub fn describe_with(&self, interfaces: &[String]) -> String {
        match (self.count, self.multichannel) {
            (1, _) => "1 connection per worker".to_string(),
            (count, true) if !interfaces.is_empty() => format!(
                "{count} channels per worker bound to one session (multichannel; server \
                 interfaces: {})",
                interfaces.join(", ")
            ),
            (count, true) => {
                format!("{count} channels per worker bound to one session (multichannel)")
            }
            (count, false) => format!(
                "{count} independent sessions per worker (multichannel not offered by the server)"
            ),
        }
    }
}

/// One channel: see the module documentation.
#[derive(Debug)]
pub(super) struct Channel {
    /// The logged-in connection.
    pub connection: SmbConnection,
    /// The file handle this channel's requests name.
    pub file: [u8; 16],
    /// Whether the handle is this channel's own open (FLUSH goes to each).
    pub own_open: bool,
    /// Requests encoded and not sent yet.
    pub outgoing: Vec<u8>,
    /// Received bytes: `parsed..filled` not looked at yet.
    pub incoming: Vec<u8>,
    /// Where the bytes not looked at yet start in `incoming`.
    pub parsed: usize,
    /// Where the received bytes end in `incoming`.
    pub filled: usize,
    /// The longest frame accepted, bytes.
    pub max_frame: usize,
    /// Requests waiting for credits, in submit order.
    pub short_of_credits: VecDeque<IoRequest>,
    /// Requests submitted to this channel and not completed (sent or waiting for credits).
    pub in_flight: usize,
    /// Credits spent on requests in flight.
    pub spent: u32,
    /// This channel's credit window.
    pub credits: CreditReport,
}

impl Channel {
    /// A channel on `connection` naming `file`, sized for `depth` requests of `buffer_size`
    /// bytes, that asks for credits enough for `channel_depth` of them in flight.
    pub fn new(
        connection: SmbConnection,
        file: [u8; 16],
        own_open: bool,
        depth: usize,
        channel_depth: usize,
        buffer_size: usize,
    ) -> Self {
        let charge = smb_client::connection::credit_charge(connection.large_mtu, buffer_size);
        let frame_bytes = REQUEST_FRAME_BYTES + buffer_size;
        let max_frame = MESSAGE_OVERHEAD_BYTES + buffer_size + 64;
        Channel {
            credits: CreditReport {
                wanted: (channel_depth as u32 * u32::from(charge)).min(u16::MAX as u32),
                highest: connection.credits,
                stalls: 0,
            },
            connection,
            file,
            own_open,
            outgoing: Vec::with_capacity(frame_bytes * channel_depth.min(depth)),
            incoming: vec![0; 2 * (max_frame + 4) + RECEIVE_EXTRA_BYTES],
            parsed: 0,
            filled: 0,
            max_frame,
            short_of_credits: VecDeque::with_capacity(depth),
            in_flight: 0,
            spent: 0,
        }
    }

    /// Requests sent and not answered.
    pub fn sent(&self) -> usize {
        self.in_flight - self.short_of_credits.len()
    }

    /// Receives more bytes into `incoming` (see [`pipelined::receive_some`]).
    fn fill(&mut self, timeout: Duration, stop: &StopSignal) -> io::Result<()> {
        if self.parsed > 0 {
            self.incoming.copy_within(self.parsed..self.filled, 0);
            self.filled -= self.parsed;
            self.parsed = 0;
        }
        self.filled += pipelined::receive_some(
            self.connection.stream.as_raw_fd(),
            &mut self.incoming[self.filled..],
            timeout,
            stop,
            &self.connection.server,
        )?;
        Ok(())
    }

    /// The length of the frame at the start of the unparsed bytes, once four are there.
    fn frame_length_at_parsed(&self) -> io::Result<usize> {
        let head = &self.incoming[self.parsed..self.parsed + 4];
        let length = u32::from_be_bytes(head.try_into().expect("4 bytes")) as usize;
        if length > self.max_frame {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} sent a message of {length} bytes (at most {} expected)",
                    self.connection.server, self.max_frame
                ),
            ));
        }
        Ok(length)
    }

    /// Whether `incoming` holds a whole frame already.
    pub fn has_whole_frame(&self) -> bool {
        self.filled - self.parsed >= 4
            && self
                .frame_length_at_parsed()
                .is_ok_and(|length| self.filled - self.parsed >= 4 + length)
    }

    /// Whether a whole frame can be read without waiting: `incoming` holds one, or it and the
    /// socket's unread bytes do. (Readable bytes alone are not enough: a 1 MiB READ response
    /// takes a 1 Gbit/s link 9 ms to arrive, and waiting for it would hand the completions
    /// back in lockstep batches.)
    pub fn frame_waiting(&mut self, timeout: Duration, stop: &StopSignal) -> io::Result<bool> {
        if self.has_whole_frame() {
            return Ok(true);
        }
        let fd = self.connection.stream.as_raw_fd();
        if self.filled - self.parsed < 4 {
            if self.filled - self.parsed + sys::unread_bytes(fd)? < 4 {
                return Ok(false);
            }
            // The transport header has arrived: reading it does not wait.
            while self.filled - self.parsed < 4 {
                self.fill(timeout, stop)?;
            }
        }
        let length = self.frame_length_at_parsed()?;
        Ok(self.filled - self.parsed + sys::unread_bytes(fd)? >= 4 + length)
    }

    /// Waits (up to the timeout) for one whole frame and returns where it lies in
    /// `incoming`, without its transport header; it counts as parsed.
    pub fn next_frame(
        &mut self,
        timeout: Duration,
        stop: &StopSignal,
    ) -> io::Result<std::ops::Range<usize>> {
        while self.filled - self.parsed < 4 {
            self.fill(timeout, stop)?;
        }
        let length = self.frame_length_at_parsed()?;
        while self.filled - self.parsed < 4 + length {
            self.fill(timeout, stop)?;
        }
        let start = self.parsed + 4;
        self.parsed = start + length;
        Ok(start..start + length)
    }
}

/// A connection of an engine, with the file it opened (`None` for a bound channel).
pub(super) type OpenedConnection = (SmbConnection, Option<OpenFile>);

/// Opens the connections of one engine on `url`'s file (for writing with `write`): the
/// first logs in and opens the file; up to `options.connections` (no more than the queue
/// depth) follow, bound to its session when the server offers multichannel, else each
/// logging in and opening the file on its own. Returns each connection with the file it
/// opened (`None` for a bound channel, which uses the first one's), and how they are used.
pub(super) fn open_connections(
    url: &SmbUrl,
    credentials: &SmbCredentials,
    security: SmbSecurity,
    options: &EngineOptions,
    write: bool,
) -> Result<(Vec<OpenedConnection>, SmbChannels), EngineError> {
    let setup = |problem: String| EngineError::Setup {
        engine: ENGINE,
        source: io::Error::other(problem),
    };
    let asked = options.connections.max(1);
    if asked > MAX_CHANNELS {
        return Err(setup(format!(
            "{url}: {asked} connections asked; an SMB session takes at most {MAX_CHANNELS}"
        )));
    }
    let count = asked.min(options.queue_depth.max(1));
    let open = |connection: &mut SmbConnection| {
        target::open_for_io(connection, url, write).map_err(|error| {
            setup(target_error(url, credentials, "opening the file", error).to_string())
        })
    };
    let mut first = target::connect(url, credentials, security, options.net_timeout)
        .map_err(|error| setup(error.to_string()))?;
    let file = open(&mut first)?;
    let multichannel = count > 1 && first.facts.multichannel;
    let mut connections = Vec::with_capacity(count as usize);
    for index in 1..count {
        if multichannel {
            let channel = pipelined::connect(&url.server.host, url.server.port, first.timeout)
                .map_err(SmbError::Io)
                .and_then(|stream| {
                    first.bind(
                        stream,
                        &share_address(url),
                    credentials,
                        client_security(security),
                        index as u8,
                    )
                })
                .map_err(|error| {
                    setup(format!(
                        "{url}: binding connection {} of {count} to the session (multichannel): {error}",
                        index + 1
                    ))
                })?;
            connections.push((channel, None));
        } else {
            let mut other = target::connect(url, credentials, security, options.net_timeout)
                .map_err(|error| setup(error.to_string()))?;
            let opened = open(&mut other)?;
            if opened.size_bytes != file.size_bytes {
                return Err(EngineError::VolumeChanged {
                    engine: ENGINE,
                    server: url.server.to_string(),
                    connection: index as usize + 1,
                    changes: vec![crate::engine::volume::VolumeChange {
                        what: "size",
                        probed: file.size_bytes.to_string(),
                        found: opened.size_bytes.to_string(),
                    }],
                });
            }
            connections.push((other, Some(opened)));
        }
    }
    connections.insert(0, (first, Some(file)));
    Ok((
        connections,
        SmbChannels {
            count,
            asked,
            multichannel,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::SmbChannels;
    use smb_client::crypto::{Cipher, Sealer, TRANSFORM_HEADER_BYTES};

    /// Two channels of one encrypted session seal under the same key but never one nonce,
    /// and the server opens both with the session's keys.
    #[test]
    fn channels_of_one_session_seal_under_nonces_of_their_own() {
        for cipher in Cipher::OFFERED {
            let (ours, theirs) = (vec![1; cipher.key_bytes()], vec![2; cipher.key_bytes()]);
            let first = Sealer::new(cipher, &ours, &theirs, 7);
            let server = Sealer::new(cipher, &theirs, &ours, 7);
            let mut nonces = std::collections::HashSet::new();
            for channel in 0..4u8 {
                let mut sealer = if channel == 0 {
                    first.clone()
                } else {
                    first.for_channel(channel)
                };
                for _ in 0..3 {
                    let mut frame = vec![0x5a; TRANSFORM_HEADER_BYTES + 40];
                    sealer.seal(&mut frame);
                    let nonce = frame[20..20 + cipher.nonce_bytes()].to_vec();
                    assert!(nonces.insert(nonce), "{cipher:?}: a nonce used twice");
                    server
                        .open(&mut frame)
                        .expect("opens with the session's keys");
                    assert_eq!(&frame[TRANSFORM_HEADER_BYTES..], &[0x5a; 40][..]);
                }
            }
        }
    }

    #[test]
    fn notes_say_why_connections_differ_from_what_was_asked() {
        let bound = SmbChannels {
            count: 4,
            asked: 4,
            multichannel: true,
        };
        assert_eq!(bound.note(), None);
        assert_eq!(
            bound.describe(),
            "4 channels per worker bound to one session (multichannel)"
        );
        let shallow = SmbChannels {
            count: 2,
            asked: 4,
            multichannel: true,
        };
        assert!(shallow.note().unwrap().contains("using 2"));
        let single = SmbChannels {
            count: 1,
            asked: 1,
            multichannel: false,
        };
        assert_eq!(
            (single.note(), single.describe()),
            (None, "1 connection per worker".into())
        );
    }
}
