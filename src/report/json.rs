//! The RunResult as JSON (`--json FILE` or `--json -`).

use crate::result::RunResult;
use serde::Serialize;
use std::io::Write;

/// Writes `result` as pretty JSON followed by a newline (see [`write_pretty_json`]).
pub fn write_json(result: &RunResult, out: &mut dyn Write) -> std::io::Result<()> {
    write_pretty_json(result, out)
}

/// Writes `value` as pretty JSON followed by a newline. The serializer escapes C0 controls
/// itself; DEL and the C1 controls (U+0080–U+009F, which some terminals obey) are written as
/// `\u007f` and `\u0080`–`\u009f` too, so the JSON can be shown on a terminal. The data is
/// the same.
///
/// ```
/// use iopath::report::json::write_pretty_json;
/// let mut out = Vec::new();
/// write_pretty_json(&"a\u{1b}b\u{9b}c\u{7f}é", &mut out).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), "\"a\\u001bb\\u009bc\\u007fé\"\n");
/// ```
pub fn write_pretty_json(value: &impl Serialize, out: &mut dyn Write) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(value)?;
    // In UTF-8, DEL is the byte 0x7F and U+0080–U+009F are exactly the pairs 0xC2 0x80–0x9F
    // (0xC2 is never a continuation byte), so this finds those characters and nothing else.
    // They can only stand inside strings, where an escape means the same character.
    let mut start = 0;
    let mut index = 0;
    while index < bytes.len() {
        let code = match (bytes[index], bytes.get(index + 1)) {
            (0x7F, _) => Some((0x7F, 1)),
            (0xC2, Some(&next)) if (0x80..=0x9F).contains(&next) => Some((next, 2)),
            _ => None,
        };
        match code {
            Some((code, length)) => {
                out.write_all(&bytes[start..index])?;
                write!(out, "\\u{code:04x}")?;
                index += length;
                start = index;
            }
            None => index += 1,
        }
    }
    out.write_all(&bytes[start..])?;
    writeln!(out)
}

/// Why a RunResult could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or not a RunResult.
    #[error("not an iopath result: {0}")]
    Json(#[from] serde_json::Error),
    /// Written by a version of iopath with a schema this build does not know.
    #[error(
        "result schema version {found}, this iopath reads versions {OLDEST_READ} to {expected}"
    )]
    Version {
        /// Version in the file.
        found: u64,
        /// The newest version this build reads (the one it writes).
        expected: u32,
    },
}

/// The schema version alone: the rest of the document is skipped without being kept.
#[derive(serde::Deserialize)]
struct Header {
    #[serde(default)]
    schema_version: serde_json::Value,
}

/// The oldest schema version this build reads: version 1 differs from 2 only in holding
/// every target and path whole and every target index as a number, which version 2's reader
/// accepts as they are.
pub const OLDEST_READ: u32 = 1;

/// Reads a RunResult written by [`write_json`] (of this schema version or an older one this
/// build knows), checking its schema version first. The text is read twice (version, then
/// result) rather than through a generic JSON tree, which would take many times the size of
/// the text in memory.
pub fn read_json(text: &str) -> Result<RunResult, ReadError> {
    let found = match serde_json::from_str::<Header>(text) {
        Ok(header) => header.schema_version.as_u64().unwrap_or(0),
        Err(error) if error.is_data() => 0,
        Err(error) => return Err(error.into()),
    };
    if !(u64::from(OLDEST_READ)..=u64::from(crate::result::SCHEMA_VERSION)).contains(&found) {
        return Err(ReadError::Version {
            found,
            expected: crate::result::SCHEMA_VERSION,
        });
    }
    Ok(serde_json::from_str(text)?)
}
