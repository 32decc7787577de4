//! Where a job file entry was written: the file and the line, the place every message about
//! it points at, and [`Set`], a value kept with the place that set it.

use crate::input::job_file::JobFileError;
use std::path::PathBuf;

/// Where an entry was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file (an included file when the entry came from one).
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
}

impl Location {
    /// An error at this place.
    pub fn error(&self, message: impl Into<String>) -> JobFileError {
        JobFileError {
            file: self.file.clone(),
            line: Some(self.line),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A value and the line that set it.
#[derive(Clone, Debug, PartialEq)]
pub struct Set<T> {
    /// The value.
    pub value: T,
    /// Where it was set.
    pub at: Location,
}
