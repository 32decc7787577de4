//! The null device (`/dev/null`, character device 1:3) as a target: a sink that is never
//! opened (so never truncated or written). A job on it runs on the null engine: its writes are
//! accepted, its reads return at once with their buffers untouched, as fio's jobs on
//! `/dev/null` with `ioengine=null` do.
//!
//! ```
//! use iopath::targets::null_sink::is_null_device;
//! use std::path::Path;
//! assert!(is_null_device(Path::new("/dev/null")));
//! assert!(!is_null_device(Path::new("/dev/zero")));
//! assert!(!is_null_device(Path::new("/no/such/file")));
//! ```

use super::PathStat;
use std::path::Path;

/// The size a null sink has as a target, bytes (offsets of I/O on it fall below this).
pub const NULL_SINK_BYTES: u64 = 1 << 62;

/// Major and minor number of the null device on Linux.
const NULL_DEVICE: (u32, u32) = (1, 3);

/// Whether `path` leads to the null device (a character device numbered 1:3, whatever its
/// name), looked at without opening it.
pub fn is_null_device(path: &Path) -> bool {
    super::stat_path(path).is_ok_and(|stat| is_null_device_stat(&stat))
}

/// Whether `stat` (of a path, links followed) is that of the null device.
pub fn is_null_device_stat(stat: &PathStat) -> bool {
    stat.is_char_device() && (stat.device.major, stat.device.minor) == NULL_DEVICE
}
