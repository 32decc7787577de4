//! The NBD wire format: magic numbers, flag bits, option and command codes, and the fixed-size
//! headers of the transmission phase (the 28-byte request and the 16-byte simple reply).
//!
//! Every number on the wire is big-endian. Nothing here does I/O: a client's handshake and
//! connection read and write the bytes (iopath's are in its `src/engine/nbd/`).

/// `NBDMAGIC`: the first eight bytes every server sends.
pub const GREETING_MAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: follows the greeting in newstyle negotiation, and starts every option the client
/// sends.
pub const OPTION_MAGIC: u64 = 0x4948_4156_454f_5054;
/// Follows the greeting in oldstyle negotiation (not supported).
pub const OLDSTYLE_MAGIC: u64 = 0x0000_4202_8186_1253;
/// Starts every option reply of fixed newstyle negotiation.
pub const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Starts every request of the transmission phase.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Starts every simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// Starts a structured reply chunk (never negotiated here, so always a server error).
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

/// Handshake flag: the server speaks fixed newstyle negotiation.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
/// Handshake flag: the server can leave out the 124 zero bytes after `NBD_OPT_EXPORT_NAME`.
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
/// Client flag: the client speaks fixed newstyle negotiation.
pub const CLIENT_FIXED_NEWSTYLE: u32 = 1 << 0;
/// Client flag: leave out the 124 zero bytes.
pub const CLIENT_NO_ZEROES: u32 = 1 << 1;

/// Option: choose the export and enter transmission (cannot report errors).
pub const OPT_EXPORT_NAME: u32 = 1;
/// Option: end the negotiation without entering transmission.
pub const OPT_ABORT: u32 = 2;
/// Option: choose the export, learn about it and enter transmission.
pub const OPT_GO: u32 = 7;

/// Option reply: success, no data.
pub const REP_ACK: u32 = 1;
/// Option reply: one item of information about the export.
pub const REP_INFO: u32 = 3;
/// Bit set in every option reply that is an error.
pub const REP_ERROR_BIT: u32 = 1 << 31;
/// Option reply error: the server does not know the option.
pub const REP_ERR_UNSUP: u32 = REP_ERROR_BIT | 1;
/// Option reply error: refused by the server's policy.
pub const REP_ERR_POLICY: u32 = REP_ERROR_BIT | 2;
/// Option reply error: the option was malformed.
pub const REP_ERR_INVALID: u32 = REP_ERROR_BIT | 3;
/// Option reply error: not available on the server's platform.
pub const REP_ERR_PLATFORM: u32 = REP_ERROR_BIT | 4;
/// Option reply error: the server insists on TLS first.
pub const REP_ERR_TLS_REQD: u32 = REP_ERROR_BIT | 5;
/// Option reply error: no such export.
pub const REP_ERR_UNKNOWN: u32 = REP_ERROR_BIT | 6;
/// Option reply error: the server is shutting down.
pub const REP_ERR_SHUTDOWN: u32 = REP_ERROR_BIT | 7;
/// Option reply error: the client must ask for block sizes.
pub const REP_ERR_BLOCK_SIZE_REQD: u32 = REP_ERROR_BIT | 8;
/// Option reply error: the request or reply would be too large.
pub const REP_ERR_TOO_BIG: u32 = REP_ERROR_BIT | 9;

/// Information item: size and transmission flags.
pub const INFO_EXPORT: u16 = 0;
/// Information item: minimum, preferred and maximum block size.
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Command: read.
pub const CMD_READ: u16 = 0;
/// Command: write (the payload follows the header).
pub const CMD_WRITE: u16 = 1;
/// Command: disconnect (no reply).
pub const CMD_DISC: u16 = 2;
/// Command: make completed writes durable.
pub const CMD_FLUSH: u16 = 3;
/// `NBD_CMD_TRIM`: the server may drop the data of a range (only where it advertises
/// `NBD_FLAG_SEND_TRIM`); no payload either way.
pub const CMD_TRIM: u16 = 4;
/// Command flag: forced unit access (the reply waits until the data is durable).
pub const CMD_FLAG_FUA: u16 = 1 << 0;

/// Error value: the server is shutting down (the client must disconnect).
pub const ERROR_SHUTDOWN: u32 = 108;

/// Bytes of a request header.
pub const REQUEST_BYTES: usize = 28;
/// Bytes of a simple reply header.
pub const REPLY_BYTES: usize = 16;
/// Bytes of an option reply header.
pub const OPTION_REPLY_HEADER_BYTES: usize = 20;
/// Zero bytes after an `NBD_OPT_EXPORT_NAME` reply unless both sides agreed to leave them out.
pub const EXPORT_NAME_ZEROES: usize = 124;
/// Longest export name the protocol allows, bytes.
pub const MAX_NAME_BYTES: usize = 4096;

/// The transmission flags a server announces for an export.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransmissionFlags(pub u16);

impl TransmissionFlags {
    const HAS_FLAGS: u16 = 1 << 0;
    const READ_ONLY: u16 = 1 << 1;
    const SEND_FLUSH: u16 = 1 << 2;
    const SEND_FUA: u16 = 1 << 3;
    const ROTATIONAL: u16 = 1 << 4;
    const SEND_TRIM: u16 = 1 << 5;
    const CAN_MULTI_CONN: u16 = 1 << 8;

    /// Whether bit `bit` is set; every bit counts only when `NBD_FLAG_HAS_FLAGS` is set.
    fn has(self, bit: u16) -> bool {
        self.0 & Self::HAS_FLAGS != 0 && self.0 & bit != 0
    }

    /// The server refuses writes.
    pub fn read_only(self) -> bool {
        self.has(Self::READ_ONLY)
    }

    /// The server accepts `NBD_CMD_FLUSH`.
    pub fn flush(self) -> bool {
        self.has(Self::SEND_FLUSH)
    }

    /// The server accepts the FUA flag on writes.
    pub fn fua(self) -> bool {
        self.has(Self::SEND_FUA)
    }

    /// The server accepts `NBD_CMD_TRIM`.
    pub fn trim(self) -> bool {
        self.has(Self::SEND_TRIM)
    }

    /// The export behaves like a rotating disk.
    pub fn rotational(self) -> bool {
        self.has(Self::ROTATIONAL)
    }

    /// Several connections to the export see one another's writes, flushes and FUA writes.
    pub fn multi_conn(self) -> bool {
        self.has(Self::CAN_MULTI_CONN)
    }
}

/// Block size constraints announced with `NBD_INFO_BLOCK_SIZE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSizes {
    /// Every offset and length must be a multiple of this, bytes (a power of two up to 64 KiB).
    pub minimum: u32,
    /// Requests of at least this size (a power of two) avoid read-modify-write, bytes.
    pub preferred: u32,
    /// Largest payload of one request, bytes.
    pub maximum: u32,
}

impl BlockSizes {
    /// Reads the 12 bytes after the information type, or says what is wrong with them.
    pub fn decode(bytes: &[u8; 12]) -> Result<Self, String> {
        let sizes = BlockSizes {
            minimum: be_u32(&bytes[0..4]),
            preferred: be_u32(&bytes[4..8]),
            maximum: be_u32(&bytes[8..12]),
        };
        let valid = sizes.minimum.is_power_of_two()
            && sizes.minimum <= 64 * 1024
            && sizes.preferred.is_power_of_two()
            && sizes.preferred >= sizes.minimum
            && sizes.maximum >= sizes.minimum
            && (sizes.maximum == u32::MAX || sizes.maximum.is_multiple_of(sizes.minimum));
        if valid {
            Ok(sizes)
        } else {
            Err(format!(
                "inconsistent block sizes: minimum {}, preferred {}, maximum {}",
                sizes.minimum, sizes.preferred, sizes.maximum
            ))
        }
    }
}

/// Reads a big-endian `u16` from the first two bytes of `bytes`.
pub fn be_u16(bytes: &[u8]) -> u16 {
    u16::from_be_bytes([bytes[0], bytes[1]])
}

/// Reads a big-endian `u32` from the first four bytes of `bytes`.
pub fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// Reads a big-endian `u64` from the first eight bytes of `bytes`.
pub fn be_u64(bytes: &[u8]) -> u64 {
    let mut array = [0; 8];
    array.copy_from_slice(&bytes[..8]);
    u64::from_be_bytes(array)
}

/// One request header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Command flags (`CMD_FLAG_*`).
    pub flags: u16,
    /// Command (`CMD_*`).
    pub command: u16,
    /// Handle the reply will carry (the slot).
    pub handle: u64,
    /// Byte offset in the export.
    pub offset: u64,
    /// Length in bytes.
    pub length: u32,
}

impl Request {
    /// The request's 28 bytes.
    #[inline]
    pub fn encode(&self) -> [u8; REQUEST_BYTES] {
        let mut bytes = [0; REQUEST_BYTES];
        bytes[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        bytes[4..6].copy_from_slice(&self.flags.to_be_bytes());
        bytes[6..8].copy_from_slice(&self.command.to_be_bytes());
        bytes[8..16].copy_from_slice(&self.handle.to_be_bytes());
        bytes[16..24].copy_from_slice(&self.offset.to_be_bytes());
        bytes[24..28].copy_from_slice(&self.length.to_be_bytes());
        bytes
    }
}

/// One simple reply header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// 0 on success, else an NBD error value (see [`errno_of`]).
    pub error: u32,
    /// The handle of the request answered.
    pub handle: u64,
}

impl Reply {
    /// Reads a simple reply header, or says why these bytes are not one.
    #[inline]
    pub fn decode(bytes: &[u8]) -> Result<Reply, String> {
        match be_u32(&bytes[0..4]) {
            SIMPLE_REPLY_MAGIC => Ok(Reply {
                error: be_u32(&bytes[4..8]),
                handle: be_u64(&bytes[8..16]),
            }),
            STRUCTURED_REPLY_MAGIC => {
                Err("the server sent a structured reply, which was not negotiated".to_string())
            }
            magic => Err(format!(
                "the server sent a reply with magic {magic:#010x} (expected {SIMPLE_REPLY_MAGIC:#010x})"
            )),
        }
    }
}

/// The local errno of an NBD error value. The protocol's values are Linux's; an unknown value
/// becomes `EIO`.
pub fn errno_of(nbd_error: u32) -> i32 {
    match nbd_error {
        1 => libc::EPERM,
        5 => libc::EIO,
        12 => libc::ENOMEM,
        22 => libc::EINVAL,
        28 => libc::ENOSPC,
        75 => libc::EOVERFLOW,
        95 => libc::ENOTSUP,
        ERROR_SHUTDOWN => libc::ESHUTDOWN,
        _ => libc::EIO,
    }
}

/// The protocol's name of an option reply error, for messages.
pub fn option_error_name(reply: u32) -> &'static str {
    match reply {
        REP_ERR_UNSUP => "NBD_REP_ERR_UNSUP",
        REP_ERR_POLICY => "NBD_REP_ERR_POLICY",
        REP_ERR_INVALID => "NBD_REP_ERR_INVALID",
        REP_ERR_PLATFORM => "NBD_REP_ERR_PLATFORM",
        REP_ERR_TLS_REQD => "NBD_REP_ERR_TLS_REQD",
        REP_ERR_UNKNOWN => "NBD_REP_ERR_UNKNOWN",
        REP_ERR_SHUTDOWN => "NBD_REP_ERR_SHUTDOWN",
        REP_ERR_BLOCK_SIZE_REQD => "NBD_REP_ERR_BLOCK_SIZE_REQD",
        REP_ERR_TOO_BIG => "NBD_REP_ERR_TOO_BIG",
        _ => "an unknown error reply",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_spell_their_names() {
        assert_eq!(&GREETING_MAGIC.to_be_bytes(), b"NBDMAGIC");
        assert_eq!(&OPTION_MAGIC.to_be_bytes(), b"IHAVEOPT");
    }

    #[test]
    fn request_encodes_big_endian_fields_in_order() {
        let bytes = Request {
            flags: CMD_FLAG_FUA,
            command: CMD_WRITE,
            handle: 0x0102_0304_0506_0708,
            offset: 0x1122_3344_5566_7788,
            length: 0x0000_1000,
        }
        .encode();
        assert_eq!(
            bytes,
            [
                0x25, 0x60, 0x95, 0x13, 0x00, 0x01, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22,
                0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x00, 0x10, 0x00
            ]
        );
    }

    #[test]
    fn reply_decodes_or_names_the_bad_magic() {
        let mut bytes = [0u8; REPLY_BYTES];
        bytes[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
        bytes[4..8].copy_from_slice(&28u32.to_be_bytes());
        bytes[8..16].copy_from_slice(&7u64.to_be_bytes());
        assert_eq!(
            Reply::decode(&bytes),
            Ok(Reply {
                error: 28,
                handle: 7
            })
        );
        bytes[0..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
        assert!(Reply::decode(&bytes).unwrap_err().contains("structured"));
        bytes[0..4].copy_from_slice(&0xdead_beef_u32.to_be_bytes());
        assert!(Reply::decode(&bytes).unwrap_err().contains("0xdeadbeef"));
    }

    #[test]
    fn transmission_flags_need_has_flags() {
        let flags = TransmissionFlags(0b1_0010_1111);
        assert!(flags.read_only() && flags.flush() && flags.fua() && flags.trim());
        assert!(flags.multi_conn() && !flags.rotational());
        assert!(!TransmissionFlags(0b1_0010_1110).read_only());
    }

    #[test]
    fn block_sizes_are_checked() {
        let encode = |min: u32, preferred: u32, max: u32| {
            let mut bytes = [0; 12];
            bytes[0..4].copy_from_slice(&min.to_be_bytes());
            bytes[4..8].copy_from_slice(&preferred.to_be_bytes());
            bytes[8..12].copy_from_slice(&max.to_be_bytes());
            bytes
        };
        assert_eq!(
            BlockSizes::decode(&encode(512, 4096, 32 << 20)),
            Ok(BlockSizes {
                minimum: 512,
                preferred: 4096,
                maximum: 32 << 20
            })
        );
        assert!(BlockSizes::decode(&encode(1, 4096, u32::MAX)).is_ok());
        assert!(BlockSizes::decode(&encode(3, 4096, 4096)).is_err());
        assert!(BlockSizes::decode(&encode(4096, 512, 4096)).is_err());
        assert!(BlockSizes::decode(&encode(4096, 4096, 6000)).is_err());
        assert!(BlockSizes::decode(&encode(1 << 17, 1 << 17, 1 << 17)).is_err());
    }

    #[test]
    fn errors_map_to_errno() {
        assert_eq!(errno_of(28), libc::ENOSPC);
        assert_eq!(errno_of(1), libc::EPERM);
        assert_eq!(errno_of(9999), libc::EIO);
    }
}
