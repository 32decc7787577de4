//! Each block device's own request counters (`/proc/diskstats`, the fields of
//! `/sys/block/X/stat`): requests completed, sectors moved and milliseconds spent, for reads and
//! writes. Two readings around a measured window give what every device did in it
//! ([`usage_between`]), which shows the requests beneath a buffered stream: the kernel's
//! read-ahead windows and its write-back.
//!
//! ```
//! use iopath::discovery::disk_counters::{parse_disk_counters, usage_between};
//! let before = parse_disk_counters(" 7 0 loop0 100 0 2048 10 0 0 0 0 0 30 30 0 0 0 0\n");
//! let after = parse_disk_counters(" 7 0 loop0 344 0 66304 47 0 0 0 0 0 31 31 0 0 0 0\n");
//! let usage = usage_between(&before, &after, 64);
//! assert_eq!(usage[0].device, "loop0");
//! assert_eq!((usage[0].reads, usage[0].read_bytes), (244, 64256 * 512));
//! assert_eq!(usage[0].read_time_ns, 37_000_000);
//! ```

use super::host_view::{HostView, TABLE_LIMIT_BYTES};
use crate::result::BlockDeviceUsage;
use crate::text::escape::escape_controls;
use std::collections::BTreeMap;
use std::path::Path;

/// The counters of one device at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Reads completed.
    pub reads: u64,
    /// Sectors read (512 bytes each, whatever the device's block size).
    pub read_sectors: u64,
    /// Milliseconds spent reading.
    pub read_ms: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Milliseconds spent writing.
    pub write_ms: u64,
}

/// The counters of every block device of the machine `view` shows, by name (empty where
/// unreadable).
pub fn disk_counters(view: &HostView) -> BTreeMap<String, DiskCounters> {
    view.read_text(Path::new("/proc/diskstats"), TABLE_LIMIT_BYTES)
        .map(|text| parse_disk_counters(&text))
        .unwrap_or_default()
}

/// The counters per device of a `/proc/diskstats` text; lines that do not parse are left out.
pub fn parse_disk_counters(text: &str) -> BTreeMap<String, DiskCounters> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let number = |index: usize| fields.get(index)?.parse::<u64>().ok();
            let name = fields.get(2)?;
            Some((
                escape_controls(name).into_owned(),
                DiskCounters {
                    reads: number(3)?,
                    read_sectors: number(5)?,
                    read_ms: number(6)?,
                    writes: number(7)?,
                    write_sectors: number(9)?,
                    write_ms: number(10)?,
                },
            ))
        })
        .collect()
}

/// What each device that completed a request did from `before` to `after` (at most `limit`
/// devices, the busiest by requests first; a device that appeared or was reset is left out).
pub fn usage_between(
    before: &BTreeMap<String, DiskCounters>,
    after: &BTreeMap<String, DiskCounters>,
    limit: usize,
) -> Vec<BlockDeviceUsage> {
    let mut used: Vec<BlockDeviceUsage> = after
        .iter()
        .filter_map(|(name, later)| {
            let earlier = before.get(name)?;
            let delta = |a: u64, b: u64| a.checked_sub(b);
            let usage = BlockDeviceUsage {
                device: name.clone(),
                reads: delta(later.reads, earlier.reads)?,
                read_bytes: delta(later.read_sectors, earlier.read_sectors)?.saturating_mul(512),
                read_time_ns: delta(later.read_ms, earlier.read_ms)?.saturating_mul(1_000_000),
                writes: delta(later.writes, earlier.writes)?,
                write_bytes: delta(later.write_sectors, earlier.write_sectors)?.saturating_mul(512),
                write_time_ns: delta(later.write_ms, earlier.write_ms)?.saturating_mul(1_000_000),
            };
            (usage.reads + usage.writes > 0).then_some(usage)
        })
        .collect();
    used.sort_by_key(|usage| std::cmp::Reverse(usage.reads + usage.writes));
    used.truncate(limit);
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_or_new_device_is_left_out_and_idle_ones_too() {
        let before = parse_disk_counters(
            " 8 0 sda 10 0 80 1 5 0 40 2 0 0 0\n 8 16 sdb 1 0 8 1 1 0 8 1 0 0 0\n",
        );
        let after = parse_disk_counters(
            " 8 0 sda 4 0 40 1 5 0 40 2 0 0 0\n 8 16 sdb 1 0 8 1 1 0 8 1 0 0 0\n 7 0 loop0 1 0 8 0 0 0 0 0 0 0 0\n",
        );
        assert!(usage_between(&before, &after, 8).is_empty());
        assert!(parse_disk_counters("garbage\n 8 0 sda x\n").is_empty());
    }

    #[test]
    fn the_busiest_devices_are_kept() {
        let before = parse_disk_counters(" 8 0 sda 0 0 0 0 0 0 0 0\n 8 16 sdb 0 0 0 0 0 0 0 0\n");
        let after = parse_disk_counters(" 8 0 sda 1 0 8 0 0 0 0 0\n 8 16 sdb 0 0 0 0 9 0 72 4\n");
        let usage = usage_between(&before, &after, 1);
        assert_eq!(usage.len(), 1);
        assert_eq!(
            (
                usage[0].device.as_str(),
                usage[0].writes,
                usage[0].write_bytes
            ),
            ("sdb", 9, 72 * 512)
        );
        assert_eq!(usage[0].write_time_ns, 4_000_000);
    }
}
