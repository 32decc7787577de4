//! What a probe of a network volume found: its geometry, what the server supports and the
//! first bytes, learned over one short connection before the run. Each protocol engine's probe
//! fills it in; [`super::network::probe`] picks the probe of a target's protocol.

/// What a probe of a network volume found (one short connection before the run).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkVolumeInfo {
    /// Size of the volume, bytes.
    pub size_bytes: u64,
    /// Smallest block the server accepts (O_DIRECT-like alignment), bytes.
    pub logical_block_size: u32,
    /// Block size the server prefers, bytes.
    pub preferred_block_size: u32,
    /// Largest single request the server accepts, bytes (0: no limit announced).
    pub max_request_bytes: u32,
    /// The server refuses writes.
    pub read_only: bool,
    /// The server supports a durable flush (NBD FLUSH, SCSI SYNCHRONIZE CACHE).
    pub flush: bool,
    /// The server supports forced unit access on writes.
    pub fua: bool,
    /// The server supports TRIM / UNMAP.
    pub trim: bool,
    /// The first bytes of the volume (up to 68 KiB), for signature detection.
    pub head: Vec<u8>,
}
