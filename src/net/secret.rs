//! The shared secret of `iopath net`: read from a file only its owner can read, or taken from
//! the environment. The bytes never leave this type except into the HMAC of [`super::auth`]:
//! it has no `Display`, and its `Debug` shows only the length.
//!
//! ```
//! use iopath::net::secret::Secret;
//! let secret = Secret::from_bytes(b"0123456789abcdef0123\n", "IOPATH_NET_SECRET").unwrap();
//! assert_eq!(format!("{secret:?}"), "Secret(20 bytes)");
//! assert!(Secret::from_bytes(b"short", "IOPATH_NET_SECRET").is_err());
//! ```

use crate::gate::read::{FileLimit, read_private_bytes};
use std::path::Path;

/// Name of the environment variable that may hold the secret.
pub const SECRET_ENV: &str = "IOPATH_NET_SECRET";
/// Shortest secret accepted, bytes.
pub const MIN_SECRET_BYTES: usize = 16;
/// Longest secret file read, bytes.
pub const MAX_SECRET_BYTES: usize = 4096;

/// The secret file: the longest secret and a line break (`\r\n`).
const SECRET_FILE: FileLimit = FileLimit {
    what: "secret file",
    max_bytes: MAX_SECRET_BYTES as u64 + 2,
};

/// A shared secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "Secret({} bytes)", self.bytes.len())
    }
}

/// Why a secret was not accepted. Messages name where the secret came from, never its bytes.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The file cannot be opened or read, is not a regular file, is too large, or others than
    /// its owner may read it ([`read_private_bytes`]).
    #[error("{source_name}: {reason}")]
    Unreadable {
        /// The file or variable.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// Too short or too long.
    #[error(
        "{source_name}: the secret has {length} bytes: it needs {MIN_SECRET_BYTES} to \
         {MAX_SECRET_BYTES} (e.g. head -c 32 /dev/urandom | base64)"
    )]
    Length {
        /// The file or variable.
        source_name: String,
        /// Bytes found (after a trailing line break is removed).
        length: usize,
    },
}

impl Secret {
    /// A secret from `bytes` (one trailing line break removed), named `source_name` in errors.
    pub fn from_bytes(bytes: &[u8], source_name: &str) -> Result<Secret, SecretError> {
        let trimmed = bytes
            .strip_suffix(b"\n")
            .map(|rest| rest.strip_suffix(b"\r").unwrap_or(rest))
            .unwrap_or(bytes);
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&trimmed.len()) {
            return Err(SecretError::Length {
                source_name: source_name.to_string(),
                length: trimmed.len(),
            });
        }
        Ok(Secret {
            bytes: trimmed.to_vec(),
        })
    }

    /// Reads a secret from a regular file whose permissions let only its owner in (as ssh
    /// does for private keys), of at most [`MAX_SECRET_BYTES`] and a line break.
    pub fn from_file(path: &Path) -> Result<Secret, SecretError> {
        let source_name = path.display().to_string();
        let bytes =
            read_private_bytes(path, SECRET_FILE).map_err(|error| SecretError::Unreadable {
                source_name: source_name.clone(),
                reason: error.to_string(),
            })?;
        Secret::from_bytes(&bytes, &source_name)
    }

    /// The bytes, for the HMAC key.
    pub(crate) fn key(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::Permissions;
    use std::os::unix::fs::PermissionsExt;

    fn file_with(contents: &[u8], mode: u32) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, contents).unwrap();
        std::fs::set_permissions(&path, Permissions::from_mode(mode)).unwrap();
        (dir, path)
    }

    #[test]
    fn an_owner_only_file_is_read_without_its_line_break() {
        let (_dir, path) = file_with(b"correct horse battery staple\r\n", 0o600);
        let secret = Secret::from_file(&path).unwrap();
        assert_eq!(secret.key(), b"correct horse battery staple");
        let (_dir, path) = file_with(b"correct horse battery staple", 0o400);
        assert_eq!(Secret::from_file(&path).unwrap(), secret);
    }

    #[test]
    fn a_file_others_can_read_is_refused_without_showing_it() {
        for mode in [0o644, 0o640, 0o604, 0o620] {
            let (_dir, path) = file_with(b"correct horse battery staple", mode);
            let error = Secret::from_file(&path).unwrap_err().to_string();
            assert!(error.contains("too open"), "{error}");
            assert!(error.contains("chmod 600"), "{error}");
            assert!(!error.contains("horse"), "{error}");
        }
    }

    #[test]
    fn short_long_and_odd_files_are_refused() {
        let (_dir, path) = file_with(b"short\n", 0o600);
        assert!(matches!(
            Secret::from_file(&path),
            Err(SecretError::Length { length: 5, .. })
        ));
        let (_dir, path) = file_with(&vec![b'x'; MAX_SECRET_BYTES + 1], 0o600);
        assert!(matches!(
            Secret::from_file(&path),
            Err(SecretError::Length { .. })
        ));
        let (_dir, path) = file_with(&vec![b'x'; MAX_SECRET_BYTES + 100], 0o600);
        let error = Secret::from_file(&path).unwrap_err().to_string();
        assert!(error.contains("larger than"), "{error}");
        let dir = tempfile::tempdir().unwrap();
        let error = Secret::from_file(dir.path()).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
        let error = Secret::from_file(&dir.path().join("absent")).unwrap_err();
        assert!(matches!(error, SecretError::Unreadable { .. }), "{error}");
    }
}
