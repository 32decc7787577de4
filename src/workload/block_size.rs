//! Block size or block-size mix: `4k`, or `512/10,4k/60,64k/30` (size/percent, as fio's bssplit).

use super::WorkloadError;
use crate::units::{format_size, parse_size};
use serde::{Deserialize, Serialize};

/// One size of a mix and its share of the I/Os.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSizeShare {
    /// Block size in bytes.
    pub size_bytes: u64,
    /// Share of the I/Os, percent (all shares add up to 100).
    pub percent: u32,
}

/// The block sizes of a workload; a single size is a mix of one entry at 100 %.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSizeMix {
    /// The sizes and their shares.
    pub shares: Vec<BlockSizeShare>,
}

impl BlockSizeMix {
    /// A single block size.
    pub fn single(size_bytes: u64) -> Self {
        BlockSizeMix {
            shares: vec![BlockSizeShare {
                size_bytes,
                percent: 100,
            }],
        }
    }

    /// Largest size of the mix (the buffer size).
    pub fn max_bytes(&self) -> u64 {
        self.shares.iter().map(|s| s.size_bytes).max().unwrap_or(0)
    }

    /// Smallest size of the mix.
    pub fn min_bytes(&self) -> u64 {
        self.shares.iter().map(|s| s.size_bytes).min().unwrap_or(0)
    }

    /// The one size when the mix has only one.
    pub fn as_single(&self) -> Option<u64> {
        match self.shares.as_slice() {
            [only] => Some(only.size_bytes),
            _ => None,
        }
    }

    /// Mean I/O size weighted by the shares.
    pub fn mean_bytes(&self) -> f64 {
        self.shares
            .iter()
            .map(|s| s.size_bytes as f64 * s.percent as f64 / 100.0)
            .sum()
    }

    /// Reads `4k` or `512/10,4k/60,64k/30`. Shares must add up to 100; an entry without a share
    /// takes an equal part of what the others leave.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let mut shares = Vec::new();
        let mut unassigned = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (size_text, percent_text) = match part.split_once('/') {
                Some((size, percent)) => (size.trim(), Some(percent.trim())),
                None => (part, None),
            };
            let size_bytes = parse_size(size_text)?;
            if size_bytes == 0 {
                return Err(WorkloadError::BlockSize {
                    text: size_text.to_string(),
                    problem: "must be greater than 0",
                });
            }
            if size_bytes > u32::MAX as u64 / 2 {
                return Err(WorkloadError::BlockSize {
                    text: size_text.to_string(),
                    problem: "is too large (at most 1g)",
                });
            }
            let percent = match percent_text {
                Some(p) => Some(p.parse::<u32>().map_err(|_| {
                    WorkloadError::value(p, format!("in '{part}' is not a whole percentage"))
                })?),
                None => None,
            };
            if percent.is_none() {
                unassigned.push(shares.len());
            }
            shares.push(BlockSizeShare {
                size_bytes,
                percent: percent.unwrap_or(0),
            });
        }
        if shares.is_empty() {
            return Err(WorkloadError::value(text, "names no block size"));
        }
        let assigned: u32 = shares.iter().map(|s| s.percent).sum();
        if !unassigned.is_empty() {
            if assigned > 100 {
                return Err(WorkloadError::Shares {
                    text: text.to_string(),
                    total: None,
                });
            }
            let rest = 100 - assigned;
            let each = rest / unassigned.len() as u32;
            let mut extra = rest % unassigned.len() as u32;
            for index in unassigned {
                shares[index].percent = each + u32::from(extra > 0);
                extra = extra.saturating_sub(1);
            }
        } else if assigned != 100 {
            return Err(WorkloadError::Shares {
                text: text.to_string(),
                total: Some(assigned),
            });
        }
        shares.retain(|s| s.percent > 0);
        Ok(BlockSizeMix { shares })
    }
}

impl std::fmt::Display for BlockSizeMix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(size) = self.as_single() {
            return write!(f, "{}", format_size(size));
        }
        let parts: Vec<String> = self
            .shares
            .iter()
            .map(|s| format!("{}/{}", format_size(s.size_bytes), s.percent))
            .collect();
        write!(f, "{}", parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_and_mixed_sizes() {
        assert_eq!(
            BlockSizeMix::parse("4k").unwrap(),
            BlockSizeMix::single(4096)
        );
        let mix = BlockSizeMix::parse("512/10,4k/60,64k/30").unwrap();
        assert_eq!(mix.shares.len(), 3);
        assert_eq!(mix.max_bytes(), 65536);
        assert_eq!(mix.to_string(), "512/10,4k/60,64k/30");
        let filled = BlockSizeMix::parse("4k/50,8k,16k").unwrap();
        assert_eq!(filled.shares[1].percent + filled.shares[2].percent, 50);
    }

    #[test]
    fn bad_mixes_are_refused() {
        for bad in [
            "",
            "0",
            "4k/50,8k/40",
            "4kk",
            "4k/x",
            "4k/80,8k/30,16k",
            "2g",
        ] {
            assert!(BlockSizeMix::parse(bad).is_err(), "{bad}");
        }
    }
}
