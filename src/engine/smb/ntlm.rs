//! NTLMv2 authentication as an SMB client sends it in SESSION_SETUP (MS-NLMP): the NEGOTIATE
//! message, the answer to the server's CHALLENGE, and the session key both sides derive.
//!
//! No key exchange and no MIC are offered: the session key is the NTLMv2 session base key.

use super::url::SmbCredentials;
use hmac::{Hmac, KeyInit, Mac};
use md4::Digest as _;

type HmacMd5 = Hmac<md5::Md5>;

const SIGNATURE: &[u8; 8] = b"NTLMSSP\0";
const NEGOTIATE_UNICODE: u32 = 0x0000_0001;
const REQUEST_TARGET: u32 = 0x0000_0004;
const NEGOTIATE_NTLM: u32 = 0x0000_0200;
const NEGOTIATE_ALWAYS_SIGN: u32 = 0x0000_8000;
const NEGOTIATE_EXTENDED_SESSION_SECURITY: u32 = 0x0008_0000;
const NEGOTIATE_TARGET_INFO: u32 = 0x0080_0000;
const NEGOTIATE_128: u32 = 0x2000_0000;
/// The flags offered.
const FLAGS: u32 = NEGOTIATE_UNICODE
    | REQUEST_TARGET
    | NEGOTIATE_NTLM
    | NEGOTIATE_ALWAYS_SIGN
    | NEGOTIATE_EXTENDED_SESSION_SECURITY
    | NEGOTIATE_TARGET_INFO
    | NEGOTIATE_128;
/// The attribute-value pair of the target information that carries the server's time.
const AV_TIMESTAMP: u16 = 7;

/// The NEGOTIATE message.
pub fn negotiate_message() -> Vec<u8> {
    let mut message = Vec::with_capacity(32);
    message.extend_from_slice(SIGNATURE);
    message.extend_from_slice(&1u32.to_le_bytes());
    message.extend_from_slice(&FLAGS.to_le_bytes());
    message.extend_from_slice(&[0; 16]);
    message
}

fn utf16(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn hmac_md5(key: &[u8], parts: &[&[u8]]) -> [u8; 16] {
    let mut mac = <HmacMd5 as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// A field of a message: `(offset, length)` of its payload, bounds checked.
fn field(message: &[u8], at: usize) -> Option<&[u8]> {
    let header = message.get(at..at + 8)?;
    let length = u16::from_le_bytes([header[0], header[1]]) as usize;
    let offset = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
    message.get(offset..offset.checked_add(length)?)
}

/// The server's time from the target information, if it sent one.
fn timestamp(target_info: &[u8]) -> Option<[u8; 8]> {
    let mut at = 0;
    while at + 4 <= target_info.len() {
        let id = u16::from_le_bytes([target_info[at], target_info[at + 1]]);
        let length = u16::from_le_bytes([target_info[at + 2], target_info[at + 3]]) as usize;
        let value = target_info.get(at + 4..at + 4 + length)?;
        if id == 0 {
            return None;
        }
        if id == AV_TIMESTAMP && length == 8 {
            return value.try_into().ok();
        }
        at += 4 + length;
    }
    None
}

/// Now as a Windows FILETIME (100 ns since 1601).
fn now_filetime() -> [u8; 8] {
    let since_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let ticks = since_unix.as_nanos() as u64 / 100 + 116_444_736_000_000_000;
    ticks.to_le_bytes()
}

/// The AUTHENTICATE message answering `challenge` for `credentials`, and the session key.
pub fn authenticate_message(
    challenge: &[u8],
    credentials: &SmbCredentials,
) -> Result<(Vec<u8>, [u8; 16]), String> {
    if challenge.len() < 32 || &challenge[..8] != SIGNATURE || challenge[8] != 2 {
        return Err("the server's answer is not an NTLM challenge".into());
    }
    let server_challenge = &challenge[24..32];
    let flags = u32::from_le_bytes(challenge[20..24].try_into().expect("4 bytes")) & FLAGS
        | NEGOTIATE_UNICODE
        | NEGOTIATE_NTLM;
    let target_info = if challenge.len() >= 48 {
        field(challenge, 40).ok_or("the NTLM challenge's target information is out of bounds")?
    } else {
        &[]
    };
    let mut client_challenge = [0u8; 8];
    getrandom::fill(&mut client_challenge).map_err(|error| error.to_string())?;
    let server_time = timestamp(target_info);

    let nt_hash: [u8; 16] = md4::Md4::digest(utf16(&credentials.password)).into();
    let identity = utf16(&format!(
        "{}{}",
        credentials.user.to_uppercase(),
        credentials.domain
    ));
    let response_key = hmac_md5(&nt_hash, &[&identity]);
    let mut blob = Vec::with_capacity(32 + target_info.len());
    blob.extend_from_slice(&[1, 1, 0, 0, 0, 0, 0, 0]);
    blob.extend_from_slice(&server_time.unwrap_or_else(now_filetime));
    blob.extend_from_slice(&client_challenge);
    blob.extend_from_slice(&[0; 4]);
    blob.extend_from_slice(target_info);
    blob.extend_from_slice(&[0; 4]);
    let proof = hmac_md5(&response_key, &[server_challenge, &blob]);
    let mut nt_response = proof.to_vec();
    nt_response.extend_from_slice(&blob);
    // With the server's time in the target information the LM response is empty (zeros).
    let lm_response = if server_time.is_some() {
        vec![0; 24]
    } else {
        let mut lm = hmac_md5(&response_key, &[server_challenge, &client_challenge]).to_vec();
        lm.extend_from_slice(&client_challenge);
        lm
    };
    let session_key = hmac_md5(&response_key, &[&proof]);

    let domain = utf16(&credentials.domain);
    let user = utf16(&credentials.user);
    let payloads: [&[u8]; 6] = [&lm_response, &nt_response, &domain, &user, &[], &[]];
    let mut message = Vec::with_capacity(64 + payloads.iter().map(|p| p.len()).sum::<usize>());
    message.extend_from_slice(SIGNATURE);
    message.extend_from_slice(&3u32.to_le_bytes());
    let mut offset = 64u32;
    for payload in payloads {
        let length = u16::try_from(payload.len()).map_err(|_| "a credential is too long")?;
        message.extend_from_slice(&length.to_le_bytes());
        message.extend_from_slice(&length.to_le_bytes());
        message.extend_from_slice(&offset.to_le_bytes());
        offset += u32::from(length);
    }
    message.extend_from_slice(&flags.to_le_bytes());
    for payload in payloads {
        message.extend_from_slice(payload);
    }
    Ok((message, session_key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MS-NLMP 4.2.4: the NTLMv2 example's response key and NTProofStr.
    #[test]
    fn ntlmv2_matches_the_specification_example() {
        let nt_hash: [u8; 16] = md4::Md4::digest(utf16("Password")).into();
        let key = hmac_md5(&nt_hash, &[&utf16("USERDomain")]);
        assert_eq!(
            key,
            [
                0x0c, 0x86, 0x8a, 0x40, 0x3b, 0xfd, 0x7a, 0x93, 0xa3, 0x00, 0x1e, 0xf2, 0x2e, 0xf0,
                0x2e, 0x3f
            ]
        );
    }

    #[test]
    fn a_challenge_is_answered_with_the_user_and_a_key() {
        let mut challenge = negotiate_message();
        challenge[8] = 2;
        challenge.resize(48, 0);
        let info = [7u8, 0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0];
        challenge[40..42].copy_from_slice(&(info.len() as u16).to_le_bytes());
        challenge[44..48].copy_from_slice(&48u32.to_le_bytes());
        challenge.extend_from_slice(&info);
        let credentials = SmbCredentials {
            user: "u".into(),
            password: "p".into(),
            domain: String::new(),
        };
        let (message, key) = authenticate_message(&challenge, &credentials).unwrap();
        assert_eq!(field(&message, 36), Some(&utf16("u")[..]));
        assert_eq!(field(&message, 12), Some(&[0u8; 24][..]));
        assert_ne!(key, [0; 16]);
        assert!(authenticate_message(&challenge[..20], &credentials).is_err());
    }
}
