//! The wire protocol of `iopath net`: one control connection, then the data connections.
//!
//! Every connection opens with eight bytes that say what it is: [`CONTROL_MAGIC`] or
//! [`DATA_MAGIC`]. A control connection then carries [`ControlMessage`]s, one JSON object per
//! line, both ways:
//!
//! ```text
//! client                                   server
//!   CONTROL_MAGIC, Hello{streams, …}   ──►
//!                                      ◄──   Welcome{session} | Refused{reason}
//!   N data connections, each:
//!   DATA_MAGIC + DataHeader{session, …} ──►
//!                                      ◄──   Ready
//!   Start                              ──►   (both ends start their windows and senders)
//!                                      ◄──   Interval{…} each second  (when the server receives)
//!                                      ◄──   Finished{…}              (when the server receives)
//!   Stop                               ──►   (senders stop, sockets drain and close)
//! ```
//!
//! A data connection carries its 24-byte [`DataHeader`] and then only payload, one way.

use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};

/// First bytes of a control connection.
pub const CONTROL_MAGIC: [u8; 8] = *b"IOPNETC1";
/// First bytes of a data connection.
pub const DATA_MAGIC: [u8; 8] = *b"IOPNETD1";
/// Version of the control messages; client and server must agree.
pub const PROTOCOL_VERSION: u32 = 1;
/// Longest control line accepted, bytes.
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Most data connections per direction a server accepts.
pub const MAX_STREAMS: u32 = 128;
/// Longest measured window a server accepts, ns (one hour).
pub const MAX_DURATION_NS: u64 = 3_600_000_000_000;

/// One control message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ControlMessage {
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
    },
    /// Server → client: the test is accepted; data connections carry this session number.
    Welcome {
        /// Session number.
        session: u64,
    },
    /// Server → client: the test is refused (busy, bad parameters, other version).
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
    /// Client → server: stop sending and close.
    Stop,
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
}

/// Reads the eight opening bytes of a connection.
pub fn read_magic(reader: &mut dyn Read) -> std::io::Result<ConnectionKind> {
    let mut magic = [0u8; 8];
    reader.read_exact(&mut magic)?;
    if magic == CONTROL_MAGIC {
        Ok(ConnectionKind::Control)
    } else if magic == DATA_MAGIC {
        Ok(ConnectionKind::Data)
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
    serde_json::from_slice(&line)
        .map(Some)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
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
    fn overlong_and_cut_lines_are_errors() {
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        let mut reader = std::io::BufReader::new(&long[..]);
        assert!(read_message(&mut reader).is_err());
        let mut reader = std::io::BufReader::new(&b"{\"type\":\"start\""[..]);
        assert!(read_message(&mut reader).is_err());
    }
}
