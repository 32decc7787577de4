//! Files that results are written to (`--json FILE`, `--csv FILE`, `-o report.html`, fio logs):
//! checked before any I/O, and written so that a failed or killed run never empties, truncates
//! or removes a file that was there before.
//!
//! [`OutputFile::check`] refuses a destination that is not a regular file (a directory, a
//! device node, a FIFO, a socket, a dangling symbolic link) and a directory that cannot be
//! written, without touching anything. [`OutputFile::write`] writes into a temporary file
//! beside the destination, `.NAME.iopath-tmp-PID`, syncs it and renames it over the
//! destination: readers see the old file or the complete new one, never a part. When writing
//! fails, the temporary file (which this process just created) is removed and the old file is
//! left as it was. A symbolic link to a regular file is kept: the file it points to is replaced.
//! A replaced file keeps its permission bits and, where the process may set them, its owner.
//!
//! ```
//! use iopath::gate::replace::OutputFile;
//! use std::io::Write;
//! let directory = std::env::temp_dir().join(format!("iopath-output-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&directory)?;
//! let path = directory.join("result.json");
//! std::fs::write(&path, "old")?;
//! let output = OutputFile::check(&path)?;
//! // A failed write leaves the old file as it was.
//! assert!(output.write(|_| Err(std::io::Error::other("no result"))).is_err());
//! assert_eq!(std::fs::read_to_string(&path)?, "old");
//! output.write(|out| out.write_all(b"new"))?;
//! assert_eq!(std::fs::read_to_string(&path)?, "new");
//! assert!(OutputFile::check(std::path::Path::new("/dev/null")).is_err());
//! std::fs::remove_dir_all(&directory)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::check_writable;
use super::kind_name;
use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The part of a temporary file's name between the destination's name and the process id.
pub const TEMPORARY_MARK: &str = ".iopath-tmp-";

/// Longest part of the destination's name kept in the temporary file's name, in bytes (names
/// are limited to 255 bytes).
const NAME_BYTES_IN_TEMPORARY: usize = 200;

/// Why an output file cannot be written. Every variant names the path.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The destination exists and is not a regular file.
    #[error("{path}: is {kind}, not a regular file; name a file to write")]
    NotRegular {
        /// The destination as given.
        path: PathBuf,
        /// What it is: `a directory`, `a character device` … ([`kind_name`]).
        kind: &'static str,
    },
    /// The destination is a symbolic link to nothing.
    #[error("{path}: is a symbolic link to a missing file; name a file to write")]
    DanglingLink {
        /// The destination as given.
        path: PathBuf,
    },
    /// The directory that would hold the file is missing, not a directory, or not writable.
    #[error("{path}: {reason}")]
    Directory {
        /// The destination as given.
        path: PathBuf,
        /// Why, naming the directory.
        reason: String,
    },
    /// A system call failed while checking or writing.
    #[error("{path}: {operation}: {source}")]
    Io {
        /// The destination as given.
        path: PathBuf,
        /// What was being done.
        operation: &'static str,
        /// Cause.
        source: io::Error,
    },
}

/// A checked output file; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    /// As given.
    path: PathBuf,
    /// Where the new file is renamed to: `path`, or the file a symbolic link points to.
    destination: PathBuf,
}

impl OutputFile {
    /// Checks that `path` can take an output: it is a regular file, a symbolic link to one, or
    /// missing, and its directory exists and is writable. Nothing is created or changed.
    pub fn check(path: &Path) -> Result<OutputFile, OutputError> {
        if path.as_os_str().is_empty() {
            return Err(OutputError::Directory {
                path: path.to_path_buf(),
                reason: "an empty file name".into(),
            });
        }
        let destination = destination_of(path)?;
        check_output_directory(&directory_of(&destination)).map_err(|reason| {
            OutputError::Directory {
                path: path.to_path_buf(),
                reason,
            }
        })?;
        Ok(OutputFile {
            path: path.to_path_buf(),
            destination,
        })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the file: `fill` writes into a temporary file beside the destination, which is
    /// synced and renamed into place once `fill` succeeds. On any error the temporary file is
    /// removed and the destination is left as it was. The destination is checked again first
    /// (it may have changed since [`OutputFile::check`]).
    pub fn write(
        &self,
        fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), OutputError> {
        let destination = destination_of(&self.path)?;
        let previous = std::fs::metadata(&destination).ok();
        let temporary = temporary_path(&destination);
        let io_error = |operation| {
            let path = self.path.clone();
            move |source| OutputError::Io {
                path,
                operation,
                source,
            }
        };
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(&temporary)
            .map_err(io_error("create the temporary file"))?;
        let written = fill_and_sync(file, previous.as_ref(), fill)
            .and_then(|()| std::fs::rename(&temporary, &destination));
        written.map_err(|source| {
            let _ = std::fs::remove_file(&temporary);
            io_error("write")(source)
        })
    }
}

/// Writes through `fill`, keeps the mode and owner of `previous`, and syncs.
fn fill_and_sync(
    file: File,
    previous: Option<&Metadata>,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    if let Some(previous) = previous {
        file.set_permissions(previous.permissions())?;
        // Only root may give a file away; others keep their own ownership.
        let _ = std::os::unix::fs::fchown(&file, Some(previous.uid()), Some(previous.gid()));
    }
    let mut out = BufWriter::new(file);
    fill(&mut out)?;
    out.flush()?;
    let file = out.into_inner().map_err(|error| error.into_error())?;
    file.sync_all()
}

/// Where a file written to `path` lands: `path` itself, or the regular file a symbolic link
/// points to. Refuses anything but a regular file or a missing path.
fn destination_of(path: &Path) -> Result<PathBuf, OutputError> {
    let io_error = |source| OutputError::Io {
        path: path.to_path_buf(),
        operation: "inspect the output file",
        source,
    };
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(error) => return Err(io_error(error)),
    };
    if metadata.file_type().is_symlink() {
        return match std::fs::metadata(path) {
            Ok(target) if target.is_file() => std::fs::canonicalize(path).map_err(io_error),
            Ok(target) => Err(OutputError::NotRegular {
                path: path.to_path_buf(),
                kind: kind_name(&target),
            }),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                Err(OutputError::DanglingLink {
                    path: path.to_path_buf(),
                })
            }
            Err(error) => Err(io_error(error)),
        };
    }
    if metadata.is_file() {
        Ok(path.to_path_buf())
    } else {
        Err(OutputError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_name(&metadata),
        })
    }
}

/// The directory holding `path` (`.` for a bare name).
fn directory_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// Checks that output files can be created in `directory`: it exists, is a directory, and is
/// writable. The message names the directory.
pub fn check_output_directory(directory: &Path) -> Result<(), String> {
    match std::fs::metadata(directory) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => return Err(format!("{} is not a directory", directory.display())),
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Err(format!("no such directory {}", directory.display()));
        }
        Err(error) => return Err(format!("{}: {error}", directory.display())),
    }
    check_writable(directory)
        .map_err(|error| format!("cannot write in {}: {error}", directory.display()))
}

/// The temporary file a write to `destination` goes through: `.NAME.iopath-tmp-PID` in the
/// same directory (so that the rename stays on one filesystem).
pub fn temporary_path(destination: &Path) -> PathBuf {
    let name = destination
        .file_name()
        .map(|name| name.as_bytes())
        .unwrap_or(b"output");
    let mut kept = &name[..name.len().min(NAME_BYTES_IN_TEMPORARY)];
    // Cut on a character boundary when the name is UTF-8.
    if std::str::from_utf8(name).is_ok() {
        while std::str::from_utf8(kept).is_err() {
            kept = &kept[..kept.len() - 1];
        }
    }
    let mut temporary = b".".to_vec();
    temporary.extend_from_slice(kept);
    temporary.extend_from_slice(TEMPORARY_MARK.as_bytes());
    temporary.extend_from_slice(std::process::id().to_string().as_bytes());
    directory_of(destination).join(OsString::from_vec(temporary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn entries(directory: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_leaves_nothing_behind() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("old.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let output = OutputFile::check(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        let error = output
            .write(|out| {
                out.write_all(b"half")?;
                Err(io::Error::other("the run failed"))
            })
            .unwrap_err();
        assert!(error.to_string().contains("old.json"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(entries(directory.path()), ["old.json"]);
        output.write(|out| out.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(entries(directory.path()), ["old.json"]);
    }

    #[test]
    fn special_files_and_missing_directories_are_refused_before_any_io() {
        let directory = tempfile::tempdir().unwrap();
        for (path, expected) in [
            (PathBuf::from("/dev/null"), "a character device"),
            (directory.path().to_path_buf(), "a directory"),
        ] {
            let error = OutputFile::check(&path).unwrap_err();
            assert!(error.to_string().contains(expected), "{error}");
        }
        let fifo = directory.path().join("fifo");
        crate::support::devices::make_fifo(&fifo);
        let error = OutputFile::check(&fifo).unwrap_err();
        assert!(error.to_string().contains("(FIFO)"), "{error}");
        let missing = directory.path().join("no/such/dir/out.json");
        let error = OutputFile::check(&missing).unwrap_err();
        assert!(error.to_string().contains("no such directory"), "{error}");
        let dangling = directory.path().join("dangling");
        std::os::unix::fs::symlink(directory.path().join("nothing"), &dangling).unwrap();
        let error = OutputFile::check(&dangling).unwrap_err();
        assert!(matches!(error, OutputError::DanglingLink { .. }), "{error}");
        assert_eq!(entries(directory.path()), ["dangling", "fifo"]);
    }

    #[test]
    fn a_link_to_a_file_is_kept_and_its_file_replaced() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("real.json");
        let link = directory.path().join("link.json");
        std::fs::write(&file, "old").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        OutputFile::check(&link)
            .unwrap()
            .write(|out| out.write_all(b"new"))
            .unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
    }

    #[test]
    fn temporary_names_sit_beside_the_destination() {
        let pid = std::process::id();
        assert_eq!(
            temporary_path(Path::new("runs/a.json")),
            PathBuf::from(format!("runs/.a.json.iopath-tmp-{pid}"))
        );
        assert_eq!(
            temporary_path(Path::new("a.json")),
            PathBuf::from(format!("./.a.json.iopath-tmp-{pid}"))
        );
        let long = "é".repeat(127);
        let name = temporary_path(Path::new(&long));
        assert!(name.file_name().unwrap().len() < 255);
        assert!(name.to_str().is_some());
    }
}
