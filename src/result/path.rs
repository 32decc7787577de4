//! The storage path of a target, from iopath down to the medium and out to the server: hops,
//! what each can carry, and the queue limits of block devices. Filled by the analysis.
//!
//! Rates are bytes per second (decimal, as links are rated).

use super::shared_list::SharedList;
use serde::{Deserialize, Serialize};

/// The storage path of one target, from iopath down to the medium and out to the server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StoragePath {
    /// The target as given (path or URL).
    pub target: String,
    /// Hops in the order the data passes them going down: file, filesystem, block devices,
    /// the disk, its transport, the controller's bus; for network storage the protocol, the
    /// interface and its link; then every declared hop. The hops below a file are shared
    /// by the paths of the files of one filesystem ([`Hops`]).
    pub hops: Hops,
    /// What could not be seen, and how to declare it.
    pub notes: Vec<String>,
    /// The first 64 KiB of the volume (or file) read back as zeros: it may never have been
    /// written. `None` when not checked (network exports, unreadable devices).
    pub first_blocks_all_zero: Option<bool>,
    /// For a file: the bytes the filesystem has allocated to it (less than its size when
    /// sparse). `None` for devices, or when the file was gone when the analysis ran.
    pub allocated_bytes: Option<u64>,
}

/// The hops of a storage path: a path's own, then those it shares with the paths of the
/// other files of its filesystem.
pub type Hops = SharedList<Hop>;

/// One hop of a storage path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hop {
    /// Identity of the hop across targets (`block:sda`, `pci:0000:01:00.0`, `net:eth0`,
    /// `declared:0`): two targets on the same disk share its key, and their traffic adds up.
    pub key: String,
    /// What the hop is.
    pub kind: HopKind,
    /// Short name (`sda`, `PCIe 3.0 x4`, `eth0`, `4GFC`).
    pub name: String,
    /// One line about it (`ext4 mounted at /`, `SATA link at 6.0 Gb/s`, `MTU 9000, up`).
    pub description: String,
    /// Nesting below the top of the path, for display: a hop under a device-mapper or md
    /// device is one deeper than it.
    pub depth: u32,
    /// Discovered on this host, or declared by the user (`--link`, `--path`).
    pub origin: HopOrigin,
    /// What it can carry, when known.
    pub capacity: Option<HopCapacity>,
    /// Queue limits and settings of a block device.
    pub queue: Option<QueueLimits>,
    /// Storage protocol carried over this hop (`nbd`, `iscsi`, `nvme-tcp`, `fcp`, `ata`,
    /// `ssp`, `smb`, `nfs`): its per-I/O headers count toward the hop's utilisation.
    pub protocol: Option<String>,
    /// Share of the target's read bytes that pass this hop (1 unless a stack spreads I/O
    /// over several devices: 1/N for each of N stripes).
    pub read_share: f64,
    /// Share of the target's written bytes that pass this hop (1 for each mirror of RAID 1).
    pub write_share: f64,
}

/// The key of the file hop of a file target's path: `file:` and the path as given.
///
/// ```
/// use iopath::result::path::{file_hop_key, file_hop_name};
/// assert_eq!(file_hop_key("/data/job.0.7"), "file:/data/job.0.7");
/// assert_eq!(file_hop_name("/data/job.0.7"), "job.0.7");
/// assert_eq!(file_hop_name("/"), "/");
/// ```
pub fn file_hop_key(target: &str) -> String {
    format!("{FILE_HOP_KEY_PREFIX}{target}")
}

/// What the key of every file hop starts with ([`file_hop_key`]).
pub const FILE_HOP_KEY_PREFIX: &str = "file:";

/// The name of the file hop of a file target's path: the last part of the path (the whole
/// path when it has no last part, as `/` or `..`).
pub fn file_hop_name(target: &str) -> String {
    std::path::Path::new(target)
        .file_name()
        .map_or(target.to_string(), |name| {
            name.to_string_lossy().into_owned()
        })
}

/// What a hop is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HopKind {
    /// The file iopath read and wrote.
    File,
    /// The page cache: only buffered I/O passes it; capacity is the host's memory copy speed.
    PageCache,
    /// The filesystem holding a file.
    Filesystem,
    /// A partition of a disk.
    Partition,
    /// A device-mapper device (LVM, dm-crypt, multipath…).
    DeviceMapper,
    /// An md software RAID device.
    MdRaid,
    /// A loop device over a file.
    Loop,
    /// The disk itself (NVMe namespace, SCSI disk, virtio disk…).
    Disk,
    /// How the disk is attached, where that has no rate of its own (NVMe controller, virtio,
    /// SCSI host, iSCSI session, NBD client).
    Transport,
    /// A link from a controller to a device with a rate: SAS, SATA, USB.
    DeviceLink,
    /// A Fibre Channel link.
    FibreChannelLink,
    /// A bus: PCI, PCI-X, PCI Express.
    Bus,
    /// A network interface of this host, with its link.
    NetworkInterface,
    /// A network link (Ethernet, InfiniBand, RoCE) beyond this host.
    NetworkLink,
    /// A storage protocol session (NBD, iSCSI, NFS, SMB) to a server.
    Protocol,
    /// Memory as a medium: tmpfs, a loopback network, a Unix socket.
    Memory,
    /// A declared device or array behind the visible path (`array:3.8GB/s`).
    Device,
}

impl HopKind {
    /// A short word for tables.
    pub fn label(self) -> &'static str {
        match self {
            HopKind::File => "file",
            HopKind::PageCache => "page cache",
            HopKind::Filesystem => "filesystem",
            HopKind::Partition => "partition",
            HopKind::DeviceMapper => "device-mapper",
            HopKind::MdRaid => "md RAID",
            HopKind::Loop => "loop",
            HopKind::Disk => "disk",
            HopKind::Transport => "transport",
            HopKind::DeviceLink => "device link",
            HopKind::FibreChannelLink => "FC link",
            HopKind::Bus => "bus",
            HopKind::NetworkInterface => "interface",
            HopKind::NetworkLink => "network link",
            HopKind::Protocol => "protocol",
            HopKind::Memory => "memory",
            HopKind::Device => "device",
        }
    }
}

/// Where a hop's description comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HopOrigin {
    /// Seen on this host (sysfs, the mount table, the routing table).
    Discovered,
    /// Declared by the user where it cannot be seen.
    Declared,
}

/// What a hop can carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HopCapacity {
    /// Payload bytes per second in each direction (after line encoding and framing).
    pub payload_bytes_per_second: u64,
    /// I/Os per second, where known (declared devices and arrays).
    pub iops: Option<u64>,
    /// Full duplex (each direction has the whole capacity) or shared between directions.
    pub duplex: Duplex,
    /// The catalog entry it comes from (`PCIe 3.0 x4`, `1GbE`), if any.
    pub catalog_name: Option<String>,
    /// The catalog entry's variant (`TCP/IP MTU 1500`), if any.
    pub variant: Option<String>,
    /// How the figure is reached (`8 GT/s × 4 lanes × 128/130 / 8 = …`), or where it came from.
    pub derivation: String,
}

/// Whether the two directions of a hop each have the full capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Duplex {
    /// Each direction carries the full capacity at the same time (PCIe, SAS, Ethernet, FC).
    Full,
    /// Reads and writes share one capacity (SATA, USB 2.0, PCI, PCI-X, memory).
    Half,
}

impl Duplex {
    /// What `inbound` and `outbound` (bytes/s) take of the capacity: the larger of the two
    /// on a full-duplex hop, their sum on a half-duplex one.
    pub fn carried(self, inbound: f64, outbound: f64) -> f64 {
        match self {
            Duplex::Full => inbound.max(outbound),
            Duplex::Half => inbound + outbound,
        }
    }
}

/// Queue limits and settings of a block device, from sysfs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueLimits {
    /// Active I/O scheduler (`none`, `mq-deadline`…).
    pub scheduler: Option<String>,
    /// `queue/nr_requests`: requests the block layer queues per hardware queue.
    pub nr_requests: Option<u32>,
    /// Hardware queues (`mq/` entries).
    pub hardware_queues: Option<u32>,
    /// Tags per hardware queue (`mq/0/nr_tags`): I/Os the driver can have in flight per queue.
    pub hardware_queue_depth: Option<u32>,
    /// SCSI `device/queue_depth`: commands the disk accepts at once (NCQ / TCQ).
    pub device_queue_depth: Option<u32>,
    /// Spinning disk.
    pub rotational: Option<bool>,
    /// `queue/write_cache`: `write back` or `write through`.
    pub write_cache: Option<String>,
    /// Largest request the block layer sends, bytes (`queue/max_sectors_kb`).
    pub max_request_bytes: Option<u64>,
    /// The kernel's read-ahead window for buffered sequential reads, bytes
    /// (`queue/read_ahead_kb`): at queue depth 1 a buffered stream has this much in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_bytes: Option<u64>,
    /// Write-back throttling's target latency, µs (`queue/wbt_lat_usec`; 0: off): buffered
    /// write-back is held back when the device's reads take longer than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback_throttle_latency_us: Option<u64>,
}

impl QueueLimits {
    /// The most I/Os this device can have in flight: the SCSI queue depth when there is one,
    /// else hardware queues × tags per queue.
    pub fn outstanding_limit(&self) -> Option<u32> {
        self.device_queue_depth
            .or(match (self.hardware_queues, self.hardware_queue_depth) {
                (Some(queues), Some(depth)) => Some(queues.saturating_mul(depth)),
                (None, Some(depth)) => Some(depth),
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_limits_prefer_the_scsi_depth() {
        let mut queue = QueueLimits {
            hardware_queues: Some(4),
            hardware_queue_depth: Some(1023),
            ..QueueLimits::default()
        };
        assert_eq!(queue.outstanding_limit(), Some(4092));
        queue.device_queue_depth = Some(32);
        assert_eq!(queue.outstanding_limit(), Some(32));
        assert_eq!(QueueLimits::default().outstanding_limit(), None);
    }
}
