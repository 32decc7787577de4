//! What every file on one filesystem shares — the block device under it, that device's queue
//! limits, the filesystem's name — looked up once per filesystem (`st_dev`) and reused for
//! every other file on it.
//!
//! Inspecting a file reads sysfs and `/proc/self/mountinfo` for these; a job of 100 000 files
//! in one directory would read them 100 000 times. A [`FilesystemCache`] lives as long as one
//! preparation of a run (never longer: a device number can be reused once a device goes away),
//! and [`FilesystemCache::lookups`] says how many filesystems were actually looked up.
//!
//! ```
//! use iopath::targets::filesystem_cache::FilesystemCache;
//! use iopath::targets::TargetHandle;
//! let directory = std::env::temp_dir().join(format!("iopath-fs-cache-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&directory).unwrap();
//! let cache = FilesystemCache::default();
//! for name in ["a", "b", "c"] {
//!     let path = directory.join(name);
//!     std::fs::write(&path, [0u8; 4096]).unwrap();
//!     TargetHandle::open_sharing(&path, &cache).unwrap();
//! }
//! assert_eq!(cache.lookups(), 1);
//! std::fs::remove_dir_all(&directory).unwrap();
//! ```

use crate::discovery::sysfs::{DeviceNumber, QueueFacts};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What files on one filesystem share (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SharedFilesystemFacts {
    /// The block device holding the filesystem, if it has one.
    pub device: Option<String>,
    /// That device's queue limits (empty without a device).
    pub queue: QueueFacts,
    /// The filesystem's name (`ext4`, `tmpfs`, `0x…` when unknown).
    pub filesystem: Option<String>,
}

/// The facts of each filesystem seen, by `st_dev`, for the length of one preparation.
/// Also remembers the directories already checked to hold new test files, so that each is
/// checked once however many files are created in it.
#[derive(Debug, Default)]
pub struct FilesystemCache {
    entries: RefCell<HashMap<DeviceNumber, SharedFilesystemFacts>>,
    lookups: Cell<usize>,
    checked_directories: RefCell<HashSet<PathBuf>>,
}

impl FilesystemCache {
    /// The facts of the filesystem `number`: kept ones, or what `look_up` finds (counted as
    /// one lookup) and then kept.
    pub fn get_or_look_up(
        &self,
        number: DeviceNumber,
        look_up: impl FnOnce() -> SharedFilesystemFacts,
    ) -> SharedFilesystemFacts {
        if let Some(facts) = self.entries.borrow().get(&number) {
            return facts.clone();
        }
        let facts = look_up();
        self.lookups.set(self.lookups.get() + 1);
        self.entries.borrow_mut().insert(number, facts.clone());
        facts
    }

    /// The facts of the filesystem `number` when another file on it was looked up before.
    pub fn known(&self, number: DeviceNumber) -> Option<SharedFilesystemFacts> {
        self.entries.borrow().get(&number).cloned()
    }

    /// Runs `check` on `directory` unless it passed for this directory before.
    pub fn check_directory_once<E>(
        &self,
        directory: &Path,
        check: impl FnOnce(&Path) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.checked_directories.borrow().contains(directory) {
            return Ok(());
        }
        check(directory)?;
        self.checked_directories
            .borrow_mut()
            .insert(directory.to_path_buf());
        Ok(())
    }

    /// How many filesystems were looked up in sysfs and the mount table (one per distinct
    /// filesystem, however many files are on it).
    pub fn lookups(&self) -> usize {
        self.lookups.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::TargetHandle;

    #[test]
    fn files_on_one_filesystem_are_looked_up_once_and_described_alike() {
        let directory = tempfile::tempdir().unwrap();
        let cache = FilesystemCache::default();
        for index in 0..40 {
            let path = directory.path().join(format!("file.{index}"));
            std::fs::write(&path, [7u8; 4096]).unwrap();
            let shared = TargetHandle::open_sharing(&path, &cache).unwrap();
            let alone = TargetHandle::open(&path).unwrap();
            assert_eq!(shared.info(), alone.info(), "{}", path.display());
        }
        assert_eq!(cache.lookups(), 1, "one filesystem, one lookup");
        let shm = std::path::Path::new("/dev/shm");
        if shm.is_dir() {
            let other = tempfile::tempdir_in(shm).unwrap();
            let path = other.path().join("file");
            std::fs::write(&path, [7u8; 4096]).unwrap();
            TargetHandle::open_sharing(&path, &cache).unwrap();
            assert_eq!(cache.lookups(), 2, "a second filesystem is looked up");
        }
    }
}
