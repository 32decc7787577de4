//! Turns a [`Workload`] into the next I/O of one worker: direction, offset, length.
//!
//! Each I/O first draws its block size from the mix, then its direction from the read
//! percentage, then whether it is random (probability = random percentage, Iometer's meaning):
//! a random I/O starts at a uniformly drawn multiple of the alignment inside the region; any
//! other I/O starts right after the previous one, wrapping to the region start at its end.
//! Every draw comes from the worker's own generator seeded from the workload seed and the worker
//! index, so the same seed gives the same I/O sequence.

use super::Workload;
use crate::engine::Direction;

/// One planned I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedIo {
    /// Read or write.
    pub direction: Direction,
    /// Byte offset in the target.
    pub offset: u64,
    /// Length in bytes.
    pub length: u32,
}

#[derive(Clone, Copy, Debug)]
struct SizeEntry {
    size_bytes: u64,
    cumulative_percent: u32,
    random_slots: u64,
}

/// The offset generator of one worker.
#[derive(Clone, Debug)]
pub struct IoPlanner {
    rng: fastrand::Rng,
    sizes: Vec<SizeEntry>,
    read_percent: u32,
    random_percent: u32,
    alignment_bytes: u64,
    region_start: u64,
    region_end: u64,
    next_sequential: u64,
}

/// Seed of worker `worker_index`'s generator for a workload seed.
pub fn worker_seed(seed: u64, worker_index: u32) -> u64 {
    seed ^ (worker_index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl IoPlanner {
    /// A planner for worker `worker_index` of `worker_count` over the region
    /// `[region_start, region_start + region_size)`. The region must hold the largest block.
    pub fn new(
        workload: &Workload,
        region_start: u64,
        region_size: u64,
        worker_index: u32,
        worker_count: u32,
    ) -> Self {
        let alignment_bytes = workload.alignment_bytes.max(1);
        let mut cumulative = 0;
        let sizes = workload
            .block_sizes
            .shares
            .iter()
            .map(|share| {
                cumulative += share.percent;
                SizeEntry {
                    size_bytes: share.size_bytes,
                    cumulative_percent: cumulative,
                    random_slots: region_size.saturating_sub(share.size_bytes) / alignment_bytes
                        + 1,
                }
            })
            .collect();
        let start_share = region_size / worker_count.max(1) as u64 * worker_index as u64;
        let first_sequential = region_start + start_share / alignment_bytes * alignment_bytes;
        IoPlanner {
            rng: fastrand::Rng::with_seed(worker_seed(workload.seed, worker_index)),
            sizes,
            read_percent: workload.read_percent as u32,
            random_percent: workload.random_percent as u32,
            alignment_bytes,
            region_start,
            region_end: region_start + region_size,
            next_sequential: first_sequential,
        }
    }

    /// The next I/O.
    #[inline]
    pub fn next_io(&mut self) -> PlannedIo {
        let entry = if self.sizes.len() == 1 {
            self.sizes[0]
        } else {
            let draw = self.rng.u32(0..100);
            *self
                .sizes
                .iter()
                .find(|entry| draw < entry.cumulative_percent)
                .unwrap_or(&self.sizes[self.sizes.len() - 1])
        };
        let direction = match self.read_percent {
            100 => Direction::Read,
            0 => Direction::Write,
            percent => {
                if self.rng.u32(0..100) < percent {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
        };
        let random = match self.random_percent {
            100 => true,
            0 => false,
            percent => self.rng.u32(0..100) < percent,
        };
        let offset = if random {
            self.region_start + self.rng.u64(0..entry.random_slots) * self.alignment_bytes
        } else if self.next_sequential + entry.size_bytes > self.region_end {
            self.region_start
        } else {
            self.next_sequential
        };
        self.next_sequential = offset + entry.size_bytes;
        PlannedIo {
            direction,
            offset,
            length: entry.size_bytes as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::suite::base_workload;
    use crate::workload::{BlockSizeMix, Workload};

    fn workload(read: u8, random: u8, sizes: &str) -> Workload {
        Workload {
            read_percent: read,
            random_percent: random,
            block_sizes: BlockSizeMix::parse(sizes).unwrap(),
            alignment_bytes: 4096,
            ..base_workload()
        }
    }

    #[test]
    fn sequential_ios_follow_each_other_and_wrap() {
        let mut planner = IoPlanner::new(&workload(100, 0, "4k"), 8192, 16384, 0, 1);
        let offsets: Vec<u64> = (0..6).map(|_| planner.next_io().offset).collect();
        assert_eq!(offsets, [8192, 12288, 16384, 20480, 8192, 12288]);
    }

    #[test]
    fn random_ios_stay_aligned_inside_the_region() {
        let mut planner =
            IoPlanner::new(&workload(50, 100, "4k/50,64k/50"), 1 << 20, 1 << 20, 0, 1);
        for _ in 0..10_000 {
            let io = planner.next_io();
            assert_eq!(io.offset % 4096, 0);
            assert!(io.offset >= 1 << 20 && io.offset + io.length as u64 <= 2 << 20);
        }
    }

    #[test]
    fn mixes_hold_their_shares() {
        let mut planner =
            IoPlanner::new(&workload(80, 30, "512/10,4k/60,64k/30"), 0, 1 << 30, 0, 1);
        let total = 100_000;
        let (mut reads, mut small, mut random) = (0, 0, 0);
        let mut previous_end = 0;
        for _ in 0..total {
            let io = planner.next_io();
            reads += (io.direction == Direction::Read) as u32;
            small += (io.length == 512) as u32;
            random += (io.offset != previous_end) as u32;
            previous_end = io.offset + io.length as u64;
        }
        let share = |count: u32| count as f64 / total as f64 * 100.0;
        assert!((share(reads) - 80.0).abs() < 1.0, "{}", share(reads));
        assert!((share(small) - 10.0).abs() < 1.0, "{}", share(small));
        assert!((share(random) - 30.0).abs() < 1.0, "{}", share(random));
    }

    #[test]
    fn the_same_seed_gives_the_same_offsets() {
        let w = workload(70, 100, "4k");
        let first: Vec<PlannedIo> = {
            let mut p = IoPlanner::new(&w, 0, 1 << 30, 1, 2);
            (0..100).map(|_| p.next_io()).collect()
        };
        let mut again = IoPlanner::new(&w, 0, 1 << 30, 1, 2);
        assert!(first.iter().all(|io| *io == again.next_io()));
        let mut other_seed = IoPlanner::new(&Workload { seed: 9, ..w }, 0, 1 << 30, 1, 2);
        assert!(first.iter().any(|io| *io != other_seed.next_io()));
    }

    #[test]
    fn sequential_workers_start_spread_over_the_region() {
        let w = workload(100, 0, "4k");
        let starts: Vec<u64> = (0..4)
            .map(|i| IoPlanner::new(&w, 0, 1 << 20, i, 4).next_io().offset)
            .collect();
        assert_eq!(starts, [0, 262144, 524288, 786432]);
    }
}
