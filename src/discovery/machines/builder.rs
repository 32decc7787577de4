//! A builder that writes a recorded machine — the sysfs and procfs files discovery reads,
//! laid out as the kernel lays them out, and `machine.toml` — into a temporary directory, so
//! that each machine is described in a few reviewable lines.
//!
//! Paths are paths on the machine (`/sys/devices/pci0000:00/…`); links are written relative,
//! as sysfs writes them.

use crate::discovery::Machine;
use crate::discovery::gather::network::fdb_entry;
use crate::discovery::gather::pci::{config_space, express_capability};
use crate::discovery::machine_file::{
    FORMAT, MACHINE_FILE, MachineFile, RecordedFile, RecordedRoute,
};
use std::cell::RefCell;
use std::net::Ipv4Addr;
use std::path::{Component, Path, PathBuf};

/// Queue settings of a block device.
#[derive(Clone, Debug)]
pub struct Queue {
    /// `queue/rotational`.
    pub rotational: bool,
    /// `queue/scheduler`.
    pub scheduler: &'static str,
    /// Hardware queues (`mq/N`).
    pub hardware_queues: u32,
    /// `mq/0/nr_tags`.
    pub tags: u32,
    /// `device/queue_depth` of a SCSI disk.
    pub scsi_depth: Option<u32>,
    /// `queue/logical_block_size`.
    pub logical_block: u32,
    /// `queue/physical_block_size`.
    pub physical_block: u32,
}

impl Queue {
    /// An SSD behind a SCSI host with `depth` commands at once.
    pub fn scsi_ssd(depth: u32) -> Queue {
        Queue {
            rotational: false,
            scheduler: "[mq-deadline] none",
            hardware_queues: 1,
            tags: 4096,
            scsi_depth: Some(depth),
            logical_block: 512,
            physical_block: 4096,
        }
    }

    /// An NVMe namespace with `queues` I/O queues of `tags` entries.
    pub fn nvme(queues: u32, tags: u32) -> Queue {
        Queue {
            rotational: false,
            scheduler: "[none] mq-deadline",
            hardware_queues: queues,
            tags,
            scsi_depth: None,
            logical_block: 512,
            physical_block: 512,
        }
    }

    /// A stacking device (device-mapper, md): no queues of its own.
    pub fn stacked() -> Queue {
        Queue {
            rotational: false,
            scheduler: "none",
            hardware_queues: 0,
            tags: 0,
            scsi_depth: None,
            logical_block: 512,
            physical_block: 4096,
        }
    }
}

/// A network interface's attributes.
#[derive(Clone, Debug)]
pub struct Netdev {
    /// `ifindex`.
    pub ifindex: u32,
    /// `iflink` (the peer's or lower device's index; the own index for a physical NIC).
    pub iflink: u32,
    /// `mtu`.
    pub mtu: u32,
    /// `speed` (Mb/s), or `None` where reading it fails.
    pub speed: Option<i64>,
    /// `type` (1 Ethernet).
    pub link_type: u32,
    /// `DEVTYPE=` in `uevent`.
    pub devtype: Option<&'static str>,
}

impl Netdev {
    /// An Ethernet NIC at `speed` Mb/s.
    pub fn ethernet(ifindex: u32, speed: i64, mtu: u32) -> Netdev {
        Netdev {
            ifindex,
            iflink: ifindex,
            mtu,
            speed: Some(speed),
            link_type: 1,
            devtype: None,
        }
    }
}

/// A machine being written.
pub struct MachineDir {
    directory: tempfile::TempDir,
    file: RefCell<MachineFile>,
    mountinfo: RefCell<Vec<String>>,
    routes: RefCell<Vec<String>>,
    neighbours: RefCell<Vec<String>>,
}

impl MachineDir {
    /// An empty machine: `description` and the kernel documents its layout follows.
    pub fn new(description: &str, sources: &[&str]) -> Self {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        let directory = if base.is_dir() {
            tempfile::tempdir_in(base).expect("a temporary directory")
        } else {
            tempfile::tempdir().expect("a temporary directory")
        };
        let machine = MachineDir {
            directory,
            file: RefCell::new(MachineFile {
                format: FORMAT,
                description: Some(description.into()),
                sources: sources.iter().map(|s| s.to_string()).collect(),
                memory_copy_bytes_per_second: Some(10_000_000_000),
                ..MachineFile::default()
            }),
            mountinfo: RefCell::new(Vec::new()),
            routes: RefCell::new(Vec::new()),
            neighbours: RefCell::new(Vec::new()),
        };
        machine.write(
            "/proc/meminfo",
            "MemTotal:       65536000 kB\nMemAvailable:   52428800 kB\n",
        );
        machine
    }

    /// The directory it is written in.
    pub fn root(&self) -> &Path {
        self.directory.path()
    }

    /// The machine, as `iopath path --root` would read it.
    pub fn machine(&self) -> Machine {
        let text = self.file.borrow().to_text().expect("a machine file");
        std::fs::write(self.root().join(MACHINE_FILE), text).expect("machine.toml written");
        Machine::recorded(self.root()).expect("a recorded machine")
    }

    fn host_path(&self, path: &str) -> PathBuf {
        self.root().join(path.trim_start_matches('/'))
    }

    /// Writes `content` at `path`, creating the directories above it.
    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let host = self.host_path(path);
        std::fs::create_dir_all(host.parent().expect("a parent")).expect("directories");
        std::fs::write(&host, content).expect("a file");
    }

    /// Writes each `(name, value)` as a file with a newline in `directory`.
    pub fn attributes(&self, directory: &str, attributes: &[(&str, &str)]) {
        for (name, value) in attributes {
            self.write(&format!("{directory}/{name}"), format!("{value}\n"));
        }
    }

    /// Creates the directory `path`.
    pub fn directory(&self, path: &str) {
        std::fs::create_dir_all(self.host_path(path)).expect("a directory");
    }

    /// A link at `link` to `target`, written relative like sysfs links.
    pub fn link(&self, link: &str, target: &str) {
        let host = self.host_path(link);
        std::fs::create_dir_all(host.parent().expect("a parent")).expect("directories");
        let relative = relative_link(Path::new(link), Path::new(target));
        std::os::unix::fs::symlink(relative, host).expect("a link");
    }

    /// Adds a mount line (`major:minor`, mount point, type, source).
    pub fn mount(&self, device: &str, mount_point: &str, filesystem: &str, source: &str) {
        let mut lines = self.mountinfo.borrow_mut();
        let id = 20 + lines.len();
        lines.push(format!(
            "{id} 1 {device} / {mount_point} rw,relatime - {filesystem} {source} rw"
        ));
        self.write("/proc/self/mountinfo", lines.join("\n") + "\n");
    }

    /// Adds an IPv4 route of the main table (`gateway` none for a directly attached net).
    pub fn ipv4_route(&self, interface: &str, network: &str, prefix: u32, gateway: Option<&str>) {
        let hex = |address: Ipv4Addr| format!("{:08X}", u32::from(address).swap_bytes());
        let network: Ipv4Addr = network.parse().expect("an address");
        let mask = Ipv4Addr::from(if prefix == 0 {
            0
        } else {
            u32::MAX << (32 - prefix)
        });
        let gateway: Ipv4Addr = gateway.unwrap_or("0.0.0.0").parse().expect("an address");
        let flags = if gateway.is_unspecified() { 1 } else { 3 };
        let mut lines = self.routes.borrow_mut();
        lines.push(format!(
            "{interface}\t{}\t{}\t{flags:04X}\t0\t0\t0\t{}\t0\t0\t0",
            hex(network),
            hex(gateway),
            hex(mask)
        ));
        let header =
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT";
        self.write(
            "/proc/net/route",
            format!("{header}\n{}\n", lines.join("\n")),
        );
    }

    /// Records that the kernel routes `destination` through `interface`.
    pub fn route_answer(&self, destination: &str, interface: &str) {
        self.file.borrow_mut().routes.push(RecordedRoute {
            destination: destination.parse().expect("an address"),
            interface: Some(interface.into()),
        });
    }

    /// Adds a neighbour table entry.
    pub fn neighbour(&self, address: &str, mac: &str, interface: &str) {
        let mut lines = self.neighbours.borrow_mut();
        lines.push(format!(
            "{address:<16} 0x1         0x2         {mac}     *        {interface}"
        ));
        let header =
            "IP address       HW type     Flags       HW address            Mask     Device";
        self.write("/proc/net/arp", format!("{header}\n{}\n", lines.join("\n")));
    }

    /// Records the state of a file target (on the filesystem of `device`).
    pub fn file_state(&self, path: &str, device: &str, allocated_bytes: u64) {
        self.file.borrow_mut().files.push(RecordedFile {
            path: path.into(),
            exists: true,
            device: Some(device.into()),
            allocated_bytes: Some(allocated_bytes),
            head_zero: Some(false),
            directory: Path::new(path).parent().map(Path::to_path_buf),
        });
    }

    /// A PCI function `address` below `parent`, with its ids; returns its path.
    pub fn pci(&self, parent: &str, address: &str, vendor: &str, device: &str) -> String {
        let path = format!("{parent}/{address}");
        self.attributes(
            &path,
            &[
                ("vendor", vendor),
                ("device", device),
                ("subsystem_vendor", vendor),
                ("class", "0x000000"),
            ],
        );
        self.write(&format!("{path}/config"), config_space(0, &[]));
        path
    }

    /// The PCI Express link of `function`: `speed` (`8.0 GT/s PCIe`) × `width`, at its
    /// maximum, with `max_payload` bytes per TLP in its Device Control register.
    pub fn pcie_link(&self, function: &str, speed: &str, width: u32, max_payload: u32) {
        self.pcie_link_below(function, speed, width, speed, width, max_payload);
    }

    /// [`MachineDir::pcie_link`] running below its maximum.
    pub fn pcie_link_below(
        &self,
        function: &str,
        speed: &str,
        width: u32,
        max_speed: &str,
        max_width: u32,
        max_payload: u32,
    ) {
        let (width, max_width) = (width.to_string(), max_width.to_string());
        self.attributes(
            function,
            &[
                ("current_link_speed", speed),
                ("current_link_width", &width),
                ("max_link_speed", max_speed),
                ("max_link_width", &max_width),
            ],
        );
        self.write(
            &format!("{function}/config"),
            config_space(0, &[express_capability(max_payload)]),
        );
    }

    /// A root port `port` on the first host bridge with a PCIe link of `speed` × `width`
    /// to an endpoint `endpoint` (`vendor`, `device`); returns the endpoint's path.
    #[allow(clippy::too_many_arguments)]
    pub fn pcie_slot(
        &self,
        port: &str,
        endpoint: &str,
        vendor: &str,
        device: &str,
        speed: &str,
        width: u32,
        max_payload: u32,
    ) -> String {
        let root_port = self.pci("/sys/devices/pci0000:00", port, "0x8086", "0x2030");
        self.pcie_link(&root_port, speed, width, max_payload);
        let function = self.pci(&root_port, endpoint, vendor, device);
        self.pcie_link(&function, speed, width, max_payload);
        function
    }

    /// The driver link of a device (`driver` → `/sys/bus/pci/drivers/NAME`).
    pub fn driver(&self, device: &str, driver: &str) {
        let target = format!("/sys/bus/pci/drivers/{driver}");
        self.directory(&target);
        self.link(&format!("{device}/driver"), &target);
    }

    /// A SCSI host `hostN` of an HBA at `hba`, driven by `driver` (`proc_name`); returns its
    /// path.
    pub fn scsi_host(&self, hba: &str, host: u32, driver: &str) -> String {
        let path = format!("{hba}/host{host}");
        let class = format!("{path}/scsi_host/host{host}");
        self.attributes(&class, &[("proc_name", driver)]);
        self.link(&format!("/sys/class/scsi_host/host{host}"), &class);
        path
    }

    /// A SCSI device (`H:C:T:L`) directory with its inquiry strings and queue depth.
    pub fn scsi_device(&self, path: &str, vendor: &str, model: &str, queue_depth: u32) {
        let depth = queue_depth.to_string();
        self.attributes(
            path,
            &[
                ("vendor", vendor),
                ("model", model),
                ("queue_depth", &depth),
                ("state", "running"),
            ],
        );
    }

    /// A block device `name` (`dev` = `major:minor`) whose directory is `path`, with
    /// `sectors` of 512 bytes; `device` is the directory its `device` link points to.
    pub fn block(
        &self,
        path: &str,
        name: &str,
        dev: &str,
        sectors: u64,
        queue: &Queue,
        device: Option<&str>,
    ) {
        let sectors = sectors.to_string();
        self.attributes(path, &[("dev", dev), ("size", &sectors), ("ro", "0")]);
        let queue_dir = format!("{path}/queue");
        let (logical, physical) = (
            queue.logical_block.to_string(),
            queue.physical_block.to_string(),
        );
        self.attributes(
            &queue_dir,
            &[
                ("rotational", if queue.rotational { "1" } else { "0" }),
                ("scheduler", queue.scheduler),
                ("nr_requests", "256"),
                ("max_sectors_kb", "1280"),
                ("write_cache", "write through"),
                ("logical_block_size", &logical),
                ("physical_block_size", &physical),
            ],
        );
        for index in 0..queue.hardware_queues {
            self.attributes(
                &format!("{path}/mq/{index}"),
                &[("nr_tags", &queue.tags.to_string())],
            );
        }
        self.directory(&format!("{path}/slaves"));
        self.directory(&format!("{path}/holders"));
        if let Some(device) = device {
            self.link(&format!("{path}/device"), device);
        }
        self.link(&format!("/sys/class/block/{name}"), path);
        self.link(&format!("/sys/dev/block/{dev}"), path);
        self.write(&format!("/dev/{name}"), "");
    }

    /// A SCSI disk `name` in the SCSI device directory `scsi_device`.
    #[allow(clippy::too_many_arguments)]
    pub fn scsi_disk(
        &self,
        scsi_device: &str,
        name: &str,
        dev: &str,
        sectors: u64,
        vendor: &str,
        model: &str,
        queue: &Queue,
    ) {
        self.scsi_device(scsi_device, vendor, model, queue.scsi_depth.unwrap_or(32));
        self.block(
            &format!("{scsi_device}/block/{name}"),
            name,
            dev,
            sectors,
            queue,
            Some(scsi_device),
        );
    }

    /// Partition `number` of the disk whose block directory is `disk`.
    pub fn partition(
        &self,
        disk: &str,
        name: &str,
        number: u32,
        dev: &str,
        start: u64,
        sectors: u64,
    ) {
        let path = format!("{disk}/{name}");
        let (number, start, sectors) = (number.to_string(), start.to_string(), sectors.to_string());
        self.attributes(
            &path,
            &[
                ("dev", dev),
                ("partition", &number),
                ("start", &start),
                ("size", &sectors),
                ("ro", "0"),
            ],
        );
        self.directory(&format!("{path}/holders"));
        self.link(&format!("/sys/class/block/{name}"), &path);
        self.link(&format!("/sys/dev/block/{dev}"), &path);
        self.write(&format!("/dev/{name}"), "");
    }

    /// Stacks block device `upper` (its directory) on `lowers` (their names): `slaves/`
    /// links on it, `holders/` links on them.
    pub fn stack(&self, upper: &str, upper_name: &str, lowers: &[&str]) {
        for lower in lowers {
            let lower_path = self.block_dir(lower);
            self.link(&format!("{upper}/slaves/{lower}"), &lower_path);
            self.link(&format!("{lower_path}/holders/{upper_name}"), upper);
        }
    }

    /// The directory of block device `name` (following `/sys/class/block/NAME`).
    pub fn block_dir(&self, name: &str) -> String {
        let view = crate::discovery::HostView::rooted(self.root());
        view.resolve(&Path::new("/sys/class/block").join(name))
            .expect("the block device was written")
            .to_string_lossy()
            .into_owned()
    }

    /// A device-mapper device `name` (`dm-N`) called `mapped` with `uuid`, over `lowers`.
    pub fn device_mapper(
        &self,
        name: &str,
        dev: &str,
        mapped: &str,
        uuid: &str,
        sectors: u64,
        lowers: &[&str],
    ) {
        let path = format!("/sys/devices/virtual/block/{name}");
        self.block(&path, name, dev, sectors, &Queue::stacked(), None);
        self.attributes(
            &format!("{path}/dm"),
            &[("name", mapped), ("uuid", uuid), ("suspended", "0")],
        );
        self.stack(&path, name, lowers);
        self.link(&format!("/dev/mapper/{mapped}"), &format!("/dev/{name}"));
    }

    /// An md array `name` of `level` over `members`, as Documentation/admin-guide/md.rst
    /// describes `md/`.
    pub fn md(
        &self,
        name: &str,
        dev: &str,
        level: &str,
        chunk_bytes: u64,
        sectors: u64,
        members: &[&str],
    ) {
        let path = format!("/sys/devices/virtual/block/{name}");
        self.block(&path, name, dev, sectors, &Queue::stacked(), None);
        let (disks, chunk) = (members.len().to_string(), chunk_bytes.to_string());
        self.attributes(
            &format!("{path}/md"),
            &[
                ("level", level),
                ("raid_disks", &disks),
                ("chunk_size", &chunk),
                ("degraded", "0"),
                ("layout", "258"),
                ("array_state", "clean"),
                ("metadata_version", "1.2"),
            ],
        );
        for (slot, member) in members.iter().enumerate() {
            let member_dir = format!("{path}/md/dev-{member}");
            self.attributes(
                &member_dir,
                &[("slot", &slot.to_string()), ("state", "in_sync")],
            );
            self.link(&format!("{member_dir}/block"), &self.block_dir(member));
        }
        self.stack(&path, name, members);
    }

    /// A network interface `name` on the device at `device` (a physical NIC, with its
    /// `driver`), or virtual (`/sys/devices/virtual/net/NAME`); returns its directory.
    pub fn netdev(&self, name: &str, device: Option<(&str, &str)>, attributes: &Netdev) -> String {
        let path = match device {
            Some((device, driver)) => {
                self.driver(device, driver);
                format!("{device}/net/{name}")
            }
            None => format!("/sys/devices/virtual/net/{name}"),
        };
        let (ifindex, iflink, mtu, link_type) = (
            attributes.ifindex.to_string(),
            attributes.iflink.to_string(),
            attributes.mtu.to_string(),
            attributes.link_type.to_string(),
        );
        self.attributes(
            &path,
            &[
                ("ifindex", &ifindex),
                ("iflink", &iflink),
                ("mtu", &mtu),
                ("type", &link_type),
                ("operstate", "up"),
                ("carrier", "1"),
            ],
        );
        if let Some(speed) = attributes.speed {
            self.attributes(&path, &[("speed", &speed.to_string())]);
        }
        let mut uevent = format!("INTERFACE={name}\nIFINDEX={}\n", attributes.ifindex);
        if let Some(devtype) = attributes.devtype {
            uevent = format!("DEVTYPE={devtype}\n{uevent}");
        }
        self.write(&format!("{path}/uevent"), uevent);
        if let Some((device, _)) = device {
            self.link(&format!("{path}/device"), device);
        }
        self.link(&format!("/sys/class/net/{name}"), &path);
        path
    }

    /// Makes `upper` (an interface directory) the master of `lowers` (interface names):
    /// `lower_*` links on it, `upper_*` and `master` links on them.
    pub fn enslave(&self, upper: &str, upper_name: &str, lowers: &[&str]) {
        for lower in lowers {
            let lower_path = format!("/sys/class/net/{lower}");
            let real = crate::discovery::HostView::rooted(self.root())
                .resolve(Path::new(&lower_path))
                .expect("the interface was written")
                .to_string_lossy()
                .into_owned();
            self.link(&format!("{upper}/lower_{lower}"), &real);
            self.link(&format!("{real}/upper_{upper_name}"), upper);
            self.link(&format!("{real}/master"), upper);
        }
    }

    /// A bridge's forwarding database (`brforward`): `(mac, port number, local)` entries.
    pub fn bridge_forwarding(&self, bridge: &str, entries: &[([u8; 6], u16, bool)]) {
        let mut table = Vec::new();
        for (mac, port, local) in entries {
            table.extend(fdb_entry(*mac, *port, *local));
        }
        self.write(&format!("{bridge}/brforward"), table);
    }
}

impl MachineDir {
    /// The `fc_host` of SCSI host `hostN` at `host_path`: its speed (`4 Gbit`), WWPN and
    /// state (Documentation/ABI/testing/sysfs-class-fc_host; scsi_transport_fc.c).
    pub fn fc_host(&self, host_path: &str, host: u32, speed: &str, port_name: &str) {
        let class = format!("{host_path}/fc_host/host{host}");
        self.attributes(
            &class,
            &[
                ("speed", speed),
                ("port_name", port_name),
                ("port_state", "Online"),
                ("port_type", "NPort (fabric via point-to-point)"),
                ("supported_speeds", "1 Gbit, 2 Gbit, 4 Gbit, 8 Gbit"),
            ],
        );
        self.link(&format!("/sys/class/fc_host/host{host}"), &class);
    }

    /// A remote FC port (an array's target port) below SCSI host `host_path`; returns its
    /// path.
    pub fn fc_remote_port(&self, host_path: &str, name: &str, port_name: &str) -> String {
        let path = format!("{host_path}/{name}");
        self.attributes(
            &format!("{path}/fc_remote_ports/{name}"),
            &[
                ("port_name", port_name),
                ("roles", "FCP Target"),
                ("port_state", "Online"),
            ],
        );
        path
    }

    /// An iSCSI session `sessionN` on SCSI host `host_path` (a software initiator's
    /// platform host) to `target` at `address:port` (scsi_transport_iscsi.c); returns the
    /// session's path.
    pub fn iscsi_session(
        &self,
        host_path: &str,
        session: u32,
        target: &str,
        address: &str,
        port: u16,
    ) -> String {
        let path = format!("{host_path}/session{session}");
        let class = format!("{path}/iscsi_session/session{session}");
        self.attributes(&class, &[("targetname", target), ("state", "LOGGED_IN")]);
        self.link(
            &format!("/sys/class/iscsi_session/session{session}"),
            &class,
        );
        let connection =
            format!("{path}/connection{session}:0/iscsi_connection/connection{session}:0");
        let port = port.to_string();
        self.attributes(
            &connection,
            &[
                ("persistent_address", address),
                ("persistent_port", &port),
                ("address", address),
                ("port", &port),
            ],
        );
        self.link(
            &format!("/sys/class/iscsi_connection/connection{session}:0"),
            &connection,
        );
        path
    }

    /// ATA port `ataN` of an AHCI controller at `controller` with its link at `speed`
    /// (`6.0 Gbps`, Documentation/ABI/testing/sysfs-ata); returns the port's path.
    pub fn ata_port(&self, controller: &str, port: u32, speed: &str) -> String {
        let path = format!("{controller}/ata{port}");
        let link = format!("{path}/link{port}/ata_link/link{port}");
        self.attributes(
            &link,
            &[("sata_spd", speed), ("sata_spd_limit", "<unknown>")],
        );
        self.link(&format!("/sys/class/ata_link/link{port}"), &link);
        path
    }

    /// A SAS port `port-…` at `path` with `phys` (`phy-…` directories under `phy_parent`)
    /// at `rate` (`12.0 Gbit`; drivers/scsi/scsi_transport_sas.c).
    pub fn sas_port(&self, path: &str, phy_parent: &str, phys: &[&str], rate: &str) {
        self.directory(path);
        for phy in phys {
            let phy_path = format!("{phy_parent}/{phy}");
            let class = format!("{phy_path}/sas_phy/{phy}");
            self.attributes(
                &class,
                &[
                    ("negotiated_linkrate", rate),
                    ("maximum_linkrate", "12.0 Gbit"),
                    ("minimum_linkrate", "3.0 Gbit"),
                ],
            );
            self.link(&format!("/sys/class/sas_phy/{phy}"), &class);
            self.link(&format!("{path}/{phy}"), &phy_path);
        }
    }

    /// An NVMe controller `nvmeN` at `path` (drivers/nvme/host/sysfs.c attributes).
    pub fn nvme_controller(
        &self,
        path: &str,
        name: &str,
        transport: &str,
        model: &str,
        queues: u32,
        address: &str,
    ) {
        let queues = (queues + 1).to_string();
        self.attributes(
            path,
            &[
                ("transport", transport),
                ("model", model),
                ("queue_count", &queues),
                ("state", "live"),
                ("address", address),
                ("firmware_rev", "1.0"),
            ],
        );
        self.link(&format!("/sys/class/nvme/{name}"), path);
    }
}

/// The relative link from `link` to `target` (both absolute).
fn relative_link(link: &Path, target: &Path) -> PathBuf {
    let from: Vec<Component> = link.parent().expect("a parent").components().collect();
    let to: Vec<Component> = target.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut relative = PathBuf::new();
    for _ in common..from.len() {
        relative.push("..");
    }
    for component in &to[common..] {
        relative.push(component);
    }
    relative
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_relative_like_sysfs() {
        assert_eq!(
            relative_link(
                Path::new("/sys/class/block/sda"),
                Path::new(
                    "/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
                )
            ),
            Path::new(
                "../../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
            )
        );
        assert_eq!(
            relative_link(Path::new("/dev/mapper/vg0-home"), Path::new("/dev/dm-1")),
            Path::new("../dm-1")
        );
    }
}
