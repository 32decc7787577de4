//! One bounded HTTP/1.1 GET over a std `TcpStream`: connecting, sending and reading the whole
//! answer share one deadline, the answer is at most [`MAX_RESPONSE_BYTES`], and a body sent in
//! chunks is put together within the same bound.

use super::ObserveError;
use super::source::{Credentials, ExporterUrl};
use crate::text::escape::escape_controls;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The most bytes of one answer (headers and body): a node exporter of a large server sends
/// a few hundred KiB.
pub const MAX_RESPONSE_BYTES: usize = 16 << 20;
/// The most bytes of the status line and headers.
const MAX_HEADER_BYTES: usize = 64 << 10;

/// GETs `url` within `timeout` and returns the body of a `200` answer.
pub fn get(
    url: &ExporterUrl,
    credentials: &Credentials,
    timeout: Duration,
) -> Result<Vec<u8>, ObserveError> {
    let deadline = Instant::now() + timeout;
    let failed = |reason: String| ObserveError::Scrape {
        url: escape_controls(&url.text).into_owned(),
        reason,
    };
    let addresses: Vec<_> = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|error| failed(format!("cannot resolve the host: {error}")))?
        .collect();
    let mut last_error = String::from("the host has no address");
    let mut stream = None;
    for address in addresses {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match TcpStream::connect_timeout(&address, left) {
            Ok(connected) => {
                stream = Some(connected);
                break;
            }
            Err(error) => last_error = format!("cannot connect to {address}: {error}"),
        }
    }
    let mut stream = stream.ok_or_else(|| failed(last_error))?;
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: iopath/{}\r\nAccept: text/plain;version=0.0.4\r\n{}Connection: close\r\n\r\n",
        url.path,
        url.authority(),
        env!("CARGO_PKG_VERSION"),
        credentials.header()
    );
    stream
        .set_write_timeout(Some(timeout))
        .and_then(|()| stream.write_all(request.as_bytes()))
        .map_err(|error| failed(format!("cannot send the request: {error}")))?;
    let answer = read_until_closed(&mut stream, deadline).map_err(failed)?;
    body_of(&answer).map_err(failed)
}

/// Reads until the server closes, the deadline passes or the bound is crossed.
fn read_until_closed(stream: &mut TcpStream, deadline: Instant) -> Result<Vec<u8>, String> {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 64 << 10];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err("no complete answer in time".into());
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(|error| error.to_string())?;
        match stream.read(&mut buffer) {
            Ok(0) => return Ok(answer),
            Ok(read) => {
                if answer.len() + read > MAX_RESPONSE_BYTES {
                    return Err(format!(
                        "the answer is larger than {MAX_RESPONSE_BYTES} bytes"
                    ));
                }
                answer.extend_from_slice(&buffer[..read]);
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err("no complete answer in time".into());
            }
            Err(error) => return Err(format!("reading the answer: {error}")),
        }
    }
}

/// The body of a complete answer: status 200 required; `Content-Length`, chunked, or up to
/// the close.
fn body_of(answer: &[u8]) -> Result<Vec<u8>, String> {
    let head_end = answer
        .windows(4)
        .take(MAX_HEADER_BYTES)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the answer has no complete header")?;
    let head = String::from_utf8_lossy(&answer[..head_end]);
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    let mut parts = status.splitn(3, ' ');
    let (version, code) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    if !version.starts_with("HTTP/1.") {
        return Err(format!("not an HTTP answer: {}", shown(status)));
    }
    if code != "200" {
        let hint = match code {
            "401" | "403" => {
                " (the exporter asks for credentials: --server-metrics-bearer-file or --server-metrics-basic-auth-file)"
            }
            "404" => " (is the path right? the node exporter serves /metrics)",
            _ => "",
        };
        return Err(format!("the exporter answered {}{hint}", shown(status)));
    }
    let (mut length, mut chunked) = (None, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<usize>().map_err(|_| "a bad Content-Length")?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.eq_ignore_ascii_case("content-encoding")
            && !value.eq_ignore_ascii_case("identity")
        {
            return Err(format!(
                "a compressed answer ({}) was not asked for",
                shown(value)
            ));
        }
    }
    let rest = &answer[head_end + 4..];
    if chunked {
        return dechunk(rest);
    }
    match length {
        Some(length) if rest.len() < length => Err("the answer ended early".into()),
        Some(length) => Ok(rest[..length].to_vec()),
        None => Ok(rest.to_vec()),
    }
}

/// Puts a chunked body together.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::with_capacity(rest.len());
    loop {
        let line_end = rest
            .windows(2)
            .take(1024)
            .position(|w| w == b"\r\n")
            .ok_or("a bad chunk header")?;
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| "a bad chunk size")?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        if rest.len() < size + 2 {
            return Err("the answer ended inside a chunk".into());
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

fn shown(text: &str) -> String {
    let escaped = escape_controls(text);
    crate::text::shorten::shorten(&escaped, 120).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_by_length_chunks_and_close() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef";
        assert_eq!(body_of(plain).unwrap(), b"abc");
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(body_of(chunked).unwrap(), b"abcde");
        let closed = b"HTTP/1.0 200 OK\r\n\r\nxyz";
        assert_eq!(body_of(closed).unwrap(), b"xyz");
    }

    #[test]
    fn refusals_name_the_status() {
        let error = body_of(b"HTTP/1.1 401 Unauthorized\r\n\r\n").unwrap_err();
        assert!(
            error.contains("401") && error.contains("credentials"),
            "{error}"
        );
        assert!(body_of(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert!(body_of(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").is_err());
        assert!(body_of(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab").is_err());
    }
}
