//! Reading and checking a workload's verification settings: the kind's name, the interval each
//! header covers, and the rules a verifying workload must keep — found before any I/O.
//!
//! ```
//! use iopath::result::VerifyKind;
//! use iopath::workload::verify_settings::parse_kind;
//! assert_eq!(parse_kind("crc32c-intel").unwrap(), VerifyKind::Crc32c);
//! assert!(parse_kind("crc7").is_err());
//! ```

use super::error::WorkloadError;
use crate::result::{VerifyKind, Workload};
use crate::verify::header::{BlockFormat, HEADER_BYTES};
use crate::verify::ledger::MAX_TRACKED_BLOCKS;

/// Reads a verify kind: crc32c (fio's crc32c-intel too), crc32, md5, sha256, xxhash, meta,
/// pattern.
pub fn parse_kind(text: &str) -> Result<VerifyKind, WorkloadError> {
    let text = text.trim();
    let text = if text == "crc32c-intel" {
        "crc32c"
    } else {
        text
    };
    VerifyKind::ALL
        .into_iter()
        .find(|kind| kind.name() == text)
        .ok_or_else(|| WorkloadError::Unknown {
            kind: "verify kind",
            name: text.to_string(),
            choices: VerifyKind::ALL.map(VerifyKind::name).join(", "),
        })
}

/// Bytes each header of `workload` covers: its verify interval, or its smallest block size.
pub fn interval_bytes(workload: &Workload) -> u64 {
    workload
        .verify
        .as_ref()
        .and_then(|verify| verify.interval_bytes)
        .unwrap_or_else(|| workload.access.min_size_bytes())
        .max(1)
}

/// Bytes of one worker's ledger on a target of `target_bytes` (0 when the workload does not
/// verify): one `u32` per interval of its region.
pub fn ledger_bytes(workload: &Workload, target_bytes: u64) -> u64 {
    if workload.verify.is_none() {
        return 0;
    }
    let region = workload
        .region_size_bytes
        .unwrap_or(target_bytes.saturating_sub(workload.region_offset_bytes));
    (region / interval_bytes(workload)).saturating_mul(4)
}

/// Checks the verification settings of `workload` on a region of `region_bytes` per worker;
/// the message says what does not fit and what to change.
pub fn check(workload: &Workload, region_bytes: u64) -> Result<(), String> {
    let Some(verify) = &workload.verify else {
        return Ok(());
    };
    if verify.kind == VerifyKind::Pattern && verify.pattern.is_none() {
        return Err(
            "verify=pattern checks a pattern: give one with verify_pattern (--verify-pattern)"
                .to_string(),
        );
    }
    let interval = interval_bytes(workload);
    if !BlockFormat::fits(verify.kind, interval, verify.header_offset_bytes) {
        return Err(format!(
            "verify: a {HEADER_BYTES}-byte header at offset {} does not fit in a {interval}-byte verify interval",
            verify.header_offset_bytes
        ));
    }
    if let Some(line) = workload
        .access
        .active_lines()
        .find(|line| line.size_bytes % interval != 0 || line.alignment_bytes % interval != 0)
    {
        return Err(format!(
            "verify: every block size and alignment must be a multiple of the verify interval ({interval} bytes); {} bytes with {}-byte alignment is not",
            line.size_bytes, line.alignment_bytes
        ));
    }
    if !workload.region_offset_bytes.is_multiple_of(interval) {
        return Err(format!(
            "verify: the region must start at a multiple of the verify interval ({interval} bytes)"
        ));
    }
    if workload.workers > 1 && workload.offsets.clone_increment_bytes == 0 && workload.modifies() {
        return Err(
            "verify: with several workers on one region, each would overwrite blocks the others check; use one worker per target (numjobs=1) or regions of their own (offset_increment)"
                .to_string(),
        );
    }
    let blocks = region_bytes / interval;
    if blocks > MAX_TRACKED_BLOCKS {
        return Err(format!(
            "verify: {blocks} blocks of {interval} bytes are more than one worker tracks ({MAX_TRACKED_BLOCKS}); verify a smaller region (--size) or use a larger verify interval"
        ));
    }
    if verify.state_load && !verify.only && workload.modifies() {
        return Err(
            "verify_state_load checks an earlier run's writes: use it with verify_only or a read-only workload"
                .to_string(),
        );
    }
    Ok(())
}
