//! A minimal HTTP/1.1 server for `GET /metrics`, on a thread of its own.
//!
//! One connection at a time, one request per connection (`Connection: close`). What the
//! client sends is read up to [`REQUEST_LIMIT_BYTES`] and within [`REQUEST_TIMEOUT`] in all;
//! a longer or slower request gets 431 or 408 and the connection is closed, so no client can
//! hold the server longer than that. Only `GET /metrics` (a query string is ignored) is
//! answered with the exposition; another method gets 405, another path 404. Nothing a
//! client sends changes anything.
//!
//! ```
//! use iopath::metrics::{MetricsServer, SharedMetrics};
//! use std::io::{Read, Write};
//! let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), SharedMetrics::default()).unwrap();
//! let mut client = std::net::TcpStream::connect(server.address()).unwrap();
//! client.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
//! let mut answer = String::new();
//! client.read_to_string(&mut answer).unwrap();
//! assert!(answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.ends_with("# EOF\n"));
//! ```

use super::exposition::{CONTENT_TYPE, render};
use super::state::SharedMetrics;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Most bytes of a request (its line and headers) read.
pub const REQUEST_LIMIT_BYTES: usize = 8 * 1024;
/// Longest time a client has to send its request, and then to take the answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// Why `--metrics ADDR` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MetricsAddressError {
    /// Not a port, `HOST:PORT` or `[IPv6]:PORT`.
    #[error(
        "--metrics '{0}': expected PORT, :PORT or HOST:PORT (127.0.0.1 when only a port is given)"
    )]
    Syntax(String),
    /// The host name does not resolve.
    #[error("--metrics '{address}': {source}")]
    Resolve {
        /// The address as given.
        address: String,
        /// Cause.
        source: io::Error,
    },
    /// The address cannot be listened on (in use, not this host's).
    #[error("--metrics '{address}': cannot listen there: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Cause.
        source: io::Error,
    },
}

/// Reads `--metrics`: `9100` and `:9100` mean 127.0.0.1:9100; `HOST:PORT` is used as given.
pub fn parse_metrics_address(text: &str) -> Result<SocketAddr, MetricsAddressError> {
    let port_only = text.strip_prefix(':').unwrap_or(text);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    let (host, port) = text
        .rsplit_once(':')
        .filter(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
        .ok_or_else(|| MetricsAddressError::Syntax(text.to_string()))?;
    (host, port.parse::<u16>().unwrap_or(0))
        .to_socket_addrs()
        .map_err(|source| MetricsAddressError::Resolve {
            address: text.to_string(),
            source,
        })?
        .next()
        .ok_or_else(|| MetricsAddressError::Syntax(text.to_string()))
}

/// The server: listening from [`MetricsServer::start`] until dropped.
#[derive(Debug)]
pub struct MetricsServer {
    address: SocketAddr,
    stopping: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `address` and answers from `state` until dropped.
    pub fn start(address: SocketAddr, state: SharedMetrics) -> Result<Self, MetricsAddressError> {
        let bind_error = |source| MetricsAddressError::Bind { address, source };
        let listener = TcpListener::bind(address).map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = stopping.clone();
        let thread = std::thread::Builder::new()
            .name("iopath-metrics".into())
            .spawn(move || {
                for connection in listener.incoming() {
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    if let Ok(stream) = connection {
                        let _ = answer(stream, &state);
                    }
                }
            })
            .map_err(bind_error)?;
        Ok(MetricsServer {
            address,
            stopping,
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
    }
}

/// How a request was read.
enum Request {
    /// The request line.
    Line(String),
    /// Larger than [`REQUEST_LIMIT_BYTES`].
    TooLarge,
    /// Not complete within [`REQUEST_TIMEOUT`], or the client went away.
    Incomplete,
}

/// Reads the request line and headers, within the size and time bounds.
fn read_request(stream: &mut TcpStream) -> Request {
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let mut received = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&received[..end]);
            return Request::Line(head.lines().next().unwrap_or("").to_string());
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

/// Answers one connection.
fn answer(mut stream: TcpStream, state: &SharedMetrics) -> io::Result<()> {
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    let (status, extra, body) = match read_request(&mut stream) {
        Request::TooLarge => ("431 Request Header Fields Too Large", "", String::new()),
        Request::Incomplete => ("408 Request Timeout", "", String::new()),
        Request::Line(line) => {
            let mut parts = line.split(' ');
            let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            let path = target.split('?').next().unwrap_or("");
            if method != "GET" {
                ("405 Method Not Allowed", "Allow: GET\r\n", String::new())
            } else if path != "/metrics" {
                ("404 Not Found", "", String::new())
            } else {
                let body = render(&state.lock());
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
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()?;
    let _ = stream.shutdown(std::net::Shutdown::Both);
    Ok(())
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
        let server =
            MetricsServer::start("127.0.0.1:0".parse().unwrap(), SharedMetrics::default()).unwrap();
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
        let server =
            MetricsServer::start("127.0.0.1:0".parse().unwrap(), SharedMetrics::default()).unwrap();
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
    fn a_bare_port_means_loopback() {
        assert_eq!(
            parse_metrics_address("9100").unwrap().to_string(),
            "127.0.0.1:9100"
        );
        assert_eq!(
            parse_metrics_address(":9100").unwrap().to_string(),
            "127.0.0.1:9100"
        );
        assert_eq!(
            parse_metrics_address("[::1]:9100").unwrap().to_string(),
            "[::1]:9100"
        );
        assert!(parse_metrics_address("nonsense").is_err());
        assert!(parse_metrics_address("host:99999").is_err());
    }
}
