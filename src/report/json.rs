//! The RunResult as JSON (`--json FILE` or `--json -`).

use crate::result::RunResult;
use std::io::Write;

/// Writes `result` as pretty JSON followed by a newline.
pub fn write_json(result: &RunResult, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, result)?;
    writeln!(out)
}

/// Why a RunResult could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or not a RunResult.
    #[error("not an iopath result: {0}")]
    Json(#[from] serde_json::Error),
    /// Written by a version of iopath with another schema.
    #[error("result schema version {found}, this iopath reads version {expected}")]
    Version {
        /// Version in the file.
        found: u64,
        /// Version this build reads.
        expected: u32,
    },
}

/// Reads a RunResult written by [`write_json`], checking its schema version first.
pub fn read_json(text: &str) -> Result<RunResult, ReadError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    let found = value["schema_version"].as_u64().unwrap_or(0);
    if found != u64::from(crate::result::SCHEMA_VERSION) {
        return Err(ReadError::Version {
            found,
            expected: crate::result::SCHEMA_VERSION,
        });
    }
    Ok(serde_json::from_value(value)?)
}
