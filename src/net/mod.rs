//! `iopath net`: raw TCP throughput between two hosts, so that what a storage path moves can be
//! set against what the wire under it really carries.
//!
//! A [`server::NetServer`] serves tests within its [`server::ServerLimits`];
//! [`client::run_client`] asks one for a test (streams, duration, direction) over a control
//! connection of its own ([`protocol`]), opens the data connections, and returns one
//! [`LinkTestResult`](crate::result::LinkTestResult) per direction measured. Bytes are
//! counted by the receiver, over a window timed by the receiver's clock, with a per-second
//! series; the server reports its counts back over the control connection. With a shared
//! [`secret::Secret`] both ends prove they know it ([`auth`]); without one the server listens
//! only on loopback unless told otherwise.
//!
//! ```
//! use iopath::net::client::{ClientConfig, TestDirection, run_client};
//! use iopath::net::secret::Secret;
//! use iopath::net::server::{NetServer, ServerConfig};
//! use std::sync::atomic::AtomicBool;
//!
//! let secret = Secret::from_bytes(b"a secret both ends know", "example").unwrap();
//! let config = ServerConfig {
//!     secret: Some(secret.clone()),
//!     ..ServerConfig::default()
//! };
//! let server = NetServer::bind("127.0.0.1:0".parse().unwrap(), config).unwrap();
//! let address = server.local_addr();
//! let serving = std::thread::spawn(move || {
//!     server.serve(true, &AtomicBool::new(false), &mut |_| {})
//! });
//! let config = ClientConfig {
//!     duration_ns: 200_000_000,
//!     secret: Some(secret),
//!     ..ClientConfig::new(address)
//! };
//! let run = run_client(&config, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
//! assert_eq!(run.tests.len(), 1);
//! assert!(run.tests[0].bytes > 0);
//! serving.join().unwrap().unwrap();
//! ```

pub mod auth;
pub mod client;
mod deadline;
mod handshakes;
#[cfg(test)]
mod loopback_tests;
pub mod protocol;
pub mod secret;
pub mod server;
pub mod server_state;
mod session;
mod text;
pub mod transfer;

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Port of `iopath net` when none is given.
pub const DEFAULT_PORT: u16 = 5280;
/// How long connection setup may take at each step (connect, handshake, data connections).
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Errors of a link test. [`NetError::is_bad_input`] tells which are the user's input.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// An address that cannot be read or resolved.
    #[error("bad address '{input}': {reason}")]
    BadAddress {
        /// As given.
        input: String,
        /// Why.
        reason: String,
    },
    /// Parameters out of range.
    #[error("{0}")]
    Input(String),
    /// A connection could not be opened.
    #[error("cannot connect to {address}: {source}")]
    Connect {
        /// Where to.
        address: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
    /// The server could not listen.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// Where.
        address: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
    /// The server refused the test.
    #[error("{address} refused the test: {reason}")]
    Refused {
        /// The server.
        address: SocketAddr,
        /// Its reason.
        reason: String,
    },
    /// A connection failed while the test was set up or run.
    #[error("{address}: {context}: {source}")]
    Io {
        /// The peer.
        address: SocketAddr,
        /// What was being done.
        context: &'static str,
        /// Cause.
        source: std::io::Error,
    },
    /// The peer did not prove it knows the shared secret, or did not ask for it.
    #[error("{address}: {message}")]
    Authentication {
        /// The peer.
        address: SocketAddr,
        /// What went wrong.
        message: String,
    },
    /// The peer broke the protocol or stopped answering.
    #[error("{address}: {message}")]
    Protocol {
        /// The peer.
        address: SocketAddr,
        /// What went wrong.
        message: String,
    },
}

impl NetError {
    /// Wraps an I/O error met while doing `context` with `address`.
    pub fn io(address: SocketAddr, context: &'static str) -> impl Fn(std::io::Error) -> NetError {
        move |source| NetError::Io {
            address,
            context,
            source,
        }
    }

    /// Whether the error is about the user's input (nothing was sent).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, NetError::BadAddress { .. } | NetError::Input(_))
    }
}

/// Reads `ADDR[:PORT]`: an IPv4 address, an IPv6 address (in brackets when a port follows),
/// or a host name resolved by the system; the port is `default_port` when absent.
///
/// ```
/// use iopath::net::parse_endpoint;
/// assert_eq!(parse_endpoint("192.0.2.7", 5280).unwrap().to_string(), "192.0.2.7:5280");
/// assert_eq!(parse_endpoint("[::1]:9", 5280).unwrap().to_string(), "[::1]:9");
/// assert!(parse_endpoint("192.0.2.7:99999", 5280).is_err());
/// ```
pub fn parse_endpoint(input: &str, default_port: u16) -> Result<SocketAddr, NetError> {
    let bad = |reason: &str| NetError::BadAddress {
        input: input.to_string(),
        reason: reason.to_string(),
    };
    let text = input.trim();
    if text.is_empty() {
        return Err(bad("empty"));
    }
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    let unbracketed = text
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or(text);
    if let Ok(ip) = unbracketed.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, default_port));
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) => {
            if host.contains(':') || host.starts_with('[') {
                return Err(bad(
                    "an IPv6 address with a port goes in brackets: [ADDR]:PORT",
                ));
            }
            let port = port
                .parse::<u16>()
                .map_err(|_| bad("the port must be a number from 0 to 65535"))?;
            (host, port)
        }
        None => (text, default_port),
    };
    let valid_name = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    if !valid_name {
        return Err(bad("not an IP address or a host name"));
    }
    if host.chars().all(|c| c.is_ascii_digit() || c == '.') {
        // Never handed to the resolver: it would ask a name server about a mistyped address.
        return Err(bad("not a valid IPv4 address"));
    }
    let addresses: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|error| bad(&format!("cannot resolve: {error}")))?
        .collect();
    addresses
        .iter()
        .find(|address| address.is_ipv4())
        .or(addresses.first())
        .copied()
        .ok_or_else(|| bad("the name has no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_take_the_default_port() {
        assert_eq!(
            parse_endpoint("127.0.0.1", 7).unwrap(),
            "127.0.0.1:7".parse().unwrap()
        );
        assert_eq!(
            parse_endpoint("127.0.0.1:8", 7).unwrap(),
            "127.0.0.1:8".parse().unwrap()
        );
        assert_eq!(
            parse_endpoint("::1", 7).unwrap(),
            "[::1]:7".parse().unwrap()
        );
        assert_eq!(
            parse_endpoint("[::1]", 7).unwrap(),
            "[::1]:7".parse().unwrap()
        );
        assert_eq!(parse_endpoint("localhost:9", 7).unwrap().port(), 9);
    }

    #[test]
    fn bad_endpoints_are_input_errors() {
        for input in [
            "",
            "1.2.3.4:x",
            "1.2.3.4:70000",
            "300.1.2.3",
            "1.2.3:80",
            "a b",
            "host/path",
            "[::1",
        ] {
            let error = parse_endpoint(input, 7).unwrap_err();
            assert!(error.is_bad_input(), "{input}: {error}");
        }
    }
}
