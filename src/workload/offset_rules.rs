//! How a worker's offsets follow each other beyond an access line's random percentage: fio's
//! offset modifiers (`rw=write:4k` leaves holes, `rw=read:-8k` reads backwards,
//! `rw=randread:8` takes a new random offset every 8 I/Os, `rw_sequencer=identical` repeats
//! it), its random map (every block once per pass over the region) and its per-clone regions
//! (`offset_increment`).
//!
//! The rules themselves are data of the result ([`OffsetRules`]); this module holds what the
//! planner and the runner do with them.
//!
//! ```
//! use iopath::result::OffsetRules;
//! use iopath::workload::offset_rules::clone_region;
//! let apart = OffsetRules { clone_increment_bytes: 1 << 20, ..OffsetRules::default() };
//! assert_eq!(clone_region(0, Some(1 << 20), &apart, 4 << 20, 3), Some((3 << 20, 1 << 20)));
//! assert_eq!(clone_region(0, Some(1 << 20), &apart, 4 << 20, 4), None);
//! let rules = OffsetRules { sequential_step_bytes: -8192, ..OffsetRules::default() };
//! assert!(!rules.is_default());
//! assert_eq!(rules.to_string(), "step -8192 B after each sequential I/O");
//! ```

use crate::result::OffsetRules;

/// The clone a worker is: `worker` of `workers_on_target` workers on one target, where the
/// job asked for `clones` workers per target (more run when a depth is mapped to workers).
pub fn clone_of_worker(worker: u32, workers_on_target: u32, clones: u32) -> u32 {
    let per_clone = (workers_on_target / clones.max(1)).max(1);
    worker / per_clone
}

/// The region of `clone` on a target of `target_bytes`: its start and length, moved by the
/// clone increment; `None` when it does not fit in the target.
pub fn clone_region(
    region_offset_bytes: u64,
    region_size_bytes: Option<u64>,
    rules: &OffsetRules,
    target_bytes: u64,
    clone: u32,
) -> Option<(u64, u64)> {
    let start = region_offset_bytes
        .checked_add(rules.clone_increment_bytes.checked_mul(u64::from(clone))?)?;
    let size = match region_size_bytes {
        Some(size) => size,
        None => target_bytes.checked_sub(start)?,
    };
    (start.checked_add(size)? <= target_bytes && size > 0).then_some((start, size))
}

impl std::fmt::Display for OffsetRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if self.sequential_step_bytes != 0 {
            parts.push(format!(
                "step {} B after each sequential I/O",
                self.sequential_step_bytes
            ));
        }
        if self.random_period() > 1 {
            parts.push(format!(
                "a random offset every {} I/Os ({} between)",
                self.random_period(),
                if self.repeat_offset {
                    "the same offset"
                } else {
                    "sequential"
                }
            ));
        }
        if self.random_map {
            parts.push("random map (each block once per pass)".to_string());
        }
        if self.random_order == crate::result::RandomOrder::Lfsr {
            parts.push("LFSR block order".to_string());
        }
        if self.write_after_trim {
            parts.push("each trim followed by a write of its range".to_string());
        }
        if self.clone_increment_bytes > 0 {
            parts.push(format!(
                "clone regions {} B apart",
                self.clone_increment_bytes
            ));
        }
        write!(f, "{}", parts.join(", "))
    }
}
