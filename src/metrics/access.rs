//! Who may read the metrics: whoever can reach a loopback address, and beyond loopback only
//! a client that sends the bearer token of `--metrics-token-file` (`Authorization: Bearer
//! TOKEN`, as Prometheus sends the file of its `authorization: credentials_file:`).
//!
//! The token file follows the rules of `iopath net`'s secret file
//! ([`Secret::from_file`]): a regular file only its owner can read, of 16 to 4096 bytes,
//! opened without blocking and read within that bound. Surrounding white space is not part
//! of the token (Prometheus trims it too). Offered tokens are compared in constant time.
//!
//! ```
//! use iopath::metrics::access::{BearerToken, check_exposure};
//! let token = BearerToken::from_bytes(b"0123456789abcdef-token\n").unwrap();
//! assert!(token.admits(Some("Bearer 0123456789abcdef-token")));
//! assert!(!token.admits(Some("Bearer 0123456789abcdef-other")) && !token.admits(None));
//! assert!(check_exposure("127.0.0.1:9464".parse().unwrap(), None).is_ok());
//! assert!(check_exposure("0.0.0.0:9464".parse().unwrap(), None).is_err());
//! assert!(check_exposure("0.0.0.0:9464".parse().unwrap(), Some(&token)).is_ok());
//! ```

use super::address::MetricsAddressError;
use crate::net::secret::{Secret, SecretError};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::net::SocketAddr;
use std::path::Path;

/// Key of the MAC both tokens go through before they are compared: the comparison then
/// takes the same time whatever the offered token's length and content.
const COMPARISON_KEY: &[u8] = b"iopath metrics bearer token";

/// The token a client must send. It has no `Display`, and its `Debug` shows nothing of it.
#[derive(Clone)]
pub struct BearerToken {
    secret: Secret,
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("BearerToken")
    }
}

impl BearerToken {
    /// Reads the token of `--metrics-token-file` (the rules of [`Secret::from_file`]).
    pub fn from_file(path: &Path) -> Result<BearerToken, SecretError> {
        Secret::from_file(path).map(|secret| BearerToken { secret })
    }

    /// A token from `bytes` (the length rules of [`Secret::from_bytes`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<BearerToken, SecretError> {
        Secret::from_bytes(bytes, "the token").map(|secret| BearerToken { secret })
    }

    /// Whether `authorization` (an `Authorization` header's value) carries this token.
    pub fn admits(&self, authorization: Option<&str>) -> bool {
        let offered = authorization
            .map(str::trim)
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map_or(&b""[..], |(_, token)| token.trim().as_bytes());
        let expected = mac(self.secret.key().trim_ascii()).finalize().into_bytes();
        mac(offered).verify_slice(&expected).is_ok()
    }
}

/// The comparison MAC of `token`.
fn mac(token: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(COMPARISON_KEY).expect("HMAC takes any key length");
    mac.update(token);
    mac
}

/// Refuses an address beyond loopback without a token: the metrics name targets, jobs and
/// tests, and nobody outside this machine reads them unless the user chose who may.
pub fn check_exposure(
    address: SocketAddr,
    token: Option<&BearerToken>,
) -> Result<(), MetricsAddressError> {
    if token.is_none() && !address.ip().to_canonical().is_loopback() {
        return Err(MetricsAddressError::Unauthenticated { address });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_with_the_bearer_scheme_is_admitted() {
        let token = BearerToken::from_bytes(b"  correct horse battery staple \n").unwrap();
        assert!(token.admits(Some("Bearer correct horse battery staple")));
        assert!(token.admits(Some("bearer  correct horse battery staple ")));
        for refused in [
            "Bearer correct horse battery stapl",
            "Bearer correct horse battery staple!",
            "Basic correct horse battery staple",
            "correct horse battery staple",
            "Bearer ",
            "",
        ] {
            assert!(!token.admits(Some(refused)), "{refused}");
        }
        assert!(!token.admits(None));
        assert_eq!(format!("{token:?}"), "BearerToken");
    }

    #[test]
    fn beyond_loopback_needs_a_token() {
        let token = BearerToken::from_bytes(b"correct horse battery staple").unwrap();
        for loopback in [
            "127.0.0.1:1",
            "127.3.2.1:1",
            "[::1]:1",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(
                check_exposure(loopback.parse().unwrap(), None).is_ok(),
                "{loopback}"
            );
        }
        for open in ["0.0.0.0:1", "[::]:1", "192.0.2.7:1", "[::ffff:192.0.2.7]:1"] {
            let error = check_exposure(open.parse().unwrap(), None).unwrap_err();
            assert!(
                error.to_string().contains("--metrics-token-file"),
                "{error}"
            );
            assert!(check_exposure(open.parse().unwrap(), Some(&token)).is_ok());
        }
    }
}
