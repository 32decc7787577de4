//! What one worker's checks found: counts, the first bad blocks in words, and the policy that
//! says whether a bad block stops the worker.
//!
//! This is the seam for error policies: a worker hands every checked interval to
//! [`VerifyLog::checked`], which counts it, keeps the first [`KEPT_MISMATCHES`] faults and
//! answers whether the worker must stop ([`VerifyPolicy`]); nothing else decides it.
//!
//! ```
//! use iopath::result::{MismatchKind, VerifyKind};
//! use iopath::verify::header::{Check, Evidence, Fault};
//! use iopath::verify::log::{VerifyLog, VerifyPolicy};
//! let mut log = VerifyLog::new(VerifyKind::Crc32c, 7, VerifyPolicy { stop_at_first: false });
//! let fault = Fault { kind: MismatchKind::NeverWritten, expected: Evidence::Zeros, found: Evidence::Zeros, header_run: None };
//! assert!(!log.checked("disk", 4096, 4096, Check::Bad(fault)));
//! assert!(!log.checked("disk", 8192, 4096, Check::Good));
//! let result = log.finish(0);
//! assert_eq!((result.blocks_checked, result.mismatch_count), (2, 1));
//! assert_eq!(result.mismatches[0].offset, 4096);
//!
//! let mut log = VerifyLog::new(VerifyKind::Crc32c, 7, VerifyPolicy { stop_at_first: false });
//! assert!(!log.checked_trimmed("disk", 0, &[0; 512]));
//! let mut block = [0u8; 512];
//! block[17] = 0x3f;
//! assert!(!log.checked_trimmed("disk", 512, &block));
//! let result = log.finish(0);
//! assert_eq!((result.trimmed_blocks_checked, result.mismatch_count), (2, 1));
//! assert_eq!(result.mismatches[0].kind, MismatchKind::NotZeroAfterTrim);
//! assert_eq!(result.mismatches[0].found, "byte 17: 0x3f");
//! ```

use super::header::{Check, Evidence, Fault, run_id_text};
use crate::result::{
    KEPT_MISMATCHES, MismatchKind, VerificationResult, VerifyKind, VerifyMismatch,
};

/// What a bad block does to the worker that found it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyPolicy {
    /// Stop the worker at the first bad block (fio's `verify_fatal`); otherwise every block is
    /// checked and the run fails at the end.
    pub stop_at_first: bool,
}

/// The checks of one worker.
#[derive(Clone, Debug)]
pub struct VerifyLog {
    result: VerificationResult,
    policy: VerifyPolicy,
}

impl VerifyLog {
    /// An empty log of a worker of run `run_id` checking `kind` blocks.
    pub fn new(kind: VerifyKind, run_id: u64, policy: VerifyPolicy) -> Self {
        VerifyLog {
            result: VerificationResult {
                kind,
                run_id: run_id_text(run_id),
                mismatches: Vec::with_capacity(KEPT_MISMATCHES),
                ..VerificationResult::default()
            },
            policy,
        }
    }

    /// Counts one checked interval of `target`; true when the worker must stop.
    pub fn checked(&mut self, target: &str, offset: u64, length: u32, check: Check) -> bool {
        self.result.blocks_checked += 1;
        self.result.bytes_checked += u64::from(length);
        match check {
            Check::Good => false,
            Check::NoHeader => {
                self.result.never_written_blocks += 1;
                false
            }
            Check::Bad(fault) => {
                self.mismatch(target, offset, length, fault);
                self.policy.stop_at_first
            }
        }
    }

    /// Checks one interval of `target` that was trimmed after it was written and must read as
    /// zeroes (`trim_verify_zero`): counted as checked and as trimmed, and a bad block naming
    /// the first byte that is not zero; true when the worker must stop.
    pub fn checked_trimmed(&mut self, target: &str, offset: u64, data: &[u8]) -> bool {
        self.result.trimmed_blocks_checked += 1;
        let length = data.len() as u32;
        match data.iter().position(|byte| *byte != 0) {
            None => self.checked(target, offset, length, Check::Good),
            Some(at) => {
                let fault = Fault {
                    kind: MismatchKind::NotZeroAfterTrim,
                    expected: Evidence::TrimmedZeros,
                    found: Evidence::Byte {
                        at: at as u32,
                        value: data[at],
                    },
                    header_run: None,
                };
                self.checked(target, offset, length, Check::Bad(fault))
            }
        }
    }

    /// Counts one read of the read-back after the workload, of `bytes` bytes.
    pub fn read_back(&mut self, bytes: u64) {
        self.result.read_back_ios += 1;
        self.result.read_back_bytes += bytes;
    }

    /// Counts intervals read but not checked.
    pub fn skipped(&mut self, blocks: u64) {
        self.result.skipped_blocks += blocks;
    }

    fn mismatch(&mut self, target: &str, offset: u64, length: u32, fault: Fault) {
        self.result.mismatch_count += 1;
        if self.result.mismatches.len() < KEPT_MISMATCHES {
            self.result.mismatches.push(VerifyMismatch {
                target: target.to_string(),
                offset,
                length,
                kind: fault.kind,
                expected: fault.expected.describe(),
                found: fault.found.describe(),
                written_by_run: fault.header_run.map(run_id_text),
                rank: None,
            });
        }
    }

    /// What the checks found so far (`verify_ns` not yet set).
    pub fn so_far(&self) -> &VerificationResult {
        &self.result
    }

    /// Bad blocks so far.
    pub fn mismatch_count(&self) -> u64 {
        self.result.mismatch_count
    }

    /// The result, with the read-back's time.
    pub fn finish(mut self, verify_ns: u64) -> VerificationResult {
        self.result.verify_ns = verify_ns;
        self.result
    }
}
