//! A map of the blocks of a region that random I/O has visited in the current pass (fio's
//! random map): one bit per block, plus one bit per 64-block word saying the word is full, so
//! that the next free block is found by skipping full words 64 at a time.
//!
//! Memory: one bit per block and one per 64 blocks (a 1 TiB region of 4 KiB blocks: 32 MiB).
//! Sized before the clock starts; nothing allocates afterwards.
//!
//! ```
//! use iopath::workload::random_map::RandomMap;
//! let mut map = RandomMap::new(10);
//! assert_eq!(map.take_run(3, 4), 4); // blocks 3..7
//! assert_eq!(map.take_run(8, 4), 2); // blocks 8 and 9: the region ends
//! assert_eq!(map.next_free(4), Some(7));
//! assert_eq!(map.next_free(9), Some(0)); // wraps to the start
//! ```

/// Visited blocks of one region (see the module documentation).
#[derive(Clone, Debug)]
pub struct RandomMap {
    blocks: u64,
    used: u64,
    /// Bit `b % 64` of word `b / 64`: block `b` was visited. Bits past the end are set.
    words: Vec<u64>,
    /// Bit `w % 64` of summary word `w / 64`: word `w` is full. Bits past the end are set.
    full: Vec<u64>,
}

/// Bytes a map of `blocks` blocks takes.
pub fn map_bytes(blocks: u64) -> u64 {
    let words = blocks.div_ceil(64);
    (words + words.div_ceil(64)) * 8
}

impl RandomMap {
    /// A map of `blocks` (at least 1) unvisited blocks.
    pub fn new(blocks: u64) -> Self {
        let blocks = blocks.max(1);
        let words = blocks.div_ceil(64) as usize;
        let mut map = RandomMap {
            blocks,
            used: 0,
            words: vec![0; words],
            full: vec![0; words.div_ceil(64)],
        };
        // Zeroed already: only the bits past the end are set.
        map.mark_past_the_end();
        map
    }

    /// Blocks in the map.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Forgets every visit: a new pass.
    pub fn reset(&mut self) {
        self.words.fill(0);
        self.full.fill(0);
        self.used = 0;
        self.mark_past_the_end();
    }

    /// Sets the bits of the blocks and words past the end, so that they are never found free.
    fn mark_past_the_end(&mut self) {
        let tail = self.blocks % 64;
        if tail != 0 {
            let last = self.words.len() - 1;
            self.words[last] = !0u64 << tail;
        }
        let word_tail = self.words.len() % 64;
        if word_tail != 0 {
            let last = self.full.len() - 1;
            self.full[last] = !0u64 << word_tail;
        }
    }

    /// Whether every block was visited.
    pub fn is_full(&self) -> bool {
        self.used >= self.blocks
    }

    /// Whether `block` was not visited in this pass.
    #[inline]
    pub fn is_free(&self, block: u64) -> bool {
        block < self.blocks && self.words[(block / 64) as usize] & (1 << (block % 64)) == 0
    }

    /// The first unvisited block at or after `block`, wrapping to the start; `None` when all
    /// were visited.
    pub fn next_free(&self, block: u64) -> Option<u64> {
        if self.is_full() {
            return None;
        }
        let block = if block >= self.blocks { 0 } else { block };
        self.free_from(block)
            .or_else(|| self.free_from(0))
            .filter(|&free| free < self.blocks)
    }

    /// The first free block at or after `block`, without wrapping.
    fn free_from(&self, block: u64) -> Option<u64> {
        let word = (block / 64) as usize;
        let free_bits = !self.words[word] & (!0u64 << (block % 64));
        if free_bits != 0 {
            return Some(word as u64 * 64 + u64::from(free_bits.trailing_zeros()));
        }
        // The next word that is not full, 64 words per summary word.
        let next = word + 1;
        let mut summary = next / 64;
        let mut mask = if next.is_multiple_of(64) {
            !0u64
        } else {
            !0u64 << (next % 64)
        };
        while summary < self.full.len() {
            let open = !self.full[summary] & mask;
            if open != 0 {
                let word = summary * 64 + open.trailing_zeros() as usize;
                let bits = !self.words[word];
                return Some(word as u64 * 64 + u64::from(bits.trailing_zeros()));
            }
            summary += 1;
            mask = !0u64;
        }
        None
    }

    /// Visits up to `most` blocks from `block` on, stopping at the first visited one or the
    /// end of the region; returns how many were visited now (0 when `block` was visited).
    pub fn take_run(&mut self, block: u64, most: u64) -> u64 {
        let mut taken = 0;
        let mut current = block;
        while taken < most && self.is_free(current) {
            let word = (current / 64) as usize;
            self.words[word] |= 1 << (current % 64);
            if self.words[word] == !0u64 {
                self.full[word / 64] |= 1 << (word % 64);
            }
            taken += 1;
            current += 1;
        }
        self.used += taken;
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_is_found_once_then_the_map_is_full() {
        for blocks in [1u64, 63, 64, 65, 4095, 4096, 4097, 70_000] {
            let mut map = RandomMap::new(blocks);
            let mut rng = fastrand::Rng::with_seed(blocks);
            let mut seen = vec![false; blocks as usize];
            for _ in 0..blocks {
                let block = map.next_free(rng.u64(0..blocks)).expect("a free block");
                assert!(!seen[block as usize], "{blocks}: block {block} twice");
                seen[block as usize] = true;
                assert_eq!(map.take_run(block, 1), 1);
            }
            assert!(map.is_full());
            assert_eq!(map.next_free(0), None);
            map.reset();
            assert_eq!(map.next_free(blocks - 1), Some(blocks - 1));
        }
    }

    #[test]
    fn runs_stop_at_visited_blocks_and_at_the_end() {
        let mut map = RandomMap::new(200);
        assert_eq!(map.take_run(100, 1), 1);
        assert_eq!(map.take_run(90, 16), 10, "stops before block 100");
        assert_eq!(map.take_run(195, 16), 5, "stops at the end");
        assert_eq!(map.take_run(100, 4), 0);
        assert_eq!(map.next_free(90), Some(101));
        assert_eq!(map_bytes(200), 4 * 8 + 8);
    }

    #[test]
    fn full_words_are_skipped() {
        let mut map = RandomMap::new(64 * 200);
        assert_eq!(map.take_run(0, 64 * 150), 64 * 150);
        assert_eq!(map.next_free(5), Some(64 * 150));
        assert_eq!(map.take_run(64 * 150, 64 * 50), 64 * 50);
        assert!(map.is_full());
    }
}
