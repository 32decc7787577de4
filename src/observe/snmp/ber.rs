//! The few BER (X.690) forms an SNMPv2c message is made of, encoded and read by hand within
//! bounds: lengths in short and long form up to [`MAX_MESSAGE_BYTES`], integers of at most
//! 8 bytes, object identifiers of at most [`MAX_OID_ARCS`] arcs.
//!
//! ```
//! use iopath::observe::snmp::ber::{Reader, TAG_INTEGER, encode_integer};
//! let bytes = encode_integer(TAG_INTEGER, 300);
//! assert_eq!(bytes, [0x02, 0x02, 0x01, 0x2c]);
//! let mut reader = Reader::new(&bytes);
//! assert_eq!(reader.integer(TAG_INTEGER).unwrap(), 300);
//! ```

/// The largest message sent or read (the largest UDP payload).
pub const MAX_MESSAGE_BYTES: usize = 65_507;
/// The most arcs an object identifier may have (RFC 2578 allows 128).
pub const MAX_OID_ARCS: usize = 128;

/// INTEGER.
pub const TAG_INTEGER: u8 = 0x02;
/// OCTET STRING.
pub const TAG_OCTET_STRING: u8 = 0x04;
/// NULL.
pub const TAG_NULL: u8 = 0x05;
/// OBJECT IDENTIFIER.
pub const TAG_OID: u8 = 0x06;
/// SEQUENCE.
pub const TAG_SEQUENCE: u8 = 0x30;
/// Counter32 (application 1).
pub const TAG_COUNTER32: u8 = 0x41;
/// Gauge32 (application 2), also Unsigned32.
pub const TAG_GAUGE32: u8 = 0x42;
/// TimeTicks (application 3).
pub const TAG_TIMETICKS: u8 = 0x43;
/// Counter64 (application 6).
pub const TAG_COUNTER64: u8 = 0x46;

/// Why bytes are not the BER expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed SNMP answer: {0}")]
pub struct BerError(pub &'static str);

/// `tag`, the length of `content`, then `content`.
pub fn encode(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 6);
    out.push(tag);
    let length = content.len();
    if length < 0x80 {
        out.push(length as u8);
    } else {
        let bytes = length.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// A signed integer in the fewest two's-complement bytes.
pub fn encode_integer(tag: u8, value: i64) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let redundant = (bytes[start] == 0 && bytes[start + 1] & 0x80 == 0)
            || (bytes[start] == 0xff && bytes[start + 1] & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    encode(tag, &bytes[start..])
}

/// An object identifier (at least two arcs, the first 0–2).
pub fn encode_oid(arcs: &[u32]) -> Vec<u8> {
    let mut content = Vec::with_capacity(arcs.len() * 2);
    let first = arcs.first().copied().unwrap_or(0) * 40 + arcs.get(1).copied().unwrap_or(0);
    for arc in std::iter::once(first).chain(arcs.iter().skip(2).copied()) {
        let mut groups = [0u8; 5];
        let mut count = 0;
        let mut rest = arc;
        loop {
            groups[count] = (rest & 0x7f) as u8;
            count += 1;
            rest >>= 7;
            if rest == 0 {
                break;
            }
        }
        for index in (0..count).rev() {
            let more = if index > 0 { 0x80 } else { 0 };
            content.push(groups[index] | more);
        }
    }
    encode(TAG_OID, &content)
}

/// Reads BER elements from a slice, one after another.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// Whether everything has been read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The next element: its tag and its content.
    pub fn element(&mut self) -> Result<(u8, &'a [u8]), BerError> {
        let [tag, first, rest @ ..] = self.bytes else {
            return Err(BerError("an element is cut short"));
        };
        if tag & 0x1f == 0x1f {
            return Err(BerError("a multi-byte tag"));
        }
        let (length, rest) = if first & 0x80 == 0 {
            (usize::from(*first), rest)
        } else {
            let count = usize::from(first & 0x7f);
            if count == 0 || count > 4 || rest.len() < count {
                return Err(BerError("a length that cannot be read"));
            }
            let length = rest[..count]
                .iter()
                .fold(0usize, |sum, byte| (sum << 8) | usize::from(*byte));
            (length, &rest[count..])
        };
        if length > MAX_MESSAGE_BYTES || length > rest.len() {
            return Err(BerError("an element longer than the message"));
        }
        let (content, after) = rest.split_at(length);
        self.bytes = after;
        Ok((*tag, content))
    }

    /// The next element's content, which must have `tag`.
    pub fn expect(&mut self, tag: u8) -> Result<&'a [u8], BerError> {
        let (found, content) = self.element()?;
        if found != tag {
            return Err(BerError("an element of an unexpected type"));
        }
        Ok(content)
    }

    /// The next element, a signed integer with `tag`.
    pub fn integer(&mut self, tag: u8) -> Result<i64, BerError> {
        signed(self.expect(tag)?)
    }
}

/// A two's-complement integer's content.
pub fn signed(content: &[u8]) -> Result<i64, BerError> {
    if content.is_empty() || content.len() > 8 {
        return Err(BerError("an integer of no or more than 8 bytes"));
    }
    let negative = content[0] & 0x80 != 0;
    let start = if negative { -1i64 } else { 0 };
    Ok(content
        .iter()
        .fold(start, |sum, byte| (sum << 8) | i64::from(*byte)))
}

/// An unsigned integer's content (Counter32, Gauge32, Counter64: up to 9 bytes with a leading
/// zero).
pub fn unsigned(content: &[u8]) -> Result<u64, BerError> {
    let content = match content {
        [0, rest @ ..] if !rest.is_empty() => rest,
        other => other,
    };
    if content.is_empty() || content.len() > 8 {
        return Err(BerError("an unsigned integer of no or more than 8 bytes"));
    }
    Ok(content
        .iter()
        .fold(0u64, |sum, byte| (sum << 8) | u64::from(*byte)))
}

/// An object identifier's content as arcs.
pub fn oid_arcs(content: &[u8]) -> Result<Vec<u32>, BerError> {
    let mut arcs = Vec::with_capacity(content.len() + 1);
    let mut value: u64 = 0;
    let mut pending = false;
    for byte in content {
        value = (value << 7) | u64::from(byte & 0x7f);
        if value > u64::from(u32::MAX) {
            return Err(BerError("an object identifier arc beyond 32 bits"));
        }
        pending = byte & 0x80 != 0;
        if !pending {
            if arcs.is_empty() {
                let first = (value / 40).min(2);
                arcs.push(first as u32);
                arcs.push((value - first * 40) as u32);
            } else {
                arcs.push(value as u32);
            }
            value = 0;
            if arcs.len() > MAX_OID_ARCS {
                return Err(BerError("an object identifier of too many arcs"));
            }
        }
    }
    if pending || arcs.is_empty() {
        return Err(BerError("an object identifier cut short"));
    }
    Ok(arcs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_in_their_fewest_bytes() {
        for (value, bytes) in [
            (0i64, vec![0x02, 0x01, 0x00]),
            (127, vec![0x02, 0x01, 0x7f]),
            (128, vec![0x02, 0x02, 0x00, 0x80]),
            (-1, vec![0x02, 0x01, 0xff]),
            (-129, vec![0x02, 0x02, 0xff, 0x7f]),
        ] {
            assert_eq!(encode_integer(TAG_INTEGER, value), bytes, "{value}");
            assert_eq!(Reader::new(&bytes).integer(TAG_INTEGER).unwrap(), value);
        }
        assert_eq!(
            unsigned(&[0x00, 0xff, 0xff, 0xff, 0xff]).unwrap(),
            0xffff_ffff
        );
        assert!(unsigned(&[1; 9]).is_err());
    }

    #[test]
    fn object_identifiers_round_trip() {
        let arcs = [1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6, 300_000];
        let bytes = encode_oid(&arcs);
        assert_eq!(&bytes[..4], [0x06, 0x0d, 0x2b, 0x06]);
        let content = Reader::new(&bytes).expect(TAG_OID).unwrap();
        assert_eq!(oid_arcs(content).unwrap(), arcs);
        assert!(oid_arcs(&[0x2b, 0x86]).is_err());
    }

    #[test]
    fn long_lengths_are_written_and_read_and_lies_refused() {
        let content = vec![7u8; 300];
        let bytes = encode(TAG_OCTET_STRING, &content);
        assert_eq!(&bytes[..4], [0x04, 0x82, 0x01, 0x2c]);
        assert_eq!(
            Reader::new(&bytes).expect(TAG_OCTET_STRING).unwrap(),
            content
        );
        assert!(Reader::new(&[0x04, 0x82, 0x01, 0x2c, 7]).element().is_err());
        assert!(Reader::new(&[0x04, 0x85, 1, 1, 1, 1, 1]).element().is_err());
        assert!(Reader::new(&[0x04]).element().is_err());
    }
}
