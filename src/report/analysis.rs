//! What the analysis adds to a RunResult: the storage path of each target (hops with what each
//! can carry) and, per test, the utilisation of every hop, the CPU and the queue, one verdict
//! with its evidence, trust notes and confidence intervals.
//!
//! Plain serde data like the rest of the schema: filled by `crate::analysis::analyse`, read by
//! the exporters. Rates are bytes per second (decimal, as links are rated); percentages are
//! 0–100 (and above 100 when a figure exceeds a capacity). The small formatting helpers at the
//! end are shared by the exporters and the CLI so that every place writes a rate the same way.
//!
//! ```
//! use iopath::report::analysis::{Verdict, format_rate};
//! assert_eq!(Verdict::LinkBound.name(), "link-bound");
//! assert_eq!(format_rate(117_685_305.0), "117.7 MB/s");
//! assert_eq!(format_rate(7_876_923_076.9), "7.88 GB/s");
//! ```

use serde::{Deserialize, Serialize};

/// The storage path of one target, from iopath down to the medium and out to the server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StoragePath {
    /// The target as given (path or URL).
    pub target: String,
    /// Hops in the order the data passes them going down: file, filesystem, block devices,
    /// the disk, its transport, the controller's bus; for network storage the protocol, the
    /// interface and its link; then every declared hop.
    pub hops: Vec<Hop>,
    /// What could not be seen, and how to declare it.
    pub notes: Vec<String>,
    /// The first 64 KiB of the volume (or file) read back as zeros: it may never have been
    /// written. `None` when not checked (network exports, unreadable devices).
    pub first_blocks_all_zero: Option<bool>,
    /// For a file: the bytes the filesystem has allocated to it (less than its size when
    /// sparse). `None` for devices, or when the file was gone when the analysis ran.
    pub allocated_bytes: Option<u64>,
}

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

/// What limits a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A link (Ethernet, Fibre Channel, InfiniBand, SAS, SATA, USB) is at its capacity.
    LinkBound,
    /// A bus (PCI Express, PCI-X, PCI) is at its capacity.
    BusBound,
    /// The device or array: a declared device at its capacity, or no hop near capacity with
    /// the queue full and the CPU not saturated.
    DeviceBound,
    /// The host's CPU: a core or iopath's busiest thread saturated, or memory copying.
    HostCpuBound,
    /// Latency-bound: too few I/Os in flight; more outstanding I/O would raise throughput.
    QueueDepthBound,
    /// The user's rate limit (`--rate`, `--rate-iops`) or think time.
    RateLimited,
    /// Faster than a hop below a cache can carry: page cache, array cache, compression.
    Cached,
    /// Not enough is known; the evidence says what is missing.
    Inconclusive,
}

impl Verdict {
    /// The classification as written in reports (`link-bound`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::LinkBound => "link-bound",
            Verdict::BusBound => "bus-bound",
            Verdict::DeviceBound => "device-bound",
            Verdict::HostCpuBound => "host-CPU-bound",
            Verdict::QueueDepthBound => "queue-depth-bound",
            Verdict::RateLimited => "rate-limited",
            Verdict::Cached => "cached",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// One word for a narrow table column (`link`, `cpu`, `?`).
    pub fn short_name(self) -> &'static str {
        match self {
            Verdict::LinkBound => "link",
            Verdict::BusBound => "bus",
            Verdict::DeviceBound => "device",
            Verdict::HostCpuBound => "cpu",
            Verdict::QueueDepthBound => "queue",
            Verdict::RateLimited => "rate",
            Verdict::Cached => "cached",
            Verdict::Inconclusive => "?",
        }
    }
}

/// The analysis of one test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestAnalysis {
    /// The one classification.
    pub verdict: Verdict,
    /// Its evidence, one line (`117.0 MB/s = 99 % of 1GbE (TCP/IP MTU 1500 payload 117.7 MB/s)`).
    pub evidence: String,
    /// Key of the hop the verdict names, if it names one.
    pub limiting_hop: Option<String>,
    /// For an inconclusive verdict: what is missing to decide.
    pub missing: Vec<String>,
    /// Utilisation of every hop with a known capacity.
    pub hops: Vec<HopUtilisation>,
    /// Use of the host's CPU.
    pub cpu: CpuUtilisation,
    /// Outstanding I/O, configured and achieved.
    pub queue: QueueUtilisation,
    /// 95 % confidence intervals of the rates.
    pub confidence: TestConfidence,
    /// Reasons to doubt the figures.
    pub trust_notes: Vec<TrustNote>,
    /// Memory available on the host when the analysis ran (`MemAvailable`), bytes.
    pub memory_available_bytes: Option<u64>,
}

/// Traffic through one hop during a test, against its capacity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HopUtilisation {
    /// [`Hop::key`].
    pub hop_key: String,
    /// [`Hop::name`].
    pub hop_name: String,
    /// [`Hop::kind`].
    pub kind: HopKind,
    /// Declared by the user.
    pub declared: bool,
    /// Bytes per second toward the host (read data, write replies), protocol headers included.
    pub inbound_bytes_per_second: f64,
    /// Bytes per second away from the host (write data, requests), protocol headers included.
    pub outbound_bytes_per_second: f64,
    /// The part of both directions that is protocol headers, bytes per second.
    pub protocol_overhead_bytes_per_second: f64,
    /// [`HopCapacity::payload_bytes_per_second`].
    pub capacity_bytes_per_second: u64,
    /// I/Os per second through the hop.
    pub iops: f64,
    /// [`HopCapacity::iops`].
    pub iops_capacity: Option<u64>,
    /// The busier of bytes and I/Os against capacity, percent: the busier direction for a
    /// full-duplex hop, both directions together for a shared one.
    pub utilisation_percent: f64,
    /// Only buffered I/O reaches this hop through the page cache, which may have absorbed it:
    /// a figure above capacity here means cached, not wrong.
    pub below_page_cache: bool,
}

/// Use of the host's CPU during a test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUtilisation {
    /// iopath's user + system time as a share of every CPU, percent.
    pub process_percent_of_host: f64,
    /// iopath's busiest worker thread, percent of one core.
    pub busiest_thread_percent: f64,
    /// The busiest core (all processes), if CPU figures were taken.
    pub busiest_core: Option<u32>,
    /// Its busy share, percent.
    pub busiest_core_percent: f64,
    /// Every core.
    pub cores: Vec<CoreUtilisation>,
}

/// Use of one core.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoreUtilisation {
    /// CPU number.
    pub cpu: u32,
    /// Busy (not idle, not waiting for I/O), percent.
    pub busy_percent: f64,
    /// Serving hardware interrupts, percent.
    pub irq_percent: f64,
    /// Serving software interrupts (block completions, network receive), percent.
    pub softirq_percent: f64,
}

/// Outstanding I/O of a test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueUtilisation {
    /// Worker threads × queue depth, summed over jobs.
    pub configured_outstanding: u32,
    /// Little's law: IOPS × mean latency, summed over directions.
    pub achieved_outstanding: f64,
    /// The smallest outstanding-I/O limit of a device on the path, if any was seen.
    pub device_queue_limit: Option<u32>,
}

/// 95 % confidence intervals of one test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TestConfidence {
    /// Reads.
    pub read: DirectionConfidence,
    /// Writes.
    pub write: DirectionConfidence,
    /// Both.
    pub total: DirectionConfidence,
}

/// Confidence intervals of one direction (absent with fewer than two full intervals).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionConfidence {
    /// Of bytes per second.
    pub bytes_per_second: Option<ConfidenceInterval>,
    /// Of I/Os per second.
    pub iops: Option<ConfidenceInterval>,
}

/// A Student-t confidence interval of the mean of a per-interval series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceInterval {
    /// Mean of the full intervals' rates.
    pub mean: f64,
    /// Half the interval's width, same unit as the mean.
    pub half_width: f64,
    /// Half-width as a percentage of the mean.
    pub half_width_percent: f64,
    /// Full intervals used (the last, shorter one is left out).
    pub intervals: u32,
    /// Confidence level, percent (95).
    pub confidence_percent: u32,
}

/// A reason to doubt a figure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustNote {
    /// What kind of doubt.
    pub kind: TrustKind,
    /// The note, with its figures.
    pub message: String,
}

/// Kinds of doubt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustKind {
    /// Buffered I/O: the page cache sits between iopath and the device.
    BufferedIo,
    /// The working set fits in free memory: buffered reads may never reach the device.
    WorkingSetInMemory,
    /// A rate above what a hop can carry.
    AboveCapacity,
    /// Reads of a volume that looks never written (zeros, sparse).
    NeverWritten,
    /// Too short for the variation seen: a wide confidence interval.
    TooShort,
    /// A trend across the intervals: not steady.
    NotSteady,
    /// I/O errors happened.
    Errors,
    /// The test was cut short.
    Partial,
}

/// Formats a rate in decimal units with three or four significant digits (`117.7 MB/s`,
/// `7.88 GB/s`, `850 kB/s`).
pub fn format_rate(bytes_per_second: f64) -> String {
    let value = bytes_per_second.max(0.0);
    if value >= 1e12 {
        format!("{:.2} TB/s", value / 1e12)
    } else if value >= 1e9 {
        format!("{:.2} GB/s", value / 1e9)
    } else if value >= 1e6 {
        format!("{:.1} MB/s", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.0} kB/s", value / 1e3)
    } else {
        format!("{value:.0} B/s")
    }
}

/// Formats a size in binary units (`688 B`, `64.0 MiB`, `23.9 GiB`), as memory and volumes
/// are usually sized.
pub fn format_bytes(bytes: u64) -> String {
    let units = [
        (1u64 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (size, unit) in units {
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} B")
}

/// Formats an I/O rate (`850 IOPS`, `52.5 k IOPS`, `1.20 M IOPS`).
pub fn format_iops(iops: f64) -> String {
    let value = iops.max(0.0);
    if value >= 1e6 {
        format!("{:.2} M IOPS", value / 1e6)
    } else if value >= 1e4 {
        format!("{:.1} k IOPS", value / 1e3)
    } else {
        format!("{value:.0} IOPS")
    }
}

/// Formats a percentage for evidence lines: whole percent from 10 up, one decimal below.
pub fn format_percent(percent: f64) -> String {
    if percent >= 10.0 {
        format!("{percent:.0} %")
    } else {
        format!("{percent:.1} %")
    }
}

/// One line per hop of `path`, indented by depth, for the terminal (`iopath path`).
pub fn path_lines(path: &StoragePath) -> Vec<String> {
    let mut lines = Vec::with_capacity(path.hops.len());
    for hop in &path.hops {
        let indent = "  ".repeat(hop.depth as usize);
        let mut line = format!("{indent}{} [{}]", hop.name, hop.kind.label());
        if !hop.description.is_empty() {
            line.push_str(": ");
            line.push_str(&hop.description);
        }
        if let Some(capacity) = &hop.capacity {
            line.push_str(&format!(
                " — carries {}{}",
                format_rate(capacity.payload_bytes_per_second as f64),
                if capacity.duplex == Duplex::Full {
                    " each way"
                } else {
                    " shared by both directions"
                }
            ));
            if let Some(iops) = capacity.iops {
                line.push_str(&format!(", {}", format_iops(iops as f64)));
            }
        }
        if let Some(queue) = &hop.queue {
            let mut parts = Vec::new();
            if let Some(scheduler) = &queue.scheduler {
                parts.push(format!("scheduler {scheduler}"));
            }
            if let Some(limit) = queue.outstanding_limit() {
                parts.push(format!("queue limit {limit}"));
            }
            if let Some(requests) = queue.nr_requests {
                parts.push(format!("nr_requests {requests}"));
            }
            if let Some(rotational) = queue.rotational {
                parts.push(
                    if rotational {
                        "rotational"
                    } else {
                        "non-rotational"
                    }
                    .into(),
                );
            }
            if let Some(cache) = &queue.write_cache {
                parts.push(format!("write cache: {cache}"));
            }
            if !parts.is_empty() {
                line.push_str(&format!(" ({})", parts.join(", ")));
            }
        }
        if hop.origin == HopOrigin::Declared {
            line.push_str(" (declared)");
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_percentages_read_well() {
        assert_eq!(format_rate(117_685_305.0), "117.7 MB/s");
        assert_eq!(format_rate(1_250_000_000.0), "1.25 GB/s");
        assert_eq!(format_rate(850_000.0), "850 kB/s");
        assert_eq!(format_rate(12.0), "12 B/s");
        assert_eq!(format_bytes(688), "688 B");
        assert_eq!(format_bytes(64 << 20), "64.0 MiB");
        assert_eq!(format_bytes(25_700_000_000), "23.9 GiB");
        assert_eq!(format_iops(850.4), "850 IOPS");
        assert_eq!(format_iops(52_512.0), "52.5 k IOPS");
        assert_eq!(format_iops(1_200_000.0), "1.20 M IOPS");
        assert_eq!(format_percent(97.6), "98 %");
        assert_eq!(format_percent(7.04), "7.0 %");
    }

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

    #[test]
    fn the_schema_round_trips() {
        let path = StoragePath {
            target: "/dev/sdb".into(),
            hops: vec![Hop {
                key: "declared:0".into(),
                kind: HopKind::FibreChannelLink,
                name: "4GFC".into(),
                description: String::new(),
                depth: 0,
                origin: HopOrigin::Declared,
                capacity: Some(HopCapacity {
                    payload_bytes_per_second: 412_903_225,
                    iops: None,
                    duplex: Duplex::Full,
                    catalog_name: Some("4GFC".into()),
                    variant: None,
                    derivation: "…".into(),
                }),
                queue: None,
                protocol: Some("fcp".into()),
                read_share: 1.0,
                write_share: 1.0,
            }],
            notes: vec![],
            first_blocks_all_zero: Some(false),
            allocated_bytes: None,
        };
        let text = serde_json::to_string(&path).unwrap();
        assert!(text.contains("\"fibre_channel_link\""), "{text}");
        assert!(text.contains("\"declared\""), "{text}");
        let back: StoragePath = serde_json::from_str(&text).unwrap();
        assert_eq!(back, path);
        assert_eq!(path_lines(&path).len(), 1);
        assert!(path_lines(&path)[0].contains("(declared)"));
    }
}
