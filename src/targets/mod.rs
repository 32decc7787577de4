//! Where bytes go: files and block devices. Inspection (size, block sizes, rotational,
//! filesystem), safety checks before any write, test-file creation, and opening with the right
//! flags. A local target is opened once; inspection, checks and every worker's descriptor go
//! through that one descriptor ([`open::TargetHandle`]), never through the path again; the
//! regular files of a job of many files are the exception, checked by one `statx` of their path
//! and opened by path, each open compared with the identity the check saw.
//!
//! Network targets are named by URL ([`network_target`]: `nbd://`, `iscsi://`, `nfs://`,
//! `smb://`, parsed and checked before any I/O); a test file that iopath creates on an NFS or
//! SMB share lives through [`remote_file`] (create, fill, register for removal, remove). The
//! engine adapters take both from here: nothing in this module imports an engine.
//!
//! Everything here runs before the clock starts; nothing here prints.

pub mod filesystem_cache;
pub mod info;
pub mod network_target;
pub mod null_sink;
pub mod open;
pub mod remote_file;
pub mod safety;
pub mod signature;
mod sys;
pub mod test_file;
#[cfg(test)]
mod test_support;

pub use crate::gate::check_writable;
pub use open::TargetHandle;
pub use open::inspect;
pub use sys::{PathStat, stat_path};

use crate::targets::network_target::NetworkTarget;
use std::path::PathBuf;

/// Errors about a target, each naming the target.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The path does not exist (and cannot be created because no size was given, or it is not a
    /// regular file).
    #[error("{path}: no such file or device")]
    Missing {
        /// The target path.
        path: PathBuf,
    },
    /// The target exists but cannot be used (a directory, a socket, no permission...).
    #[error("{path}: {reason}")]
    Unusable {
        /// The target path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A write was refused by the safety rules.
    #[error("{path}: refusing to write: {reason}")]
    WriteRefused {
        /// The target path.
        path: PathBuf,
        /// Why, and which flag would allow it.
        reason: String,
    },
    /// The path now leads to another file or device than the one checked: refused rather
    /// than followed.
    #[error("{path}: changed since it was checked ({reason}); refusing to use it")]
    Changed {
        /// The target path.
        path: PathBuf,
        /// What was checked and what was found.
        reason: String,
    },
    /// An operating-system error while inspecting, creating or filling the target.
    #[error("{path}: {operation}: {source}")]
    Io {
        /// The target path.
        path: PathBuf,
        /// What was being done.
        operation: &'static str,
        /// Cause.
        source: std::io::Error,
    },
}

impl TargetError {
    /// Whether this error is about what the user named or allowed (found before any I/O), not
    /// a failure of the system or a target that changed under the run.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, TargetError::Io { .. } | TargetError::Changed { .. })
    }
}

/// A target as named by the user, before anything is known about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetSpec {
    /// A file or block device; a missing file is created with `create_size` bytes.
    Path {
        /// The path.
        path: PathBuf,
        /// Size to create the file with when it does not exist.
        create_size: Option<u64>,
    },
    /// A temporary test file in `directory`, sized from free space (or `size`), removed after.
    TempFile {
        /// Where to put it.
        directory: PathBuf,
        /// Size, when given.
        size: Option<u64>,
    },
    /// Network storage reached by a protocol engine.
    Network(NetworkTarget),
}

impl TargetSpec {
    /// A target as typed by the user: a URL (`nbd://`, `iscsi://`, `nfs://` …) or a path (a
    /// missing file, local or on an NFS export, is created with `create_size`).
    pub fn from_argument(
        text: &std::path::Path,
        create_size: Option<u64>,
    ) -> Result<Self, crate::targets::network_target::UrlError> {
        let as_text = text.to_string_lossy();
        if NetworkTarget::is_url(&as_text) || as_text.contains("://") {
            return NetworkTarget::parse(&as_text)
                .map(|target| TargetSpec::Network(target.with_create_size(create_size)));
        }
        Ok(TargetSpec::Path {
            path: text.to_path_buf(),
            create_size,
        })
    }
}
