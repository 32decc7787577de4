//! The binary's own errors: flags the command line refuses, work it could not finish, and an
//! error put in the context of the job file it is about. Their exit statuses are in
//! [`super::exit`], with every other error's.

use std::fmt::Display;

/// An error about what job file `file` asks for: shown as `FILE: ERROR`, with the error's
/// status.
#[derive(Debug, thiserror::Error)]
#[error("{}: {error}", file.display())]
pub struct InFile<'a, E: Display> {
    /// The job file.
    pub file: &'a std::path::Path,
    /// The error.
    pub error: E,
}

/// An error about the value of `flag`: shown as `FLAG ERROR`, with the error's status.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {error}")]
pub struct Flagged<E: Display> {
    /// The flag.
    pub flag: &'static str,
    /// The error.
    pub error: E,
}

/// A flag, or a combination of flags, the command line refuses (bad input).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// Something the command could not do once its input was accepted: an output that could not
/// be written, a signal handler that could not be installed (the run failed).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Failed(pub String);
