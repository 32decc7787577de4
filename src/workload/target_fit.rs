//! Checks, before any I/O, that what a workload asks of its region fits a target of a given
//! size: every clone's region (moved by the clone increment), the random map's memory, and
//! absolute zones or block sequences of the distribution.
//!
//! ```
//! use iopath::workload::suite::base_workload;
//! use iopath::workload::target_fit::check;
//! let mut workload = base_workload();
//! workload.workers = 4;
//! workload.region_size_bytes = Some(1 << 20);
//! workload.offsets.clone_increment_bytes = 1 << 20;
//! assert!(check(&workload, 4 << 20).is_ok());
//! assert!(check(&workload, 3 << 20).unwrap_err().contains("clone 3"));
//! ```

use super::Workload;
use super::offset_rules::clone_region;
use super::planner::random_map_unit;
use super::random_map::map_bytes;
use crate::units::format_size;

/// Most memory one worker's random map may take, bytes (a map of 4 KiB blocks covers 8 TiB).
pub const MAX_RANDOM_MAP_BYTES: u64 = 256 << 20;

/// Checks `workload` against a target of `target_bytes`; the message says what does not fit.
pub fn check(workload: &Workload, target_bytes: u64) -> Result<(), String> {
    let rules = &workload.offsets;
    let clones = workload.workers.max(1);
    let last = clones - 1;
    let Some((_, region)) = clone_region(
        workload.region_offset_bytes,
        workload.region_size_bytes,
        rules,
        target_bytes,
        last,
    ) else {
        return Err(format!(
            "the region of clone {last} ({} + {last} × {} increment) ends past the end of the target ({target_bytes} bytes)",
            format_size(workload.region_offset_bytes),
            format_size(rules.clone_increment_bytes)
        ));
    };
    if rules.random_map
        && workload.access.random_percent() > 0.0
        && let Some(unit) = random_map_unit(workload)
    {
        let bytes = map_bytes(region / unit);
        if bytes > MAX_RANDOM_MAP_BYTES {
            return Err(format!(
                "the random map of a {}-byte region in {unit}-byte blocks needs {} per worker, more than {}; turn it off (norandommap, or leave out --random-map) or use larger blocks",
                region,
                format_size(bytes),
                format_size(MAX_RANDOM_MAP_BYTES)
            ));
        }
    }
    let alignment = workload
        .access
        .active_lines()
        .map(|line| line.alignment_bytes.max(1))
        .min()
        .unwrap_or(1);
    workload.distribution.check_region(region, alignment)
}
