//! What a probe of a network volume found: its geometry, what the server supports and the
//! first bytes, learned over one short connection before the run (each protocol engine's probe
//! fills it in; [`super::network::probe`] picks the probe of a target's protocol); the check
//! that every later connection finds the same volume; and how long engines wait on a server.

use std::time::Duration;

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
    /// Largest trim the server takes in one request, bytes (0: no limit announced; an iSCSI
    /// LUN's MAXIMUM UNMAP LBA COUNT).
    pub max_trim_bytes: u64,
    /// The first bytes of the volume (up to 68 KiB), for signature detection (empty for a
    /// file on a file server, which follows the rules of files).
    pub head: Vec<u8>,
    /// A file on a file server (`nfs://`) that does not exist yet: the run creates it with
    /// `size_bytes` and removes it afterwards.
    pub to_create: bool,
    /// A file protocol's largest single read and write (NFS `rtmax` / `wtmax`).
    pub transfer_sizes: Option<crate::result::TransferSizes>,
    /// How a file protocol's session was set up, in words (`SMB 3.1.1, signed
    /// (AES-128-CMAC)`).
    pub file_session: Option<String>,
    /// A file server that binds further connections to one session (SMB 3.x multichannel):
    /// `--connections N` opens N channels of one session there, N independent sessions
    /// elsewhere.
    pub multichannel: bool,
    /// A file server's network interfaces as it lists them (SMB multichannel's
    /// FSCTL_QUERY_NETWORK_INTERFACE_INFO), in words: `127.0.0.1 at 10 Gbit/s with RSS`.
    pub server_interfaces: Vec<String>,
    /// The server's handle of an existing file on a file server (NFS), which tells it from
    /// any other file whatever its name: recorded in verify states. `None` elsewhere.
    pub file_handle: Option<Vec<u8>>,
}

/// How long a protocol engine waits on a server unless told otherwise (`--net-timeout`): to
/// connect and finish the handshake (one deadline for all of it), and for each reply. As long
/// as the Linux NBD client's and the SCSI disk layer's default timeouts.
pub const DEFAULT_NET_TIMEOUT: Duration = Duration::from_secs(30);

/// After the run was asked to stop, how long requests in flight may take to be answered before
/// they are abandoned (at most the network timeout).
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// One way a volume differs from what the probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolumeChange {
    /// What differs ("size", "read-only" …).
    pub what: &'static str,
    /// The value the probe found, in words.
    pub probed: String,
    /// The value found now, in words.
    pub found: String,
}

impl std::fmt::Display for VolumeChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} at the probe, {} now",
            self.what, self.probed, self.found
        )
    }
}

/// The changes joined for a message: `size 16777216 bytes at the probe, 1048576 bytes now; …`.
pub fn describe_changes(changes: &[VolumeChange]) -> String {
    changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl NetworkVolumeInfo {
    /// The same description without the first bytes (what a later connection is checked
    /// against).
    pub fn without_head(&self) -> NetworkVolumeInfo {
        NetworkVolumeInfo {
            head: Vec::new(),
            ..self.clone()
        }
    }

    /// How this volume (found now) differs from `probed`, the first bytes aside; empty when
    /// it is the same.
    pub fn changes_from(&self, probed: &NetworkVolumeInfo) -> Vec<VolumeChange> {
        let mut changes = Vec::new();
        let mut number = |what, probed: u64, found: u64, unit: &str| {
            if probed != found {
                changes.push(VolumeChange {
                    what,
                    probed: format!("{probed}{unit}"),
                    found: format!("{found}{unit}"),
                });
            }
        };
        number("size", probed.size_bytes, self.size_bytes, " bytes");
        number(
            "minimum block size",
            probed.logical_block_size.into(),
            self.logical_block_size.into(),
            " bytes",
        );
        number(
            "preferred block size",
            probed.preferred_block_size.into(),
            self.preferred_block_size.into(),
            " bytes",
        );
        number(
            "largest request",
            probed.max_request_bytes.into(),
            self.max_request_bytes.into(),
            " bytes",
        );
        number(
            "largest trim",
            probed.max_trim_bytes,
            self.max_trim_bytes,
            " bytes",
        );
        let mut flag = |what, probed: bool, found: bool| {
            if probed != found {
                let words = |value: bool| if value { "yes" } else { "no" }.to_string();
                changes.push(VolumeChange {
                    what,
                    probed: words(probed),
                    found: words(found),
                });
            }
        };
        flag("read-only", probed.read_only, self.read_only);
        flag("flush support", probed.flush, self.flush);
        flag("FUA support", probed.fua, self.fua);
        flag("trim support", probed.trim, self.trim);
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_name_each_field_that_differs() {
        let probed = NetworkVolumeInfo {
            size_bytes: 16 << 20,
            logical_block_size: 512,
            preferred_block_size: 4096,
            max_request_bytes: 1 << 20,
            flush: true,
            fua: true,
            head: vec![1; 16],
            ..NetworkVolumeInfo::default()
        };
        assert!(probed.without_head().changes_from(&probed).is_empty());
        let found = NetworkVolumeInfo {
            size_bytes: 1 << 20,
            read_only: true,
            ..probed.without_head()
        };
        let changes = found.changes_from(&probed);
        assert_eq!(
            describe_changes(&changes),
            "size 16777216 bytes at the probe, 1048576 bytes now; read-only no at the probe, yes now"
        );
    }
}
