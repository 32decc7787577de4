//! The checksums a verified block may carry, each from a well-kept crate: CRC-32C
//! (`crc32c`, SSE 4.2 where the CPU has it), CRC-32 (`crc32fast`), MD5 (`md-5`), SHA-256
//! (`sha2`) and XXH3-64 (`xxhash-rust`).
//!
//! ```
//! use iopath::result::VerifyKind;
//! use iopath::verify::checksum::Digest;
//! let digest = Digest::of(VerifyKind::Crc32c, b"123456789");
//! assert_eq!(digest.bytes(), &0xe306_9283u32.to_le_bytes());
//! assert_eq!(Digest::of(VerifyKind::Meta, b"x").bytes(), &[] as &[u8]);
//! ```

use crate::result::VerifyKind;
use md5::Digest as _;

/// Bytes the longest checksum (SHA-256) takes.
pub const MAX_DIGEST_BYTES: usize = 32;

/// A checksum of some bytes: up to 32 bytes, as long as its kind makes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest {
    bytes: [u8; MAX_DIGEST_BYTES],
    length: usize,
}

impl Digest {
    /// Bytes a digest of `kind` takes (0 for `meta` and `pattern`, which have none).
    pub fn length_of(kind: VerifyKind) -> usize {
        match kind {
            VerifyKind::Crc32c | VerifyKind::Crc32 => 4,
            VerifyKind::Md5 => 16,
            VerifyKind::Sha256 => 32,
            VerifyKind::Xxhash => 8,
            VerifyKind::Meta | VerifyKind::Pattern => 0,
        }
    }

    /// The checksum of `kind` over `data` (empty for kinds without one).
    pub fn of(kind: VerifyKind, data: &[u8]) -> Digest {
        let mut bytes = [0u8; MAX_DIGEST_BYTES];
        match kind {
            VerifyKind::Crc32c => bytes[..4].copy_from_slice(&crc32c::crc32c(data).to_le_bytes()),
            VerifyKind::Crc32 => bytes[..4].copy_from_slice(&crc32fast::hash(data).to_le_bytes()),
            VerifyKind::Md5 => bytes[..16].copy_from_slice(&md5::Md5::digest(data)),
            VerifyKind::Sha256 => bytes.copy_from_slice(&sha2::Sha256::digest(data)),
            VerifyKind::Xxhash => {
                bytes[..8].copy_from_slice(&xxhash_rust::xxh3::xxh3_64(data).to_le_bytes());
            }
            VerifyKind::Meta | VerifyKind::Pattern => {}
        }
        Digest {
            bytes,
            length: Self::length_of(kind),
        }
    }

    /// A digest of `kind` as stored in a header's checksum field.
    pub fn stored(kind: VerifyKind, field: &[u8]) -> Digest {
        let length = Self::length_of(kind).min(field.len());
        let mut bytes = [0u8; MAX_DIGEST_BYTES];
        bytes[..length].copy_from_slice(&field[..length]);
        Digest { bytes, length }
    }

    /// The checksum's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.length]
    }

    /// Lower-case hex, as reports show it (CRCs and XXH3 as the number they are).
    pub fn to_hex(&self) -> String {
        let bytes = self.bytes();
        let ordered: Vec<u8> = if bytes.len() <= 8 {
            bytes.iter().rev().copied().collect()
        } else {
            bytes.to_vec()
        };
        ordered.iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers() {
        let check = b"123456789";
        assert_eq!(Digest::of(VerifyKind::Crc32c, check).to_hex(), "e3069283");
        assert_eq!(Digest::of(VerifyKind::Crc32, check).to_hex(), "cbf43926");
        assert_eq!(
            Digest::of(VerifyKind::Md5, b"").to_hex(),
            "d41d8cd98f00b204e9800998ecf8427e"
        );
        assert_eq!(
            Digest::of(VerifyKind::Sha256, b"abc").to_hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            Digest::of(VerifyKind::Xxhash, b"").to_hex(),
            "2d06800538d394c2"
        );
    }

    #[test]
    fn every_kind_stores_what_it_computes() {
        for kind in VerifyKind::ALL {
            let digest = Digest::of(kind, b"some data");
            let mut field = [0u8; MAX_DIGEST_BYTES];
            field[..digest.bytes().len()].copy_from_slice(digest.bytes());
            assert_eq!(Digest::stored(kind, &field), digest, "{}", kind.name());
        }
    }
}
