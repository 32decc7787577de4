//! The block layer part of a path, from what discovery gathered: a block device, what it is
//! stacked on (partition, device-mapper, md RAID, loop and its backing file), and the disk at
//! the bottom with its queue limits; each member of a stack carries its share of the traffic.

use super::links;
use super::path::{Share, Walker};
use crate::discovery::facts::{BlockFacts, BlockNode, DiskFacts, LoopFacts, MdFacts};
use crate::result::{HopCapacity, HopKind};
use crate::units::format_bytes;

/// Share of each member of an md array of `level` with `members` devices: reads spread over
/// every member; writes spread over the data members, full on each mirror.
pub fn md_member_share(level: &str, members: usize, share: Share) -> Share {
    let n = members.max(1) as f64;
    let write_fraction = match level {
        "raid1" => 1.0,
        "raid10" => (2.0 / n).min(1.0),
        "raid4" | "raid5" => 1.0 / (n - 1.0).max(1.0),
        "raid6" => 1.0 / (n - 2.0).max(1.0),
        _ => 1.0 / n,
    };
    Share {
        read: share.read / n,
        write: share.write * write_fraction,
    }
}

/// What a device-mapper device is, from the prefix of its `dm/uuid`.
fn mapper_kind(uuid: &str) -> &'static str {
    match uuid.split('-').next().unwrap_or("") {
        "LVM" => "LVM logical volume",
        "CRYPT" => "dm-crypt",
        "mpath" => "multipath",
        "VDO" => "VDO (deduplication and compression)",
        part if part.starts_with("part") => "partition mapping",
        _ => "device-mapper",
    }
}

impl Walker<'_> {
    /// Adds block device `block` and everything below it.
    pub fn block(&mut self, block: &BlockFacts, depth: u32, share: Share) {
        let name = block.name.as_str();
        let key = format!("block:{name}");
        match &block.node {
            BlockNode::NotFound => self.note(format!("{name}: not found in /sys/class/block")),
            BlockNode::TooDeep => self.note(format!(
                "{name}: the stack goes deeper than iopath follows, loops, or reaches this device a second time"
            )),
            BlockNode::Partition {
                number,
                start_bytes,
                size_bytes,
                disk,
            } => {
                self.push(
                    key,
                    HopKind::Partition,
                    name,
                    format!(
                        "partition {} of {}, {} from byte {start_bytes}",
                        number.as_deref().unwrap_or("?"),
                        disk.name,
                        format_bytes(*size_bytes)
                    ),
                    depth,
                    share,
                    None,
                );
                self.block(disk, depth, share);
            }
            BlockNode::DeviceMapper {
                mapped_name,
                uuid,
                queue,
                slaves,
            } => {
                let what = mapper_kind(uuid);
                let names: Vec<&str> = slaves.iter().map(|s| s.name.as_str()).collect();
                let mut description = format!("{what} {mapped_name}");
                if !names.is_empty() {
                    description.push_str(&format!(" over {}", names.join(", ")));
                }
                self.push(key, HopKind::DeviceMapper, name, description, depth, share, None)
                    .queue = Some(queue.clone());
                if names.len() > 1 {
                    self.note(if what == "multipath" {
                        format!(
                            "{name}: I/O assumed spread evenly over the paths {} (round-robin; the path groups and their priorities are not in sysfs)",
                            names.join(", ")
                        )
                    } else {
                        format!(
                            "{name}: I/O assumed spread evenly over {} (the mapping table is not in sysfs)",
                            names.join(", ")
                        )
                    });
                }
                if what == "dm-crypt" {
                    self.note(format!(
                        "{name}: dm-crypt encrypts and decrypts every byte on the CPU; watch the CPU figures"
                    ));
                }
                let member_share = share.split(slaves.len());
                for slave in slaves {
                    self.block(slave, depth + 1, member_share);
                }
            }
            BlockNode::Md(md) => self.md_raid(name, md, depth, share),
            BlockNode::Loop(facts) => self.loop_device(name, facts, depth, share),
            BlockNode::Zram { algorithm } => {
                self.push(
                    key,
                    HopKind::Memory,
                    name,
                    format!(
                        "compressed RAM ({}); speed depends on the CPU and the data",
                        algorithm.as_deref().unwrap_or("unknown")
                    ),
                    depth,
                    share,
                    None,
                );
            }
            BlockNode::RamDisk => {
                let capacity = self.memory_capacity("RAM disk");
                self.push(key, HopKind::Memory, name, "RAM disk", depth, share, capacity);
            }
            BlockNode::Nbd { backend, disk } => {
                self.disk(name, disk, depth, share);
                self.push(
                    format!("transport:{name}"),
                    HopKind::Transport,
                    "NBD client",
                    backend.as_deref().map_or_else(
                        || "kernel NBD client".to_string(),
                        |backend| format!("kernel NBD client ({backend})"),
                    ),
                    depth,
                    share,
                    None,
                )
                .protocol = Some("nbd".into());
                self.note(format!(
                    "{name}: a kernel NBD device; its server and the network to it are not visible from sysfs: declare them with --link or --path"
                ));
            }
            BlockNode::Stacked { slaves } => {
                // Another stacking driver (bcache, drbd…): show it and follow its members.
                let names: Vec<&str> = slaves.iter().map(|s| s.name.as_str()).collect();
                self.push(
                    key,
                    HopKind::Transport,
                    name,
                    format!("stacked on {}", names.join(", ")),
                    depth,
                    share,
                    None,
                );
                let member_share = share.split(slaves.len());
                for slave in slaves {
                    self.block(slave, depth + 1, member_share);
                }
            }
            BlockNode::Disk { disk, transport } => {
                self.disk(name, disk, depth, share);
                self.transport(name, transport, depth, share);
            }
        }
    }

    fn md_raid(&mut self, name: &str, md: &MdFacts, depth: u32, share: Share) {
        let mut description = format!("{} over {} devices", md.level, md.members.len());
        if let Some(chunk) = md.chunk_bytes.filter(|c| *c > 0) {
            description.push_str(&format!(", chunk {}", format_bytes(chunk)));
        }
        self.push(
            format!("block:{name}"),
            HopKind::MdRaid,
            name,
            description,
            depth,
            share,
            None,
        )
        .queue = Some(md.queue.clone());
        if let Some(missing) = md.degraded.filter(|d| *d > 0) {
            self.note(format!(
                "{name}: degraded, {missing} member(s) missing: reads of their data are rebuilt from the others"
            ));
        }
        let member_share = md_member_share(&md.level, md.members.len(), share);
        for member in &md.members {
            self.block(member, depth + 1, member_share);
        }
    }

    fn loop_device(&mut self, name: &str, facts: &LoopFacts, depth: u32, share: Share) {
        let mut description = match &facts.backing_file {
            Some(file) => format!("over {file}"),
            None => "no backing file".to_string(),
        };
        if facts.offset_bytes > 0 {
            description.push_str(&format!(" from byte {}", facts.offset_bytes));
        }
        description.push_str(if facts.direct {
            ", direct I/O to the file"
        } else {
            ", buffered through the host page cache"
        });
        self.push(
            format!("block:{name}"),
            HopKind::Loop,
            name,
            description,
            depth,
            share,
            None,
        )
        .queue = Some(facts.queue.clone());
        let Some(backing) = &facts.backing_file else {
            return;
        };
        if backing.ends_with("(deleted)") {
            self.note(format!(
                "{name}: its backing file {backing} was removed; the hops below it cannot be seen"
            ));
            return;
        }
        if !facts.direct {
            // Buffered loop I/O goes through the page cache of the backing file, whatever the
            // I/O above the loop device asked for.
            let capacity = self.memory_capacity("page cache");
            self.push(
                format!("{}:{name}", super::path::PAGE_CACHE_KEY),
                HopKind::PageCache,
                "page cache",
                format!("of {backing}: {name} does buffered I/O, so even O_DIRECT reads may be served from memory"),
                depth + 1,
                share,
                capacity,
            );
        }
        match (&facts.backing, &facts.backing_error) {
            (Some(filesystem), _) => self.filesystem(filesystem, depth + 1, share),
            (None, Some(error)) => self.note(format!("{name}: {error}")),
            (None, None) => {}
        }
    }

    /// The disk at the bottom of a stack, with its queue limits.
    fn disk(&mut self, name: &str, disk: &DiskFacts, depth: u32, share: Share) {
        let mut parts = Vec::new();
        let identity: Vec<&str> = disk
            .vendor
            .iter()
            .chain(disk.model.iter())
            .map(String::as_str)
            .collect();
        if !identity.is_empty() {
            parts.push(identity.join(" "));
        }
        if let Some(firmware) = &disk.firmware {
            parts.push(format!("firmware {firmware}"));
        }
        parts.push(format_bytes(disk.size_bytes));
        self.push(
            format!("block:{name}"),
            HopKind::Disk,
            name,
            parts.join(", "),
            depth,
            share,
            None,
        )
        .queue = Some(disk.queue.clone());
    }
}

/// The capacity a catalog entry gives a discovered hop.
pub(super) fn capacity_of(entry: &links::LinkEntry) -> HopCapacity {
    HopCapacity {
        payload_bytes_per_second: entry.payload_bytes_per_second(),
        iops: entry.iops,
        duplex: entry.duplex,
        catalog_name: Some(entry.name.clone()),
        variant: entry.variant.clone(),
        derivation: format!("{} ({})", entry.derivation(), entry.source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_members_carry_their_share() {
        let whole = Share {
            read: 1.0,
            write: 1.0,
        };
        assert_eq!(
            md_member_share("raid1", 2, whole),
            Share {
                read: 0.5,
                write: 1.0
            }
        );
        assert_eq!(
            md_member_share("raid0", 4, whole),
            Share {
                read: 0.25,
                write: 0.25
            }
        );
        let raid5 = md_member_share("raid5", 5, whole);
        assert_eq!(raid5.write, 0.25);
        assert_eq!(md_member_share("raid6", 6, whole).write, 0.25);
        assert_eq!(md_member_share("raid10", 4, whole).write, 0.5);
        assert_eq!(mapper_kind("mpath-3600a0b80"), "multipath");
        assert_eq!(mapper_kind("CRYPT-LUKS2-abc"), "dm-crypt");
        assert_eq!(mapper_kind("part1-mpath-x"), "partition mapping");
    }
}
