//! A one-shot rendezvous with a bound: every party waits until all have arrived, but no wait
//! outlasts a timeout, a stop request, or a party that gave up (and closed the gate).
//!
//! It replaces [`std::sync::Barrier`] where a party may never arrive: a worker thread that
//! could not be created, a coordinator that failed, a stop request before the start. Once the
//! gate has opened or closed, it stays so: every party sees the same answer.
//!
//! ```
//! use iopath::run::start_gate::{GateClosed, StartGate};
//! use std::sync::atomic::AtomicBool;
//! use std::time::Duration;
//!
//! let stop = AtomicBool::new(false);
//! // Two parties, one of which never comes: the wait ends at the timeout and says why.
//! let gate = StartGate::new(2, "the worker threads to be ready");
//! let closed = gate.wait(&stop, Duration::from_millis(20)).unwrap_err();
//! assert!(matches!(closed, GateClosed::TimedOut { arrived: 1, parties: 2, .. }));
//! assert!(closed.to_string().contains("the worker threads to be ready"));
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often a waiting party looks at the stop flag (set from a signal thread, which cannot
/// wake the gate's condition variable).
const STOP_POLL: Duration = Duration::from_millis(20);

/// Why a wait at a [`StartGate`] ended without everyone arriving.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GateClosed {
    /// A party closed the gate ([`StartGate::close`]), or gave up waiting.
    #[error("the start was called off")]
    Closed,
    /// The stop flag was set before everyone arrived.
    #[error("stopped while waiting for {what}")]
    Stopped {
        /// What was waited for.
        what: &'static str,
    },
    /// Not everyone arrived in time.
    #[error("gave up after {:.1} s waiting for {what} ({arrived} of {parties} arrived)", waited.as_secs_f64())]
    TimedOut {
        /// What was waited for.
        what: &'static str,
        /// How long.
        waited: Duration,
        /// Parties that had arrived.
        arrived: usize,
        /// Parties expected.
        parties: usize,
    },
}

#[derive(Debug)]
enum GateState {
    Waiting { arrived: usize },
    Open,
    Closed(GateClosed),
}

/// A rendezvous of a fixed number of parties, each calling [`StartGate::wait`] once.
#[derive(Debug)]
pub struct StartGate {
    parties: usize,
    what: &'static str,
    state: Mutex<GateState>,
    changed: Condvar,
}

impl StartGate {
    /// A gate for `parties` parties; `what` names what they wait for, in messages
    /// ("the worker threads to be ready").
    pub fn new(parties: usize, what: &'static str) -> Self {
        StartGate {
            parties,
            what,
            state: Mutex::new(GateState::Waiting { arrived: 0 }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // The state is a plain value, valid whatever a panicking holder was doing.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Arrives and waits until every party has, or until `stop` is set, the gate is closed,
    /// or `timeout` has passed. A party that stops or times out closes the gate, so the
    /// others do not wait on for it.
    pub fn wait(&self, stop: &AtomicBool, timeout: Duration) -> Result<(), GateClosed> {
        let started = Instant::now();
        let mut state = self.lock();
        if let GateState::Waiting { arrived } = &mut *state {
            *arrived += 1;
            if *arrived >= self.parties {
                *state = GateState::Open;
                self.changed.notify_all();
            }
        }
        loop {
            match &*state {
                GateState::Open => return Ok(()),
                GateState::Closed(reason) => return Err(reason.clone()),
                GateState::Waiting { arrived } => {
                    let waited = started.elapsed();
                    let reason = if stop.load(Ordering::Relaxed) {
                        Some(GateClosed::Stopped { what: self.what })
                    } else if waited >= timeout {
                        Some(GateClosed::TimedOut {
                            what: self.what,
                            waited,
                            arrived: *arrived,
                            parties: self.parties,
                        })
                    } else {
                        None
                    };
                    if let Some(reason) = reason {
                        *state = GateState::Closed(reason.clone());
                        self.changed.notify_all();
                        return Err(reason);
                    }
                    let slice = STOP_POLL.min(timeout - waited);
                    state = self
                        .changed
                        .wait_timeout(state, slice)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0;
                }
            }
        }
    }

    /// Closes the gate: every party waiting, and every party still to come, gets
    /// [`GateClosed::Closed`]. Does nothing once the gate has opened.
    pub fn close(&self) {
        let mut state = self.lock();
        if matches!(*state, GateState::Waiting { .. }) {
            *state = GateState::Closed(GateClosed::Closed);
            self.changed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(30);

    #[test]
    fn opens_when_everyone_arrives() {
        let gate = StartGate::new(4, "test parties");
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let waits: Vec<_> = (0..3)
                .map(|_| scope.spawn(|| gate.wait(&stop, LONG)))
                .collect();
            assert_eq!(gate.wait(&stop, LONG), Ok(()));
            for wait in waits {
                assert_eq!(wait.join().unwrap(), Ok(()));
            }
        });
    }

    #[test]
    fn closing_releases_every_waiter_and_later_arrivals() {
        let gate = StartGate::new(3, "test parties");
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| gate.wait(&stop, LONG));
            std::thread::sleep(Duration::from_millis(50));
            gate.close();
            assert_eq!(waiter.join().unwrap(), Err(GateClosed::Closed));
        });
        assert_eq!(gate.wait(&stop, LONG), Err(GateClosed::Closed));
        assert!(started.elapsed() < LONG / 2);
    }

    #[test]
    fn a_stop_request_ends_the_wait_for_everyone() {
        let gate = StartGate::new(3, "the worker threads to be ready");
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| gate.wait(&stop, LONG));
            std::thread::sleep(Duration::from_millis(50));
            stop.store(true, Ordering::Relaxed);
            let stopped = waiter.join().unwrap().unwrap_err();
            assert_eq!(
                stopped,
                GateClosed::Stopped {
                    what: "the worker threads to be ready"
                }
            );
        });
        // The gate stays closed even once the flag is clear again.
        stop.store(false, Ordering::Relaxed);
        assert!(gate.wait(&stop, LONG).is_err());
        assert!(started.elapsed() < LONG / 2);
    }

    #[test]
    fn a_timeout_names_what_was_waited_for_and_closes_the_gate() {
        let gate = StartGate::new(3, "the start signal");
        let stop = AtomicBool::new(false);
        let closed = gate.wait(&stop, Duration::from_millis(30)).unwrap_err();
        let GateClosed::TimedOut {
            waited,
            arrived,
            parties,
            ..
        } = &closed
        else {
            panic!("{closed:?}");
        };
        assert!(*waited >= Duration::from_millis(30));
        assert_eq!((*arrived, *parties), (1, 3));
        assert!(closed.to_string().contains("waiting for the start signal"));
        assert_eq!(gate.wait(&stop, LONG), Err(closed));
    }

    #[test]
    fn an_open_gate_cannot_be_closed() {
        let gate = StartGate::new(1, "one party");
        let stop = AtomicBool::new(false);
        assert_eq!(gate.wait(&stop, LONG), Ok(()));
        gate.close();
        assert_eq!(gate.wait(&stop, LONG), Ok(()));
    }
}
