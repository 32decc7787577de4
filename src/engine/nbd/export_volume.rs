//! What the NBD handshake learnt about an export, as iopath's network volume.

use crate::engine::volume::NetworkVolumeInfo;
use nbd_client::Export;

/// `export` as a network volume (without its first bytes): what the probe reports and what
/// every later connection must find again.
pub fn export_volume(export: &Export) -> NetworkVolumeInfo {
    NetworkVolumeInfo {
        size_bytes: export.size_bytes,
        logical_block_size: export.minimum_block(),
        preferred_block_size: export.preferred_block(),
        max_request_bytes: export.maximum_request(),
        read_only: export.flags.read_only(),
        flush: export.flags.flush(),
        fua: export.flags.fua(),
        trim: export.flags.trim(),
        // NBD announces no limit of its own for trims (the largest request applies).
        max_trim_bytes: 0,
        head: Vec::new(),
        to_create: false,
        transfer_sizes: None,
        file_session: None,
        multichannel: false,
        server_interfaces: Vec::new(),
        file_handle: None,
    }
}
