//! [`Credentials`]: who a session logs in as (NTLMv2).

/// Who to log in as. The password is never shown: `Debug` hides it.
///
/// ```
/// let credentials = smb_client::Credentials {
///     user: "alice".into(),
///     password: "secret".into(),
///     domain: String::new(),
/// };
/// assert!(!format!("{credentials:?}").contains("secret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// User name.
    pub user: String,
    /// Password.
    pub password: String,
    /// Domain or workgroup ("" for the server's own accounts).
    pub domain: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"(hidden)")
            .field("domain", &self.domain)
            .finish()
    }
}
