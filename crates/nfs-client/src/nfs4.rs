//! NFSv4.1 (RFC 8881, minor version 1) as this crate uses it: COMPOUND encoding and decoding, the
//! operation and attribute numbers it needs, status codes in words and as errno values, and
//! [`Nfs4Client`], one client id with one session on one connection for the blocking calls
//! made before and after the run.
//!
//! A client is set up with EXCHANGE_ID (an owner of its own, so every [`Nfs4Client`] is a
//! client of its own to the server), CREATE_SESSION (the fore channel asks for as many slots
//! as requests it will keep in flight, and for messages that fit the largest READ or WRITE)
//! and RECLAIM_COMPLETE; every later COMPOUND starts with SEQUENCE on one of the session's
//! slots. Dropping a client sends DESTROY_SESSION and DESTROY_CLIENTID (best effort).
//!
//! No MOUNT and no portmapper: the file's path is walked from the server's root
//! (PUTROOTFH, LOOKUP for each component).

use crate::CLIENT_NAME;
use crate::error::NfsError;
use crate::nfs3::NFS_PROGRAM;
use crate::rpc::{Credentials, RpcConnection, RpcError};
pub use crate::status::nfs4_text as status_text;
use crate::xdr::{Decoder, Encoder, XdrError};
use std::time::Duration;

/// The NFS program version of NFSv4.
pub const NFS4_VERSION: u32 = 4;
/// The minor version spoken.
pub const MINOR_VERSION: u32 = 1;
/// The COMPOUND procedure.
pub const COMPOUND: u32 = 1;
/// The longest NFSv4 file handle.
pub const MAX_HANDLE_BYTES: usize = 128;
/// The longest opaque item read from a reply (owners, scopes, names).
const OPAQUE_LIMIT: usize = 1024;

/// NFSv4.1 operation numbers.
pub mod op {
    /// ACCESS.
    pub const ACCESS: u32 = 3;
    /// CLOSE.
    pub const CLOSE: u32 = 4;
    /// COMMIT.
    pub const COMMIT: u32 = 5;
    /// GETATTR.
    pub const GETATTR: u32 = 9;
    /// GETFH.
    pub const GETFH: u32 = 10;
    /// LOOKUP.
    pub const LOOKUP: u32 = 15;
    /// OPEN.
    pub const OPEN: u32 = 18;
    /// PUTFH.
    pub const PUTFH: u32 = 22;
    /// PUTROOTFH.
    pub const PUTROOTFH: u32 = 24;
    /// READ.
    pub const READ: u32 = 25;
    /// REMOVE.
    pub const REMOVE: u32 = 28;
    /// RENAME.
    pub const RENAME: u32 = 29;
    /// SAVEFH.
    pub const SAVEFH: u32 = 32;
    /// SETATTR.
    pub const SETATTR: u32 = 34;
    /// WRITE.
    pub const WRITE: u32 = 38;
    /// EXCHANGE_ID.
    pub const EXCHANGE_ID: u32 = 42;
    /// CREATE_SESSION.
    pub const CREATE_SESSION: u32 = 43;
    /// DESTROY_SESSION.
    pub const DESTROY_SESSION: u32 = 44;
    /// SEQUENCE.
    pub const SEQUENCE: u32 = 53;
    /// DESTROY_CLIENTID.
    pub const DESTROY_CLIENTID: u32 = 57;
    /// RECLAIM_COMPLETE.
    pub const RECLAIM_COMPLETE: u32 = 58;
}

/// The file attributes this crate reads (`fattr4` bit numbers).
pub mod attribute {
    /// `type` (nfs_ftype4).
    pub const TYPE: u32 = 1;
    /// `size`.
    pub const SIZE: u32 = 4;
    /// `maxread`.
    pub const MAX_READ: u32 = 30;
    /// `maxwrite`.
    pub const MAX_WRITE: u32 = 31;
    /// `mode`.
    pub const MODE: u32 = 33;
    /// `space_avail`.
    pub const SPACE_AVAIL: u32 = 42;
    /// `space_total`.
    pub const SPACE_TOTAL: u32 = 44;
    /// `time_access_set` (write only).
    pub const TIME_ACCESS_SET: u32 = 48;
    /// `time_metadata` (ctime).
    pub const TIME_METADATA: u32 = 52;
    /// `time_modify` (mtime).
    pub const TIME_MODIFY: u32 = 53;
    /// `time_modify_set` (write only).
    pub const TIME_MODIFY_SET: u32 = 54;
}

/// `NFS4ERR_NOENT`.
pub const NOENT: u32 = 2;
/// `NFS4ERR_MINOR_VERS_MISMATCH`.
pub const MINOR_VERS_MISMATCH: u32 = 10021;
/// `NFS4ERR_COMPLETE_ALREADY`.
const COMPLETE_ALREADY: u32 = 10054;

/// An NFSv4 status other than OK as a negative errno for a completion (the codes below 10000
/// are the errno values of the same name).
pub fn status_errno(status: u32) -> i64 {
    let errno = match status {
        1..=9999 => status as i32,
        10001 | 10014 | 10023 | 10024 | 10025 => libc::ESTALE,
        10004 => libc::EOPNOTSUPP,
        10008 | 10013 => libc::EAGAIN,
        10038 | 10015 => libc::EACCES,
        _ => libc::EIO,
    };
    -i64::from(errno)
}

/// A session's id.
pub type SessionId = [u8; 16];

/// A stateid (`stateid4`): what OPEN returns and READ, WRITE and CLOSE name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stateid {
    /// Its sequence number.
    pub seqid: u32,
    /// The server's part.
    pub other: [u8; 12],
}

impl Stateid {
    /// The anonymous stateid (all zeros): I/O without an OPEN of this client.
    pub const ANONYMOUS: Stateid = Stateid {
        seqid: 0,
        other: [0; 12],
    };

    /// Appends it to `encoder`.
    pub fn encode(&self, encoder: &mut Encoder) {
        encoder.u32(self.seqid);
        encoder.bytes.extend_from_slice(&self.other);
    }

    /// Reads one.
    pub fn decode(decoder: &mut Decoder<'_>) -> Result<Self, XdrError> {
        let seqid = decoder.u32("stateid")?;
        let mut other = [0u8; 12];
        other.copy_from_slice(decoder.fixed(12, "stateid")?);
        Ok(Stateid { seqid, other })
    }
}

/// Appends the head of a COMPOUND of `operations` operations (empty tag, minor version 1).
pub fn compound_head(encoder: &mut Encoder, operations: u32) {
    encoder.opaque(b"").u32(MINOR_VERSION).u32(operations);
}

/// Appends a SEQUENCE on `slot` with its `sequence` number.
pub fn sequence(
    encoder: &mut Encoder,
    session: &SessionId,
    sequence: u32,
    slot: u32,
    highest_slot: u32,
) {
    encoder.u32(op::SEQUENCE);
    encoder.bytes.extend_from_slice(session);
    encoder.u32(sequence).u32(slot).u32(highest_slot).u32(0);
}

/// Appends PUTFH `handle`.
pub fn put_handle(encoder: &mut Encoder, handle: &[u8]) {
    encoder.u32(op::PUTFH).opaque(handle);
}

/// Reads the head of a COMPOUND's reply: its status and how many results follow.
pub fn reply_head(decoder: &mut Decoder<'_>) -> Result<(u32, u32), XdrError> {
    let status = decoder.u32("compound status")?;
    decoder.opaque(OPAQUE_LIMIT, "tag")?;
    let results = decoder.u32("result count")?;
    Ok((status, results))
}

/// Reads the head of one operation's result, which must be `operation`'s: its status.
pub fn result_head(decoder: &mut Decoder<'_>, operation: u32) -> Result<u32, XdrError> {
    let found = decoder.u32("operation")?;
    if found != operation {
        return Err(XdrError(format!(
            "the result of operation {found} where {operation} was expected"
        )));
    }
    decoder.u32("status")
}

/// Reads a successful SEQUENCE result (after its head).
pub fn sequence_result(decoder: &mut Decoder<'_>) -> Result<(), XdrError> {
    decoder.skip(16 + 5 * 4, "SEQUENCE result")
}

/// The file types of `nfs_ftype4` this crate tells apart.
pub const REGULAR: u32 = 1;

/// The attributes read by [`Nfs4Client::attributes`] (absent ones are 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attributes4 {
    /// `type` (1 = regular file, 2 = directory).
    pub file_type: u32,
    /// Size, bytes.
    pub size_bytes: u64,
    /// The largest READ, bytes.
    pub max_read_bytes: u64,
    /// The largest WRITE, bytes.
    pub max_write_bytes: u64,
    /// Free bytes this user may use.
    pub available_bytes: u64,
    /// Size of the file system, bytes.
    pub total_bytes: u64,
    /// The time of the last change of the file's attributes or names (`time_metadata`):
    /// seconds and nanoseconds.
    pub changed: (i64, u32),
    /// The time of the last change of the file's data (`time_modify`): seconds and
    /// nanoseconds.
    pub modified: (i64, u32),
}

/// A `bitmap4` of attribute numbers.
fn bitmap(attributes: &[u32]) -> [u32; 2] {
    let mut words = [0u32; 2];
    for attribute in attributes {
        words[(*attribute / 32) as usize] |= 1 << (attribute % 32);
    }
    words
}

/// Reads an `fattr4` holding no attributes but those of [`Attributes4`].
fn attributes(decoder: &mut Decoder<'_>) -> Result<Attributes4, XdrError> {
    let words = decoder.u32("attribute bitmap length")?;
    if words > 8 {
        return Err(XdrError(format!("{words} bitmap words")));
    }
    let mut mask = [0u32; 8];
    for word in mask.iter_mut().take(words as usize) {
        *word = decoder.u32("attribute bitmap")?;
    }
    let values = decoder.opaque(OPAQUE_LIMIT, "attribute values")?;
    let mut values = Decoder::new(values);
    let mut found = Attributes4::default();
    for bit in 0..(words * 32) {
        if mask[(bit / 32) as usize] & (1 << (bit % 32)) == 0 {
            continue;
        }
        match bit {
            attribute::TYPE => found.file_type = values.u32("type")?,
            attribute::SIZE => found.size_bytes = values.u64("size")?,
            attribute::MAX_READ => found.max_read_bytes = values.u64("maxread")?,
            attribute::MAX_WRITE => found.max_write_bytes = values.u64("maxwrite")?,
            attribute::SPACE_AVAIL => found.available_bytes = values.u64("space_avail")?,
            attribute::SPACE_TOTAL => found.total_bytes = values.u64("space_total")?,
            attribute::TIME_METADATA => {
                found.changed = (
                    values.u64("time_metadata")? as i64,
                    values.u32("nanoseconds")?,
                )
            }
            attribute::TIME_MODIFY => {
                found.modified = (
                    values.u64("time_modify")? as i64,
                    values.u32("nanoseconds")?,
                )
            }
            other => return Err(XdrError(format!("attribute {other} was not asked for"))),
        }
    }
    Ok(found)
}

/// Skips an `open_delegation4` (a delegation is not asked for, but a server may grant one).
fn skip_delegation(decoder: &mut Decoder<'_>) -> Result<(), XdrError> {
    let skip_ace = |decoder: &mut Decoder<'_>| -> Result<(), XdrError> {
        decoder.skip(12, "ACE")?;
        decoder.opaque(OPAQUE_LIMIT, "ACE who").map(|_| ())
    };
    match decoder.u32("delegation type")? {
        0 => Ok(()),
        1 => {
            Stateid::decode(decoder)?;
            decoder.bool("recall")?;
            skip_ace(decoder)
        }
        2 => {
            Stateid::decode(decoder)?;
            decoder.bool("recall")?;
            match decoder.u32("space limit")? {
                1 => decoder.skip(8, "size limit")?,
                _ => decoder.skip(8, "block limit")?,
            }
            skip_ace(decoder)
        }
        3 => match decoder.u32("why no delegation")? {
            1 | 2 => decoder.bool("will signal").map(|_| ()),
            _ => Ok(()),
        },
        other => Err(XdrError(format!("delegation type {other}"))),
    }
}

/// Appends OPEN's operation number, sequence id (unused in 4.1), share access (read, or read
/// and write; no delegation wanted), share deny (none) and open owner.
fn open_head(arguments: &mut Encoder, client_id: u64, write: bool) {
    const WANT_NO_DELEGATION: u32 = 0x0400;
    let access = (if write { 3 } else { 1 }) | WANT_NO_DELEGATION;
    arguments
        .u32(op::OPEN)
        .u32(0)
        .u32(access)
        .u32(0)
        .u64(client_id)
        .opaque(CLIENT_NAME.as_bytes());
}

/// How a client's session was set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionFacts {
    /// The client id (EXCHANGE_ID).
    pub client_id: u64,
    /// The session.
    pub session: SessionId,
    /// Fore channel slots the server granted.
    pub slots: u32,
    /// The largest request the session takes, bytes.
    pub max_request_bytes: u32,
    /// The largest reply it sends, bytes.
    pub max_response_bytes: u32,
}

/// An owner no other client of this process or host uses.
fn unique_owner(credentials: &Credentials) -> Vec<u8> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!(
        "{CLIENT_NAME}/{}/{}/{}/{nanos}",
        credentials.machine,
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
    .into_bytes()
}

/// Why a call failed, naming the operation of the COMPOUND that failed.
fn failed_at(
    status: u32,
    results: u32,
    operations: &[(&'static str, String)],
) -> Result<NfsError, XdrError> {
    let index = (results as usize).saturating_sub(1);
    let (operation, subject) = operations
        .get(index)
        .ok_or_else(|| XdrError(format!("{results} results of {}", operations.len())))?;
    Ok(NfsError::Status4 {
        operation,
        subject: subject.clone(),
        status,
    })
}

/// Sets up a client id and a session on `connection` (EXCHANGE_ID, CREATE_SESSION asking for
/// `slots` fore channel slots and messages of `message_bytes`, RECLAIM_COMPLETE).
pub fn set_up(
    connection: &mut RpcConnection,
    credentials: &Credentials,
    slots: u32,
    message_bytes: u32,
) -> Result<SessionFacts, NfsError> {
    let (client_id, sequence) = alone(
        connection,
        (op::EXCHANGE_ID, "EXCHANGE_ID"),
        |arguments| {
            let verifier = fastrand::u64(..);
            arguments.u64(verifier).opaque(&unique_owner(credentials));
            // No flags, no state protection, no implementation id.
            arguments.u32(0).u32(0).u32(0);
        },
        // Flags and state protection (SP4_NONE asked for) are not needed.
        |decoder| Ok((decoder.u64("client id")?, decoder.u32("sequence id")?)),
    )?;
    alone(
        connection,
        (op::CREATE_SESSION, "CREATE_SESSION"),
        |arguments| {
            create_session_arguments(arguments, (client_id, sequence), slots, message_bytes)
        },
        |decoder| {
            let mut session = [0u8; 16];
            session.copy_from_slice(decoder.fixed(16, "session id")?);
            decoder.skip(8, "sequence and flags")?;
            decoder.u32("header padding")?;
            let max_request_bytes = decoder.u32("largest request")?;
            let max_response_bytes = decoder.u32("largest reply")?;
            decoder.u32("largest cached reply")?;
            decoder.u32("most operations")?;
            let granted = decoder.u32("slots")?;
            if granted == 0 {
                return Err(XdrError("a session of no slots".into()));
            }
            Ok(SessionFacts {
                client_id,
                session,
                slots: granted,
                max_request_bytes,
                max_response_bytes,
            })
        },
    )
}

/// Sends a COMPOUND of `operation` alone (no SEQUENCE: EXCHANGE_ID, CREATE_SESSION), its
/// arguments appended by `encode`, and reads its result with `decode`.
fn alone<T>(
    connection: &mut RpcConnection,
    (operation, name): (u32, &'static str),
    encode: impl FnOnce(&mut Encoder),
    decode: impl FnOnce(&mut Decoder<'_>) -> Result<T, XdrError>,
) -> Result<T, NfsError> {
    let mut arguments = Encoder::default();
    compound_head(&mut arguments, 1);
    arguments.u32(operation);
    encode(&mut arguments);
    let reply = connection.call(NFS_PROGRAM, NFS4_VERSION, COMPOUND, &arguments.bytes)?;
    let mut decoder = Decoder::new(&reply);
    let (status, results) = reply_head(&mut decoder)?;
    if status != 0 {
        return Err(failed_at(status, results.max(1), &[(name, String::new())])?);
    }
    result_head(&mut decoder, operation)?;
    Ok(decode(&mut decoder)?)
}

/// Appends CREATE_SESSION's arguments for `client` (its id and EXCHANGE_ID's sequence).
fn create_session_arguments(
    arguments: &mut Encoder,
    (client_id, sequence): (u64, u32),
    slots: u32,
    message_bytes: u32,
) {
    arguments.u64(client_id).u32(sequence).u32(0);
    // Fore channel: no header padding, messages of message_bytes, replies cached up to 4 KiB,
    // 8 operations, `slots` requests, no RDMA.
    arguments
        .u32(0)
        .u32(message_bytes)
        .u32(message_bytes)
        .u32(4096)
        .u32(8)
        .u32(slots)
        .u32(0);
    // Back channel (not used: no flag binds it): the smallest that servers accept.
    arguments
        .u32(0)
        .u32(4096)
        .u32(4096)
        .u32(0)
        .u32(2)
        .u32(1)
        .u32(0);
    // Callback program, and one callback security parameter: AUTH_NONE.
    arguments.u32(0x4000_0000).u32(1).u32(0);
}

/// One NFSv4.1 client (its own client id and session) on one connection, for the blocking
/// calls made before and after the run; it uses the session's slot 0.
#[derive(Debug)]
pub struct Nfs4Client {
    /// `None` once taken by [`Nfs4Client::into_parts`].
    connection: Option<RpcConnection>,
    facts: SessionFacts,
    /// The next sequence number of slot 0.
    next_sequence: u32,
    destroyed: bool,
}

impl Nfs4Client {
    /// Connects to `host:port` and sets up a client and a session (see [`set_up`]) with
    /// `slots` slots for messages of `message_bytes`.
    pub fn open(
        host: &str,
        port: u16,
        timeout: Duration,
        credentials: Credentials,
        slots: u32,
        message_bytes: u32,
    ) -> Result<Self, NfsError> {
        let connection = RpcConnection::open(host, port, timeout, credentials.clone())
            .map_err(RpcError::from)?;
        Self::on_connection(connection, &credentials, slots, message_bytes)
    }

    /// Sets up a client and a session (see [`set_up`]) on `connection`.
    pub fn on_connection(
        mut connection: RpcConnection,
        credentials: &Credentials,
        slots: u32,
        message_bytes: u32,
    ) -> Result<Self, NfsError> {
        let facts = set_up(&mut connection, credentials, slots, message_bytes)?;
        let mut client = Self::from_parts(connection, facts, 1);
        let reclaimed = client.call(
            &[("RECLAIM_COMPLETE", String::new())],
            |arguments| {
                arguments.u32(op::RECLAIM_COMPLETE).u32(0);
            },
            |_| Ok(()),
        );
        match reclaimed {
            Err(NfsError::Status4 {
                status: COMPLETE_ALREADY,
                ..
            }) => {}
            other => other?,
        }
        Ok(client)
    }

    /// A client of the session `facts` on `connection`, whose slot 0 is at `next_sequence`.
    pub fn from_parts(connection: RpcConnection, facts: SessionFacts, next_sequence: u32) -> Self {
        Nfs4Client {
            connection: Some(connection),
            facts,
            next_sequence,
            destroyed: false,
        }
    }

    /// The connection, the session and the next sequence number of slot 0, without ending
    /// the session (for pipelined I/O on it).
    pub fn into_parts(mut self) -> (RpcConnection, SessionFacts, u32) {
        self.destroyed = true;
        let connection = self.connection.take().expect("taken only here");
        (connection, self.facts.clone(), self.next_sequence)
    }

    fn connection(&mut self) -> &mut RpcConnection {
        self.connection.as_mut().expect("taken only by into_parts")
    }

    /// How the session was set up.
    pub fn facts(&self) -> &SessionFacts {
        &self.facts
    }

    /// Sends SEQUENCE followed by the `operations` `encode` appends (named, with what each is
    /// about, for errors) and reads their results with `decode` (the decoder is after the
    /// SEQUENCE result). A failed SEQUENCE is an RPC error (the session is broken: a caller
    /// may open a fresh client); a failed operation is [`NfsError::Status4`] naming it.
    pub fn call<T>(
        &mut self,
        operations: &[(&'static str, String)],
        encode: impl FnOnce(&mut Encoder),
        decode: impl FnOnce(&mut Decoder<'_>) -> Result<T, XdrError>,
    ) -> Result<T, NfsError> {
        let mut arguments = Encoder::default();
        compound_head(&mut arguments, operations.len() as u32 + 1);
        sequence(
            &mut arguments,
            &self.facts.session,
            self.next_sequence,
            0,
            0,
        );
        encode(&mut arguments);
        let reply =
            self.connection()
                .call(NFS_PROGRAM, NFS4_VERSION, COMPOUND, &arguments.bytes)?;
        let mut decoder = Decoder::new(&reply);
        let (status, results) = reply_head(&mut decoder)?;
        let sequenced = result_head(&mut decoder, op::SEQUENCE)?;
        if sequenced != 0 {
            return Err(RpcError::Refused(format!(
                "the session failed: {}",
                status_text(sequenced)
            ))
            .into());
        }
        self.next_sequence = self.next_sequence.wrapping_add(1);
        sequence_result(&mut decoder)?;
        if status != 0 {
            return Err(failed_at(status, results.saturating_sub(1), operations)?);
        }
        Ok(decode(&mut decoder)?)
    }

    /// The handle of `path` (`/`-separated components from the server's root), and of its
    /// directory: PUTROOTFH, LOOKUP each component, GETFH. A component that is missing is
    /// `NFS4ERR_NOENT` naming the path up to it.
    pub fn lookup(&mut self, components: &[&str]) -> Result<Vec<u8>, NfsError> {
        let mut named = vec![("PUTROOTFH", "/".to_string())];
        let mut walked = String::new();
        for component in components {
            walked = format!("{walked}/{component}");
            named.push(("LOOKUP", walked.clone()));
        }
        named.push(("GETFH", walked));
        self.call(
            &named,
            |arguments| {
                arguments.u32(op::PUTROOTFH);
                for component in components {
                    arguments.u32(op::LOOKUP).opaque(component.as_bytes());
                }
                arguments.u32(op::GETFH);
            },
            |decoder| {
                result_head(decoder, op::PUTROOTFH)?;
                for _ in components {
                    result_head(decoder, op::LOOKUP)?;
                }
                result_head(decoder, op::GETFH)?;
                Ok(decoder.opaque(MAX_HANDLE_BYTES, "file handle")?.to_vec())
            },
        )
    }

    /// The attributes of `handle` ([`Attributes4`]; not its times).
    pub fn attributes(&mut self, handle: &[u8], subject: &str) -> Result<Attributes4, NfsError> {
        self.get_attributes(
            handle,
            &[
                attribute::TYPE,
                attribute::SIZE,
                attribute::MAX_READ,
                attribute::MAX_WRITE,
                attribute::SPACE_AVAIL,
                attribute::SPACE_TOTAL,
            ],
            subject,
        )
    }

    /// The times of `handle`: [`Attributes4::changed`] and [`Attributes4::modified`] (the
    /// other fields are 0).
    pub fn times(&mut self, handle: &[u8], subject: &str) -> Result<Attributes4, NfsError> {
        self.get_attributes(
            handle,
            &[attribute::TIME_METADATA, attribute::TIME_MODIFY],
            subject,
        )
    }

    /// GETATTR of `wanted` (attribute numbers that [`Attributes4`] holds) on `handle`.
    fn get_attributes(
        &mut self,
        handle: &[u8],
        wanted: &[u32],
        subject: &str,
    ) -> Result<Attributes4, NfsError> {
        let mask = bitmap(wanted);
        self.call(
            &[("PUTFH", subject.into()), ("GETATTR", subject.into())],
            |arguments| {
                put_handle(arguments, handle);
                arguments.u32(op::GETATTR).u32(2).u32(mask[0]).u32(mask[1]);
            },
            |decoder| {
                result_head(decoder, op::PUTFH)?;
                result_head(decoder, op::GETATTR)?;
                attributes(decoder)
            },
        )
    }

    /// Which of the `wanted` ACCESS bits the server grants on `handle`.
    pub fn access(&mut self, handle: &[u8], wanted: u32, subject: &str) -> Result<u32, NfsError> {
        self.call(
            &[("PUTFH", subject.into()), ("ACCESS", subject.into())],
            |arguments| {
                put_handle(arguments, handle);
                arguments.u32(op::ACCESS).u32(wanted);
            },
            |decoder| {
                result_head(decoder, op::PUTFH)?;
                result_head(decoder, op::ACCESS)?;
                decoder.u32("supported")?;
                decoder.u32("access")
            },
        )
    }

    /// Opens the existing file `handle` (CLAIM_FH, no create) for reading, and for writing
    /// with `write`, sharing it with everyone; returns the open's stateid.
    pub fn open_existing(
        &mut self,
        handle: &[u8],
        write: bool,
        subject: &str,
    ) -> Result<Stateid, NfsError> {
        let client_id = self.facts.client_id;
        self.call(
            &[("PUTFH", subject.into()), ("OPEN", subject.into())],
            |arguments| {
                put_handle(arguments, handle);
                open_head(arguments, client_id, write);
                // OPEN4_NOCREATE, CLAIM_FH.
                arguments.u32(0).u32(4);
            },
            |decoder| {
                result_head(decoder, op::PUTFH)?;
                result_head(decoder, op::OPEN)?;
                open_result(decoder)
            },
        )
    }

    /// Creates `name` in `directory` (OPEN with GUARDED4: a file that exists is
    /// `NFS4ERR_EXIST`, never truncated) with mode 0644, opened for reading and writing;
    /// returns its handle and the open's stateid.
    pub fn create(
        &mut self,
        directory: &[u8],
        name: &str,
        subject: &str,
    ) -> Result<(Vec<u8>, Stateid), NfsError> {
        let client_id = self.facts.client_id;
        let mode = bitmap(&[attribute::MODE]);
        self.call(
            &[
                ("PUTFH", subject.into()),
                ("OPEN (create)", subject.into()),
                ("GETFH", subject.into()),
            ],
            |arguments| {
                put_handle(arguments, directory);
                open_head(arguments, client_id, true);
                arguments
                    // OPEN4_CREATE, GUARDED4, fattr4 { mode 0644 }.
                    .u32(1)
                    .u32(1)
                    .u32(2)
                    .u32(mode[0])
                    .u32(mode[1])
                    .u32(4)
                    .u32(0o644)
                    // CLAIM_NULL name.
                    .u32(0)
                    .opaque(name.as_bytes());
                arguments.u32(op::GETFH);
            },
            |decoder| {
                result_head(decoder, op::PUTFH)?;
                result_head(decoder, op::OPEN)?;
                let stateid = open_result(decoder)?;
                result_head(decoder, op::GETFH)?;
                let handle = decoder.opaque(MAX_HANDLE_BYTES, "file handle")?.to_vec();
                Ok((handle, stateid))
            },
        )
    }

    /// Sets the access and modification times of `handle` to `seconds` after the epoch
    /// (SETATTR with the anonymous stateid, client time).
    pub fn set_times(
        &mut self,
        handle: &[u8],
        seconds: u32,
        subject: &str,
    ) -> Result<(), NfsError> {
        let mask = bitmap(&[attribute::TIME_ACCESS_SET, attribute::TIME_MODIFY_SET]);
        let mut values = Encoder::default();
        for _ in 0..2 {
            // SET_TO_CLIENT_TIME4, nfstime4 { seconds, nanoseconds }.
            values.u32(1).u64(u64::from(seconds)).u32(0);
        }
        self.call(
            &[("PUTFH", subject.into()), ("SETATTR", subject.into())],
            |arguments| {
                put_handle(arguments, handle);
                arguments.u32(op::SETATTR);
                Stateid::ANONYMOUS.encode(arguments);
                arguments
                    .u32(2)
                    .u32(mask[0])
                    .u32(mask[1])
                    .opaque(&values.bytes);
            },
            |_| Ok(()),
        )
    }

    /// Closes the open `stateid` of `handle`.
    pub fn close(
        &mut self,
        handle: &[u8],
        stateid: Stateid,
        subject: &str,
    ) -> Result<(), NfsError> {
        self.call(
            &[("PUTFH", subject.into()), ("CLOSE", subject.into())],
            |arguments| {
                put_handle(arguments, handle);
                arguments.u32(op::CLOSE).u32(0);
                stateid.encode(arguments);
            },
            |_| Ok(()),
        )
    }

    /// Writes all of `data` at `offset` of `handle` with `stateid`, UNSTABLE (one WRITE per
    /// call; a short write is sent on).
    pub fn write(
        &mut self,
        handle: &[u8],
        stateid: Stateid,
        offset: u64,
        data: &[u8],
        subject: &str,
    ) -> Result<(), NfsError> {
        let mut done = 0usize;
        while done < data.len() {
            let count = self.call(
                &[("PUTFH", subject.into()), ("WRITE", subject.into())],
                |arguments| {
                    put_handle(arguments, handle);
                    arguments.u32(op::WRITE);
                    stateid.encode(arguments);
                    arguments
                        .u64(offset + done as u64)
                        .u32(0)
                        .opaque(&data[done..]);
                },
                |decoder| {
                    result_head(decoder, op::PUTFH)?;
                    result_head(decoder, op::WRITE)?;
                    decoder.u32("count")
                },
            )? as usize;
            if count == 0 || count > data.len() - done {
                return Err(
                    XdrError(format!("{count} bytes written of {}", data.len() - done)).into(),
                );
            }
            done += count;
        }
        Ok(())
    }

    /// Commits every UNSTABLE write of `handle` to stable storage.
    pub fn commit(&mut self, handle: &[u8], subject: &str) -> Result<(), NfsError> {
        self.call(
            &[("PUTFH", subject.into()), ("COMMIT", subject.into())],
            |arguments| {
                put_handle(arguments, handle);
                arguments.u32(op::COMMIT).u64(0).u32(0);
            },
            |_| Ok(()),
        )
    }

    /// Renames `from` in `directory` to `to` in the same directory (a file already called
    /// `to` is replaced: callers pick a name nobody uses).
    pub fn rename(
        &mut self,
        directory: &[u8],
        from: &str,
        to: &str,
        subject: &str,
    ) -> Result<(), NfsError> {
        self.call(
            &[
                ("PUTFH", subject.into()),
                ("SAVEFH", subject.into()),
                ("PUTFH", subject.into()),
                ("RENAME", subject.into()),
            ],
            |arguments| {
                put_handle(arguments, directory);
                arguments.u32(op::SAVEFH);
                put_handle(arguments, directory);
                arguments
                    .u32(op::RENAME)
                    .opaque(from.as_bytes())
                    .opaque(to.as_bytes());
            },
            |_| Ok(()),
        )
    }

    /// Removes `name` from `directory`.
    pub fn remove(&mut self, directory: &[u8], name: &str, subject: &str) -> Result<(), NfsError> {
        self.call(
            &[("PUTFH", subject.into()), ("REMOVE", subject.into())],
            |arguments| {
                put_handle(arguments, directory);
                arguments.u32(op::REMOVE).opaque(name.as_bytes());
            },
            |_| Ok(()),
        )
    }

    /// Ends the session and the client id (DESTROY_SESSION, DESTROY_CLIENTID), waiting at most
    /// `timeout` for each; errors are not reported (the server forgets both when the lease
    /// runs out anyway).
    pub fn destroy(&mut self, timeout: Duration) {
        if std::mem::replace(&mut self.destroyed, true) {
            return;
        }
        let facts = self.facts.clone();
        let connection = self.connection();
        let _ = connection.set_timeout(timeout);
        destroy(connection, &facts);
    }
}

/// Sends DESTROY_SESSION and DESTROY_CLIENTID for `facts` on `connection` (nothing may be in
/// flight on it); errors are not reported.
pub fn destroy(connection: &mut RpcConnection, facts: &SessionFacts) {
    let destroyed = alone(
        connection,
        (op::DESTROY_SESSION, "DESTROY_SESSION"),
        |arguments| arguments.bytes.extend_from_slice(&facts.session),
        |_| Ok(()),
    );
    if destroyed.is_ok() {
        let _ = alone(
            connection,
            (op::DESTROY_CLIENTID, "DESTROY_CLIENTID"),
            |arguments| {
                arguments.u64(facts.client_id);
            },
            |_| Ok(()),
        );
    }
}

impl Drop for Nfs4Client {
    fn drop(&mut self) {
        self.destroy(Duration::from_secs(2));
    }
}

/// Reads an OPEN result (after its head): the stateid.
fn open_result(decoder: &mut Decoder<'_>) -> Result<Stateid, XdrError> {
    let stateid = Stateid::decode(decoder)?;
    decoder.skip(4 + 16, "change info")?;
    decoder.u32("result flags")?;
    let words = decoder.u32("attributes set")?;
    if words > 8 {
        return Err(XdrError(format!("{words} bitmap words")));
    }
    decoder.skip(4 * words as usize, "attributes set")?;
    skip_delegation(decoder)?;
    Ok(stateid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_read_in_bit_order_and_unasked_ones_refused() {
        let mask = bitmap(&[attribute::TYPE, attribute::SIZE, attribute::SPACE_AVAIL]);
        let mut values = Encoder::default();
        values.u32(REGULAR).u64(4096).u64(1 << 30);
        let mut encoder = Encoder::default();
        encoder
            .u32(2)
            .u32(mask[0])
            .u32(mask[1])
            .opaque(&values.bytes);
        let found = attributes(&mut Decoder::new(&encoder.bytes)).unwrap();
        assert_eq!(
            (found.file_type, found.size_bytes, found.available_bytes),
            (REGULAR, 4096, 1 << 30)
        );
        let mut unasked = Encoder::default();
        unasked.u32(1).u32(1 << 3).opaque(&[0; 4]);
        assert!(attributes(&mut Decoder::new(&unasked.bytes)).is_err());
    }

    #[test]
    fn an_open_result_yields_its_stateid_whatever_the_delegation() {
        for delegation in [vec![0u32], vec![3, 1, 0], vec![3, 0]] {
            let mut encoder = Encoder::default();
            Stateid {
                seqid: 1,
                other: [7; 12],
            }
            .encode(&mut encoder);
            encoder.u32(1).u64(1).u64(2).u32(0).u32(1).u32(0);
            for word in delegation {
                encoder.u32(word);
            }
            let mut decoder = Decoder::new(&encoder.bytes);
            assert_eq!(open_result(&mut decoder).unwrap().other, [7; 12]);
            assert!(decoder.u32("end").is_err(), "all of it read");
        }
    }

    #[test]
    fn a_failed_compound_names_the_operation_that_failed() {
        let named = [
            ("PUTROOTFH", "/".to_string()),
            ("LOOKUP", "/export".to_string()),
            ("LOOKUP", "/export/missing".to_string()),
        ];
        let error = failed_at(NOENT, 3, &named).unwrap().to_string();
        assert!(
            error.contains("/export/missing") && error.contains("NFS4ERR_NOENT"),
            "{error}"
        );
        assert!(failed_at(NOENT, 9, &named).is_err());
    }
}
