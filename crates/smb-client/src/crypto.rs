//! The keys of an SMB session and what they do: key derivation (SP800-108 in counter mode
//! with HMAC-SHA256), the SMB 3.1.1 preauthentication hash (SHA-512), message signing
//! (HMAC-SHA256 for SMB 2.x, AES-128-CMAC for 3.x, AES-128-GMAC for 3.1.1) and encryption
//! (AES-128-CCM for SMB 3.0 and 3.0.2; AES-128-GCM, AES-128-CCM, AES-256-GCM or AES-256-CCM
//! for 3.1.1, as negotiated).
//!
//! Keys are scheduled once per session; signing and sealing a message work in place and
//! allocate nothing.

use crate::ccm::AesCcm;
use aes_gcm::aead::{self, AeadInOut, consts::U16, inout::InOutBuf};
use aes_gcm::aes::{Aes128, Aes256};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use cmac::Cmac;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest as _, Sha256, Sha512};

/// SP800-108 KDF (counter mode, HMAC-SHA256) for a 128-bit key, as SMB 3 derives its keys:
/// `label` and `context` include their terminating zero where SMB's do.
pub fn derive_key(key: &[u8], label: &[u8], context: &[u8]) -> [u8; 16] {
    let out = counter_mode_kdf(key, label, context, 128);
    out[..16].try_into().expect("16 of 32 bytes")
}

/// The encryption or decryption key for `cipher`: [`derive_key`]'s KDF with the cipher's key
/// length (256-bit keys are derived with L = 256, MS-SMB2 3.2.5.3.1).
pub fn derive_cipher_key(cipher: Cipher, key: &[u8], label: &[u8], context: &[u8]) -> Vec<u8> {
    let bytes = cipher.key_bytes();
    counter_mode_kdf(key, label, context, 8 * bytes as u32)[..bytes].to_vec()
}

/// Which key schedule a session follows (MS-SMB2 3.2.5.3.1): the labels and contexts its
/// signing and encryption keys are derived with.
#[derive(Clone, Copy, Debug)]
pub enum KeySchedule<'a> {
    /// SMB 2.0.2 and 2.1: the session key signs as it is; there is no encryption.
    Smb2,
    /// SMB 3.0 and 3.0.2: fixed labels and contexts.
    Smb30,
    /// SMB 3.1.1: the preauthentication hash of the session's setup is every key's context.
    Smb311(&'a PreauthHash),
}

impl KeySchedule<'_> {
    /// The signing key for `session_key` (the NTLM or Kerberos session key).
    pub fn signing_key(self, session_key: &[u8; 16]) -> [u8; 16] {
        match self {
            KeySchedule::Smb2 => *session_key,
            KeySchedule::Smb30 => derive_key(session_key, b"SMB2AESCMAC\0", b"SmbSign\0"),
            KeySchedule::Smb311(preauth) => derive_key(session_key, b"SMBSigningKey\0", &preauth.0),
        }
    }

    /// The client's encryption key and its decryption key for `cipher` (SMB 2.x has no
    /// encryption: asked anyway, it gets SMB 3.0's keys).
    pub fn cipher_keys(self, cipher: Cipher, session_key: &[u8]) -> (Vec<u8>, Vec<u8>) {
        match self {
            KeySchedule::Smb2 | KeySchedule::Smb30 => (
                derive_cipher_key(cipher, session_key, b"SMB2AESCCM\0", b"ServerIn \0"),
                derive_cipher_key(cipher, session_key, b"SMB2AESCCM\0", b"ServerOut\0"),
            ),
            KeySchedule::Smb311(preauth) => (
                derive_cipher_key(cipher, session_key, b"SMBC2SCipherKey\0", &preauth.0),
                derive_cipher_key(cipher, session_key, b"SMBS2CCipherKey\0", &preauth.0),
            ),
        }
    }
}

/// One round of SP800-108 in counter mode with HMAC-SHA256, for keys of up to 256 bits.
fn counter_mode_kdf(key: &[u8], label: &[u8], context: &[u8], bits: u32) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(&1u32.to_be_bytes());
    mac.update(label);
    mac.update(&[0]);
    mac.update(context);
    mac.update(&bits.to_be_bytes());
    mac.finalize().into_bytes().into()
}

/// The SMB 3.1.1 preauthentication integrity hash: SHA-512 chained over the NEGOTIATE and
/// SESSION_SETUP messages.
#[derive(Clone, Debug)]
pub struct PreauthHash(pub [u8; 64]);

impl PreauthHash {
    /// The starting value (zeros).
    pub fn new() -> Self {
        PreauthHash([0; 64])
    }

    /// Chains `message` (an SMB2 message without its transport header) in.
    pub fn update(&mut self, message: &[u8]) {
        let mut hasher = Sha512::new();
        hasher.update(self.0);
        hasher.update(message);
        self.0.copy_from_slice(&hasher.finalize());
    }
}

impl Default for PreauthHash {
    fn default() -> Self {
        Self::new()
    }
}

/// Where the signature lies in an SMB2 header, and the flag saying a message is signed.
const SIGNATURE_AT: std::ops::Range<usize> = 48..64;
const FLAG_SIGNED: u32 = 0x0000_0008;

/// Signs and checks messages of one session.
#[derive(Clone)]
pub enum Signer {
    /// SMB 2.x: HMAC-SHA256, first 16 bytes.
    HmacSha256(Hmac<Sha256>),
    /// SMB 3.x: AES-128-CMAC.
    AesCmac(Box<Cmac<Aes128>>),
    /// SMB 3.1.1 when both sides offer it: AES-128-GMAC (GCM over the message as associated
    /// data; the nonce is the message id and whether the message is a response).
    AesGmac(Box<Aes128Gcm>),
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Signer {
    /// A signer with `key` (the session key for SMB 2.x, the derived signing key for 3.x).
    pub fn new(smb3: bool, key: &[u8]) -> Self {
        if smb3 {
            Signer::AesCmac(Box::new(
                <Cmac<Aes128> as KeyInit>::new_from_slice(key).expect("16-byte key"),
            ))
        } else {
            Signer::HmacSha256(
                <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key"),
            )
        }
    }

    /// An AES-128-GMAC signer with the derived signing key (SMB 3.1.1).
    pub fn gmac(key: &[u8; 16]) -> Self {
        Signer::AesGmac(Box::new(Aes128Gcm::new(key.into())))
    }

    /// The algorithm's name.
    pub fn name(&self) -> &'static str {
        match self {
            Signer::HmacSha256(_) => "HMAC-SHA256",
            Signer::AesCmac(_) => "AES-128-CMAC",
            Signer::AesGmac(_) => "AES-128-GMAC",
        }
    }

    fn signature(&self, message: &[u8]) -> [u8; 16] {
        match self {
            Signer::HmacSha256(mac) => {
                let mut mac = mac.clone();
                mac.update(message);
                mac.finalize().into_bytes()[..16]
                    .try_into()
                    .expect("16 of 32 bytes")
            }
            Signer::AesCmac(mac) => {
                let mut mac = Cmac::clone(mac);
                mac.update(message);
                mac.finalize().into_bytes().into()
            }
            Signer::AesGmac(gcm) => gmac(gcm, gmac_nonce(message), message),
        }
    }

    /// Sets the signed flag of `message` (an SMB2 header and body) and its signature.
    pub fn sign(&self, message: &mut [u8]) {
        let flags = u32::from_le_bytes(message[16..20].try_into().expect("4 bytes")) | FLAG_SIGNED;
        message[16..20].copy_from_slice(&flags.to_le_bytes());
        message[SIGNATURE_AT].fill(0);
        let signature = self.signature(message);
        message[SIGNATURE_AT].copy_from_slice(&signature);
    }

    /// Whether `message`'s signature is right (its signature field is zeroed on the way and
    /// put back).
    pub fn verify(&self, message: &mut [u8]) -> bool {
        let mut given = [0u8; 16];
        given.copy_from_slice(&message[SIGNATURE_AT]);
        message[SIGNATURE_AT].fill(0);
        let expected = self.signature(message);
        message[SIGNATURE_AT].copy_from_slice(&given);
        // Differences are folded together so the comparison's time does not depend on where.
        expected
            .iter()
            .zip(given)
            .fold(0u8, |difference, (a, b)| difference | (a ^ b))
            == 0
    }
}

/// The AES-GMAC nonce of an SMB2 message (MS-SMB2 3.1.4.1): its message id, then a word whose
/// bit 0 says "a response" and bit 1 "a CANCEL" (never sent here).
fn gmac_nonce(message: &[u8]) -> [u8; 12] {
    let mut nonce = [0u8; 12];
    nonce[..8].copy_from_slice(&message[24..32]);
    nonce[8] = (message[16] & 1) | u8::from(message[12..14] == [0x0C, 0]) << 1;
    nonce
}

/// AES-GMAC: the GCM tag of `authenticated` as associated data, with nothing encrypted.
fn gmac(gcm: &Aes128Gcm, nonce: [u8; 12], authenticated: &[u8]) -> [u8; 16] {
    let nonce = aes_gcm::Nonce::<aes_gcm::aes::cipher::consts::U12>::from(nonce);
    gcm.encrypt_inout_detached(&nonce, authenticated, InOutBuf::from(&mut [][..]))
        .expect("a message shorter than GCM's limit")
        .into()
}

/// The SMB2 transform header's size.
pub const TRANSFORM_HEADER_BYTES: usize = 52;
/// The protocol id of a transform header (`0xFD 'S' 'M' 'B'`).
pub const TRANSFORM_PROTOCOL_ID: [u8; 4] = [0xFD, b'S', b'M', b'B'];

/// An SMB encryption algorithm (MS-SMB2 2.2.3.1.2: the ids of the cipher context).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cipher {
    /// AES-128-CCM: SMB 3.0 and 3.0.2's only cipher; 3.1.1 may choose it too.
    Aes128Ccm,
    /// AES-128-GCM (SMB 3.1.1).
    Aes128Gcm,
    /// AES-256-CCM (SMB 3.1.1).
    Aes256Ccm,
    /// AES-256-GCM (SMB 3.1.1).
    Aes256Gcm,
}

impl Cipher {
    /// The ciphers offered in SMB 3.1.1's cipher context, preferred first: GCM before CCM
    /// (it is faster on CPUs with carry-less multiply), 128-bit keys before 256-bit ones.
    pub const OFFERED: [Cipher; 4] = [
        Cipher::Aes128Gcm,
        Cipher::Aes128Ccm,
        Cipher::Aes256Gcm,
        Cipher::Aes256Ccm,
    ];

    /// The cipher with this id, when this crate speaks it.
    pub fn from_id(id: u16) -> Option<Cipher> {
        Cipher::OFFERED.into_iter().find(|cipher| cipher.id() == id)
    }

    /// The id in the cipher context.
    pub fn id(self) -> u16 {
        match self {
            Cipher::Aes128Ccm => 0x0001,
            Cipher::Aes128Gcm => 0x0002,
            Cipher::Aes256Ccm => 0x0003,
            Cipher::Aes256Gcm => 0x0004,
        }
    }

    /// Its name: `AES-128-CCM`.
    pub fn name(self) -> &'static str {
        match self {
            Cipher::Aes128Ccm => "AES-128-CCM",
            Cipher::Aes128Gcm => "AES-128-GCM",
            Cipher::Aes256Ccm => "AES-256-CCM",
            Cipher::Aes256Gcm => "AES-256-GCM",
        }
    }

    /// The key's length in bytes (16 or 32).
    pub fn key_bytes(self) -> usize {
        match self {
            Cipher::Aes128Ccm | Cipher::Aes128Gcm => 16,
            Cipher::Aes256Ccm | Cipher::Aes256Gcm => 32,
        }
    }

    /// The nonce's length in bytes: 11 for CCM, 12 for GCM (the rest of the transform
    /// header's 16-byte nonce field is zero).
    pub fn nonce_bytes(self) -> usize {
        match self {
            Cipher::Aes128Ccm | Cipher::Aes256Ccm => 11,
            Cipher::Aes128Gcm | Cipher::Aes256Gcm => 12,
        }
    }
}

/// One direction's keyed cipher.
#[derive(Clone)]
enum Keyed {
    Aes128Ccm(Box<AesCcm<Aes128>>),
    Aes128Gcm(Box<Aes128Gcm>),
    Aes256Ccm(Box<AesCcm<Aes256>>),
    Aes256Gcm(Box<Aes256Gcm>),
}

impl Keyed {
    /// `cipher` keyed with `key` (as long as [`Cipher::key_bytes`]).
    fn new(cipher: Cipher, key: &[u8]) -> Keyed {
        const KEY: &str = "a key of the cipher's length";
        match cipher {
            Cipher::Aes128Ccm => Keyed::Aes128Ccm(Box::new(AesCcm::new(
                Aes128::new_from_slice(key).expect(KEY),
            ))),
            Cipher::Aes128Gcm => {
                Keyed::Aes128Gcm(Box::new(Aes128Gcm::new_from_slice(key).expect(KEY)))
            }
            Cipher::Aes256Ccm => Keyed::Aes256Ccm(Box::new(AesCcm::new(
                Aes256::new_from_slice(key).expect(KEY),
            ))),
            Cipher::Aes256Gcm => {
                Keyed::Aes256Gcm(Box::new(Aes256Gcm::new_from_slice(key).expect(KEY)))
            }
        }
    }

    /// Encrypts `message` in place; returns the tag. `nonce` is as long as the cipher's.
    fn seal(&self, nonce: &[u8], associated: &[u8], message: &mut [u8]) -> [u8; 16] {
        match self {
            Keyed::Aes128Ccm(ccm) => seal_with(ccm.as_ref(), nonce, associated, message),
            Keyed::Aes128Gcm(gcm) => seal_with(gcm.as_ref(), nonce, associated, message),
            Keyed::Aes256Ccm(ccm) => seal_with(ccm.as_ref(), nonce, associated, message),
            Keyed::Aes256Gcm(gcm) => seal_with(gcm.as_ref(), nonce, associated, message),
        }
    }

    /// Decrypts `message` in place when `tag` authenticates it and `associated`.
    fn open(&self, nonce: &[u8], associated: &[u8], message: &mut [u8], tag: &[u8]) -> bool {
        match self {
            Keyed::Aes128Ccm(ccm) => open_with(ccm.as_ref(), nonce, associated, message, tag),
            Keyed::Aes128Gcm(gcm) => open_with(gcm.as_ref(), nonce, associated, message, tag),
            Keyed::Aes256Ccm(ccm) => open_with(ccm.as_ref(), nonce, associated, message, tag),
            Keyed::Aes256Gcm(gcm) => open_with(gcm.as_ref(), nonce, associated, message, tag),
        }
    }
}

/// [`Keyed::seal`] with one AEAD (a 16-byte tag; `nonce` as long as its nonce).
fn seal_with<A>(aead: &A, nonce: &[u8], associated: &[u8], message: &mut [u8]) -> [u8; 16]
where
    A: AeadInOut<TagSize = U16>,
{
    let nonce = aead::Nonce::<A>::try_from(nonce).expect("a nonce of the cipher's length");
    aead.encrypt_inout_detached(&nonce, associated, InOutBuf::from(message))
        .expect("a message shorter than the cipher's limit")
        .into()
}

/// [`Keyed::open`] with one AEAD (a 16-byte tag; `nonce` as long as its nonce).
fn open_with<A>(aead: &A, nonce: &[u8], associated: &[u8], message: &mut [u8], tag: &[u8]) -> bool
where
    A: AeadInOut<TagSize = U16>,
{
    let nonce = aead::Nonce::<A>::try_from(nonce).expect("a nonce of the cipher's length");
    let tag = aead::Tag::<A>::try_from(tag).expect("16 bytes");
    aead.decrypt_inout_detached(&nonce, associated, InOutBuf::from(message), &tag)
        .is_ok()
}

/// Encrypts requests and decrypts responses of one session with its [`Cipher`] (MS-SMB2
/// 3.1.4.3: the nonce opens the transform header's nonce field, the associated data is the
/// header from that field on, the tag is its signature field).
#[derive(Clone)]
pub struct Sealer {
    cipher: Cipher,
    client_to_server: Keyed,
    server_to_client: Keyed,
    session_id: u64,
    /// Messages sealed so far: the nonce's counter (never reused under one key).
    sealed: u64,
    /// The nonce's bytes after the counter: random, as many as the cipher's nonce has left.
    nonce_suffix: [u8; 4],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.cipher.name())
    }
}

/// Where the nonce and the associated data start in a transform header.
const NONCE_AT: usize = 20;

impl Sealer {
    /// A sealer for `cipher` with the session's derived keys (each as long as
    /// [`Cipher::key_bytes`]).
    pub fn new(
        cipher: Cipher,
        encryption_key: &[u8],
        decryption_key: &[u8],
        session_id: u64,
    ) -> Self {
        let mut nonce_suffix = [0u8; 4];
        let _ = getrandom::fill(&mut nonce_suffix);
        Sealer {
            cipher,
            client_to_server: Keyed::new(cipher, encryption_key),
            server_to_client: Keyed::new(cipher, decryption_key),
            session_id,
            sealed: 0,
            nonce_suffix,
        }
    }

    /// A sealer with this session's keys for another channel of the session (multichannel):
    /// its nonce counter starts at `channel` (1 and up) in its top byte, so that no two
    /// channels ever use one nonce under the session's key, whatever the cipher's nonce length.
    pub fn for_channel(&self, channel: u8) -> Sealer {
        let mut sealer = self.clone();
        sealer.sealed = u64::from(channel) << 56;
        sealer
    }

    /// The session's cipher.
    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    /// Encrypts `frame[TRANSFORM_HEADER_BYTES..]` (one SMB2 message) in place and writes the
    /// transform header before it.
    pub fn seal(&mut self, frame: &mut [u8]) {
        let (header, message) = frame.split_at_mut(TRANSFORM_HEADER_BYTES);
        self.sealed += 1;
        header.fill(0);
        header[..4].copy_from_slice(&TRANSFORM_PROTOCOL_ID);
        // The nonce: the counter, then random bytes up to the cipher's nonce length.
        let nonce_end = NONCE_AT + self.cipher.nonce_bytes();
        header[NONCE_AT..NONCE_AT + 8].copy_from_slice(&self.sealed.to_le_bytes());
        header[NONCE_AT + 8..nonce_end]
            .copy_from_slice(&self.nonce_suffix[..nonce_end - NONCE_AT - 8]);
        header[36..40].copy_from_slice(&(message.len() as u32).to_le_bytes());
        // Flags "encrypted" on 3.1.1, EncryptionAlgorithm AES-128-CCM on 3.0: both 1.
        header[42..44].copy_from_slice(&1u16.to_le_bytes());
        header[44..52].copy_from_slice(&self.session_id.to_le_bytes());
        let (head, associated) = header.split_at_mut(NONCE_AT);
        let tag = self.client_to_server.seal(
            &associated[..self.cipher.nonce_bytes()],
            associated,
            message,
        );
        head[4..20].copy_from_slice(&tag);
    }

    /// Decrypts the message after the transform header of `frame` in place; `Err` when the
    /// header is not this session's or the message does not authenticate.
    pub fn open(&self, frame: &mut [u8]) -> Result<(), &'static str> {
        if frame.len() < TRANSFORM_HEADER_BYTES {
            return Err("an encrypted message shorter than its header");
        }
        let (header, message) = frame.split_at_mut(TRANSFORM_HEADER_BYTES);
        let size = u32::from_le_bytes(header[36..40].try_into().expect("4 bytes")) as usize;
        if size != message.len() {
            return Err("an encrypted message of another size than its header says");
        }
        if u64::from_le_bytes(header[44..52].try_into().expect("8 bytes")) != self.session_id {
            return Err("an encrypted message of another session");
        }
        let associated = &header[NONCE_AT..];
        if self.server_to_client.open(
            &associated[..self.cipher.nonce_bytes()],
            associated,
            message,
            &header[4..20],
        ) {
            Ok(())
        } else {
            Err("an encrypted message that does not authenticate (wrong key or altered)")
        }
    }
}

#[cfg(test)]
#[path = "crypto_known_answers.rs"]
mod known_answers;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_verify_and_catch_changes() {
        for smb3 in [false, true] {
            let signer = Signer::new(smb3, &[7; 16]);
            let mut message = vec![0u8; 100];
            message[..4].copy_from_slice(&[0xFE, b'S', b'M', b'B']);
            signer.sign(&mut message);
            assert_ne!(&message[48..64], &[0; 16]);
            assert!(signer.verify(&mut message));
            message[99] ^= 1;
            assert!(!signer.verify(&mut message));
        }
    }

    #[test]
    fn gmac_signatures_depend_on_the_message_id_and_the_direction() {
        let signer = Signer::gmac(&[9; 16]);
        let mut request = vec![0u8; 100];
        request[..4].copy_from_slice(&[0xFE, b'S', b'M', b'B']);
        request[24] = 5;
        signer.sign(&mut request);
        assert!(signer.verify(&mut request));
        let mut response = request.clone();
        response[16] |= 1;
        assert!(!signer.verify(&mut response), "a response's nonce differs");
        let mut other_id = request.clone();
        other_id[24] = 6;
        assert!(!signer.verify(&mut other_id));
    }

    #[test]
    fn sealed_messages_open_with_the_peers_keys_under_every_cipher() {
        for cipher in Cipher::OFFERED {
            let (one, two) = (vec![1; cipher.key_bytes()], vec![2; cipher.key_bytes()]);
            let mut client = Sealer::new(cipher, &one, &two, 5);
            let server = Sealer::new(cipher, &two, &one, 5);
            let mut frame = vec![0u8; TRANSFORM_HEADER_BYTES + 80];
            frame[TRANSFORM_HEADER_BYTES..].fill(0x33);
            client.seal(&mut frame);
            assert_ne!(
                &frame[TRANSFORM_HEADER_BYTES..],
                &[0x33; 80][..],
                "{cipher:?}"
            );
            // The nonce field past the cipher's nonce stays zero (MS-SMB2 2.2.41).
            assert!(
                frame[NONCE_AT + cipher.nonce_bytes()..36]
                    .iter()
                    .all(|b| *b == 0)
            );
            let mut copy = frame.clone();
            server.open(&mut frame).unwrap();
            assert_eq!(
                &frame[TRANSFORM_HEADER_BYTES..],
                &[0x33; 80][..],
                "{cipher:?}"
            );
            copy[60] ^= 1;
            assert!(server.open(&mut copy).is_err(), "{cipher:?}");
            // Another cipher with the same key does not open it.
            let other = Cipher::OFFERED
                .into_iter()
                .find(|c| *c != cipher && c.key_bytes() == cipher.key_bytes())
                .expect("two ciphers per key length");
            let mut again = vec![0u8; TRANSFORM_HEADER_BYTES + 80];
            client.seal(&mut again);
            assert!(Sealer::new(other, &two, &one, 5).open(&mut again).is_err());
        }
    }

    #[test]
    fn cipher_ids_are_those_of_the_cipher_context() {
        let ids = Cipher::OFFERED.map(Cipher::id);
        assert_eq!(ids, [2, 1, 4, 3]);
        for cipher in Cipher::OFFERED {
            assert_eq!(Cipher::from_id(cipher.id()), Some(cipher));
        }
        assert_eq!(Cipher::from_id(0), None);
    }

    /// Key derivation is deterministic and depends on its label.
    #[test]
    fn derived_keys_differ_by_label() {
        let a = derive_key(&[1; 16], b"SMBSigningKey\0", &[0; 64]);
        assert_eq!(a, derive_key(&[1; 16], b"SMBSigningKey\0", &[0; 64]));
        assert_ne!(a, derive_key(&[1; 16], b"SMBC2SCipherKey\0", &[0; 64]));
        // A 128-bit cipher key is the signing KDF's; a 256-bit one is derived with L = 256.
        let label = b"SMBC2SCipherKey\0";
        let short = derive_cipher_key(Cipher::Aes128Ccm, &[1; 16], label, &[0; 64]);
        assert_eq!(short, derive_key(&[1; 16], label, &[0; 64]));
        let long = derive_cipher_key(Cipher::Aes256Gcm, &[1; 16], label, &[0; 64]);
        assert_eq!(long.len(), 32);
        assert_ne!(long[..16], short[..]);
    }
}
