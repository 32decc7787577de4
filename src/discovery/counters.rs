//! Live counters of the hops that have one: the bytes each block device has read and written
//! (`/proc/diskstats`, in 512-byte sectors whatever the device's block size) and the bytes
//! each network interface has received and sent (`/proc/net/dev`). Read through a
//! [`HostView`], so a recorded machine answers too.
//!
//! ```
//! use iopath::discovery::counters::{parse_diskstats, parse_net_dev};
//! let disks = parse_diskstats(" 253       0 vda 100 0 2048 10 50 0 4096 20 0 30 30 0 0 0 0\n");
//! assert_eq!(disks["vda"], (2048 * 512, 4096 * 512));
//! let nics = parse_net_dev("Inter-|   Receive\n face |bytes\n  eth0: 1000 5 0 0 0 0 0 0 2000 6 0 0 0 0 0 0\n");
//! assert_eq!(nics["eth0"], (1000, 2000));
//! ```

use super::host_view::{HostView, TABLE_LIMIT_BYTES};
use std::collections::BTreeMap;
use std::path::Path;

/// Bytes moved so far by each block device and network interface, by name: `(read, written)`
/// for a device, `(received, sent)` for an interface.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HopCounters {
    /// Block devices (`sda`, `nvme0n1`, `dm-0`), from `/proc/diskstats`.
    pub block_devices: BTreeMap<String, (u64, u64)>,
    /// Network interfaces (`eth0`, `lo`), from `/proc/net/dev`.
    pub interfaces: BTreeMap<String, (u64, u64)>,
}

/// Reads both tables of the machine `view` shows (empty where unreadable).
pub fn hop_counters(view: &HostView) -> HopCounters {
    let read = |path: &str| view.read_text(Path::new(path), TABLE_LIMIT_BYTES);
    HopCounters {
        block_devices: read("/proc/diskstats")
            .map(|text| parse_diskstats(&text))
            .unwrap_or_default(),
        interfaces: read("/proc/net/dev")
            .map(|text| parse_net_dev(&text))
            .unwrap_or_default(),
    }
}

/// Bytes read and written per device from a `/proc/diskstats` text.
pub fn parse_diskstats(text: &str) -> BTreeMap<String, (u64, u64)> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let sectors = |index: usize| fields.get(index)?.parse::<u64>().ok();
            let name = fields.get(2)?;
            Some((
                (*name).to_string(),
                (
                    sectors(5)?.saturating_mul(512),
                    sectors(9)?.saturating_mul(512),
                ),
            ))
        })
        .collect()
}

/// Bytes received and sent per interface from a `/proc/net/dev` text.
pub fn parse_net_dev(text: &str) -> BTreeMap<String, (u64, u64)> {
    text.lines()
        .filter_map(|line| {
            let (name, counters) = line.split_once(':')?;
            let values: Vec<u64> = counters
                .split_whitespace()
                .map(|field| field.parse().ok())
                .collect::<Option<_>>()?;
            Some((name.trim().to_string(), (*values.first()?, *values.get(8)?)))
        })
        .collect()
}
