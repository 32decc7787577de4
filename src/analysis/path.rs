//! Discovery of a target's storage path on Linux: file → page cache → filesystem → block
//! device → its stack (partition, device-mapper, md, loop and its backing file, recursively) →
//! the disk → its transport (NVMe, SATA, SAS, FC, virtio, iSCSI, USB, NBD) → the PCIe link of
//! its controller; for network storage the protocol, the interface that routes to the server,
//! its link and its PCIe link.
//!
//! Everything is read from sysfs, `/proc` and the routing table, starting from the
//! [`TargetInfo`]'s device name rather than from the file, which may be a temporary test file
//! already removed. Nothing here fails: what cannot be seen becomes a note that says how to
//! declare it (`--link`, `--path`).
//!
//! ```
//! use iopath::analysis::{HostFacts, path::discover};
//! use iopath::result::{TargetInfo, TargetKind};
//! let info = TargetInfo {
//!     path: "nbd://127.0.0.1:10809/disk".into(),
//!     kind: TargetKind::Nbd,
//!     size_bytes: 1 << 30,
//!     logical_block_size_bytes: 512,
//!     physical_block_size_bytes: 4096,
//!     rotational: None,
//!     filesystem: None,
//!     device: None,
//!     direct_io_alignment_bytes: Some(512),
//!     created_by_iopath: false,
//!     read_only: false,
//! };
//! let facts = HostFacts { memory_copy_bytes_per_second: Some(10_000_000_000), memory_available_bytes: None };
//! let path = discover(&info, &facts);
//! assert_eq!(path.hops[0].name, "NBD");
//! assert_eq!(path.hops[1].name, "lo");
//! ```

use super::HostFacts;
use crate::engine::network_target::{NbdTransport, NetworkTarget};
use crate::result::{
    Duplex, Hop, HopCapacity, HopKind, HopOrigin, StoragePath, TargetInfo, TargetKind,
};
use crate::targets::{TargetError, mounts, sysfs};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Key of the page cache above a target, which only buffered I/O passes. A page cache deeper
/// in a stack (under a buffered loop device) has this key followed by `:` and the device.
pub const PAGE_CACHE_KEY: &str = "page-cache";

/// Bytes read from the start of a volume to tell whether it was ever written.
pub const HEAD_CHECK_BYTES: usize = 64 * 1024;

/// Fraction of a target's reads and writes that pass a hop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Share {
    pub read: f64,
    pub write: f64,
}

impl Share {
    pub const WHOLE: Share = Share {
        read: 1.0,
        write: 1.0,
    };
}

/// Builds the hops of one path.
pub(super) struct Walker<'a> {
    pub hops: Vec<Hop>,
    pub notes: Vec<String>,
    pub facts: &'a HostFacts,
    visited: Vec<String>,
}

impl<'a> Walker<'a> {
    fn new(facts: &'a HostFacts) -> Self {
        Walker {
            hops: Vec::new(),
            notes: Vec::new(),
            facts,
            visited: Vec::new(),
        }
    }

    /// Adds a discovered hop.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        key: String,
        kind: HopKind,
        name: impl Into<String>,
        description: impl Into<String>,
        depth: u32,
        share: Share,
        capacity: Option<HopCapacity>,
    ) -> &mut Hop {
        self.hops.push(Hop {
            key,
            kind,
            name: name.into(),
            description: description.into(),
            depth,
            origin: HopOrigin::Discovered,
            capacity,
            queue: None,
            protocol: None,
            read_share: share.read,
            write_share: share.write,
        });
        self.hops.last_mut().expect("just pushed")
    }

    /// Adds a note once.
    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// Whether `key` was walked already (a stack that loops, or a device reached twice);
    /// marks it walked.
    pub fn first_visit(&mut self, key: &str) -> bool {
        if self.visited.iter().any(|seen| seen == key) {
            return false;
        }
        self.visited.push(key.to_string());
        true
    }

    /// The capacity of memory as a medium, when measured.
    pub fn memory_capacity(&self, what: &str) -> Option<HopCapacity> {
        self.facts
            .memory_copy_bytes_per_second
            .map(|bytes_per_second| HopCapacity {
                payload_bytes_per_second: bytes_per_second,
                iops: None,
                duplex: Duplex::Half,
                catalog_name: None,
                variant: None,
                derivation: format!(
                    "{what}: bounded by this host's memory copy bandwidth, {} measured by one thread",
                    crate::units::format_rate(bytes_per_second as f64)
                ),
            })
    }
}

/// Discovers the storage path of `info` on this host.
pub fn discover(info: &TargetInfo, facts: &HostFacts) -> StoragePath {
    let mut walker = Walker::new(facts);
    let mut path = StoragePath {
        target: info.path.clone(),
        ..StoragePath::default()
    };
    match info.kind {
        TargetKind::File => {
            file_hops(&mut walker, info);
            let file = Path::new(&info.path);
            if let Ok(metadata) = std::fs::metadata(file) {
                path.allocated_bytes = Some(metadata.blocks() * 512);
                path.first_blocks_all_zero = head_is_zero(file);
            }
        }
        TargetKind::BlockDevice => {
            page_cache_hop(&mut walker);
            match info.device.as_deref() {
                Some(device) => walker.block_device(device, 0, Share::WHOLE),
                None => walker.note(format!("{}: no block device name found", info.path)),
            }
            path.first_blocks_all_zero = head_is_zero(Path::new(&info.path));
        }
        TargetKind::Nbd | TargetKind::Iscsi => network_target_hops(&mut walker, info),
    }
    path.hops = walker.hops;
    path.notes = walker.notes;
    path
}

/// The storage protocol a target speaks on network hops (`nbd`, `iscsi`, `nvme-tcp`, `nfs`,
/// `smb`), from its kind and the protocol hop discovered on its path.
pub fn storage_protocol(info: &TargetInfo, path: &StoragePath) -> Option<String> {
    match info.kind {
        TargetKind::Nbd => return Some("nbd".into()),
        TargetKind::Iscsi => return Some("iscsi".into()),
        _ => {}
    }
    path.hops
        .iter()
        .filter(|hop| hop.origin == HopOrigin::Discovered)
        .find_map(|hop| hop.protocol.clone())
}

fn page_cache_hop(walker: &mut Walker) {
    let capacity = walker.memory_capacity("page cache");
    walker.push(
        PAGE_CACHE_KEY.into(),
        HopKind::PageCache,
        "page cache",
        "passed by buffered I/O only",
        0,
        Share::WHOLE,
        capacity,
    );
}

fn file_hops(walker: &mut Walker, info: &TargetInfo) {
    let file = Path::new(&info.path);
    let exists = file.exists();
    let mut description = crate::units::format_bytes(info.size_bytes);
    if info.created_by_iopath {
        description.push_str(", written by iopath");
    }
    if !exists {
        description.push_str(", removed after the run");
    }
    walker.push(
        format!("file:{}", info.path),
        HopKind::File,
        file.file_name().map_or(info.path.clone(), |name| {
            name.to_string_lossy().into_owned()
        }),
        description,
        0,
        Share::WHOLE,
        None,
    );
    page_cache_hop(walker);
    walker.filesystem(
        file,
        info.device.as_deref(),
        info.filesystem.as_deref(),
        0,
        Share::WHOLE,
    );
}

impl Walker<'_> {
    /// The filesystem holding `file` (found by `device` when given, else by the longest
    /// mount point above the file) and everything under it.
    pub fn filesystem(
        &mut self,
        file: &Path,
        device: Option<&str>,
        filesystem: Option<&str>,
        depth: u32,
        share: Share,
    ) {
        let mount = mount_of(file, device);
        let kind_name = filesystem
            .map(str::to_string)
            .or_else(|| mount.as_ref().map(|m| m.filesystem.clone()))
            .unwrap_or_else(|| "unknown filesystem".into());
        let mut description = String::new();
        if let Some(device) = device {
            description.push_str(&format!("on {device}"));
        }
        if let Some(mount) = &mount {
            if !description.is_empty() {
                description.push_str(", ");
            }
            description.push_str(&format!("mounted at {}", mount.mount_point.display()));
        }
        let key = match (device, &mount) {
            (Some(device), _) => format!("fs:{device}"),
            (None, Some(mount)) => format!("fs:{}", mount.mount_point.display()),
            (None, None) => format!("fs:{}", file.display()),
        };
        self.push(
            key,
            HopKind::Filesystem,
            kind_name.clone(),
            description,
            depth,
            share,
            None,
        );
        let family = kind_name.split('.').next().unwrap_or("").to_string();
        match family.as_str() {
            "tmpfs" | "ramfs" | "hugetlbfs" => {
                let capacity = self.memory_capacity(&kind_name);
                self.push(
                    "memory".into(),
                    HopKind::Memory,
                    "memory",
                    format!("{kind_name} keeps its data in RAM"),
                    depth,
                    share,
                    capacity,
                );
                return;
            }
            "nfs" | "nfs4" | "cifs" | "smb3" => {
                if let Some(mount) = &mount {
                    self.network_filesystem(&family, &mount.source, depth, share);
                }
                return;
            }
            _ => {}
        }
        match device {
            Some(device) => self.block_device(device, depth, share),
            None => self.note(format!(
                "{}: {kind_name} has no block device underneath that iopath can see; declare the hops below it with --path",
                file.display()
            )),
        }
    }

    fn network_filesystem(&mut self, family: &str, source: &str, depth: u32, share: Share) {
        let (protocol, host, port) = if family.starts_with("nfs") {
            let host = source
                .rsplit_once(":/")
                .map(|(host, _)| host)
                .unwrap_or(source);
            ("nfs", host.trim_matches(['[', ']']).to_string(), 2049)
        } else {
            let host = source
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or("")
                .to_string();
            ("smb", host, 445)
        };
        let name = if protocol == "nfs" { "NFS" } else { "SMB" };
        self.push(
            format!("protocol:{protocol}:{source}"),
            HopKind::Protocol,
            name,
            source.to_string(),
            depth,
            share,
            None,
        )
        .protocol = Some(protocol.into());
        if host.is_empty() {
            self.note(format!("{source}: no server name in the mount source"));
            return;
        }
        self.route(&host, port, Some(protocol), depth, share);
    }
}

/// The mount holding `file`: the one on `device` when known, else the longest mount point
/// that is a prefix of the file's (existing) directory.
fn mount_of(file: &Path, device: Option<&str>) -> Option<mounts::Mount> {
    let mounts = mounts::read_mounts().ok()?;
    let directory: PathBuf = file
        .ancestors()
        .find_map(|dir| std::fs::canonicalize(dir).ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let length = |m: &mounts::Mount| m.mount_point.as_os_str().len();
    if let Some(number) = device.and_then(sysfs::device_number) {
        let on_device: Vec<&mounts::Mount> = mounts.iter().filter(|m| m.device == number).collect();
        // The mount of that device that holds the file; else its shortest mount point (the
        // file's directory may be gone, and bind mounts repeat a device elsewhere).
        let holding = on_device
            .iter()
            .copied()
            .filter(|m| directory.starts_with(&m.mount_point))
            .max_by_key(|m| length(m));
        if let Some(mount) = holding.or_else(|| on_device.iter().copied().min_by_key(|m| length(m)))
        {
            return Some(mount.clone());
        }
    }
    mounts
        .iter()
        .filter(|m| directory.starts_with(&m.mount_point))
        .max_by_key(|m| length(m))
        .cloned()
}

fn network_target_hops(walker: &mut Walker, info: &TargetInfo) {
    let target = match NetworkTarget::parse(&info.path) {
        Ok(target) => target,
        Err(error) => {
            walker.note(error.to_string());
            return;
        }
    };
    let protocol = target.protocol();
    let name = match target {
        NetworkTarget::Nbd { .. } => "NBD",
        NetworkTarget::Iscsi { .. } => "iSCSI",
    };
    walker
        .push(
            format!("protocol:{target}"),
            HopKind::Protocol,
            name,
            target.to_string(),
            0,
            Share::WHOLE,
            None,
        )
        .protocol = Some(protocol.into());
    match &target {
        NetworkTarget::Nbd {
            transport: NbdTransport::Unix(socket),
            ..
        } => {
            let capacity = walker.memory_capacity("Unix socket");
            walker
                .push(
                    format!("unix:{}", socket.display()),
                    HopKind::Memory,
                    "Unix socket",
                    socket.display().to_string(),
                    0,
                    Share::WHOLE,
                    capacity,
                )
                .protocol = Some(protocol.into());
            walker.note(format!(
                "{target}: the server's own storage is not visible; declare it with --path NAME:RATE"
            ));
        }
        NetworkTarget::Nbd {
            transport: NbdTransport::Tcp(address),
            ..
        }
        | NetworkTarget::Iscsi {
            portal: address, ..
        } => {
            walker.route(&address.host, address.port, Some(protocol), 0, Share::WHOLE);
            walker.note(format!(
                "{target}: hops beyond this host (switches, the server's links and storage) are not visible; declare them with --link or --path"
            ));
        }
    }
}

/// Whether the first [`HEAD_CHECK_BYTES`] of `path` are all zeros (`None` when unreadable).
pub fn head_is_zero(path: &Path) -> Option<bool> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut buffer = vec![0u8; HEAD_CHECK_BYTES];
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
    }
    if filled == 0 {
        return None;
    }
    Some(buffer[..filled].iter().all(|byte| *byte == 0))
}

/// A [`TargetInfo`] for `iopath path TARGET`: a file or block device is inspected; an
/// `nbd://` or `iscsi://` URL is described without connecting (size and block sizes unknown).
pub fn inspect_for_path(target: &str) -> Result<TargetInfo, TargetError> {
    if NetworkTarget::is_url(target) || target.contains("://") {
        let parsed = NetworkTarget::parse(target).map_err(|error| TargetError::Unusable {
            path: PathBuf::from(target),
            reason: error.to_string(),
        })?;
        return Ok(TargetInfo {
            path: parsed.to_string(),
            kind: match parsed {
                NetworkTarget::Nbd { .. } => TargetKind::Nbd,
                NetworkTarget::Iscsi { .. } => TargetKind::Iscsi,
            },
            size_bytes: 0,
            logical_block_size_bytes: 512,
            physical_block_size_bytes: 512,
            rotational: None,
            filesystem: None,
            device: None,
            direct_io_alignment_bytes: None,
            created_by_iopath: false,
            read_only: false,
        });
    }
    crate::targets::inspect(Path::new(target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_support::facts;
    use crate::support::devices::{LoopDevice, tool};

    fn kinds(path: &StoragePath) -> Vec<HopKind> {
        path.hops.iter().map(|hop| hop.kind).collect()
    }

    #[test]
    fn a_file_on_the_build_filesystem() {
        let directory = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let file = directory.path().join("data");
        std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
        let info = crate::targets::inspect(&file).unwrap();
        let path = discover(&info, &facts());
        assert_eq!(path.hops[0].kind, HopKind::File);
        assert_eq!(path.hops[1].kind, HopKind::PageCache);
        assert!(path.hops[1].capacity.is_some());
        assert_eq!(path.hops[2].kind, HopKind::Filesystem);
        assert_eq!(Some(path.hops[2].name.as_str()), info.filesystem.as_deref());
        assert_eq!(path.first_blocks_all_zero, Some(false));
        assert!(path.allocated_bytes.unwrap() >= 1 << 20);
        if let Some(device) = &info.device {
            let disk = sysfs::whole_disk(device);
            assert!(
                path.hops
                    .iter()
                    .any(|hop| hop.kind == HopKind::Disk && hop.name == disk),
                "{:#?}",
                path.hops
            );
        }
    }

    #[test]
    fn a_removed_temporary_file_is_traced_from_its_device() {
        let directory = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let file = directory.path().join("gone");
        std::fs::write(&file, vec![7u8; 8192]).unwrap();
        let info = crate::targets::inspect(&file).unwrap();
        std::fs::remove_file(&file).unwrap();
        let path = discover(&info, &facts());
        assert!(path.hops[0].description.contains("removed after the run"));
        assert_eq!(path.first_blocks_all_zero, None);
        assert_eq!(path.allocated_bytes, None);
        if info.device.is_some() {
            assert!(kinds(&path).contains(&HopKind::Disk), "{:#?}", path.hops);
        }
    }

    #[test]
    fn a_file_on_tmpfs_lives_in_memory() {
        crate::support::skip_unless!(Path::new("/dev/shm").is_dir(), "no /dev/shm (a tmpfs) here");
        let directory = tempfile::tempdir_in("/dev/shm").unwrap();
        let file = directory.path().join("data");
        std::fs::write(&file, vec![0u8; 4096]).unwrap();
        let info = crate::targets::inspect(&file).unwrap();
        let path = discover(&info, &facts());
        assert_eq!(
            kinds(&path),
            [
                HopKind::File,
                HopKind::PageCache,
                HopKind::Filesystem,
                HopKind::Memory
            ]
        );
        assert_eq!(path.hops[2].name, "tmpfs");
        assert!(path.hops[3].capacity.is_some());
        assert_eq!(path.first_blocks_all_zero, Some(true));
    }

    #[test]
    fn a_loop_device_over_a_file_on_ext4() {
        let Some(loop_device) = LoopDevice::attach_zeroed(16) else {
            return;
        };
        let info = crate::targets::inspect(loop_device.path()).unwrap();
        let path = discover(&info, &facts());
        let loop_hop = path
            .hops
            .iter()
            .position(|hop| hop.kind == HopKind::Loop)
            .expect("a loop hop");
        assert_eq!(path.hops[loop_hop].name, loop_device.name());
        assert!(
            path.hops[loop_hop]
                .description
                .contains(&loop_device.backing_file().display().to_string()),
            "{}",
            path.hops[loop_hop].description
        );
        // Below the loop device (buffered: losetup's default): the backing file's page cache,
        // its filesystem and its disk, one level deeper.
        let inner_cache = &path.hops[loop_hop + 1];
        assert_eq!(inner_cache.kind, HopKind::PageCache);
        assert_eq!(
            inner_cache.key,
            format!("{PAGE_CACHE_KEY}:{}", loop_device.name())
        );
        let filesystem = &path.hops[loop_hop + 2];
        assert_eq!(filesystem.kind, HopKind::Filesystem);
        assert_eq!(filesystem.depth, path.hops[loop_hop].depth + 1);
        let backing_metadata = std::fs::metadata(loop_device.backing_file()).unwrap();
        let backing_device =
            sysfs::device_name(sysfs::DeviceNumber::from_dev_t(backing_metadata.dev()));
        if let Some(device) = backing_device {
            assert!(
                path.hops
                    .iter()
                    .any(|hop| hop.kind == HopKind::Disk && hop.name == sysfs::whole_disk(&device)),
                "{:#?}",
                path.hops
            );
            if filesystem.name.starts_with("ext") {
                assert!(filesystem.description.contains(&device), "{filesystem:?}");
            }
        }
        let queue = path.hops[loop_hop].queue.as_ref().expect("queue limits");
        assert!(queue.nr_requests.is_some());
        // A fresh image reads as zeros: it was never written.
        assert_eq!(path.first_blocks_all_zero, Some(true));
    }

    #[test]
    fn a_device_mapper_stack_over_a_loop_device() {
        let Some(loop_device) = LoopDevice::attach_zeroed(16) else {
            return;
        };
        let Some(mapped) = loop_device.map_linear() else {
            return;
        };
        let info = crate::targets::inspect(&mapped.path()).unwrap();
        let path = discover(&info, &facts());
        let dm = path
            .hops
            .iter()
            .position(|hop| hop.kind == HopKind::DeviceMapper)
            .expect("a device-mapper hop");
        assert!(path.hops[dm].description.contains(mapped.name()));
        let loop_hop = path
            .hops
            .iter()
            .position(|hop| hop.kind == HopKind::Loop)
            .expect("the loop device below it");
        assert!(loop_hop > dm);
        assert_eq!(path.hops[loop_hop].depth, path.hops[dm].depth + 1);
        assert!(tool("dmsetup").is_some());
    }

    #[test]
    fn network_urls_are_described_without_connecting() {
        let info = inspect_for_path("nbd://127.0.0.1:10809/disk").unwrap();
        assert_eq!(info.kind, TargetKind::Nbd);
        let path = discover(&info, &facts());
        assert_eq!(path.hops[0].kind, HopKind::Protocol);
        assert_eq!(path.hops[0].protocol.as_deref(), Some("nbd"));
        let lo = &path.hops[1];
        assert_eq!(lo.kind, HopKind::NetworkInterface);
        assert_eq!(lo.name, "lo");
        assert_eq!(lo.protocol.as_deref(), Some("nbd"));
        assert!(lo.capacity.is_some());
        assert!(path.notes.iter().any(|note| note.contains("--link")));
        assert_eq!(storage_protocol(&info, &path).as_deref(), Some("nbd"));

        let info = inspect_for_path("iscsi://127.0.0.1/iqn.2026-01.org.example:disk/0").unwrap();
        assert_eq!(info.kind, TargetKind::Iscsi);
        let path = discover(&info, &facts());
        assert_eq!(path.hops[1].protocol.as_deref(), Some("iscsi"));

        let info = inspect_for_path("nbd+unix:///x?socket=/tmp/nbd.sock").unwrap();
        let path = discover(&info, &facts());
        assert_eq!(path.hops[1].kind, HopKind::Memory);

        assert!(inspect_for_path("smb://host/share").is_err());
        assert!(inspect_for_path("/no/such/target").is_err());
    }
}
