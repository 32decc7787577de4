//! A target's storage path as hops with capacities, built from what discovery gathered:
//! file → page cache → filesystem → block device → its stack (partition, device-mapper, md,
//! loop and its backing file, recursively) → the disk → its transport (NVMe, SATA, SAS, FC,
//! virtio, iSCSI, USB, NBD) → the PCI Express or PCI-X bus of its controller; for network
//! storage the protocol, the interface that routes to the server, what it is built on, its
//! link and its bus.
//!
//! [`build`] is a pure function of the gathered [`PathFacts`] and the [`HostFacts`];
//! [`discover_on`] gathers on a [`Machine`] (this host, or a recorded one) and builds.
//! Nothing here fails: what cannot be seen becomes a note that says how to declare it
//! (`--link`, `--path`).
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
//!     transfer_sizes: None,
//!     file_session: None,
//!     created_content: None,
//!     allocated_bytes_looked: None,
//!     read_only: false,
//! };
//! let facts = HostFacts { memory_copy_bytes_per_second: Some(10_000_000_000), ..HostFacts::default() };
//! let path = discover(&info, &facts);
//! assert_eq!(path.hops[0].name, "NBD");
//! assert_eq!(path.hops[1].name, "lo");
//! ```

use super::HostFacts;
use crate::discovery::facts::{
    FilesystemBelow, FilesystemFacts, NetworkFilesystemFacts, PathFacts, RouteFacts,
};
use crate::discovery::gather::FileOwnFacts;
use crate::discovery::{Machine, gather};
use crate::result::{Duplex, Hop, HopCapacity, HopKind, HopOrigin, Hops, StoragePath};
use crate::result::{TargetInfo, TargetKind};
use crate::targets::TargetError;
use crate::targets::network_target::{NbdTransport, NetworkTarget};
use crate::text::escape::escape_controls;
use std::path::{Path, PathBuf};

pub use crate::discovery::system::HEAD_CHECK_BYTES;

/// Key of the page cache above a target, which only buffered I/O passes. A page cache deeper
/// in a stack (under a buffered loop device) has this key followed by `:` and the device.
pub const PAGE_CACHE_KEY: &str = "page-cache";

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

    /// This share spread evenly over `count` devices.
    pub fn split(self, count: usize) -> Share {
        let count = count.max(1) as f64;
        Share {
            read: self.read / count,
            write: self.write / count,
        }
    }
}

/// Builds the hops of one path.
pub(super) struct Walker<'a> {
    pub hops: Vec<Hop>,
    pub notes: Vec<String>,
    pub facts: &'a HostFacts,
}

impl<'a> Walker<'a> {
    fn new(facts: &'a HostFacts) -> Self {
        Walker {
            hops: Vec::new(),
            notes: Vec::new(),
            facts,
        }
    }

    /// Adds a discovered hop. A hop this path reached already (the FC port under both
    /// paths of a multipath device, the wide SAS port under every member of an array) is
    /// not added again: it carries both shares.
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
        if let Some(index) = self.hops.iter().position(|hop| hop.key == key) {
            let hop = &mut self.hops[index];
            hop.read_share += share.read;
            hop.write_share += share.write;
            return hop;
        }
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
    discover_on(info, facts, &Machine::this_host())
}

/// Discovers the storage path of `info` on `machine`: gathers, then [`build`]s.
pub fn discover_on(info: &TargetInfo, facts: &HostFacts, machine: &Machine) -> StoragePath {
    build(info, &gather_on(info, machine), facts)
}

/// Gathers the facts of the path of `info` on `machine` (for a network target, the route to
/// the server its URL names).
pub fn gather_on(info: &TargetInfo, machine: &Machine) -> PathFacts {
    gather_sharing_on(info, machine, &mut gather::SharedWalks::default())
}

/// [`gather_on`], sharing walks with the other targets of one run through `shared` (see
/// [`gather::gather_sharing`]).
pub fn gather_sharing_on(
    info: &TargetInfo,
    machine: &Machine,
    shared: &mut gather::SharedWalks,
) -> PathFacts {
    let server = match info.kind {
        TargetKind::Nbd | TargetKind::Iscsi | TargetKind::Nfs | TargetKind::Smb => {
            NetworkTarget::parse(&info.path).ok().and_then(|target| {
                target
                    .tcp_address()
                    .map(|address| (address.host.clone(), address.port))
            })
        }
        _ => None,
    };
    gather::gather_sharing(
        info,
        server.as_ref().map(|(host, port)| (host.as_str(), *port)),
        machine,
        shared,
    )
}

/// The storage path of `info` from what discovery gathered about it: a pure function.
pub fn build(info: &TargetInfo, gathered: &PathFacts, facts: &HostFacts) -> StoragePath {
    let mut walker = Walker::new(facts);
    let mut path = StoragePath {
        target: info.path.clone(),
        ..StoragePath::default()
    };
    match gathered {
        PathFacts::File(file) => {
            let own = FileOwnFacts {
                exists: file.exists,
                allocated_bytes: file.allocated_bytes,
                head_zero: file.head_zero,
            };
            return file_path(info, &own, &below_file(&file.filesystem, facts));
        }
        PathFacts::BlockDevice(device) => {
            page_cache_hop(&mut walker);
            match &device.device {
                Some(block) => walker.block(block, 0, Share::WHOLE),
                None => walker.note(format!("{}: no block device name found", info.path)),
            }
            path.first_blocks_all_zero = device.head_zero;
        }
        PathFacts::Network(route) => network_target_hops(&mut walker, info, route.as_ref()),
    }
    let mut hops = walker.hops;
    path.notes = walker.notes;
    escape_shown(&mut hops, &mut path.notes);
    path.hops = hops.into();
    path.target = escape_controls(&path.target).into_owned();
    path
}

/// Names and text come from the machine (a recorded one is untrusted input): no control
/// characters reach a terminal or a report.
fn escape_shown(hops: &mut [Hop], notes: &mut [String]) {
    for hop in hops {
        hop.name = escape_controls(&hop.name).into_owned();
        hop.description = escape_controls(&hop.description).into_owned();
    }
    for note in notes {
        *note = escape_controls(note).into_owned();
    }
}

/// The part of a file's storage path below its file hop — the page cache, the filesystem and
/// everything under it — with the notes about them, escaped as [`build`] shows them. Every
/// file of one directory on one filesystem has the same (see [`below_file`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BelowFile {
    /// The hops under the file hop, in the order of a path: held once, shared by the paths
    /// of every file built from it ([`file_path`]).
    pub hops: std::sync::Arc<[Hop]>,
    /// What could not be seen below the file, and how to declare it.
    pub notes: Vec<String>,
}

impl BelowFile {
    /// Whether anything in it names `file` (the file its filesystem was walked for): only
    /// then does it differ from one file of the filesystem to the next.
    pub fn names(&self, file: &Path) -> bool {
        let raw = file.display().to_string();
        let escaped = escape_controls(&raw);
        let mentions = |text: &str| text.contains(&raw) || text.contains(escaped.as_ref());
        self.notes.iter().any(|note| mentions(note))
            || self
                .hops
                .iter()
                .any(|hop| mentions(&hop.key) || mentions(&hop.name) || mentions(&hop.description))
    }
}

/// The hops below a file on `filesystem` (a pure function of the facts: the files of one
/// walk share it unless it [names](BelowFile::names) the walk's file).
pub fn below_file(filesystem: &FilesystemFacts, facts: &HostFacts) -> BelowFile {
    let mut walker = Walker::new(facts);
    page_cache_hop(&mut walker);
    walker.filesystem(filesystem, 0, Share::WHOLE);
    let (mut hops, mut notes) = (walker.hops, walker.notes);
    escape_shown(&mut hops, &mut notes);
    BelowFile {
        hops: hops.into(),
        notes,
    }
}

/// The storage path of the file target `info`, from its own facts and the hops `below` it:
/// what [`build`] gives for a file. The path holds its file hop and shares the hops below
/// it with every other path built from `below`.
pub fn file_path(info: &TargetInfo, own: &FileOwnFacts, below: &BelowFile) -> StoragePath {
    let mut file = file_hop(info, own.exists);
    escape_shown(std::slice::from_mut(&mut file), &mut []);
    StoragePath {
        target: escape_controls(&info.path).into_owned(),
        hops: Hops::sharing(vec![file], std::sync::Arc::clone(&below.hops)),
        notes: below.notes.clone(),
        first_blocks_all_zero: own.head_zero,
        allocated_bytes: own.allocated_bytes,
    }
}

/// The storage protocol a target speaks on network hops (`nbd`, `iscsi`, `nvme-tcp`, `nfs`,
/// `smb`), from its kind and the protocol hop discovered on its path.
pub fn storage_protocol(info: &TargetInfo, path: &StoragePath) -> Option<String> {
    match info.kind {
        TargetKind::Nbd => return Some("nbd".into()),
        TargetKind::Iscsi => return Some("iscsi".into()),
        TargetKind::Nfs => {
            let version = NetworkTarget::parse(&info.path).map(|target| target.protocol());
            return Some(version.unwrap_or("nfs").into());
        }
        TargetKind::Smb => return Some("smb".into()),
        _ => {}
    }
    path.hops
        .iter()
        .filter(|hop| hop.origin == HopOrigin::Discovered)
        .find_map(|hop| hop.protocol.clone())
}

fn page_cache_hop(walker: &mut Walker) {
    let capacity = walker.memory_capacity("page cache");
    let mut description = "passed by buffered I/O only".to_string();
    if let Some(limits) = &walker.facts.dirty_limits {
        description.push_str("; ");
        description.push_str(&limits.describe());
    }
    walker.push(
        PAGE_CACHE_KEY.into(),
        HopKind::PageCache,
        "page cache",
        description,
        0,
        Share::WHOLE,
        capacity,
    );
}

/// The hop of the file `info` itself (`exists`: it was still there when the path was
/// discovered).
fn file_hop(info: &TargetInfo, exists: bool) -> Hop {
    let mut description = crate::units::format_bytes(info.size_bytes);
    match info.created_content {
        // Created for this run without data: the writes of the run are all it holds.
        Some(content @ crate::result::CreatedContent::Sized { .. }) => {
            description.push_str(", created by iopath, ");
            description.push_str(content.describe());
            description.push_str(" before the run");
        }
        _ if info.created_by_iopath => description.push_str(", written by iopath"),
        _ => {}
    }
    if !exists {
        // A test file is removed after the run; one only the null engine used was never made.
        description.push_str(if info.created_by_iopath {
            ", removed after the run"
        } else {
            ", not on disk"
        });
    }
    Hop {
        key: crate::result::path::file_hop_key(&info.path),
        kind: HopKind::File,
        name: crate::result::path::file_hop_name(&info.path),
        description,
        depth: 0,
        origin: HopOrigin::Discovered,
        capacity: None,
        queue: None,
        protocol: None,
        read_share: Share::WHOLE.read,
        write_share: Share::WHOLE.write,
    }
}

impl Walker<'_> {
    /// The filesystem hop and everything under it.
    pub fn filesystem(&mut self, filesystem: &FilesystemFacts, depth: u32, share: Share) {
        let kind_name = filesystem
            .type_name
            .clone()
            .unwrap_or_else(|| "unknown filesystem".into());
        let mut description = String::new();
        if let Some(device) = &filesystem.device {
            description.push_str(&format!("on {device}"));
        }
        if let Some(mount) = &filesystem.mount {
            if !description.is_empty() {
                description.push_str(", ");
            }
            description.push_str(&format!("mounted at {}", mount.mount_point.display()));
        }
        let key = match (&filesystem.device, &filesystem.mount) {
            (Some(device), _) => format!("fs:{device}"),
            (None, Some(mount)) => format!("fs:{}", mount.mount_point.display()),
            (None, None) => format!("fs:{}", filesystem.file.display()),
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
        match &filesystem.below {
            FilesystemBelow::Memory => {
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
            }
            FilesystemBelow::Network(Some(server)) => {
                self.network_filesystem(server, depth, share);
            }
            FilesystemBelow::Network(None) => {}
            FilesystemBelow::Device(block) => self.block(block, depth, share),
            FilesystemBelow::Devices(devices) => {
                let profile = devices.data_profile.as_deref();
                let names: Vec<&str> = devices.members.iter().map(|m| m.name.as_str()).collect();
                self.note(format!(
                    "{}: {kind_name} spreads its data over {} devices ({}){}",
                    filesystem.file.display(),
                    names.len(),
                    names.join(", "),
                    profile.map_or_else(String::new, |p| format!(", data profile {p}"))
                ));
                let member_share =
                    multi_device_share(profile, devices.members.len(), share);
                for member in &devices.members {
                    self.block(member, depth + 1, member_share);
                }
            }
            FilesystemBelow::Unseen => self.note(format!(
                "{}: {kind_name} has no block device underneath that iopath can see; declare the hops below it with --path",
                filesystem.file.display()
            )),
        }
    }

    fn network_filesystem(&mut self, server: &NetworkFilesystemFacts, depth: u32, share: Share) {
        let name = if server.protocol == "nfs" {
            "NFS"
        } else {
            "SMB"
        };
        self.push(
            format!("protocol:{}:{}", server.protocol, server.source),
            HopKind::Protocol,
            name,
            server.source.clone(),
            depth,
            share,
            None,
        )
        .protocol = Some(server.protocol.clone());
        match &server.route {
            Some(route) => self.route(route, Some(&server.protocol), depth, share),
            None => self.note(format!(
                "{}: no server name in the mount source",
                server.source
            )),
        }
    }
}

fn network_target_hops(walker: &mut Walker, info: &TargetInfo, route: Option<&RouteFacts>) {
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
        NetworkTarget::Nfs { ref url, .. } => url.version.name(),
        NetworkTarget::Smb { .. } => "SMB",
    };
    let description = match (&target, info.transfer_sizes) {
        (NetworkTarget::Nfs { .. }, sizes) => nfs_description(info, &target, sizes),
        (NetworkTarget::Smb { .. }, sizes) => smb_description(info, &target, sizes),
        _ => target.to_string(),
    };
    walker
        .push(
            format!("protocol:{target}"),
            HopKind::Protocol,
            name,
            description,
            0,
            Share::WHOLE,
            None,
        )
        .protocol = Some(protocol.into());
    match (&target, route) {
        (
            NetworkTarget::Nbd {
                transport: NbdTransport::Unix(socket),
                ..
            },
            _,
        ) => {
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
        (_, Some(route)) => {
            walker.route(route, Some(protocol), 0, Share::WHOLE);
            walker.note(format!(
                "{target}: hops beyond this host (switches, the server's links and storage) are not visible; declare them with --link or --path"
            ));
        }
        (_, None) => {}
    }
}

/// The protocol hop of a file on an NFS export: `NFSv3/TCP, rsize/wsize 1 MiB, URL` (NFSv4.1:
/// `NFSv4.1/TCP, rsize/wsize 1 MiB, slots 64, URL`, the slots the server grants a session) and,
/// for a test file, that iopath wrote it and removed it after the run. How writes were made
/// durable (`FILE_SYNC`, `UNSTABLE+COMMIT`) is a test's, in its engine report.
fn nfs_description(
    info: &TargetInfo,
    target: &NetworkTarget,
    sizes: Option<crate::result::TransferSizes>,
) -> String {
    let sizes = match sizes {
        Some(sizes) if sizes.read_bytes == sizes.write_bytes => format!(
            ", rsize/wsize {}",
            crate::units::format_bytes(sizes.read_bytes.into())
        ),
        Some(sizes) => format!(
            ", rsize {}, wsize {}",
            crate::units::format_bytes(sizes.read_bytes.into()),
            crate::units::format_bytes(sizes.write_bytes.into())
        ),
        None => String::new(),
    };
    let created = if info.created_by_iopath {
        ", test file written by iopath and removed after the run"
    } else {
        ""
    };
    let (version, slots) = match target {
        NetworkTarget::Nfs { url, .. } => (
            url.version.name(),
            info.file_session
                .as_deref()
                .map_or(String::new(), |slots| format!(", {slots}")),
        ),
        _ => ("NFS", String::new()),
    };
    format!("{version}/TCP{sizes}{slots}, {target}{created}")
}

/// The protocol hop of a file on an SMB share: the session as negotiated (`SMB 3.1.1,
/// signed (AES-128-CMAC)`, `encrypted (AES-128-GCM)` or `SMB 3.0, encrypted (AES-128-CCM)`),
/// the largest READ and WRITE, the URL and, for a test file, that iopath wrote it and removed
/// it after the run.
fn smb_description(
    info: &TargetInfo,
    target: &NetworkTarget,
    sizes: Option<crate::result::TransferSizes>,
) -> String {
    let session = info.file_session.as_deref().unwrap_or("SMB");
    let sizes = sizes.map_or(String::new(), |sizes| {
        format!(
            ", largest READ {} / WRITE {}",
            crate::units::format_bytes(sizes.read_bytes.into()),
            crate::units::format_bytes(sizes.write_bytes.into())
        )
    });
    let created = if info.created_by_iopath {
        ", test file written by iopath and removed after the run"
    } else {
        ""
    };
    format!("{session} over TCP{sizes}, {target}{created}")
}

/// A [`TargetInfo`] for `iopath path TARGET`, with a note when it was found another way than
/// usual: a file or block device is inspected through its open descriptor; a block device
/// whose node cannot be opened (no permission, a container's device rules) is described from
/// its device number and /sys, which is all the path needs, and the note says so; an
/// `nbd://` or `iscsi://` URL is described without connecting (size and block sizes unknown).
pub fn inspect_for_path(target: &str) -> Result<(TargetInfo, Option<String>), TargetError> {
    if let Some(info) = describe_url(target) {
        return info.map(|info| (info, None));
    }
    let path = Path::new(target);
    match crate::targets::inspect(path) {
        Ok(info) => Ok((info, None)),
        Err(error) => match crate::discovery::target::unopened_block_device(path) {
            Ok(info) => {
                let note = format!(
                    "{error}: described from its device number and /sys ({}) without opening it; its signature (filesystem, partition table) is not read",
                    info.device.as_deref().unwrap_or("?")
                );
                Ok((info, Some(note)))
            }
            Err(_) => Err(error),
        },
    }
}

/// A [`TargetInfo`] for `iopath path --root DIR TARGET`: `target` as the recorded machine
/// describes it, or a URL described without connecting.
pub fn inspect_recorded(machine: &Machine, target: &str) -> Result<TargetInfo, TargetError> {
    if let Some(info) = describe_url(target) {
        return info;
    }
    crate::discovery::target::recorded_target(machine, target).map_err(|reason| {
        TargetError::Unusable {
            path: PathBuf::from(target),
            reason,
        }
    })
}

/// A URL target described without connecting; `None` when `target` is not a URL.
fn describe_url(target: &str) -> Option<Result<TargetInfo, TargetError>> {
    if !(NetworkTarget::is_url(target) || target.contains("://")) {
        return None;
    }
    let parsed = match NetworkTarget::parse(target) {
        Ok(parsed) => parsed,
        Err(error) => {
            return Some(Err(TargetError::Unusable {
                path: PathBuf::from(error.url.clone()),
                reason: error.problem,
            }));
        }
    };
    let kind = parsed.target_kind();
    Some(Ok(TargetInfo::unexamined(parsed.to_string(), kind, 0)))
}

/// The share of a filesystem's traffic each of its `members` devices carries, by its data
/// profile (btrfs's names): every read goes to one device; a write to one (`single`, `raid0`,
/// and bcachefs's layout, which sysfs does not show), to two (`raid1`, `raid10`, `dup`), three
/// or four (`raid1c3`, `raid1c4`) of them, or to a stripe with parity (`raid5`, `raid6`).
fn multi_device_share(profile: Option<&str>, members: usize, share: Share) -> Share {
    let n = members.max(1) as f64;
    let copies = match profile {
        Some("raid1" | "raid10" | "dup") => 2.0,
        Some("raid1c3") => 3.0,
        Some("raid1c4") => 4.0,
        Some("raid5") => n / (n - 1.0).max(1.0),
        Some("raid6") => n / (n - 2.0).max(1.0),
        _ => 1.0,
    };
    Share {
        read: share.read / n,
        write: (share.write * copies / n).min(share.write),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_support::facts;
    use crate::discovery::sysfs;
    use crate::result::HopKind;
    use crate::support::devices::{LoopDevice, tool};
    use std::os::unix::fs::MetadataExt;

    fn kinds(path: &StoragePath) -> Vec<HopKind> {
        path.hops.iter().map(|hop| hop.kind).collect()
    }

    #[test]
    fn a_file_on_an_nfs_export_names_its_protocol_hop_with_rsize_and_wsize() {
        let info = TargetInfo {
            created_by_iopath: true,
            transfer_sizes: Some(crate::result::TransferSizes {
                read_bytes: 1 << 20,
                write_bytes: 1 << 20,
            }),
            ..TargetInfo::unexamined("nfs://10.0.0.9/srv/t.bin".into(), TargetKind::Nfs, 1 << 30)
        };
        let path = build(&info, &PathFacts::Network(None), &facts());
        assert_eq!(path.hops[0].name, "NFSv3");
        assert_eq!(
            path.hops[0].description,
            "NFSv3/TCP, rsize/wsize 1.0 MiB, nfs://10.0.0.9:2049/srv/t.bin, test file written by \
             iopath and removed after the run"
        );
        assert_eq!(storage_protocol(&info, &path).as_deref(), Some("nfs"));
        let info = TargetInfo {
            path: "nfs://10.0.0.9/srv/t.bin?version=4.1".into(),
            file_session: Some("slots 64".into()),
            created_by_iopath: false,
            ..info
        };
        let path = build(&info, &PathFacts::Network(None), &facts());
        assert_eq!(path.hops[0].name, "NFSv4.1");
        assert_eq!(
            path.hops[0].description,
            "NFSv4.1/TCP, rsize/wsize 1.0 MiB, slots 64, nfs://10.0.0.9:2049/srv/t.bin?version=4.1"
        );
        assert_eq!(storage_protocol(&info, &path).as_deref(), Some("nfs41"));
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
        let mut info = crate::targets::inspect(&file).unwrap();
        info.created_by_iopath = true;
        std::fs::remove_file(&file).unwrap();
        let path = discover(&info, &facts());
        assert!(path.hops[0].description.contains("removed after the run"));
        // One iopath did not create (a test file only the null engine used) was never there.
        info.created_by_iopath = false;
        let path = discover(&info, &facts());
        assert!(
            path.hops[0].description.ends_with(", not on disk"),
            "{}",
            path.hops[0].description
        );
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
        let info = inspect_for_path("nbd://127.0.0.1:10809/disk").unwrap().0;
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

        let info = inspect_for_path("iscsi://127.0.0.1/iqn.2026-01.org.example:disk/0")
            .unwrap()
            .0;
        assert_eq!(info.kind, TargetKind::Iscsi);
        let path = discover(&info, &facts());
        assert_eq!(path.hops[1].protocol.as_deref(), Some("iscsi"));

        let info = inspect_for_path("nbd+unix:///x?socket=/tmp/nbd.sock")
            .unwrap()
            .0;
        let path = discover(&info, &facts());
        assert_eq!(path.hops[1].kind, HopKind::Memory);

        assert!(inspect_for_path("smb://host/share").is_err());
        assert!(inspect_for_path("/no/such/target").is_err());
    }
}
