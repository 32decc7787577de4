//! Which blocks a worker wrote, and with which generation: one `u32` per header interval of
//! each of its regions, sized before the clock starts (0: not written by this run).
//!
//! ```
//! use iopath::verify::ledger::Ledger;
//! let mut ledger = Ledger::new(4096, &[(0, 1 << 20)]).unwrap();
//! ledger.record(0, 8192, 8192, 5);
//! assert_eq!(ledger.generation(0, 12288), Some(5));
//! assert_eq!(ledger.generation(0, 0), None);
//! assert_eq!(ledger.written_blocks(), 2);
//! ```

use std::ops::Range;

/// Most intervals one worker may track (2^27: 512 MiB of table).
pub const MAX_TRACKED_BLOCKS: u64 = 1 << 27;

/// The written blocks of one region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionLedger {
    /// First byte of the region.
    pub start: u64,
    /// Generation of each interval (0: not written).
    pub generations: Vec<u32>,
}

/// The written blocks of every region (file) of a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ledger {
    /// Bytes of one interval.
    pub interval: u64,
    /// One per file of the worker, in its order.
    pub regions: Vec<RegionLedger>,
}

/// The regions are too large to track at this interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "verification would track {blocks} blocks in one worker (at most {MAX_TRACKED_BLOCKS}): \
     use a larger verify interval or a smaller region"
)]
pub struct TooManyBlocks {
    /// Intervals asked for.
    pub blocks: u64,
}

impl Ledger {
    /// An empty ledger of `(start, size)` regions cut into `interval`-byte blocks.
    pub fn new(interval: u64, regions: &[(u64, u64)]) -> Result<Ledger, TooManyBlocks> {
        let interval = interval.max(1);
        let blocks: u64 = regions.iter().map(|(_, size)| size / interval).sum();
        if blocks > MAX_TRACKED_BLOCKS {
            return Err(TooManyBlocks { blocks });
        }
        Ok(Ledger {
            interval,
            regions: regions
                .iter()
                .map(|&(start, size)| RegionLedger {
                    start,
                    generations: vec![0; (size / interval) as usize],
                })
                .collect(),
        })
    }

    fn index(&self, file: u32, offset: u64) -> Option<(usize, usize)> {
        let region = self.regions.get(file as usize)?;
        let index = offset.checked_sub(region.start)? / self.interval;
        ((index as usize) < region.generations.len()).then_some((file as usize, index as usize))
    }

    /// Records a write of `length` bytes at `offset` of `file` as generation `generation`:
    /// the interval of each of its steps `offset`, `offset + interval`, … that falls in the
    /// region, set in one slice.
    pub fn record(&mut self, file: u32, offset: u64, length: u64, generation: u32) {
        if let Some(blocks) = self.blocks_of(file, offset, length) {
            self.regions[file as usize].generations[blocks].fill(generation);
        }
    }

    /// The intervals of `file`'s region that a write of `length` bytes at `offset` marks (see
    /// [`Ledger::record`]), as indexes into its generations; `None` when it marks none.
    pub fn blocks_of(&self, file: u32, offset: u64, length: u64) -> Option<Range<usize>> {
        let interval = self.interval;
        let region = self.regions.get(file as usize)?;
        let end = offset + length;
        // The first step at or past the region's start.
        let first_at = match region.start.checked_sub(offset) {
            Some(before) if before > 0 => offset + before.div_ceil(interval) * interval,
            _ => offset,
        };
        if first_at >= end {
            return None;
        }
        let blocks = region.generations.len() as u64;
        let first = ((first_at - region.start) / interval).min(blocks);
        let last = (first + (end - first_at).div_ceil(interval)).min(blocks);
        (first < last).then_some(first as usize..last as usize)
    }

    /// The generation the interval at `offset` of `file` was last written with, if it was.
    pub fn generation(&self, file: u32, offset: u64) -> Option<u32> {
        let (file, index) = self.index(file, offset)?;
        Some(self.regions[file].generations[index]).filter(|g| *g != 0)
    }

    /// Intervals written.
    pub fn written_blocks(&self) -> u64 {
        self.regions
            .iter()
            .map(|r| r.generations.iter().filter(|g| **g != 0).count() as u64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write recorded one step at a time: the interval of `offset`, `offset + interval`, …
    /// below `offset + length`, where it falls in the region.
    fn record_step_by_step(ledger: &mut Ledger, file: u32, offset: u64, length: u64, value: u32) {
        let mut at = offset;
        while at < offset + length {
            if let Some((file, index)) = ledger.index(file, at) {
                ledger.regions[file].generations[index] = value;
            }
            at += ledger.interval;
        }
    }

    #[test]
    fn a_write_marks_the_intervals_its_steps_fall_in_even_unaligned_or_past_the_region() {
        let mut rng = fastrand::Rng::with_seed(3);
        for interval in [512u64, 4096, 1000] {
            let regions = [(8192, 40 * interval), (0, 7 * interval + 100)];
            let mut ledger = Ledger::new(interval, &regions).unwrap();
            let mut reference = ledger.clone();
            for generation in 1..2000 {
                let file = rng.u32(0..3);
                let offset = rng.u64(0..60 * interval);
                let length = rng.u64(0..12 * interval);
                ledger.record(file, offset, length, generation);
                record_step_by_step(&mut reference, file, offset, length, generation);
                assert_eq!(ledger, reference, "{file} {offset} {length} at {interval}");
            }
        }
    }
}
