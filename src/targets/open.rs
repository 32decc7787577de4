//! Opening a target for a worker with the right flags.

use super::TargetError;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

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

/// Opens `path`; when O_DIRECT is refused by the filesystem (EINVAL), opens it buffered and
/// says so through `direct: false`.
///
/// The file is opened read-only or read-write (never created or truncated), close-on-exec, with
/// O_DIRECT and O_DSYNC as requested. Only regular files and block devices are accepted.
///
/// ```
/// use iopath::targets::open::{OpenRequest, open_target};
/// let path = std::env::temp_dir().join(format!("iopath-open-doc-{}", std::process::id()));
/// std::fs::write(&path, [0u8; 4096]).unwrap();
/// let request = OpenRequest { write: false, direct: false, dsync: false };
/// let opened = open_target(&path, request).unwrap();
/// assert!(!opened.direct);
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn open_target(path: &Path, request: OpenRequest) -> Result<OpenedTarget, TargetError> {
    let mut flags = libc::O_CLOEXEC;
    if request.dsync {
        flags |= libc::O_DSYNC;
    }
    let file = if request.direct {
        match open_with_flags(path, request.write, flags | libc::O_DIRECT) {
            Ok(file) => {
                return checked(path, file).map(|file| OpenedTarget { file, direct: true });
            }
            // The filesystem does not do O_DIRECT (tmpfs, some FUSE): go buffered, and say so.
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => {
                open_with_flags(path, request.write, flags)
            }
            Err(error) => Err(error),
        }
    } else {
        open_with_flags(path, request.write, flags)
    };
    let file = file.map_err(|error| open_error(path, error))?;
    checked(path, file).map(|file| OpenedTarget {
        file,
        direct: false,
    })
}

/// Opens without creating, read-only or read-write, with extra `flags`.
fn open_with_flags(path: &Path, write: bool, flags: libc::c_int) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(path)
}

/// Accepts only regular files and block devices (a directory opens read-only without error).
fn checked(path: &Path, file: File) -> Result<File, TargetError> {
    let metadata = file.metadata().map_err(|source| TargetError::Io {
        path: path.to_path_buf(),
        operation: "stat",
        source,
    })?;
    let file_type = metadata.file_type();
    if file_type.is_file() || file_type.is_block_device() {
        return Ok(file);
    }
    let what = if file_type.is_dir() {
        "is a directory"
    } else {
        "is not a regular file or a block device"
    };
    Err(TargetError::Unusable {
        path: path.to_path_buf(),
        reason: what.to_string(),
    })
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
        _ => TargetError::Io {
            path: path.to_path_buf(),
            operation: "open",
            source: error,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::test_support::LoopDevice;
    use std::os::unix::fs::FileExt;

    const READ: OpenRequest = OpenRequest {
        write: false,
        direct: false,
        dsync: false,
    };

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

    fn work_directory() -> tempfile::TempDir {
        let build_directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        if build_directory.is_dir() {
            tempfile::tempdir_in(build_directory).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        }
    }

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
        if !shm.is_dir() {
            eprintln!("note: no /dev/shm; skipping");
            return;
        }
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
}
