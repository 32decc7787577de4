//! Turns a [`Workload`] into the next I/O of one worker: direction, offset, length.
//!
//! Each I/O first draws its line of the access specification (size, read percentage, random
//! percentage, alignment), then its direction from the line's read percentage, then whether it
//! is random (probability = the line's random percentage, Iometer's meaning):
//! a random I/O starts at a uniformly drawn multiple of the alignment inside the region; any
//! other I/O starts right after the previous one, wrapping to the region start at its end.
//! Every draw comes from the worker's own generator seeded from the workload seed and the worker
//! index, so the same seed gives the same I/O sequence.

use super::distribution::SlotSampler;
use crate::result::{Direction, Workload};

/// One planned I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedIo {
    /// Read or write.
    pub direction: Direction,
    /// Byte offset in the target.
    pub offset: u64,
    /// Length in bytes.
    pub length: u32,
    /// Pause to keep after issuing this I/O before the next one, ns (burst delay, think time).
    pub pause_after_ns: u64,
}

#[derive(Clone, Debug)]
struct LineState {
    size_bytes: u64,
    cumulative_weight: u64,
    read_percent: u32,
    random_percent: u32,
    alignment_bytes: u64,
    sampler: SlotSampler,
    burst_length: u32,
    delay_ns: u64,
    issued_in_burst: u32,
}

/// The offset generator of one worker.
#[derive(Clone, Debug)]
pub struct IoPlanner {
    rng: fastrand::Rng,
    lines: Vec<LineState>,
    total_weight: u64,
    region_start: u64,
    region_end: u64,
    next_sequential: u64,
    think_time_ns: u64,
    think_time_blocks: u32,
    issued_since_think: u32,
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
        let mut cumulative = 0u64;
        let lines: Vec<LineState> = workload
            .access
            .active_lines()
            .map(|line| {
                cumulative += line.weight as u64;
                let alignment_bytes = line.alignment_bytes.max(1);
                let slots = region_size.saturating_sub(line.size_bytes) / alignment_bytes + 1;
                LineState {
                    size_bytes: line.size_bytes,
                    cumulative_weight: cumulative,
                    read_percent: line.read_percent as u32,
                    random_percent: line.random_percent as u32,
                    alignment_bytes,
                    sampler: SlotSampler::new(&workload.distribution, slots),
                    burst_length: line.burst_length.max(1),
                    delay_ns: line.delay_ns,
                    issued_in_burst: 0,
                }
            })
            .collect();
        let alignment = lines.first().map_or(1, |l| l.alignment_bytes);
        let start_share = region_size / worker_count.max(1) as u64 * worker_index as u64;
        let first_sequential = region_start + start_share / alignment * alignment;
        IoPlanner {
            rng: fastrand::Rng::with_seed(worker_seed(workload.seed, worker_index)),
            lines,
            total_weight: cumulative.max(1),
            region_start,
            region_end: region_start + region_size,
            next_sequential: first_sequential,
            think_time_ns: workload.think_time_ns,
            think_time_blocks: workload.think_time_blocks.max(1),
            issued_since_think: 0,
        }
    }

    /// Length of the smallest I/O this planner issues, bytes.
    pub fn smallest_io_bytes(&self) -> u64 {
        self.lines
            .iter()
            .map(|line| line.size_bytes)
            .min()
            .unwrap_or(1)
    }

    /// The next I/O.
    #[inline]
    pub fn next_io(&mut self) -> PlannedIo {
        let index = if self.lines.len() == 1 {
            0
        } else {
            let draw = self.rng.u64(0..self.total_weight);
            self.lines
                .iter()
                .position(|line| draw < line.cumulative_weight)
                .unwrap_or(self.lines.len() - 1)
        };
        let line = &mut self.lines[index];
        let direction = match line.read_percent {
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
        let random = match line.random_percent {
            100 => true,
            0 => false,
            percent => self.rng.u32(0..100) < percent,
        };
        let offset = if random {
            self.region_start + line.sampler.sample(&mut self.rng) * line.alignment_bytes
        } else if self.next_sequential + line.size_bytes > self.region_end {
            self.region_start
        } else {
            self.next_sequential
        };
        self.next_sequential = offset + line.size_bytes;
        let mut pause_after_ns = 0;
        if line.delay_ns > 0 {
            line.issued_in_burst += 1;
            if line.issued_in_burst >= line.burst_length {
                line.issued_in_burst = 0;
                pause_after_ns = line.delay_ns;
            }
        }
        if self.think_time_ns > 0 {
            self.issued_since_think += 1;
            if self.issued_since_think >= self.think_time_blocks {
                self.issued_since_think = 0;
                pause_after_ns = pause_after_ns.max(self.think_time_ns);
            }
        }
        PlannedIo {
            direction,
            offset,
            length: line.size_bytes as u32,
            pause_after_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{AccessSpec, Workload};
    use crate::workload::BlockSizeMix;
    use crate::workload::suite::base_workload;

    fn workload(read: u8, random: u8, sizes: &str) -> Workload {
        let mut workload = base_workload();
        workload.set_simple(&BlockSizeMix::parse(sizes).unwrap(), read, random, 4096);
        workload
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

    #[test]
    fn iometer_lines_choose_size_direction_and_randomness_together() {
        let mut workload = base_workload();
        workload.access = AccessSpec::parse("64k:30:100:100, 512:50:0:0, 1k:20:50:0").unwrap();
        let mut planner = IoPlanner::new(&workload, 0, 1 << 30, 0, 1);
        let total = 100_000;
        let mut counts = std::collections::HashMap::new();
        for _ in 0..total {
            let io = planner.next_io();
            *counts.entry((io.length, io.direction)).or_insert(0u32) += 1;
        }
        let share = |length: u32, direction| {
            counts.get(&(length, direction)).copied().unwrap_or(0) as f64 / total as f64 * 100.0
        };
        assert!((share(65536, Direction::Read) - 30.0).abs() < 1.0);
        assert_eq!(share(65536, Direction::Write), 0.0, "64k is only read");
        assert_eq!(share(512, Direction::Read), 0.0, "512 is only written");
        assert!((share(1024, Direction::Read) - 10.0).abs() < 1.0);
        assert!((share(1024, Direction::Write) - 10.0).abs() < 1.0);
    }

    #[test]
    fn bursts_and_think_time_pause() {
        let mut workload = base_workload();
        workload.access = AccessSpec::parse("4k:1:100:0:4k:3:2").unwrap();
        let mut planner = IoPlanner::new(&workload, 0, 1 << 20, 0, 1);
        let pauses: Vec<u64> = (0..6).map(|_| planner.next_io().pause_after_ns).collect();
        assert_eq!(pauses, [0, 0, 2_000_000, 0, 0, 2_000_000]);
        let mut workload = base_workload();
        workload.think_time_ns = 500;
        workload.think_time_blocks = 2;
        let mut planner = IoPlanner::new(&workload, 0, 1 << 20, 0, 1);
        let pauses: Vec<u64> = (0..4).map(|_| planner.next_io().pause_after_ns).collect();
        assert_eq!(pauses, [0, 500, 0, 500]);
    }
}
