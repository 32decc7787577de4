//! The identity of a prepared target, as a verify state records it
//! ([`crate::verify::target_identity`]): a local file by its device and inode, a block device
//! by its device number, a file on an NFS export by the handle the probe found, anything else
//! by its path or URL (never a password: URLs carrying one are refused when parsed).

use super::test_runner::{PreparedTarget, TargetAccess};
use crate::verify::target_identity::{ObjectId, TargetIdentity};

/// What tells `target` from any other target of its size.
pub fn identity_of(target: &PreparedTarget) -> TargetIdentity {
    let object = match &target.access {
        TargetAccess::Local(handle) => {
            let identity = handle.identity();
            let dev_t = |number: crate::discovery::sysfs::DeviceNumber| {
                libc::makedev(number.major, number.minor)
            };
            match identity.block_device {
                Some(device) => ObjectId::BlockDevice {
                    device: dev_t(device),
                },
                None => ObjectId::File {
                    filesystem: dev_t(identity.filesystem),
                    inode: identity.inode,
                },
            }
        }
        TargetAccess::Network(_) => {
            match target.probed.as_ref().and_then(|p| p.file_handle.clone()) {
                Some(handle) => ObjectId::ServerHandle(handle),
                None => ObjectId::Name,
            }
        }
        TargetAccess::Nothing => ObjectId::Name,
    };
    TargetIdentity {
        name: target.path.display().to_string(),
        size_bytes: target.info.size_bytes,
        object,
    }
}
