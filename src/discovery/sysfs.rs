//! Block devices as sysfs shows them: the name behind a device number, the parent disk of a
//! partition, queue limits (block sizes, rotational), partitions and holders (device-mapper,
//! md RAID, LVM stacked on top).
//!
//! Everything is read through a [`HostView`] ([`Sysfs::new`]), so that a recorded machine can
//! stand in for this one; the free functions read this host. Every function degrades to
//! `None` or an empty list when sysfs is absent or the device is gone; nothing here fails
//! loudly, because these are descriptions, not checks.

use super::HostView;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where block devices are listed by name.
pub const CLASS_BLOCK: &str = "/sys/class/block";
/// Where block devices are listed by `major:minor`.
pub const DEV_BLOCK: &str = "/sys/dev/block";

/// A device number split into its major and minor parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceNumber {
    /// Major number (the driver).
    pub major: u32,
    /// Minor number (the instance).
    pub minor: u32,
}

impl DeviceNumber {
    /// Splits a `dev_t` (as in `st_dev` or `st_rdev`).
    pub fn from_dev_t(dev: u64) -> Self {
        DeviceNumber {
            major: libc::major(dev as libc::dev_t),
            minor: libc::minor(dev as libc::dev_t),
        }
    }

    /// Parses the `major:minor` form used by sysfs `dev` files and `/proc/self/mountinfo`.
    pub fn parse(text: &str) -> Option<Self> {
        let (major, minor) = text.trim().split_once(':')?;
        Some(DeviceNumber {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }

    /// Whether the number names no real device (major 0: tmpfs, overlay, btrfs subvolumes,
    /// NFS and other anonymous devices).
    pub fn is_anonymous(self) -> bool {
        self.major == 0
    }
}

impl fmt::Display for DeviceNumber {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:{}", self.major, self.minor)
    }
}

/// What a block device's request queue says about it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueFacts {
    /// `queue/logical_block_size`, bytes.
    pub logical_block_size: Option<u32>,
    /// `queue/physical_block_size`, bytes.
    pub physical_block_size: Option<u32>,
    /// `queue/rotational`: true for spinning disks.
    pub rotational: Option<bool>,
}

/// The sysfs directory of the block device `name`.
pub fn class_dir(name: &str) -> PathBuf {
    Path::new(CLASS_BLOCK).join(name)
}

/// Block devices as one machine's sysfs shows them.
#[derive(Clone, Copy, Debug)]
pub struct Sysfs<'a> {
    view: &'a HostView,
}

impl<'a> Sysfs<'a> {
    /// Block devices of the machine `view` shows.
    pub fn new(view: &'a HostView) -> Self {
        Sysfs { view }
    }

    /// The kernel name (`sda`, `nvme0n1p2`, `dm-0`, `loop3`) of the block device `number`.
    pub fn device_name(self, number: DeviceNumber) -> Option<String> {
        let link = self
            .view
            .read_link(&Path::new(DEV_BLOCK).join(number.to_string()))?;
        Some(link.file_name()?.to_string_lossy().into_owned())
    }

    /// The device number of the block device `name`, from its sysfs `dev` file.
    pub fn device_number(self, name: &str) -> Option<DeviceNumber> {
        DeviceNumber::parse(&self.view.attribute(&class_dir(name).join("dev"))?)
    }

    /// Whether `name` is a partition of another block device.
    pub fn is_partition(self, name: &str) -> bool {
        self.view.exists(&class_dir(name).join("partition"))
    }

    /// The whole disk `name` belongs to: its parent for a partition, itself otherwise.
    pub fn whole_disk(self, name: &str) -> String {
        if self.is_partition(name)
            && let Some(real) = self.view.resolve(&class_dir(name))
            && let Some(parent) = real.parent().and_then(Path::file_name)
        {
            return parent.to_string_lossy().into_owned();
        }
        name.to_string()
    }

    /// Block sizes and rotational flag of `name`, read from the whole disk's `queue/`
    /// directory (partitions have none of their own).
    pub fn queue_facts(self, name: &str) -> QueueFacts {
        let queue = class_dir(&self.whole_disk(name)).join("queue");
        let number = |attribute: &str| self.view.number::<u32>(&queue.join(attribute));
        QueueFacts {
            logical_block_size: number("logical_block_size"),
            physical_block_size: number("physical_block_size"),
            rotational: number("rotational").map(|value| value != 0),
        }
    }

    /// Names of the partitions of the disk `name` (`sda1`, `loop0p1`…), sorted.
    pub fn partitions(self, name: &str) -> Vec<String> {
        let directory = class_dir(name);
        self.view
            .read_dir(&directory)
            .into_iter()
            .filter(|entry| self.view.exists(&directory.join(entry).join("partition")))
            .collect()
    }

    /// Names of the devices stacked directly on `name` (device-mapper, md RAID, bcache…),
    /// sorted.
    pub fn holders(self, name: &str) -> Vec<String> {
        self.view.read_dir(&class_dir(name).join("holders"))
    }

    /// Names of the devices `name` is stacked on (`slaves/`), sorted.
    pub fn slaves(self, name: &str) -> Vec<String> {
        self.view.read_dir(&class_dir(name).join("slaves"))
    }

    /// The size of the block device `name`, bytes (`size` counts 512-byte sectors whatever the
    /// logical block size).
    pub fn size_bytes(self, name: &str) -> Option<u64> {
        self.view
            .number::<u64>(&class_dir(name).join("size"))?
            .checked_mul(512)
    }

    /// Whether the kernel marks block device `name` read-only (`ro`).
    pub fn is_read_only(self, name: &str) -> bool {
        self.view
            .attribute(&class_dir(name).join("ro"))
            .is_some_and(|ro| ro == "1")
    }
}

/// [`Sysfs::device_name`] on this host.
pub fn device_name(number: DeviceNumber) -> Option<String> {
    Sysfs::new(&HostView::live()).device_name(number)
}

/// [`Sysfs::device_number`] on this host.
pub fn device_number(name: &str) -> Option<DeviceNumber> {
    Sysfs::new(&HostView::live()).device_number(name)
}

/// [`Sysfs::is_partition`] on this host.
pub fn is_partition(name: &str) -> bool {
    Sysfs::new(&HostView::live()).is_partition(name)
}

/// [`Sysfs::whole_disk`] on this host.
pub fn whole_disk(name: &str) -> String {
    Sysfs::new(&HostView::live()).whole_disk(name)
}

/// [`Sysfs::queue_facts`] on this host.
pub fn queue_facts(name: &str) -> QueueFacts {
    Sysfs::new(&HostView::live()).queue_facts(name)
}

/// [`Sysfs::partitions`] on this host.
pub fn partitions(name: &str) -> Vec<String> {
    Sysfs::new(&HostView::live()).partitions(name)
}

/// [`Sysfs::holders`] on this host.
pub fn holders(name: &str) -> Vec<String> {
    Sysfs::new(&HostView::live()).holders(name)
}

/// [`Sysfs::is_read_only`] on this host.
pub fn is_read_only(name: &str) -> bool {
    Sysfs::new(&HostView::live()).is_read_only(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn device_numbers_parse_and_print() {
        let number = DeviceNumber::parse("254:16\n").unwrap();
        assert_eq!(
            number,
            DeviceNumber {
                major: 254,
                minor: 16
            }
        );
        assert_eq!(number.to_string(), "254:16");
        assert_eq!(DeviceNumber::parse("254"), None);
        assert_eq!(DeviceNumber::parse("a:b"), None);
        let dev = libc::makedev(259, 3);
        assert_eq!(
            DeviceNumber::from_dev_t(dev),
            DeviceNumber {
                major: 259,
                minor: 3
            }
        );
        assert!(
            DeviceNumber {
                major: 0,
                minor: 23
            }
            .is_anonymous()
        );
    }

    #[test]
    fn the_root_filesystem_device_is_found_when_block_backed() {
        let number = DeviceNumber::from_dev_t(fs::metadata("/").unwrap().dev());
        crate::support::skip_unless!(!number.is_anonymous(), "/ is not on a block device here");
        let name = device_name(number).expect("sysfs names the root device");
        assert_eq!(device_number(&name), Some(number));
        let facts = queue_facts(&name);
        assert!(facts.logical_block_size.unwrap() >= 512);
        assert!(facts.physical_block_size.unwrap() >= facts.logical_block_size.unwrap());
        assert!(facts.rotational.is_some());
    }

    #[test]
    fn unknown_devices_give_nothing() {
        assert_eq!(device_name(DeviceNumber { major: 0, minor: 0 }), None);
        assert_eq!(device_number("no-such-device"), None);
        assert!(partitions("no-such-device").is_empty());
        assert!(holders("no-such-device").is_empty());
        assert_eq!(queue_facts("no-such-device"), QueueFacts::default());
        assert_eq!(whole_disk("no-such-device"), "no-such-device");
    }
}
