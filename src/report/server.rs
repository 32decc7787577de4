//! The server's devices of a test as lines of text (`--server-metrics`): per server, its
//! busiest core, and every disk, array and interface that was busy or moved data; per switch
//! (`--switch-snmp`), every port that was busy or moved data.
//!
//! ```
//! use iopath::report::server::device_summary;
//! use iopath::result::{ServerDeviceKind, ServerHopUtilisation};
//! let disk = ServerHopUtilisation {
//!     source: "http://nas:9100/metrics".into(), node_name: Some("nas".into()),
//!     kind: ServerDeviceKind::Disk, name: "sdb".into(), busy_percent: 99.0,
//!     peak_busy_percent: 100.0, read_bytes_per_second: 20e6, write_bytes_per_second: 0.0,
//!     queue: 1.9, speed_bytes_per_second: None, intervals: 5,
//! };
//! assert_eq!(device_summary(&disk), "disk sdb busy 99 % (20.0 MB/s read, 0 B/s written, 1.9 in flight)");
//! ```

use crate::result::{ServerDeviceKind, ServerHopUtilisation, TestAnalysis};
use crate::text::escape::escape_controls;
use crate::units::{format_percent, format_rate};

/// A device's use in a few words.
pub fn device_summary(hop: &ServerHopUtilisation) -> String {
    match hop.kind {
        ServerDeviceKind::Core => format!(
            "core {} busy {}",
            hop.name,
            format_percent(hop.busy_percent)
        ),
        ServerDeviceKind::Disk | ServerDeviceKind::Array => format!(
            "{} {} busy {} ({} read, {} written, {:.1} in flight)",
            hop.kind.name(),
            hop.name,
            format_percent(hop.busy_percent),
            format_rate(hop.read_bytes_per_second),
            format_rate(hop.write_bytes_per_second),
            hop.queue
        ),
        ServerDeviceKind::Interface | ServerDeviceKind::SwitchPort => {
            let speed = match hop.speed_bytes_per_second {
                Some(speed) => format!(
                    " = {} of {}",
                    format_percent(hop.busy_percent),
                    format_rate(speed as f64)
                ),
                None => ", speed unknown".into(),
            };
            format!(
                "{} {} in {} out {}{speed}",
                hop.kind.name(),
                hop.name,
                format_rate(hop.read_bytes_per_second),
                format_rate(hop.write_bytes_per_second),
            )
        }
    }
}

/// Whether a device is worth a mention: the busiest core of its server, and every other
/// device that was busy at least 1 % of the time or moved data.
fn worth_showing(hop: &ServerHopUtilisation, busiest_core: Option<&ServerHopUtilisation>) -> bool {
    match hop.kind {
        ServerDeviceKind::Core => busiest_core.is_some_and(|core| std::ptr::eq(core, hop)),
        _ => {
            hop.busy_percent >= 1.0 || hop.read_bytes_per_second + hop.write_bytes_per_second >= 1e5
        }
    }
}

/// One line per server: `server nas (http://…): core cpu1 busy 100 %; disk sdb busy 99 % (…)`.
pub fn server_lines(analysis: &TestAnalysis) -> Vec<String> {
    let mut sources: Vec<&str> = analysis
        .server_hops
        .iter()
        .map(|hop| hop.source.as_str())
        .collect();
    sources.dedup();
    sources
        .into_iter()
        .map(|source| {
            let hops: Vec<&ServerHopUtilisation> = analysis
                .server_hops
                .iter()
                .filter(|hop| hop.source == source)
                .collect();
            let busiest_core = hops
                .iter()
                .copied()
                .filter(|hop| hop.kind == ServerDeviceKind::Core)
                .max_by(|a, b| a.busy_percent.total_cmp(&b.busy_percent));
            let parts: Vec<String> = hops
                .iter()
                .copied()
                .filter(|hop| worth_showing(hop, busiest_core))
                .map(device_summary)
                .collect();
            let name = match hops.first().and_then(|hop| hop.node_name.as_deref()) {
                Some(node) => format!("{node} ({source})"),
                None => source.to_string(),
            };
            let what = if hops
                .iter()
                .any(|hop| hop.kind == ServerDeviceKind::SwitchPort)
            {
                "switch"
            } else {
                "server"
            };
            let said = if parts.is_empty() {
                "nothing busy".to_string()
            } else {
                parts.join("; ")
            };
            escape_controls(&format!("{what} {name}: {said}")).into_owned()
        })
        .collect()
}
