//! What limits a test: the one classification the analysis gives it.
//!
//! ```
//! use iopath::result::Verdict;
//! assert_eq!(Verdict::HostCpuBound.name(), "host-CPU-bound");
//! assert_eq!(Verdict::Inconclusive.short_name(), "?");
//! assert_eq!(Verdict::ServerDiskBound.name(), "server-disk-bound");
//! ```

use serde::{Deserialize, Serialize};

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
    /// Too few I/Os in flight, with evidence that the device has idle parallelism (a local
    /// device whose queue was not full, or a deeper queue that gave more): more outstanding
    /// I/O would raise throughput.
    QueueDepthBound,
    /// The queue was kept full and nothing visible limits, but nothing shows that more
    /// outstanding I/O would help: the time each I/O takes where iopath cannot see (beyond the
    /// last visible hop, behind the page cache, in a device whose queue is unknown) sets the
    /// rate. The confirming experiment (a deeper queue) tells whether the far end has idle
    /// parallelism.
    LatencyBound,
    /// A buffered sequential read carried by the kernel's read-ahead window: one window in
    /// flight at a time, so the rate is the window over the time one window takes, whatever
    /// iopath's queue depth.
    ReadAheadBound,
    /// Buffered writes paced by the kernel's write-back: the device wrote what the test wrote,
    /// with the page cache's dirty limits and write-back throttling between them.
    WriteBackBound,
    /// The user's rate limit (`--rate`, `--rate-iops`) or think time.
    RateLimited,
    /// A token bucket outside iopath (a cloud disk's burst credits, a rate-limited volume, a
    /// shaped link): a burst rate until the bucket ran dry, then the baseline.
    BurstBucket,
    /// Writes fell to a lower rate after a number of bytes: a write cache (an SSD's SLC area,
    /// a write-back cache) filled.
    WriteCliff,
    /// Faster than a hop below a cache can carry: page cache, array cache, compression.
    Cached,
    /// Not enough is known; the evidence says what is missing.
    Inconclusive,
    /// A server's disk or md array was busy nearly all the time while the client's hops were
    /// not full (`--server-metrics`).
    ServerDiskBound,
    /// A server's core was saturated while the client's were not, by the client (`--server-metrics`):
    /// one core at 100 % while the others idle is a server process held to one core
    /// (single-threaded or pinned) or other work on that core.
    ServerCpuBound,
    /// A server's network interface ran at its speed (`--server-metrics`).
    ServerLinkBound,
    /// A switch port in the path ran at its speed (`--switch-snmp`).
    SwitchLinkBound,
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
            Verdict::LatencyBound => "latency-bound",
            Verdict::ReadAheadBound => "read-ahead-bound",
            Verdict::WriteBackBound => "write-back-bound",
            Verdict::RateLimited => "rate-limited",
            Verdict::BurstBucket => "burst-bucket",
            Verdict::WriteCliff => "write-cliff",
            Verdict::Cached => "cached",
            Verdict::Inconclusive => "inconclusive",
            Verdict::ServerDiskBound => "server-disk-bound",
            Verdict::ServerCpuBound => "server-CPU-bound",
            Verdict::ServerLinkBound => "server-link-bound",
            Verdict::SwitchLinkBound => "switch-link-bound",
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
            Verdict::LatencyBound => "latency",
            Verdict::ReadAheadBound => "read-ahead",
            Verdict::WriteBackBound => "write-back",
            Verdict::RateLimited => "rate",
            Verdict::BurstBucket => "bucket",
            Verdict::WriteCliff => "cliff",
            Verdict::Cached => "cached",
            Verdict::Inconclusive => "?",
            Verdict::ServerDiskBound => "srv-disk",
            Verdict::ServerCpuBound => "srv-cpu",
            Verdict::ServerLinkBound => "srv-link",
            Verdict::SwitchLinkBound => "sw-link",
        }
    }
}
