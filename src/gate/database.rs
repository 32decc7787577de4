//! SQLite databases (the run history): opened only when the path is a regular file (or, for a
//! writer, missing), never a device or a FIFO reached directly or through a link, and with no
//! journal file (`-wal`, `-shm`, `-journal`) beside it that is anything but a regular file.
//!
//! The path is checked first ([`check_database_path`]), then its links are resolved and the
//! resolved path is opened with `SQLITE_OPEN_NOFOLLOW`, so a link put in its place between
//! the two is refused by SQLite too. A reader ([`DatabaseAccess::ReadOnly`]) opens with
//! `SQLITE_OPEN_READONLY`: it never creates the file, never changes it, and works on a copy on
//! a read-only file system (where a database in WAL mode, whose shared-memory file cannot be
//! made there, is read as immutable).
//!
//! ```
//! use iopath::gate::database::{DatabaseAccess, DatabasePathError, open_database};
//! let directory = tempfile::tempdir().unwrap();
//! let path = directory.path().join("runs.sqlite");
//! assert!(matches!(
//!     open_database(&path, DatabaseAccess::ReadOnly),
//!     Err(DatabasePathError::Missing)
//! ));
//! drop(open_database(&path, DatabaseAccess::ReadWriteCreate).unwrap());
//! drop(open_database(&path, DatabaseAccess::ReadOnly).unwrap());
//! assert!(matches!(
//!     open_database("/dev/null".as_ref(), DatabaseAccess::ReadWriteCreate),
//!     Err(DatabasePathError::NotRegular { .. })
//! ));
//! ```

use super::created::create_directories;
use super::{check_writable, kind_name};
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// The files SQLite keeps beside a database, by the suffix of their names.
pub const JOURNAL_SUFFIXES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// How a database is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatabaseAccess {
    /// Read and write; the file and its directory are created when missing.
    ReadWriteCreate,
    /// Read only; the file must exist, and nothing is created or changed.
    ReadOnly,
}

/// Why a database path cannot be used. Messages do not name the database: the caller does.
#[derive(Debug, thiserror::Error)]
pub enum DatabasePathError {
    /// No database there (for a reader).
    #[error("no such file")]
    Missing,
    /// The path, or a journal file beside it, is not a regular file.
    #[error("{which}is {kind}, not a regular file; nothing was opened")]
    NotRegular {
        /// Empty for the database itself, else `"its journal NAME "`.
        which: String,
        /// What it is ([`kind_name`]), with `a symbolic link to` before it when reached
        /// through one.
        kind: String,
    },
    /// A symbolic link to nothing.
    #[error("is a symbolic link to a missing file; nothing was opened")]
    DanglingLink,
    /// Looking at the path, or creating its directory, failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// SQLite refused to open it.
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// Checks `path` for a database: a regular file, a symbolic link to one, or (when `access`
/// may create) missing; and each journal file beside it missing or a regular file. Nothing is
/// opened or created. Returns the path with its links resolved (the path itself when missing).
pub fn check_database_path(
    path: &Path,
    access: DatabaseAccess,
) -> Result<PathBuf, DatabasePathError> {
    let resolved = match std::fs::symlink_metadata(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            if access == DatabaseAccess::ReadOnly {
                return Err(DatabasePathError::Missing);
            }
            path.to_path_buf()
        }
        Err(error) => return Err(error.into()),
        Ok(metadata) if metadata.file_type().is_symlink() => match std::fs::metadata(path) {
            Ok(target) if target.is_file() => std::fs::canonicalize(path)?,
            Ok(target) => {
                return Err(DatabasePathError::NotRegular {
                    which: String::new(),
                    kind: format!("a symbolic link to {}", kind_name(&target)),
                });
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(DatabasePathError::DanglingLink);
            }
            Err(error) => return Err(error.into()),
        },
        Ok(metadata) if metadata.is_file() => path.to_path_buf(),
        Ok(metadata) => {
            return Err(DatabasePathError::NotRegular {
                which: String::new(),
                kind: kind_name(&metadata).to_string(),
            });
        }
    };
    for suffix in JOURNAL_SUFFIXES {
        let mut name = OsString::from(resolved.as_os_str());
        name.push(suffix);
        let journal = PathBuf::from(name);
        match std::fs::symlink_metadata(&journal) {
            Ok(metadata) if metadata.is_file() => {}
            Ok(metadata) => {
                let kind = if metadata.file_type().is_symlink() {
                    "a symbolic link".to_string()
                } else {
                    kind_name(&metadata).to_string()
                };
                return Err(DatabasePathError::NotRegular {
                    which: format!("its journal {} ", journal.display()),
                    kind,
                });
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(resolved)
}

/// Opens the database at `path` after [`check_database_path`]; a writer creates the missing
/// directories above it first.
pub fn open_database(path: &Path, access: DatabaseAccess) -> Result<Connection, DatabasePathError> {
    let resolved = check_database_path(path, access)?;
    let flags = match access {
        DatabaseAccess::ReadWriteCreate => {
            if let Some(parent) = resolved.parent().filter(|p| !p.as_os_str().is_empty()) {
                create_directories(parent)?;
            }
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        }
        DatabaseAccess::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY,
    };
    let flags = flags
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let uri = uri_of(&resolved);
    let connection = Connection::open_with_flags(&uri, flags)?;
    if access == DatabaseAccess::ReadOnly
        && let Err(error) = connection.query_row("PRAGMA schema_version", [], |_| Ok(()))
    {
        // A database in WAL mode needs its `-shm` beside it, which a reader cannot create
        // on a read-only file system: there nobody changes it, so it is read as immutable.
        let on_read_only_medium = error.sqlite_error_code() == Some(ErrorCode::CannotOpen)
            && check_writable(resolved.parent().unwrap_or(Path::new("."))).is_err();
        if !on_read_only_medium {
            return Err(error.into());
        }
        return Ok(Connection::open_with_flags(
            format!("{uri}?immutable=1"),
            flags,
        )?);
    }
    Ok(connection)
}

/// `path` as an SQLite `file:` URI (so that no character of the name is read as an option).
fn uri_of(path: &Path) -> String {
    let mut uri = String::from("file:");
    for byte in path.as_os_str().as_encoded_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(*byte as char)
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_links_to_them_are_refused_and_nothing_is_created() {
        let directory = tempfile::tempdir().unwrap();
        let fifo = directory.path().join("fifo");
        crate::support::devices::make_fifo(&fifo);
        let link = directory.path().join("link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        for path in [Path::new("/dev/null"), &fifo, &link, directory.path()] {
            for access in [DatabaseAccess::ReadWriteCreate, DatabaseAccess::ReadOnly] {
                let error = open_database(path, access).err().unwrap();
                assert!(
                    matches!(error, DatabasePathError::NotRegular { .. }),
                    "{}: {error}",
                    path.display()
                );
            }
        }
        assert!(!Path::new("/dev/null-wal").exists());
        let mut names: Vec<_> = std::fs::read_dir(directory.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["fifo", "link"]);
    }

    #[test]
    fn a_journal_that_is_not_a_regular_file_is_refused() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("h.sqlite");
        drop(open_database(&path, DatabaseAccess::ReadWriteCreate).unwrap());
        std::os::unix::fs::symlink("/dev/null", directory.path().join("h.sqlite-wal")).unwrap();
        let error = open_database(&path, DatabaseAccess::ReadWriteCreate)
            .err()
            .unwrap();
        assert!(error.to_string().contains("h.sqlite-wal"), "{error}");
    }

    #[test]
    fn names_with_uri_characters_open_as_named() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("a?mode=ro#%.sqlite");
        drop(open_database(&path, DatabaseAccess::ReadWriteCreate).unwrap());
        assert!(path.is_file());
    }
}
