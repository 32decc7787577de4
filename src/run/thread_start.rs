//! A worker thread the system refused to create: the error that says how many threads were
//! asked for, how many had started, and which limit was probably reached.

use crate::host::sys::{self, Limit};
use std::fmt;

/// The per-user limit on processes and threads that applies to this process: `None` when
/// there is none (unlimited, or not enforced because the process runs as root).
pub fn user_thread_limit() -> Option<u64> {
    // The kernel does not enforce RLIMIT_NPROC on uid 0.
    if sys::is_root() {
        return None;
    }
    sys::soft_limit(Limit::Processes)
}

/// A worker thread could not be created. The workers already created were told to stop and
/// were joined before this error was returned; no I/O of the test was issued.
#[derive(Debug)]
pub struct ThreadStartError {
    /// Worker threads the test asked for.
    pub asked: usize,
    /// Worker threads created before the failure.
    pub started: usize,
    /// The per-user limit on processes and threads, when one applies ([`user_thread_limit`]).
    pub user_limit: Option<u64>,
    /// What the system said.
    pub source: std::io::Error,
}

impl fmt::Display for ThreadStartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot create worker thread {} of the {} this test asks for ({}); ",
            self.started + 1,
            self.asked,
            self.source
        )?;
        match self.user_limit {
            Some(limit) => write!(
                f,
                "this user may run at most {limit} processes and threads in all (RLIMIT_NPROC, `ulimit -u`)"
            )?,
            None => write!(
                f,
                "no per-user limit applies, so the system's (kernel.threads-max) or a control group's (pids.max) limit on threads was reached"
            )?,
        }
        write!(
            f,
            "; ask for fewer workers (--workers, --qd with the sync engine, numjobs in a job file) or raise the limit"
        )
    }
}

impl std::error::Error for ThreadStartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_count_asked_and_the_limit() {
        let error = ThreadStartError {
            asked: 64,
            started: 37,
            user_limit: Some(40),
            source: std::io::Error::from_raw_os_error(libc::EAGAIN),
        };
        let message = error.to_string();
        assert!(message.contains("worker thread 38 of the 64"), "{message}");
        assert!(
            message.contains("at most 40 processes and threads"),
            "{message}"
        );
        assert!(message.contains("RLIMIT_NPROC"), "{message}");
        let unlimited = ThreadStartError {
            user_limit: None,
            ..error
        };
        assert!(unlimited.to_string().contains("threads-max"));
    }

    #[test]
    fn root_has_no_user_thread_limit() {
        if sys::is_root() {
            assert_eq!(user_thread_limit(), None);
        }
    }
}
