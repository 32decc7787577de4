//! Which target a verify state describes: its name (a path or a URL, never a password), its
//! size, and what tells it from any other target of that size — the device and inode of a
//! local file, the device number of a block device, the server's file handle of a file on an
//! NFS export. A state is only ever checked against the target it was saved for.
//!
//! ```
//! use iopath::verify::target_identity::{ObjectId, TargetIdentity};
//! let saved = TargetIdentity {
//!     name: "a.bin".into(),
//!     size_bytes: 1 << 20,
//!     object: ObjectId::File { filesystem: 2049, inode: 12 },
//! };
//! // The same file under another name is the same target ...
//! let renamed = TargetIdentity { name: "./a.bin".into(), ..saved.clone() };
//! assert!(saved.same_target(&renamed));
//! // ... another file of the same size is not.
//! let other = TargetIdentity { object: ObjectId::File { filesystem: 2049, inode: 13 }, ..saved.clone() };
//! assert!(!saved.same_target(&other));
//! ```

/// What tells a target from another of the same size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectId {
    /// Nothing beyond the name (an NBD export, an iSCSI LUN, a file on an SMB share, a test
    /// file the null engine left uncreated): the name must match.
    Name,
    /// A local regular file: `st_dev` and `st_ino`.
    File {
        /// The filesystem holding it (`st_dev`).
        filesystem: u64,
        /// Its inode.
        inode: u64,
    },
    /// A block device: the device the node stands for (`st_rdev`), whatever node names it.
    BlockDevice {
        /// Its device number.
        device: u64,
    },
    /// A file on a file server: the server's handle for it (NFS), with the name.
    ServerHandle(Vec<u8>),
}

/// The target a verify state describes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetIdentity {
    /// The path or URL as given (URLs carry no password).
    pub name: String,
    /// Its size, bytes.
    pub size_bytes: u64,
    /// What tells it from another target of that size.
    pub object: ObjectId,
}

/// Longest name a state file may carry, bytes.
pub const MAX_NAME_BYTES: usize = 4096;
/// Longest server handle a state file may carry, bytes (an NFSv4 handle is at most 128).
pub const MAX_HANDLE_BYTES: usize = 1024;

impl TargetIdentity {
    /// Whether `self` (from a state) and `found` (the target now) are the same target: same
    /// size, and the same file or device (a local one by its inode or device number, whatever
    /// it is called now), or the same server handle under the same URL, or — where nothing
    /// else is known — the same name.
    pub fn same_target(&self, found: &TargetIdentity) -> bool {
        if self.size_bytes != found.size_bytes {
            return false;
        }
        match (&self.object, &found.object) {
            (ObjectId::File { .. }, ObjectId::File { .. })
            | (ObjectId::BlockDevice { .. }, ObjectId::BlockDevice { .. }) => {
                self.object == found.object
            }
            (ObjectId::ServerHandle(saved), ObjectId::ServerHandle(now)) => {
                saved == now && self.name == found.name
            }
            (ObjectId::Name, ObjectId::Name) => self.name == found.name,
            _ => false,
        }
    }

    /// The identity in words for messages: `data.bin (1048576 bytes, inode 12 on 8:1)`.
    pub fn describe(&self) -> String {
        let what = match &self.object {
            ObjectId::Name => String::new(),
            ObjectId::File { filesystem, inode } => {
                format!(
                    ", inode {inode} on {}:{}",
                    libc::major(*filesystem as libc::dev_t),
                    libc::minor(*filesystem as libc::dev_t)
                )
            }
            ObjectId::BlockDevice { device } => format!(
                ", block device {}:{}",
                libc::major(*device as libc::dev_t),
                libc::minor(*device as libc::dev_t)
            ),
            ObjectId::ServerHandle(handle) => {
                let hex: String = handle.iter().map(|byte| format!("{byte:02x}")).collect();
                format!(
                    ", server handle {}",
                    crate::text::shorten::shorten(&hex, 40)
                )
            }
        };
        format!(
            "{} ({} bytes{what})",
            crate::text::shown(&self.name),
            self.size_bytes
        )
    }

    /// Appends the identity's bytes: name length u32 and name, size u64, a kind byte (0 name,
    /// 1 file, 2 block device, 3 server handle) and the kind's fields (file: st_dev u64,
    /// inode u64; device: st_rdev u64; handle: length u32 and bytes).
    pub fn write_to(&self, bytes: &mut Vec<u8>) {
        let name = self.name.as_bytes();
        let name = &name[..name.len().min(MAX_NAME_BYTES)];
        bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
        bytes.extend_from_slice(name);
        bytes.extend_from_slice(&self.size_bytes.to_le_bytes());
        match &self.object {
            ObjectId::Name => bytes.push(0),
            ObjectId::File { filesystem, inode } => {
                bytes.push(1);
                bytes.extend_from_slice(&filesystem.to_le_bytes());
                bytes.extend_from_slice(&inode.to_le_bytes());
            }
            ObjectId::BlockDevice { device } => {
                bytes.push(2);
                bytes.extend_from_slice(&device.to_le_bytes());
            }
            ObjectId::ServerHandle(handle) => {
                let handle = &handle[..handle.len().min(MAX_HANDLE_BYTES)];
                bytes.push(3);
                bytes.extend_from_slice(&(handle.len() as u32).to_le_bytes());
                bytes.extend_from_slice(handle);
            }
        }
    }

    /// Reads one identity written by [`TargetIdentity::write_to`] from the front of `bytes`,
    /// returning it and the rest (`None`: truncated, too long or of an unknown kind).
    pub fn read_from(bytes: &[u8]) -> Option<(TargetIdentity, &[u8])> {
        let (length, rest) = split_u32(bytes)?;
        if length > MAX_NAME_BYTES {
            return None;
        }
        let (name, rest) = rest.split_at_checked(length)?;
        let name = String::from_utf8_lossy(name).into_owned();
        let (size_bytes, rest) = split_u64(rest)?;
        let (&kind, rest) = rest.split_first()?;
        let (object, rest) = match kind {
            0 => (ObjectId::Name, rest),
            1 => {
                let (filesystem, rest) = split_u64(rest)?;
                let (inode, rest) = split_u64(rest)?;
                (ObjectId::File { filesystem, inode }, rest)
            }
            2 => {
                let (device, rest) = split_u64(rest)?;
                (ObjectId::BlockDevice { device }, rest)
            }
            3 => {
                let (length, rest) = split_u32(rest)?;
                if length > MAX_HANDLE_BYTES {
                    return None;
                }
                let (handle, rest) = rest.split_at_checked(length)?;
                (ObjectId::ServerHandle(handle.to_vec()), rest)
            }
            _ => return None,
        };
        Some((
            TargetIdentity {
                name,
                size_bytes,
                object,
            },
            rest,
        ))
    }
}

fn split_u32(bytes: &[u8]) -> Option<(usize, &[u8])> {
    let (head, rest) = bytes.split_at_checked(4)?;
    Some((u32::from_le_bytes(head.try_into().ok()?) as usize, rest))
}

fn split_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = bytes.split_at_checked(8)?;
    Some((u64::from_le_bytes(head.try_into().ok()?), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identities() -> Vec<TargetIdentity> {
        let base = TargetIdentity {
            name: "nbd://127.0.0.1:10809/disk".into(),
            size_bytes: 1 << 20,
            object: ObjectId::Name,
        };
        vec![
            base.clone(),
            TargetIdentity {
                object: ObjectId::File {
                    filesystem: 0x801,
                    inode: 77,
                },
                ..base.clone()
            },
            TargetIdentity {
                object: ObjectId::BlockDevice { device: 0x700 },
                ..base.clone()
            },
            TargetIdentity {
                object: ObjectId::ServerHandle(vec![1, 2, 3, 250]),
                ..base
            },
        ]
    }

    #[test]
    fn every_kind_reads_back_as_written() {
        for identity in identities() {
            let mut bytes = Vec::new();
            identity.write_to(&mut bytes);
            bytes.push(9);
            let (read, rest) = TargetIdentity::read_from(&bytes).unwrap();
            assert_eq!(read, identity);
            assert_eq!(rest, [9]);
            for cut in 0..bytes.len() - 1 {
                assert!(TargetIdentity::read_from(&bytes[..cut]).is_none(), "{cut}");
            }
        }
    }

    #[test]
    fn kinds_differ_and_sizes_must_match() {
        let all = identities();
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a.same_target(b), i == j, "{i} {j}");
            }
        }
        let smaller = TargetIdentity {
            size_bytes: 4096,
            ..all[1].clone()
        };
        assert!(!all[1].same_target(&smaller));
        let other_server = TargetIdentity {
            name: "nfs://other:2049/export/file".into(),
            ..all[3].clone()
        };
        assert!(!all[3].same_target(&other_server));
    }

    #[test]
    fn descriptions_escape_and_shorten_the_name() {
        let identity = TargetIdentity {
            name: format!("\x1b[2J{}", "x".repeat(10_000)),
            size_bytes: 1,
            object: ObjectId::BlockDevice { device: 0x700 },
        };
        let words = identity.describe();
        assert!(!words.contains('\x1b'), "{words}");
        assert!(words.len() < 400, "{}", words.len());
        assert!(words.ends_with("(1 bytes, block device 7:0)"), "{words}");
    }
}
