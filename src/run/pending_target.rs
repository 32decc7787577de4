//! A target as the checks before a run leave it: open and inspected, probed over the network,
//! or still to be created (or never to be opened), as [`PendingTarget`] says.

use crate::engine::volume::NetworkVolumeInfo;
use crate::result::{Preallocation, TargetInfo};
use crate::targets::TargetHandle;
use crate::targets::network_target::NetworkTarget;
use std::path::PathBuf;

/// A target as it will be when the run starts.
#[derive(Debug)]
pub(super) enum PendingTarget {
    /// Exists, is open, and was inspected through that descriptor.
    Existing(TargetHandle),
    /// A network volume, probed (what the probe found, its head left empty).
    Network(NetworkTarget, TargetInfo, Box<NetworkVolumeInfo>),
    /// Will be created (and removed afterwards when temporary).
    Create {
        path: PathBuf,
        size: u64,
        temporary: bool,
    },
    /// Will be created without data, only sized as `preallocation` says: no job using it
    /// reads it, overwrites it or needs it laid out, so the jobs' writes put the data in, as
    /// in fio ([`super::file_layout`]); created empty ([`Preallocation::None`]) when only
    /// `create_on_open` jobs use it. `size` bounds the offsets.
    CreateSized {
        path: PathBuf,
        size: u64,
        temporary: bool,
        preallocation: Preallocation,
    },
    /// A path a file-operation engine works on by name (not opened): made in the run
    /// (`filecreate`, `dircreate`), or a directory `dirstat` or `dirdelete` finds, made before
    /// the run when `make_directory`. `existed`: the path was there before the run.
    Named {
        path: PathBuf,
        existed: bool,
        make_directory: bool,
    },
    /// Would be created, but only null-engine jobs use it: the null engine does no I/O, so the
    /// file is never created, and its size only bounds the offsets.
    Uncreated {
        path: PathBuf,
        size: u64,
        temporary: bool,
    },
    /// The null device: never opened; its jobs run on the null engine (writes accepted,
    /// reads complete untouched).
    NullSink { path: PathBuf },
}
