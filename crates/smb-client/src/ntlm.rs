//! NTLMv2 authentication as an SMB client sends it in SESSION_SETUP (MS-NLMP): the NEGOTIATE
//! message, the answer to the server's CHALLENGE, and the session key both sides derive.
//!
//! No key exchange and no MIC are offered: the session key is the NTLMv2 session base key.

use crate::credentials::Credentials;
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

/// What NTLMv2 computes from the password and the challenges (MS-NLMP 3.3.2).
struct Ntlmv2Answer {
    /// NTProofStr followed by the client's blob (time, client challenge, target information).
    nt_response: Vec<u8>,
    /// The LMv2 response: HMAC-MD5 of both challenges, then the client challenge.
    lm_response: [u8; 24],
    /// The session base key (no key exchange: the session key).
    session_base_key: [u8; 16],
}

/// NTOWFv2 (MS-NLMP 3.3.2): HMAC-MD5 keyed with the MD4 of the password, over the user's
/// name in capitals and the domain, in UTF-16.
fn ntowf_v2(credentials: &Credentials) -> [u8; 16] {
    let nt_hash: [u8; 16] = md4::Md4::digest(utf16(&credentials.password)).into();
    let identity = utf16(&format!(
        "{}{}",
        credentials.user.to_uppercase(),
        credentials.domain
    ));
    hmac_md5(&nt_hash, &[&identity])
}

/// [`ntowf_v2`] of `credentials`, then the responses to `server_challenge` with this
/// `client_challenge`, `time` (a FILETIME) and the server's `target_info`.
fn ntlmv2_answer(
    credentials: &Credentials,
    server_challenge: &[u8],
    client_challenge: &[u8; 8],
    time: &[u8; 8],
    target_info: &[u8],
) -> Ntlmv2Answer {
    let response_key = ntowf_v2(credentials);
    let mut blob = Vec::with_capacity(32 + target_info.len());
    blob.extend_from_slice(&[1, 1, 0, 0, 0, 0, 0, 0]);
    blob.extend_from_slice(time);
    blob.extend_from_slice(client_challenge);
    blob.extend_from_slice(&[0; 4]);
    blob.extend_from_slice(target_info);
    blob.extend_from_slice(&[0; 4]);
    let proof = hmac_md5(&response_key, &[server_challenge, &blob]);
    let mut nt_response = proof.to_vec();
    nt_response.extend_from_slice(&blob);
    let mut lm_response = [0u8; 24];
    lm_response[..16].copy_from_slice(&hmac_md5(
        &response_key,
        &[server_challenge, client_challenge],
    ));
    lm_response[16..].copy_from_slice(client_challenge);
    Ntlmv2Answer {
        nt_response,
        lm_response,
        session_base_key: hmac_md5(&response_key, &[&proof]),
    }
}

/// The AUTHENTICATE message answering `challenge` for `credentials`, and the session key.
pub fn authenticate_message(
    challenge: &[u8],
    credentials: &Credentials,
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

    let answer = ntlmv2_answer(
        credentials,
        server_challenge,
        &client_challenge,
        &server_time.unwrap_or_else(now_filetime),
        target_info,
    );
    let nt_response = answer.nt_response;
    // With the server's time in the target information the LM response is empty (zeros).
    let lm_response = if server_time.is_some() {
        [0; 24]
    } else {
        answer.lm_response
    };
    let session_key = answer.session_base_key;

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

    /// MS-NLMP (Microsoft Open Specifications, NT LAN Manager Authentication Protocol),
    /// section 4.2.4 "NTLMv2 Authentication", with the common values of section 4.2.1: user
    /// "User", domain "Domain", password "Password", server challenge 01 23 45 67 89 ab cd ef,
    /// client challenge aa × 8, time 0, and the target information of the CHALLENGE message
    /// of 4.2.4.3 (NetBIOS domain "Domain", NetBIOS server "Server", end of list).
    #[test]
    fn ntlmv2_matches_ms_nlmp_section_4_2_4() {
        let credentials = Credentials {
            user: "User".into(),
            password: "Password".into(),
            domain: "Domain".into(),
        };
        const SERVER_CHALLENGE: [u8; 8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef];
        const CLIENT_CHALLENGE: [u8; 8] = [0xaa; 8];
        const TARGET_INFO: [u8; 36] = [
            0x02, 0x00, 0x0c, 0x00, 0x44, 0x00, 0x6f, 0x00, 0x6d, 0x00, 0x61, 0x00, 0x69, 0x00,
            0x6e, 0x00, 0x01, 0x00, 0x0c, 0x00, 0x53, 0x00, 0x65, 0x00, 0x72, 0x00, 0x76, 0x00,
            0x65, 0x00, 0x72, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        // 4.2.4.1.1 NTOWFv2() and LMOWFv2().
        const RESPONSE_KEY: [u8; 16] = [
            0x0c, 0x86, 0x8a, 0x40, 0x3b, 0xfd, 0x7a, 0x93, 0xa3, 0x00, 0x1e, 0xf2, 0x2e, 0xf0,
            0x2e, 0x3f,
        ];
        // 4.2.4.1.2 Session Base Key.
        const SESSION_BASE_KEY: [u8; 16] = [
            0x8d, 0xe4, 0x0c, 0xca, 0xdb, 0xc1, 0x4a, 0x82, 0xf1, 0x5c, 0xb0, 0xad, 0x0d, 0xe9,
            0x5c, 0xa3,
        ];
        // 4.2.4.2.1 LMv2 Response.
        const LM_RESPONSE: [u8; 24] = [
            0x86, 0xc3, 0x50, 0x97, 0xac, 0x9c, 0xec, 0x10, 0x25, 0x54, 0x76, 0x4a, 0x57, 0xcc,
            0xcc, 0x19, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
        ];
        // 4.2.4.2.2 NTLMv2 Response: NTProofStr, then "temp" (4.2.4.1.3).
        const NT_PROOF: [u8; 16] = [
            0x68, 0xcd, 0x0a, 0xb8, 0x51, 0xe5, 0x1c, 0x96, 0xaa, 0xbc, 0x92, 0x7b, 0xeb, 0xef,
            0x6a, 0x1c,
        ];
        const TEMP: [u8; 68] = [
            0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0x00, 0x00, 0x00, 0x00,
            0x02, 0x00, 0x0c, 0x00, 0x44, 0x00, 0x6f, 0x00, 0x6d, 0x00, 0x61, 0x00, 0x69, 0x00,
            0x6e, 0x00, 0x01, 0x00, 0x0c, 0x00, 0x53, 0x00, 0x65, 0x00, 0x72, 0x00, 0x76, 0x00,
            0x65, 0x00, 0x72, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];

        assert_eq!(ntowf_v2(&credentials), RESPONSE_KEY);
        let answer = ntlmv2_answer(
            &credentials,
            &SERVER_CHALLENGE,
            &CLIENT_CHALLENGE,
            &[0; 8],
            &TARGET_INFO,
        );
        assert_eq!(answer.nt_response[..16], NT_PROOF);
        assert_eq!(answer.nt_response[16..], TEMP);
        assert_eq!(answer.lm_response, LM_RESPONSE);
        assert_eq!(answer.session_base_key, SESSION_BASE_KEY);
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
        let credentials = Credentials {
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
