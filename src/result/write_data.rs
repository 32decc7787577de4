//! What writes carry: the data settings of a workload (compression, dedupe, a pattern, zeros,
//! refills, scrambling), as given.

use super::is_false;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How duplicate buffers are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DedupeMode {
    /// A duplicate repeats the previous new buffer (fio's default).
    #[default]
    Repeat,
    /// A duplicate repeats one of the worker's first new buffers, drawn at random: a working
    /// set of `dedupe_working_set_percent` of the region.
    WorkingSet,
}

/// The data settings of a workload, as given (`None`: not given, fio's default applies).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteData {
    /// Share of each chunk that compresses away, percent (0–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_percent: Option<u8>,
    /// Chunk of the compression share, bytes (default 512; 0: the smallest write block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_chunk_bytes: Option<u64>,
    /// Share of buffers that duplicate an earlier one, percent (0–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_percent: Option<u8>,
    /// How duplicates are chosen.
    #[serde(default, skip_serializing_if = "is_repeat")]
    pub dedupe_mode: DedupeMode,
    /// The working set of [`DedupeMode::WorkingSet`], percent of the region (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_working_set_percent: Option<u8>,
    /// A pattern to fill buffers with (and the fixed part of compressible chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<BufferPattern>,
    /// Zeros instead of random bytes.
    #[serde(default, skip_serializing_if = "is_false")]
    pub zero: bool,
    /// Fill every write's bytes again before it is issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refill: Option<bool>,
    /// Stamp every write's sectors so that repeated buffers differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scramble: Option<bool>,
}

impl WriteData {
    /// Whether nothing was set (random, scrambled data: what iopath writes by default).
    pub fn is_default(&self) -> bool {
        *self == WriteData::default()
    }
}

fn is_repeat(mode: &DedupeMode) -> bool {
    *mode == DedupeMode::Repeat
}

/// A pattern of bytes to fill buffers with (at least one byte).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferPattern {
    bytes: Vec<u8>,
}

impl BufferPattern {
    /// The pattern of these bytes (the caller checks the length).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        BufferPattern { bytes }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl std::fmt::Display for BufferPattern {
    /// `"text"` when every byte is printable ASCII that a job file keeps as it is (no quote,
    /// `;`, `#`, `%` or `$`), else `0x` and hex digits: either reads back to the same bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let readable = self
            .bytes
            .iter()
            .all(|b| (b' '..=b'~').contains(b) && !b"\"';#%$".contains(b));
        if readable && !self.bytes.starts_with(b" ") && !self.bytes.ends_with(b" ") {
            write!(f, "\"{}\"", String::from_utf8_lossy(&self.bytes))
        } else {
            f.write_str("0x")?;
            for byte in &self.bytes {
                write!(f, "{byte:02x}")?;
            }
            Ok(())
        }
    }
}

impl Serialize for BufferPattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

/// Reads back what [`BufferPattern`]'s `Display` writes — `"text"` or `0x` and hex digits, and
/// nothing else: a result file never makes iopath read a file or run a parser of job syntax.
impl<'de> Deserialize<'de> for BufferPattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let bytes = if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            inner.as_bytes().to_vec()
        } else if let Some(digits) = text.strip_prefix("0x") {
            if digits.len() % 2 != 0 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(serde::de::Error::custom(
                    "a pattern's hex digits come in pairs",
                ));
            }
            (0..digits.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&digits[i..i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(serde::de::Error::custom)?
        } else {
            return Err(serde::de::Error::custom(
                "a pattern is \"text\" or 0x and hex digits",
            ));
        };
        if bytes.is_empty() {
            return Err(serde::de::Error::custom(
                "a pattern needs at least one byte",
            ));
        }
        Ok(BufferPattern { bytes })
    }
}
