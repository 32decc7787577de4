//! The C library calls of the engines, in one place: waiting on sockets (`poll`), their pending
//! error (`SO_ERROR`), scatter-gather sends and receives (`sendmsg`, `recvmsg`) and loading a
//! shared library at run time (`dlopen`, `dlsym`). Each wrapper checks the call's result and
//! returns `io::Result` with the raw OS error (or the loader's message); the `unsafe` ones say
//! what the caller must guarantee. The io_uring engine's own system calls go through the
//! io-uring crate.

use libc::{c_int, c_void};
use std::ffi::CStr;
use std::io::{self, IoSliceMut};
use std::os::fd::RawFd;
use std::time::Duration;

/// Waits until one of `fds` is ready for its events or `timeout_ms` passes (one `poll` call);
/// returns how many are ready (0: timed out). A signal ends the wait with an
/// [`io::ErrorKind::Interrupted`] error.
pub fn poll_once(fds: &mut [libc::pollfd], timeout_ms: c_int) -> io::Result<usize> {
    // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd entries.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if ready < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ready as usize)
}

/// Waits until one of `fds` is ready for its events or `timeout` passes; returns how many are
/// ready (0: timed out). Retries after signals.
pub fn poll(fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<usize> {
    let milliseconds = timeout.as_millis().min(i32::MAX as u128) as c_int;
    loop {
        match poll_once(fds, milliseconds) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// The pending error of socket `fd` (`SO_ERROR`, which reading clears), if any.
pub fn socket_error(fd: RawFd) -> Option<io::Error> {
    let mut error: c_int = 0;
    let mut length = size_of::<c_int>() as libc::socklen_t;
    // SAFETY: `error` and `length` are valid for writes of the sizes given.
    let outcome = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&raw mut error).cast(),
            &mut length,
        )
    };
    (outcome == 0 && error != 0).then(|| io::Error::from_raw_os_error(error))
}

/// Most iovecs one `sendmsg` takes (`IOV_MAX`).
pub const MAX_IOVECS: usize = 1024;

/// Sends from `iovecs` (at most [`MAX_IOVECS`] of them) on socket `fd` without blocking;
/// returns the bytes taken (0 only for empty buffers), or `WouldBlock` when the send buffer is
/// full. Never raises `SIGPIPE`; retries after signals.
///
/// # Safety
///
/// `fd` must be an open socket for the duration of the call, and every entry of `iovecs` must
/// describe memory that is valid for reads of its length for the duration of the call.
pub unsafe fn send_vectored(fd: RawFd, iovecs: &[libc::iovec]) -> io::Result<usize> {
    // SAFETY: an all-zero msghdr is valid (no address, no control data).
    let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
    message.msg_iov = iovecs.as_ptr().cast_mut();
    message.msg_iovlen = iovecs.len().min(MAX_IOVECS);
    loop {
        // SAFETY: `message` points at `iovecs`, whose memory the caller vouches for; the
        // kernel only reads it. The descriptor is open (caller).
        let sent = unsafe { libc::sendmsg(fd, &message, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
        if sent >= 0 {
            return Ok(sent as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Receives on socket `fd` into `buffers` (filled in order); with `wait`, blocks until some
/// data arrives (at most the socket's read timeout: then `WouldBlock`), else returns
/// `WouldBlock` at once when none is there. 0 means the peer closed the connection. Retries
/// after signals.
pub fn receive_vectored(
    fd: RawFd,
    buffers: &mut [IoSliceMut<'_>],
    wait: bool,
) -> io::Result<usize> {
    // SAFETY: an all-zero msghdr is valid (no address, no control data).
    let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
    // IoSliceMut is guaranteed to be ABI-compatible with iovec on Unix.
    message.msg_iov = buffers.as_mut_ptr().cast();
    message.msg_iovlen = buffers.len();
    let flags = if wait { 0 } else { libc::MSG_DONTWAIT };
    loop {
        // SAFETY: `message` describes `buffers`, which are valid for writes of their lengths
        // and exclusively borrowed for this call. A closed or foreign descriptor makes the
        // call fail (EBADF, ENOTSOCK); it cannot touch other memory.
        let received = unsafe { libc::recvmsg(fd, &mut message, flags) };
        if received >= 0 {
            return Ok(received as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// A shared library opened with `dlopen` and never closed (so that what was looked up in it
/// stays valid for the life of the process).
#[derive(Clone, Copy, Debug)]
pub struct DynamicLibrary {
    handle: *mut c_void,
}

// SAFETY: a dlopen handle may be used from any thread (the loader locks internally), and it is
// never closed.
unsafe impl Send for DynamicLibrary {}
// SAFETY: as above; lookups through a shared handle are thread-safe.
unsafe impl Sync for DynamicLibrary {}

impl DynamicLibrary {
    /// Opens `file` (resolving every symbol now, keeping them local); the loader's message
    /// when it cannot.
    pub fn open(file: &CStr) -> Result<Self, String> {
        // SAFETY: `file` is NUL-terminated; dlopen runs the library's initialisers, which is
        // what opening a library means.
        let handle = unsafe { libc::dlopen(file.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(last_loader_error());
        }
        Ok(DynamicLibrary { handle })
    }

    /// The address of `name` as a value of type `T` (a function pointer), `None` when the
    /// library lacks it.
    ///
    /// # Safety
    ///
    /// `T` must be a function pointer type matching the C declaration of `name`.
    pub unsafe fn symbol<T: Copy>(&self, name: &CStr) -> Option<T> {
        const { assert!(size_of::<T>() == size_of::<*mut c_void>()) };
        // SAFETY: the handle is live (never closed) and `name` is NUL-terminated.
        let address = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        if address.is_null() {
            return None;
        }
        // SAFETY: the address is non-null and, per the caller, of a function with type `T`;
        // both are pointer-sized.
        Some(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&address) })
    }
}

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

/// The text of the last `dlopen`/`dlsym` failure of this thread.
fn last_loader_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the next dl call on
    // this thread; it is copied at once.
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: non-null, NUL-terminated (see above).
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_socket_pair_sends_receives_and_polls() {
        let (left, right) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut fds = [libc::pollfd {
            fd: right.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        assert_eq!(poll(&mut fds, Duration::from_millis(1)).unwrap(), 0);
        let data = *b"hello";
        let iovec = libc::iovec {
            iov_base: data.as_ptr().cast_mut().cast(),
            iov_len: data.len(),
        };
        // SAFETY: the socket is open and `data` outlives the call.
        assert_eq!(
            unsafe { send_vectored(left.as_raw_fd(), &[iovec]) }.unwrap(),
            5
        );
        assert_eq!(poll(&mut fds, Duration::from_secs(5)).unwrap(), 1);
        let mut received = [0u8; 8];
        let read = receive_vectored(
            right.as_raw_fd(),
            &mut [IoSliceMut::new(&mut received)],
            true,
        )
        .unwrap();
        assert_eq!(&received[..read], b"hello");
        assert!(socket_error(left.as_raw_fd()).is_none());
        let empty = receive_vectored(
            right.as_raw_fd(),
            &mut [IoSliceMut::new(&mut received)],
            false,
        );
        assert_eq!(empty.unwrap_err().kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn a_missing_library_is_named_by_the_loader() {
        let error = DynamicLibrary::open(c"libiopath-not-here.so.0").unwrap_err();
        assert!(error.contains("libiopath-not-here.so.0"), "{error}");
    }
}
