//! The queue depth a blktrace capture shows, as fio works it out to replay the capture at that
//! depth when the job sets no `iodepth`.
//!
//! Per direction (read, write, trim: a request's categories, read first, then write, then
//! discard; a request of none of them, such as a bare flush, counts nowhere) a count goes up
//! for each request entering the queue and down for each one merged into a request already
//! queued (front or back); a completion ends a stretch: the count so far is kept when it is the
//! deepest yet, and starts again from 0. Notify events count nowhere. The depth is the deepest
//! stretch of any direction, at least 1 and at most [`MAX_DEPTH`] (a stacked device may log no
//! completions, and its count then grows without end). A capture without completions (a merged
//! one, which holds only queued requests) is therefore replayed at depth 1.
//!
//! ```
//! use iopath::input::fio::blktrace::{ACTION_COMPLETE, ACTION_QUEUE, CATEGORY_READ};
//! use iopath::input::fio::blktrace_depth::DepthCounter;
//! let mut depth = DepthCounter::default();
//! for action in [ACTION_QUEUE, ACTION_QUEUE, ACTION_QUEUE, ACTION_COMPLETE, ACTION_QUEUE] {
//!     depth.observe(action | CATEGORY_READ);
//! }
//! assert_eq!(depth.deepest(), 3);
//! ```

use super::blktrace_actions::{
    ACTION_BACKMERGE, ACTION_COMPLETE, ACTION_FRONTMERGE, ACTION_MASK, ACTION_QUEUE,
    CATEGORY_DISCARD, CATEGORY_NOTIFY, CATEGORY_READ, CATEGORY_WRITE,
};

/// The deepest queue a replay takes from a capture (fio's cap).
pub const MAX_DEPTH: u32 = 1024;

/// Counts requests in flight per direction over a capture's events; see the module
/// documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepthCounter {
    /// Requests queued since the last completion, per direction.
    current: [i64; 3],
    /// The deepest stretch ended by a completion, per direction.
    deepest: [i64; 3],
}

/// The direction of an event's request: 0 read, 1 write, 2 trim.
fn direction(action: u32) -> Option<usize> {
    if action & CATEGORY_READ != 0 {
        Some(0)
    } else if action & CATEGORY_WRITE != 0 {
        Some(1)
    } else if action & CATEGORY_DISCARD != 0 {
        Some(2)
    } else {
        None
    }
}

impl DepthCounter {
    /// Counts one event of the capture (its `action` field).
    pub fn observe(&mut self, action: u32) {
        if action & CATEGORY_NOTIFY != 0 {
            return;
        }
        let Some(direction) = direction(action) else {
            return;
        };
        match action & ACTION_MASK {
            ACTION_QUEUE => self.current[direction] += 1,
            ACTION_BACKMERGE | ACTION_FRONTMERGE => self.current[direction] -= 1,
            ACTION_COMPLETE => {
                self.deepest[direction] = self.deepest[direction].max(self.current[direction]);
                self.current[direction] = 0;
            }
            _ => {}
        }
    }

    /// The depth to replay at: the deepest stretch of any direction, from 1 to [`MAX_DEPTH`].
    pub fn deepest(&self) -> u32 {
        let deepest = self.deepest.iter().copied().max().unwrap_or(0);
        deepest.clamp(1, i64::from(MAX_DEPTH)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_take_back_a_queued_request_and_each_direction_counts_alone() {
        let mut depth = DepthCounter::default();
        let write = CATEGORY_WRITE;
        for action in [
            ACTION_QUEUE | write,
            ACTION_QUEUE | write,
            ACTION_BACKMERGE | write,
            ACTION_QUEUE | write,
            ACTION_FRONTMERGE | write,
            ACTION_QUEUE | CATEGORY_DISCARD,
            ACTION_QUEUE | CATEGORY_NOTIFY | write,
            ACTION_COMPLETE | write,
        ] {
            depth.observe(action);
        }
        assert_eq!(depth.deepest(), 1, "two writes queued and merged away");
        // Queued trims with no completion end no stretch: they do not count.
        for _ in 0..5 {
            depth.observe(ACTION_QUEUE | CATEGORY_DISCARD);
        }
        assert_eq!(depth.deepest(), 1);
        depth.observe(ACTION_COMPLETE | CATEGORY_DISCARD);
        assert_eq!(depth.deepest(), 6);
    }

    #[test]
    fn the_depth_is_at_least_1_and_at_most_1024() {
        assert_eq!(DepthCounter::default().deepest(), 1);
        let mut depth = DepthCounter::default();
        for _ in 0..5000 {
            depth.observe(ACTION_QUEUE | CATEGORY_READ);
        }
        depth.observe(ACTION_COMPLETE | CATEGORY_READ);
        assert_eq!(depth.deepest(), MAX_DEPTH);
    }
}
