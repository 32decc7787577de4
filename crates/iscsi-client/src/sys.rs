//! The C library calls of the event loop: waiting on the session sockets (`poll`) and a
//! socket's pending error (`SO_ERROR`). Each wrapper checks the call's result and returns the
//! raw OS error.

use libc::c_int;
use std::io;
use std::os::fd::RawFd;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_ready_socket_is_seen_and_has_no_pending_error() {
        let (mut left, right) = UnixStream::pair().unwrap();
        let mut fds = [libc::pollfd {
            fd: right.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        assert_eq!(poll_once(&mut fds, 0).unwrap(), 0, "nothing sent yet");
        left.write_all(b"x").unwrap();
        assert_eq!(poll_once(&mut fds, 5000).unwrap(), 1);
        assert!(socket_error(left.as_raw_fd()).is_none());
    }
}
