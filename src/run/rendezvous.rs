//! Where the runner meets the other clients of a multi-client run: it starts each test at an
//! instant common to every client, and asks while the test runs whether to stop (a client was
//! lost, or asked to stop). A run from one process meets nobody ([`Alone`]).

use crate::host::clock::{Clock, Ticks};

/// How the runner meets the other clients of its run.
pub trait Rendezvous {
    /// Called once every worker of the next test is ready; returns the instant the test starts
    /// (a reading of `clock`), the same instant for every client. `Err` (why): the start was
    /// called off, and the test does not start.
    fn start_together(&mut self, clock: &Clock) -> Result<Ticks, String>;
    /// Called by the coordinator every few milliseconds while a test runs, with the time since
    /// the start and this client's totals so far; `Some(reason)`: stop the test now.
    fn poll(&mut self, elapsed_ns: u64, bytes: u64, io_count: u64) -> Option<String>;
    /// Whether [`Rendezvous::poll`] needs calling at all (a run from one process: no).
    fn polls(&self) -> bool {
        true
    }
    /// Whether each interval of the series keeps its latency histogram's buckets
    /// ([`IntervalPoint::latency_buckets`](crate::result::IntervalPoint::latency_buckets)), so
    /// that the clients' intervals merge exactly (a run from one process: no).
    fn keeps_interval_buckets(&self) -> bool {
        false
    }
}

/// The rendezvous of a run from one process: the test starts a millisecond after its workers
/// are ready, and nothing from outside stops it.
#[derive(Debug, Default)]
pub struct Alone;

impl Rendezvous for Alone {
    fn start_together(&mut self, clock: &Clock) -> Result<Ticks, String> {
        Ok(clock.now() + clock.ticks_for_nanos(1_000_000))
    }

    fn poll(&mut self, _elapsed_ns: u64, _bytes: u64, _io_count: u64) -> Option<String> {
        None
    }

    fn polls(&self) -> bool {
        false
    }
}
