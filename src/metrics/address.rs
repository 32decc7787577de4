//! `--metrics ADDR`: where the endpoint listens, and why an address cannot be used.

use crate::net::secret::SecretError;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

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
    /// An address beyond loopback without `--metrics-token-file`.
    #[error(
        "--metrics {address}: this address can be reached from other machines, and the metrics \
         name targets, jobs and tests: give --metrics-token-file FILE (a bearer token, owner-only \
         permissions, which Prometheus sends with `authorization: credentials_file: FILE`), or \
         listen on 127.0.0.1"
    )]
    Unauthenticated {
        /// The address.
        address: SocketAddr,
    },
    /// The token file cannot be used.
    #[error("--metrics-token-file {0}")]
    Token(#[from] SecretError),
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

#[cfg(test)]
mod tests {
    use super::*;

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
