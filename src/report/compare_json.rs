//! The comparison as JSON (`iopath compare --json`): the [`Comparison`] as is, versioned by
//! its `comparison_version`.

use crate::compare::Comparison;
use std::io::{self, Write};

/// Writes `comparison` as pretty JSON followed by a newline.
pub fn write_compare_json(comparison: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, comparison)?;
    writeln!(out)
}
