//! What one scrape of a node exporter says: the counters of each core, disk, md array and
//! network interface, read from the standard metric families.

use super::exposition::Sample;
use std::collections::BTreeMap;

/// The metric families kept from an answer.
pub const NODE_PREFIXES: [&str; 5] = [
    "node_cpu_seconds_total",
    "node_disk_",
    "node_network_",
    "node_md_disks",
    "node_uname_info",
];

/// A core's time counters, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CoreTimes {
    /// Every mode added up.
    pub total: f64,
    /// Neither idle nor waiting for I/O.
    pub busy: f64,
}

/// A block device's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiskCounters {
    /// `node_disk_read_bytes_total`.
    pub read_bytes: f64,
    /// `node_disk_written_bytes_total`.
    pub written_bytes: f64,
    /// `node_disk_io_time_seconds_total`: time with I/O in flight.
    pub io_time_seconds: f64,
    /// `node_disk_io_time_weighted_seconds_total`: I/Os in flight × time.
    pub weighted_io_time_seconds: f64,
}

/// A network interface's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InterfaceCounters {
    /// `node_network_receive_bytes_total`.
    pub received_bytes: f64,
    /// `node_network_transmit_bytes_total`.
    pub transmitted_bytes: f64,
    /// `node_network_speed_bytes` (absent, or negative when the link is down).
    pub speed_bytes_per_second: Option<f64>,
}

/// One scrape, by device name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeSample {
    /// `node_uname_info`'s `nodename`.
    pub node_name: Option<String>,
    /// By core number (the `cpu` label).
    pub cores: BTreeMap<u32, CoreTimes>,
    /// By device name.
    pub disks: BTreeMap<String, DiskCounters>,
    /// md arrays, by device name: their active members.
    pub arrays: BTreeMap<String, u32>,
    /// By interface name.
    pub interfaces: BTreeMap<String, InterfaceCounters>,
}

impl NodeSample {
    /// Collects the samples of one answer.
    pub fn from_samples(samples: &[Sample]) -> NodeSample {
        let mut node = NodeSample::default();
        for sample in samples {
            if !sample.value.is_finite() {
                continue;
            }
            let value = sample.value;
            match sample.name.as_str() {
                "node_uname_info" => {
                    node.node_name = sample.label("nodename").map(str::to_string);
                }
                "node_cpu_seconds_total" => {
                    let (Some(cpu), Some(mode)) = (sample.label("cpu"), sample.label("mode"))
                    else {
                        continue;
                    };
                    let Ok(cpu) = cpu.parse::<u32>() else {
                        continue;
                    };
                    let core = node.cores.entry(cpu).or_default();
                    core.total += value;
                    if mode != "idle" && mode != "iowait" {
                        core.busy += value;
                    }
                }
                "node_md_disks" => {
                    if let (Some(device), Some("active")) =
                        (sample.label("device"), sample.label("state"))
                    {
                        node.arrays
                            .insert(device.to_string(), value.max(0.0) as u32);
                    }
                }
                name => {
                    let Some(device) = sample.label("device") else {
                        continue;
                    };
                    if let Some(field) = name.strip_prefix("node_disk_") {
                        let disk = node.disks.entry(device.to_string()).or_default();
                        match field {
                            "read_bytes_total" => disk.read_bytes = value,
                            "written_bytes_total" => disk.written_bytes = value,
                            "io_time_seconds_total" => disk.io_time_seconds = value,
                            "io_time_weighted_seconds_total" => {
                                disk.weighted_io_time_seconds = value;
                            }
                            _ => {}
                        }
                    } else if let Some(field) = name.strip_prefix("node_network_") {
                        let interface = match field {
                            "receive_bytes_total" | "transmit_bytes_total" | "speed_bytes" => {
                                node.interfaces.entry(device.to_string()).or_default()
                            }
                            _ => continue,
                        };
                        match field {
                            "receive_bytes_total" => interface.received_bytes = value,
                            "transmit_bytes_total" => interface.transmitted_bytes = value,
                            _ => interface.speed_bytes_per_second = Some(value),
                        }
                    }
                }
            }
        }
        node
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::exposition::parse;

    #[test]
    fn a_node_exporter_answer_becomes_counters() {
        let text = r#"
node_cpu_seconds_total{cpu="0",mode="idle"} 90
node_cpu_seconds_total{cpu="0",mode="user"} 8
node_cpu_seconds_total{cpu="0",mode="iowait"} 2
node_cpu_seconds_total{cpu="1",mode="system"} 5
node_disk_read_bytes_total{device="loop7"} 1e6
node_disk_io_time_seconds_total{device="loop7"} 3.5
node_disk_io_time_weighted_seconds_total{device="loop7"} 7
node_md_disks{device="md0",state="active"} 4
node_md_disks{device="md0",state="failed"} 0
node_network_receive_bytes_total{device="eth0"} 100
node_network_transmit_bytes_total{device="eth0"} 200
node_network_speed_bytes{device="eth0"} 1.25e8
node_network_up{device="eth0"} 1
node_uname_info{domainname="(none)",machine="x86_64",nodename="nas1"} 1
"#;
        let node = NodeSample::from_samples(&parse(text, &NODE_PREFIXES).unwrap());
        assert_eq!(node.node_name.as_deref(), Some("nas1"));
        assert_eq!(
            node.cores[&0],
            CoreTimes {
                total: 100.0,
                busy: 8.0
            }
        );
        assert_eq!(node.cores[&1].busy, 5.0);
        assert_eq!(node.disks["loop7"].read_bytes, 1e6);
        assert_eq!(node.disks["loop7"].weighted_io_time_seconds, 7.0);
        assert_eq!(node.arrays["md0"], 4);
        assert_eq!(node.interfaces["eth0"].speed_bytes_per_second, Some(1.25e8));
        assert_eq!(node.interfaces["eth0"].transmitted_bytes, 200.0);
    }
}
