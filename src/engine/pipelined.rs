//! What the pipelined protocol engines (NFS, SMB) do alike on their socket: send a batch of
//! queued requests without ever blocking on a full send buffer, and receive more bytes within
//! the network timeout — or, once the run stops, within [`STOP_GRACE`]; and connect.

use super::sys;
use super::volume::STOP_GRACE;
use super::{EngineError, IoRequest, StopSignal};
use std::io::{self, IoSliceMut};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Connects to `host:port` within `timeout`, with `TCP_NODELAY` and read and write timeouts
/// of `timeout` (the NFS client crate's, which needs it for its portmapper and MOUNT calls).
pub use nfs_client::rpc::connect;

/// Sends all of `bytes` on the socket `fd` without blocking; while the socket takes no more,
/// calls `on_readable` each time a reply can be read (so a server that answers before it
/// reads on cannot deadlock against the sender). Fails with `TimedOut` ("took no request and
/// sent no reply for …"; the caller names the server) when neither happens for `timeout`.
pub fn send_all(
    fd: RawFd,
    bytes: &[u8],
    timeout: Duration,
    mut on_readable: impl FnMut() -> io::Result<()>,
) -> io::Result<()> {
    let mut sent = 0;
    while sent < bytes.len() {
        let rest = &bytes[sent..];
        let iovec = libc::iovec {
            iov_base: rest.as_ptr().cast_mut().cast(),
            iov_len: rest.len(),
        };
        // SAFETY: the caller's socket is open for the call, and `iovec` describes `rest`,
        // borrowed for the call.
        match unsafe { sys::send_vectored(fd, &[iovec]) } {
            Ok(taken) => sent += taken,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                let mut fds = [libc::pollfd {
                    fd,
                    events: libc::POLLIN | libc::POLLOUT,
                    revents: 0,
                }];
                if sys::poll(&mut fds, timeout)? == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("took no request and sent no reply for {timeout:?}"),
                    ));
                }
                if fds[0].revents & libc::POLLIN != 0 {
                    on_readable()?;
                }
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Receives into `buffer` from the socket `fd` (whose read timeout is a short slice), waiting
/// until some bytes arrive, `server` made no progress for `timeout`, or `stop` was raised
/// and it then had [`STOP_GRACE`]; returns how many arrived. Errors name `server`.
pub fn receive_some(
    fd: RawFd,
    buffer: &mut [u8],
    timeout: Duration,
    stop: &StopSignal,
    server: &str,
) -> io::Result<usize> {
    receive_some_vectored(fd, &mut [IoSliceMut::new(buffer)], timeout, stop, server)
}

/// [`receive_some`] into several buffers in turn (one `recvmsg`): the first is filled before
/// the second takes any byte. None may be empty all together.
pub fn receive_some_vectored(
    fd: RawFd,
    buffers: &mut [IoSliceMut<'_>],
    timeout: Duration,
    stop: &StopSignal,
    server: &str,
) -> io::Result<usize> {
    let started = Instant::now();
    loop {
        let wait = if stop.is_raised() {
            STOP_GRACE.min(timeout)
        } else {
            timeout
        };
        match sys::receive_vectored(fd, buffers, true) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{server} closed the connection"),
                ));
            }
            Ok(received) => return Ok(received),
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if started.elapsed() >= wait {
                    let why = if stop.is_raised() {
                        "the run stopped and "
                    } else {
                        ""
                    };
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("{why}{server} sent no reply within {wait:?}"),
                    ));
                }
            }
            Err(error) => return Err(io::Error::new(error.kind(), format!("{server}: {error}"))),
        }
    }
}

/// Names `server` in a [`send_all`] error: a timeout, or a connection the server reset or
/// closed while requests were being sent (an error that names it already is left as it is).
pub fn name_server(error: io::Error, server: &str) -> io::Error {
    if error.to_string().contains(server) {
        error
    } else if error.kind() == io::ErrorKind::TimedOut {
        io::Error::new(error.kind(), format!("{server} {error}"))
    } else {
        io::Error::new(error.kind(), format!("{server}: {error}"))
    }
}

/// Refuses `request` when its slot is not one of `slot_count`, is busy, or has a buffer
/// shorter than the request; `slot` is the named slot's `(busy, buffer bytes)` when it exists.
pub fn check_request(
    engine: &'static str,
    request: &IoRequest,
    slot_count: usize,
    slot: Option<(bool, usize)>,
) -> Result<(), EngineError> {
    let problem = match slot {
        None => format!("slot {} of {slot_count}", request.slot),
        Some((true, _)) => format!("slot {} is busy", request.slot),
        Some((false, buffer)) if request.length as usize > buffer => {
            format!("{} bytes in a {buffer}-byte slot", request.length)
        }
        Some(_) => return Ok(()),
    };
    Err(EngineError::Operation {
        engine,
        operation: "submit",
        source: io::Error::new(io::ErrorKind::InvalidInput, problem),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_send_error_names_the_server_once() {
        let server = "127.0.0.1:445";
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        let named = name_server(reset, server);
        assert_eq!(named.kind(), io::ErrorKind::ConnectionReset);
        assert!(named.to_string().starts_with("127.0.0.1:445: "), "{named}");
        let again = name_server(named, server);
        assert_eq!(again.to_string().matches(server).count(), 1, "{again}");
        let slow = name_server(
            io::Error::new(io::ErrorKind::TimedOut, "took no data"),
            server,
        );
        assert_eq!(slow.to_string(), "127.0.0.1:445 took no data");
    }
}
