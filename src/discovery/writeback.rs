//! The page cache's write-back settings (`/proc/sys/vm/dirty_*`): when the kernel starts
//! writing dirty pages back, and when it makes a writer wait.
//!
//! ```
//! use iopath::discovery::writeback::DirtyLimits;
//! let limits = DirtyLimits { background_ratio: Some(10), ratio: Some(20), ..DirtyLimits::default() };
//! assert_eq!(limits.describe(), "write-back from 10 % of memory dirty, writers wait from 20 % (vm.dirty_background_ratio, vm.dirty_ratio)");
//! ```

use super::host_view::HostView;
use crate::units::format_bytes;
use std::path::Path;

/// The dirty-page limits of a host; a byte limit, when set, replaces its ratio.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirtyLimits {
    /// `vm.dirty_background_ratio`: percent of memory dirty before write-back starts.
    pub background_ratio: Option<u64>,
    /// `vm.dirty_background_bytes` (0: the ratio applies).
    pub background_bytes: Option<u64>,
    /// `vm.dirty_ratio`: percent of memory dirty before a writer waits.
    pub ratio: Option<u64>,
    /// `vm.dirty_bytes` (0: the ratio applies).
    pub bytes: Option<u64>,
}

impl DirtyLimits {
    /// Reads the limits of the machine `view` shows (`None` when none is readable).
    pub fn read(view: &HostView) -> Option<DirtyLimits> {
        let number = |name: &str| view.number::<u64>(&Path::new("/proc/sys/vm").join(name));
        let limits = DirtyLimits {
            background_ratio: number("dirty_background_ratio"),
            background_bytes: number("dirty_background_bytes"),
            ratio: number("dirty_ratio"),
            bytes: number("dirty_bytes"),
        };
        (limits != DirtyLimits::default()).then_some(limits)
    }

    /// One phrase: where write-back starts and where a writer waits, with the settings named.
    pub fn describe(&self) -> String {
        let limit = |bytes: Option<u64>, ratio: Option<u64>, name: &str| match (bytes, ratio) {
            (Some(bytes), _) if bytes > 0 => {
                Some((format_bytes(bytes), format!("vm.{name}_bytes")))
            }
            (_, Some(ratio)) => Some((format!("{ratio} % of memory"), format!("vm.{name}_ratio"))),
            _ => None,
        };
        let start = limit(
            self.background_bytes,
            self.background_ratio,
            "dirty_background",
        );
        let wait = limit(self.bytes, self.ratio, "dirty");
        match (start, wait) {
            (Some((start, a)), Some((wait, b))) => {
                let wait = wait.trim_end_matches(" of memory");
                format!("write-back from {start} dirty, writers wait from {wait} ({a}, {b})")
            }
            (Some((start, a)), None) => format!("write-back from {start} dirty ({a})"),
            (None, Some((wait, b))) => format!("writers wait from {wait} dirty ({b})"),
            (None, None) => String::new(),
        }
    }
}
