//! [`ShareAddress`]: the server and share a connection logs in to.

/// The standard SMB port (SMB2 over TCP, no NetBIOS).
pub const SMB_PORT: u16 = 445;

/// A share on a server: `\\HOST\SHARE` reached at `HOST:PORT`.
///
/// ```
/// let share = smb_client::ShareAddress { host: "nas".into(), port: 445, share: "data".into() };
/// assert_eq!(share.server(), "nas:445");
/// assert_eq!(share.unc(), r"\\nas\data");
/// let v6 = smb_client::ShareAddress { host: "::1".into(), port: 4450, share: "data".into() };
/// assert_eq!(v6.server(), "[::1]:4450");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareAddress {
    /// The server's host name or address (an IPv6 address without brackets).
    pub host: String,
    /// The server's TCP port ([`SMB_PORT`] unless the server listens elsewhere).
    pub port: u16,
    /// The share's name.
    pub share: String,
}

impl ShareAddress {
    /// `HOST:PORT` (`[HOST]:PORT` for an IPv6 address), as messages name the server.
    pub fn server(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The share's UNC path, `\\HOST\SHARE`, as TREE_CONNECT names it.
    pub fn unc(&self) -> String {
        format!("\\\\{}\\{}", self.host, self.share)
    }
}
