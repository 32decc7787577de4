//! Safety rules applied before any write, on the target's open descriptor.

use super::open::TargetHandle;
use super::{TargetError, signature};
use crate::discovery::mounts;
use crate::discovery::sysfs::{self, DeviceNumber};
use crate::result::{TargetInfo, TargetKind};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// What the user allowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WritePolicy {
    /// `--allow-destructive`: writes to block devices and files iopath did not create.
    pub allow_destructive: bool,
    /// `--force-overwrite-signature`: also when a filesystem or partition table is found.
    pub force_overwrite_signature: bool,
}

/// Refuses a write to the local `target` that `policy` does not allow.
///
/// - A regular file iopath created may always be written; any other file needs
///   `--allow-destructive`.
/// - A block device needs `--allow-destructive`; it is refused whatever the flags while it or
///   one of its partitions is mounted, used as swap, held by a device stacked on it
///   (device-mapper, LVM, md RAID) or claimed by anything else; and it is refused unless
///   `--force-overwrite-signature` is given too when it carries a filesystem, partition table
///   or volume signature, or has partitions.
///
/// Everything is decided about the file or device open in `target` (the device number from
/// its `fstat`, the signature read through its descriptor), never about whatever the path
/// leads to now. The device is examined afresh (mount table, sysfs, its first bytes), not only
/// through what inspection found, so a check made just before the run sees the state the run
/// will meet.
pub fn check_write_allowed(target: &TargetHandle, policy: WritePolicy) -> Result<(), TargetError> {
    let info = target.info();
    match info.kind {
        TargetKind::BlockDevice => {
            check_not_read_only(info)?;
            check_block_device(target, policy)
        }
        _ => check_volume_write_allowed(info, policy),
    }
}

/// Refuses a write that `policy` does not allow to a target known only by what was found
/// about it: a network volume (or a regular file). A block device is refused here: its rules
/// need the open device ([`check_write_allowed`]).
pub fn check_volume_write_allowed(
    info: &TargetInfo,
    policy: WritePolicy,
) -> Result<(), TargetError> {
    let path = Path::new(&info.path);
    check_not_read_only(info)?;
    match info.kind {
        TargetKind::File | TargetKind::Nfs | TargetKind::Smb => {
            if info.created_by_iopath || policy.allow_destructive {
                Ok(())
            } else {
                let place = if matches!(info.kind, TargetKind::Nfs | TargetKind::Smb) {
                    " on the server"
                } else {
                    ""
                };
                Err(refused(
                    path,
                    format!(
                        "the file exists{place} and was not created by iopath; pass \
                         --allow-destructive to overwrite its contents"
                    ),
                ))
            }
        }
        TargetKind::BlockDevice => Err(refused(
            path,
            "a block device is checked through its open descriptor".to_string(),
        )),
        TargetKind::Nbd | TargetKind::Iscsi => check_network_volume(path, info, policy),
    }
}

/// Refuses any write to a target that refuses writes.
fn check_not_read_only(info: &TargetInfo) -> Result<(), TargetError> {
    if info.read_only {
        return Err(refused(
            Path::new(&info.path),
            "the target is read-only (the server or device refuses writes)".to_string(),
        ));
    }
    Ok(())
}

/// A network volume holds someone's data: writing needs `--allow-destructive`, and a signature
/// found in its first blocks (read when it was inspected) needs `--force-overwrite-signature`.
fn check_network_volume(
    path: &Path,
    info: &TargetInfo,
    policy: WritePolicy,
) -> Result<(), TargetError> {
    if !policy.allow_destructive {
        return Err(refused(
            path,
            "writing to a network volume destroys its data; pass --allow-destructive to allow it"
                .to_string(),
        ));
    }
    match &info.filesystem {
        Some(signature) if !policy.force_overwrite_signature => Err(refused(
            path,
            format!(
                "it holds a {signature} signature; pass --force-overwrite-signature too to overwrite it"
            ),
        )),
        _ => Ok(()),
    }
}

/// A [`TargetError::WriteRefused`] for `path`.
fn refused(path: &Path, reason: String) -> TargetError {
    TargetError::WriteRefused {
        path: path.to_path_buf(),
        reason,
    }
}

/// The rules for a block device, in order: the flag, use by the kernel, signatures.
fn check_block_device(target: &TargetHandle, policy: WritePolicy) -> Result<(), TargetError> {
    let path = target.path();
    let info = target.info();
    if !policy.allow_destructive {
        return Err(refused(
            path,
            "it is a block device and the test would destroy its contents; pass \
             --allow-destructive to allow it"
                .to_string(),
        ));
    }
    let device = DeviceFamily::of(target)?;
    if let Some(use_by_kernel) = device.in_use()? {
        return Err(refused(
            path,
            format!(
                "{use_by_kernel}; release it first (--force-overwrite-signature does not \
                 override this)"
            ),
        ));
    }
    if policy.force_overwrite_signature {
        return Ok(());
    }
    // A fresh look at the first bytes, and what inspection saw, whichever finds something.
    let signature = target
        .file()
        .and_then(|file| signature::read_signature(file).ok().flatten())
        .map(str::to_string)
        .or_else(|| info.filesystem.clone());
    if let Some(signature) = signature {
        return Err(refused(
            path,
            format!(
                "signature found: {signature} (a filesystem, partition table or volume); pass \
                 --force-overwrite-signature as well to destroy it"
            ),
        ));
    }
    if !device.partitions.is_empty() {
        let names: Vec<&str> = device
            .partitions
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        return Err(refused(
            path,
            format!(
                "it has partitions ({}); pass --force-overwrite-signature as well to destroy them",
                names.join(", ")
            ),
        ));
    }
    Ok(())
}

/// A block device with its partitions and everything stacked on them.
#[derive(Debug)]
struct DeviceFamily<'a> {
    /// The open device.
    target: &'a TargetHandle,
    /// Kernel name (`loop0`) when sysfs knows it.
    name: Option<String>,
    /// The device's own number.
    number: DeviceNumber,
    /// Partitions: name and number.
    partitions: Vec<(String, DeviceNumber)>,
    /// Devices stacked on the device or its partitions, transitively: name and number.
    holders: Vec<(String, DeviceNumber)>,
}

impl<'a> DeviceFamily<'a> {
    /// Collects the family of the block device open in `target`.
    fn of(target: &'a TargetHandle) -> Result<Self, TargetError> {
        let Some(number) = target.identity().block_device else {
            return Err(TargetError::Unusable {
                path: target.path().to_path_buf(),
                reason: "is not a block device".to_string(),
            });
        };
        let name = sysfs::device_name(number);
        let mut family = DeviceFamily {
            target,
            name: name.clone(),
            number,
            partitions: Vec::new(),
            holders: Vec::new(),
        };
        let Some(name) = name else {
            return Ok(family);
        };
        family.partitions = sysfs::partitions(&name)
            .into_iter()
            .filter_map(|partition| {
                let number = sysfs::device_number(&partition)?;
                Some((partition, number))
            })
            .collect();
        let mut pending: Vec<String> = std::iter::once(name)
            .chain(
                family
                    .partitions
                    .iter()
                    .map(|(partition, _)| partition.clone()),
            )
            .collect();
        while let Some(lower) = pending.pop() {
            for holder in sysfs::holders(&lower) {
                if family.holders.iter().any(|(known, _)| *known == holder) {
                    continue;
                }
                if let Some(number) = sysfs::device_number(&holder) {
                    family.holders.push((holder.clone(), number));
                }
                pending.push(holder);
            }
        }
        Ok(family)
    }

    /// The member of the family numbered `number`, described for a message.
    fn describe(&self, number: DeviceNumber) -> Option<String> {
        let own_name = || {
            self.name
                .clone()
                .unwrap_or_else(|| self.target.path().display().to_string())
        };
        if number == self.number {
            return Some(format!("the device ({})", own_name()));
        }
        if let Some((name, _)) = self.partitions.iter().find(|(_, n)| *n == number) {
            return Some(format!("its partition {name}"));
        }
        if let Some((name, _)) = self.holders.iter().find(|(_, n)| *n == number) {
            return Some(format!("{name}, stacked on {}", own_name()));
        }
        None
    }

    /// The family member a path (a mount source, a swap area) refers to, if any.
    fn member_at(&self, source: &Path) -> Option<String> {
        let metadata = std::fs::metadata(source).ok()?;
        if !metadata.file_type().is_block_device() {
            return None;
        }
        self.describe(DeviceNumber::from_dev_t(metadata.rdev()))
    }

    /// Why the kernel is using the device, if it is: a mount, swap, a stacked device, or an
    /// exclusive claim by someone else.
    fn in_use(&self) -> Result<Option<String>, TargetError> {
        let mounts = mounts::read_mounts().map_err(|source| TargetError::Io {
            path: self.target.path().to_path_buf(),
            operation: mounts::READ_MOUNTINFO,
            source,
        })?;
        for mount in &mounts {
            let member = self.describe(mount.device).or_else(|| {
                // Btrfs and others mount on an anonymous number: follow the source device.
                mount
                    .source
                    .starts_with('/')
                    .then(|| self.member_at(Path::new(&mount.source)))
                    .flatten()
            });
            if let Some(member) = member {
                return Ok(Some(format!(
                    "{member} is mounted on {}",
                    mount.mount_point.display()
                )));
            }
        }
        for swap in mounts::active_swaps() {
            if let Some(member) = self.member_at(&swap) {
                return Ok(Some(format!("{member} is in use as swap")));
            }
        }
        if let Some((holder, _)) = self.holders.first() {
            return Ok(Some(format!(
                "{holder} (device-mapper, LVM or RAID) is stacked on it"
            )));
        }
        // Last, ask the kernel: an exclusive open fails with EBUSY while anything has claimed
        // the device (a mount in another namespace, md, a running program using O_EXCL).
        match self.target.check_not_claimed_by_others() {
            Err(TargetError::WriteRefused { reason, .. }) => Ok(Some(reason)),
            Err(other) => Err(other),
            Ok(()) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::devices::{LoopDevice, tool};
    use crate::targets::TargetHandle;
    use crate::targets::test_file::create_test_file;
    use crate::targets::test_support::{Mounted, registry_test_lock, sfdisk};
    use std::path::PathBuf;

    const NONE: WritePolicy = WritePolicy {
        allow_destructive: false,
        force_overwrite_signature: false,
    };
    const DESTRUCTIVE: WritePolicy = WritePolicy {
        allow_destructive: true,
        force_overwrite_signature: false,
    };
    const FORCE: WritePolicy = WritePolicy {
        allow_destructive: true,
        force_overwrite_signature: true,
    };

    /// The refusal message, panicking when the write was allowed or failed otherwise.
    fn refusal(target: &TargetHandle, policy: WritePolicy) -> String {
        match check_write_allowed(target, policy) {
            Err(error @ TargetError::WriteRefused { .. }) => error.to_string(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn files_iopath_did_not_create_need_the_flag() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("theirs");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let target = TargetHandle::open(&path).unwrap();
        let message = refusal(&target, NONE);
        assert!(message.contains("not created by iopath"), "{message}");
        assert!(message.contains("--allow-destructive"), "{message}");
        assert!(message.contains("theirs"), "{message}");
        check_write_allowed(&target, DESTRUCTIVE).unwrap();
    }

    #[test]
    fn files_iopath_created_need_no_flag() {
        let _serial = registry_test_lock();
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("ours");
        create_test_file(&path, 1 << 20, 1).unwrap();
        let target = TargetHandle::open(&path).unwrap();
        if target.info().created_by_iopath {
            check_write_allowed(&target, NONE).unwrap();
        } else {
            eprintln!("note: no user xattrs on this filesystem; using the field directly");
            let mut info = target.info().clone();
            info.created_by_iopath = true;
            check_volume_write_allowed(&info, NONE).unwrap();
        }
    }

    #[test]
    fn loop_device_rules() {
        let Some(loop_device) = LoopDevice::attach_zeroed(64) else {
            return;
        };
        let target = TargetHandle::open(loop_device.path()).unwrap();
        let message = refusal(&target, NONE);
        assert!(message.contains("--allow-destructive"), "{message}");
        assert!(
            message.contains(&*loop_device.path().to_string_lossy()),
            "{message}"
        );
        check_write_allowed(&target, DESTRUCTIVE).unwrap();
        check_write_allowed(&target, FORCE).unwrap();

        if crate::targets::test_support::format_ext4(&loop_device).is_none() {
            return;
        }
        // The check looks afresh, even through a descriptor opened before mkfs.
        let message = refusal(&target, DESTRUCTIVE);
        assert!(message.contains("ext4"), "{message}");
        assert!(message.contains("--force-overwrite-signature"), "{message}");
        let target = TargetHandle::open(loop_device.path()).unwrap();
        refusal(&target, DESTRUCTIVE);
        check_write_allowed(&target, FORCE).unwrap();

        let mounted = Mounted::new(loop_device.path());
        for policy in [DESTRUCTIVE, FORCE] {
            let message = refusal(&target, policy);
            assert!(message.contains("mounted on"), "{message}");
            assert!(
                message.contains(&*mounted.path().to_string_lossy()),
                "{message}"
            );
        }
        drop(mounted);
        check_write_allowed(&target, FORCE).unwrap();
    }

    #[test]
    fn a_mounted_partition_protects_the_whole_disk() {
        crate::support::skip_unless!(
            tool("sfdisk").is_some() && tool("mkfs.ext4").is_some(),
            "sfdisk or mkfs.ext4 is not installed (apt-get install fdisk e2fsprogs)"
        );
        let Some(loop_device) =
            LoopDevice::attach_with(64, |image| sfdisk(image, "label: dos\n,,L\n"), true)
        else {
            return;
        };
        let partition = PathBuf::from(format!("{}p1", loop_device.path().display()));
        if !partition.exists() && tool("partx").is_some() {
            // Kernels built without the DOS partition parser: add the partition by hand.
            loop_device.run("partx", &["--add"]);
        }
        crate::support::skip_unless!(
            partition.exists(),
            "the kernel made no partition device for the loop device"
        );
        crate::support::devices::run(
            "mkfs.ext4",
            &["-q".as_ref(), "-F".as_ref(), partition.as_os_str()],
        );
        let target = TargetHandle::open(loop_device.path()).unwrap();
        assert_eq!(
            target.info().filesystem.as_deref(),
            Some(crate::targets::signature::MBR_OR_BOOT_SECTOR)
        );
        let message = refusal(&target, DESTRUCTIVE);
        assert!(message.contains("mbr/boot-sector"), "{message}");
        check_write_allowed(&target, FORCE).unwrap();

        let partition_target = TargetHandle::open(&partition).unwrap();
        let partition_info = partition_target.info();
        assert_eq!(partition_info.filesystem.as_deref(), Some("ext4"));
        assert_eq!(
            partition_info.device.as_deref(),
            Some(format!("{}p1", loop_device.name()).as_str())
        );

        let mounted = Mounted::new(&partition);
        let message = refusal(&target, FORCE);
        assert!(
            message.contains(&format!("partition {}p1", loop_device.name())),
            "{message}"
        );
        assert!(
            message.contains(&*mounted.path().to_string_lossy()),
            "{message}"
        );
        let message = refusal(&partition_target, FORCE);
        assert!(message.contains("mounted on"), "{message}");
    }

    /// Swap turned on for a device; turned off on drop.
    struct SwapOn(PathBuf);

    impl Drop for SwapOn {
        fn drop(&mut self) {
            if let Some(swapoff) = tool("swapoff") {
                let _ = std::process::Command::new(swapoff).arg(&self.0).status();
            }
        }
    }

    #[test]
    fn a_device_in_use_as_swap_is_refused() {
        let (Some(_), Some(swapon)) = (tool("mkswap"), tool("swapon")) else {
            crate::support::skip("mkswap or swapon is not installed (apt-get install util-linux)");
            return;
        };
        let Some(loop_device) = LoopDevice::attach_zeroed(16) else {
            return;
        };
        loop_device.run("mkswap", &[]);
        let status = std::process::Command::new(swapon)
            .arg(loop_device.path())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        crate::support::skip_unless!(status.success(), "swapon is not permitted here");
        let _swap = SwapOn(loop_device.path().to_path_buf());
        let target = TargetHandle::open(loop_device.path()).unwrap();
        assert_eq!(target.info().filesystem.as_deref(), Some("swap"));
        let message = refusal(&target, FORCE);
        assert!(message.contains("swap"), "{message}");
        assert!(message.contains("does not override"), "{message}");
    }

    #[test]
    fn an_exclusively_opened_device_is_busy() {
        let Some(loop_device) = LoopDevice::attach_zeroed(16) else {
            return;
        };
        let target = TargetHandle::open(loop_device.path()).unwrap();
        let other = TargetHandle::open(loop_device.path()).unwrap();
        other.claim_exclusive().unwrap();
        let message = refusal(&target, FORCE);
        assert!(message.contains("busy"), "{message}");
        // The holder of the claim may write; nobody else can claim it meanwhile.
        check_write_allowed(&other, FORCE).unwrap();
        other.claim_exclusive().unwrap();
        drop(other);
        check_write_allowed(&target, FORCE).unwrap();
    }

    #[test]
    fn a_path_swapped_after_opening_does_not_change_what_is_checked() {
        let Some(loop_device) = LoopDevice::attach_zeroed(16) else {
            return;
        };
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("theirs");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let target = TargetHandle::open(&path).unwrap();
        let swap = directory.path().join("swap");
        std::os::unix::fs::symlink(loop_device.path(), &swap).unwrap();
        std::fs::rename(&swap, &path).unwrap();
        // Still the file's rules (a device would need the flag, and then be written).
        assert!(refusal(&target, NONE).contains("not created by iopath"));
        check_write_allowed(&target, DESTRUCTIVE).unwrap();
        assert_eq!(target.info().kind, TargetKind::File);
    }
}
