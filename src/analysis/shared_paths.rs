//! The storage paths of one run's targets, each part that targets share built once: the
//! files of one directory on one filesystem differ only in their file hop, so the hops below
//! it (page cache, filesystem, devices, transport, bus) are built for the first of them and
//! copied for the others; the walk below the filesystem is made once too
//! ([`gather::SharedWalks`]), and only a file's own state (its allocation, its first blocks)
//! is read per file.
//!
//! Each path is what [`super::path::discover_on`] gives for its target alone.
//!
//! ```
//! use iopath::analysis::{HostFacts, shared_paths::SharedPaths};
//! use iopath::discovery::Machine;
//! let directory = std::env::temp_dir().join(format!("iopath-shared-paths-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&directory).unwrap();
//! let machine = Machine::this_host();
//! let facts = HostFacts::default();
//! let mut paths = SharedPaths::new(&machine, &facts);
//! for name in ["a", "b", "c"] {
//!     let file = directory.join(name);
//!     std::fs::write(&file, [1u8; 4096]).unwrap();
//!     let info = iopath::targets::inspect(&file).unwrap();
//!     assert_eq!(paths.path_of(&info).target, file.display().to_string());
//! }
//! assert_eq!((paths.walks(), paths.builds()), (1, 1));
//! std::fs::remove_dir_all(&directory).unwrap();
//! ```

use super::HostFacts;
use super::path::{self, BelowFile};
use crate::discovery::Machine;
use crate::discovery::gather::{self, WalkId};
use crate::result::{StoragePath, TargetInfo, TargetKind};
use std::collections::HashMap;

/// Builds the paths of one run's targets, sharing what they share (see the module
/// documentation). Lives for one analysis, never longer.
pub struct SharedPaths<'a> {
    machine: &'a Machine,
    facts: &'a HostFacts,
    walks: gather::SharedWalks,
    /// The hops below the files of each walk; `None` where they name the walk's first file
    /// (a note about it), so that each file's are built for it.
    below: HashMap<WalkId, Option<BelowFile>>,
    builds: usize,
}

impl<'a> SharedPaths<'a> {
    /// Paths gathered on `machine`, built with `facts`.
    pub fn new(machine: &'a Machine, facts: &'a HostFacts) -> Self {
        SharedPaths {
            machine,
            facts,
            walks: gather::SharedWalks::default(),
            below: HashMap::new(),
            builds: 0,
        }
    }

    /// Paths whose files' first blocks are not read (a run of many files: see
    /// [`gather::SharedWalks::skipping_file_heads`]); their `first_blocks_all_zero` is `None`.
    pub fn skipping_file_heads(mut self) -> Self {
        self.walks = gather::SharedWalks::skipping_file_heads();
        self
    }

    /// Paths whose files' allocation is the one looked at before the run (a run that
    /// changed no file: see [`gather::SharedWalks::trusting_looks_before_the_run`]).
    pub fn trusting_looks_before_the_run(mut self) -> Self {
        self.walks = std::mem::take(&mut self.walks).trusting_looks_before_the_run();
        self
    }

    /// The storage path of `info`.
    pub fn path_of(&mut self, info: &TargetInfo) -> StoragePath {
        if info.kind != TargetKind::File {
            let gathered = path::gather_sharing_on(info, self.machine, &mut self.walks);
            return path::build(info, &gathered, self.facts);
        }
        let (own, walk) = gather::gather_file(info, self.machine, &mut self.walks);
        let filesystem = self.walks.filesystem(walk);
        let shared = self.below.entry(walk).or_insert_with(|| {
            self.builds += 1;
            let below = path::below_file(filesystem, self.facts);
            (!below.names(&filesystem.file)).then_some(below)
        });
        match shared {
            Some(below) => path::file_path(info, &own, below),
            None => {
                self.builds += 1;
                let own_filesystem = crate::discovery::facts::FilesystemFacts {
                    file: std::path::PathBuf::from(&info.path),
                    ..filesystem.clone()
                };
                path::file_path(info, &own, &path::below_file(&own_filesystem, self.facts))
            }
        }
    }

    /// How many walks below a filesystem (and routes to a server) were made.
    pub fn walks(&self) -> usize {
        self.walks.walks()
    }

    /// How many times the hops below a file were built: once per walk, unless they name
    /// the file.
    pub fn builds(&self) -> usize {
        self.builds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::facts::{FilesystemBelow, FilesystemFacts};
    use crate::targets::inspect;

    #[test]
    fn many_files_on_one_filesystem_are_walked_and_built_once_and_read_as_if_alone() {
        let directory = tempfile::tempdir().unwrap();
        let machine = Machine::this_host();
        let facts = HostFacts {
            memory_copy_bytes_per_second: Some(8_000_000_000),
            ..HostFacts::default()
        };
        let mut shared = SharedPaths::new(&machine, &facts);
        for index in 0..300 {
            let file = directory.path().join(format!("many.0.{index}"));
            // Files of different sizes and contents: their own hops and states differ.
            let byte = u8::from(index % 2 == 0);
            std::fs::write(&file, vec![byte; 4096 * (1 + index % 3)]).unwrap();
            let info = inspect(&file).unwrap();
            let together = shared.path_of(&info);
            assert_eq!(
                together,
                path::discover_on(&info, &facts, &machine),
                "{}",
                file.display()
            );
            assert_eq!(together.first_blocks_all_zero, Some(byte == 0));
        }
        assert_eq!(shared.walks(), 1, "one directory, one walk");
        assert_eq!(shared.builds(), 1, "one filesystem, its hops built once");
        let other = tempfile::tempdir().unwrap();
        let file = other.path().join("elsewhere");
        std::fs::write(&file, [1u8; 4096]).unwrap();
        shared.path_of(&inspect(&file).unwrap());
        assert_eq!((shared.walks(), shared.builds()), (2, 2));
    }

    #[test]
    fn the_paths_of_files_of_one_filesystem_hold_only_their_file_hop_and_share_the_rest() {
        let directory = tempfile::tempdir().unwrap();
        let machine = Machine::this_host();
        let facts = HostFacts::default();
        let mut shared = SharedPaths::new(&machine, &facts);
        let paths: Vec<StoragePath> = (0..50)
            .map(|index| {
                let file = directory.path().join(format!("shared.0.{index}"));
                std::fs::write(&file, [1u8; 4096]).unwrap();
                shared.path_of(&inspect(&file).unwrap())
            })
            .collect();
        for path in &paths {
            assert!(path.hops.len() > 1, "{path:?}");
            assert_eq!(path.hops.own_count(), 1, "the file hop alone: {path:?}");
            assert!(path.hops.shares_below_with(&paths[0].hops), "{path:?}");
        }
    }

    /// A run that changed no file takes each file's allocation from its look before the
    /// run: a file grown since its look still shows the allocation looked at (nothing looked
    /// at it again), but for the first file of its directory, which is looked at for the
    /// directory; without trusting the looks every file is looked at again.
    #[test]
    fn a_run_that_changed_no_file_reuses_each_files_look_before_the_run() {
        let directory = tempfile::tempdir().unwrap();
        let machine = Machine::this_host();
        let facts = HostFacts::default();
        let infos: Vec<TargetInfo> = (0..4)
            .map(|index| {
                let file = directory.path().join(format!("looked.0.{index}"));
                std::fs::write(&file, [1u8; 4096]).unwrap();
                let info = inspect(&file).unwrap();
                assert!(info.allocated_bytes_looked.is_some(), "{info:?}");
                // Grown after its look: 1 MiB more on the filesystem.
                std::fs::write(&file, vec![1u8; 1 << 20]).unwrap();
                info
            })
            .collect();
        let allocated = |trusting: bool| -> Vec<u64> {
            let mut shared = SharedPaths::new(&machine, &facts).skipping_file_heads();
            if trusting {
                shared = shared.trusting_looks_before_the_run();
            }
            infos
                .iter()
                .map(|info| shared.path_of(info).allocated_bytes.unwrap())
                .collect()
        };
        let looked_again = allocated(false);
        assert!(
            looked_again.iter().all(|&bytes| bytes >= 1 << 20),
            "{looked_again:?}"
        );
        let reused = allocated(true);
        assert!(
            reused[0] >= 1 << 20,
            "the first file of a directory: {reused:?}"
        );
        assert!(
            reused[1..].iter().all(|&bytes| bytes < 1 << 20),
            "{reused:?}"
        );
    }

    #[test]
    fn hops_below_that_name_their_file_are_built_for_each_file() {
        let walked = FilesystemFacts {
            file: "/data/first".into(),
            device: None,
            type_name: Some("fuse.unknown".into()),
            mount: None,
            below: FilesystemBelow::Unseen,
        };
        let below = path::below_file(&walked, &HostFacts::default());
        assert!(below.names(&walked.file), "{:?}", below.notes);
        // Keyed by its device, with nothing to say about the file.
        let memory = FilesystemFacts {
            device: Some("zram0".into()),
            below: FilesystemBelow::Memory,
            type_name: Some("tmpfs".into()),
            ..walked.clone()
        };
        assert!(!path::below_file(&memory, &HostFacts::default()).names(&memory.file));
    }
}
