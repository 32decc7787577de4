//! A recorded trace replayed: the I/Os a worker issues when its job replays an I/O log (fio's
//! `read_iolog`) instead of generating offsets.
//!
//! A [`ReplayTrace`] is built before the run from a log that was read and checked (its files
//! already mapped to the job's targets, offsets scaled and aligned, timing worked out); the
//! worker's [`ReplayCursor`] hands its I/Os out in order, each with the pause to keep before the
//! next one, and starts over at the end (a replay that runs longer than its trace repeats it).
//!
//! ```
//! use iopath::result::Direction;
//! use iopath::workload::replay::{ReplayCursor, ReplayIo, ReplayTrace};
//! use std::sync::Arc;
//! let io = |delay_ns, offset| ReplayIo { delay_ns, file: 0, direction: Direction::Write, offset, length: 4096 };
//! let trace = Arc::new(ReplayTrace { ios: vec![io(0, 0), io(5_000, 4096)] });
//! let mut cursor = ReplayCursor::new(trace);
//! let first = cursor.next_io();
//! assert_eq!((first.offset, first.pause_after_ns), (0, 5_000));
//! assert_eq!(cursor.next_io().offset, 4096);
//! ```

use super::planner::PlannedIo;
use crate::result::Direction;
use std::sync::Arc;

/// One I/O of a trace, as a worker issues it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayIo {
    /// Time to keep after the previous I/O was issued before issuing this one, ns (0: at once).
    pub delay_ns: u64,
    /// Which of the job's targets (its index among the worker's files).
    pub file: u32,
    /// Read, write or trim.
    pub direction: Direction,
    /// Byte offset in the target.
    pub offset: u64,
    /// Length, bytes.
    pub length: u32,
}

/// A whole trace, ready to replay (shared by reference between a job's plan and its worker).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayTrace {
    /// The I/Os in order (at least one).
    pub ios: Vec<ReplayIo>,
}

impl ReplayTrace {
    /// Bytes read and written by the trace (trims move no data and are not counted).
    pub fn data_bytes(&self) -> u64 {
        self.data_lengths().sum()
    }

    /// The length of each read and write, bytes.
    fn data_lengths(&self) -> impl Iterator<Item = u64> + '_ {
        self.ios
            .iter()
            .filter(|io| io.direction != Direction::Trim)
            .map(|io| u64::from(io.length))
    }

    /// The longest read or write, bytes: what each data buffer must hold (0 when the trace
    /// only trims).
    pub fn largest_data_io_bytes(&self) -> u64 {
        self.data_lengths().max().unwrap_or(0)
    }

    /// The largest power of two, at most 4096, that divides every offset and length of the
    /// trace: the alignment its I/Os keep (what O_DIRECT checks against the device's block).
    pub fn alignment_bytes(&self) -> u64 {
        let bits = self
            .ios
            .iter()
            .fold(4096u64, |bits, io| bits | io.offset | u64::from(io.length));
        1 << bits.trailing_zeros()
    }

    /// How many I/Os of `direction` it holds.
    pub fn count(&self, direction: Direction) -> usize {
        self.ios
            .iter()
            .filter(|io| io.direction == direction)
            .count()
    }

    /// The bytes a worker replaying it moves, trims included, rounded up to whole blocks of
    /// `block_bytes` (the runner's byte budget counts whole blocks): the budget is met by the
    /// trace's last I/O, never before, and its I/O count ends the replay.
    pub fn byte_budget(&self, block_bytes: u64) -> u64 {
        let block_bytes = block_bytes.max(1);
        self.ios
            .iter()
            .map(|io| u64::from(io.length))
            .sum::<u64>()
            .max(1)
            .div_ceil(block_bytes)
            .saturating_mul(block_bytes)
    }

    /// The end of the furthest I/O on file `file`, bytes (0: none).
    pub fn end_on(&self, file: u32) -> u64 {
        self.ios
            .iter()
            .filter(|io| io.file == file)
            .map(|io| io.offset.saturating_add(u64::from(io.length)))
            .max()
            .unwrap_or(0)
    }
}

/// The traces of a job's clones (fio's `read_iolog=a:b` with `numjobs`): clone `i` replays
/// `traces[i % traces.len()]`, each worker its own trace with its own length.
///
/// ```
/// use iopath::result::Direction;
/// use iopath::workload::replay::{CloneTraces, ReplayIo, ReplayTrace};
/// use std::sync::Arc;
/// let trace = |offset| Arc::new(ReplayTrace { ios: vec![ReplayIo { delay_ns: 0, file: 0, direction: Direction::Read, offset, length: 512 }] });
/// let traces = CloneTraces { traces: vec![trace(0), trace(512)], queue_depths: vec![] };
/// let offsets: Vec<u64> = (0..3).map(|clone| traces.of_clone(clone).ios[0].offset).collect();
/// assert_eq!(offsets, [0, 512, 0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CloneTraces {
    /// One trace per log, in the order the job lists them (at least one).
    pub traces: Vec<Arc<ReplayTrace>>,
    /// The queue depth of each trace's clones, where each takes its own from its capture
    /// (fio sets a clone's `iodepth` from its own capture); empty: the job's for every clone.
    pub queue_depths: Vec<u32>,
}

impl CloneTraces {
    /// The traces of a job whose clones all replay `trace`.
    pub fn one(trace: ReplayTrace) -> Self {
        CloneTraces {
            traces: vec![Arc::new(trace)],
            queue_depths: Vec::new(),
        }
    }

    /// The queue depth of clone `clone` when it has one of its own.
    pub fn depth_of_clone(&self, clone: u32) -> Option<u32> {
        match self.queue_depths.len() {
            0 => None,
            count => Some(self.queue_depths[clone as usize % count]),
        }
    }

    /// The trace clone `clone` replays (an empty one if there were none).
    pub fn of_clone(&self, clone: u32) -> Arc<ReplayTrace> {
        match self.traces.len() {
            0 => Arc::default(),
            count => self.traces[clone as usize % count].clone(),
        }
    }
}

/// Where a worker is in its trace.
#[derive(Clone, Debug)]
pub struct ReplayCursor {
    trace: Arc<ReplayTrace>,
    next: usize,
}

impl ReplayCursor {
    /// A cursor at the start of `trace`.
    pub fn new(trace: Arc<ReplayTrace>) -> Self {
        ReplayCursor { trace, next: 0 }
    }

    /// The trace it walks.
    pub fn trace(&self) -> &ReplayTrace {
        &self.trace
    }

    /// The next I/O of the trace, with the delay of the one after it as its pause; after the
    /// last, the first again.
    #[inline]
    pub fn next_io(&mut self) -> PlannedIo {
        let ios = &self.trace.ios;
        let Some(io) = ios.get(self.next).or_else(|| ios.first()).copied() else {
            // An empty trace is refused when it is read; issue nothing harmful if one came.
            return PlannedIo {
                direction: Direction::Read,
                offset: 0,
                length: 0,
                pause_after_ns: 0,
                file: 0,
            };
        };
        self.next = if self.next + 1 >= ios.len() {
            0
        } else {
            self.next + 1
        };
        let pause_after_ns = ios.get(self.next).map_or(0, |next| next.delay_ns);
        PlannedIo {
            direction: io.direction,
            offset: io.offset,
            length: io.length,
            pause_after_ns,
            file: io.file,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(direction: Direction, offset: u64, length: u32) -> ReplayIo {
        ReplayIo {
            delay_ns: 0,
            file: 0,
            direction,
            offset,
            length,
        }
    }

    #[test]
    fn trims_size_no_buffer_and_move_no_data() {
        let trace = ReplayTrace {
            ios: vec![
                io(Direction::Trim, 0, u32::MAX),
                io(Direction::Write, 0, 4096),
                io(Direction::Read, 8192, 512),
            ],
        };
        assert_eq!(trace.largest_data_io_bytes(), 4096);
        assert_eq!(trace.data_bytes(), 4608);
        assert_eq!(trace.end_on(0), u64::from(u32::MAX));
        assert_eq!(trace.count(Direction::Trim), 1);
        assert_eq!(trace.alignment_bytes(), 1, "the trim of 2^32 - 1 bytes");
        let aligned = ReplayTrace {
            ios: vec![
                io(Direction::Write, 1 << 20, 4096),
                io(Direction::Read, 1536, 1024),
            ],
        };
        assert_eq!(aligned.alignment_bytes(), 512);
    }

    #[test]
    fn the_cursor_walks_in_order_and_starts_over() {
        let trace = Arc::new(ReplayTrace {
            ios: vec![io(Direction::Read, 0, 512), io(Direction::Write, 512, 512)],
        });
        let mut cursor = ReplayCursor::new(trace);
        let offsets: Vec<u64> = (0..5).map(|_| cursor.next_io().offset).collect();
        assert_eq!(offsets, [0, 512, 0, 512, 0]);
    }
}
