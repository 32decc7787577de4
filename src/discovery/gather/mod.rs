//! Gathering the facts of one target's path from a [`Machine`]: file → filesystem → block
//! device and its stack → disk → transport → PCI functions; for network storage the route
//! to the server and the interfaces it leaves through.
//!
//! Everything is read through the machine's [`HostView`](super::HostView) and
//! [`System`](super::System); nothing here fails: what cannot be read is left out of the
//! facts, and the analysis says so.

mod block;
mod filesystem;
#[cfg(test)]
mod foreign_tests;
pub mod infiniband;
pub(crate) mod network;
pub(crate) mod pci;
#[cfg(test)]
mod shared_walk_tests;
mod transport;

use super::Machine;
use super::facts::{DeviceTargetFacts, FileFacts, FilesystemFacts, PathFacts, RouteFacts};
use super::system::FileState;
use crate::result::{TargetInfo, TargetKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How deep a stack may go before discovery stops following it (a loop over a file on a
/// loop over a file…).
pub const MAX_DEPTH: u32 = 16;

/// Gathers the facts of the path of `info` on `machine`. `server` is the host and port of a
/// network target reached over TCP (the caller reads them from the URL); `None` for local
/// targets and Unix sockets.
pub fn gather(info: &TargetInfo, server: Option<(&str, u16)>, machine: &Machine) -> PathFacts {
    gather_sharing(info, server, machine, &mut SharedWalks::default())
}

/// [`gather`], taking the walk below a file's filesystem, and the route to a server, from
/// `shared` when an earlier target of the same run needed the same one: the files of one
/// directory on one filesystem share everything but their own state, and the volumes of one
/// server share their route.
pub fn gather_sharing(
    info: &TargetInfo,
    server: Option<(&str, u16)>,
    machine: &Machine,
    shared: &mut SharedWalks,
) -> PathFacts {
    let mut gatherer = Gatherer::new(machine);
    match info.kind {
        TargetKind::File => {
            let (own, walk) = gather_file(info, machine, shared);
            PathFacts::File(Box::new(FileFacts {
                exists: own.exists,
                allocated_bytes: own.allocated_bytes,
                head_zero: own.head_zero,
                filesystem: FilesystemFacts {
                    file: PathBuf::from(&info.path),
                    ..shared.filesystem(walk).clone()
                },
            }))
        }
        TargetKind::BlockDevice => {
            let state = machine.system().file_state(Path::new(&info.path), true);
            PathFacts::BlockDevice(Box::new(DeviceTargetFacts {
                device: info
                    .device
                    .as_deref()
                    .map(|name| gatherer.block_device(name, 0)),
                head_zero: state.head_zero,
            }))
        }
        TargetKind::Nbd | TargetKind::Iscsi | TargetKind::Nfs | TargetKind::Smb => {
            PathFacts::Network(server.map(|(host, port)| {
                let key = (host.to_string(), port);
                if let Some(route) = shared.routes.get(&key) {
                    return route.clone();
                }
                shared.walks += 1;
                let route = gatherer.route(host, port, 0);
                shared.routes.insert(key, route.clone());
                route
            }))
        }
    }
}

/// What a file target has of its own; the rest of its path is its filesystem's walk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileOwnFacts {
    /// It still existed when the path was discovered.
    pub exists: bool,
    /// Bytes the filesystem allocated to it.
    pub allocated_bytes: Option<u64>,
    /// Its first 64 KiB read as zeros.
    pub head_zero: Option<bool>,
}

/// Which walk below a filesystem a file shares with the other files of its directory (an
/// index into one [`SharedWalks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WalkId(usize);

/// The facts of the file target `info` (its own state, read from the file) and the walk below
/// its filesystem, taken from `shared` when a file of the same directory, device and
/// filesystem was walked before, else walked now and kept there. The walk's `file` is the
/// first file that needed it: [`gather_sharing`] puts each file's own name in.
pub fn gather_file(
    info: &TargetInfo,
    machine: &Machine,
    shared: &mut SharedWalks,
) -> (FileOwnFacts, WalkId) {
    let file = Path::new(&info.path);
    let parent = file.parent();
    let with_head = !shared.skip_file_heads;
    let looked = info
        .allocated_bytes_looked
        .filter(|_| shared.looks_hold && !with_head);
    let state = match parent.and_then(|parent| shared.directories.get(parent)) {
        Some(directory) if looked.is_some() => FileState {
            exists: true,
            device: None,
            allocated_bytes: looked,
            head_zero: None,
            directory: directory.clone(),
        },
        Some(directory) => machine
            .system()
            .file_state_beside(file, with_head, directory.clone()),
        None => {
            let state = machine.system().file_state(file, with_head);
            if let Some(parent) = parent {
                shared
                    .directories
                    .insert(parent.to_path_buf(), state.directory.clone());
            }
            state
        }
    };
    let own = FileOwnFacts {
        exists: state.exists,
        allocated_bytes: state.allocated_bytes.filter(|_| state.exists),
        head_zero: state.head_zero.filter(|_| state.exists),
    };
    let key = (
        state.directory,
        info.device.clone(),
        info.filesystem.clone(),
    );
    if let Some(&walk) = shared.filesystems.get(&key) {
        return (own, walk);
    }
    let walked = Gatherer::new(machine).filesystem(
        file,
        key.0.as_deref(),
        info.device.as_deref(),
        info.filesystem.as_deref(),
        0,
    );
    shared.walks += 1;
    let walk = WalkId(shared.walked_filesystems.len());
    shared.walked_filesystems.push(walked);
    shared.filesystems.insert(key, walk);
    (own, walk)
}

/// The walks of one run's targets that later targets reuse (see [`gather_sharing`]): below
/// each filesystem, by the file's directory, device and filesystem type, and each server's
/// route, by host and port; and the directory each parent directory of a file resolves to,
/// resolved once for all the files in it. Kept for one analysis only, never longer.
#[derive(Debug, Default)]
pub struct SharedWalks {
    filesystems: HashMap<FilesystemKey, WalkId>,
    walked_filesystems: Vec<FilesystemFacts>,
    /// Each parent directory of a file as named, and the existing directory it resolved to.
    directories: HashMap<PathBuf, Option<PathBuf>>,
    routes: HashMap<(String, u16), RouteFacts>,
    walks: usize,
    /// Files' first blocks are not read (see [`SharedWalks::skipping_file_heads`]).
    skip_file_heads: bool,
    /// A file's look before the run stands for its state (see
    /// [`SharedWalks::trusting_looks_before_the_run`]).
    looks_hold: bool,
}

/// A file's existing directory, its filesystem's block device and type.
type FilesystemKey = (Option<PathBuf>, Option<String>, Option<String>);

impl SharedWalks {
    /// Walks that read no regular file's first blocks: each file's state is its `statx` alone
    /// (it exists, its filesystem, its allocation), and its `head_zero` is `None`. For a run
    /// of many files, whose zero heads the verdict never weighs (a file's reads go through its
    /// filesystem; a sparse file shows in its allocation) and whose reads would cost an open
    /// and a read a file. A block device's first blocks are read all the same.
    pub fn skipping_file_heads() -> Self {
        SharedWalks {
            skip_file_heads: true,
            ..SharedWalks::default()
        }
    }

    /// These walks, taking a file's allocation from the look the run took before its first
    /// test ([`TargetInfo::allocated_bytes_looked`]) instead of a `statx` of each file again:
    /// for a run that changed no file (read only, no file created or removed). Only files
    /// whose first blocks are not read, and whose directory an earlier file of the walks
    /// resolved, are taken so; the others are looked at as before.
    pub fn trusting_looks_before_the_run(mut self) -> Self {
        self.looks_hold = true;
        self
    }

    /// How many walks were made (filesystems and routes); the targets that shared one are not
    /// counted again.
    pub fn walks(&self) -> usize {
        self.walks
    }

    /// The walk `walk` below a filesystem, as its first file needed it.
    ///
    /// # Panics
    /// When `walk` comes from another [`SharedWalks`] with fewer walks.
    pub fn filesystem(&self, walk: WalkId) -> &FilesystemFacts {
        &self.walked_filesystems[walk.0]
    }
}

/// The route to `host:port` on `machine` and the interfaces it leaves through.
pub fn gather_route(host: &str, port: u16, machine: &Machine) -> RouteFacts {
    Gatherer::new(machine).route(host, port, 0)
}

/// Walks one target's path, remembering what it has seen so that loops end.
struct Gatherer<'m> {
    machine: &'m Machine,
    visited: Vec<String>,
}

impl<'m> Gatherer<'m> {
    fn new(machine: &'m Machine) -> Self {
        Gatherer {
            machine,
            visited: Vec::new(),
        }
    }

    /// Whether `key` was walked already; marks it walked.
    fn first_visit(&mut self, key: &str) -> bool {
        if self.visited.iter().any(|seen| seen == key) {
            return false;
        }
        self.visited.push(key.to_string());
        true
    }

    fn view(&self) -> &'m super::HostView {
        self.machine.view()
    }
}
