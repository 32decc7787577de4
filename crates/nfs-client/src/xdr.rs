//! XDR (RFC 4506) as ONC RPC and NFSv3 use it: big-endian 4-byte units, opaque data padded to
//! a multiple of four. The decoder reads from a byte slice and fails (never panics) on data
//! that ends early or announces a length above the caller's bound.

/// A reply that does not decode: what was being read, and why it failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed reply: {0}")]
pub struct XdrError(pub String);

/// Builds XDR data into a byte vector.
#[derive(Debug, Default)]
pub struct Encoder {
    /// The bytes so far.
    pub bytes: Vec<u8>,
}

impl Encoder {
    /// Appends an unsigned 32-bit integer.
    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    /// Appends an unsigned 64-bit integer.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    /// Appends variable-length opaque data (length, bytes, padding).
    pub fn opaque(&mut self, data: &[u8]) -> &mut Self {
        self.u32(data.len() as u32);
        self.bytes.extend_from_slice(data);
        self.bytes.resize(self.bytes.len() + padding(data.len()), 0);
        self
    }
}

/// The zero bytes that pad `length` bytes of opaque data to a multiple of four.
pub fn padding(length: usize) -> usize {
    (4 - length % 4) % 4
}

/// Reads XDR data from a slice.
#[derive(Debug)]
pub struct Decoder<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Decoder { bytes, position: 0 }
    }

    /// Where the next item starts.
    pub fn position(&self) -> usize {
        self.position
    }

    fn take(&mut self, length: usize, what: &str) -> Result<&'a [u8], XdrError> {
        let end = self
            .position
            .checked_add(length)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| XdrError(format!("{what} runs past the end of the reply")))?;
        let taken = &self.bytes[self.position..end];
        self.position = end;
        Ok(taken)
    }

    /// Reads an unsigned 32-bit integer.
    pub fn u32(&mut self, what: &str) -> Result<u32, XdrError> {
        let raw = self.take(4, what)?;
        Ok(u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }

    /// Reads an unsigned 64-bit integer.
    pub fn u64(&mut self, what: &str) -> Result<u64, XdrError> {
        Ok((u64::from(self.u32(what)?) << 32) | u64::from(self.u32(what)?))
    }

    /// Reads a boolean (0 or 1).
    pub fn bool(&mut self, what: &str) -> Result<bool, XdrError> {
        match self.u32(what)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(XdrError(format!("{what}: {other} is not a boolean"))),
        }
    }

    /// Reads variable-length opaque data of at most `limit` bytes (and skips its padding).
    pub fn opaque(&mut self, limit: usize, what: &str) -> Result<&'a [u8], XdrError> {
        let length = self.u32(what)? as usize;
        if length > limit {
            return Err(XdrError(format!(
                "{what}: {length} bytes announced, at most {limit} expected"
            )));
        }
        let data = self.take(length, what)?;
        self.take(padding(length), what)?;
        Ok(data)
    }

    /// Reads `length` bytes of fixed-length opaque data (a multiple of four here).
    pub fn fixed(&mut self, length: usize, what: &str) -> Result<&'a [u8], XdrError> {
        let data = self.take(length, what)?;
        self.take(padding(length), what)?;
        Ok(data)
    }

    /// Skips `length` bytes.
    pub fn skip(&mut self, length: usize, what: &str) -> Result<(), XdrError> {
        self.take(length, what).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaque_data_is_padded_and_read_back() {
        let mut encoder = Encoder::default();
        encoder.opaque(b"abcde").u64(7).u32(1);
        assert_eq!(encoder.bytes.len(), 4 + 8 + 8 + 4);
        let mut decoder = Decoder::new(&encoder.bytes);
        assert_eq!(decoder.opaque(16, "name").unwrap(), b"abcde");
        assert_eq!(decoder.u64("offset").unwrap(), 7);
        assert!(decoder.bool("flag").unwrap());
        assert!(decoder.u32("more").is_err());
    }

    #[test]
    fn lengths_above_the_bound_or_past_the_end_are_errors() {
        let mut encoder = Encoder::default();
        encoder.opaque(&[1; 40]);
        assert!(Decoder::new(&encoder.bytes).opaque(32, "handle").is_err());
        assert!(
            Decoder::new(&encoder.bytes[..20])
                .opaque(64, "handle")
                .is_err()
        );
        assert!(Decoder::new(&[0, 0, 0, 2]).bool("flag").is_err());
    }
}
