//! How a disk is attached, as hops: NVMe controllers (local or over a fabric), SATA and SAS
//! links, the Fibre Channel port, an iSCSI session, USB, virtio; then the bus of the
//! controller.
//!
//! Hops that several disks share carry keys of what is shared, so that their traffic adds
//! up: an FC port (`fc:host3`) behind every LUN it reaches, a SAS wide port (`sas:port-0:0`),
//! an iSCSI session, an NVMe controller.

use super::block::capacity_of;
use super::links;
use super::path::{Share, Walker};
use crate::discovery::facts::{
    FibreChannelFacts, IscsiFacts, NvmeControllerFacts, NvmeFacts, SasPortFacts, TransportFacts,
};
use crate::result::HopKind;

impl Walker<'_> {
    /// How the disk `name` is attached, and the bus of its controller.
    pub fn transport(&mut self, name: &str, transport: &TransportFacts, depth: u32, share: Share) {
        let key = format!("transport:{name}");
        match transport {
            TransportFacts::Nvme(nvme) => self.nvme(name, nvme, depth, share),
            TransportFacts::Ata {
                port,
                driver,
                link_speed,
                bus,
            } => {
                let entry = link_speed.as_deref().and_then(sata_from_speed);
                let description = format!(
                    "ATA port {} ({driver}), link at {}",
                    port.trim_start_matches("ata"),
                    link_speed.as_deref().unwrap_or("unknown speed")
                );
                let capacity = entry.as_ref().map(capacity_of);
                self.push(
                    format!("ata:{port}"),
                    HopKind::DeviceLink,
                    entry.map_or_else(|| "SATA".to_string(), |e| e.name),
                    description,
                    depth,
                    share,
                    capacity,
                )
                .protocol = Some("ata".into());
                self.bus(bus, depth, share);
            }
            TransportFacts::Sas {
                driver,
                ports,
                end_device_protocols,
                bus,
            } => {
                let sata = end_device_protocols
                    .as_deref()
                    .is_some_and(|protocols| protocols.split(['+', ',', ' ']).any(|p| p == "sata"));
                if ports.is_empty() {
                    self.push(
                        key,
                        HopKind::DeviceLink,
                        "SAS",
                        format!("SAS ({driver}), no port found"),
                        depth,
                        share,
                        None,
                    )
                    .protocol = Some("ssp".into());
                }
                // The disk's own link first, then the ports towards the HBA (an expander's
                // uplink, the HBA's wide port), which every disk behind them shares.
                for (index, port) in ports.iter().enumerate().rev() {
                    let disk_link = index + 1 == ports.len();
                    self.sas_port(driver, port, sata && disk_link, depth, share);
                }
                if sata {
                    self.note(format!(
                        "{name}: a SATA disk behind a SAS expander: its commands are tunnelled over STP, one command queue of at most 32, at the SATA rate of its own link"
                    ));
                }
                self.bus(bus, depth, share);
            }
            TransportFacts::FibreChannel(fc) => self.fibre_channel(name, fc, depth, share),
            TransportFacts::Iscsi(iscsi) => self.iscsi(name, iscsi, depth, share),
            TransportFacts::Usb {
                driver,
                speed_mbps,
                bus,
            } => {
                let entry = speed_mbps.and_then(usb_from_speed);
                let description = format!(
                    "USB storage ({driver}) at {}",
                    speed_mbps.map_or("unknown speed".to_string(), |s| format!("{s} Mb/s"))
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
                self.bus(bus, depth, share);
            }
            TransportFacts::VirtioScsi { bus } => {
                self.virtual_disk(name, key, "virtio-scsi", "paravirtual SCSI", depth, share);
                self.bus(bus, depth, share);
            }
            TransportFacts::Scsi { driver, host, bus } => {
                self.push(
                    key,
                    HopKind::Transport,
                    format!("SCSI ({driver})"),
                    format!("SCSI host {}", host.trim_start_matches("host")),
                    depth,
                    share,
                    None,
                );
                if ["megaraid_sas", "hpsa", "smartpqi", "aacraid", "mpi3mr"]
                    .contains(&driver.as_str())
                {
                    self.note(format!(
                        "{name}: a logical volume of a RAID controller ({driver}); its member disks and their links are not visible: declare them with --path"
                    ));
                }
                self.bus(bus, depth, share);
            }
            TransportFacts::VirtioBlk { bus } => {
                self.virtual_disk(name, key, "virtio-blk", "paravirtual disk", depth, share);
                self.bus(bus, depth, share);
            }
            TransportFacts::Mmc { bus } => {
                self.push(key, HopKind::Transport, "MMC/SD", "", depth, share, None);
                self.bus(bus, depth, share);
            }
            TransportFacts::Virtual => self.note(format!(
                "{name}: a virtual block device with no hardware below it"
            )),
            TransportFacts::Other { device_path, bus } => {
                self.push(
                    key,
                    HopKind::Transport,
                    "block driver",
                    device_path.clone(),
                    depth,
                    share,
                    None,
                );
                self.bus(bus, depth, share);
            }
            TransportFacts::Unknown => {}
        }
    }

    fn virtual_disk(
        &mut self,
        name: &str,
        key: String,
        label: &str,
        what: &str,
        depth: u32,
        share: Share,
    ) {
        self.push(
            key,
            HopKind::Transport,
            label,
            format!("{what}: its speed is set by the hypervisor and the host's storage"),
            depth,
            share,
            None,
        );
        self.note(format!(
            "{name}: a virtual disk; the host's storage path is not visible from this guest: declare it with --path"
        ));
    }

    fn nvme(&mut self, name: &str, nvme: &NvmeFacts, depth: u32, share: Share) {
        if nvme.controllers.is_empty() {
            self.note(format!("{name}: its NVMe controller is not visible"));
            return;
        }
        let paths = nvme.controllers.len();
        if paths > 1 {
            let names: Vec<&str> = nvme.controllers.iter().map(|c| c.name.as_str()).collect();
            self.note(format!(
                "{name}: native NVMe multipath over {} ({} policy): I/O assumed spread evenly{}",
                names.join(", "),
                nvme.iopolicy.as_deref().unwrap_or("unknown"),
                if nvme.iopolicy.as_deref() == Some("numa") {
                    "; the numa policy sends each NUMA node's I/O down one path"
                } else {
                    ""
                }
            ));
        }
        let path_share = share.split(paths);
        for controller in &nvme.controllers {
            self.nvme_controller(name, controller, depth, path_share);
        }
    }

    fn nvme_controller(
        &mut self,
        name: &str,
        controller: &NvmeControllerFacts,
        depth: u32,
        share: Share,
    ) {
        let transport = controller.transport.as_str();
        let mut description = format!("NVMe over {transport}, controller {}", controller.name);
        if let Some(model) = &controller.model {
            description.push_str(&format!(" ({model})"));
        }
        if let Some(queues) = controller.queue_count {
            description.push_str(&format!(", {} I/O queues", queues.saturating_sub(1)));
        }
        if let Some(state) = controller.state.as_deref().filter(|s| *s != "live") {
            description.push_str(&format!(", {state}"));
        }
        let protocol = match transport {
            "tcp" => Some("nvme-tcp"),
            _ => None,
        };
        let label = match transport {
            "pcie" => "NVMe".to_string(),
            "tcp" => "NVMe/TCP".to_string(),
            "rdma" => "NVMe/RDMA".to_string(),
            "fc" => "NVMe/FC".to_string(),
            other => format!("NVMe ({other})"),
        };
        self.push(
            format!("nvme:{}", controller.name),
            HopKind::Transport,
            label,
            description,
            depth,
            share,
            None,
        )
        .protocol = protocol.map(str::to_string);
        match (transport, &controller.route) {
            ("pcie", _) => self.nvme_pcie_bus(name, controller, depth, share),
            ("tcp" | "rdma", Some(route)) => {
                self.route(route, protocol, depth, share);
                self.note(format!(
                    "{name}: the NVMe-oF target's own links and storage are not visible; declare them with --path"
                ));
            }
            ("tcp" | "rdma", None) => {
                self.note(format!("{name}: the NVMe-oF target address is not in sysfs"))
            }
            _ => self.note(format!(
                "{name}: NVMe over {transport}: the link to the controller is not visible; declare it with --link"
            )),
        }
    }

    /// The bus of a local NVMe controller. Its transport says PCI Express, so a function
    /// whose link files are missing (a capture that did not keep them, a platform that hides
    /// them) is a PCIe link of unknown speed, never conventional PCI.
    fn nvme_pcie_bus(
        &mut self,
        name: &str,
        controller: &NvmeControllerFacts,
        depth: u32,
        share: Share,
    ) {
        let endpoint = controller.bus.last();
        if endpoint.is_some_and(|function| function.link.is_some() || function.pcix.is_some()) {
            self.bus(&controller.bus, depth, share);
            return;
        }
        let address = endpoint.map_or("its PCI function", |function| function.address.as_str());
        self.push(
            format!("pci:{}", controller.name),
            HopKind::Bus,
            "PCIe",
            format!(
                "{address}: PCI Express (the controller's transport is pcie); its link speed and width are not shown"
            ),
            depth,
            share,
            None,
        );
        self.note(format!(
            "{name}: the PCIe link of NVMe controller {} reports no speed here; declare it with --path (for example pcie3x4)",
            controller.name
        ));
    }

    /// One SAS port's hop; `sata_disk` for the link of a SATA disk behind an expander,
    /// which carries SATA frames over STP at a SATA rate.
    fn sas_port(
        &mut self,
        driver: &str,
        port: &SasPortFacts,
        sata_disk: bool,
        depth: u32,
        share: Share,
    ) {
        let lanes = port.phy_rates.len() as u32;
        let entry = port.phy_rates.first().and_then(|rate| {
            if sata_disk {
                sata_from_speed(rate)
            } else {
                sas_from_rate(rate, lanes)
            }
        });
        let what = if sata_disk {
            "SATA over SAS (STP)"
        } else {
            "SAS"
        };
        let description = format!(
            "{what} ({driver}) {}: {} phy(s) at {}",
            port.name,
            port.phy_rates.len(),
            port.phy_rates
                .first()
                .map_or("unknown rate", String::as_str)
        );
        let capacity = entry.as_ref().map(capacity_of);
        self.push(
            format!("sas:{}", port.name),
            HopKind::DeviceLink,
            entry.map_or_else(|| what.to_string(), |e| e.name),
            description,
            depth,
            share,
            capacity,
        )
        .protocol = Some(if sata_disk { "ata" } else { "ssp" }.into());
    }

    fn fibre_channel(&mut self, name: &str, fc: &FibreChannelFacts, depth: u32, share: Share) {
        let entry = fc.speed.as_deref().and_then(fc_from_speed);
        let mut description = format!(
            "FC port {} ({}, {}) at {}",
            fc.port_name.as_deref().unwrap_or("?"),
            fc.driver,
            fc.host,
            fc.speed.as_deref().unwrap_or("unknown speed")
        );
        if let Some(state) = fc.port_state.as_deref().filter(|s| *s != "Online") {
            description.push_str(&format!(", {state}"));
        }
        if let Some(remote) = &fc.remote_port {
            description.push_str(&format!(", to {remote}"));
        }
        let capacity = entry.as_ref().map(capacity_of);
        if capacity.is_none() {
            self.note(format!(
                "{}: the FC port reports no usable speed ({}); declare the link with --link (for example 8gfc)",
                fc.host,
                fc.speed.as_deref().unwrap_or("none")
            ));
        }
        self.push(
            format!("fc:{}", fc.host),
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
        self.bus(&fc.bus, depth, share);
    }

    fn iscsi(&mut self, name: &str, iscsi: &IscsiFacts, depth: u32, share: Share) {
        let description = format!(
            "{} to {}{}",
            iscsi.session,
            iscsi.target.as_deref().unwrap_or("?"),
            iscsi
                .address
                .as_deref()
                .map(|a| format!(" at {a}:{}", iscsi.port))
                .unwrap_or_default()
        );
        self.push(
            format!("iscsi:{}", iscsi.session),
            HopKind::Protocol,
            "iSCSI",
            description,
            depth,
            share,
            None,
        )
        .protocol = Some("iscsi".into());
        match &iscsi.route {
            Some(route) => {
                self.route(route, Some("iscsi"), depth, share);
                self.note(format!(
                    "{name}: the iSCSI target's own links and storage are not visible; declare them with --path"
                ));
            }
            None => self.note(format!("{name}: the iSCSI portal address is not in sysfs")),
        }
    }
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

/// InfiniBand entry of a port's `rate` (`40 Gb/sec (4X QDR)`, `100 Gb/sec (4X EDR)`, or
/// `10 Gb/sec (4X)` without the speed's name, read from the rate per lane), with the port's
/// own width (1X, 2X, 4X, 8X, 12X).
pub fn infiniband_from_rate(text: &str) -> Option<links::LinkEntry> {
    let total: f64 = text.split_whitespace().next()?.parse().ok()?;
    let inside = text.split_once('(')?.1.trim_end().trim_end_matches(')');
    let mut words = inside.split_whitespace();
    let lanes: u32 = words
        .next()?
        .strip_suffix(['X', 'x'])?
        .parse()
        .ok()
        .filter(|lanes| *lanes > 0)?;
    let speed = match words.next() {
        Some(name) => name.to_lowercase(),
        None => match (total / f64::from(lanes)).round() as u32 {
            2 | 3 => "sdr".into(),
            5 => "ddr".into(),
            10 => "qdr".into(),
            14 => "fdr".into(),
            25 => "edr".into(),
            50 => "hdr".into(),
            100 => "ndr".into(),
            _ => return None,
        },
    };
    let mut entry = links::find(&format!("ib-{speed}"))?;
    if entry.lanes != lanes {
        entry.name = entry
            .name
            .replace(&format!(" {}x", entry.lanes), &format!(" {lanes}x"));
        entry.aliases.clear();
        entry.lanes = lanes;
    }
    Some(entry)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_texts_map_to_the_catalog() {
        assert_eq!(sata_from_speed("6.0 Gbps").unwrap().name, "SATA 6 Gb/s");
        assert_eq!(sata_from_speed("1.5 Gbps").unwrap().name, "SATA 1.5 Gb/s");
        assert!(sata_from_speed("<unknown>").is_none());
        assert_eq!(sas_from_rate("12.0 Gbit", 4).unwrap().name, "SAS 12G x4");
        assert_eq!(sas_from_rate("22.5 Gbit", 1).unwrap().name, "SAS 24G x1");
        assert_eq!(fc_from_speed("8 Gbit").unwrap().name, "8GFC");
        assert_eq!(fc_from_speed("4 Gbit").unwrap().name, "4GFC");
        assert!(fc_from_speed("unknown").is_none());
        assert!(fc_from_speed("10 Gbit").is_none());
        assert_eq!(usb_from_speed(480).unwrap().name, "USB 2.0 Hi-Speed");
        assert_eq!(usb_from_speed(5000).unwrap().name, "USB 3.2 Gen 1");
        assert!(usb_from_speed(12).is_none());
    }
}
