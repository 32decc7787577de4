//! The handshake: fixed newstyle negotiation up to the transmission phase.
//!
//! The client reads the greeting (`NBDMAGIC`, `IHAVEOPT`, handshake flags), answers with
//! `NBD_FLAG_C_FIXED_NEWSTYLE` (and `NBD_FLAG_C_NO_ZEROES` when offered), then sends
//! `NBD_OPT_GO` for the export asking for `NBD_INFO_EXPORT` and `NBD_INFO_BLOCK_SIZE`. The
//! server answers with information replies and a final acknowledgement or error. Only a server
//! that does not know `NBD_OPT_GO` (`NBD_REP_ERR_UNSUP`, or no fixed newstyle at all) is asked
//! with the older `NBD_OPT_EXPORT_NAME`, which cannot report errors: the server just closes the
//! connection. Structured replies are never requested, so the server answers every command
//! with a simple reply.
//!
//! Everything here is blocking I/O on the stream. Hand in a
//! [`crate::socket::DeadlineStream`], and the whole handshake shares one deadline. What the
//! server sends is bounded too: at most [`MAX_OPTION_REPLIES`] replies to `NBD_OPT_GO`, each
//! at most [`MAX_OPTION_REPLY_BYTES`] (an information item at most [`MAX_INFO_BYTES`]), and
//! [`MAX_HANDSHAKE_BYTES`] in all. Text from the server is shown with control characters
//! escaped.

use crate::socket::WaitEnded;
use crate::wire::{self, BlockSizes, TransmissionFlags};
use std::io::{self, Read, Write};
use std::time::Duration;
use wire_text::{escape_controls, format_wait};

/// Longest option reply payload accepted (error messages are far shorter).
pub const MAX_OPTION_REPLY_BYTES: u32 = 16 * 1024;

/// Longest information item accepted: its type and a name or description of the protocol's
/// largest, 4096 bytes (the items asked for are 12 and 14 bytes).
pub const MAX_INFO_BYTES: u32 = 2 + wire::MAX_NAME_BYTES as u32;

/// Most replies accepted to one `NBD_OPT_GO` (a server sends two to five).
pub const MAX_OPTION_REPLIES: u32 = 32;

/// Most bytes read from the server during the whole handshake.
pub const MAX_HANDSHAKE_BYTES: usize = 64 * 1024;

/// How the export was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Negotiation {
    /// `NBD_OPT_GO`.
    Go,
    /// `NBD_OPT_EXPORT_NAME` (the server lacks `NBD_OPT_GO`).
    ExportName,
}

/// What the handshake learnt about the export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Export {
    /// Size in bytes.
    pub size_bytes: u64,
    /// Transmission flags.
    pub flags: TransmissionFlags,
    /// Block size constraints, when the server announced them.
    pub block_sizes: Option<BlockSizes>,
    /// How the export was chosen.
    pub negotiation: Negotiation,
}

/// Smallest block when the server announces none: what a client that wants to work with every
/// server uses.
pub const DEFAULT_MINIMUM_BLOCK: u32 = 512;

/// Preferred block size when the server announces none (the protocol's default).
pub const DEFAULT_PREFERRED_BLOCK: u32 = 4096;

impl Export {
    /// The smallest block (announced, else [`DEFAULT_MINIMUM_BLOCK`]).
    pub fn minimum_block(&self) -> u32 {
        self.block_sizes
            .map_or(DEFAULT_MINIMUM_BLOCK, |sizes| sizes.minimum)
    }

    /// The preferred block size (announced, else [`DEFAULT_PREFERRED_BLOCK`]).
    pub fn preferred_block(&self) -> u32 {
        self.block_sizes
            .map_or(DEFAULT_PREFERRED_BLOCK, |sizes| sizes.preferred)
    }

    /// The largest request announced, bytes; 0 when the server announced no limit.
    pub fn maximum_request(&self) -> u32 {
        self.block_sizes.map_or(0, |sizes| sizes.maximum)
    }
}

/// Why a handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// Reading or writing the socket failed.
    #[error("{during}: {source}")]
    Io {
        /// The step.
        during: &'static str,
        /// Cause.
        source: io::Error,
    },
    /// The handshake did not finish by its deadline.
    #[error("no reply within {} to the handshake (stuck at {during})", format_wait(*timeout))]
    TimedOut {
        /// The step.
        during: &'static str,
        /// The time the whole handshake was allowed.
        timeout: Duration,
    },
    /// The stop flag was raised during the handshake.
    #[error("the run stopped during the handshake ({during})")]
    Stopped {
        /// The step.
        during: &'static str,
    },
    /// The server closed the connection.
    #[error("the server closed the connection during {during}")]
    Closed {
        /// The step.
        during: &'static str,
    },
    /// The peer is no NBD server.
    #[error("not an NBD server (the greeting lacks NBDMAGIC)")]
    NotNbd,
    /// The server only speaks oldstyle negotiation.
    #[error("the server uses oldstyle negotiation, which is not supported (use a newstyle server)")]
    Oldstyle,
    /// The export name is too long for the protocol.
    #[error("export name of {0} bytes is longer than the protocol's 4096")]
    NameTooLong(usize),
    /// The server has no such export.
    #[error("the server has no export named '{export}' (NBD_REP_ERR_UNKNOWN){message}")]
    UnknownExport {
        /// The name asked for.
        export: String,
        /// ": " and the server's message, or nothing.
        message: String,
    },
    /// The server insists on TLS.
    #[error("the server requires TLS for export '{export}', which this client does not support")]
    TlsRequired {
        /// The name asked for.
        export: String,
    },
    /// The server refused the export for another reason.
    #[error("the server refused export '{export}' ({reason}){message}")]
    Refused {
        /// The name asked for.
        export: String,
        /// The protocol's name of the error reply.
        reason: &'static str,
        /// ": " and the server's message, or nothing.
        message: String,
    },
    /// The server closed the connection after `NBD_OPT_EXPORT_NAME`: the old way to refuse.
    #[error(
        "the server closed the connection when asked for export '{export}' (it lacks NBD_OPT_GO, so it cannot say why; most likely there is no such export)"
    )]
    ExportNameRefused {
        /// The name asked for.
        export: String,
    },
    /// An option reply announced a payload longer than any the client accepts.
    #[error("{what} of {length} bytes announced (at most {limit} accepted)")]
    ReplyTooLong {
        /// "option reply" or "information reply".
        what: &'static str,
        /// The length the server announced.
        length: u32,
        /// The longest accepted.
        limit: u32,
    },
    /// The server would not stop sending replies to `NBD_OPT_GO`.
    #[error("the server sent more than {limit} replies to NBD_OPT_GO without an acknowledgement")]
    TooManyReplies {
        /// Most replies accepted.
        limit: u32,
    },
    /// The server sent more bytes than any handshake needs.
    #[error("the server sent more than {limit} bytes during the handshake")]
    TooManyBytes {
        /// Most bytes accepted.
        limit: usize,
    },
    /// The server broke the protocol.
    #[error("handshake protocol error: {0}")]
    Protocol(String),
}

impl HandshakeError {
    /// The closest [`io::ErrorKind`], for wrapping into an [`io::Error`].
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            HandshakeError::Io { source, .. } => source.kind(),
            HandshakeError::TimedOut { .. } => io::ErrorKind::TimedOut,
            HandshakeError::Stopped { .. } => io::ErrorKind::ConnectionAborted,
            HandshakeError::Closed { .. } | HandshakeError::ExportNameRefused { .. } => {
                io::ErrorKind::UnexpectedEof
            }
            HandshakeError::UnknownExport { .. } => io::ErrorKind::NotFound,
            HandshakeError::TlsRequired { .. } | HandshakeError::Oldstyle => {
                io::ErrorKind::Unsupported
            }
            HandshakeError::Refused { .. } => io::ErrorKind::PermissionDenied,
            HandshakeError::NameTooLong(_) => io::ErrorKind::InvalidInput,
            HandshakeError::NotNbd
            | HandshakeError::ReplyTooLong { .. }
            | HandshakeError::TooManyReplies { .. }
            | HandshakeError::TooManyBytes { .. }
            | HandshakeError::Protocol(_) => io::ErrorKind::InvalidData,
        }
    }

    /// The error of a failed read or write during step `during` (a [`WaitEnded`] inside it
    /// becomes [`HandshakeError::TimedOut`] or [`HandshakeError::Stopped`]).
    pub fn of_io(during: &'static str, source: io::Error) -> HandshakeError {
        match WaitEnded::of(&source) {
            Some(WaitEnded::TimedOut { timeout }) => HandshakeError::TimedOut { during, timeout },
            Some(WaitEnded::Stopped) => HandshakeError::Stopped { during },
            None if source.kind() == io::ErrorKind::UnexpectedEof => {
                HandshakeError::Closed { during }
            }
            None => HandshakeError::Io { during, source },
        }
    }
}

/// Most characters of a server's message that are shown.
const SHOWN_MESSAGE_CHARS: usize = 512;

/// Text from the server as it may be shown: control characters escaped, at most
/// [`SHOWN_MESSAGE_CHARS`] characters (then an ellipsis).
fn printable(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    match text.char_indices().nth(SHOWN_MESSAGE_CHARS) {
        None => escape_controls(text).into_owned(),
        Some((end, _)) => format!("{}…", escape_controls(&text[..end])),
    }
}

/// The stream of one handshake, counting what the server sent against
/// [`MAX_HANDSHAKE_BYTES`].
struct Conversation<'s, S> {
    stream: &'s mut S,
    received: usize,
}

impl<S: Read + Write> Conversation<'_, S> {
    /// Reads exactly `buffer.len()` bytes during step `during`.
    fn read_exact(
        &mut self,
        buffer: &mut [u8],
        during: &'static str,
    ) -> Result<(), HandshakeError> {
        if self.received + buffer.len() > MAX_HANDSHAKE_BYTES {
            return Err(HandshakeError::TooManyBytes {
                limit: MAX_HANDSHAKE_BYTES,
            });
        }
        self.received += buffer.len();
        self.stream
            .read_exact(buffer)
            .map_err(|source| HandshakeError::of_io(during, source))
    }

    /// Writes all of `bytes` during step `during`.
    fn write_all(&mut self, bytes: &[u8], during: &'static str) -> Result<(), HandshakeError> {
        self.stream
            .write_all(bytes)
            .map_err(|source| HandshakeError::of_io(during, source))
    }

    /// Sends option `option` with `data`.
    fn send_option(
        &mut self,
        option: u32,
        data: &[u8],
        during: &'static str,
    ) -> Result<(), HandshakeError> {
        let mut message = Vec::with_capacity(16 + data.len());
        message.extend_from_slice(&wire::OPTION_MAGIC.to_be_bytes());
        message.extend_from_slice(&option.to_be_bytes());
        message.extend_from_slice(&(data.len() as u32).to_be_bytes());
        message.extend_from_slice(data);
        self.write_all(&message, during)
    }
}

/// Negotiates `export` on a freshly connected `stream` and leaves it in the transmission phase.
/// Give it a [`crate::socket::DeadlineStream`] (or a stream with timeouts of its own): a
/// server that stops sending would otherwise keep it waiting.
pub fn negotiate<S: Read + Write>(stream: &mut S, export: &str) -> Result<Export, HandshakeError> {
    if export.len() > wire::MAX_NAME_BYTES {
        return Err(HandshakeError::NameTooLong(export.len()));
    }
    let mut conversation = Conversation {
        stream,
        received: 0,
    };
    let mut greeting = [0u8; 18];
    conversation.read_exact(&mut greeting[..8], "the greeting")?;
    if wire::be_u64(&greeting[..8]) != wire::GREETING_MAGIC {
        return Err(HandshakeError::NotNbd);
    }
    conversation.read_exact(&mut greeting[8..16], "the greeting")?;
    match wire::be_u64(&greeting[8..16]) {
        wire::OPTION_MAGIC => {}
        wire::OLDSTYLE_MAGIC => return Err(HandshakeError::Oldstyle),
        other => {
            return Err(HandshakeError::Protocol(format!(
                "unknown negotiation magic {other:#018x} after NBDMAGIC"
            )));
        }
    }
    conversation.read_exact(&mut greeting[16..18], "the greeting")?;
    let handshake_flags = wire::be_u16(&greeting[16..18]);
    let fixed = handshake_flags & wire::FLAG_FIXED_NEWSTYLE != 0;
    let no_zeroes = handshake_flags & wire::FLAG_NO_ZEROES != 0;
    let mut client_flags = 0;
    if fixed {
        client_flags |= wire::CLIENT_FIXED_NEWSTYLE;
    }
    if no_zeroes {
        client_flags |= wire::CLIENT_NO_ZEROES;
    }
    conversation.write_all(&client_flags.to_be_bytes(), "sending client flags")?;
    if fixed && let Some(found) = go(&mut conversation, export)? {
        return Ok(found);
    }
    export_name(&mut conversation, export, no_zeroes)
}

/// Asks for `export` with `NBD_OPT_GO`; `None` when the server does not know the option.
fn go<S: Read + Write>(
    conversation: &mut Conversation<'_, S>,
    export: &str,
) -> Result<Option<Export>, HandshakeError> {
    let mut data = Vec::with_capacity(4 + export.len() + 6);
    data.extend_from_slice(&(export.len() as u32).to_be_bytes());
    data.extend_from_slice(export.as_bytes());
    data.extend_from_slice(&2u16.to_be_bytes());
    data.extend_from_slice(&wire::INFO_EXPORT.to_be_bytes());
    data.extend_from_slice(&wire::INFO_BLOCK_SIZE.to_be_bytes());
    conversation.send_option(wire::OPT_GO, &data, "sending NBD_OPT_GO")?;

    let mut size_and_flags = None;
    let mut block_sizes = None;
    for _ in 0..MAX_OPTION_REPLIES {
        let mut header = [0u8; wire::OPTION_REPLY_HEADER_BYTES];
        conversation.read_exact(&mut header, "the reply to NBD_OPT_GO")?;
        let magic = wire::be_u64(&header[0..8]);
        let option = wire::be_u32(&header[8..12]);
        let reply = wire::be_u32(&header[12..16]);
        let length = wire::be_u32(&header[16..20]);
        if magic != wire::OPTION_REPLY_MAGIC {
            return Err(HandshakeError::Protocol(format!(
                "option reply with magic {magic:#018x} (expected {:#018x})",
                wire::OPTION_REPLY_MAGIC
            )));
        }
        if option != wire::OPT_GO {
            return Err(HandshakeError::Protocol(format!(
                "reply to option {option} while NBD_OPT_GO ({}) was asked",
                wire::OPT_GO
            )));
        }
        let (what, limit) = if reply == wire::REP_INFO {
            ("information reply", MAX_INFO_BYTES)
        } else {
            ("option reply", MAX_OPTION_REPLY_BYTES)
        };
        if length > limit {
            return Err(HandshakeError::ReplyTooLong {
                what,
                length,
                limit,
            });
        }
        let mut payload = vec![0u8; length as usize];
        conversation.read_exact(&mut payload, "the reply to NBD_OPT_GO")?;
        match reply {
            wire::REP_INFO => {
                if payload.len() < 2 {
                    return Err(HandshakeError::Protocol(
                        "information reply without a type".to_string(),
                    ));
                }
                match wire::be_u16(&payload[0..2]) {
                    wire::INFO_EXPORT => {
                        if payload.len() != 12 {
                            return Err(HandshakeError::Protocol(format!(
                                "NBD_INFO_EXPORT of {} bytes (expected 12)",
                                payload.len()
                            )));
                        }
                        size_and_flags = Some((
                            wire::be_u64(&payload[2..10]),
                            TransmissionFlags(wire::be_u16(&payload[10..12])),
                        ));
                    }
                    wire::INFO_BLOCK_SIZE => {
                        let sizes: &[u8; 12] = payload[2..].try_into().map_err(|_| {
                            HandshakeError::Protocol(format!(
                                "NBD_INFO_BLOCK_SIZE of {} bytes (expected 14)",
                                payload.len()
                            ))
                        })?;
                        block_sizes =
                            Some(BlockSizes::decode(sizes).map_err(HandshakeError::Protocol)?);
                    }
                    // Items not asked for (name, description …) are ignored.
                    _ => {}
                }
            }
            wire::REP_ACK => {
                let (size_bytes, flags) = size_and_flags.ok_or_else(|| {
                    HandshakeError::Protocol(
                        "NBD_OPT_GO acknowledged without NBD_INFO_EXPORT".to_string(),
                    )
                })?;
                return Ok(Some(Export {
                    size_bytes,
                    flags,
                    block_sizes,
                    negotiation: Negotiation::Go,
                }));
            }
            wire::REP_ERR_UNSUP => return Ok(None),
            error if error & wire::REP_ERROR_BIT != 0 => {
                let message = printable(&payload);
                let message = if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                };
                let export = export.to_string();
                // A polite end of the negotiation; the server may already have closed.
                let _ = conversation.send_option(wire::OPT_ABORT, &[], "sending NBD_OPT_ABORT");
                return Err(match error {
                    wire::REP_ERR_UNKNOWN => HandshakeError::UnknownExport { export, message },
                    wire::REP_ERR_TLS_REQD => HandshakeError::TlsRequired { export },
                    _ => HandshakeError::Refused {
                        export,
                        reason: wire::option_error_name(error),
                        message,
                    },
                });
            }
            other => {
                return Err(HandshakeError::Protocol(format!(
                    "unexpected reply type {other} to NBD_OPT_GO"
                )));
            }
        }
    }
    Err(HandshakeError::TooManyReplies {
        limit: MAX_OPTION_REPLIES,
    })
}

/// Asks for `export` with `NBD_OPT_EXPORT_NAME`.
fn export_name<S: Read + Write>(
    conversation: &mut Conversation<'_, S>,
    export: &str,
    no_zeroes: bool,
) -> Result<Export, HandshakeError> {
    conversation.send_option(
        wire::OPT_EXPORT_NAME,
        export.as_bytes(),
        "sending NBD_OPT_EXPORT_NAME",
    )?;
    let mut reply = [0u8; 10 + wire::EXPORT_NAME_ZEROES];
    let length = if no_zeroes { 10 } else { reply.len() };
    match conversation.read_exact(&mut reply[..length], "the reply to NBD_OPT_EXPORT_NAME") {
        Ok(()) => Ok(Export {
            size_bytes: wire::be_u64(&reply[0..8]),
            flags: TransmissionFlags(wire::be_u16(&reply[8..10])),
            block_sizes: None,
            negotiation: Negotiation::ExportName,
        }),
        Err(HandshakeError::Closed { .. }) => Err(HandshakeError::ExportNameRefused {
            export: export.to_string(),
        }),
        Err(other) => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::{accept_go, greet, option_reply, read_option, scripted_server};
    use std::os::unix::net::UnixStream;

    #[test]
    fn go_asks_for_export_and_block_sizes() {
        let (mut client, server) = scripted_server(|mut server| {
            let client_flags = greet(&mut server, 3);
            assert_eq!(client_flags, 3, "fixed newstyle and no zeroes");
            let (option, data) = read_option(&mut server);
            assert_eq!(option, wire::OPT_GO);
            assert_eq!(wire::be_u32(&data[0..4]), 4);
            assert_eq!(&data[4..8], b"disk");
            assert_eq!(&data[8..], &[0, 2, 0, 0, 0, 3]);
            // An item not asked for comes first and is ignored.
            option_reply(&mut server, wire::OPT_GO, wire::REP_INFO, b"\0\x02a disk");
            accept_go(
                &mut server,
                1 << 30,
                0b1_0000_1101,
                Some([512, 4096, 1 << 25]),
            );
        });
        let export = negotiate(&mut client, "disk").unwrap();
        server.join().unwrap();
        assert_eq!(export.size_bytes, 1 << 30);
        assert!(export.flags.flush() && export.flags.fua() && export.flags.multi_conn());
        assert!(!export.flags.read_only());
        assert_eq!(
            export.block_sizes,
            Some(BlockSizes {
                minimum: 512,
                preferred: 4096,
                maximum: 1 << 25
            })
        );
        assert_eq!(export.negotiation, Negotiation::Go);
    }

    #[test]
    fn unknown_export_is_named() {
        let (mut client, server) = scripted_server(|mut server| {
            greet(&mut server, 1);
            read_option(&mut server);
            option_reply(
                &mut server,
                wire::OPT_GO,
                wire::REP_ERR_UNKNOWN,
                b"no such export\x1b]0;owned\x07",
            );
            assert_eq!(read_option(&mut server).0, wire::OPT_ABORT);
        });
        let error = negotiate(&mut client, "missing").unwrap_err();
        server.join().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        let message = error.to_string();
        assert!(message.contains("'missing'") && message.contains("no such export"));
        assert!(message.contains("\\u{1b}]0;owned\\u{7}"), "{message}");
        assert!(!message.chars().any(char::is_control), "{message}");
    }

    #[test]
    fn server_without_go_gets_export_name() {
        let (mut client, server) = scripted_server(|mut server| {
            assert_eq!(greet(&mut server, 1), 1, "no zeroes were not offered");
            read_option(&mut server);
            option_reply(&mut server, wire::OPT_GO, wire::REP_ERR_UNSUP, &[]);
            let (option, data) = read_option(&mut server);
            assert_eq!(option, wire::OPT_EXPORT_NAME);
            assert_eq!(data, b"old");
            server.write_all(&4096u64.to_be_bytes()).unwrap();
            server.write_all(&3u16.to_be_bytes()).unwrap();
            server.write_all(&[0; 124]).unwrap();
        });
        let export = negotiate(&mut client, "old").unwrap();
        server.join().unwrap();
        assert_eq!(export.size_bytes, 4096);
        assert!(export.flags.read_only());
        assert_eq!(export.block_sizes, None);
        assert_eq!(export.negotiation, Negotiation::ExportName);
    }

    #[test]
    fn non_fixed_newstyle_server_closing_after_export_name() {
        let (mut client, server) = scripted_server(|mut server| {
            assert_eq!(greet(&mut server, 0), 0);
            assert_eq!(read_option(&mut server).0, wire::OPT_EXPORT_NAME);
        });
        let error = negotiate(&mut client, "gone").unwrap_err();
        server.join().unwrap();
        assert!(matches!(error, HandshakeError::ExportNameRefused { .. }));
        assert!(error.to_string().contains("'gone'"));
    }

    #[test]
    fn misbehaving_servers_are_errors() {
        type Script = fn(UnixStream);
        let cases: Vec<(&str, Script)> = vec![
            ("NBDMAGIC", |mut server| {
                server.write_all(b"HTTP/1.1 400 Bad Request\r\n").unwrap();
            }),
            ("oldstyle", |mut server| {
                server.write_all(b"NBDMAGIC").unwrap();
                server
                    .write_all(&wire::OLDSTYLE_MAGIC.to_be_bytes())
                    .unwrap();
            }),
            ("closed", |mut server| {
                server.write_all(b"NBDMAGIC").unwrap();
            }),
            ("magic", |mut server| {
                greet(&mut server, 1);
                read_option(&mut server);
                server.write_all(&[0xff; 20]).unwrap();
            }),
            ("without NBD_INFO_EXPORT", |mut server| {
                greet(&mut server, 1);
                read_option(&mut server);
                option_reply(&mut server, wire::OPT_GO, wire::REP_ACK, &[]);
            }),
            ("block sizes", |mut server| {
                greet(&mut server, 1);
                read_option(&mut server);
                let mut info = wire::INFO_BLOCK_SIZE.to_be_bytes().to_vec();
                info.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 3]);
                option_reply(&mut server, wire::OPT_GO, wire::REP_INFO, &info);
            }),
            ("4294967295 bytes", |mut server| {
                greet(&mut server, 1);
                read_option(&mut server);
                let mut header = wire::OPTION_REPLY_MAGIC.to_be_bytes().to_vec();
                header.extend_from_slice(&wire::OPT_GO.to_be_bytes());
                header.extend_from_slice(&wire::REP_INFO.to_be_bytes());
                header.extend_from_slice(&u32::MAX.to_be_bytes());
                server.write_all(&header).unwrap();
            }),
            ("TLS", |mut server| {
                greet(&mut server, 1);
                read_option(&mut server);
                option_reply(&mut server, wire::OPT_GO, wire::REP_ERR_TLS_REQD, &[]);
            }),
            ("NBD_REP_ERR_POLICY", |mut server| {
                greet(&mut server, 1);
                read_option(&mut server);
                option_reply(&mut server, wire::OPT_GO, wire::REP_ERR_POLICY, b"go away");
            }),
        ];
        for (expected, script) in cases {
            let (mut client, server) = scripted_server(script);
            let error = negotiate(&mut client, "x").unwrap_err().to_string();
            drop(client);
            server.join().unwrap();
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }

    /// The error of a handshake whose server answers `NBD_OPT_GO` with information item
    /// `item` until the client hangs up.
    fn flooded_with(item: Vec<u8>) -> HandshakeError {
        let (mut client, server) = scripted_server(move |mut server| {
            greet(&mut server, 1);
            read_option(&mut server);
            let mut reply = wire::OPTION_REPLY_MAGIC.to_be_bytes().to_vec();
            reply.extend_from_slice(&wire::OPT_GO.to_be_bytes());
            reply.extend_from_slice(&wire::REP_INFO.to_be_bytes());
            reply.extend_from_slice(&(item.len() as u32).to_be_bytes());
            reply.extend_from_slice(&item);
            for _ in 0..100_000 {
                if server.write_all(&reply).is_err() {
                    break;
                }
            }
        });
        let error = negotiate(&mut client, "x").unwrap_err();
        drop(client);
        server.join().unwrap();
        error
    }

    #[test]
    fn endless_information_replies_are_cut_off() {
        let error = flooded_with(b"\0\x04a description".to_vec());
        assert!(
            matches!(error, HandshakeError::TooManyReplies { limit: 32 }),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "the server sent more than 32 replies to NBD_OPT_GO without an acknowledgement"
        );
    }

    #[test]
    fn the_whole_handshake_is_bounded_in_bytes() {
        let mut item = vec![0, 4];
        item.resize(MAX_INFO_BYTES as usize, b'd');
        let error = flooded_with(item);
        assert!(
            matches!(error, HandshakeError::TooManyBytes { limit: 65536 }),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "the server sent more than 65536 bytes during the handshake"
        );
    }

    #[test]
    fn long_information_items_and_server_text_are_bounded() {
        let (mut client, server) = scripted_server(|mut server| {
            greet(&mut server, 1);
            read_option(&mut server);
            let mut header = wire::OPTION_REPLY_MAGIC.to_be_bytes().to_vec();
            header.extend_from_slice(&wire::OPT_GO.to_be_bytes());
            header.extend_from_slice(&wire::REP_INFO.to_be_bytes());
            header.extend_from_slice(&(MAX_INFO_BYTES + 1).to_be_bytes());
            server.write_all(&header).unwrap();
        });
        let error = negotiate(&mut client, "x").unwrap_err().to_string();
        server.join().unwrap();
        assert_eq!(
            error,
            "information reply of 4099 bytes announced (at most 4098 accepted)"
        );
        let (mut client, server) = scripted_server(|mut server| {
            greet(&mut server, 1);
            read_option(&mut server);
            let message = format!("bad\x1b[31m{}", "x".repeat(2000));
            option_reply(
                &mut server,
                wire::OPT_GO,
                wire::REP_ERR_POLICY,
                message.as_bytes(),
            );
            let _ = read_option(&mut server);
        });
        let error = negotiate(&mut client, "x").unwrap_err().to_string();
        server.join().unwrap();
        assert!(error.contains("bad\\u{1b}[31mxxx"), "{error}");
        assert!(!error.contains('\x1b') && error.len() < 700, "{error}");
    }
}
