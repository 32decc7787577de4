//! The parsed TOML document as the reader walks it: every key keeps its position, so that
//! every problem can name its line.

use super::super::job_file::JobFileError;
use std::path::Path;
use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

/// A problem found in a job file: the 1-based line when it has one, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Problem {
    /// 1-based line (none for problems of the command line or of the whole file).
    pub line: Option<usize>,
    /// What is wrong, naming the key.
    pub message: String,
}

impl Problem {
    /// A problem at `line`.
    pub(super) fn at(line: Option<usize>, message: impl Into<String>) -> Self {
        Problem {
            line,
            message: message.into(),
        }
    }

    /// The problem as the error of job file `file`.
    pub(super) fn into_error(self, file: &Path) -> JobFileError {
        JobFileError {
            file: file.to_path_buf(),
            line: self.line,
            message: self.message,
        }
    }
}

/// Where a setting was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    /// A 1-based line of the job file.
    Line(usize),
    /// A flag given with `--job`.
    CommandLine,
}

impl Origin {
    /// The line, when the setting comes from the file.
    pub(super) fn line(self) -> Option<usize> {
        match self {
            Origin::Line(line) => Some(line),
            Origin::CommandLine => None,
        }
    }
}

/// One `key = value` of a workload, kept as written (with where it was written) until the job
/// that uses it is built.
#[derive(Clone, Debug)]
pub(super) struct Setting<'i> {
    /// The key.
    pub key: String,
    /// The value, as parsed.
    pub value: Spanned<DeValue<'i>>,
    /// Where it was given.
    pub origin: Origin,
}

/// Turns byte offsets of a text into 1-based line numbers.
pub(super) struct LineIndex {
    /// Byte offset of the start of every line.
    starts: Vec<usize>,
}

impl LineIndex {
    /// The line starts of `text`.
    pub(super) fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(offset, _)| offset + 1))
            .collect();
        LineIndex { starts }
    }

    /// The 1-based line of byte `offset`.
    pub(super) fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&start| start <= offset).max(1)
    }
}

/// A key of a table and its value.
pub(super) type Entry<'a, 'i> = (&'a Spanned<DeString<'i>>, &'a Spanned<DeValue<'i>>);

/// The entries of `table` in the order they appear in the file (tables keep them sorted by
/// name).
pub(super) fn entries_in_order<'a, 'i>(table: &'a DeTable<'i>) -> Vec<Entry<'a, 'i>> {
    let mut entries: Vec<Entry<'a, 'i>> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// A string, number or boolean as text, the way the flag parsers read it; `None` for arrays,
/// tables and dates.
pub(super) fn scalar_text(value: &DeValue<'_>) -> Option<String> {
    match value {
        DeValue::String(text) => Some(text.to_string()),
        DeValue::Integer(integer) => i128::from_str_radix(integer.as_str(), integer.radix())
            .ok()
            .map(|value| value.to_string()),
        DeValue::Float(float) => Some(float.as_str().to_string()),
        DeValue::Boolean(value) => Some(value.to_string()),
        DeValue::Datetime(_) | DeValue::Array(_) | DeValue::Table(_) => None,
    }
}

/// What a value is, for messages ("a table", "an array" …).
pub(super) fn kind_of(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a number",
        DeValue::Boolean(_) => "true/false",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines() {
        let lines = LineIndex::new("a = 1\nb = 2\n\nc = 3");
        assert_eq!(lines.line(0), 1);
        assert_eq!(lines.line(5), 1);
        assert_eq!(lines.line(6), 2);
        assert_eq!(lines.line(13), 4);
        assert_eq!(lines.line(100), 4);
    }

    #[test]
    fn scalars_read_as_the_flags_do() {
        let table = DeTable::parse("a = 0x10\nb = 1.5\nc = true\nd = '4k'\ne = [1]").unwrap();
        let text = |key: &str| scalar_text(table.get_ref().get(key).unwrap().get_ref());
        assert_eq!(text("a").as_deref(), Some("16"));
        assert_eq!(text("b").as_deref(), Some("1.5"));
        assert_eq!(text("c").as_deref(), Some("true"));
        assert_eq!(text("d").as_deref(), Some("4k"));
        assert_eq!(text("e"), None);
    }
}
