//! The search for the deepest queue whose latency meets a target (fio's `latency_target`),
//! one per worker, as fio runs it:
//!
//! - the worker starts at depth 1, between a low bound of 1 and a high bound of its queue
//!   depth;
//! - each window (`latency_window`) is judged: when the share of its I/Os within the target is
//!   at least the percentile, the depth rises — doubling until a depth has failed, then
//!   halfway to the high bound; otherwise it falls halfway to the low bound (the failed depth
//!   becomes the high bound). With a percentile of 100 the first I/O over the target lowers the
//!   depth at once;
//! - after a fall the worker lets its I/O in flight complete before the next window starts;
//! - when a depth that held would not change, that is the depth found: the worker runs one more
//!   window at it with its figures reset (those are the job's results) and ends — or, with
//!   `latency_run`, keeps adjusting until the run ends;
//! - when even depth 1 misses the target the worker reports that the target was not met; with
//!   a percentile of 100 it ends at the first such I/O (fio ends the job with an error),
//!   otherwise it goes on at depth 1, judging the window as it grows, as fio does.
//!
//! ```
//! use iopath::run::latency_search::{LatencySearch, SearchStep};
//! use iopath::result::LatencyTarget;
//! let target = LatencyTarget { target_ns: 1_000, window_ns: 100, percentile: 100.0, keep_running: false };
//! let mut search = LatencySearch::new(target, 8);
//! assert_eq!(search.depth(), 1);
//! assert_eq!(search.completed(500), SearchStep::Continue);
//! assert_eq!(search.check(100), SearchStep::Continue); // the window held: depth 2
//! assert_eq!(search.depth(), 2);
//! ```

use crate::result::LatencyTarget;

/// What the worker does after a completion or a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchStep {
    /// Go on.
    Continue,
    /// The depth fell: let the I/O in flight complete, then call [`LatencySearch::start_window`].
    Quiesce,
    /// The depth is found: let the I/O in flight complete, reset the figures, then call
    /// [`LatencySearch::start_window`] for the final window.
    FinalRun,
    /// The worker is done.
    Done,
}

/// One worker's search (see the module documentation).
#[derive(Clone, Debug)]
pub struct LatencySearch {
    target: LatencyTarget,
    max_depth: u32,
    depth: u32,
    low: u32,
    high: u32,
    stable: u32,
    window_start_ns: u64,
    ios: u64,
    missed: u64,
    final_run: bool,
    met: bool,
}

impl LatencySearch {
    /// A search up to `max_depth` (the worker's queue depth), its first window starting at 0.
    pub fn new(target: LatencyTarget, max_depth: u32) -> Self {
        LatencySearch {
            target,
            max_depth: max_depth.max(1),
            depth: 1,
            low: 1,
            high: max_depth.max(1),
            stable: 0,
            window_start_ns: 0,
            ios: 0,
            missed: 0,
            final_run: false,
            met: true,
        }
    }

    /// The depth to keep in flight now.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Whether the last window judged held (false at the end: not even depth 1 held).
    pub fn met(&self) -> bool {
        self.met
    }

    /// Starts a window at `now_ns`.
    pub fn start_window(&mut self, now_ns: u64) {
        self.window_start_ns = now_ns;
        self.ios = 0;
        self.missed = 0;
    }

    /// One completion of `latency_ns`.
    pub fn completed(&mut self, latency_ns: u64) -> SearchStep {
        self.ios += 1;
        if latency_ns <= self.target.target_ns {
            return SearchStep::Continue;
        }
        if self.target.percentile >= 100.0 {
            return self.fall(true);
        }
        self.missed += 1;
        SearchStep::Continue
    }

    /// Judges the window when it has lasted its length at `now_ns`.
    pub fn check(&mut self, now_ns: u64) -> SearchStep {
        if now_ns.saturating_sub(self.window_start_ns) < self.target.window_ns {
            return SearchStep::Continue;
        }
        let within = if self.ios == 0 {
            0.0
        } else {
            (self.ios - self.missed) as f64 * 100.0 / self.ios as f64
        };
        if within >= self.target.percentile {
            self.rise(now_ns)
        } else {
            self.fall(false)
        }
    }

    /// The window failed: halfway down to the low bound.
    fn fall(&mut self, at_once: bool) -> SearchStep {
        if self.depth == 1 {
            self.met = false;
            if at_once {
                // Not even one I/O at a time meets the target.
                return SearchStep::Done;
            }
            // A window at depth 1 that failed keeps being judged as it grows (as in fio).
            return SearchStep::Continue;
        }
        self.high = self.depth;
        if self.depth == self.low {
            self.low -= 1;
        }
        self.depth = (self.depth + self.low) / 2;
        self.stable = 0;
        SearchStep::Quiesce
    }

    /// The window held: up, or done when the depth would not change.
    fn rise(&mut self, now_ns: u64) -> SearchStep {
        let before = self.depth;
        self.met = true;
        self.low = self.depth;
        if self.depth + 1 == self.high {
            // Stuck one below a failed depth: try it again after three good windows.
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.depth = if self.high != self.max_depth {
            (self.depth + self.high) / 2
        } else {
            self.depth.saturating_mul(2)
        }
        .min(self.max_depth);
        if !self.target.keep_running && self.depth == before {
            if self.final_run {
                return SearchStep::Done;
            }
            self.final_run = true;
            return SearchStep::FinalRun;
        }
        self.start_window(now_ns);
        SearchStep::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(percentile: f64, keep_running: bool) -> LatencyTarget {
        LatencyTarget {
            target_ns: 1_000,
            window_ns: 10,
            percentile,
            keep_running,
        }
    }

    /// Runs windows where depth `d` meets the target when `d <= capacity`, and returns the
    /// depths visited and the last step.
    fn search(capacity: u32, max_depth: u32) -> (Vec<u32>, SearchStep) {
        let mut search = LatencySearch::new(target(99.0, false), max_depth);
        let mut depths = vec![search.depth()];
        let mut now = 0;
        for _ in 0..200 {
            let latency = if search.depth() <= capacity {
                500
            } else {
                5_000
            };
            for _ in 0..100 {
                search.completed(latency);
            }
            now += 10;
            let step = search.check(now);
            if matches!(step, SearchStep::Quiesce | SearchStep::FinalRun) {
                search.start_window(now);
            }
            if step == SearchStep::Done {
                return (depths, step);
            }
            if depths.last() != Some(&search.depth()) {
                depths.push(search.depth());
            }
        }
        (depths, SearchStep::Continue)
    }

    #[test]
    fn doubles_then_bisects_to_the_deepest_depth_that_holds() {
        let (depths, step) = search(12, 128);
        assert_eq!(step, SearchStep::Done);
        assert_eq!(depths[..5], [1, 2, 4, 8, 16]);
        assert_eq!(*depths.last().unwrap(), 12, "{depths:?}");
        let (depths, _) = search(128, 128);
        assert_eq!(*depths.last().unwrap(), 128, "{depths:?}");
    }

    #[test]
    fn a_miss_at_full_percentile_lowers_at_once_and_depth_one_gives_up() {
        let mut search = LatencySearch::new(target(100.0, false), 16);
        search.completed(10);
        assert_eq!(search.check(10), SearchStep::Continue);
        assert_eq!(search.depth(), 2);
        assert_eq!(search.completed(5_000), SearchStep::Quiesce);
        assert_eq!(search.depth(), 1);
        assert_eq!(search.completed(5_000), SearchStep::Done);
        assert!(!search.met());
    }

    #[test]
    fn keep_running_never_ends() {
        let mut search = LatencySearch::new(target(90.0, true), 4);
        let mut now = 0;
        for _ in 0..50 {
            search.completed(10);
            now += 10;
            assert_ne!(search.check(now), SearchStep::Done);
        }
        assert_eq!(search.depth(), 4);
    }
}
