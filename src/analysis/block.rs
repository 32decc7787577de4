//! The block layer part of a path: a block device, what it is stacked on (partition,
//! device-mapper, md RAID, loop and its backing file), the disk at the bottom, its transport
//! and the PCI Express links of its controller, all from sysfs.

use super::links;
use super::path::{Share, Walker};
use crate::result::{HopCapacity, HopKind, QueueLimits};
use crate::targets::sysfs;
use std::fs;
use std::path::{Path, PathBuf};

/// How deep a stack may go before iopath stops following it (a loop over a file on a loop
/// over a file…).
const MAX_DEPTH: u32 = 16;

fn class_dir(name: &str) -> PathBuf {
    Path::new("/sys/class/block").join(name)
}

/// A small sysfs attribute, trimmed; `None` when absent or empty.
pub(super) fn read_attribute(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn read_number<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_attribute(path)?.parse().ok()
}

/// Names in a sysfs directory (`slaves/`, `mq/`), sorted.
fn entries(path: &Path) -> Vec<String> {
    let Ok(list) = fs::read_dir(path) else {
        return Vec::new();
    };
    let mut names: Vec<String> = list
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The active scheduler in a `queue/scheduler` line (`none [mq-deadline] kyber`).
pub fn active_scheduler(line: &str) -> Option<String> {
    let start = line.find('[')?;
    let end = line[start..].find(']')? + start;
    Some(line[start + 1..end].to_string())
}

/// The queue limits and settings of block device `name` (a partition reads its disk's).
pub fn queue_limits(name: &str) -> QueueLimits {
    let disk = sysfs::whole_disk(name);
    let directory = class_dir(&disk);
    let queue = directory.join("queue");
    let hardware_queues = entries(&directory.join("mq"))
        .iter()
        .filter(|entry| entry.chars().all(|c| c.is_ascii_digit()))
        .count() as u32;
    QueueLimits {
        scheduler: read_attribute(&queue.join("scheduler"))
            .and_then(|line| active_scheduler(&line).or(Some(line))),
        nr_requests: read_number(&queue.join("nr_requests")),
        hardware_queues: (hardware_queues > 0).then_some(hardware_queues),
        hardware_queue_depth: read_number(&directory.join("mq/0/nr_tags")),
        device_queue_depth: read_number(&directory.join("device/queue_depth")),
        rotational: read_number::<u8>(&queue.join("rotational")).map(|value| value != 0),
        write_cache: read_attribute(&queue.join("write_cache")),
        max_request_bytes: read_number::<u64>(&queue.join("max_sectors_kb")).map(|kib| kib * 1024),
    }
}

/// Splits `share` evenly over `count` devices below a stacking device.
fn split(share: Share, count: usize) -> Share {
    let count = count.max(1) as f64;
    Share {
        read: share.read / count,
        write: share.write / count,
    }
}

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

impl Walker<'_> {
    /// Adds block device `name` and everything below it.
    pub fn block_device(&mut self, name: &str, depth: u32, share: Share) {
        let key = format!("block:{name}");
        if depth > MAX_DEPTH || !self.first_visit(&key) {
            self.note(format!(
                "{name}: the stack goes deeper than iopath follows, or loops"
            ));
            return;
        }
        let directory = class_dir(name);
        if !directory.exists() {
            self.note(format!("{name}: not found in /sys/class/block"));
            return;
        }
        if sysfs::is_partition(name) {
            let disk = sysfs::whole_disk(name);
            let number = read_attribute(&directory.join("partition")).unwrap_or_default();
            let start = read_number::<u64>(&directory.join("start")).unwrap_or(0) * 512;
            let size = read_number::<u64>(&directory.join("size")).unwrap_or(0) * 512;
            self.push(
                key,
                HopKind::Partition,
                name,
                format!(
                    "partition {number} of {disk}, {} from byte {start}",
                    crate::units::format_bytes(size)
                ),
                depth,
                share,
                None,
            );
            self.block_device(&disk, depth, share);
            return;
        }
        let slaves = entries(&directory.join("slaves"));
        if directory.join("dm").is_dir() {
            self.device_mapper(name, &slaves, depth, share);
            return;
        }
        if directory.join("md").is_dir() {
            self.md_raid(name, &slaves, depth, share);
            return;
        }
        if directory.join("loop").is_dir() {
            self.loop_device(name, depth, share);
            return;
        }
        if name.starts_with("zram") {
            let algorithm = read_attribute(&directory.join("comp_algorithm"))
                .and_then(|line| active_scheduler(&line).or(Some(line)))
                .unwrap_or_else(|| "unknown".into());
            self.push(
                key,
                HopKind::Memory,
                name,
                format!("compressed RAM ({algorithm}); speed depends on the CPU and the data"),
                depth,
                share,
                None,
            );
            return;
        }
        if name.starts_with("ram") && !directory.join("device").exists() {
            let capacity = self.memory_capacity("RAM disk");
            self.push(
                key,
                HopKind::Memory,
                name,
                "RAM disk",
                depth,
                share,
                capacity,
            );
            return;
        }
        if name.starts_with("nbd") {
            let backend = read_attribute(&directory.join("backend"));
            self.disk(name, depth, share);
            self.push(
                format!("transport:{name}"),
                HopKind::Transport,
                "NBD client",
                backend.map_or_else(
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
            return;
        }
        if !slaves.is_empty() {
            // Another stacking driver (bcache, drbd…): show it and follow its members.
            self.push(
                key,
                HopKind::Transport,
                name,
                format!("stacked on {}", slaves.join(", ")),
                depth,
                share,
                None,
            );
            let member_share = split(share, slaves.len());
            for slave in &slaves {
                self.block_device(slave, depth + 1, member_share);
            }
            return;
        }
        self.disk(name, depth, share);
        self.transport(name, depth, share);
    }

    fn device_mapper(&mut self, name: &str, slaves: &[String], depth: u32, share: Share) {
        let directory = class_dir(name).join("dm");
        let mapped = read_attribute(&directory.join("name")).unwrap_or_else(|| name.into());
        let uuid = read_attribute(&directory.join("uuid")).unwrap_or_default();
        let what = match uuid.split('-').next().unwrap_or("") {
            "LVM" => "LVM logical volume",
            "CRYPT" => "dm-crypt",
            "mpath" => "multipath",
            "VDO" => "VDO (deduplication and compression)",
            part if part.starts_with("part") => "partition mapping",
            _ => "device-mapper",
        };
        let mut description = format!("{what} {mapped}");
        if !slaves.is_empty() {
            description.push_str(&format!(" over {}", slaves.join(", ")));
        }
        self.push(
            format!("block:{name}"),
            HopKind::DeviceMapper,
            name,
            description,
            depth,
            share,
            None,
        )
        .queue = Some(queue_limits(name));
        if slaves.len() > 1 {
            self.note(format!(
                "{name}: I/O assumed spread evenly over {} (the mapping table is not in sysfs)",
                slaves.join(", ")
            ));
        }
        let member_share = split(share, slaves.len());
        for slave in slaves {
            self.block_device(slave, depth + 1, member_share);
        }
    }

    fn md_raid(&mut self, name: &str, slaves: &[String], depth: u32, share: Share) {
        let directory = class_dir(name).join("md");
        let level = read_attribute(&directory.join("level")).unwrap_or_else(|| "md".into());
        let chunk = read_number::<u64>(&directory.join("chunk_size"));
        let mut description = format!("{level} over {} devices", slaves.len());
        if let Some(chunk) = chunk.filter(|c| *c > 0) {
            description.push_str(&format!(", chunk {}", crate::units::format_bytes(chunk)));
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
        .queue = Some(queue_limits(name));
        let member_share = md_member_share(&level, slaves.len(), share);
        for slave in slaves {
            self.block_device(slave, depth + 1, member_share);
        }
    }

    fn loop_device(&mut self, name: &str, depth: u32, share: Share) {
        let directory = class_dir(name).join("loop");
        let backing = read_attribute(&directory.join("backing_file"));
        let direct = read_attribute(&directory.join("dio")).is_some_and(|dio| dio == "1");
        let offset = read_number::<u64>(&directory.join("offset")).unwrap_or(0);
        let mut description = match &backing {
            Some(file) => format!("over {file}"),
            None => "no backing file".to_string(),
        };
        if offset > 0 {
            description.push_str(&format!(" from byte {offset}"));
        }
        description.push_str(if direct {
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
        .queue = Some(queue_limits(name));
        let Some(backing) = backing else {
            return;
        };
        if backing.ends_with("(deleted)") {
            self.note(format!(
                "{name}: its backing file {backing} was removed; the hops below it cannot be seen"
            ));
            return;
        }
        let file = PathBuf::from(&backing);
        if !direct {
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
        match fs::metadata(&file) {
            Ok(metadata) => {
                use std::os::unix::fs::MetadataExt;
                let device = crate::targets::sysfs::DeviceNumber::from_dev_t(metadata.dev());
                let device_name = if device.is_anonymous() {
                    None
                } else {
                    sysfs::device_name(device)
                };
                self.filesystem(&file, device_name.as_deref(), None, depth + 1, share);
            }
            Err(error) => self.note(format!("{name}: backing file {backing}: {error}")),
        }
    }

    /// The disk at the bottom of a stack, with its queue limits.
    fn disk(&mut self, name: &str, depth: u32, share: Share) {
        let directory = class_dir(name);
        let device = directory.join("device");
        let vendor = read_attribute(&device.join("vendor")).filter(|v| !v.starts_with("0x"));
        let model = read_attribute(&device.join("model"));
        let size = read_number::<u64>(&directory.join("size")).unwrap_or(0) * 512;
        let mut parts = Vec::new();
        let identity: Vec<String> = vendor.into_iter().chain(model).collect();
        if !identity.is_empty() {
            parts.push(identity.join(" "));
        }
        parts.push(crate::units::format_bytes(size));
        let queue = queue_limits(name);
        self.push(
            format!("block:{name}"),
            HopKind::Disk,
            name,
            parts.join(", "),
            depth,
            share,
            None,
        )
        .queue = Some(queue);
    }

    /// How the disk `name` is attached, and the PCI Express links of its controller.
    fn transport(&mut self, name: &str, depth: u32, share: Share) {
        let directory = class_dir(name);
        let Ok(real) = fs::canonicalize(&directory) else {
            return;
        };
        let text = real.to_string_lossy().into_owned();
        let components: Vec<&str> = text.split('/').collect();
        let key = format!("transport:{name}");
        if name.starts_with("nvme") {
            self.nvme(name, depth, share);
            return;
        }
        if let Some(host) = components.iter().find_map(|c| {
            c.strip_prefix("host")
                .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
        }) {
            self.scsi(name, host, &components, &real, depth, share);
            return;
        }
        if components.iter().any(|c| c.starts_with("virtio")) {
            self.push(
                key,
                HopKind::Transport,
                "virtio-blk",
                "paravirtual disk: its speed is set by the hypervisor and the host's storage",
                depth,
                share,
                None,
            );
            self.note(format!(
                "{name}: a virtual disk; the host's storage path is not visible from this guest: declare it with --path"
            ));
            self.pci_links(&real, depth, share);
            return;
        }
        if components.iter().any(|c| c.starts_with("mmc")) {
            self.push(key, HopKind::Transport, "MMC/SD", "", depth, share, None);
            self.pci_links(&real, depth, share);
            return;
        }
        if text.contains("/virtual/") {
            self.note(format!(
                "{name}: a virtual block device with no hardware below it"
            ));
            return;
        }
        self.push(
            key,
            HopKind::Transport,
            "block driver",
            text,
            depth,
            share,
            None,
        );
        self.pci_links(&real, depth, share);
    }

    fn nvme(&mut self, name: &str, depth: u32, share: Share) {
        let controller_link = class_dir(name).join("device");
        let controller = fs::canonicalize(&controller_link).ok();
        let attribute = |file: &str| {
            controller
                .as_ref()
                .and_then(|dir| read_attribute(&dir.join(file)))
        };
        let transport = attribute("transport").unwrap_or_else(|| "unknown".into());
        let controller_name = controller
            .as_ref()
            .and_then(|dir| dir.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "controller".into());
        let queues = attribute("queue_count").and_then(|q| q.parse::<u32>().ok());
        let mut description = format!("NVMe over {transport}, controller {controller_name}");
        if let Some(model) = attribute("model") {
            description.push_str(&format!(" ({model})"));
        }
        if let Some(queues) = queues {
            description.push_str(&format!(", {} I/O queues", queues.saturating_sub(1)));
        }
        let protocol = match transport.as_str() {
            "tcp" => Some("nvme-tcp"),
            _ => None,
        };
        let label = match transport.as_str() {
            "pcie" => "NVMe".to_string(),
            "tcp" => "NVMe/TCP".to_string(),
            "rdma" => "NVMe/RDMA".to_string(),
            "fc" => "NVMe/FC".to_string(),
            other => format!("NVMe ({other})"),
        };
        self.push(
            format!("transport:{name}"),
            HopKind::Transport,
            label,
            description,
            depth,
            share,
            None,
        )
        .protocol = protocol.map(str::to_string);
        match transport.as_str() {
            "pcie" => {
                if let Some(controller) = &controller {
                    self.pci_links(controller, depth, share);
                }
            }
            "tcp" | "rdma" => {
                let address = attribute("address").unwrap_or_default();
                let field = |key: &str| {
                    address
                        .split(',')
                        .find_map(|part| part.trim().strip_prefix(key))
                        .map(str::to_string)
                };
                match (field("traddr="), field("trsvcid=")) {
                    (Some(host), port) => {
                        let port = port.and_then(|p| p.parse().ok()).unwrap_or(4420);
                        self.route(&host, port, protocol, depth, share);
                    }
                    _ => self.note(format!("{name}: the NVMe-oF target address is not in sysfs")),
                }
            }
            _ => self.note(format!(
                "{name}: NVMe over {transport}: the link to the controller is not visible; declare it with --link"
            )),
        }
    }

    fn scsi(
        &mut self,
        name: &str,
        host: &str,
        components: &[&str],
        real: &Path,
        depth: u32,
        share: Share,
    ) {
        let driver = read_attribute(
            &Path::new("/sys/class/scsi_host")
                .join(format!("host{host}"))
                .join("proc_name"),
        )
        .unwrap_or_else(|| "scsi".into());
        let key = format!("transport:{name}");
        let has = |prefix: &str| components.iter().any(|c| c.starts_with(prefix));
        if let Some(port) = components.iter().find_map(|c| {
            c.strip_prefix("ata")
                .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
        }) {
            let link = Path::new("/sys/class/ata_link").join(format!("link{port}"));
            let speed = read_attribute(&link.join("sata_spd"));
            let entry = speed.as_deref().and_then(sata_from_speed);
            let description = format!(
                "ATA port {port} ({driver}), link at {}",
                speed.as_deref().unwrap_or("unknown speed")
            );
            let capacity = entry.as_ref().map(capacity_of);
            self.push(
                key,
                HopKind::DeviceLink,
                entry.map_or_else(|| "SATA".to_string(), |e| e.name),
                description,
                depth,
                share,
                capacity,
            )
            .protocol = Some("ata".into());
        } else if has("end_device-") || has("port-") {
            let port_dir = sas_port_dir(real);
            let rates: Vec<String> = port_dir
                .as_deref()
                .map(|dir| {
                    entries(dir)
                        .into_iter()
                        .filter(|entry| entry.starts_with("phy-"))
                        .filter_map(|phy| {
                            read_attribute(
                                &Path::new("/sys/class/sas_phy")
                                    .join(&phy)
                                    .join("negotiated_linkrate"),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let entry = rates
                .first()
                .and_then(|rate| sas_from_rate(rate, rates.len() as u32));
            let description = format!(
                "SAS ({driver}), {} phy(s) at {}",
                rates.len(),
                rates.first().map_or("unknown rate", String::as_str)
            );
            let capacity = entry.as_ref().map(capacity_of);
            self.push(
                key,
                HopKind::DeviceLink,
                entry.map_or_else(|| "SAS".to_string(), |e| e.name),
                description,
                depth,
                share,
                capacity,
            )
            .protocol = Some("ssp".into());
        } else if has("rport-") {
            let fc_host = Path::new("/sys/class/fc_host").join(format!("host{host}"));
            let speed = read_attribute(&fc_host.join("speed"));
            let entry = speed.as_deref().and_then(fc_from_speed);
            let port = read_attribute(&fc_host.join("port_name")).unwrap_or_default();
            let description = format!(
                "FC port {port} ({driver}) at {}",
                speed.as_deref().unwrap_or("unknown speed")
            );
            let capacity = entry.as_ref().map(capacity_of);
            self.push(
                key,
                HopKind::FibreChannelLink,
                entry.map_or_else(|| "Fibre Channel".to_string(), |e| e.name),
                description,
                depth,
                share,
                capacity,
            )
            .protocol = Some("fcp".into());
            self.note(format!(
                "{name}: the FC fabric and the array behind it are not visible; declare them with --path (for example 8gfc,array:1.5GB/s)"
            ));
        } else if let Some(session) = components
            .iter()
            .find(|c| c.starts_with("session") && c[7..].chars().all(|c| c.is_ascii_digit()))
        {
            self.iscsi_session(name, session, depth, share);
            return;
        } else if has("usb") {
            let (speed, device) = usb_speed(real);
            let entry = speed.and_then(usb_from_speed);
            let description = format!(
                "USB storage ({driver}) at {}",
                speed.map_or("unknown speed".to_string(), |s| format!("{s} Mb/s"))
            );
            let capacity = entry.as_ref().map(capacity_of);
            self.push(
                key,
                HopKind::DeviceLink,
                entry.map_or_else(|| "USB".to_string(), |e| e.name),
                description,
                depth,
                share,
                capacity,
            );
            if let Some(device) = device {
                self.pci_links(&device, depth, share);
            }
            return;
        } else if has("virtio") {
            self.push(
                key,
                HopKind::Transport,
                "virtio-scsi",
                "paravirtual SCSI: its speed is set by the hypervisor and the host's storage",
                depth,
                share,
                None,
            );
            self.note(format!(
                "{name}: a virtual disk; the host's storage path is not visible from this guest: declare it with --path"
            ));
        } else {
            self.push(
                key,
                HopKind::Transport,
                format!("SCSI ({driver})"),
                format!("SCSI host {host}"),
                depth,
                share,
                None,
            );
            if ["megaraid_sas", "hpsa", "smartpqi", "aacraid", "mpi3mr"].contains(&driver.as_str())
            {
                self.note(format!(
                    "{name}: a logical volume of a RAID controller ({driver}); its member disks and their links are not visible: declare them with --path"
                ));
            }
        }
        self.pci_links(real, depth, share);
    }

    fn iscsi_session(&mut self, name: &str, session: &str, depth: u32, share: Share) {
        let session_dir = Path::new("/sys/class/iscsi_session").join(session);
        let target = read_attribute(&session_dir.join("targetname")).unwrap_or_default();
        let number = &session[7..];
        let connection =
            Path::new("/sys/class/iscsi_connection").join(format!("connection{number}:0"));
        let address = read_attribute(&connection.join("persistent_address"))
            .or_else(|| read_attribute(&connection.join("address")));
        let port = read_number::<u16>(&connection.join("persistent_port"))
            .or_else(|| read_number(&connection.join("port")))
            .unwrap_or(crate::engine::network_target::ISCSI_PORT);
        let description = format!(
            "{session} to {target}{}",
            address
                .as_deref()
                .map(|a| format!(" at {a}:{port}"))
                .unwrap_or_default()
        );
        self.push(
            format!("transport:{name}"),
            HopKind::Protocol,
            "iSCSI",
            description,
            depth,
            share,
            None,
        )
        .protocol = Some("iscsi".into());
        match address {
            Some(address) => self.route(&address, port, Some("iscsi"), depth, share),
            None => self.note(format!("{name}: the iSCSI portal address is not in sysfs")),
        }
    }

    /// The PCI Express link of the PCI function at the end of `device_path`, and any upstream
    /// link narrower than it (a switch's uplink).
    pub fn pci_links(&mut self, device_path: &Path, depth: u32, share: Share) {
        let functions = pci_functions(device_path);
        let Some(endpoint) = functions.last() else {
            return;
        };
        let address = endpoint
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(link) = PcieLink::read(endpoint) else {
            let ids = format!(
                "{}:{}",
                read_attribute(&endpoint.join("vendor"))
                    .unwrap_or_default()
                    .trim_start_matches("0x"),
                read_attribute(&endpoint.join("device"))
                    .unwrap_or_default()
                    .trim_start_matches("0x")
            );
            self.push(
                format!("pci:{address}"),
                HopKind::Bus,
                "PCI",
                format!("{address} [{ids}], no link speed reported (conventional or virtual PCI)"),
                depth,
                share,
                None,
            );
            return;
        };
        self.push_pcie(&address, &link, depth, share);
        let endpoint_rate = link.current_entry().map(|e| e.payload_bytes_per_second());
        for upstream in functions.iter().rev().skip(1) {
            let Some(upstream_link) = PcieLink::read(upstream) else {
                continue;
            };
            let rate = upstream_link
                .current_entry()
                .map(|e| e.payload_bytes_per_second());
            if let (Some(rate), Some(endpoint_rate)) = (rate, endpoint_rate)
                && rate < endpoint_rate
            {
                let address = upstream
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                self.push_pcie(&address, &upstream_link, depth, share);
                self.note(format!(
                    "an upstream PCIe link ({address}) is narrower than the device's own"
                ));
            }
        }
    }

    fn push_pcie(&mut self, address: &str, link: &PcieLink, depth: u32, share: Share) {
        let current = link.current_entry();
        let mut description = format!(
            "{address}, running at {} GT/s x{}",
            link.current_gts, link.current_width
        );
        if let (Some(max_gts), Some(max_width)) = (&link.max_gts, link.max_width)
            && (max_gts != &link.current_gts || max_width != link.current_width)
        {
            description.push_str(&format!(", capable of {max_gts} GT/s x{max_width}"));
            self.note(format!(
                "PCIe {address} runs at {} GT/s x{} below its maximum {max_gts} GT/s x{max_width} (power saving, slot or link training)",
                link.current_gts, link.current_width
            ));
        }
        let capacity = current.as_ref().map(capacity_of);
        self.push(
            format!("pci:{address}"),
            HopKind::Bus,
            current.map_or_else(|| format!("PCIe x{}", link.current_width), |e| e.name),
            description,
            depth,
            share,
            capacity,
        );
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

/// A PCI Express link as sysfs reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct PcieLink {
    /// `current_link_speed` in GT/s (`8.0`).
    pub current_gts: String,
    /// `current_link_width`.
    pub current_width: u32,
    /// `max_link_speed` in GT/s.
    pub max_gts: Option<String>,
    /// `max_link_width`.
    pub max_width: Option<u32>,
}

impl PcieLink {
    /// Reads the link attributes of the PCI function at `function`.
    pub fn read(function: &Path) -> Option<Self> {
        let speed = read_attribute(&function.join("current_link_speed"))?;
        let width: u32 = read_number(&function.join("current_link_width"))?;
        if width == 0 {
            return None;
        }
        Some(PcieLink {
            current_gts: transfer_rate(&speed)?,
            current_width: width,
            max_gts: read_attribute(&function.join("max_link_speed"))
                .and_then(|s| transfer_rate(&s)),
            max_width: read_number(&function.join("max_link_width")),
        })
    }

    /// The catalog entry of the current speed and width.
    pub fn current_entry(&self) -> Option<links::LinkEntry> {
        links::pcie(pcie_generation(&self.current_gts)?, self.current_width)
    }
}

/// `8.0 GT/s PCIe` or `8 GT/s` → `8.0`-style number text; `None` for `Unknown`.
pub fn transfer_rate(text: &str) -> Option<String> {
    let number = text.split_whitespace().next()?;
    number.parse::<f64>().ok()?;
    Some(number.to_string())
}

/// PCIe generation of a transfer rate in GT/s.
pub fn pcie_generation(gts: &str) -> Option<u8> {
    let value: f64 = gts.parse().ok()?;
    [
        (2.5, 1),
        (5.0, 2),
        (8.0, 3),
        (16.0, 4),
        (32.0, 5),
        (64.0, 6),
    ]
    .iter()
    .find(|(rate, _)| (value - rate).abs() < 0.01)
    .map(|(_, generation)| *generation)
}

/// Every PCI function (`0000:01:00.0`) on the way to `path`, outermost first.
pub fn pci_functions(path: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut current = PathBuf::new();
    for component in path.components() {
        current.push(component);
        if is_pci_address(&component.as_os_str().to_string_lossy()) {
            found.push(current.clone());
        }
    }
    found
}

/// `DDDD:BB:DD.F`.
pub fn is_pci_address(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 12
        && bytes[4] == b':'
        && bytes[7] == b':'
        && bytes[10] == b'.'
        && text
            .chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// SATA entry of `sata_spd` text (`6.0 Gbps`).
pub fn sata_from_speed(text: &str) -> Option<links::LinkEntry> {
    let value: f64 = text.split_whitespace().next()?.parse().ok()?;
    links::sata((value * 10.0).round() as u32)
}

/// SAS entry of a `negotiated_linkrate` (`12.0 Gbit`) over `lanes` phys.
pub fn sas_from_rate(text: &str, lanes: u32) -> Option<links::LinkEntry> {
    let value: f64 = text.split_whitespace().next()?.parse().ok()?;
    let gbps = match value.round() as u32 {
        22..=24 => 24,
        other => other,
    };
    links::sas(gbps, lanes.max(1))
}

/// Fibre Channel entry of an fc_host `speed` (`8 Gbit`, `16 Gbit`).
pub fn fc_from_speed(text: &str) -> Option<links::LinkEntry> {
    let value: u32 = text.split_whitespace().next()?.parse().ok()?;
    links::fibre_channel(value)
}

/// USB entry of a device `speed` in Mb/s (`480`, `5000`, `10000`, `20000`).
pub fn usb_from_speed(mbps: u32) -> Option<links::LinkEntry> {
    let alias = match mbps {
        480 => "usb2",
        5000 => "usb3",
        10000 => "usb3.2gen2",
        20000 => "usb3.2gen2x2",
        _ => return None,
    };
    links::find(alias)
}

/// The `port-*` directory nearest a SAS device.
fn sas_port_dir(real: &Path) -> Option<PathBuf> {
    let mut current = PathBuf::new();
    let mut found = None;
    for component in real.components() {
        current.push(component);
        if component.as_os_str().to_string_lossy().starts_with("port-") {
            found = Some(current.clone());
        }
    }
    found
}

/// The speed (Mb/s) of the USB device a disk sits on, and its directory.
fn usb_speed(real: &Path) -> (Option<u32>, Option<PathBuf>) {
    for ancestor in real.ancestors() {
        if ancestor.join("idVendor").exists()
            && let Some(speed) = read_attribute(&ancestor.join("speed"))
        {
            let mbps = speed.parse::<f64>().ok().map(|s| s.round() as u32);
            return (mbps, Some(ancestor.to_path_buf()));
        }
    }
    (None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_texts_map_to_the_catalog() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq"),
            Some("mq-deadline".into())
        );
        assert_eq!(active_scheduler("none"), None);
        assert_eq!(transfer_rate("8.0 GT/s PCIe"), Some("8.0".into()));
        assert_eq!(transfer_rate("2.5 GT/s"), Some("2.5".into()));
        assert_eq!(transfer_rate("Unknown"), None);
        assert_eq!(pcie_generation("8.0"), Some(3));
        assert_eq!(pcie_generation("16"), Some(4));
        assert_eq!(pcie_generation("2.5"), Some(1));
        assert_eq!(pcie_generation("3.3"), None);
        assert_eq!(sata_from_speed("6.0 Gbps").unwrap().name, "SATA 6 Gb/s");
        assert_eq!(sata_from_speed("1.5 Gbps").unwrap().name, "SATA 1.5 Gb/s");
        assert!(sata_from_speed("<unknown>").is_none());
        assert_eq!(sas_from_rate("12.0 Gbit", 4).unwrap().name, "SAS 12G x4");
        assert_eq!(sas_from_rate("22.5 Gbit", 1).unwrap().name, "SAS 24G x1");
        assert_eq!(fc_from_speed("8 Gbit").unwrap().name, "8GFC");
        assert!(fc_from_speed("unknown").is_none());
        assert_eq!(usb_from_speed(480).unwrap().name, "USB 2.0 Hi-Speed");
        assert_eq!(usb_from_speed(5000).unwrap().name, "USB 3.2 Gen 1");
        assert!(usb_from_speed(12).is_none());
    }

    #[test]
    fn pci_functions_are_found_in_a_device_path() {
        assert!(is_pci_address("0000:00:02.0"));
        assert!(is_pci_address("0000:3b:00.1"));
        assert!(!is_pci_address("pci0000:00"));
        assert!(!is_pci_address("virtio1"));
        let path = Path::new(
            "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:03:00.0/nvme/nvme0",
        );
        let functions = pci_functions(path);
        assert_eq!(functions.len(), 4);
        assert!(functions[3].ends_with("0000:03:00.0"));
    }

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
    }

    #[test]
    fn this_hosts_root_disk_has_queue_limits() {
        let Some(device) = std::fs::metadata("/").ok().and_then(|m| {
            use std::os::unix::fs::MetadataExt;
            sysfs::device_name(sysfs::DeviceNumber::from_dev_t(m.dev()))
        }) else {
            crate::support::skip("/ is not on a block device here");
            return;
        };
        let limits = queue_limits(&device);
        assert!(limits.nr_requests.is_some(), "{limits:?}");
        assert!(limits.rotational.is_some());
        assert!(limits.max_request_bytes.is_some());
    }
}
