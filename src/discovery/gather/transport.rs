//! How a disk is attached, from where its sysfs directory lies.
//!
//! Layouts: Documentation/ABI/testing/sysfs-class-nvme and drivers/nvme/host/sysfs.c
//! (`transport`, `address`, `queue_count`, the namespace head's `multipath/`, the subsystem's
//! `iopolicy`); Documentation/ABI/testing/sysfs-ata (`ata_link/linkN/sata_spd`);
//! drivers/scsi/scsi_transport_sas.c (`port-*` directories linking their `phy-*`,
//! `sas_phy/…/negotiated_linkrate`); drivers/scsi/scsi_transport_fc.c and
//! Documentation/ABI/testing/sysfs-class-fc_host (`fc_host/hostN/speed`, `port_name`,
//! `port_state`); drivers/scsi/scsi_transport_iscsi.c (`iscsi_session/sessionN/targetname`,
//! `iscsi_connection/connectionN:0/persistent_address`, `persistent_port`).

use super::Gatherer;
use crate::discovery::facts::{
    FibreChannelFacts, IscsiFacts, NvmeControllerFacts, NvmeFacts, PciFunctionFacts, SasPortFacts,
    TransportFacts,
};
use crate::discovery::sysfs::class_dir;
use std::path::{Path, PathBuf};

/// The NVMe/TCP and NVMe/RDMA default port (NVMe-oF discovery and I/O controllers).
pub const NVME_FABRICS_PORT: u16 = 4420;
/// The iSCSI well-known port (RFC 7143).
pub const ISCSI_PORT: u16 = 3260;

impl Gatherer<'_> {
    /// How the disk `name` is attached, and the PCI functions of its controller.
    pub(super) fn transport(&mut self, name: &str, depth: u32) -> TransportFacts {
        let view = self.view();
        let Some(real) = view.resolve(&class_dir(name)) else {
            return TransportFacts::Unknown;
        };
        let text = real.to_string_lossy().into_owned();
        let components: Vec<&str> = text.split('/').collect();
        if name.starts_with("nvme") {
            return TransportFacts::Nvme(self.nvme(name, depth));
        }
        if let Some(host) = components.iter().find_map(|c| {
            c.strip_prefix("host")
                .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        }) {
            return self.scsi(host, &components, &real, depth);
        }
        if components.iter().any(|c| c.starts_with("virtio")) {
            return TransportFacts::VirtioBlk {
                bus: self.pci_chain(&real),
            };
        }
        if components.iter().any(|c| c.starts_with("mmc")) {
            return TransportFacts::Mmc {
                bus: self.pci_chain(&real),
            };
        }
        if text.contains("/virtual/") {
            return TransportFacts::Virtual;
        }
        TransportFacts::Other {
            bus: self.pci_chain(&real),
            device_path: text,
        }
    }

    fn nvme(&mut self, name: &str, depth: u32) -> NvmeFacts {
        let view = self.view();
        let directory = class_dir(name);
        let paths = view.read_dir(&directory.join("multipath"));
        let mut controllers: Vec<PathBuf> = paths
            .iter()
            .filter_map(|path| view.resolve(&directory.join("multipath").join(path)))
            .filter_map(|disk| disk.parent().map(Path::to_path_buf))
            .collect();
        let mut iopolicy = None;
        if controllers.is_empty() {
            controllers.extend(view.resolve(&directory.join("device")));
        } else {
            iopolicy = view.attribute(&directory.join("device/iopolicy"));
        }
        let controllers = controllers
            .iter()
            .map(|controller| self.nvme_controller(controller, depth))
            .collect();
        NvmeFacts {
            controllers,
            iopolicy,
        }
    }

    fn nvme_controller(&mut self, directory: &Path, depth: u32) -> NvmeControllerFacts {
        let view = self.view();
        let attribute = |file: &str| view.attribute(&directory.join(file));
        let transport = attribute("transport").unwrap_or_else(|| "unknown".into());
        let address = attribute("address");
        let mut facts = NvmeControllerFacts {
            name: directory
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "controller".into()),
            model: attribute("model"),
            queue_count: attribute("queue_count").and_then(|q| q.parse().ok()),
            state: attribute("state"),
            address: address.clone(),
            bus: Vec::new(),
            route: None,
            transport,
        };
        match facts.transport.as_str() {
            "pcie" => facts.bus = self.pci_chain(directory),
            "tcp" | "rdma" => {
                let address = address.unwrap_or_default();
                let field = |key: &str| {
                    address
                        .split(',')
                        .find_map(|part| part.trim().strip_prefix(key))
                        .map(str::to_string)
                };
                if let Some(host) = field("traddr=") {
                    let port = field("trsvcid=")
                        .and_then(|p| p.parse().ok())
                        .unwrap_or(NVME_FABRICS_PORT);
                    facts.route = Some(self.route(&host, port, depth));
                }
            }
            _ => {}
        }
        facts
    }

    fn scsi(&mut self, host: &str, components: &[&str], real: &Path, depth: u32) -> TransportFacts {
        let view = self.view();
        let host_name = format!("host{host}");
        let driver = view
            .attribute(
                &Path::new("/sys/class/scsi_host")
                    .join(&host_name)
                    .join("proc_name"),
            )
            .unwrap_or_else(|| "scsi".into());
        let has = |prefix: &str| components.iter().any(|c| c.starts_with(prefix));
        if let Some(port) = components.iter().find_map(|c| {
            c.strip_prefix("ata")
                .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        }) {
            let link = Path::new("/sys/class/ata_link").join(format!("link{port}"));
            return TransportFacts::Ata {
                port: format!("ata{port}"),
                driver,
                link_speed: view.attribute(&link.join("sata_spd")),
                bus: self.pci_chain(real),
            };
        }
        if has("end_device-") || has("port-") {
            let end_device_protocols = components
                .iter()
                .find(|c| c.starts_with("end_device-"))
                .and_then(|end_device| {
                    view.attribute(
                        &Path::new("/sys/class/sas_device")
                            .join(end_device)
                            .join("target_port_protocols"),
                    )
                });
            return TransportFacts::Sas {
                driver,
                ports: self.sas_ports(real),
                end_device_protocols,
                bus: self.pci_chain(real),
            };
        }
        if let Some(remote_port) = components.iter().find(|c| c.starts_with("rport-")) {
            let fc_host = Path::new("/sys/class/fc_host").join(&host_name);
            return TransportFacts::FibreChannel(FibreChannelFacts {
                host: host_name,
                driver,
                port_name: view.attribute(&fc_host.join("port_name")),
                speed: view.attribute(&fc_host.join("speed")),
                port_state: view.attribute(&fc_host.join("port_state")),
                remote_port: Some(remote_port.to_string()),
                bus: self.pci_chain(real),
            });
        }
        if let Some(session) = components.iter().find(|c| {
            c.strip_prefix("session")
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        }) {
            return TransportFacts::Iscsi(self.iscsi_session(session, depth));
        }
        if has("usb") {
            let (speed_mbps, device) = self.usb_speed(real);
            return TransportFacts::Usb {
                driver,
                speed_mbps,
                bus: device
                    .map(|device| self.pci_chain(&device))
                    .unwrap_or_default(),
            };
        }
        let bus: Vec<PciFunctionFacts> = self.pci_chain(real);
        if has("virtio") {
            return TransportFacts::VirtioScsi { bus };
        }
        TransportFacts::Scsi {
            driver,
            host: host_name,
            bus,
        }
    }

    /// Every `port-*` directory on the way to a SAS device, outermost (the HBA's) first,
    /// with the negotiated rate of each of its phys.
    fn sas_ports(&self, real: &Path) -> Vec<SasPortFacts> {
        let view = self.view();
        let mut ports = Vec::new();
        let mut current = PathBuf::new();
        for component in real.components() {
            current.push(component);
            let name = component.as_os_str().to_string_lossy();
            if !name.starts_with("port-") {
                continue;
            }
            let phy_rates = view
                .read_dir_matching(&current, "phy-")
                .into_iter()
                .filter_map(|phy| {
                    view.attribute(
                        &Path::new("/sys/class/sas_phy")
                            .join(&phy)
                            .join("negotiated_linkrate"),
                    )
                })
                .collect();
            ports.push(SasPortFacts {
                name: name.into_owned(),
                phy_rates,
            });
        }
        ports
    }

    fn iscsi_session(&mut self, session: &str, depth: u32) -> IscsiFacts {
        let view = self.view();
        let session_dir = Path::new("/sys/class/iscsi_session").join(session);
        let number = &session["session".len()..];
        let connection =
            Path::new("/sys/class/iscsi_connection").join(format!("connection{number}:0"));
        let address = view
            .attribute(&connection.join("persistent_address"))
            .or_else(|| view.attribute(&connection.join("address")));
        let port = view
            .number::<u16>(&connection.join("persistent_port"))
            .or_else(|| view.number(&connection.join("port")))
            .unwrap_or(ISCSI_PORT);
        IscsiFacts {
            session: session.to_string(),
            target: view.attribute(&session_dir.join("targetname")),
            route: address.as_deref().map(|a| self.route(a, port, depth)),
            address,
            port,
        }
    }

    /// The speed (Mb/s) of the USB device a disk sits on, and its directory.
    fn usb_speed(&self, real: &Path) -> (Option<u32>, Option<PathBuf>) {
        let view = self.view();
        for ancestor in real.ancestors() {
            if view.exists(&ancestor.join("idVendor"))
                && let Some(speed) = view.attribute(&ancestor.join("speed"))
            {
                let mbps = speed.parse::<f64>().ok().map(|s| s.round() as u32);
                return (mbps, Some(ancestor.to_path_buf()));
            }
        }
        (None, None)
    }
}
