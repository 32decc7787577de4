//! The C library calls of the engines, in one place: waiting on sockets (`poll`), their pending
//! error (`SO_ERROR`), scatter-gather sends and receives (`sendmsg`, `recvmsg`: those three
//! from the `nbd-client` crate, whose connections need them too), loading a
//! shared library at run time (`dlopen`, `dlsym`: crates/iscsi-client), and the sync engine's other data paths (a
//! shared file mapping: `mmap`, `msync`; a pipe: `pipe2`, `splice`, `vmsplice`). Each wrapper checks the call's result and
//! returns `io::Result` with the raw OS error (or the loader's message); the `unsafe` ones say
//! what the caller must guarantee. The io_uring engine's own system calls go through the
//! io-uring crate.

use libc::{c_int, c_void};
use std::io;
use std::os::fd::RawFd;

// The socket calls (`poll`, gathering `sendmsg`, scattering `recvmsg`) are the NBD client's
// (crates/nbd-client/src/sys.rs), shared by every pipelined engine.
pub use nbd_client::sys::{
    MAX_IOVECS, poll, poll_once, receive_vectored, send_vectored, unread_bytes,
};

/// `BLKDISCARD` (`_IO(0x12, 119)` in `<linux/fs.h>`): discard a byte range of a block device.
pub const BLKDISCARD: libc::c_ulong = 0x1277;

/// Discards `length` bytes at `offset` of the block device open as `fd` (`BLKDISCARD`; both
/// multiples of its logical block size). The descriptor must be open for writing. A `length`
/// of 0 is refused by the kernel with `EINVAL` after it checked that the device can discard at
/// all (`EOPNOTSUPP` when it cannot), which makes it a probe that changes nothing.
pub fn discard(fd: RawFd, offset: u64, length: u64) -> io::Result<()> {
    let range: [u64; 2] = [offset, length];
    // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer, which points to
    // `range`, live for the call.
    let outcome = unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) };
    if outcome < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Punches a hole of `length` bytes at `offset` into the file open as `fd`, keeping its size
/// (`fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)`): its blocks are freed and the range
/// reads back as zeroes. `EOPNOTSUPP` where the file system cannot.
pub fn punch_hole(fd: RawFd, offset: u64, length: u64) -> io::Result<()> {
    let (Ok(offset), Ok(length)) = (i64::try_from(offset), i64::try_from(length)) else {
        return Err(io::Error::from_raw_os_error(libc::EFBIG));
    };
    // SAFETY: fallocate takes no pointers; a bad descriptor or range is an error return.
    let outcome = unsafe { libc::fallocate(fd, PUNCH_HOLE_MODE, offset, length) };
    if outcome < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The `fallocate` mode of a trim on a file: free the range, keep the size.
pub const PUNCH_HOLE_MODE: c_int = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;

/// The size of the file or block device open as `fd` (`lseek(fd, 0, SEEK_END)`; the
/// descriptor's offset moves, which positioned I/O does not use).
pub fn end_offset(fd: RawFd) -> io::Result<u64> {
    // SAFETY: plain syscall with integer arguments.
    let end = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
    if end < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(end as u64)
}

/// A shared memory mapping of a file, unmapped on drop.
pub struct SharedMap {
    address: *mut u8,
    length: usize,
    writable: bool,
}

// SAFETY: the mapping is plain memory owned by this value; moving it to another thread moves
// the only handle to it.
unsafe impl Send for SharedMap {}

impl SharedMap {
    /// Maps `length` bytes of `fd` from offset 0, shared: read-write, or read-only when the
    /// descriptor is not open for writing.
    pub fn new(fd: RawFd, length: usize) -> io::Result<SharedMap> {
        let map = |protection: c_int| {
            // SAFETY: a new mapping at an address the kernel picks; no existing memory is
            // touched, and the result is checked before use.
            let address = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    length,
                    protection,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if address == libc::MAP_FAILED {
                Err(io::Error::last_os_error())
            } else {
                Ok(address.cast::<u8>())
            }
        };
        match map(libc::PROT_READ | libc::PROT_WRITE) {
            Ok(address) => Ok(SharedMap {
                address,
                length,
                writable: true,
            }),
            Err(error) if error.raw_os_error() == Some(libc::EACCES) => Ok(SharedMap {
                address: map(libc::PROT_READ)?,
                length,
                writable: false,
            }),
            Err(error) => Err(error),
        }
    }

    /// Mapped bytes.
    pub fn len(&self) -> usize {
        self.length
    }

    /// Whether nothing is mapped (never: a mapping has at least one byte).
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// The mapped bytes. Reading a page the file cannot supply raises `SIGBUS`.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `address` maps `length` readable bytes for as long as `self` lives; the
        // shared slice borrows `self`.
        unsafe { std::slice::from_raw_parts(self.address, self.length) }
    }

    /// The mapped bytes for writing, when the mapping is writable.
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        // SAFETY: as in `bytes`, and the mapping is writable; the slice borrows `self`
        // exclusively.
        self.writable
            .then(|| unsafe { std::slice::from_raw_parts_mut(self.address, self.length) })
    }

    /// Writes the dirty pages back and waits (`msync(MS_SYNC)`).
    pub fn sync(&self) -> io::Result<()> {
        self.sync_range(0, self.length)
    }

    /// Writes the dirty pages of `length` bytes from `offset` back and waits (`msync(MS_SYNC)`
    /// on the pages that hold them; a range past the mapping is cut at its end).
    pub fn sync_range(&self, offset: usize, length: usize) -> io::Result<()> {
        let page = page_size();
        let start = (offset / page * page).min(self.length);
        let end = offset.saturating_add(length).min(self.length);
        if end <= start {
            return Ok(());
        }
        // SAFETY: `start` is page-aligned and `start..end` lies within this mapping, which
        // stays mapped while `self` lives.
        let result = unsafe {
            libc::msync(
                self.address.add(start).cast::<c_void>(),
                end - start,
                libc::MS_SYNC,
            )
        };
        if result != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// The size of a memory page here, bytes (4096 when the system does not say).
fn page_size() -> usize {
    // SAFETY: sysconf reads a system constant and touches no memory of ours.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&size| size > 0)
        .unwrap_or(4096)
}

/// Whether `fd` was opened with `O_DIRECT` (`fcntl(F_GETFL)`; false when that fails).
pub fn opened_direct(fd: RawFd) -> bool {
    // SAFETY: F_GETFL reads the descriptor's status flags and touches no memory of ours.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    flags >= 0 && flags & libc::O_DIRECT != 0
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: the range is exactly this mapping, and no slice of it outlives `self`.
        unsafe {
            libc::munmap(self.address.cast::<c_void>(), self.length);
        }
    }
}

/// A new pipe (close-on-exec): its read end and its write end.
pub fn pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nothing else.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

/// Asks the pipe `fd` to hold `bytes` (`F_SETPIPE_SZ`); returns the capacity it has now.
pub fn set_pipe_capacity(fd: RawFd, bytes: usize) -> io::Result<usize> {
    let wanted = c_int::try_from(bytes).unwrap_or(c_int::MAX);
    // SAFETY: plain syscall with integer arguments.
    let capacity = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, wanted) };
    if capacity < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(capacity as usize)
}

/// `splice(2)` of up to `length` bytes at `offset` of the file `file` into the pipe `pipe`;
/// returns the bytes moved (0 at the end of the file).
pub fn splice_from_file(file: RawFd, offset: u64, pipe: RawFd, length: usize) -> io::Result<usize> {
    splice(file, Some(offset), pipe, None, length)
}

/// `splice(2)` of up to `length` bytes from the pipe `pipe` to `offset` of the file `file`;
/// returns the bytes moved.
pub fn splice_to_file(pipe: RawFd, file: RawFd, offset: u64, length: usize) -> io::Result<usize> {
    splice(pipe, None, file, Some(offset), length)
}

/// `splice(2)` of up to `length` bytes from `input` to `output`, each at its offset when it is
/// a file (`None` for the pipe end); retried after signals.
fn splice(
    input: RawFd,
    input_offset: Option<u64>,
    output: RawFd,
    output_offset: Option<u64>,
    length: usize,
) -> io::Result<usize> {
    let offset = |at: Option<u64>| {
        at.map(libc::loff_t::try_from)
            .transpose()
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
    };
    let (mut input_at, mut output_at) = (offset(input_offset)?, offset(output_offset)?);
    let pointer = |at: &mut Option<libc::loff_t>| {
        at.as_mut()
            .map_or(std::ptr::null_mut(), |value| value as *mut libc::loff_t)
    };
    loop {
        // SAFETY: each offset pointer is null or points to a loff_t that lives across the
        // call, which may update it; the other arguments are descriptors and integers.
        let moved = unsafe {
            libc::splice(
                input,
                pointer(&mut input_at),
                output,
                pointer(&mut output_at),
                length,
                libc::SPLICE_F_MOVE,
            )
        };
        if moved >= 0 {
            return Ok(moved as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// `vmsplice(2)` of `buffer` into the pipe `pipe` (its pages referenced, not gifted); returns
/// the bytes queued. The caller must not change `buffer` until they have been spliced out.
pub fn vmsplice(pipe: RawFd, buffer: &[u8]) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: buffer.as_ptr().cast_mut().cast::<c_void>(),
        iov_len: buffer.len(),
    };
    loop {
        // SAFETY: `iov` describes `buffer`, which the kernel only reads (no SPLICE_F_GIFT).
        let queued = unsafe { libc::vmsplice(pipe, &iov, 1, 0) };
        if queued >= 0 {
            return Ok(queued as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Reads exactly `buffer.len()` bytes from `fd` (a pipe holding at least that much).
pub fn read_exact(fd: RawFd, buffer: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buffer.len() {
        // SAFETY: the destination is the unfilled rest of `buffer`.
        let read = unsafe {
            libc::read(
                fd,
                buffer[done..].as_mut_ptr().cast::<c_void>(),
                buffer.len() - done,
            )
        };
        match read {
            0 => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
            n if n > 0 => done += n as usize,
            _ => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
    Ok(())
}
