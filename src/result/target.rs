//! What was found about a target before the run.

use super::file_setup::CreatedContent;
use serde::{Deserialize, Serialize};

/// Kind of target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A regular file.
    File,
    /// A block device.
    BlockDevice,
    /// An NBD export (reached by the nbd engine).
    Nbd,
    /// An iSCSI logical unit (reached by the iscsi engine).
    Iscsi,
    /// A file on an NFS export (reached by the nfs engine).
    Nfs,
    /// A file on an SMB share (reached by the smb engine).
    Smb,
}

impl TargetKind {
    /// What it is, in words for reports (`iSCSI LUN`).
    pub fn description(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::BlockDevice => "block device",
            TargetKind::Nbd => "NBD export",
            TargetKind::Iscsi => "iSCSI LUN",
            TargetKind::Nfs => "file on an NFS export",
            TargetKind::Smb => "file on an SMB share",
        }
    }
}

/// What was found about a target before the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The path as given.
    pub path: String,
    /// File or block device.
    pub kind: TargetKind,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Logical block size of the device underneath, bytes.
    pub logical_block_size_bytes: u32,
    /// Physical block size of the device underneath, bytes.
    pub physical_block_size_bytes: u32,
    /// Whether the device underneath is rotational (None when unknown).
    pub rotational: Option<bool>,
    /// For a file: the filesystem it lives on (ext4, tmpfs…). For a device: the filesystem or
    /// partition-table signature found on it, if any.
    pub filesystem: Option<String>,
    /// Name of the block device (the device itself, or the one holding the file's filesystem).
    pub device: Option<String>,
    /// Alignment O_DIRECT needs for offsets and lengths, bytes, when the kernel reports it.
    pub direct_io_alignment_bytes: Option<u32>,
    /// The file was created by iopath (and so may be written without a flag).
    pub created_by_iopath: bool,
    /// The target refuses writes (a read-only export or device).
    #[serde(default)]
    pub read_only: bool,
    /// A file protocol's largest single read and write (NFS `rsize` / `wsize` from FSINFO);
    /// `None` for other targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_sizes: Option<TransferSizes>,
    /// How a file protocol's session was set up, in words (`SMB 3.1.1, signed
    /// (AES-128-CMAC)`; NFSv4.1: `slots 64`, the fore channel slots the server grants a
    /// session); `None` for other targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_session: Option<String>,
    /// For a file iopath created for this run: what it held when the first test started
    /// (filled with data, or only sized); `None` for every other target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_content: Option<CreatedContent>,
    /// For a regular file: the bytes its filesystem had allocated to it when the run looked
    /// at it before its first test (`statx`'s blocks). Held in memory only, never saved: the
    /// analysis of a run that changed no file reuses it instead of looking at every file
    /// again ([`crate::analysis::analyse_on`]); a saved result read back has none.
    #[serde(skip)]
    pub allocated_bytes_looked: Option<u64>,
}

/// Targets are equal when everything a saved target says is equal: the allocation looked at
/// before the run (held in memory only) is not compared, so a result read back equals the
/// one saved.
impl PartialEq for TargetInfo {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
            && self.size_bytes == other.size_bytes
            && self.same_but_path_and_size(other)
    }
}

impl TargetInfo {
    /// Whether `self` and `other` agree in everything a saved target says but their path and
    /// size (the files of one job on one filesystem, saved as one group).
    pub fn same_but_path_and_size(&self, other: &TargetInfo) -> bool {
        // Every field named, so that a field added to targets is compared here too.
        let TargetInfo {
            path: _,
            kind,
            size_bytes: _,
            logical_block_size_bytes,
            physical_block_size_bytes,
            rotational,
            filesystem,
            device,
            direct_io_alignment_bytes,
            created_by_iopath,
            read_only,
            transfer_sizes,
            file_session,
            created_content,
            // Never saved: not part of what a saved target says.
            allocated_bytes_looked: _,
        } = self;
        *kind == other.kind
            && *logical_block_size_bytes == other.logical_block_size_bytes
            && *physical_block_size_bytes == other.physical_block_size_bytes
            && *rotational == other.rotational
            && *filesystem == other.filesystem
            && *device == other.device
            && *direct_io_alignment_bytes == other.direct_io_alignment_bytes
            && *created_by_iopath == other.created_by_iopath
            && *read_only == other.read_only
            && *transfer_sizes == other.transfer_sizes
            && *file_session == other.file_session
            && *created_content == other.created_content
    }
}

/// A file protocol's largest single read and write, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferSizes {
    /// Largest READ (NFS `rtmax`, the `rsize` a mount would use).
    pub read_bytes: u32,
    /// Largest WRITE (NFS `wtmax`, the `wsize`).
    pub write_bytes: u32,
}

impl TargetInfo {
    /// A target known only by its path, kind and size, nothing about it looked at (a URL
    /// described without connecting, a test file the null engine left uncreated): 512-byte
    /// blocks, everything else unknown or false.
    ///
    /// ```
    /// use iopath::result::{TargetInfo, TargetKind};
    /// let info = TargetInfo::unexamined("nbd://array/lun0".into(), TargetKind::Nbd, 0);
    /// assert_eq!(info.logical_block_size_bytes, 512);
    /// assert_eq!(info.device, None);
    /// ```
    pub fn unexamined(path: String, kind: TargetKind, size_bytes: u64) -> TargetInfo {
        TargetInfo {
            path,
            kind,
            size_bytes,
            logical_block_size_bytes: 512,
            physical_block_size_bytes: 512,
            rotational: None,
            filesystem: None,
            device: None,
            direct_io_alignment_bytes: None,
            created_by_iopath: false,
            read_only: false,
            transfer_sizes: None,
            file_session: None,
            created_content: None,
            allocated_bytes_looked: None,
        }
    }
}
