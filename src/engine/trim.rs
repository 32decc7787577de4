//! Trims (discards) of local targets: how each kind of file drops a range, for the sync and
//! io_uring engines, and the probe that tells before any I/O whether a target can.
//!
//! - A block device discards (`BLKDISCARD` in the sync engine; io_uring's block-device command
//!   `BLOCK_URING_CMD_DISCARD`, Linux 6.12+, in the io_uring engine, so that trims are queued
//!   like reads and writes instead of holding the worker's thread).
//! - A regular file gets a hole punched (`fallocate(FALLOC_FL_PUNCH_HOLE |
//!   FALLOC_FL_KEEP_SIZE)`; io_uring's `IORING_OP_FALLOCATE`, which the kernel runs in its worker
//!   threads): its blocks are freed and the range reads back as zeroes.
//!
//! A trim that succeeded completes with its length, as a read or write of all its bytes does.
//!
//! ```no_run
//! use iopath::engine::trim::{LocalTrim, probe};
//! let file = std::fs::OpenOptions::new().read(true).write(true).open("/tmp/target")?;
//! let how = LocalTrim::of(&file)?;
//! probe(&file, how)?; // an error names why this file cannot be trimmed
//! # Ok::<(), std::io::Error>(())
//! ```

use super::sys;
use crate::gate::created::{NewFileAccess, create_new, remove_created, unnamed_file};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// How a local file drops a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalTrim {
    /// A block device: discard.
    Discard,
    /// A regular file: punch a hole.
    PunchHole,
}

impl LocalTrim {
    /// How `file` is trimmed: a discard for a block device, a punched hole otherwise.
    pub fn of(file: &File) -> io::Result<Self> {
        Ok(if file.metadata()?.file_type().is_block_device() {
            LocalTrim::Discard
        } else {
            LocalTrim::PunchHole
        })
    }

    /// What this is called in messages.
    pub fn name(self) -> &'static str {
        match self {
            LocalTrim::Discard => "discard (BLKDISCARD)",
            LocalTrim::PunchHole => "punch hole (fallocate)",
        }
    }

    /// Drops `length` bytes at `offset` of `file` now (the sync engine's trim).
    pub fn trim(self, file: &File, offset: u64, length: u64) -> io::Result<()> {
        match self {
            LocalTrim::Discard => sys::discard(file.as_raw_fd(), offset, length),
            LocalTrim::PunchHole => sys::punch_hole(file.as_raw_fd(), offset, length),
        }
    }
}

/// Checks, changing nothing, that `file` (open for writing) can be trimmed as `how` says: a
/// block device is asked to discard 0 bytes (the kernel checks that it can discard before it
/// refuses the empty range with `EINVAL`); a file gets a hole punched past its end, where it
/// has no data (a file system without holes refuses with `EOPNOTSUPP`). The error is the
/// kernel's answer when it cannot.
pub fn probe(file: &File, how: LocalTrim) -> io::Result<()> {
    match how {
        LocalTrim::Discard => match sys::discard(file.as_raw_fd(), 0, 0) {
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => Ok(()),
            Ok(()) => Ok(()),
            Err(error) => Err(error),
        },
        LocalTrim::PunchHole => {
            let end = file.metadata()?.len();
            sys::punch_hole(file.as_raw_fd(), end.next_multiple_of(1 << 20), 4096)
        }
    }
}

/// Checks that a file created in `directory` could have holes punched: the check runs on an
/// unnamed file there (`O_TMPFILE`), or, where the file system has none, on a probe file that
/// is removed at once. The error is the file system's answer when it cannot.
pub fn probe_directory(directory: &Path) -> io::Result<()> {
    if let Ok(file) = unnamed_file(directory) {
        return probe(&file, LocalTrim::PunchHole);
    }
    let path = directory.join(format!(".iopath-trim-probe-{}", std::process::id()));
    let file = create_new(&path, 0o600, NewFileAccess::ReadWrite)?;
    let outcome = probe(&file, LocalTrim::PunchHole);
    drop(file);
    remove_created(&path)?;
    outcome
}

/// Test set-up: `size` bytes of `fill` written to a new file in `directory`, on disk, and the
/// file open for reading and writing.
#[cfg(test)]
pub(crate) fn written_file(directory: &Path, size: usize, fill: u8) -> (std::path::PathBuf, File) {
    let path = directory.join("target");
    std::fs::write(&path, vec![fill; size]).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    file.sync_all().unwrap();
    (path, file)
}

/// Test check: `path`, of `size` bytes and `blocks_before` blocks before its first `hole`
/// bytes were trimmed, keeps its size, holds fewer blocks, reads zeroes there and `fill` after.
#[cfg(test)]
pub(crate) fn assert_hole_at_start(
    path: &Path,
    size: u64,
    blocks_before: u64,
    hole: usize,
    fill: u8,
) {
    use std::os::unix::fs::MetadataExt;
    let after = std::fs::metadata(path).unwrap();
    assert_eq!(after.len(), size, "the size is kept");
    assert!(
        after.blocks() < blocks_before,
        "{blocks_before} blocks before, {} after",
        after.blocks()
    );
    let data = std::fs::read(path).unwrap();
    assert!(data[..hole].iter().all(|&b| b == 0), "zeroes in the hole");
    assert!(data[hole..].iter().all(|&b| b == fill), "data after it");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_punched_hole_frees_the_blocks_of_a_file_and_reads_as_zeroes() {
        let directory = tempfile::tempdir().unwrap();
        let (path, file) = written_file(directory.path(), 1 << 20, 0xa5);
        let how = LocalTrim::of(&file).unwrap();
        assert_eq!(how, LocalTrim::PunchHole);
        if let Err(error) = probe(&file, how) {
            // Some file systems of a build machine have no holes; the refusal is then checked.
            assert_eq!(error.raw_os_error(), Some(libc::EOPNOTSUPP), "{error}");
            return;
        }
        let blocks_before = file.metadata().unwrap().blocks();
        how.trim(&file, 0, 512 << 10).unwrap();
        assert_hole_at_start(&path, 1 << 20, blocks_before, 512 << 10, 0xa5);
    }
}
