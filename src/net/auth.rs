//! Mutual challenge-response over the shared [`Secret`]: each side sends a fresh random nonce,
//! the client proves it knows the secret with an HMAC-SHA256 over both nonces and the test's
//! parameters, and the server answers with its own HMAC over the same plus the session it
//! grants. Each proof starts with a label of its own, so that one side's proof can never be
//! replayed as the other's. The secret itself never goes on the wire.
//!
//! ```
//! use iopath::net::auth::{Nonce, client_proof, server_proof, verify_client, verify_server};
//! use iopath::net::secret::Secret;
//! let secret = Secret::from_bytes(b"a shared secret of some length", "test").unwrap();
//! let (server_nonce, client_nonce) = (Nonce::random().unwrap(), Nonce::random().unwrap());
//! let parameters = b"the test's parameters";
//! let proof = client_proof(&secret, &server_nonce, &client_nonce, parameters);
//! assert!(verify_client(&secret, &server_nonce, &client_nonce, parameters, &proof));
//! assert!(!verify_server(&secret, &server_nonce, &client_nonce, parameters, 7, &proof));
//! let answer = server_proof(&secret, &server_nonce, &client_nonce, parameters, 7);
//! assert!(verify_server(&secret, &server_nonce, &client_nonce, parameters, 7, &answer));
//! ```

use super::secret::Secret;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Bytes of a nonce.
pub const NONCE_BYTES: usize = 32;
/// Bytes of a proof (an HMAC-SHA256).
pub const PROOF_BYTES: usize = 32;

const CLIENT_LABEL: &[u8] = b"iopath net v2 client proof";
const SERVER_LABEL: &[u8] = b"iopath net v2 server proof";

/// A random number used once, from the operating system's random source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nonce(pub [u8; NONCE_BYTES]);

impl Nonce {
    /// A fresh nonce.
    pub fn random() -> std::io::Result<Nonce> {
        let mut bytes = [0u8; NONCE_BYTES];
        getrandom::fill(&mut bytes).map_err(|error| std::io::Error::other(error.to_string()))?;
        Ok(Nonce(bytes))
    }

    /// Lower-case hexadecimal, as it goes on the wire.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// Reads exactly [`NONCE_BYTES`] bytes of hexadecimal.
    pub fn from_hex(text: &str) -> Option<Nonce> {
        from_hex::<NONCE_BYTES>(text).map(Nonce)
    }
}

/// A random session number, from the operating system's random source.
pub fn random_session() -> std::io::Result<u64> {
    getrandom::u64().map_err(|error| std::io::Error::other(error.to_string()))
}

fn mac(
    secret: &Secret,
    label: &[u8],
    server_nonce: &Nonce,
    client_nonce: &Nonce,
    parameters: &[u8],
) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.key()).expect("HMAC takes any key length");
    mac.update(label);
    mac.update(&server_nonce.0);
    mac.update(&client_nonce.0);
    mac.update(parameters);
    mac
}

/// The client's proof, hexadecimal.
pub fn client_proof(
    secret: &Secret,
    server_nonce: &Nonce,
    client_nonce: &Nonce,
    parameters: &[u8],
) -> String {
    let mac = mac(secret, CLIENT_LABEL, server_nonce, client_nonce, parameters);
    to_hex(&mac.finalize().into_bytes())
}

/// Whether `proof` is the client's proof (compared in constant time).
pub fn verify_client(
    secret: &Secret,
    server_nonce: &Nonce,
    client_nonce: &Nonce,
    parameters: &[u8],
    proof: &str,
) -> bool {
    let Some(proof) = from_hex::<PROOF_BYTES>(proof) else {
        return false;
    };
    mac(secret, CLIENT_LABEL, server_nonce, client_nonce, parameters)
        .verify_slice(&proof)
        .is_ok()
}

/// The server's proof for granting `session`, hexadecimal.
pub fn server_proof(
    secret: &Secret,
    server_nonce: &Nonce,
    client_nonce: &Nonce,
    parameters: &[u8],
    session: u64,
) -> String {
    let mut mac = mac(secret, SERVER_LABEL, server_nonce, client_nonce, parameters);
    mac.update(&session.to_le_bytes());
    to_hex(&mac.finalize().into_bytes())
}

/// Whether `proof` is the server's proof for `session` (compared in constant time).
pub fn verify_server(
    secret: &Secret,
    server_nonce: &Nonce,
    client_nonce: &Nonce,
    parameters: &[u8],
    session: u64,
    proof: &str,
) -> bool {
    let Some(proof) = from_hex::<PROOF_BYTES>(proof) else {
        return false;
    };
    let mut mac = mac(secret, SERVER_LABEL, server_nonce, client_nonce, parameters);
    mac.update(&session.to_le_bytes());
    mac.verify_slice(&proof).is_ok()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.as_bytes();
    if text.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut bytes = [0u8; N];
    for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(text: &str) -> Secret {
        Secret::from_bytes(text.as_bytes(), "test").unwrap()
    }

    #[test]
    fn a_known_hmac_sha256() {
        // RFC 4231, test case 2 ("Jefe" is below our minimum length, so the MAC is checked
        // directly against the crate with the same construction).
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            to_hex(&mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_wrong_secret_or_other_parameters_fail() {
        let (a, b) = (
            secret("the first secret, long enough"),
            secret("another secret, long enough"),
        );
        let (server, client) = (Nonce::random().unwrap(), Nonce::random().unwrap());
        let proof = client_proof(&a, &server, &client, b"p");
        assert!(verify_client(&a, &server, &client, b"p", &proof));
        assert!(!verify_client(&b, &server, &client, b"p", &proof));
        assert!(!verify_client(&a, &server, &client, b"q", &proof));
        assert!(!verify_client(&a, &client, &server, b"p", &proof));
        assert!(!verify_client(&a, &server, &client, b"p", "not hex"));
        assert!(!verify_client(&a, &server, &client, b"p", &proof[..10]));
        let answer = server_proof(&a, &server, &client, b"p", 1);
        assert!(!verify_server(&a, &server, &client, b"p", 2, &answer));
        assert!(!verify_server(&b, &server, &client, b"p", 1, &answer));
    }

    #[test]
    fn nonces_round_trip_as_hex_and_differ() {
        let nonce = Nonce::random().unwrap();
        assert_eq!(Nonce::from_hex(&nonce.to_hex()), Some(nonce));
        assert_ne!(Nonce::random().unwrap(), nonce);
        assert_eq!(Nonce::from_hex("zz"), None);
        assert_eq!(Nonce::from_hex(&"g".repeat(2 * NONCE_BYTES)), None);
    }
}
