//! A small HTTP/1.1 server for `GET /metrics`, on threads of its own.
//!
//! Connections are answered at the same time, each on a thread of its own, at most
//! [`MAX_CONNECTIONS`] at once ([`super::connections`]: a new connection takes the place of
//! the oldest one still sending its request), so an idle or slow client delays nobody else.
//! One request per connection (`Connection: close`). What the client sends is read up to
//! [`REQUEST_LIMIT_BYTES`] and within [`REQUEST_TIMEOUT`] in all; a longer or slower request
//! gets 431 or 408 and the connection is closed; the answer is written within
//! [`REQUEST_TIMEOUT`] too. With a [`BearerToken`], a request without it gets 401 before
//! anything else is looked at. Only `GET /metrics` (a query string is ignored) is answered
//! with the exposition; another method gets 405, another path 404. Nothing a client sends
//! changes anything, and no worker ever waits for a client: the exposition is rendered from
//! [`SharedMetrics`], which the run's observer updates once a second.
//!
//! ```
//! use iopath::metrics::{MetricsServer, SharedMetrics};
//! use std::io::{Read, Write};
//! let server =
//!     MetricsServer::start("127.0.0.1:0".parse().unwrap(), None, SharedMetrics::default()).unwrap();
//! let mut client = std::net::TcpStream::connect(server.address()).unwrap();
//! client.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
//! let mut answer = String::new();
//! client.read_to_string(&mut answer).unwrap();
//! assert!(answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.ends_with("# EOF\n"));
//! ```

use super::access::{BearerToken, check_exposure};
use super::address::MetricsAddressError;
pub use super::connections::MAX_CONNECTIONS;
use super::connections::{Connections, Place};
use super::exposition::{CONTENT_TYPE, render};
use super::state::SharedMetrics;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Most bytes of a request (its line and headers) read.
pub const REQUEST_LIMIT_BYTES: usize = 8 * 1024;
/// Longest time a client has to send its request, and then to take the answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// Stack of a connection's thread (it reads a request and renders the exposition).
const CONNECTION_STACK_BYTES: usize = 256 * 1024;

/// The server: listening from [`MetricsServer::start`] until dropped.
#[derive(Debug)]
pub struct MetricsServer {
    address: SocketAddr,
    stopping: Arc<AtomicBool>,
    connections: Connections,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `address` and answers from `state` until dropped; with `token`, only
    /// requests that carry it. An address beyond loopback without a token is refused
    /// ([`check_exposure`]).
    pub fn start(
        address: SocketAddr,
        token: Option<BearerToken>,
        state: SharedMetrics,
    ) -> Result<Self, MetricsAddressError> {
        check_exposure(address, token.as_ref())?;
        let bind_error = |source| MetricsAddressError::Bind { address, source };
        let listener = TcpListener::bind(address).map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        let stopping = Arc::new(AtomicBool::new(false));
        let connections = Connections::default();
        let server = Server {
            state,
            token: token.map(Arc::new),
            connections: connections.clone(),
        };
        let stop = stopping.clone();
        let thread = std::thread::Builder::new()
            .name("iopath-metrics".into())
            .spawn(move || server.accept(&listener, &stop))
            .map_err(bind_error)?;
        Ok(MetricsServer {
            address,
            stopping,
            connections,
            thread: Some(thread),
        })
    }

    /// Where it listens (with the port the system chose for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::Release);
        // Wake the accepting thread with a connection of our own.
        let mut wake = self.address;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake.ip() {
                IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            });
        }
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok()
            && let Some(thread) = self.thread.take()
        {
            let _ = thread.join();
        }
        self.connections.close_all();
    }
}

/// What the accepting thread hands each connection's thread.
#[derive(Clone)]
struct Server {
    state: SharedMetrics,
    token: Option<Arc<BearerToken>>,
    connections: Connections,
}

impl Server {
    /// Accepts connections until `stop`, each answered on a thread of its own.
    fn accept(&self, listener: &TcpListener, stop: &AtomicBool) {
        for connection in listener.incoming() {
            if stop.load(Ordering::Acquire) {
                break;
            }
            let stream = match connection {
                Ok(stream) => stream,
                Err(_) => {
                    // Out of descriptors or memory: let the open connections end first.
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            let Ok(handle) = stream.try_clone() else {
                continue;
            };
            let place = self.connections.admit(handle);
            let server = self.clone();
            // A thread that cannot be made drops the connection (and gives its place back).
            let _ = std::thread::Builder::new()
                .name("iopath-metrics-connection".into())
                .stack_size(CONNECTION_STACK_BYTES)
                .spawn(move || {
                    let _ = server.answer(stream, &place);
                });
        }
    }

    /// Answers one connection.
    fn answer(&self, mut stream: TcpStream, place: &Place) -> io::Result<()> {
        let deadline = Instant::now() + REQUEST_TIMEOUT;
        let request = read_request(&mut stream, deadline);
        place.answering();
        let admitted = self.admits(&request);
        let (status, extra, body) = match request {
            Request::TooLarge => ("431 Request Header Fields Too Large", "", String::new()),
            Request::Incomplete => ("408 Request Timeout", "", String::new()),
            Request::Head { .. } if !admitted => (
                "401 Unauthorized",
                "WWW-Authenticate: Bearer realm=\"iopath metrics\"\r\n",
                String::new(),
            ),
            Request::Head { line, .. } => {
                let mut parts = line.split(' ');
                let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                let path = target.split('?').next().unwrap_or("");
                if method != "GET" {
                    ("405 Method Not Allowed", "Allow: GET\r\n", String::new())
                } else if path != "/metrics" {
                    ("404 Not Found", "", String::new())
                } else {
                    // A copy, so that the observer's once-a-second update never waits
                    // for the text to be written.
                    let figures = self.state.lock().clone();
                    let body = render(&figures);
                    ("200 OK", "", body)
                }
            }
        };
        let content_type = if body.is_empty() {
            "text/plain; charset=utf-8"
        } else {
            CONTENT_TYPE
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
            body.len()
        );
        let deadline = Instant::now() + REQUEST_TIMEOUT;
        write_before(&mut stream, head.as_bytes(), deadline)?;
        write_before(&mut stream, body.as_bytes(), deadline)?;
        let _ = stream.shutdown(std::net::Shutdown::Both);
        Ok(())
    }

    /// Whether `request` may be answered: always without a token, else when it carries it.
    fn admits(&self, request: &Request) -> bool {
        let authorization = match request {
            Request::Head { authorization, .. } => authorization.as_deref(),
            _ => None,
        };
        self.token
            .as_ref()
            .is_none_or(|token| token.admits(authorization))
    }
}

/// Writes `bytes` to `stream` before `deadline`, however slowly the client reads.
fn write_before(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(count) => bytes = &bytes[count..],
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// How a request was read.
enum Request {
    /// The request line and the `Authorization` header, if any.
    Head {
        line: String,
        authorization: Option<String>,
    },
    /// Larger than [`REQUEST_LIMIT_BYTES`].
    TooLarge,
    /// Not complete before the deadline, or the client went away.
    Incomplete,
}

/// Reads the request line and headers, within [`REQUEST_LIMIT_BYTES`] and before `deadline`.
fn read_request(stream: &mut TcpStream, deadline: Instant) -> Request {
    let mut received = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&received[..end]);
            let mut lines = head.split("\r\n");
            let line = lines.next().unwrap_or("").to_string();
            let authorization = lines
                .filter_map(|header| header.split_once(':'))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"))
                .map(|(_, value)| value.trim().to_string());
            return Request::Head {
                line,
                authorization,
            };
        }
        if received.len() >= REQUEST_LIMIT_BYTES {
            return Request::TooLarge;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Request::Incomplete;
        }
        let room = chunk.len().min(REQUEST_LIMIT_BYTES - received.len());
        match stream.read(&mut chunk[..room]) {
            Ok(0) | Err(_) => return Request::Incomplete,
            Ok(count) => received.extend_from_slice(&chunk[..count]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(server: &MetricsServer, request: &[u8]) -> String {
        let mut client = TcpStream::connect(server.address()).unwrap();
        let _ = client.write_all(request);
        let mut answer = String::new();
        let _ = client.read_to_string(&mut answer);
        answer
    }

    #[test]
    fn only_get_metrics_is_answered() {
        let server = MetricsServer::start(
            "127.0.0.1:0".parse().unwrap(),
            None,
            SharedMetrics::default(),
        )
        .unwrap();
        let ok = exchange(&server, b"GET /metrics?x=1 HTTP/1.1\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK") && ok.contains("iopath_tests_planned 0"));
        let post = exchange(
            &server,
            b"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
        );
        assert!(post.starts_with("HTTP/1.1 405") && post.contains("Allow: GET"));
        let other = exchange(&server, b"GET / HTTP/1.1\r\n\r\n");
        assert!(other.starts_with("HTTP/1.1 404"));
    }

    #[test]
    fn a_request_is_bounded_in_size_and_time() {
        let server = MetricsServer::start(
            "127.0.0.1:0".parse().unwrap(),
            None,
            SharedMetrics::default(),
        )
        .unwrap();
        let mut huge = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
        huge.resize(REQUEST_LIMIT_BYTES * 4, b'a');
        assert!(exchange(&server, &huge).starts_with("HTTP/1.1 431"));
        // A client that sends half a request and waits is answered 408 after the timeout.
        let started = Instant::now();
        let mut slow = TcpStream::connect(server.address()).unwrap();
        slow.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
        let mut answer = String::new();
        let _ = slow.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(started.elapsed() < REQUEST_TIMEOUT * 2);
        // And the server still answers.
        assert!(exchange(&server, b"GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn with_a_token_only_requests_that_carry_it_are_answered() {
        let token = BearerToken::from_bytes(b"correct horse battery staple").unwrap();
        let server = MetricsServer::start(
            "127.0.0.1:0".parse().unwrap(),
            Some(token),
            SharedMetrics::default(),
        )
        .unwrap();
        let ok = exchange(
            &server,
            b"GET /metrics HTTP/1.1\r\nauthorization: Bearer correct horse battery staple\r\n\r\n",
        );
        assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
        for refused in [
            &b"GET /metrics HTTP/1.1\r\n\r\n"[..],
            b"GET /metrics HTTP/1.1\r\nAuthorization: Bearer correct horse\r\n\r\n",
            b"POST / HTTP/1.1\r\n\r\n",
        ] {
            let answer = exchange(&server, refused);
            assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
            assert!(answer.contains("WWW-Authenticate: Bearer"), "{answer}");
            assert!(!answer.contains("iopath_"), "{answer}");
        }
    }

    #[test]
    fn beyond_loopback_the_server_refuses_to_start_without_a_token() {
        let error =
            MetricsServer::start("0.0.0.0:0".parse().unwrap(), None, SharedMetrics::default())
                .unwrap_err();
        assert!(
            matches!(error, MetricsAddressError::Unauthenticated { .. }),
            "{error}"
        );
    }
}
