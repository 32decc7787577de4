//! The identity of a prepared target, as a verify state records it
//! ([`crate::verify::target_identity`]): a local file by its device and inode, a block device
//! by its device number, a file on an NFS export by the handle the probe found, anything else
//! by its path or URL (never a password: URLs carrying one are refused when parsed).

use crate::discovery::sysfs::DeviceNumber;
use crate::targets::open::FileIdentity;
use crate::verify::target_identity::{ObjectId, TargetIdentity};

/// What a prepared target is known by.
pub enum KnownBy<'a> {
    /// A local file or block device, by what `fstat` of its checked descriptor gave.
    Local(FileIdentity),
    /// A network volume, by the server's file handle when the probe found one.
    Network(Option<&'a [u8]>),
    /// Nothing but its name (a test file left uncreated).
    Name,
}

/// The identity of the target named `name` (its path or URL as given), of `size_bytes`,
/// known by `known_by`.
pub fn identity_of(name: String, size_bytes: u64, known_by: KnownBy<'_>) -> TargetIdentity {
    let dev_t = |number: DeviceNumber| libc::makedev(number.major, number.minor);
    let object = match known_by {
        KnownBy::Local(FileIdentity {
            block_device: Some(device),
            ..
        }) => ObjectId::BlockDevice {
            device: dev_t(device),
        },
        KnownBy::Local(identity) => ObjectId::File {
            filesystem: dev_t(identity.filesystem),
            inode: identity.inode,
        },
        KnownBy::Network(Some(handle)) => ObjectId::ServerHandle(handle.to_vec()),
        KnownBy::Network(None) | KnownBy::Name => ObjectId::Name,
    };
    TargetIdentity {
        name,
        size_bytes,
        object,
    }
}
