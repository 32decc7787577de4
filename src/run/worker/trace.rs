//! The I/O trace of one worker (`--trace-io`): room reserved before the clock starts, never
//! grown while the worker runs; what does not fit is counted instead.

use super::{TracedIo, WorkerLength};

/// Most I/Os one worker traces in a run bounded by time (16 MiB of trace).
pub const TIMED_TRACE_IOS: usize = 1 << 20;

/// Most I/Os one worker traces in any run (64 MiB of trace).
pub const MAX_TRACE_IOS: usize = 1 << 22;

/// Issued I/Os of one worker, in room reserved up front.
#[derive(Debug, Default)]
pub struct IoTrace {
    ios: Vec<TracedIo>,
    room: usize,
    overflow_ios: u64,
}

impl IoTrace {
    /// A trace with room for `room` I/Os (0: tracing is off, and nothing is counted).
    pub fn with_room(room: usize) -> Self {
        IoTrace {
            ios: Vec::with_capacity(room),
            room,
            overflow_ios: 0,
        }
    }

    /// Room for a worker of `length` whose smallest I/O is `smallest_io_bytes`, issuing at most
    /// `io_limit` I/Os: every I/O it can issue when that is known and below [`MAX_TRACE_IOS`],
    /// [`TIMED_TRACE_IOS`] for a run bounded only by time.
    pub fn room_for(length: WorkerLength, io_limit: Option<u64>, smallest_io_bytes: u64) -> usize {
        let by_bytes = match length {
            WorkerLength::Bytes { bytes, .. } => Some(bytes / smallest_io_bytes.max(1) + 1),
            WorkerLength::Time { .. } => None,
        };
        let bound = match (by_bytes, io_limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        bound.map_or(TIMED_TRACE_IOS, |ios| {
            usize::try_from(ios)
                .unwrap_or(usize::MAX)
                .min(MAX_TRACE_IOS)
        })
    }

    /// Keeps `io`, or counts it when the room is full (no allocation either way).
    #[inline]
    pub fn push(&mut self, io: TracedIo) {
        if self.ios.len() < self.room {
            self.ios.push(io);
        } else {
            self.overflow_ios += 1;
        }
    }

    /// The kept I/Os and how many did not fit.
    pub fn into_parts(self) -> (Vec<TracedIo>, u64) {
        (self.ios, self.overflow_ios)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Direction;

    fn io(offset: u64) -> TracedIo {
        TracedIo {
            direction: Direction::Read,
            offset,
            length: 512,
        }
    }

    #[test]
    fn a_full_trace_counts_instead_of_growing() {
        let mut trace = IoTrace::with_room(2);
        let capacity = trace.ios.capacity();
        for offset in 0..5 {
            trace.push(io(offset));
        }
        assert_eq!(trace.ios.capacity(), capacity);
        let (ios, overflow) = trace.into_parts();
        assert_eq!(ios, [io(0), io(1)]);
        assert_eq!(overflow, 3);
    }

    #[test]
    fn room_follows_the_bound_of_the_run() {
        let bytes = WorkerLength::Bytes {
            bytes: 1 << 20,
            time_limit_ns: None,
        };
        let time = WorkerLength::Time {
            ramp_ns: 0,
            duration_ns: 1,
        };
        assert_eq!(IoTrace::room_for(bytes, None, 4096), 257);
        assert_eq!(IoTrace::room_for(bytes, Some(10), 4096), 10);
        assert_eq!(IoTrace::room_for(time, Some(10), 4096), 10);
        assert_eq!(IoTrace::room_for(time, None, 4096), TIMED_TRACE_IOS);
        let huge = WorkerLength::Bytes {
            bytes: 1 << 40,
            time_limit_ns: None,
        };
        assert_eq!(IoTrace::room_for(huge, None, 512), MAX_TRACE_IOS);
    }
}
