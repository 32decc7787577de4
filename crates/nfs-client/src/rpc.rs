//! ONC RPC version 2 (RFC 5531) over TCP with record marking: the call header with AUTH_SYS
//! credentials, the reply header, and one blocking connection for the calls made before the
//! run (portmapper, MOUNT, LOOKUP, GETATTR …). A caller that pipelines READ and WRITE on a
//! socket of its own builds its calls with [`call_header`] and splits its replies with
//! [`record_mark`].
//!
//! Everything read from a server is bounded: a record may not exceed the caller's limit
//! (checked on each fragment header before its bytes are read), and every wait is bounded by
//! the connection's timeout.

use crate::xdr::{Decoder, Encoder, XdrError};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The last-fragment bit of a record mark.
const LAST_FRAGMENT: u32 = 0x8000_0000;
/// AUTH_NONE.
const AUTH_NONE: u32 = 0;
/// AUTH_SYS (AUTH_UNIX).
const AUTH_SYS: u32 = 1;
/// The largest verifier a reply may carry (RFC 5531: 400 bytes).
const MAX_VERIFIER_BYTES: usize = 400;
/// Bytes of a reply header up to the procedure's results, with an AUTH_NONE verifier.
pub const REPLY_HEADER_BYTES: usize = 24;

/// Why an RPC call failed.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The connection failed or timed out.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server does not offer the program, version or procedure, or rejected the call.
    #[error("{0}")]
    Refused(String),
    /// The reply broke the protocol.
    #[error("{0}")]
    Malformed(#[from] XdrError),
}

/// The identity sent with every call (AUTH_SYS): this process's user and group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    /// User id.
    pub uid: u32,
    /// Group id.
    pub gid: u32,
    /// Machine name sent to the server.
    pub machine: String,
}

impl Credentials {
    /// This process's effective user and group, and the host name.
    pub fn of_process() -> Self {
        // SAFETY: geteuid and getegid have no preconditions and cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let mut name = [0u8; 65];
        // SAFETY: `name` is valid for writes of its length; gethostname writes at most that.
        let named = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len() - 1) } == 0;
        let length = name.iter().position(|byte| *byte == 0).unwrap_or(0);
        let machine = match std::str::from_utf8(&name[..length]) {
            Ok(text) if named && !text.is_empty() => text.to_string(),
            _ => crate::CLIENT_NAME.to_string(),
        };
        Credentials { uid, gid, machine }
    }
}

/// Appends a record mark placeholder and the header of a call (`xid`, program, version,
/// procedure, AUTH_SYS credentials, AUTH_NONE verifier) to `encoder`; returns where the
/// record starts, for [`finish_record`] once the arguments are appended.
pub fn call_header(
    encoder: &mut Encoder,
    xid: u32,
    program: u32,
    version: u32,
    procedure: u32,
    credentials: &Credentials,
) -> usize {
    let start = encoder.bytes.len();
    encoder
        .u32(0)
        .u32(xid)
        .u32(0)
        .u32(2)
        .u32(program)
        .u32(version)
        .u32(procedure);
    let mut body = Encoder::default();
    body.u32(0)
        .opaque(credentials.machine.as_bytes())
        .u32(credentials.uid)
        .u32(credentials.gid)
        .u32(0);
    encoder
        .u32(AUTH_SYS)
        .opaque(&body.bytes)
        .u32(AUTH_NONE)
        .u32(0);
    start
}

/// Writes the record mark of the record that starts at `start` (one fragment, the last).
pub fn finish_record(encoder: &mut Encoder, start: usize) {
    let length = (encoder.bytes.len() - start - 4) as u32;
    encoder.bytes[start..start + 4].copy_from_slice(&(LAST_FRAGMENT | length).to_be_bytes());
}

/// The fragment length and last-fragment bit of a record mark (its four bytes as sent).
#[inline]
pub fn record_mark(mark: [u8; 4]) -> (usize, bool) {
    let mark = u32::from_be_bytes(mark);
    ((mark & !LAST_FRAGMENT) as usize, mark & LAST_FRAGMENT != 0)
}

/// The most fragments one record may come in: a server splitting a reply into empty
/// fragments would otherwise keep the reader busy without end (servers send one).
pub const MAX_FRAGMENTS: usize = 1024;

/// Reads one whole record (all its fragments) into `record` (cleared first); a record longer
/// than `limit` bytes, or in more than [`MAX_FRAGMENTS`] fragments, is an error before its
/// bytes are read.
pub fn read_record(stream: &mut impl Read, record: &mut Vec<u8>, limit: usize) -> io::Result<()> {
    record.clear();
    for _ in 0..MAX_FRAGMENTS {
        let mut mark = [0u8; 4];
        stream.read_exact(&mut mark)?;
        let (length, last) = record_mark(mark);
        let start = record.len();
        if start + length > limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the server sent a reply of more than {limit} bytes"),
            ));
        }
        record.resize(start + length, 0);
        stream.read_exact(&mut record[start..])?;
        if last {
            return Ok(());
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the server sent a reply in more than {MAX_FRAGMENTS} fragments"),
    ))
}

/// Reads a reply header (up to the procedure's results) and returns its xid; a reply that
/// was not accepted, or whose call failed at the RPC level, is an error.
pub fn reply_header(decoder: &mut Decoder<'_>) -> Result<u32, RpcError> {
    let xid = decoder.u32("xid")?;
    if decoder.u32("message type")? != 1 {
        return Err(XdrError("a call where a reply was expected".into()).into());
    }
    match decoder.u32("reply status")? {
        0 => {}
        1 => {
            return Err(RpcError::Refused(match decoder.u32("reject status")? {
                0 => "the server does not speak RPC version 2".to_string(),
                _ => match decoder.u32("auth status")? {
                    1 | 2 => "the server rejected the AUTH_SYS credentials".to_string(),
                    5 => "the server does not accept AUTH_SYS (it wants another security flavor)"
                        .to_string(),
                    other => format!("the server refused the credentials (auth status {other})"),
                },
            }));
        }
        other => return Err(XdrError(format!("reply status {other}")).into()),
    }
    decoder.u32("verifier flavor")?;
    decoder.opaque(MAX_VERIFIER_BYTES, "verifier")?;
    match decoder.u32("accept status")? {
        0 => Ok(xid),
        1 => Err(RpcError::Refused(
            "the server does not offer this program".into(),
        )),
        2 => {
            let low = decoder.u32("lowest version")?;
            let high = decoder.u32("highest version")?;
            Err(RpcError::Refused(format!(
                "the server offers only versions {low} to {high} of this program"
            )))
        }
        3 => Err(RpcError::Refused(
            "the server does not offer this procedure".into(),
        )),
        4 => Err(RpcError::Refused(
            "the server could not decode the arguments".into(),
        )),
        other => Err(RpcError::Refused(format!(
            "the server failed the call (accept status {other})"
        ))),
    }
}

/// Connects to `host:port` (each of its addresses in turn) within `timeout`, with
/// `TCP_NODELAY` and read and write timeouts of `timeout`.
pub fn connect(host: &str, port: u16, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"));
    for address in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                stream.set_read_timeout(Some(timeout))?;
                stream.set_write_timeout(Some(timeout))?;
                return Ok(stream);
            }
            Err(error) => last = error,
        }
    }
    Err(last)
}

/// One blocking RPC connection for the calls made before the run.
#[derive(Debug)]
pub struct RpcConnection {
    stream: TcpStream,
    next_xid: u32,
    credentials: Credentials,
    record: Vec<u8>,
}

/// The longest reply to a call made on an [`RpcConnection`] (setup calls carry no data).
pub const MAX_SETUP_REPLY_BYTES: usize = 64 * 1024;

/// The most replies to other calls (late replies to calls that timed out) skipped while the
/// reply to a call is awaited: a server sending others without end is cut off.
pub const MAX_SKIPPED_REPLIES: usize = 64;

impl RpcConnection {
    /// Connects to `host:port` (see [`connect`]).
    pub fn open(
        host: &str,
        port: u16,
        timeout: Duration,
        credentials: Credentials,
    ) -> io::Result<Self> {
        Ok(RpcConnection {
            stream: connect(host, port, timeout)?,
            next_xid: std::process::id().wrapping_mul(0x9E37_79B9),
            credentials,
            record: Vec::new(),
        })
    }

    /// A connection on `stream`, already connected (nothing may be in flight on it).
    pub fn from_stream(stream: TcpStream, credentials: Credentials) -> Self {
        RpcConnection {
            stream,
            next_xid: std::process::id().wrapping_mul(0x9E37_79B9) ^ 0x8000_0000,
            credentials,
            record: Vec::new(),
        }
    }

    /// Waits at most `timeout` for the server from now on.
    pub fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.stream.set_read_timeout(Some(timeout))?;
        self.stream.set_write_timeout(Some(timeout))
    }

    /// The connection's socket (for pipelined I/O once the blocking calls are done).
    pub fn into_stream(self) -> TcpStream {
        self.stream
    }

    /// Calls `procedure` of `program` `version` with XDR `arguments`; returns the results
    /// (the reply after its header).
    pub fn call(
        &mut self,
        program: u32,
        version: u32,
        procedure: u32,
        arguments: &[u8],
    ) -> Result<Vec<u8>, RpcError> {
        self.next_xid = self.next_xid.wrapping_add(1);
        let xid = self.next_xid;
        let mut encoder = Encoder::default();
        let start = call_header(
            &mut encoder,
            xid,
            program,
            version,
            procedure,
            &self.credentials,
        );
        encoder.bytes.extend_from_slice(arguments);
        finish_record(&mut encoder, start);
        self.stream.write_all(&encoder.bytes)?;
        for _ in 0..=MAX_SKIPPED_REPLIES {
            read_record(&mut self.stream, &mut self.record, MAX_SETUP_REPLY_BYTES)?;
            let mut decoder = Decoder::new(&self.record);
            let replied = reply_header(&mut decoder)?;
            if replied == xid {
                return Ok(self.record[decoder.position()..].to_vec());
            }
        }
        Err(XdrError(format!(
            "more than {MAX_SKIPPED_REPLIES} replies to calls that were not made"
        ))
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_one_marked_record_with_auth_sys() {
        let mut encoder = Encoder::default();
        let credentials = Credentials {
            uid: 1,
            gid: 2,
            machine: "m".into(),
        };
        let start = call_header(&mut encoder, 9, 100003, 3, 6, &credentials);
        encoder.u32(5);
        finish_record(&mut encoder, start);
        let mut record = Vec::new();
        read_record(&mut encoder.bytes.as_slice(), &mut record, 1024).unwrap();
        let mut decoder = Decoder::new(&record);
        assert_eq!(decoder.u32("xid").unwrap(), 9);
        assert_eq!(record.len() + 4, encoder.bytes.len());
        assert!(read_record(&mut encoder.bytes.as_slice(), &mut record, 8).is_err());
    }

    #[test]
    fn replies_that_refuse_are_errors() {
        let mut accepted = Encoder::default();
        accepted.u32(7).u32(1).u32(0).u32(0).u32(0).u32(0);
        assert_eq!(reply_header(&mut Decoder::new(&accepted.bytes)).unwrap(), 7);
        let mut mismatch = Encoder::default();
        mismatch
            .u32(7)
            .u32(1)
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(2)
            .u32(2)
            .u32(2);
        let error = reply_header(&mut Decoder::new(&mismatch.bytes)).unwrap_err();
        assert!(error.to_string().contains("versions 2 to 2"), "{error}");
        let mut denied = Encoder::default();
        denied.u32(7).u32(1).u32(1).u32(1).u32(5);
        let error = reply_header(&mut Decoder::new(&denied.bytes)).unwrap_err();
        assert!(error.to_string().contains("AUTH_SYS"), "{error}");
    }
}
