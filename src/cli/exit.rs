//! Exit statuses, and the one map from errors to them.
//!
//! The library returns typed errors and never exits; every command ends an error through
//! [`fail`], which prints it (escaped for the terminal) and returns the status [`Status`]
//! gives its type: 2 for bad input (nothing was written), 130 for a stop asked for, 1 for a
//! run that failed.

pub use super::failure::{Failed, Flagged, InFile, Usage};
use super::messages::for_terminal;
use iopath::analysis::declared::DeclaredError;
use iopath::compare::CompareError;
use iopath::discovery::MachineError;
use iopath::discovery::record::RecordError;
use iopath::input::job_file::JobFileError;
use iopath::net::NetError;
use iopath::run::{PlanError, RunError};
use iopath::targets::TargetError;
use iopath::targets::network_target::UrlError;
use iopath::workload::WorkloadError;
use std::fmt::Display;

/// Everything ran.
pub const SUCCESS: i32 = 0;
/// An I/O or engine error stopped the run (the result is kept).
pub const RUN_FAILED: i32 = 1;
/// Bad input: a flag, a size, a target; nothing was written.
pub const BAD_INPUT: i32 = 2;
/// Interrupted by Ctrl-C or SIGTERM (the partial result is kept).
pub const INTERRUPTED: i32 = 130;

/// The exit status an error ends a command with.
pub trait Status: Display {
    /// The status: [`BAD_INPUT`], [`INTERRUPTED`] or [`RUN_FAILED`].
    fn status(&self) -> i32;
}

/// Prints `error` on standard error and returns its exit status.
pub fn fail(error: &dyn Status) -> i32 {
    eprintln!("error: {}", for_terminal(error));
    error.status()
}

/// Prints `error`, which ended a run after some tests had run, and returns its status: 130
/// for a stop asked for, 1 otherwise (never bad input: I/O was done).
pub fn fail_after_io(error: &RunError) -> i32 {
    match fail(error) {
        INTERRUPTED => INTERRUPTED,
        _ => RUN_FAILED,
    }
}

macro_rules! bad_input {
    ($($error:ty),* $(,)?) => {
        $(impl Status for $error {
            fn status(&self) -> i32 {
                BAD_INPUT
            }
        })*
    };
}

bad_input!(
    Usage,
    MachineError,
    super::run_args::RequestError,
    WorkloadError,
    PlanError,
    JobFileError,
    UrlError,
    DeclaredError,
    CompareError,
    iopath::metrics::MetricsAddressError,
    iopath::observe::ObserveError,
);

impl<E: Status + std::fmt::Debug> Status for InFile<'_, E> {
    fn status(&self) -> i32 {
        self.error.status()
    }
}

impl<E: Status + std::fmt::Debug> Status for Flagged<E> {
    fn status(&self) -> i32 {
        self.error.status()
    }
}

impl Status for RecordError {
    fn status(&self) -> i32 {
        match self {
            RecordError::NotEmpty { .. } => BAD_INPUT,
            _ => RUN_FAILED,
        }
    }
}

impl Status for Failed {
    fn status(&self) -> i32 {
        RUN_FAILED
    }
}

impl Status for RunError {
    fn status(&self) -> i32 {
        if self.is_bad_input() {
            BAD_INPUT
        } else if self.is_stop() {
            INTERRUPTED
        } else {
            RUN_FAILED
        }
    }
}

/// Errors that commands gathering several kinds of error return boxed.
macro_rules! boxed_status {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for Box<dyn Status> {
            fn from(error: $error) -> Self {
                Box::new(error)
            }
        })*
    };
}

boxed_status!(Usage, Failed);

/// Errors whose own `is_bad_input` tells input (2) from a failure (1).
macro_rules! input_or_failure {
    ($($error:ty),* $(,)?) => {
        $(impl Status for $error {
            fn status(&self) -> i32 {
                if self.is_bad_input() {
                    BAD_INPUT
                } else {
                    RUN_FAILED
                }
            }
        })*
    };
}

input_or_failure!(TargetError, NetError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_their_statuses() {
        let bad = WorkloadError::value("x", "is not a size");
        assert_eq!(bad.status(), BAD_INPUT);
        assert_eq!(RunError::Plan(PlanError::NoTarget).status(), BAD_INPUT);
        assert_eq!(Failed("disk full".into()).status(), RUN_FAILED);
        let stopped = RunError::Engine {
            target: "nbd://h/x".into(),
            source: iopath::engine::EngineError::Stopped {
                engine: "nbd",
                server: "h".into(),
                unanswered: 1,
            },
        };
        assert_eq!(stopped.status(), INTERRUPTED);
    }
}
