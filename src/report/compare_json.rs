//! The comparison as JSON (`iopath compare --json`): the [`Comparison`] as is, versioned by
//! its `comparison_version`.

use super::json::write_pretty_json;
use crate::compare::Comparison;
use std::io::{self, Write};

/// Writes `comparison` as pretty JSON followed by a newline, C1 controls escaped too (see
/// [`write_pretty_json`]).
pub fn write_compare_json(comparison: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    write_pretty_json(comparison, out)
}
