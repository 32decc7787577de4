//! The RunResult as JSON (`--json FILE` or `--json -`).

use super::RunResult;
use std::io::Write;

/// Writes `result` as pretty JSON followed by a newline.
pub fn write_json(result: &RunResult, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, result)?;
    writeln!(out)
}

/// Reads a RunResult written by [`write_json`].
pub fn read_json(text: &str) -> serde_json::Result<RunResult> {
    serde_json::from_str(text)
}
