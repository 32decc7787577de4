//! Network storage named by URL, reached by iopath's own protocol engines without mounting or
//! a kernel initiator.
//!
//! - `nbd://HOST[:PORT]/EXPORT` (port 10809 by default; an empty export is the server's default)
//! - `nbd+unix:///EXPORT?socket=PATH`
//! - `iscsi://HOST[:PORT]/TARGET-IQN/LUN` (port 3260 by default). CHAP credentials come from the
//!   environment (`IOPATH_ISCSI_USER`, `IOPATH_ISCSI_PASSWORD`), never from the command line.
//! - `nfs://HOST[:PORT]/EXPORT/PATH/FILE[?mountport=N&version=3|4.1]` (port 2049 by default):
//!   a file on an NFSv3 or NFSv4.1 export, reached by iopath's own client
//!   ([`crate::engine::nfs`]); a missing file is created with `--size` and removed after the
//!   run.
//!
//! `smb://` is recognised and refused as not supported yet.
//!
//! ```
//! use iopath::targets::network_target::NetworkTarget;
//! let target = NetworkTarget::parse("nbd://127.0.0.1:10809/disk").unwrap();
//! assert_eq!(target.to_string(), "nbd://127.0.0.1:10809/disk");
//! assert!(NetworkTarget::parse("iscsi://host/iqn.2026-01.org.example:disk/1").is_ok());
//! ```

use crate::result::{EngineKind, TargetKind};
use crate::text::url_password::mask_url_passwords;
use std::path::PathBuf;

/// Where a TCP server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpAddress {
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// Port.
    pub port: u16,
}

impl std::fmt::Display for TcpAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// How to reach an NBD server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NbdTransport {
    /// TCP.
    Tcp(TcpAddress),
    /// A Unix-domain socket.
    Unix(PathBuf),
}

/// A network target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetworkTarget {
    /// An NBD export.
    Nbd {
        /// Where the server is.
        transport: NbdTransport,
        /// Export name ("" for the default export).
        export: String,
    },
    /// An iSCSI logical unit.
    Iscsi {
        /// Where the portal is.
        portal: TcpAddress,
        /// Target IQN.
        target_iqn: String,
        /// Logical unit number.
        lun: u32,
    },
    /// A file on an NFS export (NFSv3 or NFSv4.1).
    Nfs {
        /// Where it is.
        url: NfsUrl,
        /// The size to create it with when it is missing (`--size`); `None`: it must exist.
        create_size: Option<u64>,
    },
    /// A file on an SMB share.
    Smb {
        /// Where it is.
        url: SmbUrl,
        /// The size to create it with when it is missing (`--size`); `None`: it must exist.
        create_size: Option<u64>,
        /// Signing and encryption asked for beyond what the server requires.
        security: SmbSecurity,
        /// The credentials file (`--smb-credentials`); `None`: the environment.
        credentials_file: Option<PathBuf>,
    },
}

/// Default NBD port.
pub const NBD_PORT: u16 = 10809;
/// Default iSCSI port.
pub const ISCSI_PORT: u16 = 3260;
/// Default NFS port.
pub const NFS_PORT: u16 = 2049;

/// The NFS version a URL asks for (`?version=3`, the default, or `?version=4.1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NfsVersion {
    /// NFSv3 (RFC 1813) with MOUNT v3.
    #[default]
    V3,
    /// NFSv4.1 (RFC 8881): sessions, no MOUNT.
    V41,
}

impl NfsVersion {
    /// The protocol's name: `NFSv3`, `NFSv4.1`.
    pub fn name(self) -> &'static str {
        match self {
            NfsVersion::V3 => "NFSv3",
            NfsVersion::V41 => "NFSv4.1",
        }
    }
}

/// An `nfs://` URL, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NfsUrl {
    /// The server's NFS service.
    pub server: TcpAddress,
    /// The MOUNT service's port when the URL names one (else the portmapper is asked).
    pub mount_port: Option<u16>,
    /// The path of the file on the server, export included (`/export/dir/file`; for NFSv4.1
    /// the path in the server's pseudo file system).
    pub path: String,
    /// The protocol version.
    pub version: NfsVersion,
}

impl NfsUrl {
    /// Reads `nfs://HOST[:PORT]/EXPORT/PATH/FILE[?mountport=N&version=3|4.1]` (`mountport`
    /// only with version 3: NFSv4.1 needs no MOUNT service).
    ///
    /// ```
    /// use iopath::targets::network_target::{NfsUrl, NfsVersion};
    /// let url = NfsUrl::parse("nfs://127.0.0.1:2050/srv/data/file?mountport=2050").unwrap();
    /// assert_eq!(url.server.port, 2050);
    /// assert_eq!(url.path, "/srv/data/file");
    /// let url = NfsUrl::parse("nfs://host/srv/file?version=4.1").unwrap();
    /// assert_eq!(url.version, NfsVersion::V41);
    /// assert_eq!(url.to_string(), "nfs://host:2049/srv/file?version=4.1");
    /// assert!(NfsUrl::parse("nfs://host/srv/file?version=4").is_err());
    /// ```
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let rest = url
            .strip_prefix("nfs://")
            .ok_or_else(|| refuse(url, "not an nfs:// URL"))?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = rest
            .split_once('/')
            .ok_or_else(|| refuse(url, "expected nfs://HOST[:PORT]/EXPORT/PATH/FILE"))?;
        if authority.contains('@') {
            return Err(refuse(
                url,
                "NFS sends this process's user and group (AUTH_SYS); no user belongs in the URL",
            ));
        }
        let server = split_host_port(authority, NFS_PORT, url)?;
        let path = format!("/{}", path.trim_end_matches('/'));
        if path == "/" || path.split('/').any(|part| part == "." || part == "..") {
            return Err(refuse(url, "the path must name a file below an export"));
        }
        let mut mount_port = None;
        let mut version = NfsVersion::V3;
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            match pair.split_once('=') {
                Some(("mountport", port)) => {
                    mount_port = Some(
                        port.parse::<u16>()
                            .ok()
                            .filter(|p| *p > 0)
                            .ok_or_else(|| refuse(url, format!("'{port}' is not a port")))?,
                    );
                }
                Some(("version", "3")) => version = NfsVersion::V3,
                Some(("version", "4.1")) => version = NfsVersion::V41,
                Some(("version", other)) => {
                    return Err(refuse(
                        url,
                        format!("NFS version {other} is not supported (version=3 or version=4.1)"),
                    ));
                }
                _ => {
                    return Err(refuse(
                        url,
                        format!("unknown option '{pair}' (mountport, version)"),
                    ));
                }
            }
        }
        if version == NfsVersion::V41 && mount_port.is_some() {
            return Err(refuse(
                url,
                "mountport is NFSv3's: NFSv4.1 needs no MOUNT service",
            ));
        }
        Ok(NfsUrl {
            server,
            mount_port,
            path,
            version,
        })
    }
}

impl std::fmt::Display for NfsUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "nfs://{}{}", self.server, self.path)?;
        if let Some(port) = self.mount_port {
            write!(f, "?mountport={port}")?;
        }
        if self.version == NfsVersion::V41 {
            write!(f, "?version=4.1")?;
        }
        Ok(())
    }
}

/// The SMB port when the URL names none.
pub const SMB_PORT: u16 = 445;

/// How an SMB session signs and encrypts, beyond what the server requires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmbSecurity {
    /// Sign every message even when the server does not require it (`--smb-sign`).
    pub sign: bool,
    /// Encrypt every message even when the server does not require it (`--smb-encrypt`).
    pub encrypt: bool,
}

/// An `smb://` URL, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmbUrl {
    /// The server.
    pub server: TcpAddress,
    /// The user named in the URL, if any.
    pub user: Option<String>,
    /// The share's name.
    pub share: String,
    /// The file's path below the share, `/`-separated, without a leading `/`.
    pub path: String,
}

impl SmbUrl {
    /// Reads `smb://[USER@]HOST[:PORT]/SHARE/PATH/FILE` (a password in the URL is refused).
    ///
    /// ```
    /// use iopath::engine::smb::SmbUrl;
    /// let url = SmbUrl::parse("smb://alice@nas:1445/data/bench/file").unwrap();
    /// assert_eq!((url.server.port, url.share.as_str(), url.path.as_str()), (1445, "data", "bench/file"));
    /// assert_eq!(url.user.as_deref(), Some("alice"));
    /// assert!(SmbUrl::parse("smb://alice:secret@nas/data/file").is_err());
    /// ```
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let rest = url
            .strip_prefix("smb://")
            .ok_or_else(|| refuse(url, "not an smb:// URL"))?;
        if rest.contains('?') || rest.contains('#') {
            return Err(refuse(
                url,
                "smb:// URLs take no options (use --smb-sign, --smb-encrypt)",
            ));
        }
        let (authority, path) = rest
            .split_once('/')
            .ok_or_else(|| refuse(url, "expected smb://[USER@]HOST[:PORT]/SHARE/PATH/FILE"))?;
        let (user, host_port) = match authority.rsplit_once('@') {
            Some((user, _)) if user.contains(':') => {
                return Err(refuse(
                    url,
                    "a password does not belong in the URL (it would show in the process list \
                     and the shell's history); set IOPATH_SMB_PASSWORD or use --smb-credentials FILE",
                ));
            }
            Some(("", _)) => return Err(refuse(url, "an empty user name before '@'")),
            Some((user, host_port)) => (Some(user.to_string()), host_port),
            None => (None, authority),
        };
        let server = split_host_port(host_port, SMB_PORT, url)?;
        let mut parts = path.split('/').filter(|part| !part.is_empty());
        let share = parts
            .next()
            .ok_or_else(|| refuse(url, "no share: expected smb://HOST/SHARE/PATH/FILE"))?
            .to_string();
        let below: Vec<&str> = parts.collect();
        if below.is_empty() {
            return Err(refuse(url, "the path must name a file on the share"));
        }
        if below
            .iter()
            .any(|part| *part == "." || *part == ".." || part.contains('\\'))
        {
            return Err(refuse(url, "the path may not hold '.', '..' or '\\' parts"));
        }
        Ok(SmbUrl {
            server,
            user,
            share,
            path: below.join("/"),
        })
    }

    /// The share as SMB names it: `\\HOST\SHARE`.
    pub fn unc_share(&self) -> String {
        format!("\\\\{}\\{}", self.server.host, self.share)
    }

    /// The file's path as SMB names it below the share (`dir\file`).
    pub fn smb_path(&self) -> String {
        self.path.replace('/', "\\")
    }
}

impl std::fmt::Display for SmbUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "smb://")?;
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        write!(f, "{}/{}/{}", self.server, self.share, self.path)
    }
}

/// A network target URL that cannot be used: shown as `URL: PROBLEM`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{url}: {problem}")]
pub struct UrlError {
    /// The URL as given.
    pub url: String,
    /// What is wrong with it.
    pub problem: String,
}

/// A [`UrlError`] about `url`, shown with its password masked (`user:***@host`).
fn refuse(url: &str, problem: impl Into<String>) -> UrlError {
    UrlError {
        url: mask_url_passwords(url).into_owned(),
        problem: problem.into(),
    }
}

/// `HOST[:PORT]` (IPv6 in brackets) with `default_port` when none is given; errors name `url`.
pub(crate) fn split_host_port(
    authority: &str,
    default_port: u16,
    url: &str,
) -> Result<TcpAddress, UrlError> {
    if authority.contains('@') {
        let problem = if url.starts_with("iscsi://") {
            "credentials do not belong in the URL (they would show in the process list and the \
             shell's history); set IOPATH_ISCSI_USER and IOPATH_ISCSI_PASSWORD"
        } else {
            "no user or password belongs in the URL: this protocol takes none"
        };
        return Err(refuse(url, problem));
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| refuse(url, "unclosed '[' in the host"))?;
        (host.to_string(), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_string(), Some(port)),
            None => (authority.to_string(), None),
        }
    };
    if host.is_empty() {
        return Err(refuse(url, "no host"));
    }
    let port = match port {
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| refuse(url, format!("'{port}' is not a port")))?,
        None => default_port,
    };
    Ok(TcpAddress { host, port })
}

impl NetworkTarget {
    /// The engine of this target's protocol.
    pub fn engine_kind(&self) -> EngineKind {
        match self {
            NetworkTarget::Nbd { .. } => EngineKind::Nbd,
            NetworkTarget::Iscsi { .. } => EngineKind::Iscsi,
            NetworkTarget::Nfs { .. } => EngineKind::Nfs,
            NetworkTarget::Smb { .. } => EngineKind::Smb,
        }
    }

    /// The kind of target this URL names.
    pub fn target_kind(&self) -> TargetKind {
        match self {
            NetworkTarget::Nbd { .. } => TargetKind::Nbd,
            NetworkTarget::Iscsi { .. } => TargetKind::Iscsi,
            NetworkTarget::Nfs { .. } => TargetKind::Nfs,
            NetworkTarget::Smb { .. } => TargetKind::Smb,
        }
    }

    /// Whether `text` looks like a network URL (and should be parsed as one).
    pub fn is_url(text: &str) -> bool {
        [
            "nbd://",
            "nbd+unix://",
            "nbds://",
            "iscsi://",
            "smb://",
            "nfs://",
        ]
        .iter()
        .any(|scheme| text.starts_with(scheme))
    }

    /// Reads an `nbd://`, `nbd+unix://`, `iscsi://` or `nfs://` URL (an `nfs://` file must
    /// exist; [`NetworkTarget::with_create_size`] lets the run create it).
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        if let Some(rest) = url.strip_prefix("nbd+unix://") {
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            if !path.is_empty() && !path.starts_with('/') {
                return Err(refuse(
                    url,
                    "nbd+unix names no host or user: expected nbd+unix:///EXPORT?socket=PATH",
                ));
            }
            let export = path.strip_prefix('/').unwrap_or(path).to_string();
            let socket = query
                .split('&')
                .find_map(|pair| pair.strip_prefix("socket="))
                .filter(|s| !s.is_empty())
                .ok_or_else(|| refuse(url, "nbd+unix needs ?socket=PATH"))?;
            return Ok(NetworkTarget::Nbd {
                transport: NbdTransport::Unix(PathBuf::from(socket)),
                export,
            });
        }
        if url.starts_with("nbds://") {
            return Err(refuse(url, "NBD over TLS is not supported"));
        }
        if let Some(rest) = url.strip_prefix("nbd://") {
            let (authority, export) = rest.split_once('/').unwrap_or((rest, ""));
            return Ok(NetworkTarget::Nbd {
                transport: NbdTransport::Tcp(split_host_port(authority, NBD_PORT, url)?),
                export: export.to_string(),
            });
        }
        if let Some(rest) = url.strip_prefix("iscsi://") {
            let (authority, path) = rest
                .split_once('/')
                .ok_or_else(|| refuse(url, "expected iscsi://HOST[:PORT]/TARGET-IQN/LUN"))?;
            let (target_iqn, lun) = path
                .rsplit_once('/')
                .ok_or_else(|| refuse(url, "expected iscsi://HOST[:PORT]/TARGET-IQN/LUN"))?;
            if target_iqn.is_empty() {
                return Err(refuse(url, "no target IQN"));
            }
            let lun = lun
                .parse::<u32>()
                .map_err(|_| refuse(url, format!("'{lun}' is not a LUN number")))?;
            return Ok(NetworkTarget::Iscsi {
                portal: split_host_port(authority, ISCSI_PORT, url)?,
                target_iqn: target_iqn.to_string(),
                lun,
            });
        }
        if url.starts_with("nfs://") {
            return Ok(NetworkTarget::Nfs {
                url: NfsUrl::parse(url)?,
                create_size: None,
            });
        }
        if url.starts_with("smb://") {
            return Ok(NetworkTarget::Smb {
                url: SmbUrl::parse(url)?,
                create_size: None,
                security: SmbSecurity::default(),
                credentials_file: None,
            });
        }
        Err(refuse(
            url,
            "unknown URL scheme (use nbd://, nbd+unix://, iscsi://, nfs:// or smb://)",
        ))
    }

    /// This target, to be created with `size` bytes when it is a missing file (`nfs://`);
    /// other targets are returned as they are.
    pub fn with_create_size(self, size: Option<u64>) -> Self {
        match self {
            NetworkTarget::Nfs { url, .. } => NetworkTarget::Nfs {
                url,
                create_size: size,
            },
            NetworkTarget::Smb {
                url,
                security,
                credentials_file,
                ..
            } => NetworkTarget::Smb {
                url,
                create_size: size,
                security,
                credentials_file,
            },
            other => other,
        }
    }

    /// This target with the SMB options of the command line (`--smb-sign`, `--smb-encrypt`,
    /// `--smb-credentials`); other targets are returned as they are.
    pub fn with_smb_options(self, options: SmbSecurity, file: Option<&std::path::Path>) -> Self {
        match self {
            NetworkTarget::Smb {
                url, create_size, ..
            } => NetworkTarget::Smb {
                url,
                create_size,
                security: options,
                credentials_file: file.map(std::path::Path::to_path_buf),
            },
            other => other,
        }
    }

    /// The protocol's short name (`nbd`, `iscsi`, `nfs`, `nfs41`, `smb`).
    pub fn protocol(&self) -> &'static str {
        match self {
            NetworkTarget::Nbd { .. } => "nbd",
            NetworkTarget::Iscsi { .. } => "iscsi",
            NetworkTarget::Nfs { url, .. } => match url.version {
                NfsVersion::V3 => "nfs",
                NfsVersion::V41 => "nfs41",
            },
            NetworkTarget::Smb { .. } => "smb",
        }
    }

    /// Where the server listens, when over TCP.
    pub fn tcp_address(&self) -> Option<&TcpAddress> {
        match self {
            NetworkTarget::Nbd {
                transport: NbdTransport::Tcp(address),
                ..
            }
            | NetworkTarget::Iscsi {
                portal: address, ..
            } => Some(address),
            NetworkTarget::Nfs { url, .. } => Some(&url.server),
            NetworkTarget::Smb { url, .. } => Some(&url.server),
            NetworkTarget::Nbd { .. } => None,
        }
    }
}

impl std::fmt::Display for NetworkTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetworkTarget::Nbd {
                transport: NbdTransport::Tcp(address),
                export,
            } => write!(f, "nbd://{address}/{export}"),
            NetworkTarget::Nbd {
                transport: NbdTransport::Unix(socket),
                export,
            } => write!(f, "nbd+unix:///{export}?socket={}", socket.display()),
            NetworkTarget::Iscsi {
                portal,
                target_iqn,
                lun,
            } => write!(f, "iscsi://{portal}/{target_iqn}/{lun}"),
            NetworkTarget::Nfs { url, .. } => write!(f, "{url}"),
            NetworkTarget::Smb { url, .. } => write!(f, "{url}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_print_back() {
        for url in [
            "nbd://127.0.0.1:10809/disk",
            "nbd://[::1]:10810/",
            "nbd+unix:///disk?socket=/tmp/nbd.sock",
            "iscsi://10.0.0.1:3260/iqn.2026-01.org.example:disk/1",
            "nfs://10.0.0.1:2049/srv/data/file?mountport=20048",
        ] {
            assert_eq!(NetworkTarget::parse(url).unwrap().to_string(), url);
        }
        let default_port = NetworkTarget::parse("nbd://server/x").unwrap();
        assert_eq!(default_port.to_string(), "nbd://server:10809/x");
        let iscsi = NetworkTarget::parse("iscsi://h/iqn.x:y/0").unwrap();
        assert_eq!(iscsi.to_string(), "iscsi://h:3260/iqn.x:y/0");
    }

    #[test]
    fn bad_urls_are_named() {
        for bad in [
            "nbd://:10809/x",
            "nbd://h:0/x",
            "nbd://h:99999/x",
            "nbd+unix:///x",
            "iscsi://h/iqn-only",
            "iscsi://h/iqn/x",
            "nbds://h/x",
            "smb://h/share",
        ] {
            let error = NetworkTarget::parse(bad).unwrap_err();
            assert_eq!(error.url, bad);
            assert!(error.to_string().starts_with(bad), "{bad}: {error}");
        }
    }

    #[test]
    fn a_refusal_masks_the_password() {
        for (bad, named) in [
            ("smb://alice:S3CRET@nas", "expected"),
            ("smb://alice:S3CRET@nas/share/f?x=1", "no options"),
            ("smb://alice:S3CRET@nas/share/f", "IOPATH_SMB_PASSWORD"),
            ("nfs://alice:S3CRET@nas/srv/f", "no user"),
            (
                "iscsi://alice:S3CRET@[::1]:3260/iqn.x/0",
                "IOPATH_ISCSI_USER",
            ),
            ("nbd://alice:S3CRET@nas/disk", "takes none"),
            ("nbd+unix://alice:S3CRET@/disk?socket=/s", "no host or user"),
            ("ftp://alice:S3CRET@nas/f", "unknown URL scheme"),
        ] {
            let error = NetworkTarget::parse(bad).expect_err(bad).to_string();
            assert!(
                !error.contains("S3CRET") && error.contains("alice:***@") && error.contains(named),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn urls_name_a_file_below_an_export() {
        let url = NfsUrl::parse("nfs://[::1]/srv/a/b").unwrap();
        assert_eq!(
            (url.server.host.as_str(), url.server.port),
            ("::1", NFS_PORT)
        );
        assert_eq!(url.to_string(), "nfs://[::1]:2049/srv/a/b");
        for (bad, named) in [
            ("nfs://user@host/srv/f", "no user"),
            ("nfs://host", "expected"),
            ("nfs://host/", "must name a file"),
            ("nfs://host/srv/../etc/f", "must name a file"),
            ("nfs://host/srv/f?version=9", "not supported"),
            ("nfs://host/srv/f?version=4.1&mountport=20048", "NFSv3's"),
            ("nfs://host/srv/f?mountport=0", "not a port"),
            ("nfs://host/srv/f?rsize=4096", "unknown option"),
            ("nfs://host:99999/srv/f", "not a port"),
        ] {
            let error = NfsUrl::parse(bad).expect_err(bad).to_string();
            assert!(
                error.starts_with(bad) && error.contains(named),
                "{bad}: {error}"
            );
        }
    }
}
