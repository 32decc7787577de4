//! The bytes of a buffer pattern, written as fio's `buffer_pattern` writes them: pieces put
//! one after the other, each
//!
//! - `0x` then hex digits: those bytes in the order written (`0xdeadface` is `de ad fa ce`; an
//!   odd count of digits starts with one digit, `0xabc` is `0a bc`; a new `0x` starts a new
//!   piece, `0xff0x1` is `ff 01`);
//! - `"text"`: the bytes of the text (no escapes);
//! - `'file'`: the contents of the file (relative to the current directory);
//! - a decimal number from −2³¹ to 2³¹−1: its 32-bit little-endian bytes without the high
//!   zero bytes (`66` is `42`, `-1024` is `00 fc ff ff`, `0` is `00`).
//!
//! Spaces between pieces are skipped. A pattern holds at most [`MAX_PATTERN_BYTES`].
//!
//! ```
//! use iopath::result::BufferPattern;
//! let pattern = BufferPattern::parse("0xdeadface\"ab\"-12").unwrap();
//! assert_eq!(pattern.bytes(), [0xde, 0xad, 0xfa, 0xce, b'a', b'b', 0xf4, 0xff, 0xff, 0xff]);
//! assert_eq!(BufferPattern::parse(&pattern.to_string()).unwrap(), pattern);
//! ```

use super::WorkloadError;
use crate::gate::read::read_up_to;
use crate::result::BufferPattern;
use std::path::Path;

/// Longest pattern, bytes (a pattern longer than a block only ever writes its first block).
pub const MAX_PATTERN_BYTES: usize = 64 * 1024;

impl BufferPattern {
    /// Reads fio's syntax (see the module documentation). Errors name the piece.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let mut bytes = Vec::new();
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err(WorkloadError::EmptyPattern);
        }
        while !rest.is_empty() {
            rest = match rest.as_bytes()[0] {
                b'"' => quoted(rest, &mut bytes)?,
                b'\'' => file(rest, &mut bytes)?,
                b'%' => {
                    return Err(WorkloadError::part(
                        text,
                        "formats such as %o belong to verify_pattern; a buffer pattern is bytes only",
                    ));
                }
                b'0' if rest[1..].starts_with(['x', 'X']) => hex(rest, &mut bytes)?,
                _ => decimal(rest, &mut bytes)?,
            }
            .trim_start();
            if bytes.len() > MAX_PATTERN_BYTES {
                return Err(WorkloadError::part(
                    &shorten(text),
                    format!(
                        "the pattern is longer than {} KiB",
                        MAX_PATTERN_BYTES / 1024
                    ),
                ));
            }
        }
        Ok(BufferPattern::from_bytes(bytes))
    }
}

/// `"text"`: the bytes up to the closing quote.
fn quoted<'a>(rest: &'a str, bytes: &mut Vec<u8>) -> Result<&'a str, WorkloadError> {
    let Some(end) = rest[1..].find('"') else {
        return Err(piece(rest, "the string has no closing \""));
    };
    if end == 0 {
        return Err(piece("\"\"", "an empty string adds no bytes"));
    }
    bytes.extend_from_slice(&rest.as_bytes()[1..1 + end]);
    Ok(&rest[end + 2..])
}

/// `'file'`: the file's bytes (at most the room left in the pattern, plus one to notice more).
fn file<'a>(rest: &'a str, bytes: &mut Vec<u8>) -> Result<&'a str, WorkloadError> {
    let Some(end) = rest[1..].find('\'') else {
        return Err(piece(rest, "the file name has no closing '"));
    };
    let name = &rest[1..1 + end];
    let room = (MAX_PATTERN_BYTES + 1).saturating_sub(bytes.len());
    // Through the gate: a FIFO or a device is refused without being opened or read.
    let read =
        read_up_to(Path::new(name), room as u64).map_err(|error| WorkloadError::PatternFile {
            name: name.escape_debug().to_string(),
            reason: error.to_string(),
        })?;
    if read.is_empty() {
        return Err(WorkloadError::EmptyPatternFile {
            name: name.escape_debug().to_string(),
        });
    }
    bytes.extend_from_slice(&read);
    Ok(&rest[end + 2..])
}

/// `0x` and hex digits, up to a `0x` that starts the next piece.
fn hex<'a>(rest: &'a str, bytes: &mut Vec<u8>) -> Result<&'a str, WorkloadError> {
    let digits_end = rest[2..]
        .find(|c: char| !c.is_ascii_hexdigit())
        .map_or(rest.len(), |at| at + 2);
    let mut digits = &rest[2..digits_end];
    if digits.ends_with('0') && rest[digits_end..].starts_with(['x', 'X']) {
        digits = &digits[..digits.len() - 1];
    }
    if digits.is_empty() {
        return Err(piece(rest, "0x needs hex digits"));
    }
    let (first, pairs) = digits.split_at(digits.len() % 2);
    if !first.is_empty() {
        bytes.push(u8::from_str_radix(first, 16).map_err(|e| piece(first, e.to_string()))?);
    }
    for pair in pairs.as_bytes().chunks(2) {
        let pair = std::str::from_utf8(pair).map_err(|e| piece(rest, e.to_string()))?;
        bytes.push(u8::from_str_radix(pair, 16).map_err(|e| piece(pair, e.to_string()))?);
    }
    Ok(&rest[2 + digits.len()..])
}

/// A decimal number in 32 bits, little-endian, without its high zero bytes.
fn decimal<'a>(rest: &'a str, bytes: &mut Vec<u8>) -> Result<&'a str, WorkloadError> {
    let sign = usize::from(rest.starts_with(['-', '+']));
    let mut end = rest[sign..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(rest.len(), |at| at + sign);
    // A 0 right before an x starts the next piece (`-100xab` is -10 then 0xab).
    if end > sign + 1 && rest[end..].starts_with(['x', 'X']) && rest[..end].ends_with('0') {
        end -= 1;
    }
    if end == sign {
        return Err(piece(
            rest,
            "not a pattern piece (0x hex, \"text\", 'file' or a decimal number)",
        ));
    }
    let value: i64 = rest[..end]
        .parse()
        .map_err(|_| piece(&rest[..end], "not a number"))?;
    if value < i64::from(i32::MIN) || value > i64::from(i32::MAX) {
        return Err(WorkloadError::PatternPiece {
            piece: rest[..end].to_string(),
            problem: "a decimal piece must fit in 32 bits (−2147483648 to 2147483647)".into(),
        });
    }
    let mut unsigned = value as i32 as u32;
    if unsigned == 0 {
        bytes.push(0);
    }
    while unsigned != 0 {
        bytes.push(unsigned as u8);
        unsigned >>= 8;
    }
    Ok(&rest[end..])
}

/// A piece that does not read, shown by its first 40 characters.
fn piece(text: &str, problem: impl Into<String>) -> WorkloadError {
    WorkloadError::PatternPiece {
        piece: shorten(text),
        problem: problem.into(),
    }
}

/// The first 40 characters of `text`, control characters escaped, for messages.
fn shorten(text: &str) -> String {
    let mut shown: String = text.chars().take(40).collect::<String>();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown.escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Vec<u8> {
        BufferPattern::parse(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .bytes()
            .to_vec()
    }

    #[test]
    fn pieces_read_as_fio_reads_them() {
        assert_eq!(bytes("0xdeadface"), [0xde, 0xad, 0xfa, 0xce]);
        assert_eq!(bytes("\"abcd\""), b"abcd");
        assert_eq!(bytes("-1024"), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(bytes("66"), [0x42]);
        assert_eq!(bytes("0"), [0]);
        assert_eq!(bytes("256"), [0, 1]);
        assert_eq!(bytes("0xFF0X1"), [0xff, 0x01]);
        assert_eq!(bytes("0xabc"), [0x0a, 0xbc]);
        assert_eq!(
            bytes("\"123\"0xFFeeCC"),
            [b'1', b'2', b'3', 0xff, 0xee, 0xcc]
        );
        assert_eq!(bytes("-100xab\"1\""), [0xf6, 0xff, 0xff, 0xff, 0xab, b'1']);
        assert_eq!(bytes(" 0x01 \"a\" 2 "), [1, b'a', 2]);
    }

    #[test]
    fn files_are_read_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("p.bin");
        std::fs::write(&small, [1, 2, 3]).unwrap();
        let text = format!("0x00'{}'", small.display());
        assert_eq!(bytes(&text), [0, 1, 2, 3]);
        let big = dir.path().join("big.bin");
        std::fs::write(&big, vec![7u8; MAX_PATTERN_BYTES + 1]).unwrap();
        let error = BufferPattern::parse(&format!("'{}'", big.display()))
            .unwrap_err()
            .to_string();
        assert!(error.contains("longer than 64 KiB"), "{error}");
        let error = BufferPattern::parse("'/nonexistent/pattern'").unwrap_err();
        assert!(
            matches!(&error, WorkloadError::PatternFile { name, .. } if name == "/nonexistent/pattern"),
            "{error}"
        );
        // A FIFO is refused without blocking, a device without being read.
        let fifo = dir.path().join("fifo");
        crate::support::devices::make_fifo(&fifo);
        for special in [fifo.display().to_string(), "/dev/zero".to_string()] {
            let error = BufferPattern::parse(&format!("'{special}'")).unwrap_err();
            assert!(error.to_string().contains("not a regular file"), "{error}");
        }
    }

    #[test]
    fn bad_patterns_are_refused_with_the_piece() {
        for (text, expected) in [
            ("", "at least one byte"),
            ("\"abc", "no closing"),
            ("\"\"", "empty string"),
            ("0x", "hex digits"),
            ("%o", "verify_pattern"),
            ("abc", "not a pattern piece"),
            ("4294967296", "32 bits"),
            ("0xzz", "hex digits"),
        ] {
            let error = BufferPattern::parse(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn patterns_show_in_a_form_that_reads_back() {
        for text in ["\"abcd\"", "0xdeadface", "0x00", "\"a b\"", "0x3b23"] {
            let pattern = BufferPattern::parse(text).unwrap();
            assert_eq!(pattern.to_string(), text);
        }
        let json = serde_json::to_string(&BufferPattern::parse("0x0102").unwrap()).unwrap();
        assert_eq!(json, "\"0x0102\"");
        let back: BufferPattern = serde_json::from_str(&json).unwrap();
        assert_eq!(back.bytes(), [1, 2]);
    }
}
