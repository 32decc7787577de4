//! The verify state file (fio's `verify_state_save` / `verify_state_load`): which blocks one
//! worker wrote, with which generation, in which run — so that a later run can check exactly
//! those (write in one run, verify in the next).
//!
//! Layout, little-endian: magic `IOPVSTAT`, version u32 (1), interval u64, run id u64, regions
//! u32, then per region its start u64, its block count u64 and one u32 generation per block.
//!
//! ```
//! use iopath::verify::ledger::Ledger;
//! use iopath::verify::state::VerifyState;
//! let mut ledger = Ledger::new(4096, &[(0, 65536)]).unwrap();
//! ledger.record(0, 4096, 4096, 1);
//! let state = VerifyState { run_id: 9, ledger };
//! let bytes = state.to_bytes();
//! assert_eq!(VerifyState::from_bytes(&bytes).unwrap(), state);
//! ```

use super::ledger::{Ledger, MAX_TRACKED_BLOCKS, RegionLedger};
use crate::gate::read::{FileLimit, read_bytes};
use crate::gate::replace::OutputFile;
use std::path::Path;

/// The most a state file may hold: the generations of the most blocks a worker tracks, and
/// room for its header and regions. A longer file, or one that is not regular (a FIFO, a
/// device such as /dev/zero), is refused without being read.
pub const STATE_FILE_LIMIT: FileLimit = FileLimit {
    what: "verify state file",
    max_bytes: MAX_TRACKED_BLOCKS * 4 + (1 << 20),
};

const MAGIC: &[u8; 8] = b"IOPVSTAT";
const VERSION: u32 = 1;

/// What one worker wrote in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyState {
    /// The run that wrote.
    pub run_id: u64,
    /// Its written blocks.
    pub ledger: Ledger,
}

/// A state file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file cannot be read: not a regular file, too large, or the system refused.
    #[error("verify state file {path}: {reason}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The file cannot be written: not a regular file, or the system refused.
    #[error("verify state file {reason}")]
    Unwritable {
        /// The file.
        path: String,
        /// Why, naming the file.
        reason: String,
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
}

impl VerifyState {
    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&self.ledger.interval.to_le_bytes());
        bytes.extend_from_slice(&self.run_id.to_le_bytes());
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

    /// Reads the file's bytes (`None`: not a state file of this version).
    pub fn from_bytes(bytes: &[u8]) -> Option<VerifyState> {
        let mut reader = Reader { bytes };
        if reader.take(8)? != MAGIC || reader.u32()? != VERSION {
            return None;
        }
        let interval = reader.u64()?;
        let run_id = reader.u64()?;
        let count = reader.u32()?;
        let mut regions = Vec::new();
        let mut total = 0u64;
        for _ in 0..count {
            let start = reader.u64()?;
            let blocks = reader.u64()?;
            total = total.checked_add(blocks)?;
            if total > MAX_TRACKED_BLOCKS {
                return None;
            }
            let generations = (0..blocks)
                .map(|_| reader.u32())
                .collect::<Option<Vec<u32>>>()?;
            regions.push(RegionLedger { start, generations });
        }
        reader.bytes.is_empty().then_some(VerifyState {
            run_id,
            ledger: Ledger { interval, regions },
        })
    }

    /// Writes the file through the gate ([`crate::gate::replace`]): only a regular file (or a
    /// new one) is written, never a device or a FIFO, directly or through a link, and it is
    /// replaced whole or not at all.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let bytes = self.to_bytes();
        OutputFile::check(path)
            .and_then(|output| output.write(|out| out.write_all(&bytes)))
            .map_err(|error| StateError::Unwritable {
                path: path.display().to_string(),
                reason: error.to_string(),
            })
    }

    /// Reads the file and checks that it describes `expected` (the job's regions, empty).
    pub fn load(path: &Path, expected: &Ledger) -> Result<VerifyState, StateError> {
        let name = || path.display().to_string();
        let bytes = read_bytes(path, STATE_FILE_LIMIT).map_err(|error| StateError::Unreadable {
            path: name(),
            reason: error.to_string(),
        })?;
        let state = VerifyState::from_bytes(&bytes).ok_or(StateError::Format {
            path: name(),
            reason: "unknown layout or truncated",
        })?;
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
