//! `smb://[USER@]HOST[:PORT]/SHARE/PATH/FILE` and the credentials to log in with, which never
//! come from the command line: the environment (`IOPATH_SMB_USER`, `IOPATH_SMB_PASSWORD`,
//! `IOPATH_SMB_DOMAIN`) or a credentials file in smbclient's `-A` format.

use crate::gate::read::{FileLimit, read_private_bytes};
pub use crate::targets::network_target::{SMB_PORT, SmbUrl};
pub use smb_client::Credentials as SmbCredentials;
use smb_client::ShareAddress;
use std::path::Path;

/// The environment variable holding the user name (when the URL names none).
pub const USER_VARIABLE: &str = "IOPATH_SMB_USER";
/// The environment variable holding the password.
pub const PASSWORD_VARIABLE: &str = "IOPATH_SMB_PASSWORD";
/// The environment variable holding the domain (workgroup) of the user.
pub const DOMAIN_VARIABLE: &str = "IOPATH_SMB_DOMAIN";
/// The longest credentials file read (a few lines).
pub const MAX_CREDENTIALS_FILE_BYTES: u64 = 64 * 1024;

/// The server and share of `url`, as the client crate names them.
pub fn share_address(url: &SmbUrl) -> ShareAddress {
    ShareAddress {
        host: url.server.host.clone(),
        port: url.server.port,
        share: url.share.clone(),
    }
}

/// Why no credentials could be had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CredentialsError(pub String);

/// The values of a credentials file (smbclient's `-A` format: `username = NAME`,
/// `password = SECRET`, `domain = NAME`; blank lines and `#` comments allowed).
fn parse_credentials_file(
    text: &str,
    file: &Path,
) -> Result<[Option<String>; 3], CredentialsError> {
    let mut values: [Option<String>; 3] = [None, None, None];
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(CredentialsError(format!(
                "{}: line {}: expected 'username = …', 'password = …' or 'domain = …'",
                file.display(),
                number + 1
            )));
        };
        let index = match key.trim() {
            "username" | "user" => 0,
            "password" => 1,
            "domain" | "workgroup" => 2,
            other => {
                return Err(CredentialsError(format!(
                    "{}: line {}: unknown key '{}' (username, password, domain)",
                    file.display(),
                    number + 1,
                    crate::text::escape::escape_controls(other)
                )));
            }
        };
        // A password keeps its spaces inside; only the one around '=' goes.
        values[index] = Some(
            value
                .trim_start()
                .trim_end_matches(['\r', '\n'])
                .to_string(),
        );
    }
    Ok(values)
}

/// A credentials file: at most [`MAX_CREDENTIALS_FILE_BYTES`].
const CREDENTIALS_FILE: FileLimit = FileLimit {
    what: "credentials file",
    max_bytes: MAX_CREDENTIALS_FILE_BYTES,
};

/// Reads a credentials file: a regular file of at most [`MAX_CREDENTIALS_FILE_BYTES`] that
/// only its owner may read ([`read_private_bytes`], the check of every secret's file).
fn read_credentials_file(file: &Path) -> Result<String, CredentialsError> {
    let failed = |problem: String| CredentialsError(format!("{}: {problem}", file.display()));
    let bytes =
        read_private_bytes(file, CREDENTIALS_FILE).map_err(|error| failed(error.to_string()))?;
    String::from_utf8(bytes).map_err(|_| failed("not a text file (invalid UTF-8)".into()))
}

/// The credentials for `url` (never stored in a result or a report): from `file` when one
/// is given (smbclient's `-A` format), else from the environment through `variable`
/// (`std::env::var` in the program). The user named in the URL wins over both; a user
/// without a password is refused.
pub fn resolve_credentials(
    url: &SmbUrl,
    file: Option<&Path>,
    variable: impl Fn(&str) -> Option<String>,
) -> Result<SmbCredentials, CredentialsError> {
    let [user, password, domain] = match file {
        Some(file) => parse_credentials_file(&read_credentials_file(file)?, file)?,
        None => [
            variable(USER_VARIABLE),
            variable(PASSWORD_VARIABLE),
            variable(DOMAIN_VARIABLE),
        ],
    };
    let user = url.user.clone().or(user).filter(|user| !user.is_empty());
    let source = match file {
        Some(file) => format!("the credentials file {}", file.display()),
        None => PASSWORD_VARIABLE.to_string(),
    };
    let Some(user) = user else {
        return Err(CredentialsError(format!(
            "no user: name one in the URL (smb://USER@HOST/…), in {USER_VARIABLE} or \
                 in a credentials file (--smb-credentials FILE)"
        )));
    };
    let Some(password) = password else {
        return Err(CredentialsError(format!(
            "no password for {user}: none in {source} (credentials are never taken \
                 from the command line)"
        )));
    };
    // `DOMAIN;user` as smbclient writes it.
    let (domain, user) = match user.split_once(';') {
        Some((domain, user)) => (domain.to_string(), user.to_string()),
        None => (domain.unwrap_or_default(), user),
    };
    Ok(SmbCredentials {
        user,
        password,
        domain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn urls_name_a_file_on_a_share() {
        let url = SmbUrl::parse("smb://[::1]/share/a/b").unwrap();
        assert_eq!(
            (url.server.host.as_str(), url.server.port),
            ("::1", SMB_PORT)
        );
        assert_eq!((url.share.as_str(), url.path.as_str()), ("share", "a/b"));
        assert_eq!(url.to_string(), "smb://[::1]:445/share/a/b");
        assert_eq!(url.smb_path(), "a\\b");
        assert_eq!(url.unc_share(), "\\\\::1\\share");
        assert_eq!(share_address(&url).unc(), url.unc_share());
        assert_eq!(share_address(&url).server(), url.server.to_string());
        for (bad, named) in [
            ("smb://u:p@host/share/f", "password does not belong"),
            ("smb://host", "expected"),
            ("smb://host/", "no share"),
            ("smb://host/share", "must name a file"),
            ("smb://host/share/", "must name a file"),
            ("smb://host/share/../f", "'..'"),
            ("smb://host/share/f?sign=1", "no options"),
            ("smb://@host/share/f", "empty user"),
            ("smb://host:0/share/f", "not a port"),
            ("nfs://host/share/f", "not an smb"),
        ] {
            let error = SmbUrl::parse(bad).unwrap_err();
            assert!(error.to_string().contains(named), "{bad}: {error}");
        }
    }

    #[test]
    fn credentials_come_from_the_environment_or_a_file_never_the_url() {
        let url = SmbUrl::parse("smb://host/share/f").unwrap();
        let environment = |name: &str| match name {
            USER_VARIABLE => Some("bob".to_string()),
            PASSWORD_VARIABLE => Some("pw".to_string()),
            _ => None,
        };
        let found = resolve_credentials(&url, None, environment).unwrap();
        assert_eq!(
            (
                found.user.as_str(),
                found.password.as_str(),
                found.domain.as_str()
            ),
            ("bob", "pw", "")
        );
        assert!(!format!("{found:?}").contains("pw\""), "{found:?}");
        let named = SmbUrl::parse("smb://WORK;carol@host/share/f").unwrap();
        let found = resolve_credentials(&named, None, environment).unwrap();
        assert_eq!(
            (found.user.as_str(), found.domain.as_str()),
            ("carol", "WORK")
        );
        let error = resolve_credentials(&url, None, |_| None).unwrap_err();
        assert!(error.0.contains("no user"), "{error}");
        let error = resolve_credentials(&named, None, |_| None).unwrap_err();
        assert!(error.0.contains("no password for WORK;carol"), "{error}");

        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("credentials");
        std::fs::write(
            &file,
            "# test\nusername = dave\npassword =  two words\ndomain=LAB\n",
        )
        .unwrap();
        // Refused while others may read it; read once only its owner may.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = resolve_credentials(&url, Some(&file), environment).unwrap_err();
        assert!(
            error.0.contains("0644 are too open") && !error.0.contains("two words"),
            "{error}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let found = resolve_credentials(&url, Some(&file), environment).unwrap();
        assert_eq!(
            (
                found.user.as_str(),
                found.password.as_str(),
                found.domain.as_str()
            ),
            ("dave", "two words", "LAB")
        );
        std::fs::write(&file, "user name: x\n").unwrap();
        let error = resolve_credentials(&url, Some(&file), environment).unwrap_err();
        assert!(error.0.contains("line 1"), "{error}");
        let error = resolve_credentials(&url, Some(directory.path()), environment).unwrap_err();
        assert!(error.0.contains("not a regular file"), "{error}");
        std::fs::write(&file, vec![b'#'; MAX_CREDENTIALS_FILE_BYTES as usize + 2]).unwrap();
        let error = resolve_credentials(&url, Some(&file), environment).unwrap_err();
        assert!(error.0.contains("larger than"), "{error}");
    }
}
