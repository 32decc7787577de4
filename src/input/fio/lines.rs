//! fio's directions and block sizes as iopath access lines.
//!
//! fio draws a direction first (`rwmixread`) and then a size from that direction's own mix
//! (`bs=4k,64k`, `bssplit=…,…`, `bsrange`). iopath draws a line, so each (direction, size) pair
//! becomes a line weighted direction share × size share, reading 100 % or 0 %. When both
//! directions use the same sizes, randomness and alignment, the lines are shared instead: one
//! per size, each with the job's read percentage. A trim pattern issues only the trim
//! direction's sizes (`bs`'s third value): one line per size that trims every I/O (`trim`,
//! `randtrim`), or half of them (`trimwrite`, `randtrimwrite`: each trim is followed by a write
//! of the same range).

use super::parsers::block_shares;
use super::settings::{JobSettings, Pattern, READ, SplitShare, TRIM, WRITE};
use crate::result::{AccessLine, AccessSpec};

/// What one direction issues.
#[derive(Clone, Debug, PartialEq, Eq)]
struct DirectionMix {
    shares: Vec<SplitShare>,
    random_percent: u8,
    alignment_bytes: u64,
}

/// Shares of reads and writes, percent (both 0 for trim patterns: see [`issued_directions`]).
pub fn direction_shares(settings: &JobSettings) -> [u8; 2] {
    match settings.pattern {
        Pattern::Read | Pattern::RandRead => [100, 0],
        Pattern::Write | Pattern::RandWrite => [0, 100],
        Pattern::ReadWrite | Pattern::RandReadWrite => {
            [settings.read_mix_percent, 100 - settings.read_mix_percent]
        }
        Pattern::Trim | Pattern::RandTrim | Pattern::TrimWrite | Pattern::RandTrimWrite => [0, 0],
    }
}

/// The per-direction indexes whose block sizes the job issues: reads and writes, or the trim
/// direction alone for trim patterns (a trimwrite's write takes its trim's range).
pub fn issued_directions(settings: &JobSettings) -> Vec<usize> {
    if settings.pattern.trims() {
        vec![TRIM]
    } else {
        vec![READ, WRITE]
    }
}

/// Mean I/O size of each direction, bytes.
pub fn mean_sizes(settings: &JobSettings) -> [f64; 2] {
    [READ, WRITE].map(|direction| {
        direction_mix(settings, direction)
            .shares
            .iter()
            .map(|share| share.size_bytes as f64 * share.share_hundredths as f64 / 10_000.0)
            .sum()
    })
}

fn direction_mix(settings: &JobSettings, direction: usize) -> DirectionMix {
    let shares = settings.splits[direction]
        .clone()
        .unwrap_or_else(|| block_shares(settings.blocks[direction]));
    let smallest = shares.iter().map(|s| s.size_bytes).min().unwrap_or(4096);
    DirectionMix {
        alignment_bytes: settings.alignments[direction].unwrap_or(smallest),
        random_percent: if settings.pattern.random() {
            settings.random_percent[direction]
        } else {
            0
        },
        shares,
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The access lines of a job.
pub fn access_spec(settings: &JobSettings) -> AccessSpec {
    if settings.pattern.trims() {
        let mix = direction_mix(settings, TRIM);
        let trim_percent = if settings.pattern.write_after_trim() {
            50
        } else {
            100
        };
        let lines: Vec<AccessLine> = mix
            .shares
            .iter()
            .map(|share| AccessLine {
                alignment_bytes: mix.alignment_bytes,
                trim_percent,
                ..AccessLine::new(
                    share.size_bytes,
                    share.share_hundredths,
                    0,
                    mix.random_percent,
                )
            })
            .collect();
        return reduced(lines);
    }
    let shares = direction_shares(settings);
    let mixes = [READ, WRITE].map(|direction| direction_mix(settings, direction));
    let line = |share: &SplitShare, weight: u32, read: u8, mix: &DirectionMix| AccessLine {
        alignment_bytes: mix.alignment_bytes,
        ..AccessLine::new(share.size_bytes, weight, read, mix.random_percent)
    };
    let lines: Vec<AccessLine> =
        if shares[READ] > 0 && shares[WRITE] > 0 && mixes[READ] == mixes[WRITE] {
            mixes[READ]
                .shares
                .iter()
                .map(|share| line(share, share.share_hundredths, shares[READ], &mixes[READ]))
                .collect()
        } else {
            [READ, WRITE]
                .into_iter()
                .filter(|direction| shares[*direction] > 0)
                .flat_map(|direction| {
                    let mix = &mixes[direction];
                    let read = if direction == READ { 100 } else { 0 };
                    mix.shares
                        .iter()
                        .map(|share| {
                            line(
                                share,
                                shares[direction] as u32 * share.share_hundredths,
                                read,
                                mix,
                            )
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        };
    reduced(lines)
}

/// `lines` without those of no weight, the weights divided by their greatest common divisor.
fn reduced(mut lines: Vec<AccessLine>) -> AccessSpec {
    lines.retain(|line| line.weight > 0);
    let divisor = lines
        .iter()
        .fold(0, |acc, line| gcd(acc, line.weight))
        .max(1);
    for line in &mut lines {
        line.weight /= divisor;
    }
    AccessSpec { lines }
}

#[cfg(test)]
mod tests {
    use super::super::location::Location;
    use super::super::parsers;
    use super::super::settings::BlockChoice;
    use super::*;

    fn settings(pattern: Pattern) -> JobSettings {
        JobSettings {
            pattern,
            ..JobSettings::fio_defaults(Location {
                file: "t.fio".into(),
                line: 1,
            })
        }
    }

    #[test]
    fn a_single_direction_has_one_line_per_size() {
        let spec = access_spec(&settings(Pattern::RandRead));
        assert_eq!(spec.lines, [AccessLine::new(4096, 1, 100, 100)]);
    }

    #[test]
    fn per_direction_block_sizes_become_weighted_lines() {
        let mut job = settings(Pattern::RandReadWrite);
        job.read_mix_percent = 60;
        job.blocks = [
            BlockChoice::Fixed(4096),
            BlockChoice::Fixed(65536),
            BlockChoice::Fixed(65536),
        ];
        let spec = access_spec(&job);
        assert_eq!(spec.lines.len(), 2);
        assert_eq!((spec.lines[0].size_bytes, spec.lines[0].weight), (4096, 3));
        assert_eq!(spec.lines[0].read_percent, 100);
        assert_eq!((spec.lines[1].size_bytes, spec.lines[1].weight), (65536, 2));
        assert_eq!(spec.lines[1].read_percent, 0);
        assert_eq!(spec.lines[1].alignment_bytes, 65536);
        assert!((spec.read_percent() - 60.0).abs() < 1e-9);
    }

    #[test]
    fn per_direction_splits_multiply_shares() {
        let mut job = settings(Pattern::ReadWrite);
        job.read_mix_percent = 50;
        job.splits = [
            Some(parsers::split("2k/50:4k/50", 1024).unwrap()),
            Some(parsers::split("4k/90:8k/10", 1024).unwrap()),
            None,
        ];
        let spec = access_spec(&job);
        let summary: Vec<(u64, u32, u8, u8)> = spec
            .lines
            .iter()
            .map(|l| (l.size_bytes, l.weight, l.read_percent, l.random_percent))
            .collect();
        assert_eq!(
            summary,
            [
                (2048, 5, 100, 0),
                (4096, 5, 100, 0),
                (4096, 9, 0, 0),
                (8192, 1, 0, 0)
            ]
        );
    }

    #[test]
    fn a_shared_mix_keeps_one_line_per_size_with_the_read_share() {
        let mut job = settings(Pattern::RandReadWrite);
        job.read_mix_percent = 80;
        let split = parsers::split("512/10:4k/60:64k/30", 1024).unwrap();
        job.splits = [Some(split.clone()), Some(split), None];
        job.alignments = [Some(4096), Some(4096), None];
        let spec = access_spec(&job);
        assert_eq!(spec.lines.len(), 3);
        assert!(
            spec.lines
                .iter()
                .all(|l| l.read_percent == 80 && l.random_percent == 100)
        );
        assert!(spec.lines.iter().all(|l| l.alignment_bytes == 4096));
        assert_eq!(
            spec.lines.iter().map(|l| l.weight).collect::<Vec<_>>(),
            [1, 6, 3]
        );
    }

    #[test]
    fn trim_patterns_issue_the_trim_sizes_only() {
        let mut job = settings(Pattern::RandTrim);
        job.blocks = [
            BlockChoice::Fixed(4096),
            BlockChoice::Fixed(8192),
            BlockChoice::Fixed(1 << 20),
        ];
        let spec = access_spec(&job);
        assert_eq!(spec.lines.len(), 1);
        let line = &spec.lines[0];
        assert_eq!((line.size_bytes, line.trim_percent), (1 << 20, 100));
        assert_eq!((line.read_percent, line.random_percent), (0, 100));
        assert!(spec.trims() && !spec.writes() && !spec.reads());
        job.pattern = Pattern::TrimWrite;
        let spec = access_spec(&job);
        assert_eq!(spec.lines[0].trim_percent, 50);
        assert_eq!(spec.lines[0].random_percent, 0);
        assert!(spec.trims() && spec.writes());
    }

    #[test]
    fn percentage_random_applies_per_direction_to_random_patterns_only() {
        let mut job = settings(Pattern::RandReadWrite);
        job.random_percent = [30, 70, 100];
        let spec = access_spec(&job);
        assert_eq!(
            spec.lines
                .iter()
                .map(|l| l.random_percent)
                .collect::<Vec<_>>(),
            [30, 70]
        );
        let mut sequential = settings(Pattern::Read);
        sequential.random_percent = [30, 70, 100];
        assert_eq!(access_spec(&sequential).lines[0].random_percent, 0);
        assert_eq!(mean_sizes(&sequential), [4096.0, 4096.0]);
    }
}
