//! How long the transmission phase waits on a server, and the errors when a wait runs out.
//!
//! Every blocking wait lasts at most [`crate::socket::WAIT_SLICE`]; between slices the client
//! asks its [`Watch`] whether the server has made progress (a reply completed, or a batch of
//! requests taken: [`crate::Connection::progress`]) within the reply timeout. A byte now and
//! then is no progress: a reply stalled part-way, or dripped out one byte at a time, ends the
//! wait at the timeout all the same.

use crate::socket::later;
use std::io;
use std::time::{Duration, Instant};
use wire_text::format_wait;

/// A server that made no progress for the reply timeout.
#[derive(Debug, thiserror::Error)]
pub enum Stall {
    /// No reply completed.
    #[error(
        "no reply within {} from the server ({server}) with {in_flight} requests in flight{}",
        format_wait(*timeout),
        if *part_way { " (a reply stopped part-way)" } else { "" }
    )]
    NoReply {
        /// The server, in words.
        server: String,
        /// The reply timeout.
        timeout: Duration,
        /// Requests sent and not answered.
        in_flight: usize,
        /// Part of a reply had arrived.
        part_way: bool,
    },
    /// The server took no requests (its receive window stayed full) and answered none.
    #[error(
        "the server ({server}) took no request and sent no reply within {} ({in_flight} requests in flight)",
        format_wait(*timeout)
    )]
    NotTaking {
        /// The server, in words.
        server: String,
        /// The reply timeout.
        timeout: Duration,
        /// Requests submitted and not answered.
        in_flight: usize,
    },
}

impl Stall {
    /// As an [`io::Error`] of kind `TimedOut` carrying this value.
    pub fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, self)
    }
}

/// The reply timeout of one wait, restarted by every sign of progress. It starts only once a
/// first slice of waiting has gone by without the wait being over, so a wait that ends at
/// once reads no clock.
#[derive(Debug, Default)]
pub struct Watch {
    deadline: Option<Instant>,
    progress: u64,
}

impl Watch {
    /// A watch not started yet.
    pub fn new() -> Self {
        Watch::default()
    }

    /// Given the engine's progress count now: restarts the timeout when it moved (or on the
    /// first call) and returns `false`, else says whether `timeout` has passed since.
    pub fn expired(&mut self, now: Instant, progress: u64, timeout: Duration) -> bool {
        match self.deadline {
            Some(deadline) if progress == self.progress => now >= deadline,
            _ => {
                self.progress = progress;
                self.deadline = Some(later(now, timeout));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_restarts_the_timeout_and_silence_ends_it() {
        let timeout = Duration::from_secs(2);
        let start = Instant::now();
        let mut watch = Watch::new();
        assert!(!watch.expired(start, 5, timeout));
        assert!(!watch.expired(start + Duration::from_secs(1), 5, timeout));
        // Progress at 1.5 s: the timeout now ends at 3.5 s.
        assert!(!watch.expired(start + Duration::from_millis(1500), 6, timeout));
        assert!(!watch.expired(start + Duration::from_secs(3), 6, timeout));
        assert!(watch.expired(start + Duration::from_millis(3500), 6, timeout));
    }

    #[test]
    fn stalls_say_what_was_waited_for() {
        let stall = Stall::NoReply {
            server: "127.0.0.1:10809".into(),
            timeout: Duration::from_secs(30),
            in_flight: 3,
            part_way: true,
        };
        assert_eq!(
            stall.to_string(),
            "no reply within 30 s from the server (127.0.0.1:10809) with 3 requests in flight (a reply stopped part-way)"
        );
        assert_eq!(stall.into_io().kind(), io::ErrorKind::TimedOut);
    }
}
