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

/// Most memory one worker's random map may take, bytes (a map of 4 KiB blocks covers 32 TiB);
/// the maps of all workers count in the plan's memory budget besides.
pub const MAX_RANDOM_MAP_BYTES: u64 = 1 << 30;

/// Whether the workload keeps a random map: asked for, with random I/O.
fn map_applies(workload: &Workload) -> bool {
    workload.offsets.random_map && workload.access.random_percent() > 0.0
}

/// Bytes of one worker's random map on a target of `target_bytes` (0 without a map).
pub fn random_map_bytes(workload: &Workload, target_bytes: u64) -> u64 {
    let region = workload
        .region_size_bytes
        .unwrap_or(target_bytes.saturating_sub(workload.region_offset_bytes));
    match random_map_unit(workload).filter(|_| map_applies(workload)) {
        Some(unit) => map_bytes(region / unit),
        None => 0,
    }
}

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
    if let Some(unit) = random_map_unit(workload).filter(|_| map_applies(workload)) {
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
    workload.distribution.check_region(region, alignment)?;
    super::verify_settings::check(workload, region)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::BlockSizeMix;
    use crate::workload::suite::base_workload;

    #[test]
    fn the_random_map_counts_and_a_huge_one_is_refused() {
        let mut workload = base_workload();
        workload.set_simple(&BlockSizeMix::single(4096), 100, 100, 4096);
        workload.offsets.random_map = true;
        // 1 GiB of 4 KiB blocks: 262144 bits and their summary.
        assert_eq!(random_map_bytes(&workload, 1 << 30), map_bytes(1 << 18));
        assert!(check(&workload, 1 << 30).is_ok());
        let error = check(&workload, 64 << 40).unwrap_err();
        assert!(
            error.contains("random map") && error.contains("norandommap"),
            "{error}"
        );
        let mut sequential = workload.clone();
        sequential.set_simple(&BlockSizeMix::single(4096), 100, 0, 4096);
        assert_eq!(
            random_map_bytes(&sequential, 1 << 30),
            0,
            "no random I/O, no map"
        );
        workload.offsets.random_map = false;
        assert_eq!(random_map_bytes(&workload, 1 << 30), 0);
    }
}
