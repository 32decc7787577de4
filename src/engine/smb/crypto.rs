//! The keys of an SMB session and what they do: key derivation (SP800-108 in counter mode
//! with HMAC-SHA256), the SMB 3.1.1 preauthentication hash (SHA-512), message signing
//! (HMAC-SHA256 for SMB 2.x, AES-128-CMAC for 3.x) and encryption (AES-128-GCM, SMB 3.1.1).
//!
//! Keys are scheduled once per session; signing and sealing a message work in place and
//! allocate nothing.

use aes_gcm::Aes128Gcm;
use aes_gcm::aead::{AeadInOut, inout::InOutBuf};
use aes_gcm::aes::Aes128;
use cmac::Cmac;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest as _, Sha256, Sha512};

/// SP800-108 KDF (counter mode, HMAC-SHA256) for a 128-bit key, as SMB 3 derives its keys:
/// `label` and `context` include their terminating zero where SMB's do.
pub fn derive_key(key: &[u8], label: &[u8], context: &[u8]) -> [u8; 16] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(&1u32.to_be_bytes());
    mac.update(label);
    mac.update(&[0]);
    mac.update(context);
    mac.update(&128u32.to_be_bytes());
    let out = mac.finalize().into_bytes();
    out[..16].try_into().expect("16 of 32 bytes")
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
            Signer::AesGmac(gcm) => {
                // Nonce: the message id, then a word whose bit 0 says "a response" and bit 1
                // "a CANCEL" (never sent here).
                let mut nonce = [0u8; 12];
                nonce[..8].copy_from_slice(&message[24..32]);
                nonce[8] = (message[16] & 1) | u8::from(message[12..14] == [0x0C, 0]) << 1;
                let nonce = aes_gcm::Nonce::<aes_gcm::aes::cipher::consts::U12>::from(nonce);
                gcm.encrypt_inout_detached(&nonce, message, InOutBuf::from(&mut [][..]))
                    .expect("a message shorter than GCM's limit")
                    .into()
            }
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

/// The SMB2 transform header's size.
pub const TRANSFORM_HEADER_BYTES: usize = 52;
/// The protocol id of a transform header (`0xFD 'S' 'M' 'B'`).
pub const TRANSFORM_PROTOCOL_ID: [u8; 4] = [0xFD, b'S', b'M', b'B'];

/// Encrypts requests and decrypts responses of one session (AES-128-GCM).
#[derive(Clone)]
pub struct Sealer {
    client_to_server: Aes128Gcm,
    server_to_client: Aes128Gcm,
    session_id: u64,
    /// Messages sealed so far: the nonce's counter (never reused under one key).
    sealed: u64,
    nonce_prefix: [u8; 4],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AES-128-GCM")
    }
}

impl Sealer {
    /// A sealer with the session's derived keys.
    pub fn new(encryption_key: &[u8; 16], decryption_key: &[u8; 16], session_id: u64) -> Self {
        let mut nonce_prefix = [0u8; 4];
        let _ = getrandom::fill(&mut nonce_prefix);
        Sealer {
            client_to_server: Aes128Gcm::new(encryption_key.into()),
            server_to_client: Aes128Gcm::new(decryption_key.into()),
            session_id,
            sealed: 0,
            nonce_prefix,
        }
    }

    /// A sealer with this session's keys for another channel of the session (multichannel):
    /// its nonces differ from this one's in the prefix (`channel`, 1 and up, folded into its
    /// last byte), so that no two channels ever use one nonce under the session's key.
    pub fn for_channel(&self, channel: u8) -> Sealer {
        let mut sealer = self.clone();
        sealer.sealed = 0;
        sealer.nonce_prefix[3] ^= channel;
        sealer
    }

    /// Encrypts `frame[TRANSFORM_HEADER_BYTES..]` (one SMB2 message) in place and writes the
    /// transform header before it.
    pub fn seal(&mut self, frame: &mut [u8]) {
        let (header, message) = frame.split_at_mut(TRANSFORM_HEADER_BYTES);
        self.sealed += 1;
        header.fill(0);
        header[..4].copy_from_slice(&TRANSFORM_PROTOCOL_ID);
        header[20..28].copy_from_slice(&self.sealed.to_le_bytes());
        header[28..32].copy_from_slice(&self.nonce_prefix);
        header[36..40].copy_from_slice(&(message.len() as u32).to_le_bytes());
        header[42..44].copy_from_slice(&1u16.to_le_bytes());
        header[44..52].copy_from_slice(&self.session_id.to_le_bytes());
        let nonce = aes_gcm::Nonce::<aes_gcm::aes::cipher::consts::U12>::try_from(&header[20..32])
            .expect("12 bytes");
        let tag = self
            .client_to_server
            .encrypt_inout_detached(&nonce, &header[20..52], InOutBuf::from(message))
            .expect("a message shorter than GCM's limit");
        header[4..20].copy_from_slice(&tag);
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
        let nonce = aes_gcm::Nonce::<aes_gcm::aes::cipher::consts::U12>::try_from(&header[20..32])
            .expect("12 bytes");
        let tag = aes_gcm::Tag::try_from(&header[4..20]).expect("16 bytes");
        self.server_to_client
            .decrypt_inout_detached(&nonce, &header[20..52], InOutBuf::from(message), &tag)
            .map_err(|_| "an encrypted message that does not authenticate (wrong key or altered)")
    }
}

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
    fn sealed_messages_open_with_the_peers_keys() {
        let mut client = Sealer::new(&[1; 16], &[2; 16], 5);
        let server = Sealer::new(&[2; 16], &[1; 16], 5);
        let mut frame = vec![0u8; TRANSFORM_HEADER_BYTES + 80];
        frame[TRANSFORM_HEADER_BYTES..].fill(0x33);
        client.seal(&mut frame);
        assert_ne!(&frame[TRANSFORM_HEADER_BYTES..], &[0x33; 80][..]);
        let mut copy = frame.clone();
        server.open(&mut frame).unwrap();
        assert_eq!(&frame[TRANSFORM_HEADER_BYTES..], &[0x33; 80][..]);
        copy[60] ^= 1;
        assert!(server.open(&mut copy).is_err());
    }

    /// Key derivation is deterministic and depends on its label.
    #[test]
    fn derived_keys_differ_by_label() {
        let a = derive_key(&[1; 16], b"SMBSigningKey\0", &[0; 64]);
        assert_eq!(a, derive_key(&[1; 16], b"SMBSigningKey\0", &[0; 64]));
        assert_ne!(a, derive_key(&[1; 16], b"SMBC2SCipherKey\0", &[0; 64]));
    }
}
