//! The header every verified block carries, and the check of a block read back.
//!
//! A write is cut into intervals (`verify_interval`, by default the smallest block size); each
//! interval carries one 80-byte header at `verify_offset` (0 by default), little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 0–3 | magic `IOPV` |
//! | 4 | layout version (1) |
//! | 5 | checksum kind (0 crc32c, 1 crc32, 2 md5, 3 sha256, 4 xxhash, 5 meta) |
//! | 6–7 | header length (80) |
//! | 8–15 | byte offset of the interval in the target |
//! | 16–19 | interval length, bytes |
//! | 20–23 | reserved (0) |
//! | 24–31 | generation: the worker's write number (1, 2, …) |
//! | 32–39 | run id: drawn at random once per run |
//! | 40–43 | CRC-32C of bytes 0–39 (the header's own check) |
//! | 44–47 | reserved (0) |
//! | 48–79 | checksum of the whole interval, this field zeroed (as long as its kind; the rest 0) |
//!
//! The rest of the interval is the workload's data (random and incompressible unless asked
//! otherwise), or the verify pattern. `verify=pattern` writes no header: every byte is the
//! pattern.
//!
//! ```
//! use iopath::result::{MismatchKind, VerifyKind};
//! use iopath::verify::header::{BlockFormat, Check, Expected};
//! let format = BlockFormat::new(VerifyKind::Crc32c, 4096, 0, None);
//! let mut block = vec![7u8; 8192];
//! format.stamp(&mut block, 1 << 20, 0xfeed, 3);
//! let written = Expected::Written { run_id: 0xfeed, generation: 3 };
//! assert_eq!(format.check(&mut block[..4096], 1 << 20, written), Check::Good);
//! block[4096 + 100] ^= 1;
//! let Check::Bad(fault) = format.check(&mut block[4096..], (1 << 20) + 4096, written) else { panic!() };
//! assert_eq!(fault.kind, MismatchKind::Checksum);
//! assert_eq!(format.check(&mut vec![0u8; 4096], 0, Expected::Unknown), Check::NoHeader);
//! ```

use super::checksum::{Digest, MAX_DIGEST_BYTES};
use crate::fill::repeat_pattern;
use crate::result::{MismatchKind, VerifyKind};

/// Bytes of a header.
pub const HEADER_BYTES: usize = 80;
const MAGIC: [u8; 4] = *b"IOPV";
const LAYOUT_VERSION: u8 = 1;
const HEADER_CHECK_AT: usize = 40;
const DIGEST_AT: usize = 48;

/// What a block is expected to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Nothing known: any intact header at the right offset verifies, and no header reads as
    /// never written.
    Unknown,
    /// This write.
    Written {
        /// The run that wrote it.
        run_id: u64,
        /// Its generation.
        generation: u64,
    },
}

/// The header fields of a block, as written or as found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderFields {
    /// Byte offset the header names.
    pub offset: u64,
    /// Interval length it names.
    pub length: u32,
    /// Generation.
    pub generation: u64,
    /// Run id.
    pub run_id: u64,
}

/// What was expected, or found, in a bad block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// A header's fields.
    Header(HeaderFields),
    /// No header: every byte zero.
    Zeros,
    /// Every byte zero, as a trimmed block must read (`trim_verify_zero`).
    TrimmedZeros,
    /// No header: other bytes.
    NoHeader,
    /// A damaged header (its own check fails); the offset it names.
    DamagedHeader {
        /// Offset as found.
        offset: u64,
    },
    /// A checksum.
    Checksum(VerifyKind, Digest),
    /// A byte of the pattern, at this position of the interval.
    Byte {
        /// Position in the interval.
        at: u32,
        /// The byte.
        value: u8,
    },
}

/// One bad block: what was wrong, what should have been there and what was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What was wrong.
    pub kind: MismatchKind,
    /// What should have been there.
    pub expected: Evidence,
    /// What was found.
    pub found: Evidence,
    /// The run the block's header names, when it has an intact one.
    pub header_run: Option<u64>,
}

/// The outcome of checking one interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// It holds what was written.
    Good,
    /// No header, and none was expected: never written.
    NoHeader,
    /// It does not.
    Bad(Fault),
}

/// How a worker writes and checks blocks: the kind, the interval, where the header sits and
/// the verify pattern.
#[derive(Clone, Debug)]
pub struct BlockFormat {
    kind: VerifyKind,
    interval: usize,
    header_offset: usize,
    pattern: Option<Vec<u8>>,
}

fn kind_code(kind: VerifyKind) -> u8 {
    match kind {
        VerifyKind::Crc32c => 0,
        VerifyKind::Crc32 => 1,
        VerifyKind::Md5 => 2,
        VerifyKind::Sha256 => 3,
        VerifyKind::Xxhash => 4,
        VerifyKind::Meta | VerifyKind::Pattern => 5,
    }
}

fn kind_of_code(code: u8) -> Option<VerifyKind> {
    Some(match code {
        0 => VerifyKind::Crc32c,
        1 => VerifyKind::Crc32,
        2 => VerifyKind::Md5,
        3 => VerifyKind::Sha256,
        4 => VerifyKind::Xxhash,
        5 => VerifyKind::Meta,
        _ => return None,
    })
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

impl BlockFormat {
    /// A format of `kind` with one header per `interval` bytes at `header_offset` in each
    /// (the caller checks that the header fits: [`BlockFormat::fits`]), and data bytes of
    /// `pattern` when given (an empty pattern counts as none).
    pub fn new(
        kind: VerifyKind,
        interval: usize,
        header_offset: usize,
        pattern: Option<Vec<u8>>,
    ) -> Self {
        BlockFormat {
            kind,
            interval: interval.max(1),
            header_offset,
            pattern: pattern.filter(|p| !p.is_empty()),
        }
    }

    /// Whether a header of this format fits in an interval of `interval` bytes at
    /// `header_offset`.
    pub fn fits(kind: VerifyKind, interval: u64, header_offset: u64) -> bool {
        kind == VerifyKind::Pattern || header_offset.saturating_add(HEADER_BYTES as u64) <= interval
    }

    /// Bytes each header covers.
    pub fn interval(&self) -> usize {
        self.interval
    }

    /// The kind.
    pub fn kind(&self) -> VerifyKind {
        self.kind
    }

    /// Whether [`BlockFormat::stamp`] writes a pattern over every byte of a write.
    pub fn has_pattern(&self) -> bool {
        self.pattern.is_some()
    }

    fn has_header(&self) -> bool {
        self.kind != VerifyKind::Pattern
    }

    /// Writes the pattern (when set) and a header into every interval of `buffer`, a write at
    /// `offset`, of generation `generation` of run `run_id`.
    pub fn stamp(&self, buffer: &mut [u8], offset: u64, run_id: u64, generation: u64) {
        for (index, chunk) in buffer.chunks_mut(self.interval).enumerate() {
            if let Some(pattern) = &self.pattern {
                repeat_pattern(chunk, pattern);
            }
            if self.has_header() && chunk.len() >= self.header_offset + HEADER_BYTES {
                let fields = HeaderFields {
                    offset: offset + (index * self.interval) as u64,
                    length: chunk.len() as u32,
                    generation,
                    run_id,
                };
                self.stamp_interval(chunk, fields);
            }
        }
    }

    fn stamp_interval(&self, chunk: &mut [u8], fields: HeaderFields) {
        let at = self.header_offset;
        let header = &mut chunk[at..at + HEADER_BYTES];
        header[0..4].copy_from_slice(&MAGIC);
        header[4] = LAYOUT_VERSION;
        header[5] = kind_code(self.kind);
        header[6..8].copy_from_slice(&(HEADER_BYTES as u16).to_le_bytes());
        header[8..16].copy_from_slice(&fields.offset.to_le_bytes());
        header[16..20].copy_from_slice(&fields.length.to_le_bytes());
        header[20..24].fill(0);
        header[24..32].copy_from_slice(&fields.generation.to_le_bytes());
        header[32..40].copy_from_slice(&fields.run_id.to_le_bytes());
        let check = crc32c::crc32c(&header[..HEADER_CHECK_AT]);
        header[40..44].copy_from_slice(&check.to_le_bytes());
        header[44..HEADER_BYTES].fill(0);
        if self.kind != VerifyKind::Meta {
            let digest = Digest::of(self.kind, chunk);
            let field = &mut chunk[at + DIGEST_AT..at + DIGEST_AT + digest.bytes().len()];
            field.copy_from_slice(digest.bytes());
        }
    }

    /// Checks one interval read at `offset` against `expected`. The checksum field of the
    /// interval's header is zeroed in the process (the buffer is a read's, used once).
    pub fn check(&self, chunk: &mut [u8], offset: u64, expected: Expected) -> Check {
        if !self.has_header() {
            return self.check_pattern(chunk, 0, expected);
        }
        let at = self.header_offset;
        if chunk.len() < at + HEADER_BYTES {
            return Check::Good;
        }
        let header = &chunk[at..at + HEADER_BYTES];
        let own_check = u32_at(header, HEADER_CHECK_AT);
        let magic_intact = header[0..4] == MAGIC;
        let mut with_magic = [0u8; HEADER_CHECK_AT];
        with_magic.copy_from_slice(&header[..HEADER_CHECK_AT]);
        with_magic[0..4].copy_from_slice(&MAGIC);
        let header_intact = crc32c::crc32c(&with_magic) == own_check;
        let wanted = HeaderFields {
            offset,
            length: chunk.len() as u32,
            generation: match expected {
                Expected::Written { generation, .. } => generation,
                Expected::Unknown => 0,
            },
            run_id: match expected {
                Expected::Written { run_id, .. } => run_id,
                Expected::Unknown => 0,
            },
        };
        if !magic_intact && !header_intact {
            // No header at all (a flipped magic with an intact rest is a damaged header).
            let found = if chunk.iter().all(|b| *b == 0) {
                Evidence::Zeros
            } else {
                Evidence::NoHeader
            };
            return match expected {
                Expected::Unknown => Check::NoHeader,
                Expected::Written { .. } => Check::Bad(Fault {
                    kind: MismatchKind::NeverWritten,
                    expected: Evidence::Header(wanted),
                    found,
                    header_run: None,
                }),
            };
        }
        let found_fields = HeaderFields {
            offset: u64_at(header, 8),
            length: u32_at(header, 16),
            generation: u64_at(header, 24),
            run_id: u64_at(header, 32),
        };
        let found_kind = kind_of_code(header[5]);
        if !magic_intact || !header_intact || header[4] != LAYOUT_VERSION || found_kind.is_none() {
            return Check::Bad(Fault {
                kind: MismatchKind::BadHeader,
                expected: Evidence::Header(wanted),
                found: Evidence::DamagedHeader {
                    offset: found_fields.offset,
                },
                header_run: None,
            });
        }
        let header_run = Some(found_fields.run_id);
        if found_fields.offset != offset {
            return Check::Bad(Fault {
                kind: MismatchKind::WrongOffset,
                expected: Evidence::Header(wanted),
                found: Evidence::Header(found_fields),
                header_run,
            });
        }
        if found_fields.length != wanted.length {
            return Check::Bad(Fault {
                kind: MismatchKind::BadHeader,
                expected: Evidence::Header(wanted),
                found: Evidence::Header(found_fields),
                header_run,
            });
        }
        let kind = found_kind.unwrap_or(self.kind);
        if kind != VerifyKind::Meta {
            let length = Digest::length_of(kind);
            let field = at + DIGEST_AT..at + DIGEST_AT + length.min(MAX_DIGEST_BYTES);
            let stored = Digest::stored(kind, &chunk[field.clone()]);
            chunk[field].fill(0);
            let computed = Digest::of(kind, chunk);
            if computed != stored {
                return Check::Bad(Fault {
                    kind: MismatchKind::Checksum,
                    expected: Evidence::Checksum(kind, stored),
                    found: Evidence::Checksum(kind, computed),
                    header_run,
                });
            }
        }
        if let Expected::Written { .. } = expected
            && (found_fields.run_id != wanted.run_id
                || found_fields.generation != wanted.generation)
        {
            return Check::Bad(Fault {
                kind: MismatchKind::Stale,
                expected: Evidence::Header(wanted),
                found: Evidence::Header(found_fields),
                header_run,
            });
        }
        match self.check_pattern(chunk, at + HEADER_BYTES, expected) {
            Check::Bad(fault) => Check::Bad(Fault {
                header_run,
                ..fault
            }),
            _ => Check::Good,
        }
    }

    /// Compares the bytes of `chunk` from `from` on with the pattern (bytes before the header
    /// too when it does not sit at the start).
    fn check_pattern(&self, chunk: &[u8], from: usize, expected: Expected) -> Check {
        let Some(pattern) = &self.pattern else {
            return Check::Good;
        };
        let header = self.header_offset..self.header_offset + HEADER_BYTES;
        let ranges = if self.has_header() {
            [
                0..header.start.min(chunk.len()),
                from.min(chunk.len())..chunk.len(),
            ]
        } else {
            [0..0, 0..chunk.len()]
        };
        for range in ranges {
            for at in range {
                let want = pattern[at % pattern.len()];
                if chunk[at] != want {
                    if !self.has_header()
                        && expected == Expected::Unknown
                        && chunk.iter().all(|b| *b == 0)
                    {
                        return Check::NoHeader;
                    }
                    return Check::Bad(Fault {
                        kind: MismatchKind::Pattern,
                        expected: Evidence::Byte {
                            at: at as u32,
                            value: want,
                        },
                        found: Evidence::Byte {
                            at: at as u32,
                            value: chunk[at],
                        },
                        header_run: None,
                    });
                }
            }
        }
        Check::Good
    }
}

/// A run id as results show it: 16 hex digits.
pub fn run_id_text(run_id: u64) -> String {
    format!("{run_id:016x}")
}

impl Evidence {
    /// In words, as results show it.
    pub fn describe(&self) -> String {
        match self {
            Evidence::Header(fields) => format!(
                "offset {}, run {}, write {}",
                fields.offset,
                run_id_text(fields.run_id),
                fields.generation
            ),
            Evidence::Zeros => "no header (all zeros)".to_string(),
            Evidence::TrimmedZeros => "all zeros (trimmed)".to_string(),
            Evidence::NoHeader => "no header".to_string(),
            Evidence::DamagedHeader { offset } => {
                format!("a damaged header (naming offset {offset})")
            }
            Evidence::Checksum(kind, digest) => format!("{} {}", kind.name(), digest.to_hex()),
            Evidence::Byte { at, value } => format!("byte {at}: 0x{value:02x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(length: usize, seed: u64) -> Vec<u8> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..length).map(|_| rng.u8(..)).collect()
    }

    fn written(generation: u64) -> Expected {
        Expected::Written {
            run_id: 42,
            generation,
        }
    }

    #[test]
    fn every_kind_verifies_what_it_wrote_and_catches_a_flipped_bit() {
        for kind in VerifyKind::ALL {
            let pattern = (kind == VerifyKind::Pattern).then(|| vec![0xaa, 0x55]);
            let format = BlockFormat::new(kind, 512, 0, pattern);
            let mut block = random(4096, 1);
            format.stamp(&mut block, 8192, 42, 7);
            for (index, chunk) in block.clone().chunks_mut(512).enumerate() {
                let offset = 8192 + 512 * index as u64;
                assert_eq!(
                    format.check(chunk, offset, written(7)),
                    Check::Good,
                    "{}",
                    kind.name()
                );
            }
            let mut flipped = block.clone();
            flipped[512 * 3 + 300] ^= 0x10;
            let bad: Vec<usize> = flipped
                .chunks_mut(512)
                .enumerate()
                .filter_map(|(index, chunk)| {
                    (format.check(chunk, 8192 + 512 * index as u64, written(7)) != Check::Good)
                        .then_some(index)
                })
                .collect();
            let expected: &[usize] = if kind == VerifyKind::Meta { &[] } else { &[3] };
            assert_eq!(bad, expected, "{}", kind.name());
        }
    }

    #[test]
    fn faults_name_what_a_storage_path_does_wrong() {
        let format = BlockFormat::new(VerifyKind::Crc32c, 4096, 0, None);
        let mut old = random(4096, 2);
        format.stamp(&mut old, 4096, 42, 1);
        let mut new = random(4096, 3);
        format.stamp(&mut new, 4096, 42, 2);
        let kind_of = |mut block: Vec<u8>, offset: u64, expected: Expected| match format
            .check(&mut block, offset, expected)
        {
            Check::Bad(fault) => Some(fault.kind),
            _ => None,
        };
        assert_eq!(kind_of(new.clone(), 4096, written(2)), None);
        // A lost overwrite: the older write is still there.
        assert_eq!(
            kind_of(old.clone(), 4096, written(2)),
            Some(MismatchKind::Stale)
        );
        // Another offset's block.
        assert_eq!(
            kind_of(new.clone(), 8192, written(2)),
            Some(MismatchKind::WrongOffset)
        );
        // Torn: the second half is the old write's.
        let mut torn = new.clone();
        torn[2048..].copy_from_slice(&old[2048..]);
        assert_eq!(
            kind_of(torn, 4096, written(2)),
            Some(MismatchKind::Checksum)
        );
        // Torn the other way: the header is the old write's.
        let mut torn = old.clone();
        torn[2048..].copy_from_slice(&new[2048..]);
        assert_eq!(
            kind_of(torn, 4096, written(2)),
            Some(MismatchKind::Checksum)
        );
        // A lost first write, and a block nobody claimed.
        assert_eq!(
            kind_of(vec![0; 4096], 4096, written(2)),
            Some(MismatchKind::NeverWritten)
        );
        assert_eq!(
            format.check(&mut random(4096, 4), 0, Expected::Unknown),
            Check::NoHeader
        );
        // A flipped bit in the magic is a damaged header, not a never-written block.
        let mut damaged = new.clone();
        damaged[1] ^= 4;
        assert_eq!(
            kind_of(damaged, 4096, Expected::Unknown),
            Some(MismatchKind::BadHeader)
        );
        // Data from another run, unknown expectations: intact, so good.
        assert_eq!(kind_of(new, 4096, Expected::Unknown), None);
    }

    #[test]
    fn a_header_elsewhere_in_the_interval_and_a_pattern_around_it() {
        let format = BlockFormat::new(VerifyKind::Meta, 512, 100, Some(vec![0xaa, 0x55, 0x5a]));
        let mut block = vec![0u8; 1024];
        format.stamp(&mut block, 0, 9, 1);
        assert_eq!(block[0], 0xaa);
        assert_eq!(&block[100..104], b"IOPV");
        let expected = Expected::Written {
            run_id: 9,
            generation: 1,
        };
        assert_eq!(format.check(&mut block[512..], 512, expected), Check::Good);
        block[50] = 0;
        let Check::Bad(fault) = format.check(&mut block[..512], 0, expected) else {
            panic!("a changed pattern byte goes unnoticed")
        };
        assert_eq!(fault.kind, MismatchKind::Pattern);
        assert_eq!(fault.found.describe(), "byte 50: 0x00");
    }

    #[test]
    fn the_header_keeps_random_data_incompressible() {
        use std::io::Write;
        let format = BlockFormat::new(VerifyKind::Crc32c, 4096, 0, None);
        let mut data = random(1 << 20, 5);
        for (index, block) in data.chunks_mut(4096).enumerate() {
            format.stamp(block, index as u64 * 4096, 1, index as u64 + 1);
        }
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&data).unwrap();
        let compressed = encoder.finish().unwrap().len();
        assert!(
            compressed * 100 > data.len() * 98,
            "{compressed} of {} bytes",
            data.len()
        );
    }
}
