//! The block layer: a block device and what it is stacked on (partition, device-mapper, md
//! RAID, loop and its backing file), down to the disks, with their queue limits.
//!
//! Layouts: Documentation/ABI/stable/sysfs-block (`slaves/`, `holders/`, `queue/`),
//! Documentation/ABI/testing/sysfs-block-dm (`dm/name`, `dm/uuid`),
//! Documentation/admin-guide/md.rst (`md/level`, `md/raid_disks`, `md/chunk_size`),
//! Documentation/ABI/testing/sysfs-block-loop (`loop/backing_file`, `loop/dio`).

use super::{Gatherer, MAX_DEPTH};
use crate::discovery::facts::{BlockFacts, BlockNode, DiskFacts, LoopFacts, MdFacts};
use crate::discovery::sysfs::{Sysfs, class_dir};
use crate::result::QueueLimits;
use std::path::Path;

/// The active choice in a sysfs list (`none [mq-deadline] kyber`).
pub fn active_choice(line: &str) -> Option<String> {
    let start = line.find('[')?;
    let end = line[start..].find(']')? + start;
    Some(line[start + 1..end].to_string())
}

/// The members md lists under its own directory `md`: `dev-sdg` → `sdg`, sorted.
fn md_members(view: &crate::discovery::HostView, md: &Path) -> Vec<String> {
    view.read_dir_matching(md, "dev-")
        .into_iter()
        .filter_map(|entry| entry.strip_prefix("dev-").map(str::to_string))
        .collect()
}

impl Gatherer<'_> {
    /// Block device `name` and everything below it.
    pub(super) fn block_device(&mut self, name: &str, depth: u32) -> BlockFacts {
        let facts = |node| BlockFacts {
            name: name.to_string(),
            node,
        };
        if depth > MAX_DEPTH || !self.first_visit(&format!("block:{name}")) {
            return facts(BlockNode::TooDeep);
        }
        let view = self.view();
        let sysfs = Sysfs::new(view);
        let directory = class_dir(name);
        if !view.is_dir(&directory) {
            return facts(BlockNode::NotFound);
        }
        if sysfs.is_partition(name) {
            let disk = sysfs.whole_disk(name);
            let node = BlockNode::Partition {
                number: view.attribute(&directory.join("partition")),
                start_bytes: view.number::<u64>(&directory.join("start")).unwrap_or(0) * 512,
                size_bytes: view.number::<u64>(&directory.join("size")).unwrap_or(0) * 512,
                disk: Box::new(self.block_device(&disk, depth)),
            };
            return facts(node);
        }
        let slaves = sysfs.slaves(name);
        if view.is_dir(&directory.join("dm")) {
            let dm = directory.join("dm");
            let node = BlockNode::DeviceMapper {
                mapped_name: view
                    .attribute(&dm.join("name"))
                    .unwrap_or_else(|| name.into()),
                uuid: view.attribute(&dm.join("uuid")).unwrap_or_default(),
                queue: self.queue_limits(name),
                slaves: self.members(&slaves, depth),
            };
            return facts(node);
        }
        if view.is_dir(&directory.join("md")) {
            let md = directory.join("md");
            // A tree without `slaves/` (captures of other tools) still names each member in
            // md's own `dev-NAME` directories (the `rdN` slots alias them).
            let slaves = if slaves.is_empty() {
                md_members(view, &md)
            } else {
                slaves
            };
            let node = BlockNode::Md(MdFacts {
                level: view
                    .attribute(&md.join("level"))
                    .unwrap_or_else(|| "md".into()),
                chunk_bytes: view.number(&md.join("chunk_size")),
                raid_disks: view.number(&md.join("raid_disks")),
                degraded: view.number(&md.join("degraded")),
                layout: view.number(&md.join("layout")),
                queue: self.queue_limits(name),
                members: self.members(&slaves, depth),
            });
            return facts(node);
        }
        if view.is_dir(&directory.join("loop")) {
            return facts(BlockNode::Loop(self.loop_device(name, depth)));
        }
        if name.starts_with("zram") {
            let algorithm = view
                .attribute(&directory.join("comp_algorithm"))
                .map(|line| active_choice(&line).unwrap_or(line));
            return facts(BlockNode::Zram { algorithm });
        }
        if name.starts_with("ram") && !view.exists(&directory.join("device")) {
            return facts(BlockNode::RamDisk);
        }
        if name.starts_with("nbd") {
            let node = BlockNode::Nbd {
                backend: view.attribute(&directory.join("backend")),
                disk: self.disk(name),
            };
            return facts(node);
        }
        if !slaves.is_empty() {
            let node = BlockNode::Stacked {
                slaves: self.members(&slaves, depth),
            };
            return facts(node);
        }
        let disk = self.disk(name);
        let transport = self.transport(name, depth);
        facts(BlockNode::Disk {
            disk,
            transport: Box::new(transport),
        })
    }

    fn members(&mut self, names: &[String], depth: u32) -> Vec<BlockFacts> {
        names
            .iter()
            .map(|name| self.block_device(name, depth + 1))
            .collect()
    }

    fn loop_device(&mut self, name: &str, depth: u32) -> LoopFacts {
        let view = self.view();
        let directory = class_dir(name).join("loop");
        let backing_file = view.attribute(&directory.join("backing_file"));
        let mut facts = LoopFacts {
            backing_file: backing_file.clone(),
            direct: view
                .attribute(&directory.join("dio"))
                .is_some_and(|dio| dio == "1"),
            offset_bytes: view.number(&directory.join("offset")).unwrap_or(0),
            queue: self.queue_limits(name),
            backing: None,
            backing_error: None,
        };
        let Some(backing) = backing_file else {
            return facts;
        };
        if backing.ends_with("(deleted)") {
            return facts;
        }
        let file = Path::new(&backing);
        let state = self.machine.system().file_state(file, false);
        match state.device {
            Some(number) if state.exists => {
                let device = if number.is_anonymous() {
                    None
                } else {
                    Sysfs::new(view).device_name(number)
                };
                facts.backing = Some(Box::new(self.filesystem(
                    file,
                    state.directory.as_deref(),
                    device.as_deref(),
                    None,
                    depth + 1,
                )));
            }
            _ => facts.backing_error = Some(format!("backing file {backing} is not there")),
        }
        facts
    }

    /// The disk at the bottom of a stack, with its queue limits.
    fn disk(&self, name: &str) -> DiskFacts {
        let view = self.view();
        let directory = class_dir(name);
        let device = directory.join("device");
        DiskFacts {
            vendor: view
                .attribute(&device.join("vendor"))
                .filter(|vendor| !vendor.starts_with("0x")),
            model: view.attribute(&device.join("model")),
            firmware: view
                .attribute(&device.join("firmware_rev"))
                .or_else(|| view.attribute(&device.join("rev"))),
            size_bytes: view.number::<u64>(&directory.join("size")).unwrap_or(0) * 512,
            queue: self.queue_limits(name),
        }
    }

    /// The queue limits and settings of block device `name` (a partition reads its disk's).
    pub(super) fn queue_limits(&self, name: &str) -> QueueLimits {
        let view = self.view();
        let disk = Sysfs::new(view).whole_disk(name);
        let directory = class_dir(&disk);
        let queue = directory.join("queue");
        let hardware_queues = view
            .read_dir(&directory.join("mq"))
            .iter()
            .filter(|entry| entry.chars().all(|c| c.is_ascii_digit()))
            .count() as u32;
        QueueLimits {
            scheduler: view
                .attribute(&queue.join("scheduler"))
                .map(|line| active_choice(&line).unwrap_or(line)),
            nr_requests: view.number(&queue.join("nr_requests")),
            hardware_queues: (hardware_queues > 0).then_some(hardware_queues),
            hardware_queue_depth: view.number(&directory.join("mq/0/nr_tags")),
            device_queue_depth: view.number(&directory.join("device/queue_depth")),
            rotational: view
                .number::<u8>(&queue.join("rotational"))
                .map(|value| value != 0),
            write_cache: view.attribute(&queue.join("write_cache")),
            max_request_bytes: view
                .number::<u64>(&queue.join("max_sectors_kb"))
                .map(|kib| kib * 1024),
            read_ahead_bytes: view
                .number::<u64>(&queue.join("read_ahead_kb"))
                .map(|kib| kib * 1024),
            writeback_throttle_latency_us: view.number(&queue.join("wbt_lat_usec")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_choice_is_in_brackets() {
        assert_eq!(
            active_choice("none [mq-deadline] kyber bfq"),
            Some("mq-deadline".into())
        );
        assert_eq!(active_choice("none"), None);
        assert_eq!(active_choice("lzo [zstd]"), Some("zstd".into()));
    }
}
