//! The C library calls under a connection: waiting on sockets (`poll`), scatter-gather
//! sends and receives (`sendmsg`, `recvmsg`) and the bytes a socket holds unread (`FIONREAD`). Each wrapper checks the call's result and
//! returns `io::Result` with the raw OS error; the `unsafe` one says what the caller must
//! guarantee.

use libc::c_int;
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

/// The bytes that arrived on socket `fd` and were not read yet (`ioctl(FIONREAD)`, the
/// kernel's `SIOCINQ` on a stream socket). A pipelined engine that has the completions it was
/// asked for reads on only when a whole reply is waiting, not when its first bytes are: a
/// large reply takes the link its own time to arrive, and the requests it answered are waiting
/// for their slots.
pub fn unread_bytes(fd: RawFd) -> io::Result<usize> {
    let mut unread: c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which points to `unread`, live for
    // the call; a closed or foreign descriptor makes the call fail without touching memory.
    let outcome = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut unread) };
    if outcome < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unread.max(0) as usize)
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
        let sent = unsafe { send_vectored(left.as_raw_fd(), &[iovec]) }.unwrap();
        assert_eq!(sent, 5);
        assert_eq!(poll(&mut fds, Duration::from_secs(5)).unwrap(), 1);
        assert_eq!(unread_bytes(right.as_raw_fd()).unwrap(), 5);
        let mut received = [0u8; 8];
        let read = receive_vectored(
            right.as_raw_fd(),
            &mut [IoSliceMut::new(&mut received)],
            true,
        )
        .unwrap();
        assert_eq!(&received[..read], b"hello");
        let empty = receive_vectored(
            right.as_raw_fd(),
            &mut [IoSliceMut::new(&mut received)],
            false,
        );
        assert_eq!(empty.unwrap_err().kind(), io::ErrorKind::WouldBlock);
    }
}
