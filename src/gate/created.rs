//! Files and directories iopath creates, and the only removals it makes.
//!
//! [`create_new`] creates a file that must not exist (`O_EXCL`, never through a link) and
//! records its device and inode: [`remove_created`] removes a path only while it still is that
//! very file, so a file someone put in its place is left alone. A file found rather than
//! created (a test file a killed run left) is removed by [`remove_if_identical`], only while it
//! still is the regular file that was found. Directories and links are only ever created,
//! never replaced.
//!
//! ```
//! use iopath::gate::created::{NewFileAccess, create_new, remove_created};
//! let directory = tempfile::tempdir().unwrap();
//! let path = directory.path().join("scratch");
//! drop(create_new(&path, 0o600, NewFileAccess::WriteOnly).unwrap());
//! assert!(remove_created(&path).unwrap());
//! std::fs::write(&path, "not ours").unwrap();
//! assert!(!remove_created(&path).unwrap()); // another file under the same name: left alone
//! assert!(path.exists());
//! ```

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Which file a path named when it was looked at: its device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    /// Device number.
    pub device: u64,
    /// Inode number.
    pub inode: u64,
}

impl FileIdentity {
    /// The identity of the file `metadata` describes.
    pub fn of(metadata: &Metadata) -> FileIdentity {
        FileIdentity {
            device: metadata.dev(),
            inode: metadata.ino(),
        }
    }
}

/// How a new file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewFileAccess {
    /// Write only.
    WriteOnly,
    /// Read and write.
    ReadWrite,
}

/// A file this process created: where, and which one.
#[derive(Debug)]
struct CreatedFile {
    path: PathBuf,
    identity: FileIdentity,
}

/// Files this process created, the only ones [`remove_created`] may delete.
fn created_files() -> MutexGuard<'static, Vec<CreatedFile>> {
    static CREATED: OnceLock<Mutex<Vec<CreatedFile>>> = OnceLock::new();
    CREATED
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        // A panic while holding the lock leaves the list intact: keep using it.
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Creates `path`, which must not exist (a link in its place is not followed), close-on-exec,
/// with permission bits `mode` (less the umask), and records it as created by this process.
pub fn create_new(path: &Path, mode: u32, access: NewFileAccess) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(access == NewFileAccess::ReadWrite)
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(path)?;
    let identity = FileIdentity::of(&file.metadata()?);
    created_files().push(CreatedFile {
        path: path.to_path_buf(),
        identity,
    });
    Ok(file)
}

/// Creates `path` (which must not exist) holding `bytes`, readable by all (less the umask).
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = create_new(path, 0o644, NewFileAccess::WriteOnly)?;
    file.write_all(bytes)
}

/// An unnamed file in `directory` (`O_TMPFILE`), read and write: nothing is left behind when
/// it is closed. Fails where the file system has none.
pub fn unnamed_file(directory: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .mode(0o600)
        .open(directory)
}

/// Removes `path` when it is a file this process created with [`create_new`] (same path,
/// device and inode); `Ok(false)` when it is gone or not ours (then it is left alone).
pub fn remove_created(path: &Path) -> io::Result<bool> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    let identity = FileIdentity::of(&metadata);
    let is_ours = |created: &CreatedFile| created.path == path && created.identity == identity;
    if !metadata.is_file() || !created_files().iter().any(is_ours) {
        return Ok(false);
    }
    remove_existing(path)?;
    created_files().retain(|created| !is_ours(created));
    Ok(true)
}

/// Removes `path` when it still is the regular file `identity` names (not a link, same device
/// and inode); `Ok(false)`, leaving it alone, when it is anything else or gone.
pub fn remove_if_identical(path: &Path, identity: FileIdentity) -> io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_file() && FileIdentity::of(&metadata) == identity => {
            remove_existing(path)?;
            Ok(true)
        }
        Ok(_) => Ok(false),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(error),
    }
}

/// Unlinks `path`; one already gone counts as removed.
fn remove_existing(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// Creates the directory `path`, which must not exist (nothing is replaced).
pub fn create_directory(path: &Path) -> io::Result<()> {
    std::fs::create_dir(path)
}

/// Creates the directory `path` and its missing parents; existing directories are kept.
pub fn create_directories(path: &Path) -> io::Result<()> {
    std::fs::create_dir_all(path)
}

/// Creates the symbolic link `path` pointing to `target`; `path` must not exist.
pub fn create_link(target: &Path, path: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_created_file_is_removed() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("ours");
        drop(create_new(&path, 0o600, NewFileAccess::ReadWrite).unwrap());
        // Moved away and another file put under its name: the other file stays.
        std::fs::rename(&path, directory.path().join("moved")).unwrap();
        std::fs::write(&path, "foreign").unwrap();
        assert!(!remove_created(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "foreign");
        assert!(!remove_created(&directory.path().join("missing")).unwrap());
    }

    #[test]
    fn an_existing_path_or_a_link_is_never_created_through() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("file");
        std::fs::write(&file, "keep").unwrap();
        let link = directory.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        for path in [&file, &link] {
            assert!(create_new(path, 0o600, NewFileAccess::WriteOnly).is_err());
            assert!(write_new(path, b"x").is_err());
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    }

    #[test]
    fn a_found_file_is_removed_only_while_it_is_the_same() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("found");
        std::fs::write(&path, "a").unwrap();
        let identity = FileIdentity::of(&std::fs::metadata(&path).unwrap());
        std::fs::rename(&path, directory.path().join("elsewhere")).unwrap();
        std::fs::write(&path, "b").unwrap();
        assert!(!remove_if_identical(&path, identity).unwrap());
        assert!(path.exists());
        let identity = FileIdentity::of(&std::fs::metadata(&path).unwrap());
        assert!(remove_if_identical(&path, identity).unwrap());
        assert!(!path.exists());
    }
}
