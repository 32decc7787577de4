//! SMB2 on the wire (MS-SMB2): the transport frame, the 64-byte header, command codes and the
//! NT status codes this crate tells apart.

/// The SMB2 header's size.
pub const HEADER_BYTES: usize = 64;
/// The protocol id of an SMB2 header (`0xFE 'S' 'M' 'B'`).
pub const PROTOCOL_ID: [u8; 4] = [0xFE, b'S', b'M', b'B'];
/// Header flag: this is a response.
pub const FLAG_RESPONSE: u32 = 0x0000_0001;
/// Header flag: an asynchronous (interim or final) response.
pub const FLAG_ASYNC: u32 = 0x0000_0002;

/// Command codes.
pub mod command {
    /// NEGOTIATE.
    pub const NEGOTIATE: u16 = 0;
    /// SESSION_SETUP.
    pub const SESSION_SETUP: u16 = 1;
    /// LOGOFF.
    pub const LOGOFF: u16 = 2;
    /// TREE_CONNECT.
    pub const TREE_CONNECT: u16 = 3;
    /// CREATE.
    pub const CREATE: u16 = 5;
    /// CLOSE.
    pub const CLOSE: u16 = 6;
    /// FLUSH.
    pub const FLUSH: u16 = 7;
    /// READ.
    pub const READ: u16 = 8;
    /// WRITE.
    pub const WRITE: u16 = 9;
    /// QUERY_INFO.
    pub const QUERY_INFO: u16 = 0x10;
    /// IOCTL (and FSCTL).
    pub const IOCTL: u16 = 0x0B;
    /// SET_INFO.
    pub const SET_INFO: u16 = 0x11;

    /// The command's name.
    pub fn name(command: u16) -> &'static str {
        match command {
            NEGOTIATE => "NEGOTIATE",
            SESSION_SETUP => "SESSION_SETUP",
            LOGOFF => "LOGOFF",
            TREE_CONNECT => "TREE_CONNECT",
            CREATE => "CREATE",
            CLOSE => "CLOSE",
            FLUSH => "FLUSH",
            READ => "READ",
            WRITE => "WRITE",
            QUERY_INFO => "QUERY_INFO",
            SET_INFO => "SET_INFO",
            _ => "SMB2 command",
        }
    }
}

/// NT status codes.
pub mod status {
    /// Success.
    pub const SUCCESS: u32 = 0;
    /// An interim response: the answer comes later.
    pub const PENDING: u32 = 0x0000_0103;
    /// Authentication goes on.
    pub const MORE_PROCESSING_REQUIRED: u32 = 0xC000_0016;
    /// A read at or past the end of the file.
    pub const END_OF_FILE: u32 = 0xC000_0011;
    /// No such file.
    pub const OBJECT_NAME_NOT_FOUND: u32 = 0xC000_0034;
    /// The file exists already.
    pub const OBJECT_NAME_COLLISION: u32 = 0xC000_0035;
    /// A directory on the way does not exist.
    pub const OBJECT_PATH_NOT_FOUND: u32 = 0xC000_003A;
    /// Wrong user name or password.
    pub const LOGON_FAILURE: u32 = 0xC000_006D;
    /// Access denied.
    pub const ACCESS_DENIED: u32 = 0xC000_0022;
    /// No such share.
    pub const BAD_NETWORK_NAME: u32 = 0xC000_00CC;
    /// The share is read-only.
    pub const MEDIA_WRITE_PROTECTED: u32 = 0xC000_00A2;
    /// No space left.
    pub const DISK_FULL: u32 = 0xC000_007F;
    /// The name is a directory.
    pub const FILE_IS_A_DIRECTORY: u32 = 0xC000_00BA;
    /// The session is gone.
    pub const USER_SESSION_DELETED: u32 = 0xC000_0203;
    /// The session's time ran out.
    pub const NETWORK_SESSION_EXPIRED: u32 = 0xC000_035C;
    /// A file handle no longer valid.
    pub const FILE_CLOSED: u32 = 0xC000_0128;
    /// A parameter the server refused.
    pub const INVALID_PARAMETER: u32 = 0xC000_000D;
    /// The file is open elsewhere in a way that excludes this open.
    pub const SHARING_VIOLATION: u32 = 0xC000_0043;
    /// The operation is not supported.
    pub const NOT_SUPPORTED: u32 = 0xC000_00BB;
    /// The account may not log in.
    pub const ACCOUNT_DISABLED: u32 = 0xC000_0072;
    /// The password has expired.
    pub const PASSWORD_EXPIRED: u32 = 0xC000_0071;

    /// The status in words.
    pub fn text(status: u32) -> String {
        let words = match status {
            SUCCESS => "success",
            END_OF_FILE => "end of file",
            OBJECT_NAME_NOT_FOUND => "no such file",
            OBJECT_NAME_COLLISION => "the file exists",
            OBJECT_PATH_NOT_FOUND => "no such directory",
            LOGON_FAILURE => "logon failure: wrong user name or password",
            ACCESS_DENIED => "access denied",
            BAD_NETWORK_NAME => "no such share",
            MEDIA_WRITE_PROTECTED => "the share is read-only",
            DISK_FULL => "no space left on the share",
            FILE_IS_A_DIRECTORY => "a directory, not a file",
            USER_SESSION_DELETED => "the session was ended by the server",
            NETWORK_SESSION_EXPIRED => "the session expired",
            FILE_CLOSED => "the file handle was closed",
            INVALID_PARAMETER => "invalid parameter",
            SHARING_VIOLATION => "the file is open elsewhere (sharing violation)",
            NOT_SUPPORTED => "not supported by the server",
            ACCOUNT_DISABLED => "the account is disabled",
            PASSWORD_EXPIRED => "the password has expired",
            _ => return format!("NT status {status:#010x}"),
        };
        format!("{words} ({status:#010x})")
    }

    /// The errno of a failed I/O, negated as a completion carries it.
    pub fn errno(status: u32) -> i64 {
        -i64::from(match status {
            ACCESS_DENIED => libc::EACCES,
            MEDIA_WRITE_PROTECTED => libc::EROFS,
            DISK_FULL => libc::ENOSPC,
            OBJECT_NAME_NOT_FOUND | OBJECT_PATH_NOT_FOUND => libc::ENOENT,
            FILE_CLOSED | USER_SESSION_DELETED | NETWORK_SESSION_EXPIRED => libc::ESTALE,
            INVALID_PARAMETER => libc::EINVAL,
            NOT_SUPPORTED => libc::EOPNOTSUPP,
            _ => libc::EIO,
        })
    }
}

/// Writes a request header for `command` into `out` (64 bytes).
#[allow(clippy::too_many_arguments)]
pub fn request_header(
    out: &mut [u8],
    command: u16,
    credit_charge: u16,
    credit_request: u16,
    message_id: u64,
    tree_id: u32,
    session_id: u64,
) {
    out[..HEADER_BYTES].fill(0);
    out[..4].copy_from_slice(&PROTOCOL_ID);
    out[4..6].copy_from_slice(&(HEADER_BYTES as u16).to_le_bytes());
    out[6..8].copy_from_slice(&credit_charge.to_le_bytes());
    out[12..14].copy_from_slice(&command.to_le_bytes());
    out[14..16].copy_from_slice(&credit_request.to_le_bytes());
    out[24..32].copy_from_slice(&message_id.to_le_bytes());
    out[36..40].copy_from_slice(&tree_id.to_le_bytes());
    out[40..48].copy_from_slice(&session_id.to_le_bytes());
}

/// What a response header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseHeader {
    /// NT status.
    pub status: u32,
    /// Command.
    pub command: u16,
    /// Credits granted.
    pub credits: u16,
    /// Flags.
    pub flags: u32,
    /// The request's message id.
    pub message_id: u64,
    /// Session id.
    pub session_id: u64,
    /// Tree id (of a synchronous response).
    pub tree_id: u32,
}

/// Reads the header at the start of `message`.
pub fn response_header(message: &[u8]) -> Result<ResponseHeader, String> {
    if message.len() < HEADER_BYTES || message[..4] != PROTOCOL_ID {
        return Err(format!(
            "a message that is not SMB2 ({} bytes, starting {:02x?})",
            message.len(),
            &message[..message.len().min(4)]
        ));
    }
    let flags = u32_at(message, 16);
    if flags & FLAG_RESPONSE == 0 {
        return Err("a request where a response belongs".into());
    }
    Ok(ResponseHeader {
        status: u32_at(message, 8),
        command: u16_at(message, 12),
        credits: u16_at(message, 14),
        flags,
        message_id: u64_at(message, 24),
        session_id: u64_at(message, 40),
        tree_id: u32_at(message, 36),
    })
}

/// The little-endian u16 at `at` (the caller checked the length).
pub fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// The little-endian u32 at `at` (the caller checked the length).
pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// The little-endian u64 at `at` (the caller checked the length).
pub fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Text as SMB carries names: UTF-16LE.
pub fn utf16(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// A dialect's name (`0x0311` → `3.1.1`).
pub fn dialect_name(dialect: u16) -> &'static str {
    match dialect {
        0x0202 => "2.0.2",
        0x0210 => "2.1",
        0x0300 => "3.0",
        0x0302 => "3.0.2",
        0x0311 => "3.1.1",
        _ => "unknown",
    }
}
