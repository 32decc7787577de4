//! Thin, checked wrappers around the few system calls the target module needs (statfs, statvfs,
//! statx, block-device ioctls, extended attributes, fallocate). Each returns `io::Result` with
//! the raw OS error, so callers can name the path and the operation.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::discovery::sysfs::DeviceNumber;

/// `BLKGETSIZE64` = `_IOR(0x12, 114, size_t)`: the size of a block device in bytes.
#[cfg(not(any(
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "sparc",
    target_arch = "sparc64"
)))]
const BLKGETSIZE64: libc::Ioctl =
    ((2u32 << 30) | ((size_of::<usize>() as u32) << 16) | (0x12 << 8) | 114) as libc::Ioctl;

/// `BLKGETSIZE64` on architectures whose ioctl encoding puts the direction at bit 29.
#[cfg(any(
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "sparc",
    target_arch = "sparc64"
))]
const BLKGETSIZE64: libc::Ioctl =
    ((2u32 << 29) | ((size_of::<usize>() as u32) << 16) | (0x12 << 8) | 114) as libc::Ioctl;

/// `path` as a C string; a path with an interior NUL is an `InvalidInput` error.
pub(super) fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// The filesystem magic number (`f_type`) of the filesystem holding the open `file`.
pub(super) fn filesystem_magic(file: &File) -> io::Result<u32> {
    let mut buffer = MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: the descriptor is open for the duration of the call and `buffer` is a writable
    // statfs.
    let result = unsafe { libc::fstatfs(file.as_raw_fd(), buffer.as_mut_ptr()) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatfs succeeded and filled the structure (it was zeroed before, too).
    let buffer = unsafe { buffer.assume_init() };
    // f_type is a signed word; the magic numbers are 32-bit values.
    Ok(buffer.f_type as u32)
}

/// Bytes available to an unprivileged user on the filesystem holding `path`
/// (`f_bavail * f_frsize`).
pub(super) fn available_bytes(path: &Path) -> io::Result<u64> {
    Ok(space(path)?.available)
}

/// Bytes available on the filesystem holding `path`, or `None` where the filesystem keeps no
/// count at all (no blocks in total, as ramfs reports): nothing can be said about room there.
pub(super) fn counted_available_bytes(path: &Path) -> io::Result<Option<u64>> {
    let space = space(path)?;
    Ok((space.total_blocks > 0).then_some(space.available))
}

/// What `statvfs` says about the room on a filesystem.
struct Space {
    /// Blocks in total (`f_blocks`); 0 on filesystems that count nothing.
    total_blocks: u64,
    /// Bytes available to an unprivileged user (`f_bavail * f_frsize`).
    available: u64,
}

fn space(path: &Path) -> io::Result<Space> {
    let c_path = c_path(path)?;
    let mut buffer = MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c_path` is a valid NUL-terminated string and `buffer` is a writable statvfs.
    let result = unsafe { libc::statvfs(c_path.as_ptr(), buffer.as_mut_ptr()) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs succeeded and filled the structure.
    let buffer = unsafe { buffer.assume_init() };
    // The fields are 32-bit on some targets, 64-bit here.
    #[allow(clippy::useless_conversion)]
    Ok(Space {
        total_blocks: u64::from(buffer.f_blocks),
        available: u64::from(buffer.f_bavail).saturating_mul(u64::from(buffer.f_frsize)),
    })
}

/// Whether a process (or thread) `pid` exists: `kill(pid, 0)`, which sends nothing, fails
/// with ESRCH only when there is none (EPERM means one exists under another user). The same
/// answer as looking for `/proc/PID`, without needing /proc. `pid` must be above 0.
pub(super) fn process_exists(pid: i32) -> bool {
    debug_assert!(pid > 0, "kill(0 or -1) would ask about a group");
    // SAFETY: signal 0 delivers nothing; kill only checks that `pid` exists and may be
    // signalled. A positive pid names one process, never a group.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// What one `statx` of a path (links followed) says about the file it names: enough to tell
/// its kind, identity and size, and the alignment O_DIRECT needs on it, without opening it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathStat {
    /// `st_mode`: the file type and permission bits.
    pub mode: u32,
    /// `st_dev`: the filesystem holding the inode.
    pub filesystem: DeviceNumber,
    /// `st_ino`.
    pub inode: u64,
    /// `st_rdev`: the device a device node stands for.
    pub device: DeviceNumber,
    /// `st_size`, bytes.
    pub size_bytes: u64,
    /// `st_blksize`: the filesystem's preferred I/O size, bytes.
    pub preferred_io_bytes: u32,
    /// The offset alignment O_DIRECT needs (`STATX_DIOALIGN`); `None` when not reported.
    pub direct_io_alignment: Option<u32>,
    /// `st_blocks` × 512: the bytes the filesystem allocated to it.
    pub allocated_bytes: u64,
}

impl PathStat {
    /// Whether it is a regular file.
    pub fn is_file(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFREG
    }

    /// Whether it is a block device.
    pub fn is_block_device(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFBLK
    }

    /// Whether it is a character device.
    pub fn is_char_device(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFCHR
    }
}

/// One `statx` of `path`, following links, asking for the basic facts and the O_DIRECT
/// alignment together (see [`PathStat`]).
pub fn stat_path(path: &Path) -> io::Result<PathStat> {
    let c_path = c_path(path)?;
    let mut buffer = MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: `c_path` is a valid NUL-terminated string, relative paths are taken from the
    // working directory (AT_FDCWD), and `buffer` is a writable statx structure.
    let result = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c_path.as_ptr(),
            libc::AT_STATX_SYNC_AS_STAT,
            libc::STATX_BASIC_STATS | libc::STATX_DIOALIGN,
            buffer.as_mut_ptr(),
        )
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statx succeeded and filled the structure (zeroed before, so unset fields are 0).
    let buffer = unsafe { buffer.assume_init() };
    let direct_io_alignment = (buffer.stx_mask & libc::STATX_DIOALIGN != 0
        && buffer.stx_dio_offset_align != 0)
        .then_some(buffer.stx_dio_offset_align);
    Ok(PathStat {
        mode: u32::from(buffer.stx_mode),
        filesystem: DeviceNumber {
            major: buffer.stx_dev_major,
            minor: buffer.stx_dev_minor,
        },
        inode: buffer.stx_ino,
        device: DeviceNumber {
            major: buffer.stx_rdev_major,
            minor: buffer.stx_rdev_minor,
        },
        size_bytes: buffer.stx_size,
        preferred_io_bytes: buffer.stx_blksize,
        direct_io_alignment,
        allocated_bytes: buffer.stx_blocks.saturating_mul(512),
    })
}

/// The offset/length alignment O_DIRECT needs on the open `file`, from
/// `statx(STATX_DIOALIGN)` on the descriptor. `None` when the kernel or filesystem does not
/// report it (or reports 0: O_DIRECT unsupported).
pub(super) fn direct_io_alignment(file: &File) -> Option<u32> {
    let mut buffer = MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: the empty path is a valid NUL-terminated string; with AT_EMPTY_PATH statx looks
    // at the open descriptor itself, and `buffer` is a writable statx structure.
    let result = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH | libc::AT_STATX_SYNC_AS_STAT,
            libc::STATX_DIOALIGN,
            buffer.as_mut_ptr(),
        )
    };
    if result != 0 {
        return None;
    }
    // SAFETY: statx succeeded and filled the structure (zeroed before, so unset fields are 0).
    let buffer = unsafe { buffer.assume_init() };
    if buffer.stx_mask & libc::STATX_DIOALIGN == 0 || buffer.stx_dio_offset_align == 0 {
        return None;
    }
    Some(buffer.stx_dio_offset_align)
}

/// Size of the block device open as `file`, bytes (`BLKGETSIZE64`).
pub(super) fn block_device_size(file: &File) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points to `size`.
    let result = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Logical block (sector) size of the block device open as `file` (`BLKSSZGET`).
pub(super) fn logical_block_size(file: &File) -> io::Result<u32> {
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which points to `size`.
    let result = unsafe { libc::ioctl(file.as_raw_fd(), libc::BLKSSZGET, &mut size as *mut _) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size as u32)
}

/// Physical block size of the block device open as `file` (`BLKPBSZGET`).
pub(super) fn physical_block_size(file: &File) -> io::Result<u32> {
    let mut size: libc::c_uint = 0;
    // SAFETY: BLKPBSZGET writes one unsigned int through the pointer, which points to `size`.
    let result = unsafe { libc::ioctl(file.as_raw_fd(), libc::BLKPBSZGET, &mut size as *mut _) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Sets the extended attribute `name` of the open `file` to `value`.
pub(super) fn set_xattr(file: &File, name: &str, value: &[u8]) -> io::Result<()> {
    let name = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in attribute name"))?;
    // SAFETY: `name` is NUL-terminated; `value` is valid for `value.len()` bytes; the fd is
    // open for the duration of the call.
    let result = unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads the extended attribute `name` of `path` (following symlinks), at most 64 bytes.
/// `Ok(None)` when the attribute is absent.
pub(super) fn get_xattr(path: &Path, name: &str) -> io::Result<Option<Vec<u8>>> {
    let c_path = c_path(path)?;
    read_xattr(name, |name, value, size| {
        // SAFETY: both strings are NUL-terminated; `value` is writable for `size` bytes.
        unsafe { libc::getxattr(c_path.as_ptr(), name, value, size) }
    })
}

/// Reads the extended attribute `name` of the open `file`, at most 64 bytes. `Ok(None)` when
/// the attribute is absent.
pub(super) fn get_xattr_of(file: &File, name: &str) -> io::Result<Option<Vec<u8>>> {
    read_xattr(name, |name, value, size| {
        // SAFETY: `name` is NUL-terminated; `value` is writable for `size` bytes; the fd is
        // open for the duration of the call.
        unsafe { libc::fgetxattr(file.as_raw_fd(), name, value, size) }
    })
}

/// Runs one `getxattr`-like `call` with `name` and a 64-byte buffer; `Ok(None)` on ENODATA.
fn read_xattr(
    name: &str,
    call: impl FnOnce(*const libc::c_char, *mut libc::c_void, usize) -> isize,
) -> io::Result<Option<Vec<u8>>> {
    let name = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in attribute name"))?;
    let mut value = [0u8; 64];
    let length = call(name.as_ptr(), value.as_mut_ptr().cast(), value.len());
    if length < 0 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::ENODATA) {
            return Ok(None);
        }
        return Err(error);
    }
    Ok(Some(value[..length as usize].to_vec()))
}

/// Reserves `length` bytes for `file` (`fallocate` mode 0), setting its size. Filesystems
/// that cannot preallocate report `EOPNOTSUPP`, which the caller may ignore.
pub(super) fn preallocate(file: &File, length: u64) -> io::Result<()> {
    fallocate(file, 0, length)
}

/// Reserves `length` bytes for `file` leaving its size as it is (`fallocate` with
/// `FALLOC_FL_KEEP_SIZE`). Filesystems that cannot preallocate report `EOPNOTSUPP`.
pub(super) fn preallocate_keeping_size(file: &File, length: u64) -> io::Result<()> {
    fallocate(file, libc::FALLOC_FL_KEEP_SIZE, length)
}

/// `fallocate(file, mode, 0, length)`; nothing for a length of 0.
fn fallocate(file: &File, mode: libc::c_int, length: u64) -> io::Result<()> {
    if length == 0 {
        return Ok(());
    }
    let length = libc::off_t::try_from(length)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "size too large"))?;
    // SAFETY: plain syscall on an open fd with integer arguments.
    let result = unsafe { libc::fallocate(file.as_raw_fd(), mode, 0, length) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `posix_fallocate(file, 0, length)`: reserves the blocks and sets the size; where the file
/// system cannot preallocate, the C library writes a zero into every block instead.
pub(super) fn posix_preallocate(file: &File, length: u64) -> io::Result<()> {
    if length == 0 {
        return Ok(());
    }
    let length = libc::off_t::try_from(length)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "size too large"))?;
    // SAFETY: plain library call on an open fd with integer arguments; it returns the error
    // number rather than setting errno.
    match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, length) } {
        0 => Ok(()),
        error => Err(io::Error::from_raw_os_error(error)),
    }
}

/// Asks the kernel to drop `file`'s clean cached pages, so a test does not start with the
/// whole file in the page cache. Advisory: failures are ignored.
pub(super) fn drop_cached_pages(file: &File) {
    let _ = fadvise(file, 0, 0, libc::POSIX_FADV_DONTNEED);
}

/// `posix_fadvise(file, offset, length, advice)` (`length` 0: to the end of the file); the
/// error as the kernel gives it.
pub(super) fn fadvise(
    file: &File,
    offset: u64,
    length: u64,
    advice: libc::c_int,
) -> io::Result<()> {
    let (Ok(offset), Ok(length)) = (libc::off_t::try_from(offset), libc::off_t::try_from(length))
    else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    // SAFETY: plain syscall on an open fd with integer arguments.
    let result = unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, length, advice) };
    // posix_fadvise returns the error number instead of setting errno.
    if result != 0 {
        return Err(io::Error::from_raw_os_error(result));
    }
    Ok(())
}

/// Starts writing back `length` bytes of `file` from `offset` (`sync_file_range`), and with
/// `wait` waits for that range to be written first. Bounds how much of a file being filled
/// sits dirty in the page cache, so the final fsync stays short. Advisory: failures are
/// ignored (the final fsync reports real I/O errors).
pub(super) fn write_back_range(file: &File, offset: u64, length: u64, wait: bool) {
    let (Ok(offset), Ok(length)) = (
        libc::off64_t::try_from(offset),
        libc::off64_t::try_from(length),
    ) else {
        return;
    };
    let flags = if wait {
        libc::SYNC_FILE_RANGE_WAIT_BEFORE
            | libc::SYNC_FILE_RANGE_WRITE
            | libc::SYNC_FILE_RANGE_WAIT_AFTER
    } else {
        libc::SYNC_FILE_RANGE_WRITE
    };
    // SAFETY: plain syscall on an open fd with integer arguments; the result is advisory.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, length, flags);
    }
}

/// Clears `O_NONBLOCK` on the open `file`.
pub(super) fn clear_nonblocking(file: &File) -> io::Result<()> {
    // SAFETY: F_GETFL and F_SETFL take and return plain integers on a descriptor that stays
    // open for the duration of both calls.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
