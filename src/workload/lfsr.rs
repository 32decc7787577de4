//! A linear-feedback shift register order of the blocks `0..blocks` (fio's
//! `random_generator=lfsr`): every block once per pass, from a few bytes of state.
//!
//! The register has the smallest width `w ≥ 3` with `2^w > blocks` and the published taps of
//! a maximal-length register of that width, so its states run through every `w`-bit value but
//! one before they repeat. It is the XNOR form of a Galois register (fio's): each step shifts
//! right, sets the top bit, and flips the tap bits when the bit shifted out was 0 — so the
//! state that never comes is all ones, and 0 is an ordinary state. States past the last block
//! are skipped; each pass starts from the same state and so repeats the same order, as fio's
//! does.
//!
//! ```
//! use iopath::workload::lfsr::Lfsr;
//! let mut lfsr = Lfsr::new(256, 1);
//! let mut order: Vec<u64> = std::iter::from_fn(|| lfsr.next_block()).collect();
//! order.sort();
//! assert_eq!(order, (0..256).collect::<Vec<u64>>());
//! ```

/// Tap positions (1 = the lowest bit) of a maximal-length register of each width from 3 to
/// 63 bits, the width itself first (the widely published table fio uses too).
const TAPS: [&[u8]; 61] = [
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

/// An LFSR pass over `0..blocks` (see the module documentation).
#[derive(Clone, Debug)]
pub struct Lfsr {
    blocks: u64,
    /// The register.
    state: u64,
    /// The state each pass starts from.
    start: u64,
    /// Blocks given in this pass.
    given: u64,
    /// The register's top bit, set by every step.
    top_bit: u64,
    /// The tap bits, flipped by a step that shifts out a 0.
    tap_mask: u64,
}

impl Lfsr {
    /// A register over `blocks` blocks (at least 1, below 2^63) starting from the state `seed`
    /// gives (its low `w` bits; the one state that never comes, all ones, becomes 0).
    pub fn new(blocks: u64, seed: u64) -> Self {
        let blocks = blocks.clamp(1, 1 << 62);
        let width = (3..64).find(|width| 1u64 << width > blocks).unwrap_or(63);
        let taps = TAPS[width as usize - 3];
        let tap_mask = taps.iter().fold(0, |mask, tap| mask | 1u64 << (tap - 1));
        let all_ones = (1u64 << width) - 1;
        let start = match seed & all_ones {
            state if state == all_ones => 0,
            state => state,
        };
        Lfsr {
            blocks,
            state: start,
            start,
            given: 0,
            top_bit: 1 << (width - 1),
            tap_mask,
        }
    }

    /// Starts the pass again from its first state.
    pub fn restart(&mut self) {
        self.state = self.start;
        self.given = 0;
    }

    /// The next block of this pass; `None` once every block was given.
    #[inline]
    pub fn next_block(&mut self) -> Option<u64> {
        if self.given >= self.blocks {
            return None;
        }
        loop {
            self.step();
            if self.state < self.blocks {
                self.given += 1;
                return Some(self.state);
            }
        }
    }

    /// One step of the register.
    #[inline]
    fn step(&mut self) {
        let shifted = (self.state >> 1) | self.top_bit;
        self.state = if self.state & 1 == 0 {
            shifted ^ self.tap_mask
        } else {
            shifted
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_register_up_to_20_bits_has_the_longest_period() {
        for width in 3u32..=20 {
            let mut lfsr = Lfsr::new((1 << width) - 1, 0);
            let first = lfsr.state;
            let mut period = 0u64;
            loop {
                lfsr.step();
                period += 1;
                assert_ne!(lfsr.state, (1 << width) - 1, "{width} bits: all ones came");
                if lfsr.state == first {
                    break;
                }
            }
            assert_eq!(period, (1 << width) - 1, "{width} bits");
        }
    }

    #[test]
    fn every_block_comes_once_per_pass_and_passes_repeat() {
        for (blocks, seed) in [
            (1u64, 0u64),
            (2, 5),
            (7, 7),
            (8, 3),
            (256, 1),
            (1000, 99),
            (4097, 4096),
        ] {
            let mut lfsr = Lfsr::new(blocks, seed);
            let first: Vec<u64> = std::iter::from_fn(|| lfsr.next_block()).collect();
            let mut sorted = first.clone();
            sorted.sort();
            assert_eq!(sorted, (0..blocks).collect::<Vec<u64>>(), "{blocks}");
            lfsr.restart();
            let again: Vec<u64> = std::iter::from_fn(|| lfsr.next_block()).collect();
            assert_eq!(first, again, "{blocks}: the same order each pass");
        }
    }

    #[test]
    fn the_order_is_the_register_s_not_counting() {
        // Width 9 for 256 blocks, taps 9 and 5: from state 0, the first step gives the top
        // bit (256) XOR the taps (256 + 16): 16.
        let mut lfsr = Lfsr::new(256, 0);
        let order: Vec<u64> = (0..4).map(|_| lfsr.next_block().unwrap()).collect();
        let steps_up = order
            .windows(2)
            .filter(|pair| pair[1] == pair[0] + 1)
            .count();
        assert_eq!(steps_up, 0, "{order:?}");
        assert_eq!(order[0], 16);
    }
}
