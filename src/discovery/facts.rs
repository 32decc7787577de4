//! What discovery gathered about one target's path: plain data, in the shape of the stack
//! (a file on a filesystem on a device-mapper device over two disks, each behind its
//! transport and PCI functions; a route to an interface on a bond of four NICs).
//!
//! The analysis turns these facts into hops with capacities and the notes that say what
//! could not be seen; it reads nothing itself.

use super::mounts::Mount;
use crate::result::QueueLimits;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

/// Everything gathered about one target.
#[derive(Clone, Debug, PartialEq)]
pub enum PathFacts {
    /// A file, and the filesystem and devices below it.
    File(Box<FileFacts>),
    /// A block device and its stack.
    BlockDevice(Box<DeviceTargetFacts>),
    /// Network storage reached by iopath's own protocol engine: the route to the server
    /// (`None` for a Unix socket or a URL that could not be read).
    Network(Option<RouteFacts>),
}

/// A file target.
#[derive(Clone, Debug, PartialEq)]
pub struct FileFacts {
    /// It still existed when the path was discovered.
    pub exists: bool,
    /// Bytes the filesystem allocated to it.
    pub allocated_bytes: Option<u64>,
    /// Its first 64 KiB read as zeros.
    pub head_zero: Option<bool>,
    /// The filesystem holding it.
    pub filesystem: FilesystemFacts,
}

/// A block device target.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceTargetFacts {
    /// The device and its stack (`None`: no device name was known).
    pub device: Option<BlockFacts>,
    /// Its first 64 KiB read as zeros.
    pub head_zero: Option<bool>,
}

/// A filesystem and what it stores its data on.
#[derive(Clone, Debug, PartialEq)]
pub struct FilesystemFacts {
    /// A file on it.
    pub file: PathBuf,
    /// The block device holding it, when known.
    pub device: Option<String>,
    /// Its type (`ext4`, `tmpfs`, `nfs4`), when known.
    pub type_name: Option<String>,
    /// The mount it was found through.
    pub mount: Option<Mount>,
    /// What lies below it.
    pub below: FilesystemBelow,
}

/// What a filesystem stores its data on.
#[derive(Clone, Debug, PartialEq)]
pub enum FilesystemBelow {
    /// Memory (tmpfs, ramfs, hugetlbfs).
    Memory,
    /// A server (NFS, SMB); `None` when the mount was not found.
    Network(Option<Box<NetworkFilesystemFacts>>),
    /// A block device.
    Device(Box<BlockFacts>),
    /// Several block devices one filesystem spreads its data over (btrfs, bcachefs), as its
    /// own `/sys/fs/TYPE/UUID/` lists them.
    Devices(MultiDeviceFacts),
    /// Nothing iopath can see (FUSE, overlay without a device…).
    Unseen,
}

/// The devices of a filesystem that spans several.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiDeviceFacts {
    /// The filesystem's UUID (its directory under `/sys/fs/TYPE/`).
    pub uuid: String,
    /// How data is laid over the devices, where the filesystem says (btrfs's
    /// `allocation/data/` profile: `single`, `raid0`, `raid1`, `raid10`, `raid5`, `raid6`, `dup`).
    pub data_profile: Option<String>,
    /// Each device, in the order the filesystem lists them.
    pub members: Vec<BlockFacts>,
}

/// A network filesystem's server.
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkFilesystemFacts {
    /// `nfs` or `smb`.
    pub protocol: String,
    /// The mount source (`server:/export`, `//server/share`).
    pub source: String,
    /// The route to the server (`None`: no server name in the source).
    pub route: Option<RouteFacts>,
}

/// One block device and what it is built on.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockFacts {
    /// Kernel name (`sda`, `dm-0`, `md127`, `nvme0n1p2`).
    pub name: String,
    /// What it is.
    pub node: BlockNode,
}

/// What a block device is.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockNode {
    /// Not in `/sys/class/block`.
    NotFound,
    /// The stack goes deeper than discovery follows, or loops.
    TooDeep,
    /// A partition of `disk`.
    Partition {
        /// `partition` (its number).
        number: Option<String>,
        /// First byte on the disk.
        start_bytes: u64,
        /// Size in bytes.
        size_bytes: u64,
        /// The whole disk.
        disk: Box<BlockFacts>,
    },
    /// A device-mapper device over `slaves`.
    DeviceMapper {
        /// `dm/name`.
        mapped_name: String,
        /// `dm/uuid` (its prefix names the target: `LVM-`, `CRYPT-`, `mpath-`).
        uuid: String,
        /// Its queue limits.
        queue: QueueLimits,
        /// The devices below it.
        slaves: Vec<BlockFacts>,
    },
    /// An md software RAID over `members`.
    Md(MdFacts),
    /// A loop device over a file.
    Loop(LoopFacts),
    /// Compressed RAM (zram).
    Zram {
        /// The active compression algorithm.
        algorithm: Option<String>,
    },
    /// A RAM disk (brd).
    RamDisk,
    /// A kernel NBD client device.
    Nbd {
        /// `backend` (who set it up).
        backend: Option<String>,
        /// The device itself.
        disk: DiskFacts,
    },
    /// Another stacking driver (bcache, drbd…) over `slaves`.
    Stacked {
        /// The devices below it.
        slaves: Vec<BlockFacts>,
    },
    /// A disk and how it is attached.
    Disk {
        /// The disk.
        disk: DiskFacts,
        /// Its transport and the buses above it.
        transport: Box<TransportFacts>,
    },
}

/// An md array.
#[derive(Clone, Debug, PartialEq)]
pub struct MdFacts {
    /// `md/level` (`raid10`).
    pub level: String,
    /// `md/chunk_size`, bytes.
    pub chunk_bytes: Option<u64>,
    /// `md/raid_disks`.
    pub raid_disks: Option<u32>,
    /// `md/degraded`: members missing.
    pub degraded: Option<u32>,
    /// `md/layout` (for raid10, the near/far/offset copies).
    pub layout: Option<u32>,
    /// Its queue limits.
    pub queue: QueueLimits,
    /// The member devices.
    pub members: Vec<BlockFacts>,
}

/// A loop device.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopFacts {
    /// `loop/backing_file`.
    pub backing_file: Option<String>,
    /// `loop/dio`: direct I/O to the file.
    pub direct: bool,
    /// `loop/offset`, bytes.
    pub offset_bytes: u64,
    /// Its queue limits.
    pub queue: QueueLimits,
    /// The filesystem holding the backing file, when it could be found.
    pub backing: Option<Box<FilesystemFacts>>,
    /// Why the backing file's filesystem could not be found.
    pub backing_error: Option<String>,
}

/// A disk at the bottom of a stack.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskFacts {
    /// `device/vendor` (PCI ids left out).
    pub vendor: Option<String>,
    /// `device/model`.
    pub model: Option<String>,
    /// The firmware revision: `device/firmware_rev` (NVMe: the controller's) or `device/rev`
    /// (SCSI, SATA).
    pub firmware: Option<String>,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Its queue limits.
    pub queue: QueueLimits,
}

/// How a disk is attached.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportFacts {
    /// NVMe: the controllers it is reached through (one, or several with native multipath).
    Nvme(NvmeFacts),
    /// SATA (libata): the ATA link.
    Ata {
        /// `ataN`.
        port: String,
        /// The SCSI host's driver (`ahci`).
        driver: String,
        /// `sata_spd` of the link (`6.0 Gbps`).
        link_speed: Option<String>,
        /// The controller's PCI functions.
        bus: Vec<PciFunctionFacts>,
    },
    /// SAS: the ports on the way to the disk, outermost first.
    Sas {
        /// The SCSI host's driver (`mpt3sas`).
        driver: String,
        /// The ports, the HBA's first.
        ports: Vec<SasPortFacts>,
        /// What the end device speaks (its `sas_device/…/target_port_protocols`): `ssp` for a
        /// SAS disk, `sata` for a SATA disk reached through an expander, tunnelled over STP.
        end_device_protocols: Option<String>,
        /// The HBA's PCI functions.
        bus: Vec<PciFunctionFacts>,
    },
    /// Fibre Channel: the HBA port (`fc_host`).
    FibreChannel(FibreChannelFacts),
    /// An iSCSI session.
    Iscsi(IscsiFacts),
    /// USB storage.
    Usb {
        /// The SCSI host's driver (`usb-storage`, `uas`).
        driver: String,
        /// The device's speed, Mb/s.
        speed_mbps: Option<u32>,
        /// The host controller's PCI functions.
        bus: Vec<PciFunctionFacts>,
    },
    /// virtio-scsi.
    VirtioScsi {
        /// The virtio device's PCI functions.
        bus: Vec<PciFunctionFacts>,
    },
    /// Another SCSI host (a RAID controller's logical volume, a parallel SCSI HBA…).
    Scsi {
        /// The SCSI host's driver.
        driver: String,
        /// `hostN`.
        host: String,
        /// Its PCI functions.
        bus: Vec<PciFunctionFacts>,
    },
    /// virtio-blk.
    VirtioBlk {
        /// The virtio device's PCI functions.
        bus: Vec<PciFunctionFacts>,
    },
    /// An MMC or SD card.
    Mmc {
        /// The host controller's PCI functions.
        bus: Vec<PciFunctionFacts>,
    },
    /// A virtual block device with no hardware below it.
    Virtual,
    /// A block driver iopath does not know.
    Other {
        /// The device's sysfs path.
        device_path: String,
        /// Its PCI functions.
        bus: Vec<PciFunctionFacts>,
    },
    /// The device's sysfs directory could not be resolved.
    Unknown,
}

/// An NVMe namespace's controllers.
#[derive(Clone, Debug, PartialEq)]
pub struct NvmeFacts {
    /// The controllers (paths), in name order.
    pub controllers: Vec<NvmeControllerFacts>,
    /// The subsystem's `iopolicy` with native multipath (`numa`, `round-robin`,
    /// `queue-depth`).
    pub iopolicy: Option<String>,
}

/// One NVMe controller.
#[derive(Clone, Debug, PartialEq)]
pub struct NvmeControllerFacts {
    /// `nvmeN`.
    pub name: String,
    /// `transport`: `pcie`, `tcp`, `rdma`, `fc`, `loop`.
    pub transport: String,
    /// `model`.
    pub model: Option<String>,
    /// `queue_count` (I/O queues + the admin queue).
    pub queue_count: Option<u32>,
    /// `state` (`live`).
    pub state: Option<String>,
    /// `address` (`traddr=…,trsvcid=…`) of a fabrics controller.
    pub address: Option<String>,
    /// The PCI functions of a PCIe controller.
    pub bus: Vec<PciFunctionFacts>,
    /// The route to a fabrics target.
    pub route: Option<RouteFacts>,
}

/// One SAS port.
#[derive(Clone, Debug, PartialEq)]
pub struct SasPortFacts {
    /// `port-H:P` (or `port-H:E:P` behind an expander).
    pub name: String,
    /// `negotiated_linkrate` of each of its phys (`12.0 Gbit`).
    pub phy_rates: Vec<String>,
}

/// A Fibre Channel HBA port.
#[derive(Clone, Debug, PartialEq)]
pub struct FibreChannelFacts {
    /// `hostN`.
    pub host: String,
    /// The SCSI host's driver (`lpfc`, `qla2xxx`).
    pub driver: String,
    /// `port_name` (WWPN).
    pub port_name: Option<String>,
    /// `speed` (`8 Gbit`).
    pub speed: Option<String>,
    /// `port_state` (`Online`).
    pub port_state: Option<String>,
    /// `rport-…` the disk is reached through.
    pub remote_port: Option<String>,
    /// The HBA's PCI functions.
    pub bus: Vec<PciFunctionFacts>,
}

/// An iSCSI session.
#[derive(Clone, Debug, PartialEq)]
pub struct IscsiFacts {
    /// `sessionN`.
    pub session: String,
    /// `targetname`.
    pub target: Option<String>,
    /// The portal's address.
    pub address: Option<String>,
    /// The portal's port.
    pub port: u16,
    /// The route to the portal.
    pub route: Option<RouteFacts>,
}

/// One PCI function on the way to a device, with its link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PciFunctionFacts {
    /// `DDDD:BB:DD.F`.
    pub address: String,
    /// `vendor` (`0x8086`).
    pub vendor: Option<String>,
    /// `device`.
    pub device: Option<String>,
    /// `subsystem_vendor`.
    pub subsystem_vendor: Option<String>,
    /// `current_link_speed` / `current_link_width` / `max_link_*` of a PCI Express function.
    pub link: Option<PcieLinkFacts>,
    /// The PCI-X capability, from its configuration space.
    pub pcix: Option<PcixFacts>,
    /// Max_Payload_Size in force (Device Control register), bytes.
    pub max_payload_bytes: Option<u32>,
}

/// A PCI Express link as sysfs reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct PcieLinkFacts {
    /// `current_link_speed` (`8.0 GT/s PCIe`).
    pub current_speed: String,
    /// `current_link_width`.
    pub current_width: u32,
    /// `max_link_speed`.
    pub max_speed: Option<String>,
    /// `max_link_width`.
    pub max_width: Option<u32>,
}

/// The PCI-X capability of a function (PCI Local Bus PCI-X Addendum; `pci_regs.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcixFacts {
    /// A PCI-X device: what it can do.
    Device {
        /// 64-bit bus interface.
        bits64: bool,
        /// 133 MHz capable.
        capable_133: bool,
        /// PCI-X 266 (mode 2) capable.
        capable_266: bool,
        /// PCI-X 533 capable.
        capable_533: bool,
    },
    /// A bridge to a PCI-X bus: the mode its secondary bus runs at.
    Bridge {
        /// The secondary bus is 64 bits wide.
        bits64: bool,
        /// Secondary Bus Mode and Frequency (the 4-bit field of the secondary status).
        mode_frequency: u8,
    },
}

/// The route to a server and the interface it leaves through.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteFacts {
    /// The server as named.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// What was found.
    pub outcome: RouteOutcome,
}

/// What the route lookup found.
#[derive(Clone, Debug, PartialEq)]
pub enum RouteOutcome {
    /// The name has no address; the text says why.
    Unresolved(String),
    /// No route or no interface towards the address.
    NoRoute(IpAddr),
    /// The interface the kernel sends through.
    Found {
        /// The server's address.
        address: IpAddr,
        /// The gateway of an IPv4 route.
        gateway: Option<Ipv4Addr>,
        /// The interface and what it is built on.
        interface: Box<InterfaceFacts>,
    },
}

/// A network interface and what it is built on.
#[derive(Clone, Debug, PartialEq)]
pub struct InterfaceFacts {
    /// Its name.
    pub name: String,
    /// `mtu`.
    pub mtu: u32,
    /// `operstate`.
    pub operstate: String,
    /// `speed` in Mb/s, when positive.
    pub speed_mbps: Option<u64>,
    /// What kind of interface it is.
    pub kind: InterfaceKind,
    /// The interfaces below it that carry this traffic: a bond's members, the bridge port
    /// towards the destination, a VLAN's or macvlan's lower device.
    pub below: Vec<InterfaceFacts>,
    /// How the interfaces below were chosen, when not all of them are followed.
    pub below_reason: Option<String>,
    /// The NIC's PCI functions.
    pub bus: Vec<PciFunctionFacts>,
}

/// One port of an InfiniBand HCA (`/sys/class/infiniband/HCA/ports/N/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfinibandPort {
    /// The HCA (`mlx4_0`).
    pub hca: String,
    /// The port number (from 1).
    pub port: u32,
    /// `rate`: the signalling rate, width and speed (`40 Gb/sec (4X QDR)`).
    pub rate: Option<String>,
    /// `state` (`4: ACTIVE`).
    pub state: Option<String>,
    /// `link_layer` (`InfiniBand`, or `Ethernet` for RoCE and iWARP).
    pub link_layer: Option<String>,
}

/// What kind of interface.
#[derive(Clone, Debug, PartialEq)]
pub enum InterfaceKind {
    /// The loopback interface.
    Loopback,
    /// A physical Ethernet NIC.
    Physical,
    /// IP over InfiniBand, with the HCA port it sends through when sysfs shows it.
    InfiniBand(Option<InfinibandPort>),
    /// A bond.
    Bond {
        /// `bonding/mode` (`802.3ad 4`).
        mode: String,
        /// `bonding/active_slave`.
        active: Option<String>,
        /// `bonding/slaves`.
        members: Vec<String>,
    },
    /// A bridge.
    Bridge {
        /// `brif/`: its ports.
        ports: Vec<String>,
    },
    /// A VLAN on a lower device.
    Vlan,
    /// Stacked on lower devices (macvlan, ipvlan, macvtap…).
    Stacked,
    /// The NIC of a virtual machine (virtio-net, netvsc, vmxnet3, an emulated NIC); the text
    /// says which.
    Paravirtual(String),
    /// A software interface with no hardware (veth, tun, tap, vxlan, dummy…); the text says
    /// which.
    Virtual(String),
}
