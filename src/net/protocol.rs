//! The wire protocol of `iopath net`: one control connection, then the data connections.
//!
//! Every connection opens with eight bytes that say what it is: [`CONTROL_MAGIC`] or
//! [`DATA_MAGIC`]. A control connection then carries [`ControlMessage`]s, one JSON object per
//! line, both ways:
//!
//! ```text
//! client                                   server
//!   CONTROL_MAGIC                      ──►
//!                                      ◄──   Challenge{version, nonce, secret_required}
//!   Hello{streams, …, nonce, proof}    ──►   (proof: see super::auth; none without a secret)
//!                                      ◄──   Welcome{session, proof} | Refused{reason}
//!   N data connections, each:
//!   DATA_MAGIC + DataHeader{session, …} ──►
//!                                      ◄──   Ready
//!   Start                              ──►   (both ends start their windows and senders)
//!                                      ◄──   Interval{…} each second  (when the server receives)
//!                                      ◄──   Finished{…}              (when the server receives)
//!                                      ◄──   Abort{reason}            (when the server ends it)
//!   Stop                               ──►   (senders stop, sockets drain and close)
//! ```
//!
//! A data connection carries its 24-byte [`DataHeader`] and then only payload, one way. Every
//! line is at most [`MAX_LINE_BYTES`]; every count in a message is checked against the test's
//! parameters by whoever reads it.

use super::text::escape;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};

/// First bytes of a control connection.
pub const CONTROL_MAGIC: [u8; 8] = *b"IOPNETC2";
/// First bytes of a data connection.
pub const DATA_MAGIC: [u8; 8] = *b"IOPNETD2";
/// First bytes of a control connection of protocol 1 (answered with a refusal that names the
/// version).
pub const CONTROL_MAGIC_V1: [u8; 8] = *b"IOPNETC1";
/// Version of the control messages; client and server must agree.
pub const PROTOCOL_VERSION: u32 = 2;
/// Longest control line accepted, bytes.
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Most data connections per direction any server accepts (its own limit may be lower).
pub const MAX_STREAMS: u32 = 128;
/// Longest measured window any server accepts, ns (one hour; its own limit may be lower).
pub const MAX_DURATION_NS: u64 = 3_600_000_000_000;
/// Shortest interval of the per-second series, ns.
pub const MIN_INTERVAL_NS: u64 = 10_000_000;
/// Most intervals in one window.
pub const MAX_INTERVALS: u64 = 100_000;

/// One control message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ControlMessage {
    /// Server → client, first: the server's version and nonce.
    Challenge {
        /// [`PROTOCOL_VERSION`] of the server.
        version: u32,
        /// The server's nonce, hexadecimal.
        nonce: String,
        /// The server has a shared secret and wants a proof of it.
        secret_required: bool,
    },
    /// Client → server: the parameters of a test.
    Hello {
        /// [`PROTOCOL_VERSION`] of the client.
        version: u32,
        /// Data connections per direction.
        streams: u32,
        /// Length of the measured window, ns.
        duration_ns: u64,
        /// Length of one interval of the per-second series, ns.
        interval_ns: u64,
        /// The client sends (the server receives and counts).
        client_sends: bool,
        /// The server sends (the client receives and counts).
        server_sends: bool,
        /// The client's nonce, hexadecimal.
        nonce: String,
        /// The client's proof of the secret, hexadecimal (none without a secret).
        proof: Option<String>,
    },
    /// Server → client: the test is accepted; data connections carry this session number.
    Welcome {
        /// Session number.
        session: u64,
        /// The server's proof of the secret, hexadecimal (none without a secret).
        proof: Option<String>,
    },
    /// Server → client: the test is refused (busy, bad parameters, other version, no or a
    /// wrong secret).
    Refused {
        /// Why.
        reason: String,
    },
    /// Server → client: every data connection has arrived.
    Ready,
    /// Client → server: start the window now.
    Start,
    /// Server → client: bytes the server received in one interval of its window.
    Interval {
        /// Interval number, from 0.
        index: u64,
        /// Start of the interval, ns after the window started.
        start_ns: u64,
        /// Length of the interval, ns.
        duration_ns: u64,
        /// Payload bytes received in it.
        bytes: u64,
    },
    /// Server → client: the server's window is over.
    Finished {
        /// Length of the window, ns.
        measured_ns: u64,
        /// Payload bytes received in it.
        bytes: u64,
        /// The same, per data connection.
        stream_bytes: Vec<u64>,
        /// Errors of the server's data connections.
        errors: Vec<String>,
    },
    /// Server → client: the server ended the test early (a stream stalled, a limit passed).
    Abort {
        /// Why.
        reason: String,
    },
    /// Client → server: stop sending and close.
    Stop,
}

impl ControlMessage {
    /// The message's type, as it is named on the wire (for errors that must not echo a peer's
    /// text).
    pub fn name(&self) -> &'static str {
        match self {
            ControlMessage::Challenge { .. } => "challenge",
            ControlMessage::Hello { .. } => "hello",
            ControlMessage::Welcome { .. } => "welcome",
            ControlMessage::Refused { .. } => "refused",
            ControlMessage::Ready => "ready",
            ControlMessage::Start => "start",
            ControlMessage::Interval { .. } => "interval",
            ControlMessage::Finished { .. } => "finished",
            ControlMessage::Abort { .. } => "abort",
            ControlMessage::Stop => "stop",
        }
    }
}

/// The parameters of a test as both proofs cover them: streams, duration, interval (integers
/// little-endian), then one byte per direction.
pub fn parameter_bytes(
    streams: u32,
    duration_ns: u64,
    interval_ns: u64,
    client_sends: bool,
    server_sends: bool,
) -> [u8; 22] {
    let mut bytes = [0u8; 22];
    bytes[..4].copy_from_slice(&streams.to_le_bytes());
    bytes[4..12].copy_from_slice(&duration_ns.to_le_bytes());
    bytes[12..20].copy_from_slice(&interval_ns.to_le_bytes());
    bytes[20] = u8::from(client_sends);
    bytes[21] = u8::from(server_sends);
    bytes
}

/// Which way a data connection carries payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamRole {
    /// Client → server.
    ClientSends,
    /// Server → client.
    ServerSends,
}

/// The header of a data connection, after [`DATA_MAGIC`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    /// Session from [`ControlMessage::Welcome`].
    pub session: u64,
    /// Number of the connection within its direction, from 0.
    pub stream: u32,
    /// Which way it carries payload.
    pub role: StreamRole,
}

/// Length of [`DATA_MAGIC`] plus an encoded [`DataHeader`].
pub const DATA_HEADER_BYTES: usize = 24;

impl DataHeader {
    /// The 24 bytes sent first on a data connection: magic, session, stream, role, padding
    /// (integers little-endian).
    pub fn encode(&self) -> [u8; DATA_HEADER_BYTES] {
        let mut bytes = [0u8; DATA_HEADER_BYTES];
        bytes[..8].copy_from_slice(&DATA_MAGIC);
        bytes[8..16].copy_from_slice(&self.session.to_le_bytes());
        bytes[16..20].copy_from_slice(&self.stream.to_le_bytes());
        bytes[20] = match self.role {
            StreamRole::ClientSends => 0,
            StreamRole::ServerSends => 1,
        };
        bytes
    }

    /// Reads the 16 bytes that follow [`DATA_MAGIC`].
    pub fn decode_after_magic(bytes: &[u8; DATA_HEADER_BYTES - 8]) -> Result<Self, String> {
        let role = match bytes[12] {
            0 => StreamRole::ClientSends,
            1 => StreamRole::ServerSends,
            other => return Err(format!("unknown stream role {other}")),
        };
        Ok(DataHeader {
            session: u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
            stream: u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")),
            role,
        })
    }
}

/// What a connection said it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionKind {
    /// A control connection.
    Control,
    /// A data connection.
    Data,
    /// A control connection of protocol 1.
    ControlV1,
}

/// Reads the eight opening bytes of a connection.
pub fn read_magic(reader: &mut dyn Read) -> std::io::Result<ConnectionKind> {
    let mut magic = [0u8; 8];
    reader.read_exact(&mut magic)?;
    if magic == CONTROL_MAGIC {
        Ok(ConnectionKind::Control)
    } else if magic == DATA_MAGIC {
        Ok(ConnectionKind::Data)
    } else if magic == CONTROL_MAGIC_V1 {
        Ok(ConnectionKind::ControlV1)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not an iopath net connection",
        ))
    }
}

/// Writes one message as a JSON line.
pub fn write_message(writer: &mut dyn Write, message: &ControlMessage) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    writer.write_all(&line)?;
    writer.flush()
}

/// What a background reader passes on: each message, until the end or an error.
pub type Incoming = std::sync::mpsc::Receiver<std::io::Result<Option<ControlMessage>>>;

/// Reads messages from `reader` on a thread of its own until the stream ends, fails, or the
/// receiving side is dropped.
pub fn read_in_background(
    mut reader: impl BufRead + Send + 'static,
) -> std::io::Result<(Incoming, std::thread::JoinHandle<()>)> {
    let (sender, messages) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("net-control".into())
        .spawn(move || {
            loop {
                let message = read_message(&mut reader);
                let end = !matches!(message, Ok(Some(_)));
                if sender.send(message).is_err() || end {
                    break;
                }
            }
        })?;
    Ok((messages, thread))
}

/// Reads one message; `Ok(None)` at the end of the stream.
pub fn read_message(reader: &mut dyn BufRead) -> std::io::Result<Option<ControlMessage>> {
    let mut line = Vec::new();
    let read = reader
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if read == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        let reason = if line.len() > MAX_LINE_BYTES {
            "control message too long"
        } else {
            "control connection closed in the middle of a message"
        };
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, reason));
    }
    // A parse error can quote the peer's text: escaped before anyone shows it.
    serde_json::from_slice(&line).map(Some).map_err(|error| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not a valid message: {}", escape(&error.to_string())),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_header_round_trips() {
        let header = DataHeader {
            session: 0x0102_0304_0506_0708,
            stream: 17,
            role: StreamRole::ServerSends,
        };
        let bytes = header.encode();
        let mut reader = &bytes[..];
        assert_eq!(read_magic(&mut reader).unwrap(), ConnectionKind::Data);
        let rest: [u8; 16] = bytes[8..].try_into().unwrap();
        assert_eq!(DataHeader::decode_after_magic(&rest).unwrap(), header);
    }

    #[test]
    fn unknown_magic_is_refused() {
        let mut reader = &b"GET / HTTP/1.1\r\n"[..];
        assert!(read_magic(&mut reader).is_err());
    }

    #[test]
    fn messages_round_trip_as_lines() {
        let messages = [
            ControlMessage::Hello {
                version: PROTOCOL_VERSION,
                streams: 4,
                duration_ns: 3_000_000_000,
                interval_ns: 1_000_000_000,
                client_sends: true,
                server_sends: false,
                nonce: "00".repeat(32),
                proof: None,
            },
            ControlMessage::Interval {
                index: 1,
                start_ns: 1_000_000_000,
                duration_ns: 1_000_000_000,
                bytes: 118_000_000,
            },
            ControlMessage::Stop,
        ];
        let mut wire = Vec::new();
        for message in &messages {
            write_message(&mut wire, message).unwrap();
        }
        let mut reader = std::io::BufReader::new(&wire[..]);
        for message in &messages {
            assert_eq!(read_message(&mut reader).unwrap().as_ref(), Some(message));
        }
        assert_eq!(read_message(&mut reader).unwrap(), None);
    }

    #[test]
    fn a_parse_error_does_not_echo_control_characters() {
        let wire = b"{\"type\":\"\\u001b[2J\"}\n";
        let mut reader = std::io::BufReader::new(&wire[..]);
        let error = read_message(&mut reader).unwrap_err().to_string();
        assert!(!error.contains('\x1b'), "{error}");
    }

    #[test]
    fn parameters_encode_every_field() {
        let base = parameter_bytes(1, 2, 3, true, false);
        for other in [
            parameter_bytes(2, 2, 3, true, false),
            parameter_bytes(1, 3, 3, true, false),
            parameter_bytes(1, 2, 4, true, false),
            parameter_bytes(1, 2, 3, false, false),
            parameter_bytes(1, 2, 3, true, true),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn overlong_and_cut_lines_are_errors() {
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        let mut reader = std::io::BufReader::new(&long[..]);
        assert!(read_message(&mut reader).is_err());
        let mut reader = std::io::BufReader::new(&b"{\"type\":\"start\""[..]);
        assert!(read_message(&mut reader).is_err());
    }
}
