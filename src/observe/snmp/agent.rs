//! A switch's SNMP agent as `--switch-snmp HOST[:PORT]` names it, and the community string
//! `--switch-snmp-community-file` holds, both checked before any I/O.
//!
//! ```
//! use iopath::observe::snmp::agent::SwitchAgent;
//! let agent = SwitchAgent::parse("198.18.0.1", b"public".to_vec()).unwrap();
//! assert_eq!((agent.host.as_str(), agent.port), ("198.18.0.1", 161));
//! let agent = SwitchAgent::parse("[fd00::1]:1161", b"public".to_vec()).unwrap();
//! assert_eq!((agent.host.as_str(), agent.port), ("fd00::1", 1161));
//! assert!(SwitchAgent::parse("sw1:0", b"public".to_vec()).is_err());
//! assert!(SwitchAgent::parse("udp://sw1", b"public".to_vec()).is_err());
//! ```

use crate::gate::read::{FileLimit, read_private_bytes};
use crate::observe::ObserveError;
use crate::text::escape::escape_controls;
use std::path::Path;

/// The SNMP agent's port when none is written.
pub const SNMP_PORT: u16 = 161;
/// The community used when no file gives one.
pub const DEFAULT_COMMUNITY: &[u8] = b"public";
/// A community file: owner-only permissions, at most 4 KiB.
const COMMUNITY_FILE: FileLimit = FileLimit {
    what: "SNMP community file",
    max_bytes: 4096,
};
/// The longest community accepted (SnmpAdminString's limit).
pub const MAX_COMMUNITY_BYTES: usize = 255;

/// A switch's agent.
#[derive(Clone, PartialEq, Eq)]
pub struct SwitchAgent {
    /// Its host: a name, an IPv4 address, or an IPv6 address without brackets.
    pub host: String,
    /// Its UDP port.
    pub port: u16,
    /// `HOST[:PORT]` as given, for messages and results.
    pub text: String,
    /// The community string sent with every request.
    pub community: Vec<u8>,
}

impl std::fmt::Debug for SwitchAgent {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "SwitchAgent({})", self.text)
    }
}

impl SwitchAgent {
    /// Parses `HOST[:PORT]` (IPv6 in brackets); anything else is refused naming the input.
    pub fn parse(text: &str, community: Vec<u8>) -> Result<SwitchAgent, ObserveError> {
        let bad = |reason: &str| ObserveError::BadSwitch {
            agent: escape_controls(text).into_owned(),
            reason: reason.to_string(),
        };
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (host, after) = rest.split_once(']').ok_or_else(|| bad("an unclosed ["))?;
            match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None if after.is_empty() => (host, None),
                None => return Err(bad("expected HOST[:PORT]")),
            }
        } else {
            match text.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => (host, Some(port)),
                Some(_) => return Err(bad("write an IPv6 address in brackets: [ADDRESS]:PORT")),
                None => (text, None),
            }
        };
        let host_ok = !host.is_empty()
            && host.len() <= 253
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'));
        if !host_ok {
            return Err(bad("expected HOST[:PORT] (a name or an address)"));
        }
        let port = match port {
            Some(port) => port
                .parse::<u16>()
                .ok()
                .filter(|port| *port > 0)
                .ok_or_else(|| bad("the port must be 1–65535"))?,
            None => SNMP_PORT,
        };
        Ok(SwitchAgent {
            host: host.to_string(),
            port,
            text: text.to_string(),
            community,
        })
    }
}

/// The community in `path`: owner-only permissions, one word of at most
/// [`MAX_COMMUNITY_BYTES`], white space around it trimmed.
pub fn read_community(path: &Path) -> Result<Vec<u8>, ObserveError> {
    let bad = |reason: String| ObserveError::Community {
        path: escape_controls(&path.display().to_string()).into_owned(),
        reason,
    };
    let bytes = read_private_bytes(path, COMMUNITY_FILE).map_err(|error| bad(error.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".into()))?;
    let community = text.trim();
    if community.is_empty() {
        return Err(bad("it is empty".into()));
    }
    if community.len() > MAX_COMMUNITY_BYTES {
        return Err(bad(format!(
            "a community is at most {MAX_COMMUNITY_BYTES} bytes"
        )));
    }
    if community.contains(|c: char| c.is_whitespace() || c.is_control()) {
        return Err(bad("a community is one word".into()));
    }
    Ok(community.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn community_files_are_read_and_refused_where_they_cannot_be_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str, mode: u32| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            path
        };
        assert_eq!(
            read_community(&write("ok", " s3cret\n", 0o600)).unwrap(),
            b"s3cret"
        );
        for (name, text, mode) in [
            ("open", "s3cret", 0o644),
            ("empty", "\n", 0o600),
            ("two", "a b", 0o600),
        ] {
            let error = read_community(&write(name, text, mode)).unwrap_err();
            assert!(error.to_string().contains("SNMP community"), "{error}");
        }
        let long = "x".repeat(MAX_COMMUNITY_BYTES + 1);
        assert!(read_community(&write("long", &long, 0o600)).is_err());
    }

    #[test]
    fn agents_are_checked() {
        for bad in [
            "",
            ":161",
            "sw1:",
            "sw1:65536",
            "fd00::1",
            "[fd00::1",
            "sw 1",
            "sw1\n",
        ] {
            let error = SwitchAgent::parse(bad, b"c".to_vec()).unwrap_err();
            assert!(error.to_string().starts_with("--switch-snmp "), "{error}");
        }
        let agent = SwitchAgent::parse("sw1:1161", b"c".to_vec()).unwrap();
        assert_eq!(
            format!("{agent:?}"),
            "SwitchAgent(sw1:1161)",
            "no community shown"
        );
    }
}
