//! SIGINT (Ctrl-C) and SIGTERM (`timeout`, `kill`, Kubernetes): the first raises the stop
//! signal — every phase looks at it and ends promptly, keeping what was measured; engines
//! waiting on a network server give it [`STOP_GRACE`](crate::engine::volume::STOP_GRACE) to
//! answer what is in flight. The second removes the test files iopath is filling or will remove
//! anyway, then hands over to the caller's `on_forced`, which saves what it has and ends the
//! process.
//!
//! The library never exits: ending the process, and its exit status, are the caller's.

use crate::engine::StopSignal;
use crate::targets::TargetError;
use crate::targets::remote_file;
use crate::targets::test_file::remove_registered_files;

/// What a second signal hands to the caller.
#[derive(Debug)]
pub struct ForcedStop {
    /// The signal (`libc::SIGINT` or `libc::SIGTERM`).
    pub signal: i32,
    /// Test files that could not be removed (each error names its file).
    pub removal_failures: Vec<TargetError>,
}

/// Installs the handlers of SIGINT and SIGTERM and returns the stop signal the first of them
/// raises. Every later signal first removes the registered test files
/// ([`remove_registered_files`], and those on file servers:
/// [`remote_file::remove_registered`]) and then calls `on_forced` on the signal-handling thread;
/// `on_forced` is meant to save what it can and end the process.
///
/// Only the signals count: the stop may also be raised by the caller (or by a worker's error)
/// without making the next signal a second one.
pub fn install<F>(mut on_forced: F) -> std::io::Result<StopSignal>
where
    F: FnMut(ForcedStop) + Send + 'static,
{
    let stop = StopSignal::new();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])?;
    let raised = stop.clone();
    std::thread::Builder::new()
        .name("iopath-signals".into())
        .spawn(move || {
            let mut received = 0u32;
            for signal in signals.forever() {
                received += 1;
                if received == 1 {
                    raised.raise();
                } else {
                    let mut removal_failures = remove_registered_files();
                    removal_failures.extend(remote_file::remove_registered().into_iter().map(
                        |error| TargetError::Io {
                            path: error.target.into(),
                            operation: "remove the test file",
                            source: std::io::Error::other(error.problem),
                        },
                    ));
                    on_forced(ForcedStop {
                        signal,
                        removal_failures,
                    });
                }
            }
        })?;
    Ok(stop)
}

/// Raises `stop` on SIGCONT too, without counting it as a signal (the next SIGINT or SIGTERM
/// is still the first). For the ranks of an MPI job: a rank that is not stopped gets SIGCONT
/// when its launcher begins to end the job — Open MPI's `mpirun` sends SIGCONT, SIGTERM a
/// second later and SIGKILL a second after that; Slurm sends SIGCONT with SIGTERM — so a rank
/// that stops at the SIGCONT has two seconds, not one, to hand in its figures and for rank 0
/// to write them.
pub fn stop_on_continue(stop: &StopSignal) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGCONT])?;
    let raised = stop.clone();
    std::thread::Builder::new()
        .name("iopath-sigcont".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                raised.raise();
            }
        })?;
    Ok(())
}
