//! What a target is: kind, size, block sizes, rotational, filesystem — found through the
//! target's open descriptor (see [`super::open::TargetHandle`]).

use super::filesystem_cache::{FilesystemCache, SharedFilesystemFacts};
use super::test_file::is_marked_as_created;
use super::{TargetError, signature, sys};
use crate::discovery::mounts;
use crate::discovery::sysfs::{self, DeviceNumber};
use crate::gate::kind_name;
use crate::result::{TargetInfo, TargetKind};
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Accepts a regular file or a block device; anything else is [`TargetError::Unusable`].
pub(super) fn check_kind(path: &Path, metadata: &Metadata) -> Result<(), TargetError> {
    let file_type = metadata.file_type();
    if file_type.is_file() || file_type.is_block_device() {
        Ok(())
    } else {
        Err(TargetError::Unusable {
            path: path.to_path_buf(),
            reason: unusable_kind(metadata),
        })
    }
}

/// Inspects the target open as `file` (`metadata` from its `fstat`), which `path` named; the
/// facts of a file's filesystem come from `cache` when another file on it was inspected.
pub(super) fn inspect_open(
    path: &Path,
    file: &File,
    metadata: &Metadata,
    cache: &FilesystemCache,
) -> Result<TargetInfo, TargetError> {
    if metadata.file_type().is_block_device() {
        inspect_block_device(path, file, metadata)
    } else {
        Ok(inspect_file(path, file, metadata, cache))
    }
}

/// Why a path that is neither a regular file nor a block device cannot be a target.
fn unusable_kind(metadata: &Metadata) -> String {
    let kind = kind_name(metadata);
    if metadata.is_dir() {
        format!("is {kind}; give a file inside it or a block device")
    } else {
        format!("is {kind}; only regular files and block devices can be targets")
    }
}

/// Maps an error from stat/open while inspecting to a [`TargetError`] naming `path`.
pub(super) fn stat_error(path: &Path, error: io::Error) -> TargetError {
    match error.kind() {
        io::ErrorKind::NotFound => TargetError::Missing {
            path: path.to_path_buf(),
        },
        io::ErrorKind::PermissionDenied => TargetError::Unusable {
            path: path.to_path_buf(),
            reason: format!("permission denied ({error})"),
        },
        _ => TargetError::Io {
            path: path.to_path_buf(),
            operation: "inspect",
            source: error,
        },
    }
}

/// Describes a regular file: the file's own size, the filesystem and device underneath (those
/// looked up once per filesystem through `cache`).
fn inspect_file(
    path: &Path,
    file: &File,
    metadata: &Metadata,
    cache: &FilesystemCache,
) -> TargetInfo {
    let filesystem_device = DeviceNumber::from_dev_t(metadata.dev());
    let shared = cache.get_or_look_up(filesystem_device, || {
        let device = block_device_of_filesystem(filesystem_device);
        SharedFilesystemFacts {
            queue: device
                .as_deref()
                .map(sysfs::queue_facts)
                .unwrap_or_default(),
            device,
            filesystem: filesystem_name(file, filesystem_device),
        }
    });
    let own = OwnFileFacts {
        size_bytes: metadata.len(),
        preferred_io_bytes: u32::try_from(metadata.blksize()).unwrap_or(0),
        direct_io_alignment: sys::direct_io_alignment(file),
        created_by_iopath: is_marked_as_created(file),
        allocated_bytes: metadata.is_file().then(|| metadata.blocks() * 512),
    };
    file_info(path, own, shared)
}

/// What a regular file has of its own, however it was found (through its descriptor, or one
/// `statx` of its path and its extended attribute).
#[derive(Clone, Copy, Debug)]
pub(super) struct OwnFileFacts {
    /// Its size, bytes.
    pub size_bytes: u64,
    /// `st_blksize`: the filesystem's preferred I/O size, bytes.
    pub preferred_io_bytes: u32,
    /// The alignment O_DIRECT needs on it (`STATX_DIOALIGN`), where reported.
    pub direct_io_alignment: Option<u32>,
    /// It carries iopath's ownership mark.
    pub created_by_iopath: bool,
    /// Bytes its filesystem had allocated to it (`st_blocks` × 512).
    pub allocated_bytes: Option<u64>,
}

/// The description of the regular file at `path` from its own facts and those of its
/// filesystem.
pub(super) fn file_info(
    path: &Path,
    own: OwnFileFacts,
    shared: SharedFilesystemFacts,
) -> TargetInfo {
    let SharedFilesystemFacts {
        device,
        queue: facts,
        filesystem,
    } = shared;
    let direct_io_alignment = own.direct_io_alignment;
    // Without a block device (tmpfs, NFS, FUSE) there are no queue limits: the smallest
    // sector and the filesystem's preferred I/O size stand in.
    let logical_block_size = facts
        .logical_block_size
        .or(direct_io_alignment)
        .unwrap_or(512);
    let physical_block_size = facts.physical_block_size.unwrap_or_else(|| {
        let preferred = own.preferred_io_bytes;
        if preferred.is_power_of_two() && (512..=65536).contains(&preferred) {
            preferred.max(logical_block_size)
        } else {
            4096u32.max(logical_block_size)
        }
    });
    TargetInfo {
        path: path.to_string_lossy().into_owned(),
        kind: TargetKind::File,
        size_bytes: own.size_bytes,
        logical_block_size_bytes: logical_block_size,
        physical_block_size_bytes: physical_block_size,
        rotational: facts.rotational,
        filesystem,
        device,
        direct_io_alignment_bytes: direct_io_alignment,
        created_by_iopath: own.created_by_iopath,
        transfer_sizes: None,
        file_session: None,
        created_content: None,
        allocated_bytes_looked: own.allocated_bytes,
        read_only: false,
    }
}

/// Describes a block device: size and block sizes from ioctls, rotational from sysfs, and the
/// signature found at its start.
fn inspect_block_device(
    path: &Path,
    file: &File,
    metadata: &Metadata,
) -> Result<TargetInfo, TargetError> {
    let ioctl_error = |operation: &'static str| {
        move |source: io::Error| TargetError::Io {
            path: path.to_path_buf(),
            operation,
            source,
        }
    };
    let size_bytes = sys::block_device_size(file).map_err(ioctl_error("BLKGETSIZE64"))?;
    let logical_block_size = sys::logical_block_size(file).map_err(ioctl_error("BLKSSZGET"))?;
    let physical_block_size = sys::physical_block_size(file).map_err(ioctl_error("BLKPBSZGET"))?;
    let signature = signature::read_signature(file).map_err(|source| TargetError::Io {
        path: path.to_path_buf(),
        operation: "read the start of the device",
        source,
    })?;
    let device = sysfs::device_name(DeviceNumber::from_dev_t(metadata.rdev())).or_else(|| {
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
    });
    let rotational = device
        .as_deref()
        .and_then(|name| sysfs::queue_facts(name).rotational);
    // Block devices accept O_DIRECT at logical-block alignment even on kernels whose statx does
    // not report it (STATX_DIOALIGN for block devices arrived in Linux 6.11).
    let direct_io_alignment = sys::direct_io_alignment(file).or(Some(logical_block_size));
    Ok(TargetInfo {
        path: path.to_string_lossy().into_owned(),
        kind: TargetKind::BlockDevice,
        size_bytes,
        logical_block_size_bytes: logical_block_size,
        physical_block_size_bytes: physical_block_size,
        rotational,
        filesystem: signature.map(str::to_string),
        read_only: device.as_deref().is_some_and(sysfs::is_read_only),
        device,
        direct_io_alignment_bytes: direct_io_alignment,
        created_by_iopath: false,
        transfer_sizes: None,
        file_session: None,
        created_content: None,
        allocated_bytes_looked: None,
    })
}

/// The block device holding the filesystem whose files have `st_dev` = `number`. Filesystems on
/// anonymous device numbers (btrfs, for one) are traced through the mount's source device.
fn block_device_of_filesystem(number: DeviceNumber) -> Option<String> {
    if !number.is_anonymous() {
        return sysfs::device_name(number);
    }
    let mounts = mounts::read_mounts().ok()?;
    mounts
        .iter()
        .filter(|mount| mount.device == number && mount.source.starts_with('/'))
        .find_map(|mount| {
            let metadata = std::fs::metadata(&mount.source).ok()?;
            if !metadata.file_type().is_block_device() {
                return None;
            }
            sysfs::device_name(DeviceNumber::from_dev_t(metadata.rdev()))
        })
}

/// Filesystem magic numbers (`statfs` `f_type`) and the names people know them by.
const FILESYSTEM_MAGICS: &[(u32, &str)] = &[
    (0x0000_EF53, "ext4"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0x0102_1994, "tmpfs"),
    (0x8584_58F6, "ramfs"),
    (0x9584_58F6, "hugetlbfs"),
    (0x794C_7630, "overlay"),
    (0x0000_6969, "nfs"),
    (0x6573_5546, "fuse"),
    (0x2FC1_2FC1, "zfs"),
    (0xF2F5_2010, "f2fs"),
    (0xCA45_1A4E, "bcachefs"),
    (0x0000_4D44, "vfat"),
    (0x2011_BAB0, "exfat"),
    (0x5346_544E, "ntfs"),
    (0xFF53_4D42, "cifs"),
    (0xFE53_4D42, "smb3"),
    (0x0000_9660, "iso9660"),
    (0x7371_7368, "squashfs"),
    (0x00C3_6400, "ceph"),
    (0x0116_1970, "gfs2"),
    (0x7461_636F, "ocfs2"),
    (0x3153_464A, "jfs"),
    (0x0BD0_0BD0, "lustre"),
    (0x4750_4653, "gpfs"),
    (0x0102_1997, "9p"),
    (0x0000_3434, "nilfs2"),
    (0x1501_3346, "udf"),
    (0x0000_F15F, "ecryptfs"),
];

/// The name of the filesystem holding the open `file`: from the statfs magic number, refined
/// by the mount table where one magic covers several types (ext2/3/4, fuse.*); `0x…` when
/// unknown.
fn filesystem_name(file: &File, device: DeviceNumber) -> Option<String> {
    let magic = sys::filesystem_magic(file).ok()?;
    let Some(&(_, name)) = FILESYSTEM_MAGICS.iter().find(|(known, _)| *known == magic) else {
        return Some(format!("0x{magic:x}"));
    };
    let family = match name {
        "ext4" => "ext",
        "fuse" => "fuse",
        "nfs" => "nfs",
        _ => return Some(name.to_string()),
    };
    if let Ok(mounts) = mounts::read_mounts()
        && let Some(mount) = mounts.iter().rev().find(|mount| mount.device == device)
        && mount.filesystem.starts_with(family)
    {
        return Some(mount.filesystem.clone());
    }
    Some(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::TargetKind;
    use crate::support::devices::LoopDevice;
    use crate::targets::inspect;
    use std::fs;

    #[test]
    fn missing_paths_are_missing() {
        let directory = tempfile::tempdir().unwrap();
        let error = inspect(&directory.path().join("nope")).unwrap_err();
        assert!(matches!(error, TargetError::Missing { .. }), "{error}");
        assert!(error.to_string().contains("nope"));
    }

    #[test]
    fn directories_and_character_devices_are_unusable() {
        let directory = tempfile::tempdir().unwrap();
        let error = inspect(directory.path()).unwrap_err();
        assert!(matches!(error, TargetError::Unusable { .. }), "{error}");
        assert!(error.to_string().contains("is a directory"), "{error}");
        let error = inspect(Path::new("/dev/null")).unwrap_err();
        assert!(error.to_string().contains("character device"), "{error}");
    }

    #[test]
    fn a_file_on_the_work_filesystem() {
        // The build directory lives on the work filesystem.
        let build_directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        let directory = if build_directory.is_dir() {
            tempfile::tempdir_in(build_directory).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let path = directory.path().join("data");
        fs::write(&path, vec![1u8; 3 * 4096 + 5]).unwrap();
        let info = inspect(&path).unwrap();
        assert_eq!(info.kind, TargetKind::File);
        assert_eq!(info.size_bytes, 3 * 4096 + 5);
        assert_eq!(info.path, path.to_string_lossy());
        assert!(!info.created_by_iopath);
        assert!(info.logical_block_size_bytes >= 512);
        assert!(info.physical_block_size_bytes >= info.logical_block_size_bytes);
        let mount = mounts::read_mounts()
            .unwrap()
            .into_iter()
            .rev()
            .find(|mount| {
                mount.device == DeviceNumber::from_dev_t(fs::metadata(&path).unwrap().dev())
            })
            .expect("the file's filesystem is mounted");
        assert_eq!(info.filesystem.as_deref(), Some(mount.filesystem.as_str()));
        if mount.filesystem.starts_with("ext") {
            let device = info
                .device
                .as_deref()
                .expect("an ext filesystem has a device");
            assert!(Path::new("/sys/class/block").join(device).exists());
            assert!(info.rotational.is_some());
            assert!(info.direct_io_alignment_bytes.is_some_and(|a| a >= 512));
        }
    }

    #[test]
    fn a_file_on_tmpfs() {
        let shm = Path::new("/dev/shm");
        crate::support::skip_unless!(shm.is_dir(), "no /dev/shm (a tmpfs) here");
        let directory = tempfile::tempdir_in(shm).unwrap();
        let path = directory.path().join("data");
        fs::write(&path, vec![1u8; 10_000]).unwrap();
        let info = inspect(&path).unwrap();
        assert_eq!(info.kind, TargetKind::File);
        assert_eq!(info.size_bytes, 10_000);
        assert_eq!(info.filesystem.as_deref(), Some("tmpfs"));
        assert_eq!(info.device, None);
        assert_eq!(info.rotational, None);
        assert!(info.logical_block_size_bytes >= 512);
    }

    #[test]
    fn unknown_magic_numbers_print_in_hex() {
        assert!(
            FILESYSTEM_MAGICS
                .iter()
                .all(|(magic, _)| *magic != 0x1234_5678)
        );
        let names: Vec<&str> = FILESYSTEM_MAGICS.iter().map(|(_, name)| *name).collect();
        for expected in [
            "ext4", "xfs", "btrfs", "tmpfs", "overlay", "nfs", "fuse", "zfs",
        ] {
            assert!(names.contains(&expected), "{expected}");
        }
    }

    #[test]
    fn a_loop_device_is_a_block_device() {
        let Some(loop_device) = LoopDevice::attach_zeroed(64) else {
            return;
        };
        let info = inspect(loop_device.path()).unwrap();
        assert_eq!(info.kind, TargetKind::BlockDevice);
        assert_eq!(info.size_bytes, 64 << 20);
        assert_eq!(info.logical_block_size_bytes, 512);
        assert!(info.physical_block_size_bytes >= 512);
        assert_eq!(info.filesystem, None);
        assert_eq!(
            info.device.as_deref(),
            loop_device.path().file_name().and_then(|n| n.to_str())
        );
        assert!(info.rotational.is_some());
        assert!(info.direct_io_alignment_bytes.is_some());
        assert!(!info.created_by_iopath);

        if crate::targets::test_support::format_ext4(&loop_device).is_none() {
            return;
        }
        let info = inspect(loop_device.path()).unwrap();
        assert_eq!(info.filesystem.as_deref(), Some("ext4"));
    }

    #[test]
    fn a_block_device_is_described_from_sysfs_as_when_opened() {
        // discovery::target::unopened_block_device, checked here beside the loop devices.
        let Some(loop_device) = LoopDevice::attach_zeroed(48) else {
            return;
        };
        // The descriptor's ioctls are the independent account of what sysfs says.
        let opened = inspect(loop_device.path()).unwrap();
        let unopened = crate::discovery::target::unopened_block_device(loop_device.path()).unwrap();
        assert_eq!(unopened.kind, TargetKind::BlockDevice);
        assert_eq!(unopened.size_bytes, 48 << 20);
        for (what, from_sysfs, from_descriptor) in [
            ("size", unopened.size_bytes, opened.size_bytes),
            (
                "logical block",
                u64::from(unopened.logical_block_size_bytes),
                u64::from(opened.logical_block_size_bytes),
            ),
            (
                "physical block",
                u64::from(unopened.physical_block_size_bytes),
                u64::from(opened.physical_block_size_bytes),
            ),
        ] {
            assert_eq!(from_sysfs, from_descriptor, "{what}");
        }
        assert_eq!(unopened.device, opened.device);
        assert_eq!(unopened.rotational, opened.rotational);
        assert_eq!(unopened.read_only, opened.read_only);
        assert_eq!(unopened.filesystem, None);

        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("file");
        fs::write(&file, b"data").unwrap();
        let error = crate::discovery::target::unopened_block_device(&file).unwrap_err();
        assert!(error.ends_with("/file: not a block device"), "{error}");
        let missing = directory.path().join("nope");
        let error = crate::discovery::target::unopened_block_device(&missing).unwrap_err();
        assert!(
            error.contains("/nope: No such file or directory"),
            "{error}"
        );
    }
}
