//! Opening a target: once, for every check, and again for each worker through that same
//! descriptor.
//!
//! A local target is opened once ([`TargetHandle::open`], or [`TargetHandle::from_created`]
//! for a file iopath just made). Its type, its inspection ([`super::info`]) and the safety rules
//! ([`super::safety`]) all look at that open descriptor, and every descriptor a worker gets is
//! a re-open of the same file through `/proc/self/fd/N` ([`TargetHandle::reopen`]), never a new
//! lookup of the path. Each re-open is compared with the identity the checks saw (device, inode,
//! type, device number) and refused on a mismatch. A path renamed, removed or replaced (by a
//! symlink to a device, say) while iopath runs therefore changes nothing: iopath keeps working
//! on the file or device it checked, and never follows the path again.
//!
//! A regular file of a job that holds a bounded number of files open at once (fio's
//! `openfiles`) is the exception: its handle gives its descriptor back once the checks are done
//! ([`TargetHandle::without_descriptor`]), so that 100 000 files do not need 100 000
//! descriptors. Each re-open then follows the path, after and before comparing what it finds
//! with the checked identity: a path renamed, removed or replaced is refused
//! ([`TargetError::Changed`] or [`TargetError::Missing`]), never worked on. Such a file on a
//! filesystem whose facts are known from an earlier file is checked without being opened at
//! all ([`TargetHandle::look_sharing`]): one `statx` of its path, as fio looks at the files of
//! a job.
//!
//! ```
//! use iopath::targets::open::{OpenRequest, TargetHandle};
//! let path = std::env::temp_dir().join(format!("iopath-open-doc-{}", std::process::id()));
//! std::fs::write(&path, [0u8; 4096]).unwrap();
//! let handle = TargetHandle::open(&path).unwrap();
//! std::fs::remove_file(&path).unwrap(); // the path is gone; the checked file is not
//! let request = OpenRequest { write: true, direct: false, dsync: false };
//! let opened = handle.reopen(request).unwrap();
//! assert_eq!(opened.file.metadata().unwrap().len(), 4096);
//! ```

use super::filesystem_cache::FilesystemCache;
use super::sys::{self, PathStat};
use super::test_file::read_ownership_mark;
use super::{TargetError, info};
use crate::discovery::sysfs::DeviceNumber;
use crate::result::{AccessHint, CreatedContent, TargetInfo};
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenRequest {
    /// Open read-write (else read-only).
    pub write: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// O_DSYNC.
    pub dsync: bool,
}

/// An open target, and whether O_DIRECT is in effect.
#[derive(Debug)]
pub struct OpenedTarget {
    /// The open file.
    pub file: File,
    /// O_DIRECT was asked for and granted.
    pub direct: bool,
}

/// What tells one file or block device from any other: its inode, and for a device node the
/// device it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    /// `st_dev`: the filesystem holding the inode.
    pub filesystem: DeviceNumber,
    /// `st_ino`.
    pub inode: u64,
    /// `st_rdev` of a block-device node: the device it stands for (`None` for a regular file).
    pub block_device: Option<DeviceNumber>,
}

impl FileIdentity {
    /// The identity in `metadata` (from `fstat`).
    pub fn of(metadata: &Metadata) -> Self {
        FileIdentity {
            filesystem: DeviceNumber::from_dev_t(metadata.dev()),
            inode: metadata.ino(),
            block_device: metadata
                .file_type()
                .is_block_device()
                .then(|| DeviceNumber::from_dev_t(metadata.rdev())),
        }
    }
}

impl std::fmt::Display for FileIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.block_device {
            Some(device) => write!(
                f,
                "block device {device} (node inode {} on {})",
                self.inode, self.filesystem
            ),
            None => write!(f, "file inode {} on {}", self.inode, self.filesystem),
        }
    }
}

/// Why a block device cannot be claimed exclusively.
pub const DEVICE_BUSY: &str =
    "the device is busy (claimed by a mount, RAID, device-mapper or another program)";

/// A local target opened once and checked on that descriptor; see the module documentation.
#[derive(Debug)]
pub struct TargetHandle {
    /// The path as the user gave it (for messages).
    path: PathBuf,
    /// The descriptor every check and every re-open goes through; `None` once given back
    /// ([`TargetHandle::without_descriptor`]).
    file: Option<File>,
    /// What the checks saw.
    identity: FileIdentity,
    /// What inspection found, through `file`.
    info: TargetInfo,
    /// An exclusive claim on a block device, held while iopath writes it.
    claim: OnceLock<File>,
}

impl TargetHandle {
    /// Opens `path` (a regular file or a block device) read-only and inspects it through the
    /// open descriptor.
    ///
    /// The path is looked at before it is opened, so that a directory, a character device or
    /// a pipe is refused without opening it (opening some devices has effects); the decision
    /// is then taken again on the open descriptor, which is what counts.
    pub fn open(path: &Path) -> Result<Self, TargetError> {
        Self::open_sharing(path, &FilesystemCache::default())
    }

    /// [`TargetHandle::open`], taking what files on one filesystem share from `cache` (looked
    /// up at its first file): a job of many files on one filesystem reads sysfs and the mount
    /// table once, not once per file.
    pub fn open_sharing(path: &Path, cache: &FilesystemCache) -> Result<Self, TargetError> {
        let metadata = std::fs::metadata(path).map_err(|error| info::stat_error(path, error))?;
        info::check_kind(path, &metadata)?;
        // Non-blocking, so that a pipe put in the path meanwhile cannot hang the open; the
        // type is checked on the descriptor before anything is read.
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(|error| open_error(path, error))?;
        let metadata = described(path, &file)?;
        sys::clear_nonblocking(&file).map_err(|source| TargetError::Io {
            path: path.to_path_buf(),
            operation: "fcntl",
            source,
        })?;
        Self::inspected(path, file, &metadata, cache)
    }

    /// The handle of the regular file at `path` that gives its descriptor back once checked
    /// ([`TargetHandle::without_descriptor`]), from `stat`, one `statx` of `path` the caller
    /// took (and used for its other decisions): on a filesystem `cache` knows, such a file is
    /// checked without being opened, as fio looks at an existing file of a job. Its kind,
    /// identity, size and O_DIRECT alignment come from `stat`, whether iopath created it from
    /// its extended attribute (read through the path), the rest from `cache`. Every later
    /// open compares what it finds with the identity in `stat`, so a path replaced meanwhile
    /// is refused, never worked on. Anything else (the first file of a filesystem, a block
    /// device, a path that is not a regular file) is opened and inspected as
    /// [`TargetHandle::open_sharing`] does.
    pub fn look_sharing(
        path: &Path,
        stat: &PathStat,
        cache: &FilesystemCache,
    ) -> Result<Self, TargetError> {
        Self::look_sharing_marked(path, stat, None, cache)
    }

    /// [`TargetHandle::look_sharing`] with the file's ownership mark already read through
    /// its path along with `stat` ([`TargetHandle::read_mark`]) when `mark` holds it; read
    /// now otherwise.
    pub fn look_sharing_marked(
        path: &Path,
        stat: &PathStat,
        mark: Option<std::io::Result<bool>>,
        cache: &FilesystemCache,
    ) -> Result<Self, TargetError> {
        let shared = cache.known(stat.filesystem).filter(|_| stat.is_file());
        let Some(shared) = shared else {
            return Self::open_sharing(path, cache);
        };
        // Reading the mark needs read permission, as the check's open did: a file the user
        // cannot read is refused here, before the run, not by the worker's open.
        let created_by_iopath = mark
            .unwrap_or_else(|| read_ownership_mark(path))
            .map_err(|error| open_error(path, error))?;
        let own = info::OwnFileFacts {
            size_bytes: stat.size_bytes,
            preferred_io_bytes: stat.preferred_io_bytes,
            direct_io_alignment: stat.direct_io_alignment,
            created_by_iopath,
            allocated_bytes: Some(stat.allocated_bytes),
        };
        Ok(TargetHandle {
            path: path.to_path_buf(),
            file: None,
            identity: FileIdentity {
                filesystem: stat.filesystem,
                inode: stat.inode,
                block_device: None,
            },
            info: info::file_info(path, own, shared),
            claim: OnceLock::new(),
        })
    }

    /// The ownership mark of the file at `path`, read through the path as
    /// [`TargetHandle::look_sharing`] reads it: whether iopath created it, or the error that
    /// refuses it (gone, or not readable: a user extended attribute needs read permission).
    pub fn read_mark(path: &Path) -> std::io::Result<bool> {
        read_ownership_mark(path)
    }

    /// Takes the file iopath has just created at `path` and still holds open as `file`; what
    /// files on one filesystem share comes from `cache` (see [`TargetHandle::open_sharing`]).
    pub fn from_created(
        path: &Path,
        file: File,
        cache: &FilesystemCache,
    ) -> Result<Self, TargetError> {
        let metadata = described(path, &file)?;
        Self::inspected(path, file, &metadata, cache)
    }

    /// The handle of `file` (`metadata` from its `fstat`), inspected through it.
    fn inspected(
        path: &Path,
        file: File,
        metadata: &Metadata,
        cache: &FilesystemCache,
    ) -> Result<Self, TargetError> {
        let info = info::inspect_open(path, &file, metadata, cache)?;
        Ok(TargetHandle {
            path: path.to_path_buf(),
            identity: FileIdentity::of(metadata),
            file: Some(file),
            info,
            claim: OnceLock::new(),
        })
    }

    /// The handle of a file iopath has just created for the run, holding `content`, with its
    /// size taken as at least `planned_size_bytes`: a file created empty, or with its size
    /// kept at 0, is extended by the job's writes up to that size (fio's `create_on_open`,
    /// `fallocate=none` or `keep`).
    pub fn created_with(mut self, content: CreatedContent, planned_size_bytes: u64) -> Self {
        self.info.size_bytes = self.info.size_bytes.max(planned_size_bytes);
        self.info.created_content = Some(content);
        self
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What inspection found.
    pub fn info(&self) -> &TargetInfo {
        &self.info
    }

    /// The identity every re-open must match.
    pub fn identity(&self) -> FileIdentity {
        self.identity
    }

    /// The checked descriptor (read-only), for reading the target's first bytes; `None` once
    /// given back (regular files only).
    pub fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    /// The handle of a regular file without its descriptor, once every check is done: each
    /// re-open then follows the path and is refused unless it finds the checked file (see the
    /// module documentation). A block device keeps its descriptor.
    pub fn without_descriptor(mut self) -> Self {
        if self.identity.block_device.is_none() && self.claim.get().is_none() {
            self.file = None;
        }
        self
    }

    /// Whether the handle holds its descriptor.
    pub fn holds_descriptor(&self) -> bool {
        self.file.is_some()
    }

    /// A new descriptor on the checked file with the flags of `request`; when O_DIRECT is
    /// refused by the filesystem (EINVAL), a buffered one, said through `direct: false`.
    ///
    /// The descriptor is opened read-only or read-write (never created or truncated),
    /// close-on-exec, with O_DIRECT and O_DSYNC as requested, through `/proc/self/fd/N` of the
    /// checked descriptor (through the path, where /proc is not mounted), and refused with
    /// [`TargetError::Changed`] unless it is the file the checks saw.
    pub fn reopen(&self, request: OpenRequest) -> Result<OpenedTarget, TargetError> {
        reopen_checked(&self.path, self.identity, request, |write, flags| {
            self.reopen_with(write, flags)
        })
    }

    /// What re-opens this file by its path (see [`TargetHandle::without_descriptor`]),
    /// without the rest of the handle: a worker that opens its files as it comes to them
    /// keeps one of these per file.
    pub fn checked_path(&self) -> CheckedPath {
        CheckedPath {
            path: self.path.clone(),
            identity: self.identity,
        }
    }

    /// Claims the block device exclusively (`O_EXCL`) and holds the claim as long as this
    /// handle lives, so that nothing can mount or claim it while iopath writes. Refused with
    /// [`TargetError::WriteRefused`] ([`DEVICE_BUSY`]) while anything else holds such a claim:
    /// a mount (in any namespace), RAID, device-mapper or another program. Claiming again is a
    /// no-op.
    pub fn claim_exclusive(&self) -> Result<(), TargetError> {
        if self.claim.get().is_none() {
            let claim = self.open_exclusive()?;
            let _ = self.claim.set(claim);
        }
        Ok(())
    }

    /// Whether nothing else holds an exclusive claim on the block device right now (always
    /// true while this handle holds one itself): [`TargetError::WriteRefused`] otherwise.
    pub fn check_not_claimed_by_others(&self) -> Result<(), TargetError> {
        if self.claim.get().is_none() {
            drop(self.open_exclusive()?);
        }
        Ok(())
    }

    /// An exclusive (`O_EXCL`) descriptor on the checked block device.
    fn open_exclusive(&self) -> Result<File, TargetError> {
        let file = self
            .reopen_with(false, libc::O_CLOEXEC | libc::O_EXCL)
            .map_err(|error| match error.raw_os_error() {
                Some(libc::EBUSY) => TargetError::WriteRefused {
                    path: self.path.clone(),
                    reason: DEVICE_BUSY.to_string(),
                },
                _ => open_error(&self.path, error),
            })?;
        Ok(self.verified(file, false)?.file)
    }

    /// Opens the checked file again, through its descriptor where /proc allows.
    fn reopen_with(&self, write: bool, flags: libc::c_int) -> io::Result<File> {
        let Some(file) = &self.file else {
            return reopen_by_path(&self.path, self.identity, write, flags);
        };
        let through_descriptor = format!("/proc/self/fd/{}", file.as_raw_fd());
        match open_with_flags(Path::new(&through_descriptor), write, flags) {
            Err(error)
                if error.raw_os_error() == Some(libc::ENOENT)
                    && !Path::new("/proc/self/fd").is_dir() =>
            {
                // No /proc: the path it is, and the identity check below guards it.
                open_with_flags(&self.path, write, flags)
            }
            other => other,
        }
    }

    /// `file` as an [`OpenedTarget`] when it is the checked file; [`TargetError::Changed`]
    /// otherwise.
    fn verified(&self, file: File, direct: bool) -> Result<OpenedTarget, TargetError> {
        verified(&self.path, self.identity, file, direct)
    }
}

/// A checked regular file known by its path and identity, holding no descriptor: re-opened by
/// the path, and only when the path still names the checked file (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct CheckedPath {
    path: PathBuf,
    identity: FileIdentity,
}

impl CheckedPath {
    /// A new descriptor on the checked file with the flags of `request`, as
    /// [`TargetHandle::reopen`] gives; [`TargetError::Changed`] when the path names another
    /// file now.
    pub fn reopen(&self, request: OpenRequest) -> Result<OpenedTarget, TargetError> {
        reopen_checked(&self.path, self.identity, request, |write, flags| {
            reopen_by_path(&self.path, self.identity, write, flags)
        })
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A descriptor with the flags of `request` from `open` (given read-write or not, and the
/// flags), checked to be the file of `identity`; buffered where O_DIRECT is refused.
fn reopen_checked(
    path: &Path,
    identity: FileIdentity,
    request: OpenRequest,
    open: impl Fn(bool, libc::c_int) -> io::Result<File>,
) -> Result<OpenedTarget, TargetError> {
    let mut flags = libc::O_CLOEXEC;
    if request.dsync {
        flags |= libc::O_DSYNC;
    }
    if request.direct {
        match open(request.write, flags | libc::O_DIRECT) {
            Ok(file) => return verified(path, identity, file, true),
            // The filesystem does not do O_DIRECT (tmpfs, some FUSE): go buffered, and say so.
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => {}
            Err(error) => return Err(open_error(path, error)),
        }
    }
    let file = open(request.write, flags).map_err(|error| open_error(path, error))?;
    verified(path, identity, file, false)
}

/// Opens `path` again (a file without its checked descriptor): only when it still names the
/// file of `identity`, so that nothing else (a device, a pipe put in its place) is opened; the
/// caller compares the opened file's identity again.
fn reopen_by_path(
    path: &Path,
    identity: FileIdentity,
    write: bool,
    flags: libc::c_int,
) -> io::Result<File> {
    let found = std::fs::metadata(path).map(|metadata| FileIdentity::of(&metadata))?;
    if found != identity {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it was {identity} when checked and is now {found}"),
        ));
    }
    open_with_flags(path, write, flags | libc::O_NOCTTY)
}

/// `file` as an [`OpenedTarget`] when it is the file of `identity`; [`TargetError::Changed`]
/// otherwise.
fn verified(
    path: &Path,
    identity: FileIdentity,
    file: File,
    direct: bool,
) -> Result<OpenedTarget, TargetError> {
    let metadata = file.metadata().map_err(|source| TargetError::Io {
        path: path.to_path_buf(),
        operation: "stat",
        source,
    })?;
    let found = FileIdentity::of(&metadata);
    if found != identity {
        return Err(TargetError::Changed {
            path: path.to_path_buf(),
            reason: format!("it was {identity} when checked and is now {found}"),
        });
    }
    Ok(OpenedTarget { file, direct })
}

/// `fstat` of the open `file`, which must be a regular file or a block device.
fn described(path: &Path, file: &File) -> Result<Metadata, TargetError> {
    let metadata = file.metadata().map_err(|source| TargetError::Io {
        path: path.to_path_buf(),
        operation: "stat",
        source,
    })?;
    info::check_kind(path, &metadata)?;
    Ok(metadata)
}

/// Opens without creating, read-only or read-write, with extra `flags`.
fn open_with_flags(path: &Path, write: bool, flags: libc::c_int) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(path)
}

/// Maps an open error to a [`TargetError`] naming `path`.
fn open_error(path: &Path, error: io::Error) -> TargetError {
    match error.raw_os_error() {
        Some(libc::ENOENT) => TargetError::Missing {
            path: path.to_path_buf(),
        },
        Some(libc::EISDIR) => TargetError::Unusable {
            path: path.to_path_buf(),
            reason: "is a directory".to_string(),
        },
        Some(libc::EACCES | libc::EPERM) => TargetError::Unusable {
            path: path.to_path_buf(),
            reason: format!("permission denied ({error})"),
        },
        // The path names another file now (see `reopen_by_path`).
        None if error.kind() == io::ErrorKind::InvalidData => TargetError::Changed {
            path: path.to_path_buf(),
            reason: error.to_string(),
        },
        _ => TargetError::Io {
            path: path.to_path_buf(),
            operation: "open",
            source: error,
        },
    }
}

/// Inspects `path` without writing anything.
///
/// A regular file is described by its own size and by the filesystem and block device holding
/// it; a block device by its size, block sizes and whatever signature (filesystem, partition
/// table, swap, LVM…) sits at its start. Anything else (a directory, a character device, a
/// socket) is [`TargetError::Unusable`]; a path that does not exist is
/// [`TargetError::Missing`].
///
/// ```
/// use iopath::result::TargetKind;
/// use iopath::targets::inspect;
/// let directory = std::env::temp_dir().join(format!("iopath-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&directory).unwrap();
/// let path = directory.join("file");
/// std::fs::write(&path, vec![0u8; 8192]).unwrap();
/// let info = inspect(&path).unwrap();
/// assert_eq!(info.kind, TargetKind::File);
/// assert_eq!(info.size_bytes, 8192);
/// assert!(!info.created_by_iopath);
/// assert!(inspect(&directory).is_err());
/// std::fs::remove_dir_all(&directory).unwrap();
/// ```
pub fn inspect(path: &Path) -> Result<TargetInfo, TargetError> {
    TargetHandle::open(path).map(|handle| handle.info().clone())
}

/// Gives the kernel `hint` for `length` bytes of `file` from `offset` (`posix_fadvise`; fio's
/// `fadvise_hint`), `random` saying whether the job's offsets are random (for
/// [`AccessHint::ByPattern`]). The advice holds for this open file description only, so each
/// worker gives it on its own descriptor.
pub fn advise_access(
    file: &File,
    offset: u64,
    length: u64,
    hint: AccessHint,
    random: bool,
) -> io::Result<()> {
    let advice = match hint {
        AccessHint::None => return Ok(()),
        AccessHint::ByPattern if random => libc::POSIX_FADV_RANDOM,
        AccessHint::ByPattern | AccessHint::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        AccessHint::Normal => libc::POSIX_FADV_NORMAL,
        AccessHint::Random => libc::POSIX_FADV_RANDOM,
    };
    sys::fadvise(file, offset, length, advice)
}

/// Drops the clean cached pages of `length` bytes of `file` from `offset` and starts writing
/// back its dirty ones (`POSIX_FADV_DONTNEED`), as fio's `invalidate=1` does for each file of
/// a job before it starts; no root needed and nothing else's cache touched.
pub fn invalidate_cached_range(file: &File, offset: u64, length: u64) -> io::Result<()> {
    sys::fadvise(file, offset, length, libc::POSIX_FADV_DONTNEED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::devices::LoopDevice;
    use std::os::unix::fs::FileExt;

    const READ: OpenRequest = OpenRequest {
        write: false,
        direct: false,
        dsync: false,
    };

    /// Opens `path` once and re-opens it with `request`, as a worker gets its descriptor.
    fn open_target(path: &Path, request: OpenRequest) -> Result<OpenedTarget, TargetError> {
        TargetHandle::open(path)?.reopen(request)
    }

    /// The open flags of `file`, from /proc/self/fdinfo (octal).
    fn open_flags(file: &File) -> libc::c_int {
        use std::os::fd::AsRawFd;
        let text =
            std::fs::read_to_string(format!("/proc/self/fdinfo/{}", file.as_raw_fd())).unwrap();
        let flags = text
            .lines()
            .find_map(|line| line.strip_prefix("flags:"))
            .unwrap()
            .trim();
        libc::c_int::from_str_radix(flags, 8).unwrap()
    }

    use crate::support::devices::disk_tempdir as work_directory;

    #[test]
    fn read_only_and_read_write_with_flags() {
        let directory = work_directory();
        let path = directory.path().join("data");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();

        let opened = open_target(&path, READ).unwrap();
        assert!(!opened.direct);
        let flags = open_flags(&opened.file);
        assert_eq!(flags & libc::O_ACCMODE, libc::O_RDONLY);
        assert_ne!(flags & libc::O_CLOEXEC, 0);
        assert_eq!(flags & (libc::O_DIRECT | libc::O_DSYNC), 0);
        assert!(opened.file.write_at(b"x", 0).is_err());

        let request = OpenRequest {
            write: true,
            direct: false,
            dsync: true,
        };
        let opened = open_target(&path, request).unwrap();
        let flags = open_flags(&opened.file);
        assert_eq!(flags & libc::O_ACCMODE, libc::O_RDWR);
        assert_eq!(flags & libc::O_DSYNC, libc::O_DSYNC);
        opened.file.write_at(b"x", 0).unwrap();
        // Never truncated.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8192);
    }

    #[test]
    fn direct_io_on_a_disk_filesystem() {
        let directory = work_directory();
        let path = directory.path().join("data");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let request = OpenRequest {
            write: true,
            direct: true,
            dsync: false,
        };
        let opened = open_target(&path, request).unwrap();
        let flags = open_flags(&opened.file);
        assert_eq!(opened.direct, flags & libc::O_DIRECT != 0);
        if crate::targets::inspect(&path)
            .unwrap()
            .filesystem
            .is_some_and(|name| name.starts_with("ext"))
        {
            assert!(opened.direct, "ext4 takes O_DIRECT");
        }
    }

    #[test]
    fn direct_io_on_tmpfs_is_reported_as_granted_or_not() {
        // tmpfs refused O_DIRECT before Linux 6.6 and accepts it since: either way the answer
        // must match what the kernel did.
        let shm = Path::new("/dev/shm");
        crate::support::skip_unless!(shm.is_dir(), "no /dev/shm (a tmpfs) here");
        let directory = tempfile::tempdir_in(shm).unwrap();
        let path = directory.path().join("data");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let request = OpenRequest {
            write: true,
            direct: true,
            dsync: false,
        };
        let opened = open_target(&path, request).unwrap();
        assert_eq!(
            opened.direct,
            open_flags(&opened.file) & libc::O_DIRECT != 0
        );
    }

    #[test]
    fn direct_io_refused_falls_back_to_buffered() {
        // procfs files refuse O_DIRECT with EINVAL, as ramfs and old tmpfs do.
        let path = Path::new("/proc/self/status");
        let request = OpenRequest {
            write: false,
            direct: true,
            dsync: false,
        };
        let opened = open_target(path, request).unwrap();
        assert!(!opened.direct);
        assert_eq!(open_flags(&opened.file) & libc::O_DIRECT, 0);
    }

    #[test]
    fn direct_io_on_ramfs_falls_back_to_buffered() {
        let Some(mounted) = crate::targets::test_support::Mounted::ramfs() else {
            return;
        };
        let path = mounted.path().join("data");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let request = OpenRequest {
            write: true,
            direct: true,
            dsync: true,
        };
        let opened = open_target(&path, request).unwrap();
        assert!(!opened.direct);
        let flags = open_flags(&opened.file);
        assert_eq!(flags & libc::O_DIRECT, 0);
        assert_eq!(flags & libc::O_DSYNC, libc::O_DSYNC);
        assert_eq!(flags & libc::O_ACCMODE, libc::O_RDWR);
    }

    #[test]
    fn errors_name_the_path() {
        let directory = work_directory();
        let missing = directory.path().join("missing");
        let error = open_target(&missing, READ).unwrap_err();
        assert!(matches!(error, TargetError::Missing { .. }));
        assert!(error.to_string().contains("missing"));

        let error = open_target(directory.path(), READ).unwrap_err();
        assert!(error.to_string().contains("is a directory"), "{error}");
        let write = OpenRequest {
            write: true,
            ..READ
        };
        let error = open_target(directory.path(), write).unwrap_err();
        assert!(error.to_string().contains("is a directory"), "{error}");

        let error = open_target(Path::new("/dev/null"), READ).unwrap_err();
        assert!(matches!(error, TargetError::Unusable { .. }), "{error}");
    }

    #[test]
    fn a_loop_device_opens_direct() {
        let Some(loop_device) = LoopDevice::attach_zeroed(16) else {
            return;
        };
        let request = OpenRequest {
            write: true,
            direct: true,
            dsync: false,
        };
        let opened = open_target(loop_device.path(), request).unwrap();
        assert!(opened.direct);
    }

    #[test]
    fn reopens_reach_the_checked_file_whatever_the_path_does() {
        let directory = work_directory();
        let path = directory.path().join("data");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let handle = TargetHandle::open(&path).unwrap();
        // Renamed away, and a different file put in its place.
        std::fs::rename(&path, directory.path().join("moved")).unwrap();
        std::fs::write(&path, vec![1u8; 100]).unwrap();
        let request = OpenRequest {
            write: true,
            direct: false,
            dsync: false,
        };
        let opened = handle.reopen(request).unwrap();
        opened.file.write_at(b"checked", 0).unwrap();
        assert_eq!(opened.file.metadata().unwrap().len(), 8192);
        assert!(
            std::fs::read(directory.path().join("moved"))
                .unwrap()
                .starts_with(b"checked")
        );
        assert_eq!(std::fs::read(&path).unwrap(), vec![1u8; 100]);
        // Removed altogether: the open file lives on.
        std::fs::remove_file(directory.path().join("moved")).unwrap();
        let opened = handle.reopen(READ).unwrap();
        assert_eq!(opened.file.metadata().unwrap().len(), 8192);
    }

    #[test]
    fn a_descriptor_of_another_file_is_refused_naming_both() {
        let directory = work_directory();
        let (first, second) = (directory.path().join("a"), directory.path().join("b"));
        std::fs::write(&first, [0u8; 512]).unwrap();
        std::fs::write(&second, [0u8; 512]).unwrap();
        let handle = TargetHandle::open(&first).unwrap();
        let error = handle
            .verified(File::open(&second).unwrap(), false)
            .unwrap_err();
        assert!(matches!(error, TargetError::Changed { .. }), "{error}");
        let message = error.to_string();
        let inode = |path: &Path| std::fs::metadata(path).unwrap().ino();
        assert!(
            message.contains(&format!("inode {}", inode(&first))),
            "{message}"
        );
        assert!(
            message.contains(&format!("inode {}", inode(&second))),
            "{message}"
        );
        assert!(
            message.contains("changed since it was checked"),
            "{message}"
        );
    }

    #[test]
    fn an_exclusive_claim_keeps_others_from_claiming_the_device() {
        let Some(loop_device) = LoopDevice::attach_zeroed(16) else {
            return;
        };
        let handle = TargetHandle::open(loop_device.path()).unwrap();
        assert!(handle.identity().block_device.is_some());
        handle.claim_exclusive().unwrap();
        let exclusive = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(loop_device.path());
        assert_eq!(
            exclusive.unwrap_err().raw_os_error(),
            Some(libc::EBUSY),
            "a second exclusive open must fail while the claim is held"
        );
        // Workers still get their (non-exclusive) descriptors.
        let request = OpenRequest {
            write: true,
            direct: true,
            dsync: false,
        };
        handle.reopen(request).unwrap();
        let other = TargetHandle::open(loop_device.path()).unwrap();
        let error = other.claim_exclusive().unwrap_err();
        assert!(error.to_string().contains("busy"), "{error}");
        drop(handle);
        other.claim_exclusive().unwrap();
    }

    /// Pages of `path` in the page cache, as util-linux's fincore counts them.
    fn cached_pages(path: &Path) -> Option<u64> {
        let output = std::process::Command::new("fincore")
            .args(["--bytes", "--noheadings", "--output", "PAGES"])
            .arg(path)
            .output()
            .ok()?;
        String::from_utf8_lossy(&output.stdout).trim().parse().ok()
    }

    #[test]
    fn invalidating_a_files_region_drops_its_cached_pages_and_hints_are_taken() {
        if !crate::support::require(
            crate::support::devices::tool("fincore").is_some(),
            "fincore (util-linux) is not installed",
        ) {
            return;
        }
        let dir = crate::support::devices::disk_tempdir();
        let path = dir.path().join("cached.bin");
        std::fs::write(&path, vec![7u8; 16 << 20]).unwrap();
        let file = File::open(&path).unwrap();
        file.sync_all().unwrap();
        let mut whole = vec![0u8; 16 << 20];
        file.read_exact_at(&mut whole, 0).unwrap();
        let Some(before) = cached_pages(&path) else {
            crate::support::skip("fincore cannot count this file's pages");
            return;
        };
        assert!(
            before >= 3000,
            "the file was read into the cache ({before} pages)"
        );
        invalidate_cached_range(&file, 0, 16 << 20).unwrap();
        let after = cached_pages(&path).unwrap();
        assert!(
            after * 2 < before,
            "the file's cached pages were dropped: {before} → {after} pages"
        );
        for hint in [
            AccessHint::None,
            AccessHint::ByPattern,
            AccessHint::Normal,
            AccessHint::Sequential,
            AccessHint::Random,
        ] {
            for random in [false, true] {
                advise_access(&file, 0, 16 << 20, hint, random).unwrap();
            }
        }
    }

    #[test]
    fn a_handle_without_its_descriptor_reopens_only_the_checked_file() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("file");
        std::fs::write(&path, [1u8; 4096]).unwrap();
        let handle = TargetHandle::open(&path).unwrap().without_descriptor();
        assert!(!handle.holds_descriptor());
        let checked = handle.checked_path();
        let mut byte = [0u8; 1];
        handle
            .reopen(READ)
            .unwrap()
            .file
            .read_exact_at(&mut byte, 0)
            .unwrap();
        assert_eq!(byte, [1]);
        checked.reopen(READ).unwrap();
        // Another file under the same name is refused, never opened (the checked one is kept
        // under another name, so that its inode cannot be the new file's).
        std::fs::rename(&path, directory.path().join("moved")).unwrap();
        std::fs::write(&path, [2u8; 4096]).unwrap();
        for refused in [handle.reopen(READ), checked.reopen(READ)] {
            assert!(
                matches!(refused, Err(TargetError::Changed { .. })),
                "{refused:?}"
            );
        }
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(
            checked.reopen(READ),
            Err(TargetError::Missing { .. })
        ));
    }

    #[test]
    fn a_block_device_keeps_its_descriptor() {
        let Some(device) = LoopDevice::attach_zeroed(1) else {
            return;
        };
        let handle = TargetHandle::open(device.path())
            .unwrap()
            .without_descriptor();
        assert!(handle.holds_descriptor());
    }

    #[test]
    fn a_file_on_a_known_filesystem_is_checked_from_one_look_as_if_opened() {
        let directory = tempfile::tempdir().unwrap();
        let cache = FilesystemCache::default();
        let first = directory.path().join("first");
        let second = directory.path().join("second");
        std::fs::write(&first, [1u8; 4096]).unwrap();
        std::fs::write(&second, [2u8; 8192]).unwrap();
        let look = |path: &Path| sys::stat_path(path).unwrap();
        // The first file of a filesystem is opened, and its facts kept for the others.
        let opened = TargetHandle::look_sharing(&first, &look(&first), &cache).unwrap();
        assert!(opened.holds_descriptor());
        let looked = TargetHandle::look_sharing(&second, &look(&second), &cache).unwrap();
        assert!(!looked.holds_descriptor());
        let alone = TargetHandle::open(&second).unwrap();
        assert_eq!(looked.info(), alone.info());
        assert_eq!(looked.identity(), alone.identity());
        looked.reopen(READ).unwrap();
        // Replaced after its look: refused, never opened.
        let stale = look(&second);
        std::fs::rename(&second, directory.path().join("moved")).unwrap();
        std::fs::write(&second, [3u8; 8192]).unwrap();
        let replaced = TargetHandle::look_sharing(&second, &stale, &cache).unwrap();
        assert!(matches!(
            replaced.reopen(READ),
            Err(TargetError::Changed { .. })
        ));
        // Gone after its look: refused before the run, as the check's open refused it.
        std::fs::remove_file(&second).unwrap();
        assert!(matches!(
            TargetHandle::look_sharing(&second, &stale, &cache),
            Err(TargetError::Missing { .. })
        ));
    }
}
