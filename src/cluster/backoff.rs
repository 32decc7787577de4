//! How often a rank that waits for a message asks MPI for news.
//!
//! Every look costs a wake-up, and under Open MPI on an oversubscribed host (more ranks than
//! cores) a `sched_yield` too. A rank that looked every 200 µs while it waited (for rank 0's
//! word after sending its result, for the start of a test) cost little alone, but 255 of them
//! kept two cores busy with their looks, and the ranks still at work (building their results,
//! rank 0 merging) got what was left. So a wait looks soon after something came, and ever
//! less often while nothing does: the pause doubles from [`Backoff::FIRST`] up to
//! [`Backoff::LONGEST`], and is short again once a message arrives.

use std::time::Duration;

/// The pauses between a waiting rank's looks.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

impl Backoff {
    /// The first pause, and the pause after a message came.
    pub const FIRST: Duration = Duration::from_micros(200);
    /// The longest pause: a wait for the start of a test sees the start message at most this
    /// late, well within the start's margin (20 ms beyond the slowest round trip).
    pub const LONGEST: Duration = Duration::from_millis(10);

    /// Pauses starting at [`Backoff::FIRST`].
    pub fn new() -> Self {
        Backoff { next: Self::FIRST }
    }

    /// The pause before the next look, when the last one brought nothing: each is twice the
    /// one before, up to [`Backoff::LONGEST`].
    pub fn idle(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(Self::LONGEST);
        pause
    }

    /// A message came: the next pause is [`Backoff::FIRST`] again (more may follow soon, as
    /// the round trips of a clock measurement do).
    pub fn heard(&mut self) {
        self.next = Self::FIRST;
    }

    /// Sleeps for [`Backoff::idle`]'s pause, or for [`Backoff::FIRST`] when `heard` (and
    /// starts the doubling again).
    pub fn wait(&mut self, heard: bool) {
        if heard {
            self.heard();
        }
        std::thread::sleep(self.idle());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_the_longest_and_shorten_when_a_message_comes() {
        let mut backoff = Backoff::new();
        let pauses: Vec<u128> = (0..10).map(|_| backoff.idle().as_micros()).collect();
        assert_eq!(
            pauses,
            [
                200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000, 10_000
            ]
        );
        backoff.heard();
        assert_eq!(backoff.idle(), Backoff::FIRST);
        assert_eq!(backoff.idle(), Backoff::FIRST * 2);
    }

    #[test]
    fn a_second_of_waiting_takes_about_a_hundred_looks_not_five_thousand() {
        let mut backoff = Backoff::new();
        let mut waited = Duration::ZERO;
        let mut looks = 0;
        while waited < Duration::from_secs(1) {
            waited += backoff.idle();
            looks += 1;
        }
        // 200 µs apart, a second held 5 000 looks.
        assert!(looks <= 1_000 / 10 + 7, "{looks} looks");
    }
}
