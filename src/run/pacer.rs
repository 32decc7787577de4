//! Rate caps (`--rate`, `--rate-iops`) held over a whole job: one pacer shared by every worker
//! of the job, on every target.
//!
//! Each I/O claims its place in the job's sequence before it is issued: the I/O that follows
//! `B` bytes and `N` I/Os of the job may leave `B / rate` seconds (and `N / rate_iops` seconds)
//! after the job's start, and not before. The first I/O leaves at once, and by any time `t`
//! the job has issued at most `rate × t` bytes plus the one I/O in progress — also when the
//! cap is below one block per second (`--rate 4k --bs 64k` issues one block every 16 s) and
//! whatever the number of workers (they share the sequence instead of each having a slice of
//! the cap and a first I/O of its own).
//!
//! Claiming is one atomic add per cap: no lock, no allocation.
//!
//! ```
//! use iopath::run::pacer::JobPacer;
//! let pacer = JobPacer::new(Some(4096), None).unwrap();
//! assert_eq!(pacer.claim(4096), 0); // the first block leaves at once
//! assert_eq!(pacer.claim(4096), 1_000_000_000); // the next one after a second
//! assert_eq!(pacer.claim(4096), 2_000_000_000);
//! assert!(JobPacer::new(None, None).is_none());
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

/// The rate caps of one job and what its workers have claimed so far.
#[derive(Debug)]
pub struct JobPacer {
    /// Bytes per second over the job, when capped.
    bytes_per_second: Option<u64>,
    /// I/Os per second over the job, when capped.
    ios_per_second: Option<u64>,
    /// Bytes of every I/O claimed so far.
    claimed_bytes: AtomicU64,
    /// I/Os claimed so far.
    claimed_ios: AtomicU64,
}

impl JobPacer {
    /// A pacer for these caps; `None` when there is no cap (a cap of 0 counts as none).
    pub fn new(bytes_per_second: Option<u64>, ios_per_second: Option<u64>) -> Option<Self> {
        let bytes_per_second = bytes_per_second.filter(|&rate| rate > 0);
        let ios_per_second = ios_per_second.filter(|&rate| rate > 0);
        if bytes_per_second.is_none() && ios_per_second.is_none() {
            return None;
        }
        Some(JobPacer {
            bytes_per_second,
            ios_per_second,
            claimed_bytes: AtomicU64::new(0),
            claimed_ios: AtomicU64::new(0),
        })
    }

    /// Claims the job's next I/O, of `length_bytes`: the time it may leave, ns after the
    /// job's start. A claimed I/O must be issued (or the run end) before its worker claims
    /// another.
    pub fn claim(&self, length_bytes: u64) -> u64 {
        let bytes_before = self
            .claimed_bytes
            .fetch_add(length_bytes, Ordering::Relaxed);
        let ios_before = self.claimed_ios.fetch_add(1, Ordering::Relaxed);
        let due = |done: u64, rate: Option<u64>| {
            rate.map_or(0, |rate| {
                let nanos = u128::from(done) * 1_000_000_000 / u128::from(rate);
                u64::try_from(nanos).unwrap_or(u64::MAX)
            })
        };
        due(bytes_before, self.bytes_per_second).max(due(ios_before, self.ios_per_second))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_caps_hold_and_the_stricter_one_wins() {
        // 1 MB/s and 10 IOPS with 4 KiB blocks: the IOPS cap is the stricter.
        let pacer = JobPacer::new(Some(1_000_000), Some(10)).unwrap();
        let due: Vec<u64> = (0..3).map(|_| pacer.claim(4096)).collect();
        assert_eq!(due, [0, 100_000_000, 200_000_000]);
        // 1 KB/s with 1 MiB blocks: one block every 1048.576 s.
        let pacer = JobPacer::new(Some(1000), Some(1_000_000)).unwrap();
        assert_eq!(pacer.claim(1 << 20), 0);
        assert_eq!(pacer.claim(1 << 20), 1_048_576_000_000);
    }

    #[test]
    fn a_tiny_rate_is_one_block_per_many_seconds_over_all_workers() {
        // --rate 1 (one byte a second): the first block, then nothing for 4096 s, however
        // many workers claim.
        let pacer = JobPacer::new(Some(1), None).unwrap();
        let due: Vec<u64> = (0..32).map(|_| pacer.claim(4096)).collect();
        assert_eq!(due[0], 0);
        assert_eq!(due[1], 4096 * 1_000_000_000);
        assert!(due.windows(2).all(|pair| pair[1] > pair[0]));
    }

    #[test]
    fn claims_from_many_threads_get_distinct_places() {
        let pacer = JobPacer::new(None, Some(1000)).unwrap();
        let mut due: Vec<u64> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| (0..250).map(|_| pacer.claim(512)).collect::<Vec<_>>()))
                .collect();
            workers
                .into_iter()
                .flat_map(|worker| worker.join().unwrap())
                .collect()
        });
        due.sort_unstable();
        let expected: Vec<u64> = (0..1000).map(|index| index * 1_000_000).collect();
        assert_eq!(due, expected);
    }

    #[test]
    fn a_huge_sequence_saturates_instead_of_wrapping() {
        let pacer = JobPacer::new(Some(1), None).unwrap();
        pacer.claim(u64::MAX / 2);
        assert_eq!(pacer.claim(1), u64::MAX);
    }
}
