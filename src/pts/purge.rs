//! The purge before each PTS test: the specification asks for the device to be returned to
//! its fresh-out-of-box state. iopath does it the one way it can everywhere a block device can
//! discard: a discard (`BLKDISCARD`) of the whole device. It issues no NVMe format or ATA
//! security erase: `--purge secure-erase` is refused before any I/O, and a target that cannot
//! discard (a file, an NBD export, a device without discard) is tested from the state it is
//! in, which the report says.

use crate::engine::trim::{LocalTrim, probe};
use crate::result::TargetKind;
use crate::targets::TargetHandle;
use crate::targets::open::OpenRequest;
use crate::targets::safety::{WritePolicy, check_write_allowed};
use std::path::Path;

/// How a test's target is purged (`--purge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PurgeMethod {
    /// Not at all: the results start from the state the target is in.
    None,
    /// A discard of the whole device where it can (the default).
    Discard,
    /// An NVMe or ATA secure erase: refused (iopath does not issue it).
    SecureErase,
}

impl PurgeMethod {
    /// Reads `none`, `discard` or `secure-erase`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "none" => Some(PurgeMethod::None),
            "discard" => Some(PurgeMethod::Discard),
            "secure-erase" => Some(PurgeMethod::SecureErase),
            _ => None,
        }
    }
}

/// Bytes discarded by one call, so that a stop request is seen between calls.
const DISCARD_CHUNK: u64 = 1 << 30;

/// What a purge did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PurgeOutcome {
    /// The device was purged.
    pub purged: bool,
    /// How, or why not, in words.
    pub method: String,
}

/// Why a purge failed.
#[derive(Debug, thiserror::Error)]
pub enum PurgeError {
    /// The target could not be opened for writing or may not be written.
    #[error(transparent)]
    Target(#[from] crate::targets::TargetError),
    /// The discard failed part-way.
    #[error("{path}: discard at byte {offset}: {source}")]
    Discard {
        /// The device.
        path: String,
        /// Where it failed.
        offset: u64,
        /// The kernel's answer.
        source: std::io::Error,
    },
}

/// What a purge of a target of `kind` would do, without doing it: the words of the report.
pub fn planned_method(method: PurgeMethod, kind: TargetKind) -> String {
    match (method, kind) {
        (PurgeMethod::None, _) => "none (--purge none): results start from a used state".into(),
        (_, TargetKind::BlockDevice) => "discard of the whole device (BLKDISCARD)".into(),
        (_, kind) => format!(
            "none: a {} has no purge here; results start from a used state",
            kind.description()
        ),
    }
}

/// Purges the local block device at `path` by discarding all of it (when `method` asks and the
/// device can), checking first that `policy` allows writing it. Anything else is left as it is
/// and said so. `stop` ends the discard between chunks (the outcome then says it was not
/// purged).
pub fn purge(
    path: &Path,
    kind: TargetKind,
    method: PurgeMethod,
    policy: WritePolicy,
    stop: &crate::engine::StopSignal,
) -> Result<PurgeOutcome, PurgeError> {
    if method != PurgeMethod::Discard || kind != TargetKind::BlockDevice {
        return Ok(PurgeOutcome {
            purged: false,
            method: planned_method(method, kind),
        });
    }
    let handle = TargetHandle::open(path)?;
    check_write_allowed(&handle, policy)?;
    let opened = handle.reopen(OpenRequest {
        write: true,
        direct: false,
        dsync: false,
    })?;
    if let Err(error) = probe(&opened.file, LocalTrim::Discard) {
        return Ok(PurgeOutcome {
            purged: false,
            method: format!(
                "none: the device cannot discard ({error}); results start from a used state"
            ),
        });
    }
    let size = handle.info().size_bytes;
    let mut offset = 0;
    while offset < size {
        if stop.is_raised() {
            return Ok(PurgeOutcome {
                purged: false,
                method: "discard interrupted".into(),
            });
        }
        let length = DISCARD_CHUNK.min(size - offset);
        LocalTrim::Discard
            .trim(&opened.file, offset, length)
            .map_err(|source| PurgeError::Discard {
                path: path.display().to_string(),
                offset,
                source,
            })?;
        offset += length;
    }
    Ok(PurgeOutcome {
        purged: true,
        method: planned_method(method, kind),
    })
}
