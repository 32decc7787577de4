//! The words every exporter gives a job's data verification (docs/verify.md): one summary of
//! what was checked, and one line per kept bad block.
//!
//! ```
//! use iopath::report::verification::summary;
//! use iopath::result::VerificationResult;
//! let found = VerificationResult {
//!     blocks_checked: 256,
//!     bytes_checked: 1 << 20,
//!     run_id: "667dfe27783aff36".into(),
//!     ..VerificationResult::default()
//! };
//! assert_eq!(summary(&found), "verify crc32c: 256 blocks checked (1m), 0 bad; run 667dfe27783aff36");
//! ```

use crate::result::{VerificationResult, VerifyMismatch};
use crate::units::format_size;

/// `verify KIND: N blocks checked (SIZE), M bad[, K never written][, T trimmed (zeroes)][, S
/// not checked]; run ID` (not escaped: the run id is hex digits, the rest iopath's words).
pub fn summary(found: &VerificationResult) -> String {
    let mut line = format!(
        "verify {}: {} blocks checked ({}), {} bad",
        found.kind.name(),
        found.blocks_checked,
        format_size(found.bytes_checked),
        found.mismatch_count
    );
    if found.never_written_blocks > 0 {
        line += &format!(", {} never written", found.never_written_blocks);
    }
    if found.trimmed_blocks_checked > 0 {
        line += &format!(", {} trimmed (zeroes)", found.trimmed_blocks_checked);
    }
    if found.skipped_blocks > 0 {
        line += &format!(", {} not checked", found.skipped_blocks);
    }
    line + &format!("; run {}", found.run_id)
}

/// `at offset N (B bytes): KIND: expected …, found …[ [block written by run ID]][ [found by
/// rank R]]`, with
/// `escape` applied to what the result holds as given (the target, named before, is left to
/// the caller).
pub fn mismatch(bad: &VerifyMismatch, escape: impl Fn(&str) -> String) -> String {
    let by = bad.written_by_run.as_ref().map_or(String::new(), |run| {
        format!(" [block written by run {}]", escape(run))
    });
    let rank = bad
        .rank
        .map_or(String::new(), |rank| format!(" [found by rank {rank}]"));
    format!(
        "at offset {} ({} bytes): {}: expected {}, found {}{by}{rank}",
        bad.offset,
        bad.length,
        bad.kind.name(),
        escape(&bad.expected),
        escape(&bad.found)
    )
}

/// Bad blocks counted beyond those kept.
pub fn more_bad_blocks(found: &VerificationResult) -> u64 {
    found
        .mismatch_count
        .saturating_sub(found.mismatches.len() as u64)
}
