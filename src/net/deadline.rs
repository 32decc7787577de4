//! Reading a connection against one deadline for a whole exchange, not per byte: a peer that
//! sends one byte now and then still runs out of time when the deadline passes.

use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest single wait, so that a stop flag is seen soon.
const SLICE: Duration = Duration::from_millis(200);

/// A connection read under a deadline (and a stop flag: reads then fail with
/// `ConnectionAborted`, "stopped"). The deadline can change between
/// exchanges with [`DeadlineStream::set_deadline`].
pub struct DeadlineStream {
    stream: TcpStream,
    deadline: Option<Instant>,
    stop: Option<Arc<AtomicBool>>,
}

impl DeadlineStream {
    /// Reads `stream` until `deadline` (none: no limit) or until `stop` is set.
    pub fn new(
        stream: TcpStream,
        deadline: Option<Instant>,
        stop: Option<Arc<AtomicBool>>,
    ) -> DeadlineStream {
        DeadlineStream {
            stream,
            deadline,
            stop,
        }
    }

    /// Sets the deadline of the next reads.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }
}

impl Read for DeadlineStream {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self
                .stop
                .as_ref()
                .is_some_and(|stop| stop.load(Ordering::Relaxed))
            {
                // Not `Interrupted`: `read_exact` retries that, and would spin here forever.
                return Err(std::io::Error::new(ErrorKind::ConnectionAborted, "stopped"));
            }
            let wait = match self.deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(std::io::Error::new(
                            ErrorKind::TimedOut,
                            "the peer did not finish in time",
                        ));
                    }
                    Some(left.min(SLICE))
                }
                None => self.stop.as_ref().map(|_| SLICE),
            };
            self.stream.set_read_timeout(wait)?;
            match self.stream.read(buffer) {
                Err(error)
                    if matches!(
                        error.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    #[test]
    fn timing_a_dripping_peer_runs_out_of_time() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut writer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (reader, _) = listener.accept().unwrap();
        let started = Instant::now();
        let deadline = started + Duration::from_millis(600);
        let mut reader = DeadlineStream::new(reader, Some(deadline), None);
        let drip = std::thread::spawn(move || {
            for _ in 0..30 {
                if writer.write_all(b"x").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let mut all = [0u8; 64];
        let error = reader.read_exact(&mut all).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::TimedOut);
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(600), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(2500), "{elapsed:?}");
        drop(reader);
        drip.join().unwrap();
    }
}
