//! What the kernel is using: mounted filesystems (`/proc/self/mountinfo`) and active swap areas
//! (`/proc/swaps`).
//!
//! ```
//! use iopath::discovery::mounts::parse_mountinfo;
//! let text = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n";
//! let mounts = parse_mountinfo(text);
//! assert_eq!(mounts[0].device.to_string(), "254:0");
//! assert_eq!(mounts[0].filesystem, "ext4");
//! assert_eq!(mounts[0].source, "/dev/vda");
//! ```

use super::HostView;
use super::host_view::TABLE_LIMIT_BYTES;
use super::sysfs::DeviceNumber;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Where the mount table of this process is.
pub const MOUNTINFO: &str = "/proc/self/mountinfo";
/// Reading [`MOUNTINFO`], as an error names the operation.
pub const READ_MOUNTINFO: &str = "read /proc/self/mountinfo";

/// One line of `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// `st_dev` of files on this mount (anonymous, major 0, for btrfs, tmpfs, NFS…).
    pub device: DeviceNumber,
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// Filesystem type as the kernel names it (`ext4`, `fuse.sshfs`, `nfs4`).
    pub filesystem: String,
    /// Mount source (`/dev/sda1`, `server:/export`, `tmpfs`).
    pub source: String,
    /// The mountinfo line it was read from.
    pub line: String,
}

/// Undoes the octal escapes (`\040` for a space) mountinfo and /proc/swaps use.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'\\'
            && index + 3 < bytes.len()
            && bytes[index + 1..index + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value = bytes[index + 1..index + 4]
                .iter()
                .fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                index += 4;
                continue;
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses the text of `/proc/self/mountinfo`; malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

/// One mountinfo line: `id parent major:minor root mount_point options [optional…] - type
/// source super_options`.
fn parse_mountinfo_line(line: &str) -> Option<Mount> {
    let (before, after) = line.split_once(" - ")?;
    let mut fields = before.split_whitespace();
    let _id = fields.next()?;
    let _parent = fields.next()?;
    let device = DeviceNumber::parse(fields.next()?)?;
    let _root = fields.next()?;
    let mount_point = PathBuf::from(unescape(fields.next()?));
    let mut after = after.split_whitespace();
    let filesystem = unescape(after.next()?);
    let source = unescape(after.next().unwrap_or("none"));
    Some(Mount {
        device,
        mount_point,
        filesystem,
        source,
        line: line.to_string(),
    })
}

/// The mounts this process sees.
pub fn read_mounts() -> io::Result<Vec<Mount>> {
    Ok(parse_mountinfo(&fs::read_to_string(MOUNTINFO)?))
}

/// The mounts of the machine `view` shows; `None` when its mount table cannot be read.
pub fn read_mounts_in(view: &HostView) -> Option<Vec<Mount>> {
    Some(parse_mountinfo(
        &view.read_text(Path::new(MOUNTINFO), TABLE_LIMIT_BYTES)?,
    ))
}

/// Keeps only `used` of the mount table in a recording (the mounts discovery looked at).
pub fn narrow_recording(view: &HostView, used: &[&Mount]) {
    let mut text = String::new();
    for mount in used {
        if !text.contains(&mount.line) {
            text.push_str(&mount.line);
            text.push('\n');
        }
    }
    view.narrow_recording(Path::new(MOUNTINFO), &text);
}

/// Parses `/proc/swaps` text into the paths of the active swap areas (devices or files).
pub fn parse_swaps(text: &str) -> Vec<PathBuf> {
    text.lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .map(|field| PathBuf::from(unescape(field)))
        .collect()
}

/// Active swap areas; empty when `/proc/swaps` cannot be read.
pub fn active_swaps() -> Vec<PathBuf> {
    fs::read_to_string("/proc/swaps")
        .map(|text| parse_swaps(&text))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn mountinfo_lines_parse_with_optional_fields_and_escapes() {
        let text = "\
36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k
garbage line
40 31 0:37 / /x rw - fuse.sshfs user@host:/dir rw
";
        let mounts = parse_mountinfo(text);
        assert_eq!(mounts.len(), 3);
        assert_eq!(
            mounts[0].device,
            DeviceNumber {
                major: 98,
                minor: 0
            }
        );
        assert_eq!(mounts[0].mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(mounts[0].filesystem, "ext3");
        assert_eq!(mounts[0].source, "/dev/root");
        assert!(mounts[1].device.is_anonymous());
        assert_eq!(mounts[2].filesystem, "fuse.sshfs");
        assert_eq!(mounts[2].source, "user@host:/dir");
    }

    #[test]
    fn the_real_mountinfo_has_a_root() {
        let mounts = read_mounts().unwrap();
        assert!(mounts.iter().any(|m| m.mount_point == Path::new("/")));
    }

    #[test]
    fn swaps_parse() {
        let text = "Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 8388604 0 100\n/swap\\040file file 1024 0 -2\n";
        assert_eq!(
            parse_swaps(text),
            vec![PathBuf::from("/dev/zram0"), PathBuf::from("/swap file")]
        );
        assert!(parse_swaps("Filename\tType\n").is_empty());
    }
}
