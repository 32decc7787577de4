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
//! With Poisson arrivals (fio's `rate_process=poisson`) the gaps between the job's I/Os are
//! drawn from an exponential distribution whose mean is the gap the caps give each I/O: the
//! I/O after `N` others leaves at the sum of their `N` gaps. The draws come from the job's seed
//! and the I/O's place in the sequence, so they do not depend on which worker claims it.
//!
//! Claiming is one atomic add per cap (two with Poisson arrivals): no lock, no allocation.
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
    /// Poisson arrivals: the seed of the gaps.
    poisson_seed: Option<u64>,
    /// Poisson arrivals: the sum of the gaps claimed so far, ns.
    claimed_gaps_ns: AtomicU64,
}

impl JobPacer {
    /// A pacer for these caps; `None` when there is no cap (a cap of 0 counts as none).
    pub fn new(bytes_per_second: Option<u64>, ios_per_second: Option<u64>) -> Option<Self> {
        Self::with_arrivals(bytes_per_second, ios_per_second, None)
    }

    /// A pacer whose I/Os arrive as a Poisson process drawn from `poisson_seed`, or evenly
    /// spaced when it is `None`.
    pub fn with_arrivals(
        bytes_per_second: Option<u64>,
        ios_per_second: Option<u64>,
        poisson_seed: Option<u64>,
    ) -> Option<Self> {
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
            poisson_seed,
            claimed_gaps_ns: AtomicU64::new(0),
        })
    }

    /// Claims the job's next I/O, of `length_bytes`: the time it may leave, ns after the
    /// job's start. A claimed I/O must be issued (or the run end) before its worker claims
    /// another.
    pub fn claim(&self, length_bytes: u64) -> u64 {
        if let Some(seed) = self.poisson_seed {
            return self.claim_poisson(length_bytes, seed);
        }
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

    /// The Poisson claim: this I/O's gap is drawn, and it leaves after the gaps before it.
    fn claim_poisson(&self, length_bytes: u64, seed: u64) -> u64 {
        let index = self.claimed_ios.fetch_add(1, Ordering::Relaxed);
        let mean_ns = |units: u64, rate: Option<u64>| {
            rate.map_or(0.0, |rate| units as f64 * 1e9 / rate as f64)
        };
        let mean =
            mean_ns(length_bytes, self.bytes_per_second).max(mean_ns(1, self.ios_per_second));
        let uniform = (splitmix64(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15)) >> 11) as f64
            / (1u64 << 53) as f64;
        let gap = (-(1.0 - uniform).ln() * mean).min(u64::MAX as f64 / 4.0) as u64;
        self.claimed_gaps_ns.fetch_add(gap, Ordering::Relaxed)
    }
}

/// A well-mixed 64-bit hash (splitmix64's finaliser).
fn splitmix64(mut value: u64) -> u64 {
    value = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
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
    fn poisson_gaps_are_exponential_with_the_rate_as_mean() {
        // 1000 IOPS: mean gap 1 ms; an exponential's standard deviation equals its mean, and
        // a share e^-1 of the gaps are longer than the mean.
        let pacer = JobPacer::with_arrivals(None, Some(1000), Some(7)).unwrap();
        let due: Vec<u64> = (0..20_001).map(|_| pacer.claim(4096)).collect();
        assert_eq!(due[0], 0);
        let gaps: Vec<f64> = due
            .windows(2)
            .map(|pair| (pair[1] - pair[0]) as f64)
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let variance = gaps.iter().map(|gap| (gap - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!((mean / 1e6 - 1.0).abs() < 0.03, "mean gap {mean} ns");
        assert!(
            (variance.sqrt() / mean - 1.0).abs() < 0.05,
            "spread {}",
            variance.sqrt()
        );
        let long = gaps.iter().filter(|gap| **gap > mean).count() as f64 / gaps.len() as f64;
        assert!((long - (-1.0f64).exp()).abs() < 0.02, "{long}");
        // The same seed, the same arrivals; the linear process has no spread at all.
        let again = JobPacer::with_arrivals(None, Some(1000), Some(7)).unwrap();
        assert!(due.iter().all(|&due| again.claim(4096) == due));
        let linear = JobPacer::new(None, Some(1000)).unwrap();
        let even: Vec<u64> = (0..3).map(|_| linear.claim(4096)).collect();
        assert_eq!(even, [0, 1_000_000, 2_000_000]);
    }

    #[test]
    fn a_huge_sequence_saturates_instead_of_wrapping() {
        let pacer = JobPacer::new(Some(1), None).unwrap();
        pacer.claim(u64::MAX / 2);
        assert_eq!(pacer.claim(1), u64::MAX);
    }
}
