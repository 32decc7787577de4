//! The verify state file (fio's `verify_state_save` / `verify_state_load`): which blocks one
//! worker wrote, with which generation, in which run, on which targets — so that a later run
//! can check exactly those (write in one run, verify in the next), and only on the targets
//! that were written.
//!
//! Layout, little-endian: magic `IOPVSTAT`, version u32 (2), interval u64, run id u64, targets
//! u32, then per target its identity ([`TargetIdentity::write_to`]), then regions u32, then per
//! region its start u64, its block count u64 and one u32 generation per block. Version 1 (no
//! targets) is recognised and refused with [`StateError::NoTargetIdentity`].
//!
//! ```
//! use iopath::verify::ledger::Ledger;
//! use iopath::verify::state::VerifyState;
//! use iopath::verify::target_identity::{ObjectId, TargetIdentity};
//! let mut ledger = Ledger::new(4096, &[(0, 65536)]).unwrap();
//! ledger.record(0, 4096, 4096, 1);
//! let target = TargetIdentity { name: "a.bin".into(), size_bytes: 65536, object: ObjectId::Name };
//! let state = VerifyState { run_id: 9, ledger, targets: vec![target] };
//! let bytes = state.to_bytes();
//! assert_eq!(VerifyState::from_bytes(&bytes).unwrap(), state);
//! ```

use super::ledger::{Ledger, MAX_TRACKED_BLOCKS, RegionLedger};
use super::target_identity::TargetIdentity;
use std::path::Path;

const MAGIC: &[u8; 8] = b"IOPVSTAT";
const VERSION: u32 = 2;
/// The layout before states named their targets.
const VERSION_WITHOUT_TARGETS: u32 = 1;
/// Most targets one worker's state may name (a worker's file set).
const MAX_TARGETS: u32 = 65_536;

/// What one worker wrote in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyState {
    /// The run that wrote.
    pub run_id: u64,
    /// Its written blocks.
    pub ledger: Ledger,
    /// The targets the ledger's regions lie on, in the same order.
    pub targets: Vec<TargetIdentity>,
}

/// A state file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Reading or writing failed.
    #[error("verify state file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The bytes are not a state file of this version.
    #[error("verify state file {path}: not an iopath verify state ({reason})")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// The state describes other regions or another interval than the job's.
    #[error(
        "verify state file {path} was saved for other regions or another block size than this job's"
    )]
    OtherJob {
        /// The file.
        path: String,
    },
    /// The state was saved by an iopath that did not record its targets.
    #[error(
        "verify state file {path} was saved by an earlier iopath that did not record which target \
         it describes, so it cannot be checked against {found}; write the target again with \
         --verify-state-save and verify that state"
    )]
    NoTargetIdentity {
        /// The file.
        path: String,
        /// The target(s) of this run, in words.
        found: String,
    },
    /// The state describes other targets than the job's.
    #[error(
        "verify state file {path} was saved for {saved}, not for {found}: a state only checks \
         the target it was saved for"
    )]
    OtherTarget {
        /// The file.
        path: String,
        /// The target(s) the state names, in words.
        saved: String,
        /// The target(s) of this run, in words.
        found: String,
    },
}

/// Targets in words for a message, joined with `, `.
fn described(targets: &[TargetIdentity]) -> String {
    targets
        .iter()
        .map(TargetIdentity::describe)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What [`VerifyState::from_bytes`] found in bytes it could not use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// Not a state file of a layout this iopath knows, or truncated.
    Layout,
    /// A state of the first layout, which does not name its targets.
    WithoutTargets,
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, count: usize) -> Option<&[u8]> {
        let (head, rest) = self.bytes.split_at_checked(count)?;
        self.bytes = rest;
        Some(head)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    /// The rest of a state of the current layout, after its magic and version.
    fn state(&mut self) -> Option<VerifyState> {
        let interval = self.u64()?;
        let run_id = self.u64()?;
        let target_count = self.u32()?;
        if target_count > MAX_TARGETS {
            return None;
        }
        let mut targets = Vec::new();
        for _ in 0..target_count {
            let (target, rest) = TargetIdentity::read_from(self.bytes)?;
            self.bytes = rest;
            targets.push(target);
        }
        let count = self.u32()?;
        let mut regions = Vec::new();
        let mut total = 0u64;
        for _ in 0..count {
            let start = self.u64()?;
            let blocks = self.u64()?;
            total = total.checked_add(blocks)?;
            if total > MAX_TRACKED_BLOCKS {
                return None;
            }
            let generations = (0..blocks)
                .map(|_| self.u32())
                .collect::<Option<Vec<u32>>>()?;
            regions.push(RegionLedger { start, generations });
        }
        self.bytes.is_empty().then_some(VerifyState {
            run_id,
            ledger: Ledger { interval, regions },
            targets,
        })
    }
}

impl VerifyState {
    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&self.ledger.interval.to_le_bytes());
        bytes.extend_from_slice(&self.run_id.to_le_bytes());
        bytes.extend_from_slice(&(self.targets.len() as u32).to_le_bytes());
        for target in &self.targets {
            target.write_to(&mut bytes);
        }
        bytes.extend_from_slice(&(self.ledger.regions.len() as u32).to_le_bytes());
        for region in &self.ledger.regions {
            bytes.extend_from_slice(&region.start.to_le_bytes());
            bytes.extend_from_slice(&(region.generations.len() as u64).to_le_bytes());
            for generation in &region.generations {
                bytes.extend_from_slice(&generation.to_le_bytes());
            }
        }
        bytes
    }

    /// Reads the file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<VerifyState, Unreadable> {
        let mut reader = Reader { bytes };
        if reader.take(8) != Some(MAGIC.as_slice()) {
            return Err(Unreadable::Layout);
        }
        match reader.u32() {
            Some(VERSION) => reader.state().ok_or(Unreadable::Layout),
            Some(VERSION_WITHOUT_TARGETS) => Err(Unreadable::WithoutTargets),
            _ => Err(Unreadable::Layout),
        }
    }

    /// Writes the file.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        std::fs::write(path, self.to_bytes()).map_err(|source| StateError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Reads the file and checks that it describes `targets` (the worker's, in order) and
    /// `expected` (the job's regions on them, empty).
    pub fn load(
        path: &Path,
        targets: &[TargetIdentity],
        expected: &Ledger,
    ) -> Result<VerifyState, StateError> {
        let name = || path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| StateError::Io {
            path: name(),
            source,
        })?;
        let state = VerifyState::from_bytes(&bytes).map_err(|unreadable| match unreadable {
            Unreadable::Layout => StateError::Format {
                path: name(),
                reason: "unknown layout or truncated",
            },
            Unreadable::WithoutTargets => StateError::NoTargetIdentity {
                path: name(),
                found: described(targets),
            },
        })?;
        let same_targets = state.targets.len() == targets.len()
            && state
                .targets
                .iter()
                .zip(targets)
                .all(|(saved, found)| saved.same_target(found));
        if !same_targets {
            return Err(StateError::OtherTarget {
                path: name(),
                saved: described(&state.targets),
                found: described(targets),
            });
        }
        let same_shape = state.ledger.interval == expected.interval
            && state.ledger.regions.len() == expected.regions.len()
            && state
                .ledger
                .regions
                .iter()
                .zip(&expected.regions)
                .all(|(saved, ours)| {
                    saved.start == ours.start && saved.generations.len() == ours.generations.len()
                });
        if !same_shape {
            return Err(StateError::OtherJob { path: name() });
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::target_identity::ObjectId;

    fn state_on(inode: u64) -> VerifyState {
        let mut ledger = Ledger::new(4096, &[(0, 65536)]).unwrap();
        ledger.record(0, 8192, 4096, 3);
        VerifyState {
            run_id: 7,
            ledger,
            targets: vec![TargetIdentity {
                name: "data.bin".into(),
                size_bytes: 65536,
                object: ObjectId::File {
                    filesystem: 0x801,
                    inode,
                },
            }],
        }
    }

    #[test]
    fn a_state_loads_for_its_own_target_only() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("s.state");
        let state = state_on(12);
        state.save(&path).unwrap();
        let empty = Ledger::new(4096, &[(0, 65536)]).unwrap();
        assert_eq!(
            VerifyState::load(&path, &state.targets, &empty).unwrap(),
            state
        );
        let other = state_on(13).targets;
        let error = VerifyState::load(&path, &other, &empty).unwrap_err();
        assert!(matches!(error, StateError::OtherTarget { .. }), "{error}");
        let words = error.to_string();
        assert!(
            words.contains("inode 12") && words.contains("inode 13"),
            "{words}"
        );
        assert!(VerifyState::load(&path, &[], &empty).is_err());
    }

    #[test]
    fn a_state_of_the_first_layout_is_named_as_such() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("old.state");
        // Version 1: interval, run id, one region of 16 blocks, all unwritten.
        let mut bytes = b"IOPVSTAT".to_vec();
        bytes.extend_from_slice(&1u32.to_le_bytes());
        bytes.extend_from_slice(&4096u64.to_le_bytes());
        bytes.extend_from_slice(&7u64.to_le_bytes());
        bytes.extend_from_slice(&1u32.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.extend_from_slice(&16u64.to_le_bytes());
        bytes.extend_from_slice(&[0u8; 64]);
        std::fs::write(&path, bytes).unwrap();
        let empty = Ledger::new(4096, &[(0, 65536)]).unwrap();
        let error = VerifyState::load(&path, &state_on(12).targets, &empty).unwrap_err();
        assert!(
            matches!(error, StateError::NoTargetIdentity { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("--verify-state-save"), "{error}");
    }

    #[test]
    fn truncated_states_are_refused() {
        let bytes = state_on(12).to_bytes();
        for cut in 0..bytes.len() {
            assert_eq!(
                VerifyState::from_bytes(&bytes[..cut]),
                Err(Unreadable::Layout),
                "{cut}"
            );
        }
    }
}
