//! The log a job replays, read from its file: a fio text log ([`super::iolog`]) or a blktrace
//! capture ([`super::blktrace`], its devices named as this machine names them), told apart by
//! the capture's magic number. The file is a regular file of at most a limit (one log:
//! [`super::iolog::IOLOG_LIMIT`]).

use super::blktrace::{BlktraceError, is_blktrace, parse_blktrace, resolve_devices};
use super::iolog::{Iolog, IologError, parse_iolog_bytes};
use crate::gate::read::{FileLimit, ReadError, read_bytes};
use std::path::Path;

/// Why the log a job replays cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReplayLogError {
    /// The file could not be read.
    #[error("cannot read the I/O log: {0}")]
    Read(#[from] ReadError),
    /// A text log that is wrong.
    #[error(transparent)]
    Text(#[from] IologError),
    /// A blktrace capture that is wrong.
    #[error("blktrace capture: {0}")]
    Capture(#[from] BlktraceError),
}

/// Reads the log at `path` (at most `limit`): a blktrace capture when it starts with the
/// magic, else a text log.
pub fn read_replay_log(path: &Path, limit: FileLimit) -> Result<Iolog, ReplayLogError> {
    let bytes = read_bytes(path, limit)?;
    if is_blktrace(&bytes) {
        let mut log = parse_blktrace(&bytes)?;
        resolve_devices(&mut log);
        return Ok(log);
    }
    Ok(parse_iolog_bytes(bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::fio::iolog::IOLOG_LIMIT;

    #[test]
    fn a_cut_blktrace_capture_and_binary_files_are_refused_by_what_they_are() {
        let directory = tempfile::tempdir().unwrap();
        let capture = directory.path().join("sda.blktrace.0");
        // The start of one event: magic with version 7, then a sequence number.
        std::fs::write(&capture, [0x07, 0x74, 0x61, 0x65, 1, 0, 0, 0]).unwrap();
        let error = read_replay_log(&capture, IOLOG_LIMIT)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "blktrace capture: event 1 at byte 0: truncated (48 bytes needed, 8 left)"
        );
        let binary = directory.path().join("binary");
        std::fs::write(&binary, b"fio version 2 iolog\n/a add\n\xff\xfe\n").unwrap();
        let error = read_replay_log(&binary, IOLOG_LIMIT)
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 3: not UTF-8"), "{error}");
    }

    #[test]
    fn a_file_that_is_not_regular_or_too_large_is_refused_before_reading_it_all() {
        let error = read_replay_log(Path::new("/dev/null"), IOLOG_LIMIT)
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }
}
