//! Where a server's counters are read: the URL of `--server-metrics` and the credentials the
//! exporter asks for, checked before any I/O.
//!
//! ```
//! use iopath::observe::source::ExporterUrl;
//! let url = ExporterUrl::parse("http://198.18.0.2:9100/metrics").unwrap();
//! assert_eq!((url.host.as_str(), url.port, url.path.as_str()), ("198.18.0.2", 9100, "/metrics"));
//! let url = ExporterUrl::parse("http://nas").unwrap();
//! assert_eq!((url.port, url.path.as_str()), (9100, "/metrics"));
//! assert!(ExporterUrl::parse("https://nas/metrics").is_err());
//! assert!(ExporterUrl::parse("http://user:secret@nas/metrics").is_err());
//! ```

use super::ObserveError;
use crate::gate::read::{FileLimit, read_private_bytes};
use crate::text::escape::escape_controls;
use std::path::Path;

/// The node exporter's port when a URL names none.
pub const NODE_EXPORTER_PORT: u16 = 9100;
/// The path scraped when a URL names none.
pub const DEFAULT_PATH: &str = "/metrics";
/// A credentials file: at most 4 KiB, owner-only permissions.
const CREDENTIALS_FILE: FileLimit = FileLimit {
    what: "server metrics credentials file",
    max_bytes: 4096,
};

/// An exporter's `http://HOST[:PORT][/PATH]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExporterUrl {
    /// The host as written (a name, an IPv4 address, or an IPv6 address without brackets).
    pub host: String,
    /// The port (9100 when not written).
    pub port: u16,
    /// The path and query (`/metrics` when not written).
    pub path: String,
    /// The URL as given, for messages and results.
    pub text: String,
}

impl ExporterUrl {
    /// Parses `text`; https, credentials in the URL, fragments and control characters are
    /// refused with a message naming the URL.
    pub fn parse(text: &str) -> Result<ExporterUrl, ObserveError> {
        let bad = |reason: &str| ObserveError::BadUrl {
            url: escape_controls(text).into_owned(),
            reason: reason.to_string(),
        };
        if text.chars().any(|c| c.is_control() || c == ' ') {
            return Err(bad("it holds spaces or control characters"));
        }
        let Some(rest) = text.strip_prefix("http://") else {
            if text.starts_with("https://") {
                return Err(bad(
                    "https is not supported: scrape the exporter over http on the storage network, or through a local TLS proxy",
                ));
            }
            return Err(bad("it must start with http://"));
        };
        if rest.contains('#') {
            return Err(bad("a fragment (#…) has no meaning here"));
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(bad(
                "credentials do not go in the URL: use --server-metrics-basic-auth-file or --server-metrics-bearer-file",
            ));
        }
        let (host, port) = split_host_port(authority).ok_or_else(|| bad("no valid host[:port]"))?;
        Ok(ExporterUrl {
            host,
            port,
            path: if path.is_empty() {
                DEFAULT_PATH.to_string()
            } else {
                path.to_string()
            },
            text: text.to_string(),
        })
    }

    /// `HOST:PORT` as the `Host` header writes it.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

fn split_host_port(authority: &str) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return None,
        };
        (host, port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host, Some(port)),
            Some(_) => return None,
            None => (authority, None),
        }
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'));
    if !host_ok {
        return None;
    }
    let port = match port {
        Some(port) => port.parse::<u16>().ok().filter(|p| *p > 0)?,
        None => NODE_EXPORTER_PORT,
    };
    Some((host.to_string(), port))
}

/// What the exporter asks of a client.
#[derive(Clone, Default)]
pub enum Credentials {
    /// Nothing.
    #[default]
    None,
    /// `Authorization: Bearer TOKEN`.
    Bearer(String),
    /// `Authorization: Basic …` of `user:password`.
    Basic(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            Credentials::None => "None",
            Credentials::Bearer(_) => "Bearer",
            Credentials::Basic(_) => "Basic",
        })
    }
}

impl Credentials {
    /// The bearer token in `path` (owner-only permissions, at most 4 KiB, white space around
    /// it trimmed).
    pub fn bearer_file(path: &Path) -> Result<Credentials, ObserveError> {
        let token = read_secret(path)?;
        if token.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(ObserveError::Credentials {
                path: escape_controls(&path.display().to_string()).into_owned(),
                reason: "a bearer token is one word".into(),
            });
        }
        Ok(Credentials::Bearer(token))
    }

    /// `USER:PASSWORD` in `path` (owner-only permissions, at most 4 KiB, one line).
    pub fn basic_file(path: &Path) -> Result<Credentials, ObserveError> {
        let pair = read_secret(path)?;
        if !pair.contains(':') || pair.contains(['\n', '\r']) {
            return Err(ObserveError::Credentials {
                path: escape_controls(&path.display().to_string()).into_owned(),
                reason: "it must hold USER:PASSWORD on one line".into(),
            });
        }
        Ok(Credentials::Basic(base64(pair.as_bytes())))
    }

    /// The `Authorization` header line (with its CRLF), or nothing.
    pub fn header(&self) -> String {
        match self {
            Credentials::None => String::new(),
            Credentials::Bearer(token) => format!("Authorization: Bearer {token}\r\n"),
            Credentials::Basic(encoded) => format!("Authorization: Basic {encoded}\r\n"),
        }
    }
}

fn read_secret(path: &Path) -> Result<String, ObserveError> {
    let shown = || escape_controls(&path.display().to_string()).into_owned();
    let bytes =
        read_private_bytes(path, CREDENTIALS_FILE).map_err(|error| ObserveError::Credentials {
            path: shown(),
            reason: error.to_string(),
        })?;
    let text = String::from_utf8(bytes).map_err(|_| ObserveError::Credentials {
        path: shown(),
        reason: "not UTF-8 text".into(),
    })?;
    let text = text.trim();
    if text.is_empty() {
        return Err(ObserveError::Credentials {
            path: shown(),
            reason: "it is empty".into(),
        });
    }
    Ok(text.to_string())
}

/// Standard base64 with padding (RFC 4648), for HTTP basic authentication.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (index, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if index <= chunk.len() {
                out.push(ALPHABET[(n >> shift) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn credentials_files_give_the_header_and_refuse_what_they_cannot_use() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str, mode: u32| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            path
        };
        let basic = Credentials::basic_file(&write("basic", "prom:s3cret\n", 0o600)).unwrap();
        assert_eq!(basic.header(), "Authorization: Basic cHJvbTpzM2NyZXQ=\r\n");
        assert_eq!(format!("{basic:?}"), "Basic");
        let bearer = Credentials::bearer_file(&write("bearer", " tok3n \n", 0o400)).unwrap();
        assert_eq!(bearer.header(), "Authorization: Bearer tok3n\r\n");
        assert!(Credentials::basic_file(&write("no-colon", "prom\n", 0o600)).is_err());
        assert!(Credentials::bearer_file(&write("two-words", "a b\n", 0o600)).is_err());
        assert!(Credentials::bearer_file(&write("empty", "\n", 0o600)).is_err());
        let open = Credentials::bearer_file(&write("open", "tok3n\n", 0o644)).unwrap_err();
        assert!(
            open.to_string().contains("server metrics credentials"),
            "{open}"
        );
    }

    #[test]
    fn urls_are_checked() {
        let v6 = ExporterUrl::parse("http://[fd00::2]:9101/m?x=1").unwrap();
        assert_eq!(
            (v6.host.as_str(), v6.port, v6.path.as_str()),
            ("fd00::2", 9101, "/m?x=1")
        );
        assert_eq!(v6.authority(), "[fd00::2]:9101");
        for bad in [
            "http://",
            "http://h:0/",
            "http://h:99999/",
            "ftp://h/",
            "http://h/\n",
            "http://a b/",
        ] {
            assert!(ExporterUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
