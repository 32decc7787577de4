//! What a job does when an I/O fails (fio's `continue_on_error`, `ignore_error` and
//! `exitall_on_error`), and the counts of failures by kind and errno kept in the result.
//!
//! An error has a kind: a failed read, a failed write, or a verification mismatch (data read
//! back that is not what was written). A job keeps going after an error when its policy
//! continues on that kind *and* lists the error's errno for it (fio's rule: the lists default
//! to `EIO` and `EILSEQ`, and `ignore_error` replaces a kind's list and turns continuing on for
//! it); any other error ends the worker it happened in, and [`ErrorScope`] says what else ends.
//!
//! ```
//! use iopath::result::{ErrorKind, ErrorPolicy};
//! let mut policy = ErrorPolicy::default();
//! assert!(!policy.continues(ErrorKind::Read, 5));
//! policy.continue_on = [true, true, true];
//! assert!(policy.continues(ErrorKind::Write, 5)); // EIO
//! assert!(!policy.continues(ErrorKind::Write, 28)); // ENOSPC is not in the default list
//! policy.ignore[ErrorKind::Write as usize] = Some(vec![28]);
//! assert!(policy.continues(ErrorKind::Write, 28));
//! ```

use serde::{Deserialize, Serialize};

/// `EIO`: the errno fio (and iopath) continue on by default, with `EILSEQ`.
pub const EIO: i32 = 5;
/// `EILSEQ`: the errno of a verification mismatch, as in fio.
pub const EILSEQ: i32 = 84;

/// The kind of a failed I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A read failed or came back short.
    Read = 0,
    /// A write, a trim or a sync of written data failed or was short (fio counts trims as
    /// writes too).
    Write = 1,
    /// Data read back differs from what was written (a verification mismatch; its errno is
    /// [`EILSEQ`]).
    Verify = 2,
}

impl ErrorKind {
    /// Every kind, in the order of fio's `ignore_error` lists.
    pub const ALL: [ErrorKind; 3] = [ErrorKind::Read, ErrorKind::Write, ErrorKind::Verify];

    /// Name as in results and messages.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Read => "read",
            ErrorKind::Write => "write",
            ErrorKind::Verify => "verify",
        }
    }
}

/// See the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ErrorPolicy {
    /// Per kind ([`ErrorKind`] as index): the job may keep going after an error of this kind
    /// whose errno is in the kind's list.
    pub continue_on: [bool; 3],
    /// Per kind: the errnos the job keeps going after; `None`: `EIO` and `EILSEQ`.
    pub ignore: [Option<Vec<i32>>; 3],
    /// What else ends when an error ends a worker of the job.
    pub error_ends: ErrorScope,
}

/// What ends when an error ends a worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorScope {
    /// Every job of the test, and no later test runs (iopath's own runs).
    #[default]
    Everything,
    /// The failing worker alone (a fio job's clone); the other jobs and later tests run on
    /// (fio's default).
    Worker,
    /// The jobs of its reporting group (fio's `exitall_on_error` with `exit_what=group`).
    Group,
    /// Every job of its test; the next test still runs (`exit_what=stonewall`).
    Test,
    /// Every job, and no later test runs (`exit_what=all`).
    Run,
}

impl ErrorScope {
    /// Whether an error with this scope ends the run (no later test runs).
    pub fn ends_run(self) -> bool {
        matches!(self, ErrorScope::Everything | ErrorScope::Run)
    }
}

impl ErrorPolicy {
    /// Whether these are the defaults (every error ends the test and the run).
    pub fn is_default(&self) -> bool {
        *self == ErrorPolicy::default()
    }

    /// Whether the job keeps going after an error of `kind` with `errno` (a positive errno;
    /// a short transfer counts as `EIO`).
    pub fn continues(&self, kind: ErrorKind, errno: i32) -> bool {
        let index = kind as usize;
        self.continue_on[index]
            && match &self.ignore[index] {
                Some(list) => list.contains(&errno),
                None => errno == EIO || errno == EILSEQ,
            }
    }
}

/// How many errors of one kind and errno a job had.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCount {
    /// The kind.
    pub kind: ErrorKind,
    /// The errno (positive); 0 for a short transfer.
    pub errno: i32,
    /// The errno's name (`ENOSPC`), or `short` for a short transfer.
    pub name: String,
    /// Errors of this kind and errno.
    pub count: u64,
    /// Of them, those the job kept going after (its error policy allowed it).
    pub continued: u64,
}

/// Adds `counted` into `totals`: to the row of its kind and errno, or as a new row, keeping
/// the rows in kind then errno order (how workers' and clients' counts are put together).
pub fn add_error_count(totals: &mut Vec<ErrorCount>, counted: &ErrorCount) {
    match totals
        .iter_mut()
        .find(|total| total.kind == counted.kind && total.errno == counted.errno)
    {
        Some(total) => {
            total.count += counted.count;
            total.continued += counted.continued;
        }
        None => {
            totals.push(counted.clone());
            totals.sort_by_key(|total| (total.kind, total.errno));
        }
    }
}
