//! Random offsets under the random map: the order in which a pass visits the blocks of a
//! region, and the map of the blocks it visited.
//!
//! Each random I/O starts at the next block of the pass's order that is still free and runs
//! over the free blocks after it, up to its length (a run stops at a visited block or the
//! region's end). Blocks a run covered are skipped when their turn in the order comes; once
//! every block was visited, the map is cleared and a new pass begins. The order is a
//! [`BlockShuffle`] (new keys each pass: as random as a shuffle) or, for fio's
//! `random_generator=lfsr`, an [`Lfsr`] (the same order each pass).
//!
//! Where I/Os are longer than a block (a block-size mix, `bsrange`), where a run starts decides
//! how much the map shortens it, and fio's rule is kept there ([`RandomPass::with_drawn_starts`]):
//! a block is drawn from the whole region (uniformly, or the register's next), and when it was
//! visited the run starts at the next free block up. Runs then start at the beginning of free
//! stretches more often than a walk over the free blocks would make them, and are longer:
//! `bsrange=4k-512k` averages 172 KiB under fio's map on any region, where a start at a free
//! block taken in a shuffled order averages about 71 KiB.
//!
//! ```
//! use iopath::result::RandomOrder;
//! use iopath::workload::random_pass::RandomPass;
//! let mut rng = fastrand::Rng::with_seed(1);
//! let mut pass = RandomPass::new(16, 4096, RandomOrder::Shuffled);
//! let mut covered = 0;
//! while covered < 16 {
//!     let run = pass.next_run(2, &mut rng);
//!     covered += run.blocks;
//!     assert!(!run.new_pass);
//! }
//! assert!(pass.next_run(1, &mut rng).new_pass);
//! ```

use super::block_shuffle::BlockShuffle;
use super::lfsr::Lfsr;
use super::random_map::RandomMap;
use crate::result::RandomOrder;

/// The order of a pass.
#[derive(Clone, Debug)]
enum PassOrder {
    /// A shuffle keyed anew each pass.
    Shuffled(BlockShuffle),
    /// A register, seeded at the first pass.
    Lfsr(Option<Lfsr>),
}

/// Where a random I/O goes under the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedRun {
    /// Its first block.
    pub block: u64,
    /// Blocks it covers (at least 1).
    pub blocks: u64,
    /// Whether the map was full and this I/O began a new pass.
    pub new_pass: bool,
}

/// The pass over a region's blocks (see the module documentation).
#[derive(Clone, Debug)]
pub struct RandomPass {
    map: RandomMap,
    unit_bytes: u64,
    order: PassOrder,
    /// Whether a pass was begun (the first is keyed by the first draw, from the generator of
    /// the file it serves).
    begun: bool,
    /// Whether a run starts at a drawn block or the next free one up (fio's rule) instead of
    /// at the next free block of the order.
    drawn_starts: bool,
}

impl RandomPass {
    /// A pass over `blocks` blocks of `unit_bytes` in `order`.
    pub fn new(blocks: u64, unit_bytes: u64, order: RandomOrder) -> Self {
        let map = RandomMap::new(blocks);
        let order = match order {
            RandomOrder::Shuffled => PassOrder::Shuffled(BlockShuffle::new(map.blocks())),
            RandomOrder::Lfsr => PassOrder::Lfsr(None),
        };
        RandomPass {
            map,
            unit_bytes,
            order,
            begun: false,
            drawn_starts: false,
        }
    }

    /// The same pass with fio's start rule for runs longer than a block: each run starts at a
    /// block drawn from the whole region (`random_generator=lfsr`: the register's next block)
    /// or, when that one was visited, at the next free block up, wrapping at the end.
    pub fn with_drawn_starts(mut self) -> Self {
        self.drawn_starts = true;
        self
    }

    /// The block size of the map, bytes.
    pub fn unit_bytes(&self) -> u64 {
        self.unit_bytes
    }

    /// The next random I/O of up to `blocks` blocks.
    #[inline]
    pub fn next_run(&mut self, blocks: u64, rng: &mut fastrand::Rng) -> MappedRun {
        let new_pass = self.begun && self.map.is_full();
        if new_pass || !self.begun {
            self.map.reset();
            self.restart_order(rng);
            self.begun = true;
        }
        let block = if self.drawn_starts {
            let drawn = match self.order {
                PassOrder::Shuffled(_) => rng.u64(0..self.map.blocks()),
                PassOrder::Lfsr(_) => self.next_in_order().unwrap_or(0),
            };
            self.map.next_free(drawn).unwrap_or(0)
        } else {
            self.next_free_in_order()
        };
        MappedRun {
            block,
            blocks: self.map.take_run(block, blocks).max(1),
            new_pass,
        }
    }

    /// The next block of the order that is still free.
    fn next_free_in_order(&mut self) -> u64 {
        loop {
            match self.next_in_order() {
                Some(block) if self.map.is_free(block) => break block,
                Some(_) => continue,
                // Every block of the order came and one is still free: only a map that
                // disagrees with its order gets here; take the first free block.
                None => break self.map.next_free(0).unwrap_or(0),
            }
        }
    }

    fn next_in_order(&mut self) -> Option<u64> {
        match &mut self.order {
            PassOrder::Shuffled(shuffle) => shuffle.next_block(),
            PassOrder::Lfsr(lfsr) => lfsr.as_mut().and_then(Lfsr::next_block),
        }
    }

    fn restart_order(&mut self, rng: &mut fastrand::Rng) {
        match &mut self.order {
            PassOrder::Shuffled(shuffle) => shuffle.restart(rng),
            PassOrder::Lfsr(Some(lfsr)) => lfsr.restart(),
            PassOrder::Lfsr(empty) => *empty = Some(Lfsr::new(self.map.blocks(), rng.u64(..))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_each_block_once_per_pass_in_either_order() {
        for order in [RandomOrder::Shuffled, RandomOrder::Lfsr] {
            let mut rng = fastrand::Rng::with_seed(5);
            let mut pass = RandomPass::new(1000, 512, order);
            for round in 0..3 {
                let mut covered = vec![false; 1000];
                let mut total = 0;
                while total < 1000 {
                    let run = pass.next_run(1 + rng.u64(0..16), &mut rng);
                    assert_eq!(run.new_pass, round > 0 && total == 0, "{order:?}");
                    for block in run.block..run.block + run.blocks {
                        assert!(!covered[block as usize], "{order:?}: {block} twice");
                        covered[block as usize] = true;
                    }
                    total += run.blocks;
                }
            }
        }
    }
}
