//! What a server's own counters showed during a test (`iopath run --server-metrics URL`): one
//! series per device of the server — each core, disk, md array and network interface — on the
//! test's clock, one point a second like the client's own series.
//!
//! ```
//! use iopath::result::{ServerDeviceKind, ServerPoint};
//! let point = ServerPoint { end_ns: 1_000_000_000, duration_ns: 1_000_000_000, ..Default::default() };
//! assert_eq!(point.start_ns(), 0);
//! assert_eq!(ServerDeviceKind::Disk.name(), "disk");
//! ```

use serde::{Deserialize, Serialize};

/// One server's counters during one test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSeries {
    /// Where they were read (the exporter's URL, any password masked).
    pub source: String,
    /// The server's host name (`node_uname_info`'s `nodename`), control characters escaped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// Every device the exporter reported, in the exporter's order by kind.
    pub devices: Vec<ServerDeviceSeries>,
    /// Scrapes during the test that failed (time-out, refused, malformed); their seconds are
    /// missing from the points. Absent when none.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub failed_scrapes: u64,
    /// The last failure's message, control characters escaped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

/// The kind of a server's device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerDeviceKind {
    /// One CPU core (`node_cpu_seconds_total`).
    Core,
    /// A block device (`node_disk_*`).
    Disk,
    /// An md RAID array (`node_md_*`, its figures from `node_disk_*` of the array).
    Array,
    /// A network interface (`node_network_*`).
    Interface,
    /// A switch's port (`--switch-snmp`: IF-MIB `ifHCInOctets`, `ifHCOutOctets`, its speed).
    /// Received is what came into the switch on that port, sent what the switch sent out of it.
    SwitchPort,
}

impl ServerDeviceKind {
    /// The kind as written in reports (`disk`).
    pub fn name(self) -> &'static str {
        match self {
            ServerDeviceKind::Core => "core",
            ServerDeviceKind::Disk => "disk",
            ServerDeviceKind::Array => "array",
            ServerDeviceKind::Interface => "interface",
            ServerDeviceKind::SwitchPort => "switch port",
        }
    }
}

/// One device of a server, second by second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerDeviceSeries {
    /// Core, disk, array or interface.
    pub kind: ServerDeviceKind,
    /// Its name on the server (`cpu3`, `sdb`, `md0`, `eth0`), control characters escaped.
    pub name: String,
    /// An interface's speed (`node_network_speed_bytes`), bytes per second, where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_bytes_per_second: Option<u64>,
    /// An array's active members (`node_md_disks{state="active"}`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_members: Option<u32>,
    /// Its figures, one point per scrape interval inside the test's measured time.
    pub points: Vec<ServerPoint>,
}

/// A device's figures over one scrape interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerPoint {
    /// End of the interval, ns after the test's measured time began.
    pub end_ns: u64,
    /// Length of the interval, ns.
    pub duration_ns: u64,
    /// A core: busy (not idle, not waiting for I/O), percent. A disk or array: time with I/O
    /// in flight (`node_disk_io_time_seconds_total`), percent. An interface: the busier
    /// direction against its speed, percent (0 when the speed is not known).
    pub busy_percent: f64,
    /// A disk or array: bytes read per second; an interface: bytes received per second.
    pub read_bytes_per_second: f64,
    /// A disk or array: bytes written per second; an interface: bytes sent per second.
    pub write_bytes_per_second: f64,
    /// A disk or array: mean I/Os in flight (`node_disk_io_time_weighted_seconds_total` per
    /// second); 0 for cores and interfaces.
    pub queue: f64,
}

impl ServerPoint {
    /// Start of the interval, ns after the test's measured time began.
    pub fn start_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.duration_ns)
    }
}

/// One server device's use over a test, as the analysis weighs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerHopUtilisation {
    /// [`ServerSeries::source`].
    pub source: String,
    /// [`ServerSeries::node_name`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// Core, disk, array or interface.
    pub kind: ServerDeviceKind,
    /// Its name on the server.
    pub name: String,
    /// Mean of [`ServerPoint::busy_percent`] over the test, weighted by interval length.
    pub busy_percent: f64,
    /// The busiest interval's [`ServerPoint::busy_percent`].
    pub peak_busy_percent: f64,
    /// Mean bytes read (disk) or received (interface) per second.
    pub read_bytes_per_second: f64,
    /// Mean bytes written (disk) or sent (interface) per second.
    pub write_bytes_per_second: f64,
    /// Mean I/Os in flight (disks and arrays).
    pub queue: f64,
    /// An interface's speed, bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_bytes_per_second: Option<u64>,
    /// Intervals the means are taken over.
    pub intervals: u32,
}
