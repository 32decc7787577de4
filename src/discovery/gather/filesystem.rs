//! A filesystem: its mount, its type, and what it stores data on.

use super::Gatherer;
use crate::discovery::facts::{
    FilesystemBelow, FilesystemFacts, MultiDeviceFacts, NetworkFilesystemFacts,
};
use crate::discovery::mounts::{self, Mount};
use crate::discovery::sysfs::Sysfs;
use std::path::Path;

/// The data profiles btrfs names as directories under `allocation/data/`.
const BTRFS_PROFILES: [&str; 9] = [
    "single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5", "raid6",
];

impl Gatherer<'_> {
    /// The filesystem holding `file` (found by `device` when given, else by the longest
    /// mount point above `directory`, the file's existing directory) and what lies below it.
    pub(super) fn filesystem(
        &mut self,
        file: &Path,
        directory: Option<&Path>,
        device: Option<&str>,
        type_name: Option<&str>,
        depth: u32,
    ) -> FilesystemFacts {
        let mount = self.mount_of(directory.unwrap_or(Path::new("/")), device);
        let type_name = type_name
            .map(str::to_string)
            .or_else(|| mount.as_ref().map(|m| m.filesystem.clone()));
        let family = type_name
            .as_deref()
            .and_then(|name| name.split('.').next())
            .unwrap_or("")
            .to_string();
        let below = match family.as_str() {
            "tmpfs" | "ramfs" | "hugetlbfs" => FilesystemBelow::Memory,
            "nfs" | "nfs4" | "cifs" | "smb3" => FilesystemBelow::Network(
                mount
                    .as_ref()
                    .map(|mount| Box::new(self.network_filesystem(&family, &mount.source, depth))),
            ),
            "btrfs" | "bcachefs" => match device.and_then(|d| self.multi_device(&family, d, depth))
            {
                Some(devices) => FilesystemBelow::Devices(devices),
                None => self.single_device(device, depth),
            },
            _ => self.single_device(device, depth),
        };
        FilesystemFacts {
            file: file.to_path_buf(),
            device: device.map(str::to_string),
            type_name,
            mount,
            below,
        }
    }

    fn single_device(&mut self, device: Option<&str>, depth: u32) -> FilesystemBelow {
        match device {
            Some(device) => FilesystemBelow::Device(Box::new(self.block_device(device, depth))),
            None => FilesystemBelow::Unseen,
        }
    }

    /// The devices of the btrfs or bcachefs filesystem that holds block device `device`,
    /// from `/sys/fs/TYPE/UUID/`: btrfs lists them in `devices/`, bcachefs links each
    /// `dev-N/block`. `None` where the filesystem is on one device or sysfs does not say.
    fn multi_device(&mut self, family: &str, device: &str, depth: u32) -> Option<MultiDeviceFacts> {
        let view = self.view();
        let base = Path::new("/sys/fs").join(family);
        let (uuid, names) = view.read_dir(&base).into_iter().find_map(|uuid| {
            let directory = base.join(&uuid);
            let names = if family == "btrfs" {
                view.read_dir(&directory.join("devices"))
            } else {
                view.read_dir_matching(&directory, "dev-")
                    .iter()
                    .filter_map(|member| view.resolve(&directory.join(member).join("block")))
                    .filter_map(|block| block.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect()
            };
            names
                .iter()
                .any(|name| name == device)
                .then_some((uuid, names))
        })?;
        if names.len() < 2 {
            return None;
        }
        let data_profile = (family == "btrfs")
            .then(|| {
                view.read_dir(&base.join(&uuid).join("allocation/data"))
                    .into_iter()
                    .find(|entry| BTRFS_PROFILES.contains(&entry.as_str()))
            })
            .flatten();
        let members = names
            .iter()
            .map(|name| self.block_device(name, depth + 1))
            .collect();
        Some(MultiDeviceFacts {
            uuid,
            data_profile,
            members,
        })
    }

    /// The mount holding files in `directory`: the one on `device` when known, else the
    /// longest mount point above the directory. A recording keeps only the mounts looked at.
    fn mount_of(&self, directory: &Path, device: Option<&str>) -> Option<Mount> {
        let view = self.view();
        let all = mounts::read_mounts_in(view)?;
        let length = |m: &Mount| m.mount_point.as_os_str().len();
        let number = device.and_then(|name| Sysfs::new(view).device_number(name));
        let relevant: Vec<&Mount> = all
            .iter()
            .filter(|m| Some(m.device) == number || directory.starts_with(&m.mount_point))
            .collect();
        mounts::narrow_recording(view, &relevant);
        if let Some(number) = number {
            let on_device: Vec<&Mount> = all.iter().filter(|m| m.device == number).collect();
            // The mount of that device that holds the file; else its shortest mount point
            // (the file's directory may be gone, and bind mounts repeat a device elsewhere).
            let holding = on_device
                .iter()
                .copied()
                .filter(|m| directory.starts_with(&m.mount_point))
                .max_by_key(|m| length(m));
            if let Some(mount) =
                holding.or_else(|| on_device.iter().copied().min_by_key(|m| length(m)))
            {
                return Some(mount.clone());
            }
        }
        all.iter()
            .filter(|m| directory.starts_with(&m.mount_point))
            .max_by_key(|m| length(m))
            .cloned()
    }

    fn network_filesystem(
        &mut self,
        family: &str,
        source: &str,
        depth: u32,
    ) -> NetworkFilesystemFacts {
        let (protocol, host, port) = if family.starts_with("nfs") {
            let host = source
                .rsplit_once(":/")
                .map(|(host, _)| host)
                .unwrap_or(source);
            ("nfs", host.trim_matches(['[', ']']).to_string(), 2049)
        } else {
            let host = source
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or("")
                .to_string();
            ("smb", host, 445)
        };
        NetworkFilesystemFacts {
            protocol: protocol.into(),
            source: source.to_string(),
            route: (!host.is_empty()).then(|| self.route(&host, port, depth)),
        }
    }
}
