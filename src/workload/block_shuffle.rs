//! A shuffled order of the blocks `0..blocks`: every block once, in an order that looks drawn
//! at random, computed from a counter and a few keys instead of stored — so a pass over a
//! 1 TiB region takes no more memory than a small one.
//!
//! The order is a keyed permutation of `0..2^bits` (the smallest power of two holding every
//! block), walked from 0 up, with the values past the last block skipped: less than one skip
//! per block on average. The permutation is a Feistel network: the counter's bits are split
//! into a high and a low half, and each of six rounds replaces one half by itself XORed with a
//! keyed hash of the other (a multiply-shift hash, one multiplication). Each round can be
//! undone, so the network is a bijection whatever the keys; new keys give a new order.
//!
//! ```
//! use iopath::workload::block_shuffle::BlockShuffle;
//! let mut rng = fastrand::Rng::with_seed(7);
//! let mut shuffle = BlockShuffle::new(10);
//! shuffle.restart(&mut rng);
//! let mut order: Vec<u64> = std::iter::from_fn(|| shuffle.next_block()).collect();
//! assert_ne!(order, (0..10).collect::<Vec<u64>>());
//! order.sort();
//! assert_eq!(order, (0..10).collect::<Vec<u64>>());
//! ```

/// Rounds of the Feistel network (three on each half).
const ROUNDS: usize = 6;

/// A shuffled pass over `0..blocks` (see the module documentation).
#[derive(Clone, Debug)]
pub struct BlockShuffle {
    blocks: u64,
    /// The next counter value to permute.
    counter: u64,
    /// Counter values in a pass: `2^(high_bits + low_bits)`.
    counter_end: u64,
    high_bits: u32,
    low_bits: u32,
    /// XORed into a round's input.
    keys: [u64; ROUNDS],
    /// Odd multipliers of each round's hash.
    multipliers: [u64; ROUNDS],
}

impl BlockShuffle {
    /// A shuffle of `blocks` (at least 1) blocks, with every pass done: call
    /// [`BlockShuffle::restart`] to key the first.
    pub fn new(blocks: u64) -> Self {
        let blocks = blocks.max(1);
        let bits = u64::BITS - (blocks - 1).leading_zeros();
        let high_bits = bits / 2;
        BlockShuffle {
            blocks,
            counter: 1 << bits,
            counter_end: 1 << bits,
            high_bits,
            low_bits: bits - high_bits,
            keys: [0; ROUNDS],
            multipliers: [1; ROUNDS],
        }
    }

    /// Starts a new pass in a new order, keyed from `rng`.
    pub fn restart(&mut self, rng: &mut fastrand::Rng) {
        for round in 0..ROUNDS {
            self.keys[round] = rng.u64(..);
            self.multipliers[round] = rng.u64(..) | 1;
        }
        self.counter = 0;
    }

    /// The next block of this pass; `None` once every block was given.
    #[inline]
    pub fn next_block(&mut self) -> Option<u64> {
        while self.counter < self.counter_end {
            let block = self.permute(self.counter);
            self.counter += 1;
            if block < self.blocks {
                return Some(block);
            }
        }
        None
    }

    /// The keyed bijection of `0..counter_end`.
    #[inline]
    fn permute(&self, value: u64) -> u64 {
        let low_mask = (1u64 << self.low_bits) - 1;
        let mut high = value >> self.low_bits;
        let mut low = value & low_mask;
        for round in 0..ROUNDS {
            if round % 2 == 0 {
                low ^= self.round_hash(round, high, self.low_bits);
            } else {
                high ^= self.round_hash(round, low, self.high_bits);
            }
        }
        (high << self.low_bits) | low
    }

    /// The top `bits` bits of round `round`'s keyed multiply-shift hash of `half`.
    #[inline]
    fn round_hash(&self, round: usize, half: u64, bits: u32) -> u64 {
        let mut mixed = (half ^ self.keys[round]).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        mixed ^= mixed >> 31;
        let product = mixed.wrapping_mul(self.multipliers[round]);
        product.checked_shr(u64::BITS - bits).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_comes_once_per_pass_for_any_count() {
        let mut rng = fastrand::Rng::with_seed(3);
        for blocks in [1u64, 2, 3, 4, 5, 255, 256, 257, 1000, 4096, 70_001] {
            let mut shuffle = BlockShuffle::new(blocks);
            assert_eq!(
                shuffle.next_block(),
                None,
                "{blocks}: no pass before a restart"
            );
            for _ in 0..2 {
                shuffle.restart(&mut rng);
                let mut seen = vec![false; blocks as usize];
                while let Some(block) = shuffle.next_block() {
                    assert!(!seen[block as usize], "{blocks}: block {block} twice");
                    seen[block as usize] = true;
                }
                assert!(seen.iter().all(|&was| was), "{blocks}: a block missing");
            }
        }
    }

    #[test]
    fn new_keys_give_a_new_order() {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut shuffle = BlockShuffle::new(256);
        let mut pass = || {
            shuffle.restart(&mut rng);
            std::iter::from_fn(|| shuffle.next_block()).collect::<Vec<u64>>()
        };
        let (first, second) = (pass(), pass());
        assert_ne!(first, second);
        let same_place = first.iter().zip(&second).filter(|(a, b)| a == b).count();
        assert!(same_place < 8, "{same_place} blocks at the same place");
    }
}
