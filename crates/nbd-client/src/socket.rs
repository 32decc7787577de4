//! The byte stream under one NBD connection: a TCP or Unix-domain socket, connected with a
//! timeout, with `TCP_NODELAY` on TCP, plus the three system calls the transmission phase
//! needs: `sendmsg` (gathering, never blocking, never raising `SIGPIPE`), `recvmsg`
//! (scattering, blocking or not) and `poll`.
//!
//! The socket stays in blocking mode: a blocking receive is one system call (no `poll` first),
//! bounded by `SO_RCVTIMEO` = [`WAIT_SLICE`], after which the caller looks at its deadline and
//! at the run's stop signal and waits again; every send passes `MSG_DONTWAIT`, so a full send
//! buffer is reported instead of waited on (the caller then reads replies so the server can go
//! on).
//!
//! The handshake reads and writes through a [`DeadlineStream`]: one deadline for the whole
//! handshake, however the server spreads its bytes out, and an end as soon as the caller's
//! stop flag is raised.

use crate::sys;
use std::fmt;
use std::io::{self, IoSliceMut, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wire_text::format_wait;

/// Longest single blocking wait on a server: a stop is seen within this, and a deadline is
/// overrun by at most this.
pub const WAIT_SLICE: Duration = Duration::from_millis(100);

/// Why a wait on the server ended without what was waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WaitEnded {
    /// The deadline passed.
    #[error("no reply within {}", format_wait(*timeout))]
    TimedOut {
        /// The whole time allowed.
        timeout: Duration,
    },
    /// The caller's stop flag was raised.
    #[error("the run is stopping")]
    Stopped,
}

impl WaitEnded {
    /// As an [`io::Error`] (kind `TimedOut` or `ConnectionAborted`) that carries this value.
    pub fn into_io(self) -> io::Error {
        let kind = match self {
            WaitEnded::TimedOut { .. } => io::ErrorKind::TimedOut,
            WaitEnded::Stopped => io::ErrorKind::ConnectionAborted,
        };
        io::Error::new(kind, self)
    }

    /// The wait that ended with `error`, when that is what `error` is.
    pub fn of(error: &io::Error) -> Option<WaitEnded> {
        error.get_ref()?.downcast_ref::<WaitEnded>().copied()
    }
}

/// `now + wait`, or a far-off instant when that cannot be represented.
pub fn later(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365))
}

/// A connected stream socket.
#[derive(Debug)]
pub enum Socket {
    /// TCP.
    Tcp(TcpStream),
    /// Unix domain.
    Unix(UnixStream),
}

/// Where an NBD server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerAddress {
    /// TCP: a host name or address (IPv6 without brackets) and a port (NBD's is 10809).
    Tcp {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
    },
    /// A Unix-domain socket.
    Unix(PathBuf),
}

/// Where the server is, in words: `HOST:PORT` (`[V6]:PORT`) or `socket PATH`.
impl fmt::Display for ServerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerAddress::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            ServerAddress::Tcp { host, port } => write!(f, "{host}:{port}"),
            ServerAddress::Unix(path) => write!(f, "socket {}", path.display()),
        }
    }
}

impl Socket {
    /// Connects to `server`, trying every address a host name resolves to until
    /// `deadline`; sets `TCP_NODELAY` on TCP.
    pub fn connect(server: &ServerAddress, deadline: Instant) -> io::Result<Socket> {
        match server {
            ServerAddress::Unix(path) => UnixStream::connect(path).map(Socket::Unix),
            ServerAddress::Tcp { host, port } => {
                let mut last_error = None;
                for resolved in (host.as_str(), *port).to_socket_addrs()? {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    match TcpStream::connect_timeout(&resolved, left) {
                        Ok(stream) => {
                            stream.set_nodelay(true)?;
                            return Ok(Socket::Tcp(stream));
                        }
                        Err(error) => last_error = Some(error),
                    }
                }
                Err(last_error.unwrap_or_else(|| {
                    if Instant::now() >= deadline {
                        io::Error::from(io::ErrorKind::TimedOut)
                    } else {
                        io::Error::new(io::ErrorKind::NotFound, "the host name has no address")
                    }
                }))
            }
        }
    }

    /// Bounds every blocking receive by `read` and every blocking send by `write`.
    pub fn set_timeouts(&self, read: Duration, write: Duration) -> io::Result<()> {
        match self {
            Socket::Tcp(stream) => {
                stream.set_read_timeout(Some(read))?;
                stream.set_write_timeout(Some(write))
            }
            Socket::Unix(stream) => {
                stream.set_read_timeout(Some(read))?;
                stream.set_write_timeout(Some(write))
            }
        }
    }

    /// Sends from `iovecs` without blocking; returns the bytes taken (0 only for empty
    /// buffers), or `WouldBlock` when the send buffer is full. Never raises `SIGPIPE`.
    ///
    /// # Safety
    ///
    /// Every entry of `iovecs` must describe memory that is valid for reads of its length
    /// for the duration of the call.
    pub unsafe fn send_vectored(&self, iovecs: &[libc::iovec]) -> io::Result<usize> {
        // SAFETY: the descriptor is open for as long as `self` lives; the caller vouches for
        // the memory of `iovecs`.
        unsafe { sys::send_vectored(self.as_raw_fd(), iovecs) }
    }

    /// Receives into `buffers` (filled in order); with `wait`, blocks until some data arrives
    /// (at most the read timeout: then `WouldBlock`), else returns `WouldBlock` at once when
    /// none is there. 0 means the server closed the connection.
    pub fn receive_vectored(
        &self,
        buffers: &mut [IoSliceMut<'_>],
        wait: bool,
    ) -> io::Result<usize> {
        sys::receive_vectored(self.as_raw_fd(), buffers, wait)
    }

    /// Shuts down the sending direction (the server sees the end of the stream).
    pub fn shutdown_write(&self) {
        let _ = match self {
            Socket::Tcp(stream) => stream.shutdown(std::net::Shutdown::Write),
            Socket::Unix(stream) => stream.shutdown(std::net::Shutdown::Write),
        };
    }
}

/// A connected socket whose reads and writes share one deadline and end when a stop flag is
/// raised: however a server spreads its bytes out, the whole exchange ends by the deadline
/// (overrun by at most [`WAIT_SLICE`]). A wait that ends early fails with a [`WaitEnded`]
/// inside the [`io::Error`].
pub struct DeadlineStream<'a> {
    socket: &'a mut Socket,
    deadline: Instant,
    timeout: Duration,
    stop: &'a AtomicBool,
}

impl<'a> DeadlineStream<'a> {
    /// Reads and writes on `socket` until `started + timeout`, or until `stop` is set.
    pub fn new(
        socket: &'a mut Socket,
        started: Instant,
        timeout: Duration,
        stop: &'a AtomicBool,
    ) -> io::Result<Self> {
        socket.set_timeouts(WAIT_SLICE, WAIT_SLICE)?;
        Ok(DeadlineStream {
            socket,
            deadline: later(started, timeout),
            timeout,
            stop,
        })
    }

    /// Fails when the stop flag is set or the deadline has passed.
    fn check(&self) -> io::Result<()> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(WaitEnded::Stopped.into_io());
        }
        if Instant::now() >= self.deadline {
            return Err(WaitEnded::TimedOut {
                timeout: self.timeout,
            }
            .into_io());
        }
        Ok(())
    }
}

/// Whether `error` only says that one slice of waiting ended.
fn slice_ended(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl Read for DeadlineStream<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        loop {
            self.check()?;
            match self.socket.read(buffer) {
                Err(error) if slice_ended(&error) => {}
                other => return other,
            }
        }
    }
}

impl Write for DeadlineStream<'_> {
    fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
        loop {
            self.check()?;
            match self.socket.write(buffer) {
                Err(error) if slice_ended(&error) => {}
                other => return other,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

pub use sys::poll;

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Socket::Tcp(stream) => stream.as_raw_fd(),
            Socket::Unix(stream) => stream.as_raw_fd(),
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(stream) => stream.read(buffer),
            Socket::Unix(stream) => stream.read(buffer),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(stream) => stream.write(buffer),
            Socket::Unix(stream) => stream.write(buffer),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectored_send_and_receive_keep_order() {
        let (left, right) = UnixStream::pair().unwrap();
        let (left, right) = (Socket::Unix(left), Socket::Unix(right));
        let (first, second) = (*b"abc", *b"defgh");
        let iovecs = [
            libc::iovec {
                iov_base: first.as_ptr() as *mut libc::c_void,
                iov_len: first.len(),
            },
            libc::iovec {
                iov_base: second.as_ptr() as *mut libc::c_void,
                iov_len: second.len(),
            },
        ];
        // SAFETY: both iovecs describe live local arrays.
        assert_eq!(unsafe { left.send_vectored(&iovecs) }.unwrap(), 8);
        let (mut one, mut two) = ([0u8; 2], [0u8; 16]);
        let received = right
            .receive_vectored(
                &mut [IoSliceMut::new(&mut one), IoSliceMut::new(&mut two)],
                true,
            )
            .unwrap();
        assert_eq!(received, 8);
        assert_eq!(&one, b"ab");
        assert_eq!(&two[..6], b"cdefgh");
        let nothing = right.receive_vectored(&mut [IoSliceMut::new(&mut two)], false);
        assert_eq!(nothing.unwrap_err().kind(), io::ErrorKind::WouldBlock);
        drop(left);
        assert_eq!(
            right
                .receive_vectored(&mut [IoSliceMut::new(&mut two)], true)
                .unwrap(),
            0
        );
    }

    #[test]
    fn timing_a_dripping_peer_cannot_stretch_the_deadline() {
        let (left, right) = UnixStream::pair().unwrap();
        let dripper = std::thread::spawn(move || {
            let mut right = right;
            // One byte every 50 ms, far longer than the deadline, until the reader leaves.
            for _ in 0..100 {
                if right.write_all(b"x").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut socket = Socket::Unix(left);
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        let mut stream =
            DeadlineStream::new(&mut socket, started, Duration::from_millis(300), &stop).unwrap();
        let mut buffer = [0u8; 64];
        let error = stream.read_exact(&mut buffer).unwrap_err();
        assert_eq!(
            WaitEnded::of(&error),
            Some(WaitEnded::TimedOut {
                timeout: Duration::from_millis(300)
            })
        );
        assert_eq!(error.to_string(), "no reply within 300 ms");
        // The dripper would go on for 5 s.
        let elapsed = started.elapsed();
        assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
        drop(socket);
        dripper.join().unwrap();
    }

    #[test]
    fn a_raised_stop_ends_the_wait() {
        let (left, _right) = UnixStream::pair().unwrap();
        let mut socket = Socket::Unix(left);
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let raiser = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(150));
                stop.store(true, Ordering::Relaxed);
            })
        };
        let started = Instant::now();
        let mut stream =
            DeadlineStream::new(&mut socket, started, Duration::from_secs(30), &stop).unwrap();
        let error = stream.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(WaitEnded::of(&error), Some(WaitEnded::Stopped));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "long before the 30 s deadline"
        );
        raiser.join().unwrap();
    }

    #[test]
    fn refused_connection_is_an_error() {
        let directory = tempfile::tempdir().unwrap();
        let server = ServerAddress::Unix(directory.path().join("missing.sock"));
        let deadline = Instant::now() + Duration::from_secs(1);
        assert!(Socket::connect(&server, deadline).is_err());
        assert_eq!(
            server.to_string(),
            format!("socket {}", directory.path().join("missing.sock").display())
        );
    }

    #[test]
    fn tcp_addresses_are_written_as_urls_write_them() {
        let v4 = ServerAddress::Tcp {
            host: "127.0.0.1".into(),
            port: 10809,
        };
        let v6 = ServerAddress::Tcp {
            host: "::1".into(),
            port: 10809,
        };
        assert_eq!(
            (v4.to_string(), v6.to_string()),
            ("127.0.0.1:10809".into(), "[::1]:10809".into())
        );
    }
}
