//! What a finished SCSI command means for its caller: bytes transferred, an errno, or a lost
//! session; and SCSI sense data as readable text.

use crate::ffi::{
    SCSI_RESIDUAL_UNDERFLOW, SCSI_STATUS_CANCELLED, SCSI_STATUS_CHECK_CONDITION, SCSI_STATUS_GOOD,
    SCSI_STATUS_RESERVATION_CONFLICT, additional_sense, sense_key,
};
use libc::c_int;

/// The outcome of one I/O command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOutcome {
    /// Bytes transferred (fewer than asked for when the target reported an underflow), or a
    /// negative errno.
    Finished(i64),
    /// libiscsi cancelled the command: the session is gone.
    SessionLost,
}

/// What the outcome of an I/O of `expected_bytes` is, given libiscsi's callback `status` and,
/// when the task is available, its residual and sense.
///
/// | status | result |
/// |---|---|
/// | GOOD | `expected_bytes` minus an underflow residual |
/// | CHECK CONDITION | see [`errno_for_sense`] |
/// | RESERVATION CONFLICT | `-EBADE` (as Linux reports it) |
/// | CANCELLED | the session was lost |
/// | anything else (libiscsi ERROR, TIMEOUT, BUSY…) | `-EIO` |
pub fn io_outcome(
    status: c_int,
    expected_bytes: u32,
    residual: Option<(c_int, usize)>,
    sense: Option<(c_int, c_int)>,
) -> IoOutcome {
    match status {
        SCSI_STATUS_GOOD => {
            let missing = match residual {
                Some((SCSI_RESIDUAL_UNDERFLOW, bytes)) => bytes.min(expected_bytes as usize),
                _ => 0,
            };
            IoOutcome::Finished(i64::from(expected_bytes) - missing as i64)
        }
        SCSI_STATUS_CHECK_CONDITION => {
            let (key, ascq) = sense.unwrap_or((0, 0));
            IoOutcome::Finished(-i64::from(errno_for_sense(key, ascq)))
        }
        SCSI_STATUS_RESERVATION_CONFLICT => IoOutcome::Finished(-i64::from(libc::EBADE)),
        SCSI_STATUS_CANCELLED => IoOutcome::SessionLost,
        _ => IoOutcome::Finished(-i64::from(libc::EIO)),
    }
}

/// The errno a CHECK CONDITION with sense `key` and additional sense `ascq` (ASC << 8 | ASCQ)
/// becomes: `ENOSPC` when a thin volume could not allocate space, `EROFS` for other data
/// protection, `EINVAL` for an illegal request (a bad LBA, a transfer the target refuses),
/// `EIO` for everything else.
pub fn errno_for_sense(key: c_int, ascq: c_int) -> c_int {
    match (key, ascq) {
        (sense_key::DATA_PROTECTION, additional_sense::SPACE_ALLOCATION_FAILED) => libc::ENOSPC,
        (sense_key::DATA_PROTECTION, _) => libc::EROFS,
        (sense_key::ILLEGAL_REQUEST, _) => libc::EINVAL,
        _ => libc::EIO,
    }
}

/// The name of a sense key.
pub fn sense_key_name(key: c_int) -> &'static str {
    match key {
        0x00 => "NO SENSE",
        0x01 => "RECOVERED ERROR",
        sense_key::NOT_READY => "NOT READY",
        sense_key::MEDIUM_ERROR => "MEDIUM ERROR",
        sense_key::HARDWARE_ERROR => "HARDWARE ERROR",
        sense_key::ILLEGAL_REQUEST => "ILLEGAL REQUEST",
        sense_key::UNIT_ATTENTION => "UNIT ATTENTION",
        sense_key::DATA_PROTECTION => "DATA PROTECT",
        0x08 => "BLANK CHECK",
        0x09 => "VENDOR SPECIFIC",
        0x0a => "COPY ABORTED",
        sense_key::ABORTED_COMMAND => "ABORTED COMMAND",
        0x0d => "VOLUME OVERFLOW",
        0x0e => "MISCOMPARE",
        _ => "unknown sense key",
    }
}

/// The name of a SCSI status as libiscsi reports it.
pub fn status_name(status: c_int) -> String {
    match status {
        SCSI_STATUS_GOOD => "GOOD".to_string(),
        SCSI_STATUS_CHECK_CONDITION => "CHECK CONDITION".to_string(),
        0x08 => "BUSY".to_string(),
        SCSI_STATUS_RESERVATION_CONFLICT => "RESERVATION CONFLICT".to_string(),
        0x28 => "TASK SET FULL".to_string(),
        SCSI_STATUS_CANCELLED => "cancelled (session lost)".to_string(),
        crate::ffi::SCSI_STATUS_ERROR => "transport error".to_string(),
        crate::ffi::SCSI_STATUS_TIMEOUT => "timed out".to_string(),
        other => format!("status {other:#x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{SCSI_STATUS_ERROR, SCSI_STATUS_TIMEOUT};

    #[test]
    fn good_commands_count_their_bytes() {
        assert_eq!(
            io_outcome(SCSI_STATUS_GOOD, 4096, Some((0, 0)), None),
            IoOutcome::Finished(4096)
        );
        assert_eq!(
            io_outcome(
                SCSI_STATUS_GOOD,
                4096,
                Some((SCSI_RESIDUAL_UNDERFLOW, 512)),
                None
            ),
            IoOutcome::Finished(3584)
        );
        // An overflow residual (the target had more) still transferred everything asked for.
        assert_eq!(
            io_outcome(SCSI_STATUS_GOOD, 4096, Some((2, 512)), None),
            IoOutcome::Finished(4096)
        );
    }

    #[test]
    fn failures_become_errnos_or_a_lost_session() {
        let space = (
            sense_key::DATA_PROTECTION,
            additional_sense::SPACE_ALLOCATION_FAILED,
        );
        assert_eq!(
            io_outcome(SCSI_STATUS_CHECK_CONDITION, 4096, None, Some(space)),
            IoOutcome::Finished(-i64::from(libc::ENOSPC))
        );
        // LOGICAL BLOCK ADDRESS OUT OF RANGE
        let range = (sense_key::ILLEGAL_REQUEST, 0x2100);
        assert_eq!(
            io_outcome(SCSI_STATUS_CHECK_CONDITION, 4096, None, Some(range)),
            IoOutcome::Finished(-i64::from(libc::EINVAL))
        );
        let medium = (sense_key::MEDIUM_ERROR, 0x1100);
        assert_eq!(
            io_outcome(SCSI_STATUS_CHECK_CONDITION, 4096, None, Some(medium)),
            IoOutcome::Finished(-i64::from(libc::EIO))
        );
        for status in [SCSI_STATUS_ERROR, SCSI_STATUS_TIMEOUT, 0x08] {
            assert_eq!(
                io_outcome(status, 4096, None, None),
                IoOutcome::Finished(-i64::from(libc::EIO))
            );
        }
        assert_eq!(
            io_outcome(SCSI_STATUS_CANCELLED, 4096, None, None),
            IoOutcome::SessionLost
        );
    }
}
