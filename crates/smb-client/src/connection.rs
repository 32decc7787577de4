//! [`SmbConnection`]: one TCP connection to an SMB server, logged in and connected to a share:
//! NEGOTIATE (SMB 2.1, 3.0, 3.0.2, 3.1.1 with the preauthentication hash and the cipher
//! context), SESSION_SETUP with NTLMv2, TREE_CONNECT; then one request at a time for the calls
//! made before the run (CREATE, QUERY_INFO, FLUSH, CLOSE). The engine takes the connection
//! over for pipelined READ and WRITE.

use crate::credentials::Credentials;
use crate::crypto::{
    Cipher, KeySchedule, PreauthHash, Sealer, Signer, TRANSFORM_HEADER_BYTES, TRANSFORM_PROTOCOL_ID,
};
use crate::ntlm;
use crate::share::ShareAddress;
use crate::wire::{self, HEADER_BYTES, ResponseHeader, command, status, u16_at, u32_at};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Dialects offered, oldest first.
const DIALECTS: [u16; 4] = [0x0210, 0x0300, 0x0302, 0x0311];
const SMB_3_1_1: u16 = 0x0311;
/// Negotiate capabilities: DFS, leasing, large MTU, multichannel, encryption.
const CAPABILITIES: u32 = 0x01 | 0x02 | 0x04 | CAP_MULTI_CHANNEL | 0x40;
const CAP_LARGE_MTU: u32 = 0x04;
/// The server binds further connections to a session (SMB 3.x multichannel).
const CAP_MULTI_CHANNEL: u32 = 0x08;
/// SESSION_SETUP flag: bind this connection to an existing session as a channel.
const SESSION_FLAG_BINDING: u8 = 0x01;
const CAP_ENCRYPTION: u32 = 0x40;
const SIGNING_ENABLED: u16 = 0x01;
const SIGNING_REQUIRED: u16 = 0x02;
const SESSION_IS_GUEST: u16 = 0x01;
const SESSION_IS_NULL: u16 = 0x02;
const SESSION_ENCRYPT_DATA: u16 = 0x04;
const SHARE_ENCRYPT_DATA: u32 = 0x8000;
/// Maximal-access bit: write data.
const FILE_WRITE_DATA: u32 = 0x02;
/// The longest message accepted while setting up (no data moves then).
pub const MAX_SETUP_MESSAGE_BYTES: usize = 1 << 20;
/// Credits asked for in each setup request (the engine asks for what its depth needs).
const SETUP_CREDITS: u16 = 64;
/// The most credits a connection counts as held, whatever servers grant: far above any
/// queue's need, and low enough that sums over channels never overflow.
pub const MAX_HELD_CREDITS: u32 = 1 << 20;
/// The most interim (STATUS_PENDING) responses awaited for one request: a server sending
/// them without end is cut off.
pub const MAX_INTERIM_RESPONSES: usize = 1024;

/// What a connection asks for beyond what the server requires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmbSecurity {
    /// Sign every message even when the server does not require it.
    pub sign: bool,
    /// Encrypt every message even when the server does not require it.
    pub encrypt: bool,
}

/// What a connection negotiated (for the storage path and the verdict).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmbSessionFacts {
    /// The dialect (`0x0311` for 3.1.1).
    pub dialect: u16,
    /// Messages are signed.
    pub signing: bool,
    /// Messages are encrypted (with [`Self::cipher`]).
    pub encryption: bool,
    /// The cipher messages are encrypted with, when they are.
    pub cipher: Option<Cipher>,
    /// The largest READ the server takes, bytes.
    pub max_read_bytes: u32,
    /// The largest WRITE the server takes, bytes.
    pub max_write_bytes: u32,
    /// Whether this user may write on the share (its maximal access).
    pub share_writable: bool,
    /// Both sides offered AES-128-GMAC signing (SMB 3.1.1).
    pub gmac_signing: bool,
    /// The server offers multichannel (`SMB2_GLOBAL_CAP_MULTI_CHANNEL` on SMB 3.x): further
    /// connections can be bound to this session as channels.
    pub multichannel: bool,
}

impl SmbSessionFacts {
    /// In words: `SMB 3.1.1, signed (AES-128-CMAC)`, `SMB 3.1.1, encrypted (AES-128-GCM)`,
    /// `SMB 3.0, encrypted (AES-128-CCM)`, `SMB 3.0.2, unsigned`.
    pub fn describe(&self) -> String {
        let dialect = wire::dialect_name(self.dialect);
        if let (true, Some(cipher)) = (self.encryption, self.cipher) {
            format!("SMB {dialect}, encrypted ({})", cipher.name())
        } else if self.signing {
            let algorithm = if self.gmac_signing {
                "AES-128-GMAC"
            } else if self.dialect >= 0x0300 {
                "AES-128-CMAC"
            } else {
                "HMAC-SHA256"
            };
            format!("SMB {dialect}, signed ({algorithm})")
        } else {
            format!("SMB {dialect}, unsigned")
        }
    }
}

/// Why an SMB exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum SmbError {
    /// The connection failed (refused, reset, timed out, closed).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server answered with an error status.
    #[error("{}: {}", command::name(*command), status::text(*status))]
    Status {
        /// The request's command.
        command: u16,
        /// NT status.
        status: u32,
    },
    /// The server's answer broke the protocol, or the session cannot be had as asked.
    #[error("{0}")]
    Protocol(String),
    /// The session must be encrypted (`asked` for in [`SmbSecurity::encrypt`], or required by
    /// the server) and has no cipher this client speaks.
    #[error(
        "{server}: {}: {}",
        if *asked { "encryption was asked for and cannot be met" }
        else { "the server asks for encryption, which cannot be met" },
        no_cipher_reason(*dialect, "this client")
    )]
    NoCipher {
        /// `HOST:PORT`.
        server: String,
        /// The negotiated dialect.
        dialect: u16,
        /// Encryption was asked for ([`SmbSecurity::encrypt`]) rather than required.
        asked: bool,
    },
    /// The share requires encryption and the session is not encrypted.
    #[error("{server}: share '{share}' requires encryption (ask for it: SmbSecurity::encrypt)")]
    ShareRequiresEncryption {
        /// `HOST:PORT`.
        server: String,
        /// The share's name.
        share: String,
    },
}

/// Why a session of `dialect` has no cipher, in words (`client`: who offered the ciphers,
/// in the third person: `"this client"`).
///
/// ```
/// use smb_client::connection::no_cipher_reason;
/// assert_eq!(no_cipher_reason(0x0210, "this client"), "SMB 2.1 has no encryption (SMB 3.0 and later have)");
/// assert!(no_cipher_reason(0x0311, "this client").contains("ciphers this client offers (AES-128-GCM"));
/// ```
pub fn no_cipher_reason(dialect: u16, client: &str) -> String {
    let name = wire::dialect_name(dialect);
    if dialect < 0x0300 {
        format!("SMB {name} has no encryption (SMB 3.0 and later have)")
    } else if dialect == SMB_3_1_1 {
        format!(
            "SMB {name}: the server chose none of the ciphers {client} offers ({})",
            Cipher::OFFERED.map(Cipher::name).join(", ")
        )
    } else {
        format!("SMB {name}: the server does not offer encryption")
    }
}

impl SmbError {
    /// The NT status, when the server answered with one.
    pub fn status(&self) -> Option<u32> {
        match self {
            SmbError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// A logged-in connection to one share (see the module documentation).
#[derive(Debug)]
pub struct SmbConnection {
    /// The socket.
    pub stream: TcpStream,
    /// `HOST:PORT`, for messages.
    pub server: String,
    /// The next message id.
    pub next_message_id: u64,
    /// Credits the server granted and no request has used yet.
    pub credits: u32,
    /// Session id.
    pub session_id: u64,
    /// Tree id of the share.
    pub tree_id: u32,
    /// Signs requests and checks responses, when signing is on (and encryption off).
    pub signer: Option<Signer>,
    /// Encrypts requests and decrypts responses, when encryption is on.
    pub sealer: Option<Sealer>,
    /// Whether requests are charged by size (SMB 2.1+ with large MTU).
    pub large_mtu: bool,
    /// What was negotiated.
    pub facts: SmbSessionFacts,
    /// The longest wait for a reply.
    pub timeout: Duration,
    /// The client GUID sent in NEGOTIATE: the same on every channel of one session (a server
    /// finds the session's other channels by it).
    pub client_guid: [u8; 16],
    /// Signs with the session's own signing key (SMB 3.x, whether or not messages are signed
    /// or sealed): what a binding SESSION_SETUP on a new channel is signed with.
    pub session_signer: Option<Signer>,
    /// While this connection binds itself to a session: the session's signer, for its
    /// SESSION_SETUP requests.
    binding_signer: Option<Signer>,
}

/// A request's frame: transport header, room for a transform header, the SMB2 header and
/// `body`. The message starts at [`MESSAGE_AT`].
pub const MESSAGE_AT: usize = 4 + TRANSFORM_HEADER_BYTES;

/// The credits held after a response granting `granted` to a connection holding `held`
/// (at most [`MAX_HELD_CREDITS`]).
///
/// ```
/// use smb_client::connection::{MAX_HELD_CREDITS, add_credits};
/// assert_eq!(add_credits(1, 64), 65);
/// assert_eq!(add_credits(MAX_HELD_CREDITS - 1, u16::MAX), MAX_HELD_CREDITS);
/// assert_eq!(add_credits(u32::MAX, u16::MAX), MAX_HELD_CREDITS);
/// ```
pub fn add_credits(held: u32, granted: u16) -> u32 {
    held.saturating_add(u32::from(granted))
        .min(MAX_HELD_CREDITS)
}

/// Appends an SMB 3.1.1 negotiate context of `kind` holding `data` to a NEGOTIATE request
/// or response `body`, 8-byte aligned as the contexts list requires.
pub fn push_negotiate_context(body: &mut Vec<u8>, kind: u16, data: &[u8]) {
    while !body.len().is_multiple_of(8) {
        body.push(0);
    }
    body.extend_from_slice(&kind.to_le_bytes());
    body.extend_from_slice(&(data.len() as u16).to_le_bytes());
    body.extend_from_slice(&[0; 4]);
    body.extend_from_slice(data);
}

/// The credit charge of a request or response moving `bytes` (one credit per 64 KiB).
pub fn credit_charge(large_mtu: bool, bytes: usize) -> u16 {
    if large_mtu && bytes > 0 {
        (bytes.div_ceil(65536)).min(u16::MAX as usize) as u16
    } else {
        1
    }
}

/// Seals or signs the message in `frame[MESSAGE_AT..]` as the session wants and writes the
/// transport header; returns where the bytes to send start.
pub fn finish_frame(
    frame: &mut [u8],
    signer: Option<&Signer>,
    sealer: Option<&mut Sealer>,
) -> usize {
    let start = if let Some(sealer) = sealer {
        sealer.seal(&mut frame[4..]);
        0
    } else {
        if let Some(signer) = signer {
            signer.sign(&mut frame[MESSAGE_AT..]);
        }
        TRANSFORM_HEADER_BYTES
    };
    let length = (frame.len() - start - 4) as u32;
    frame[start] = 0;
    frame[start + 1..start + 4].copy_from_slice(&length.to_be_bytes()[1..]);
    start
}

/// Decrypts a sealed message in place and checks a signed one; returns the range of the
/// SMB2 message within `frame` (one received frame without its transport header).
pub fn open_frame(
    frame: &mut [u8],
    signer: Option<&Signer>,
    sealer: Option<&Sealer>,
    server: &str,
) -> Result<std::ops::Range<usize>, String> {
    if frame.len() >= 4 && frame[..4] == TRANSFORM_PROTOCOL_ID {
        let Some(sealer) = sealer else {
            return Err(format!(
                "{server} sent an encrypted message on a session without encryption"
            ));
        };
        sealer
            .open(frame)
            .map_err(|problem| format!("{server} sent {problem}"))?;
        return Ok(TRANSFORM_HEADER_BYTES..frame.len());
    }
    if sealer.is_some() {
        return Err(format!(
            "{server} sent an unencrypted message on an encrypted session"
        ));
    }
    if let Some(signer) = signer
        && frame.len() >= HEADER_BYTES
        && u32_at(frame, 8) != status::PENDING
        && !signer.verify(frame)
    {
        return Err(format!("{server} sent a message whose signature is wrong"));
    }
    Ok(0..frame.len())
}

impl SmbConnection {
    /// Over `stream` (a TCP connection to `share`'s server, which this call gives
    /// `TCP_NODELAY` and read and write timeouts of `timeout`): negotiates, logs in as
    /// `credentials` and connects to the share, signing and encrypting as the server requires or `security` asks; each step
    /// within `timeout`.
    pub fn open(
        stream: TcpStream,
        share: &ShareAddress,
        credentials: &Credentials,
        security: SmbSecurity,
        timeout: Duration,
    ) -> Result<Self, SmbError> {
        let mut client_guid = [0u8; 16];
        let _ = getrandom::fill(&mut client_guid);
        let mut connection = Self::connected(stream, share, timeout, client_guid)?;
        let mut preauth = PreauthHash::new();
        let (server_requires_signing, cipher) = connection.negotiate(security, &mut preauth)?;
        connection.session_setup(
            credentials,
            security,
            server_requires_signing,
            cipher,
            preauth,
            None,
        )?;
        connection.tree_connect(share)?;
        Ok(connection)
    }

    /// A new connection to this connection's server bound to its session as a further
    /// channel (SMB 3.x multichannel, MS-SMB2 3.2.5.3): NEGOTIATE with the same client GUID
    /// and dialect, then SESSION_SETUP with the binding flag, signed with the session's
    /// signing key; the channel's own signing key comes from this new authentication (and, on
    /// 3.1.1, from the preauthentication hash of this connection's own exchange). The tree
    /// and the files opened on the session are used as they are; an encrypted session seals
    /// the channel's messages with the session's keys, under nonces of its own (`channel`, 1
    /// and up, tells them apart).
    pub fn bind(
        &self,
        stream: TcpStream,
        share: &ShareAddress,
        credentials: &Credentials,
        security: SmbSecurity,
        channel: u8,
    ) -> Result<Self, SmbError> {
        if !self.facts.multichannel || self.session_signer.is_none() {
            return Err(SmbError::Protocol(format!(
                "{} offers no multichannel on this session",
                self.server
            )));
        }
        let mut connection = Self::connected(stream, share, self.timeout, self.client_guid)?;
        let mut preauth = PreauthHash::new();
        let (_, cipher) = connection.negotiate(security, &mut preauth)?;
        if connection.facts.dialect != self.facts.dialect
            || connection.facts.gmac_signing != self.facts.gmac_signing
        {
            return Err(SmbError::Protocol(format!(
                "{} negotiated another dialect or signing algorithm on a second connection \
                 (SMB {} against SMB {})",
                self.server,
                wire::dialect_name(connection.facts.dialect),
                wire::dialect_name(self.facts.dialect)
            )));
        }
        if !connection.facts.multichannel {
            return Err(SmbError::Protocol(format!(
                "{} offered multichannel on the first connection but not on a second",
                self.server
            )));
        }
        connection.session_setup(credentials, security, false, cipher, preauth, Some(self))?;
        connection.tree_id = self.tree_id;
        connection.facts.share_writable = self.facts.share_writable;
        if let Some(sealer) = &self.sealer {
            connection.sealer = Some(sealer.for_channel(channel));
            connection.signer = None;
            connection.facts.encryption = true;
            connection.facts.signing = false;
        }
        Ok(connection)
    }

    /// `stream`, a TCP connection to `share`'s server, not negotiated yet.
    fn connected(
        stream: TcpStream,
        share: &ShareAddress,
        timeout: Duration,
        client_guid: [u8; 16],
    ) -> Result<Self, SmbError> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(SmbConnection {
            stream,
            server: share.server(),
            next_message_id: 0,
            credits: 1,
            session_id: 0,
            tree_id: 0,
            signer: None,
            sealer: None,
            large_mtu: false,
            facts: SmbSessionFacts {
                dialect: 0,
                signing: false,
                encryption: false,
                cipher: None,
                max_read_bytes: 65536,
                max_write_bytes: 65536,
                share_writable: false,
                gmac_signing: false,
                multichannel: false,
            },
            timeout,
            client_guid,
            session_signer: None,
            binding_signer: None,
        })
    }

    fn negotiate(
        &mut self,
        security: SmbSecurity,
        preauth: &mut PreauthHash,
    ) -> Result<(bool, Option<Cipher>), SmbError> {
        let mut body = vec![0u8; 36];
        body[0..2].copy_from_slice(&36u16.to_le_bytes());
        body[2..4].copy_from_slice(&(DIALECTS.len() as u16).to_le_bytes());
        let mode = if security.sign {
            SIGNING_ENABLED | SIGNING_REQUIRED
        } else {
            SIGNING_ENABLED
        };
        body[4..6].copy_from_slice(&mode.to_le_bytes());
        body[8..12].copy_from_slice(&CAPABILITIES.to_le_bytes());
        body[12..28].copy_from_slice(&self.client_guid);
        for dialect in DIALECTS {
            body.extend_from_slice(&dialect.to_le_bytes());
        }
        // Negotiate contexts, 8-byte aligned from the header's start.
        while !(HEADER_BYTES + body.len()).is_multiple_of(8) {
            body.push(0);
        }
        let contexts_at = (HEADER_BYTES + body.len()) as u32;
        body[28..32].copy_from_slice(&contexts_at.to_le_bytes());
        body[32..34].copy_from_slice(&3u16.to_le_bytes());
        let mut salt = [0u8; 32];
        let _ = getrandom::fill(&mut salt);
        let mut preauth_context = vec![1, 0, 32, 0, 1, 0];
        preauth_context.extend_from_slice(&salt);
        // Ciphers, preferred first (see `Cipher::OFFERED`).
        let mut cipher_context = (Cipher::OFFERED.len() as u16).to_le_bytes().to_vec();
        for cipher in Cipher::OFFERED {
            cipher_context.extend_from_slice(&cipher.id().to_le_bytes());
        }
        // Signing algorithms, preferred first: AES-GMAC (2), AES-CMAC (1).
        let signing_context = [2u8, 0, 2, 0, 1, 0];
        for (kind, data) in [
            (1u16, &preauth_context[..]),
            (2u16, &cipher_context[..]),
            (8u16, &signing_context[..]),
        ] {
            push_negotiate_context(&mut body, kind, data);
        }
        let (header, reply) = self.call_hashed(command::NEGOTIATE, &body, Some(preauth))?;
        if header.status != status::SUCCESS {
            return Err(SmbError::Status {
                command: command::NEGOTIATE,
                status: header.status,
            });
        }
        if reply.len() < 64 {
            return Err(self.broken("a NEGOTIATE response too short"));
        }
        let server_mode = u16_at(&reply, 2);
        let dialect = u16_at(&reply, 4);
        if !DIALECTS.contains(&dialect) {
            return Err(SmbError::Protocol(format!(
                "{} chose SMB dialect {dialect:#06x}, which was not offered",
                self.server
            )));
        }
        let capabilities = u32_at(&reply, 24);
        self.large_mtu = capabilities & CAP_LARGE_MTU != 0;
        self.facts.multichannel = capabilities & CAP_MULTI_CHANNEL != 0 && dialect >= 0x0300;
        self.facts.dialect = dialect;
        self.facts.max_read_bytes = u32_at(&reply, 32);
        self.facts.max_write_bytes = u32_at(&reply, 36);
        let mut cipher = None;
        if dialect == SMB_3_1_1 {
            // The cipher the server chose, from its negotiate contexts (offsets from the
            // header's start; `reply` is the body).
            let count = u16_at(&reply, 6) as usize;
            let mut at = (u32_at(&reply, 60) as usize).saturating_sub(HEADER_BYTES);
            for _ in 0..count {
                let Some(context) = reply.get(at..at + 8) else {
                    break;
                };
                let kind = u16_at(context, 0);
                let length = u16_at(context, 2) as usize;
                let Some(data) = reply.get(at + 8..at + 8 + length) else {
                    break;
                };
                if kind == 2 && data.len() >= 4 && u16_at(data, 0) == 1 {
                    // 0: none in common; an id not offered is not taken either.
                    cipher = Cipher::from_id(u16_at(data, 2));
                }
                if kind == 8 && data.len() >= 4 && u16_at(data, 0) == 1 {
                    self.facts.gmac_signing = u16_at(data, 2) == 2;
                }
                at = (at + 8 + length).next_multiple_of(8);
            }
        } else if capabilities & CAP_ENCRYPTION != 0 && dialect >= 0x0300 {
            // SMB 3.0 and 3.0.2 encrypt with AES-128-CCM only.
            cipher = Some(Cipher::Aes128Ccm);
        }
        Ok((server_mode & SIGNING_REQUIRED != 0, cipher))
    }

    /// SESSION_SETUP with NTLMv2: a new session, or with `primary` this connection bound to
    /// `primary`'s session as a further channel (see [`SmbConnection::bind`]).
    fn session_setup(
        &mut self,
        credentials: &Credentials,
        security: SmbSecurity,
        server_requires_signing: bool,
        cipher: Option<Cipher>,
        mut preauth: PreauthHash,
        primary: Option<&SmbConnection>,
    ) -> Result<(), SmbError> {
        let binding = primary.is_some();
        let request = |token: &[u8]| {
            let mut body = vec![0u8; 24];
            body[0..2].copy_from_slice(&25u16.to_le_bytes());
            if binding {
                body[2] = SESSION_FLAG_BINDING;
            }
            body[3] = if security.sign {
                (SIGNING_ENABLED | SIGNING_REQUIRED) as u8
            } else {
                SIGNING_ENABLED as u8
            };
            body[4..8].copy_from_slice(&1u32.to_le_bytes());
            body[12..14].copy_from_slice(&((HEADER_BYTES + 24) as u16).to_le_bytes());
            body[14..16].copy_from_slice(&(token.len() as u16).to_le_bytes());
            body.extend_from_slice(token);
            body
        };
        if let Some(primary) = primary {
            // A binding request names the session and is signed with its key.
            self.session_id = primary.session_id;
            self.binding_signer = primary.session_signer.clone();
        }
        let hashing = self.facts.dialect == SMB_3_1_1;
        let (header, reply) = self.call_hashed(
            command::SESSION_SETUP,
            &request(&ntlm::negotiate_message()),
            hashing.then_some(&mut preauth),
        )?;
        if header.status != status::MORE_PROCESSING_REQUIRED {
            return Err(SmbError::Status {
                command: command::SESSION_SETUP,
                status: header.status,
            });
        }
        self.session_id = header.session_id;
        let challenge = security_buffer(&reply)
            .ok_or_else(|| self.broken("a SESSION_SETUP response without an NTLM challenge"))?;
        let (token, session_key) = ntlm::authenticate_message(challenge, credentials)
            .map_err(|problem| SmbError::Protocol(format!("{}: {problem}", self.server)))?;
        // The final request is hashed, its (successful) response is not.
        let (header, mut message) = self.call_hashed_message(
            command::SESSION_SETUP,
            &request(&token),
            hashing.then_some(&mut preauth),
        )?;
        self.binding_signer = None;
        if header.status != status::SUCCESS {
            return Err(SmbError::Status {
                command: command::SESSION_SETUP,
                status: header.status,
            });
        }
        let reply = &message[HEADER_BYTES..];
        let flags = if reply.len() >= 4 {
            u16_at(reply, 2)
        } else {
            0
        };
        if flags & (SESSION_IS_GUEST | SESSION_IS_NULL) != 0 {
            return Err(SmbError::Protocol(format!(
                "{} logged {} in as a guest (the password was not accepted; guest sessions cannot be signed or encrypted)",
                self.server, credentials.user
            )));
        }
        let smb3 = self.facts.dialect >= 0x0300;
        let signing_key = self.key_schedule(&preauth).signing_key(&session_key);
        let signer = if self.facts.gmac_signing {
            Signer::gmac(&signing_key)
        } else {
            Signer::new(smb3, &signing_key)
        };
        if binding {
            // The channel's key, from this authentication (and on 3.1.1 this connection's
            // preauthentication hash), signs the response that ends it, and from here on the
            // channel's messages (unless the session seals them: see `bind`).
            if !signer.verify(&mut message) {
                return Err(self.broken(
                    "a binding SESSION_SETUP response whose signature is wrong (another channel key)",
                ));
            }
            self.signer = Some(signer);
            self.facts.signing = true;
            return Ok(());
        }
        if smb3 {
            self.session_signer = Some(signer.clone());
        }
        if flags & SESSION_ENCRYPT_DATA != 0 {
            // The server requires encryption of this session. Samba then refuses every
            // unsealed request on it (ACCESS_DENIED), and a sealed binding SESSION_SETUP is
            // not signed, which binding requires (INVALID_PARAMETER): no channel can be bound
            // to it, so further connections are sessions of their own.
            self.facts.multichannel = false;
        }
        if security.encrypt || flags & SESSION_ENCRYPT_DATA != 0 {
            self.start_encryption(cipher, &session_key, &preauth, security.encrypt)?;
        } else if security.sign || server_requires_signing || self.facts.dialect == SMB_3_1_1 {
            // SMB 3.1.1 signs every session that is not a guest's (TREE_CONNECT must be signed
            // there, and servers refuse it unsigned).
            self.signer = Some(signer);
            self.facts.signing = true;
        }
        Ok(())
    }

    /// The key schedule of the negotiated dialect (`preauth`: this session's
    /// preauthentication hash, used on SMB 3.1.1).
    fn key_schedule<'a>(&self, preauth: &'a PreauthHash) -> KeySchedule<'a> {
        match self.facts.dialect {
            SMB_3_1_1 => KeySchedule::Smb311(preauth),
            dialect if dialect >= 0x0300 => KeySchedule::Smb30,
            _ => KeySchedule::Smb2,
        }
    }

    /// Encrypts from here on with `cipher` and the keys derived from `session_key` (and, on
    /// SMB 3.1.1, the preauthentication hash); refused ([`SmbError::NoCipher`]) when the
    /// session has no cipher this client speaks.
    fn start_encryption(
        &mut self,
        cipher: Option<Cipher>,
        session_key: &[u8],
        preauth: &PreauthHash,
        asked: bool,
    ) -> Result<(), SmbError> {
        if self.sealer.is_some() {
            return Ok(());
        }
        let Some(cipher) = cipher else {
            return Err(SmbError::NoCipher {
                server: self.server.clone(),
                dialect: self.facts.dialect,
                asked,
            });
        };
        let (encryption, decryption) = self.key_schedule(preauth).cipher_keys(cipher, session_key);
        self.sealer = Some(Sealer::new(
            cipher,
            &encryption,
            &decryption,
            self.session_id,
        ));
        self.signer = None;
        self.facts.encryption = true;
        self.facts.cipher = Some(cipher);
        self.facts.signing = false;
        Ok(())
    }

    fn tree_connect(&mut self, share: &ShareAddress) -> Result<(), SmbError> {
        let path = wire::utf16(&share.unc());
        let mut body = vec![0u8; 8];
        body[0..2].copy_from_slice(&9u16.to_le_bytes());
        body[4..6].copy_from_slice(&((HEADER_BYTES + 8) as u16).to_le_bytes());
        body[6..8].copy_from_slice(&(path.len() as u16).to_le_bytes());
        body.extend_from_slice(&path);
        let (header, reply) = self.call_hashed(command::TREE_CONNECT, &body, None)?;
        if header.status != status::SUCCESS {
            return Err(SmbError::Status {
                command: command::TREE_CONNECT,
                status: header.status,
            });
        }
        self.tree_id = header.tree_id;
        if reply.len() < 16 {
            return Err(self.broken("a TREE_CONNECT response too short"));
        }
        if reply[2] != 1 {
            return Err(SmbError::Protocol(format!(
                "{}: share '{}' is not a disk share",
                self.server, share.share
            )));
        }
        let share_flags = u32_at(&reply, 4);
        self.facts.share_writable = u32_at(&reply, 12) & FILE_WRITE_DATA != 0;
        if share_flags & SHARE_ENCRYPT_DATA != 0 && self.sealer.is_none() {
            // The share wants encryption from here on; keys are those of the session.
            return Err(SmbError::ShareRequiresEncryption {
                server: self.server.clone(),
                share: share.share.clone(),
            });
        }
        Ok(())
    }

    fn broken(&self, what: &str) -> SmbError {
        SmbError::Protocol(format!("{} sent {what}", self.server))
    }

    /// Sends one request and waits for its response (interim responses skipped); an error
    /// status is an error. Returns the response's body.
    pub fn call(&mut self, command: u16, body: &[u8]) -> Result<Vec<u8>, SmbError> {
        let (header, reply) = self.call_hashed(command, body, None)?;
        if header.status != status::SUCCESS {
            return Err(SmbError::Status {
                command,
                status: header.status,
            });
        }
        Ok(reply)
    }

    /// Sends one request (its message chained into `preauth` when given, with its response)
    /// and returns the final response's header and body, whatever its status.
    fn call_hashed(
        &mut self,
        command: u16,
        body: &[u8],
        preauth: Option<&mut PreauthHash>,
    ) -> Result<(ResponseHeader, Vec<u8>), SmbError> {
        let (header, message) = self.call_hashed_message(command, body, preauth)?;
        Ok((header, message[HEADER_BYTES..].to_vec()))
    }

    /// [`Self::call_hashed`], returning the whole response message (header and body).
    fn call_hashed_message(
        &mut self,
        command: u16,
        body: &[u8],
        mut preauth: Option<&mut PreauthHash>,
    ) -> Result<(ResponseHeader, Vec<u8>), SmbError> {
        // A WRITE carries its data in the body: charged by its size.
        let charge = credit_charge(self.large_mtu && command != command::NEGOTIATE, body.len());
        if self.credits < u32::from(charge) {
            return Err(SmbError::Protocol(format!(
                "{} granted no credits to send with",
                self.server
            )));
        }
        let message_id = self.next_message_id;
        let mut frame = vec![0u8; MESSAGE_AT + HEADER_BYTES + body.len()];
        let tree_id = if matches!(command, command::NEGOTIATE | command::SESSION_SETUP) {
            0
        } else {
            self.tree_id
        };
        wire::request_header(
            &mut frame[MESSAGE_AT..],
            command,
            if command == command::NEGOTIATE {
                0
            } else {
                charge
            },
            SETUP_CREDITS,
            message_id,
            tree_id,
            self.session_id,
        );
        frame[MESSAGE_AT + HEADER_BYTES..].copy_from_slice(body);
        let signer = self.binding_signer.as_ref().or(self.signer.as_ref());
        let start = finish_frame(&mut frame, signer, self.sealer.as_mut());
        // Hashed as sent: a binding request signed (setup requests are never sealed).
        if let Some(preauth) = preauth.as_deref_mut() {
            preauth.update(&frame[MESSAGE_AT..]);
        }
        self.next_message_id += u64::from(charge);
        self.credits -= u32::from(charge);
        self.stream
            .write_all(&frame[start..])
            .map_err(|error| self.io_failed(error))?;
        for _ in 0..=MAX_INTERIM_RESPONSES {
            let mut reply = self.receive_frame()?;
            let range = open_frame(
                &mut reply,
                self.signer.as_ref(),
                self.sealer.as_ref(),
                &self.server,
            )
            .map_err(SmbError::Protocol)?;
            let message = &reply[range];
            let header = wire::response_header(message)
                .map_err(|problem| SmbError::Protocol(format!("{} sent {problem}", self.server)))?;
            if header.message_id != message_id {
                return Err(self.broken(&format!(
                    "a response to message {} while {} was awaited",
                    header.message_id, message_id
                )));
            }
            self.credits = add_credits(self.credits, header.credits);
            if header.status == status::PENDING && header.flags & wire::FLAG_ASYNC != 0 {
                continue;
            }
            // Hashed: every NEGOTIATE and SESSION_SETUP response but the one that ends the
            // authentication.
            if let Some(preauth) = preauth
                && (command == command::NEGOTIATE || header.status != status::SUCCESS)
            {
                preauth.update(message);
            }
            return Ok((header, message.to_vec()));
        }
        Err(self.broken(&format!(
            "more than {MAX_INTERIM_RESPONSES} interim responses to message {message_id}"
        )))
    }

    fn io_failed(&self, error: io::Error) -> SmbError {
        let kind = error.kind();
        let text = match kind {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                format!("{} sent no reply within {:?}", self.server, self.timeout)
            }
            io::ErrorKind::UnexpectedEof => format!("{} closed the connection", self.server),
            _ => format!("{}: {error}", self.server),
        };
        SmbError::Io(io::Error::new(kind, text))
    }

    /// Receives one whole frame (without its transport header), bounded by
    /// [`MAX_SETUP_MESSAGE_BYTES`].
    fn receive_frame(&mut self) -> Result<Vec<u8>, SmbError> {
        let mut head = [0u8; 4];
        self.stream
            .read_exact(&mut head)
            .map_err(|error| self.io_failed(error))?;
        let length = u32::from_be_bytes(head) as usize;
        if length > MAX_SETUP_MESSAGE_BYTES {
            return Err(self.broken(&format!(
                "a message of {length} bytes (at most {MAX_SETUP_MESSAGE_BYTES} expected)"
            )));
        }
        let mut frame = vec![0u8; length];
        self.stream
            .read_exact(&mut frame)
            .map_err(|error| self.io_failed(error))?;
        Ok(frame)
    }
}

/// The security buffer of a SESSION_SETUP response body.
fn security_buffer(reply: &[u8]) -> Option<&[u8]> {
    if reply.len() < 8 {
        return None;
    }
    let offset = (u16_at(reply, 4) as usize).checked_sub(HEADER_BYTES)?;
    let length = u16_at(reply, 6) as usize;
    reply.get(offset..offset + length)
}
