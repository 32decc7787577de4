//! The blocks written since the last read-back of a pass: one bit per interval of each
//! region of a [`Ledger`], sized before the clock starts, and the reads that check them — in
//! offset order, runs of consecutive marked intervals at most a buffer long — handed out one
//! at a time without allocating.
//!
//! ```
//! use iopath::verify::ledger::Ledger;
//! use iopath::verify::pass_blocks::{PassBlocks, PassRead};
//! let ledger = Ledger::new(4096, &[(0, 1 << 20)]).unwrap();
//! let mut pass = PassBlocks::new(&ledger, 8192);
//! pass.mark(&ledger, 0, 12288, 8192);
//! pass.mark(&ledger, 0, 0, 4096);
//! assert_eq!(pass.next_read(), Some(PassRead { file: 0, offset: 0, length: 4096 }));
//! assert_eq!(pass.next_read(), Some(PassRead { file: 0, offset: 12288, length: 8192 }));
//! assert_eq!(pass.next_read(), None);
//! assert!(pass.is_empty());
//! ```

use super::ledger::Ledger;

/// One read of a pass's read-back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassRead {
    /// The worker's file (its region in the ledger).
    pub file: u32,
    /// First byte.
    pub offset: u64,
    /// Bytes: whole intervals, at most a buffer.
    pub length: u32,
}

/// The marked intervals of one region.
#[derive(Clone, Debug)]
struct RegionBits {
    start: u64,
    blocks: usize,
    words: Vec<u64>,
}

/// The intervals written since the last read-back, and where the hand-out of their reads is.
#[derive(Clone, Debug)]
pub struct PassBlocks {
    interval: u64,
    /// Most intervals in one read (a buffer's worth, at least one).
    per_read: usize,
    regions: Vec<RegionBits>,
    /// Intervals marked and not yet handed out.
    marked: u64,
    /// The region and interval the hand-out goes on from.
    cursor: (usize, usize),
}

impl PassBlocks {
    /// No interval marked, over the regions of `ledger`; reads at most `buffer_bytes` long.
    pub fn new(ledger: &Ledger, buffer_bytes: usize) -> Self {
        PassBlocks {
            interval: ledger.interval,
            per_read: (buffer_bytes as u64 / ledger.interval).max(1) as usize,
            regions: ledger
                .regions
                .iter()
                .map(|region| RegionBits {
                    start: region.start,
                    blocks: region.generations.len(),
                    words: vec![0; region.generations.len().div_ceil(64)],
                })
                .collect(),
            marked: 0,
            cursor: (0, 0),
        }
    }

    /// Marks the intervals a write of `length` bytes at `offset` of `file` covers, as
    /// `ledger` records them.
    pub fn mark(&mut self, ledger: &Ledger, file: u32, offset: u64, length: u64) {
        let Some(blocks) = ledger.blocks_of(file, offset, length) else {
            return;
        };
        let Some(region) = self.regions.get_mut(file as usize) else {
            return;
        };
        for block in blocks {
            let (word, bit) = (block / 64, 1u64 << (block % 64));
            if region.words[word] & bit == 0 {
                region.words[word] |= bit;
                self.marked += 1;
            }
        }
    }

    /// Whether no interval waits to be read back.
    pub fn is_empty(&self) -> bool {
        self.marked == 0
    }

    /// Intervals waiting to be read back.
    pub fn marked(&self) -> u64 {
        self.marked
    }

    /// Starts the hand-out over from the first region's start.
    pub fn rewind(&mut self) {
        self.cursor = (0, 0);
    }

    /// The next read from the cursor on: the first marked interval and the marked ones that
    /// follow it, up to a buffer; they are unmarked. `None` when none is left past the cursor.
    pub fn next_read(&mut self) -> Option<PassRead> {
        while self.marked > 0 {
            let (region_index, from) = self.cursor;
            let region = self.regions.get_mut(region_index)?;
            let Some(first) = next_marked(region, from) else {
                self.cursor = (region_index + 1, 0);
                continue;
            };
            let mut count = 0;
            while count < self.per_read && first + count < region.blocks {
                let block = first + count;
                let (word, bit) = (block / 64, 1u64 << (block % 64));
                if region.words[word] & bit == 0 {
                    break;
                }
                region.words[word] &= !bit;
                count += 1;
            }
            self.marked -= count as u64;
            self.cursor = (region_index, first + count);
            return Some(PassRead {
                file: region_index as u32,
                offset: region.start + first as u64 * self.interval,
                length: (count as u64 * self.interval) as u32,
            });
        }
        None
    }
}

/// The first marked interval of `region` at or after `from`.
fn next_marked(region: &RegionBits, from: usize) -> Option<usize> {
    let mut word = from / 64;
    let mut bits = *region.words.get(word)? & (u64::MAX << (from % 64));
    loop {
        if bits != 0 {
            let block = word * 64 + bits.trailing_zeros() as usize;
            return (block < region.blocks).then_some(block);
        }
        word += 1;
        bits = *region.words.get(word)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cover_every_marked_interval_once_in_order_and_at_most_a_buffer_long() {
        let interval = 512u64;
        let regions = [(4096, 300 * interval), (0, 70 * interval)];
        let ledger = Ledger::new(interval, &regions).unwrap();
        let mut rng = fastrand::Rng::with_seed(9);
        for buffer_bytes in [512usize, 4096, 65536] {
            let mut pass = PassBlocks::new(&ledger, buffer_bytes);
            let mut expected = vec![vec![false; 300], vec![false; 70]];
            for _ in 0..60 {
                let file = rng.u32(0..2);
                let offset = rng.u64(0..320 * interval);
                let length = rng.u64(1..20 * interval);
                pass.mark(&ledger, file, offset, length);
                if let Some(blocks) = ledger.blocks_of(file, offset, length) {
                    expected[file as usize][blocks].fill(true);
                }
            }
            let wanted: u64 = expected.iter().flatten().filter(|b| **b).count() as u64;
            assert_eq!(pass.marked(), wanted);
            let mut seen = vec![vec![false; 300], vec![false; 70]];
            let mut last = (0u32, 0u64);
            while let Some(read) = pass.next_read() {
                assert!(read.length as usize <= buffer_bytes.max(512));
                assert!((read.file, read.offset) >= last, "in order");
                last = (read.file, read.offset + u64::from(read.length));
                let start = regions[read.file as usize].0;
                let first = ((read.offset - start) / interval) as usize;
                let count = (u64::from(read.length) / interval) as usize;
                for block in &mut seen[read.file as usize][first..first + count] {
                    assert!(!*block, "read twice");
                    *block = true;
                }
            }
            assert_eq!(seen, expected);
            assert!(pass.is_empty());
            // Marked again after the hand-out: found from the start once rewound.
            pass.mark(&ledger, 0, 4096, 512);
            assert_eq!(pass.next_read(), None);
            pass.rewind();
            assert_eq!(
                pass.next_read(),
                Some(PassRead {
                    file: 0,
                    offset: 4096,
                    length: 512
                })
            );
        }
    }
}
