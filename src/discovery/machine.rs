//! A machine whose storage paths are discovered: this host, or one recorded in a directory.
//!
//! A [`Machine`] pairs a [`HostView`] (its `/sys`, `/proc` and `/dev`) with a [`System`] (the
//! answers of system calls). Discovery reads nothing else, so a recorded machine stands in
//! for the one it was recorded on.

use super::host_view::HostView;
use super::machine_file::{MACHINE_FILE, MACHINE_FILE_LIMIT_BYTES, MachineFile};
use super::memcpy;
use super::resources;
use super::system::{Answers, RecordedSystem, RecordingSystem, System, ThisHost};
use crate::gate::read::{FileLimit, ReadError, read_text};
use crate::result::TargetInfo;
use std::path::{Path, PathBuf};

/// What discovery knows of a host besides its paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostFacts {
    /// Memory copy bandwidth of one thread, bytes per second: the capacity of the page cache,
    /// tmpfs, Unix sockets and the loopback network.
    pub memory_copy_bytes_per_second: Option<u64>,
    /// `MemAvailable` now, bytes: does a working set fit in the page cache?
    pub memory_available_bytes: Option<u64>,
    /// The page cache's write-back settings (`vm.dirty_*`), where readable.
    pub dirty_limits: Option<super::writeback::DirtyLimits>,
}

/// Why a recorded machine cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// The directory is missing or is not a directory.
    #[error("{path}: not a directory holding a recorded machine")]
    NotADirectory {
        /// The directory given.
        path: PathBuf,
    },
    /// Its `machine.toml` is unreadable or malformed.
    #[error("{path}: {reason}")]
    BadMachineFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// Where a machine's answers come from.
enum Source {
    ThisHost(ThisHost),
    Recording(RecordingSystem),
    Recorded(RecordedSystem),
}

/// A machine: its files and its system-call answers.
pub struct Machine {
    view: HostView,
    source: Source,
    file: MachineFile,
}

impl Machine {
    /// The host iopath runs on.
    pub fn this_host() -> Self {
        Machine {
            view: HostView::live(),
            source: Source::ThisHost(ThisHost),
            file: MachineFile::default(),
        }
    }

    /// The host iopath runs on, keeping everything discovery reads and asks so that it can
    /// be written out as a recorded machine ([`super::record::write_recording`]).
    pub fn recording_this_host() -> Self {
        Machine {
            view: HostView::live().recording(),
            source: Source::Recording(RecordingSystem::new()),
            file: MachineFile::default(),
        }
    }

    /// The files under `root`, read like this host's and recorded (for tests of recording).
    #[cfg(test)]
    pub(crate) fn recording_rooted(root: &Path) -> Self {
        Machine {
            view: HostView::rooted(root).recording(),
            source: Source::Recording(RecordingSystem::new()),
            file: MachineFile::default(),
        }
    }

    /// The machine recorded in `directory` (its files, and `machine.toml` when present).
    pub fn recorded(directory: &Path) -> Result<Self, MachineError> {
        if !directory.is_dir() {
            return Err(MachineError::NotADirectory {
                path: directory.to_path_buf(),
            });
        }
        let path = directory.join(MACHINE_FILE);
        let limit = FileLimit {
            what: "machine file",
            max_bytes: MACHINE_FILE_LIMIT_BYTES as u64,
        };
        let file = match read_text(&path, limit) {
            Ok(text) => MachineFile::parse(&text)
                .map_err(|reason| MachineError::BadMachineFile { path, reason })?,
            Err(ReadError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
                MachineFile::default()
            }
            Err(error) => {
                return Err(MachineError::BadMachineFile {
                    path,
                    reason: error.to_string(),
                });
            }
        };
        let answers = Answers {
            hosts: file.hosts.clone(),
            routes: file.routes.clone(),
            files: file.files.clone(),
        };
        Ok(Machine {
            view: HostView::rooted(directory),
            source: Source::Recorded(RecordedSystem::new(answers)),
            file,
        })
    }

    /// Its `/sys`, `/proc` and `/dev`.
    pub fn view(&self) -> &HostView {
        &self.view
    }

    /// Its system-call answers.
    pub fn system(&self) -> &dyn System {
        match &self.source {
            Source::ThisHost(system) => system,
            Source::Recording(system) => system,
            Source::Recorded(system) => system,
        }
    }

    /// Whether this is a recorded machine rather than this host.
    pub fn is_recorded(&self) -> bool {
        matches!(self.source, Source::Recorded(_))
    }

    /// What `machine.toml` says (empty for this host).
    pub fn machine_file(&self) -> &MachineFile {
        &self.file
    }

    /// The target `path` as it was inspected when the machine was recorded.
    pub fn recorded_target(&self, path: &str) -> Option<&TargetInfo> {
        self.file.targets.iter().find(|target| target.path == path)
    }

    /// The answers a recording machine has kept so far.
    pub fn recorded_answers(&self) -> Option<Answers> {
        match &self.source {
            Source::Recording(system) => Some(system.answers()),
            _ => None,
        }
    }

    /// Memory copy bandwidth and memory available: measured on this host (the bandwidth is
    /// cached, or measured in about a quarter of a second), as recorded for a recorded one.
    pub fn host_facts(&self) -> HostFacts {
        let memory_available_bytes = resources::meminfo_bytes(&self.view, "MemAvailable:");
        let memory_copy_bytes_per_second = match self.source {
            Source::Recorded(_) => self.file.memory_copy_bytes_per_second,
            _ => Some(memcpy::memory_copy_bandwidth()),
        };
        HostFacts {
            memory_copy_bytes_per_second,
            memory_available_bytes,
            dirty_limits: super::writeback::DirtyLimits::read(&self.view),
        }
    }
}
