//! What write buffers hold, and filling them: random bytes, zeros, a repeated pattern, or data
//! built to compress and deduplicate to a chosen share. Pure: it imports nothing of ours, so the
//! worker, verification, the targets' test files and remote files all fill bytes the same way
//! without going through an engine.
//!
//! A [`BufferFiller`] belongs to one worker. Every buffer is filled once before the clock starts
//! ([`BufferFiller::fill`]). Before each write, [`BufferFiller::prepare_write`] either fills the
//! bytes of the write again — when the plan asks for it (it costs CPU time per write), or when a
//! read used the buffer last and left the target's data in it — or only scrambles a few bytes of
//! every 512-byte sector, so that writing one buffer many times does not produce identical
//! blocks that a deduplicating device would store once. Nothing here allocates after
//! construction.
//!
//! Reducible data ([`Content::Reducible`]) is cut into chunks; each chunk starts with random
//! bytes and ends with fixed bytes (zeros, or the pattern), the fixed part being the chosen
//! share of the chunk, so every chunk — and so every block and the whole target — compresses to
//! about the rest. A buffer is either new (its own seed) or a duplicate of an earlier buffer
//! (an earlier seed, so the same bytes): the previous new buffer (`repeat`), or one of the
//! first buffers of the worker (its working set).
//!
//! ```
//! use iopath::fill::{BufferFiller, Content, FillPlan};
//! let plan = FillPlan { content: Content::Zeros, refill: false, scramble: true };
//! let mut filler = BufferFiller::new(plan, 7);
//! let mut buffer = vec![1u8; 4096];
//! filler.fill(&mut buffer);
//! assert!(buffer.iter().all(|b| *b == 0));
//! assert!(filler.prepare_write(&mut buffer, 8192, false));
//! assert!(buffer[..512].iter().any(|b| *b != 0));
//! ```

/// Fills `bytes` with pseudo-random data (incompressible, 8 bytes per draw).
pub fn fill_random_bytes(rng: &mut fastrand::Rng, bytes: &mut [u8]) {
    let mut chunks = bytes.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&rng.u64(..).to_le_bytes());
    }
    for byte in chunks.into_remainder() {
        *byte = rng.u8(..);
    }
}

/// Bytes per sector that [`BufferFiller::prepare_write`] scrambles.
pub const SCRAMBLE_SECTOR_BYTES: usize = 512;

/// What a buffer holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// Pseudo-random bytes: incompressible.
    Random,
    /// Zeros.
    Zeros,
    /// A pattern repeated from the first byte of the buffer (never empty).
    Pattern(Vec<u8>),
    /// Chunks of random then fixed bytes, some buffers duplicates of others.
    Reducible(Reducible),
}

/// Data that compresses and deduplicates to chosen shares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reducible {
    /// Share of each chunk that is fixed bytes, percent (0–99).
    pub compress_percent: u8,
    /// Length of a chunk, bytes (at least 1).
    pub chunk_bytes: usize,
    /// The fixed bytes, repeated from the start of each fixed part (empty: zeros).
    pub fixed_pattern: Vec<u8>,
    /// Duplicate buffers, when some are.
    pub dedupe: Option<DedupeFill>,
}

/// Which buffers are duplicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DedupeFill {
    /// Chance of each buffer to be a duplicate, percent (1–100).
    pub percent: u8,
    /// A duplicate copies one of the worker's first this many new buffers, drawn at random;
    /// `None`: it copies the previous new buffer.
    pub working_set_buffers: Option<u64>,
}

/// How a worker fills its write buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FillPlan {
    /// What the buffers hold.
    pub content: Content,
    /// Fill the bytes of every write again before it is issued.
    pub refill: bool,
    /// Without refill, stamp each 512-byte sector of every write with its offset and a
    /// per-write tag.
    pub scramble: bool,
}

impl Default for FillPlan {
    /// Random data, scrambled per write: what iopath writes unless told otherwise.
    fn default() -> Self {
        FillPlan {
            content: Content::Random,
            refill: false,
            scramble: true,
        }
    }
}

/// One worker's buffer filler: the plan and its state.
pub struct BufferFiller {
    plan: FillPlan,
    state: FillState,
}

/// The random state of a filler and its counts.
struct FillState {
    rng: fastrand::Rng,
    base_seed: u64,
    new_buffers: u64,
    previous_new: Option<u64>,
    writes: u64,
}

impl BufferFiller {
    /// A filler for `plan`; the same `seed` fills the same bytes.
    pub fn new(plan: FillPlan, seed: u64) -> Self {
        BufferFiller {
            plan,
            state: FillState {
                rng: fastrand::Rng::with_seed(seed),
                base_seed: mix(seed ^ 0x6275_6666_6572_7321),
                new_buffers: 0,
                previous_new: None,
                writes: 0,
            },
        }
    }

    /// The plan.
    pub fn plan(&self) -> &FillPlan {
        &self.plan
    }

    /// Fills all of `buffer` as the plan says (one buffer: one duplicate-or-new choice).
    pub fn fill(&mut self, buffer: &mut [u8]) {
        match &self.plan.content {
            Content::Random => fill_random_bytes(&mut self.state.rng, buffer),
            Content::Zeros => buffer.fill(0),
            Content::Pattern(pattern) => repeat_pattern(buffer, pattern),
            Content::Reducible(reducible) => {
                let seed = self.state.buffer_seed(reducible.dedupe);
                fill_reducible(reducible, seed, buffer);
            }
        }
    }

    /// Readies `buffer` (the bytes of one write at `offset`) before it is issued:
    /// fills it again when the plan refills or when `read_into` (a read used the buffer last),
    /// else scrambles it when the plan scrambles. Returns whether the bytes changed (the caller
    /// then reads the clock again, so that the fill is not counted in the write's latency).
    #[inline]
    pub fn prepare_write(&mut self, buffer: &mut [u8], offset: u64, read_into: bool) -> bool {
        if self.plan.refill || read_into {
            self.fill(buffer);
            true
        } else if self.plan.scramble && buffer.len() >= SCRAMBLE_SECTOR_BYTES {
            self.state.scramble(buffer, offset);
            true
        } else {
            false
        }
    }
}

impl FillState {
    /// Writes into every whole 512-byte sector 24 bytes drawn from the count of scrambled
    /// writes and the sector's offset: 8 at one of its first eight 64-byte lines (chosen per
    /// write) and 16 in bytes 48–64. No two writes leave a sector the same, and the stamps look
    /// as random as the rest, so they do not make a block compress.
    fn scramble(&mut self, buffer: &mut [u8], offset: u64) {
        self.writes += 1;
        let tag = mix(self.base_seed ^ self.writes);
        let line = ((tag ^ (offset >> 9)) & 7) as usize * 64;
        for (index, sector) in buffer.chunks_exact_mut(SCRAMBLE_SECTOR_BYTES).enumerate() {
            let sector_offset = offset.wrapping_add((index * SCRAMBLE_SECTOR_BYTES) as u64);
            let stamp = mix(tag ^ sector_offset);
            sector[line..line + 8].copy_from_slice(&stamp.to_le_bytes());
            sector[48..56].copy_from_slice(&mix(stamp).to_le_bytes());
            sector[56..64].copy_from_slice(&mix(!stamp).to_le_bytes());
        }
    }

    /// The seed of the next buffer: an earlier one for a duplicate, else a new one.
    fn buffer_seed(&mut self, dedupe: Option<DedupeFill>) -> u64 {
        if let Some(dedupe) = dedupe
            && self.rng.u8(1..=100) <= dedupe.percent
        {
            match dedupe.working_set_buffers {
                Some(count) => {
                    let index = self.rng.u64(0..count.max(1));
                    return self.new_seed(index);
                }
                None => {
                    if let Some(previous) = self.previous_new {
                        return previous;
                    }
                }
            }
        }
        let seed = self.new_seed(self.new_buffers);
        self.new_buffers += 1;
        self.previous_new = Some(seed);
        seed
    }

    /// Seed of the worker's `index`-th new buffer.
    fn new_seed(&self, index: u64) -> u64 {
        mix(self
            .base_seed
            .wrapping_add(index.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }
}

/// Fills `buffer` chunk by chunk from `seed`: the same seed gives the same bytes.
fn fill_reducible(reducible: &Reducible, seed: u64, buffer: &mut [u8]) {
    let random_percent = 100 - usize::from(reducible.compress_percent.min(100));
    for (index, chunk) in buffer.chunks_mut(reducible.chunk_bytes.max(1)).enumerate() {
        let random_bytes = chunk.len() * random_percent / 100;
        let (random, fixed) = chunk.split_at_mut(random_bytes);
        let mut rng = fastrand::Rng::with_seed(mix(
            seed.wrapping_add((index as u64).wrapping_mul(0xd1b5_4a32_d192_ed03))
        ));
        fill_random_bytes(&mut rng, random);
        repeat_pattern(fixed, &reducible.fixed_pattern);
    }
}

/// Repeats `pattern` over `buffer` from its first byte (zeros for an empty pattern).
pub fn repeat_pattern(buffer: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        buffer.fill(0);
        return;
    }
    for piece in buffer.chunks_mut(pattern.len()) {
        piece.copy_from_slice(&pattern[..piece.len()]);
    }
}

/// A 64-bit mixer (the finaliser of SplitMix64): nearby inputs give unrelated outputs.
fn mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn reducible(compress_percent: u8, dedupe: Option<DedupeFill>) -> FillPlan {
        FillPlan {
            content: Content::Reducible(Reducible {
                compress_percent,
                chunk_bytes: 512,
                fixed_pattern: Vec::new(),
                dedupe,
            }),
            refill: true,
            scramble: false,
        }
    }

    #[test]
    fn chunks_hold_the_asked_share_of_fixed_bytes() {
        let mut filler = BufferFiller::new(reducible(75, None), 1);
        let mut buffer = vec![0xffu8; 4096];
        filler.fill(&mut buffer);
        for chunk in buffer.chunks(512) {
            assert!(chunk[128..].iter().all(|b| *b == 0));
            assert!(chunk[..128].iter().filter(|b| **b == 0).count() < 8);
        }
        let chunks: HashSet<&[u8]> = buffer.chunks(512).collect();
        assert_eq!(chunks.len(), 8, "every chunk has its own random bytes");
    }

    #[test]
    fn the_fixed_part_repeats_the_pattern() {
        let mut plan = reducible(50, None);
        if let Content::Reducible(reducible) = &mut plan.content {
            reducible.fixed_pattern = b"abc".to_vec();
        }
        let mut filler = BufferFiller::new(plan, 1);
        let mut buffer = vec![0u8; 1024];
        filler.fill(&mut buffer);
        assert_eq!(&buffer[256..262], b"abcabc");
        assert_eq!(&buffer[768..774], b"abcabc");
    }

    #[test]
    fn duplicates_repeat_the_previous_new_buffer() {
        let dedupe = DedupeFill {
            percent: 40,
            working_set_buffers: None,
        };
        let mut filler = BufferFiller::new(reducible(0, Some(dedupe)), 3);
        let mut buffers = Vec::new();
        for _ in 0..2000 {
            let mut buffer = vec![0u8; 4096];
            filler.fill(&mut buffer);
            buffers.push(buffer);
        }
        let distinct: HashSet<&Vec<u8>> = buffers.iter().collect();
        let share = distinct.len() as f64 / buffers.len() as f64;
        assert!((share - 0.6).abs() < 0.04, "{share}");
        let mut seen = HashSet::new();
        let mut previous_new = None;
        for buffer in &buffers {
            if seen.insert(buffer) {
                previous_new = Some(buffer);
            } else {
                assert_eq!(Some(buffer), previous_new, "a duplicate of an older buffer");
            }
        }
    }

    #[test]
    fn duplicates_come_from_the_working_set() {
        let dedupe = DedupeFill {
            percent: 50,
            working_set_buffers: Some(10),
        };
        let mut filler = BufferFiller::new(reducible(0, Some(dedupe)), 5);
        let mut buffers = Vec::new();
        for _ in 0..1000 {
            let mut buffer = vec![0u8; 512];
            filler.fill(&mut buffer);
            buffers.push(buffer);
        }
        let distinct: HashSet<&Vec<u8>> = buffers.iter().collect();
        let share = distinct.len() as f64 / buffers.len() as f64;
        assert!((share - 0.5).abs() < 0.05, "{share}");
    }

    #[test]
    fn scrambling_makes_every_write_of_a_buffer_differ() {
        let mut filler = BufferFiller::new(FillPlan::default(), 9);
        let mut buffer = vec![0u8; 4096];
        filler.fill(&mut buffer);
        let mut seen = HashSet::new();
        for write in 0..64u64 {
            assert!(filler.prepare_write(&mut buffer, write * 4096, false));
            for sector in buffer.chunks(512) {
                assert!(seen.insert(sector.to_vec()), "write {write}");
            }
        }
        let mut small = vec![0u8; 256];
        assert!(!filler.prepare_write(&mut small, 0, false));
    }

    #[test]
    fn a_buffer_a_read_used_is_filled_again() {
        let plan = FillPlan {
            content: Content::Pattern(vec![0xde, 0xad]),
            refill: false,
            scramble: false,
        };
        let mut filler = BufferFiller::new(plan, 1);
        let mut buffer = vec![7u8; 4096];
        assert!(!filler.prepare_write(&mut buffer, 0, false));
        assert!(buffer.iter().all(|b| *b == 7));
        assert!(filler.prepare_write(&mut buffer, 0, true));
        assert!(buffer.chunks(2).all(|pair| pair == [0xde, 0xad]));
    }
}
