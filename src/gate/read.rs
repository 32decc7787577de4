//! Reading a file the user names (a job file, an included file, a saved result, a verify
//! state, a recorded machine) with bounds: only a regular file is read, and never more than a
//! stated number of bytes.
//!
//! A FIFO, a device, a socket or a directory is refused before it is read: the path is looked
//! at first (so that a device is never even opened: opening some has side effects), then it is
//! opened with `O_NONBLOCK` (a FIFO never blocks the open) and the open descriptor is checked
//! again with `fstat`, so that a path swapped between the two looks is caught too. A file that
//! is, or grows, larger than the limit is refused; at most one byte past the limit is read.
//!
//! A file that holds a secret (the `iopath net` secret, SMB credentials) is read with
//! [`read_private_bytes`], which also refuses it when anyone but its owner may read or write it
//! (a permission bit of `0o077`), as ssh refuses a private key.
//!
//! ```
//! use iopath::gate::read::{FileLimit, read_text};
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("job.fio");
//! std::fs::write(&path, "[job]\nrw=read\n").unwrap();
//! assert_eq!(read_text(&path, FileLimit::JOB_FILE).unwrap(), "[job]\nrw=read\n");
//! let error = read_text("/dev/zero".as_ref(), FileLimit::JOB_FILE).unwrap_err();
//! assert!(error.to_string().contains("not a regular file"));
//! ```

use super::kind_name;
use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// What kind of file is read, and the most bytes it may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLimit {
    /// What the file is, for messages ("job file").
    pub what: &'static str,
    /// Most bytes read.
    pub max_bytes: u64,
}

impl FileLimit {
    /// A job file in fio's format, or a file it includes: 16 MiB.
    pub const JOB_FILE: FileLimit = FileLimit {
        what: "job file",
        max_bytes: 16 << 20,
    };
    /// A job file in iopath's TOML: 1 MiB (thousands of jobs; the parsed document takes more
    /// than a hundred times the size of its text).
    pub const TOML_JOB_FILE: FileLimit = FileLimit {
        what: "TOML job file",
        max_bytes: 1 << 20,
    };
    /// A map of each host's targets (`iopath run --target-map`): 1 MiB.
    pub const TARGET_MAP: FileLimit = FileLimit {
        what: "target map",
        max_bytes: 1 << 20,
    };
    /// A cache iopath keeps for itself (the memory-copy measurement): 64 KiB.
    pub const CACHE_FILE: FileLimit = FileLimit {
        what: "cache file",
        max_bytes: 64 << 10,
    };
    /// A saved RunResult (`iopath run --json`), read by `compare` and `report`: 256 MiB
    /// (days of per-second series; read into memory it takes up to about four times that).
    pub const RESULT_FILE: FileLimit = FileLimit {
        what: "result file",
        max_bytes: 256 << 20,
    };
}

/// Why a file was not read. The message does not name the file: the caller does.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not a regular file (a FIFO, a device, a socket, a directory).
    #[error("{kind}, not a regular file: a {what} must be a regular file")]
    NotRegular {
        /// What the path is.
        kind: &'static str,
        /// What was expected.
        what: &'static str,
    },
    /// Larger than the limit.
    #[error("larger than {}, the limit for a {}", format_limit(limit.max_bytes), limit.what)]
    TooLarge {
        /// The limit that was passed.
        limit: FileLimit,
    },
    /// Not UTF-8 text.
    #[error("not a text file (invalid UTF-8)")]
    NotText,
    /// A secret's file that others than its owner may read or write.
    #[error(
        "permissions {mode:04o} are too open: a {what} must be readable by its owner only \
         (chmod 600)"
    )]
    TooOpen {
        /// Its permission bits.
        mode: u32,
        /// What the file is.
        what: &'static str,
    },
    /// The system refused (missing, no permission …).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Opens the regular file at `path` for reading: looked at first, opened non-blocking, and
/// checked again on the descriptor; refused when larger than `limit.max_bytes`. Nothing is
/// read.
pub fn open_regular(path: &Path, limit: FileLimit) -> Result<(File, u64), ReadError> {
    open_checked(path, limit, false)
}

/// Reads a file that holds a secret like [`read_bytes`], refusing it with
/// [`ReadError::TooOpen`] when its permissions let anyone but its owner in (any bit of
/// `0o077`): the one check of every credentials and secret file iopath reads.
pub fn read_private_bytes(path: &Path, limit: FileLimit) -> Result<Vec<u8>, ReadError> {
    let (file, length) = open_checked(path, limit, true)?;
    read_at_most(file, length, limit)
}

/// [`open_regular`], also refusing a file others may read or write when `private`.
fn open_checked(path: &Path, limit: FileLimit, private: bool) -> Result<(File, u64), ReadError> {
    check_regular(&std::fs::metadata(path)?, limit)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)?;
    let metadata = file.metadata()?;
    check_regular(&metadata, limit)?;
    let mode = metadata.permissions().mode() & 0o7777;
    if private && mode & 0o077 != 0 {
        return Err(ReadError::TooOpen {
            mode,
            what: limit.what,
        });
    }
    if metadata.len() > limit.max_bytes {
        return Err(ReadError::TooLarge { limit });
    }
    Ok((file, metadata.len()))
}

/// Reads the whole of the regular file at `path`, at most `limit.max_bytes` bytes.
pub fn read_bytes(path: &Path, limit: FileLimit) -> Result<Vec<u8>, ReadError> {
    let (file, length) = open_regular(path, limit)?;
    read_at_most(file, length, limit)
}

/// Reads at most `limit` bytes of the regular file at `path` (its head when it is longer):
/// for files where a prefix is all that is wanted.
pub fn read_up_to(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let any_size = FileLimit {
        what: "file",
        max_bytes: u64::MAX,
    };
    let (file, length) = open_regular(path, any_size)?;
    let mut bytes = Vec::with_capacity(usize::try_from(length.min(limit)).unwrap_or(0));
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_up_to`], or `None` when the file is not a regular one or cannot be read: for files
/// a machine shows (sysfs, /proc, a recorded machine), where a FIFO or a device put in a
/// file's place must neither block nor be read.
pub fn read_prefix(path: &Path, limit: u64) -> Option<Vec<u8>> {
    read_up_to(path, limit).ok()
}

/// Reads the regular file at `path` as UTF-8 text, at most `limit.max_bytes` bytes.
pub fn read_text(path: &Path, limit: FileLimit) -> Result<String, ReadError> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|_| ReadError::NotText)
}

/// Reads `file` to its end, refusing it once it passes the limit (a file may grow while read,
/// and some regular files, such as those of /proc, say they are empty).
fn read_at_most(file: File, expected: u64, limit: FileLimit) -> Result<Vec<u8>, ReadError> {
    let capacity = usize::try_from(expected.min(limit.max_bytes)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity.saturating_add(1));
    file.take(limit.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit.max_bytes {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

fn check_regular(metadata: &Metadata, limit: FileLimit) -> Result<(), ReadError> {
    if metadata.file_type().is_file() {
        return Ok(());
    }
    Err(ReadError::NotRegular {
        kind: kind_name(metadata),
        what: limit.what,
    })
}

fn format_limit(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

impl fmt::Display for FileLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} for a {}", format_limit(self.max_bytes), self.what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: FileLimit = FileLimit {
        what: "test file",
        max_bytes: 8,
    };

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345678").unwrap();
        assert_eq!(read_bytes(&path, SMALL).unwrap(), b"12345678");
        std::fs::write(&path, b"").unwrap();
        assert_eq!(read_bytes(&path, SMALL).unwrap(), b"");
    }

    #[test]
    fn a_file_past_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"123456789").unwrap();
        let error = read_bytes(&path, SMALL).unwrap_err();
        assert!(matches!(error, ReadError::TooLarge { .. }), "{error}");
        assert_eq!(
            error.to_string(),
            "larger than 8 bytes, the limit for a test file"
        );
    }

    #[test]
    fn a_regular_file_that_says_it_is_empty_is_still_bounded() {
        // /proc files report size 0 and hold more.
        let error = read_bytes("/proc/self/maps".as_ref(), SMALL).unwrap_err();
        assert!(matches!(error, ReadError::TooLarge { .. }), "{error}");
    }

    #[test]
    fn devices_directories_and_fifos_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        crate::support::devices::make_fifo(&fifo);
        for (path, kind) in [
            (fifo.as_path(), "a named pipe (FIFO)"),
            (Path::new("/dev/zero"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            let error = read_bytes(path, FileLimit::JOB_FILE).unwrap_err();
            assert!(
                matches!(error, ReadError::NotRegular { kind: found, .. } if found == kind),
                "{}: {error}",
                path.display()
            );
        }
    }

    #[test]
    fn a_private_file_others_may_read_or_write_is_refused() {
        use std::fs::Permissions;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"secret").unwrap();
        for mode in [0o644, 0o640, 0o604, 0o620, 0o602, 0o660] {
            std::fs::set_permissions(&path, Permissions::from_mode(mode)).unwrap();
            let error = read_private_bytes(&path, SMALL).unwrap_err();
            assert!(
                matches!(error, ReadError::TooOpen { mode: found, .. } if found == mode),
                "{mode:o}: {error}"
            );
            assert!(error.to_string().contains("chmod 600"), "{error}");
            assert_eq!(read_bytes(&path, SMALL).unwrap(), b"secret");
        }
        for mode in [0o600, 0o400, 0o700] {
            std::fs::set_permissions(&path, Permissions::from_mode(mode)).unwrap();
            assert_eq!(read_private_bytes(&path, SMALL).unwrap(), b"secret");
        }
    }

    #[test]
    fn system_errors_and_bad_text_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        assert!(matches!(
            read_bytes(&missing, SMALL),
            Err(ReadError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound
        ));
        let binary = dir.path().join("binary");
        std::fs::write(&binary, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_text(&binary, SMALL), Err(ReadError::NotText)));
    }

    #[test]
    fn limits_name_themselves() {
        assert_eq!(FileLimit::JOB_FILE.to_string(), "16 MiB for a job file");
        assert_eq!(
            FileLimit::TOML_JOB_FILE.to_string(),
            "1 MiB for a TOML job file"
        );
        assert_eq!(
            FileLimit::RESULT_FILE.to_string(),
            "256 MiB for a result file"
        );
    }
}
