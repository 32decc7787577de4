//! When rank 0 counts a silent rank as lost, on a host where ranks may outnumber cores.
//!
//! While a test runs, every rank tells rank 0 it is alive twice a second, and one silent for
//! [`LOST_AFTER`] is lost. Silence is measured on rank 0's own [`ProgressClock`], which only
//! advances while rank 0 itself gets to look: when rank 0 waited a long while for a core
//! (every rank oversubscribed on the same cores waits alike), that while is not counted
//! against the others.
//!
//! After its test, a rank sends nothing until its result: it merges its workers' figures,
//! analyses them and serialises them, which on a crowded host takes as long for it as for
//! rank 0 (64 debug-build ranks on 2 cores: 5–7 s, with the last heartbeat before that). So
//! once its own run has ended rank 0 judges the others by their results, not their
//! heartbeats: it waits for results as long as they keep coming ([`Gathering`]), and a rank
//! whose result has not come when none has come for the wait's length is lost.

use std::time::{Duration, Instant};

/// A rank silent this long on rank 0's [`ProgressClock`] while a test runs is lost.
pub const LOST_AFTER: Duration = Duration::from_secs(3);

/// The longest stretch between two of rank 0's looks that counts whole: a longer gap was
/// rank 0 waiting for a core, and counts as this much.
pub const LONGEST_STEP: Duration = Duration::from_millis(250);

/// Rank 0's time as far as it could watch: it advances by the time between two of its
/// looks, at most [`LONGEST_STEP`] per look. On a host with cores to spare it keeps the wall
/// clock's pace (rank 0 looks every 50 ms); when rank 0 waits two seconds for a core, it
/// advances a quarter of a second.
#[derive(Clone, Copy, Debug)]
pub struct ProgressClock {
    last_look: Instant,
    progress: Duration,
}

impl ProgressClock {
    /// A clock at zero, its first look at `now`.
    pub fn new(now: Instant) -> Self {
        ProgressClock {
            last_look: now,
            progress: Duration::ZERO,
        }
    }

    /// Rank 0 looks at `now`: the clock advances by the time since the last look, at most
    /// [`LONGEST_STEP`]; returns the reading.
    pub fn look(&mut self, now: Instant) -> Duration {
        let step = now.saturating_duration_since(self.last_look);
        self.progress += step.min(LONGEST_STEP);
        self.last_look = now;
        self.progress
    }

    /// The reading at the last look.
    pub fn reading(&self) -> Duration {
        self.progress
    }
}

/// Rank 0's wait for the others' results once its own run has ended: it lasts as long as
/// results keep coming, each giving the next `wait` more.
#[derive(Clone, Copy, Debug)]
pub struct Gathering {
    wait: Duration,
    deadline: Instant,
}

impl Gathering {
    /// A wait that began at `now`, for results at most `wait` apart.
    pub fn new(now: Instant, wait: Duration) -> Self {
        Gathering {
            wait,
            deadline: now + wait,
        }
    }

    /// A result came at `now`: the wait for the next one starts again.
    pub fn result_came(&mut self, now: Instant) {
        self.deadline = self.deadline.max(now + self.wait);
    }

    /// Whether no result has come for the wait's length by `now`: the ranks still missing
    /// are lost.
    pub fn over(&self, now: Instant) -> bool {
        now >= self.deadline
    }

    /// How long results may be apart.
    pub fn wait(&self) -> Duration {
        self.wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rank 0's looks at these gaps, ms: what its clock reads after each.
    fn readings(gaps_ms: &[u64]) -> Vec<u128> {
        let start = Instant::now();
        let mut clock = ProgressClock::new(start);
        let mut at = start;
        gaps_ms
            .iter()
            .map(|gap| {
                at += Duration::from_millis(*gap);
                clock.look(at).as_millis()
            })
            .collect()
    }

    #[test]
    fn looks_on_time_keep_the_wall_clocks_pace() {
        // 3 s of looks every 50 ms: a rank silent since the start is lost at 3 s, as before.
        let looks = readings(&[50; 61]);
        assert_eq!(looks[59], 3_000);
        assert!(Duration::from_millis(looks[60] as u64) > LOST_AFTER);
    }

    #[test]
    fn a_wait_for_a_core_counts_as_one_step_not_its_length() {
        // Rank 0 waits 2.5 s for a core between two looks (255 other ranks on 2 cores): a rank
        // heard from just before, whose heartbeat waited as long, is not yet silent for 3 s.
        let looks = readings(&[50, 50, 2_500, 50]);
        assert_eq!(looks, [50, 100, 350, 400]);
        let silent = Duration::from_millis((looks[3] - looks[0]) as u64);
        assert!(silent < LOST_AFTER);
    }

    #[test]
    fn a_dead_rank_is_still_found_when_rank_0_is_slowed_but_looks() {
        // Looks every 200 ms (rank 0 on a crowded host): 3 s of them still count as 3 s.
        let looks = readings(&[200; 16]);
        assert_eq!(looks[14], 3_000);
    }

    #[test]
    fn the_gathering_lasts_while_results_keep_coming() {
        let start = Instant::now();
        let wait = Duration::from_secs(15);
        let mut gathering = Gathering::new(start, wait);
        // 256 results, one every 200 ms: 51 s in all, far beyond one wait.
        for index in 1..=256u32 {
            let now = start + Duration::from_millis(200) * index;
            assert!(!gathering.over(now), "over at result {index}");
            gathering.result_came(now);
        }
        let last = start + Duration::from_millis(200) * 256;
        assert!(!gathering.over(last + wait - Duration::from_millis(1)));
        assert!(gathering.over(last + wait));
    }

    #[test]
    fn without_results_the_gathering_ends_after_one_wait() {
        let start = Instant::now();
        let gathering = Gathering::new(start, Duration::from_secs(5));
        assert!(!gathering.over(start + Duration::from_millis(4_999)));
        assert!(gathering.over(start + Duration::from_secs(5)));
        assert_eq!(gathering.wait(), Duration::from_secs(5));
    }
}
