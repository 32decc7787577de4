//! The far end's own counters in the verdict (`--server-metrics`): each server device's use
//! over the test, and the verdict that ends on the server when one of them was full while
//! nothing on the client was.
//!
//! The client's analysis runs first ([`super::verdict`]). Its verdict stands when it rests on
//! something the client saw full or set: a link or bus at capacity, a cache, a rate cap, a
//! device at its declared or discovered limit, or the client's CPU saturated by iopath's own
//! thread or process. Otherwise the server's counters are weighed, in this order:
//!
//! 1. a switch port (`--switch-snmp`) at [`SERVER_BOUND_PERCENT`] of its speed or more →
//!    *switch-link-bound*, naming the switch and the port;
//! 1. an interface at [`SERVER_BOUND_PERCENT`] of its speed or more → *server-link-bound*;
//! 2. an md array, then a disk, busy [`SERVER_BOUND_PERCENT`] of the time or more, that moved
//!    at least [`RELATED_TRAFFIC_SHARE`] of the client's bytes → *server-disk-bound*;
//! 3. a core busy [`SERVER_BOUND_PERCENT`] or more → *server-CPU-bound* (one core full while
//!    the others idle: a server process held to one core, single-threaded or pinned, or other
//!    work on that core), unless every core of the client was full too (a server on the
//!    client's own host then shows the client's cores).
//!
//! Where none holds, the client's verdict stays, and its evidence says what the server's
//! busiest devices were.

use crate::result::{
    ServerDeviceKind, ServerHopUtilisation, ServerSeries, TestAnalysis, TestResult, Verdict,
};
use crate::units::{format_percent, format_rate};

use super::verdict::{HOST_BOUND_PERCENT, THREAD_BOUND_PERCENT};

/// A server device at least this busy (percent of the time, of a core, or of an interface's
/// speed) limits the result.
pub const SERVER_BOUND_PERCENT: f64 = 90.0;
/// A busy server disk explains the client's rate only if it moved at least this share of the
/// client's bytes: a disk busy with other work does not.
pub const RELATED_TRAFFIC_SHARE: f64 = 0.1;

/// Each device's mean use over the test.
pub fn server_hops(series: &[ServerSeries]) -> Vec<ServerHopUtilisation> {
    let mut hops = Vec::new();
    for server in series {
        for device in &server.devices {
            let total_ns: f64 = device.points.iter().map(|p| p.duration_ns as f64).sum();
            if total_ns <= 0.0 {
                continue;
            }
            let mean = |value: fn(&crate::result::ServerPoint) -> f64| {
                device
                    .points
                    .iter()
                    .map(|p| value(p) * p.duration_ns as f64)
                    .sum::<f64>()
                    / total_ns
            };
            hops.push(ServerHopUtilisation {
                source: server.source.clone(),
                node_name: server.node_name.clone(),
                kind: device.kind,
                name: device.name.clone(),
                busy_percent: mean(|p| p.busy_percent),
                peak_busy_percent: device
                    .points
                    .iter()
                    .map(|p| p.busy_percent)
                    .fold(0.0, f64::max),
                read_bytes_per_second: mean(|p| p.read_bytes_per_second),
                write_bytes_per_second: mean(|p| p.write_bytes_per_second),
                queue: mean(|p| p.queue),
                speed_bytes_per_second: device.speed_bytes_per_second,
                intervals: device.points.len() as u32,
            });
        }
    }
    hops
}

/// Adds the server's devices to `analysis` and, where one of them was the wall and the
/// client's verdict rests on nothing it saw full, ends the verdict there.
pub fn judge(analysis: &mut TestAnalysis, test: &TestResult) {
    analysis.server_hops = server_hops(&test.server_metrics);
    // Nothing moved: no device of the server explains a rate.
    if analysis.server_hops.is_empty() || test.total.io_count == 0 {
        return;
    }
    let cpu = &analysis.cpu;
    let host_busy =
        cpu.cores.iter().map(|c| c.busy_percent).sum::<f64>() / cpu.cores.len().max(1) as f64;
    let host_full = !cpu.cores.is_empty() && host_busy >= HOST_BOUND_PERCENT;
    let client_wall = match analysis.verdict {
        Verdict::LinkBound | Verdict::BusBound | Verdict::Cached | Verdict::RateLimited => true,
        Verdict::DeviceBound => analysis.limiting_hop.is_some(),
        // iopath's own work saturating the client.
        Verdict::HostCpuBound => {
            cpu.busiest_thread_percent >= THREAD_BOUND_PERCENT
                || cpu.process_percent_of_host >= HOST_BOUND_PERCENT
        }
        _ => false,
    };
    let client_summary = format!("the client alone: {}", analysis.verdict.name());
    if !client_wall {
        let client_bytes = test.total.bytes_per_second;
        // Every core of the client full: a server core full says nothing of the server
        // process when the server shares those cores (an exporter on the client's host).
        let cores_count = !host_full;
        if let Some((verdict, evidence, key)) =
            server_wall(&analysis.server_hops, client_bytes, cores_count)
        {
            analysis.evidence = format!("{evidence}; {client_summary}");
            analysis.verdict = verdict;
            analysis.limiting_hop = Some(key);
            analysis.missing.clear();
            return;
        }
    }
    analysis.evidence = format!(
        "{}; {}",
        analysis.evidence,
        nothing_full(&analysis.server_hops)
    );
}

/// A server's (or switch's) name in evidence: its host name (`sysName`), else its URL.
fn server_name(hop: &ServerHopUtilisation) -> &str {
    hop.node_name.as_deref().unwrap_or(&hop.source)
}

/// The key a server hop is named by in [`TestAnalysis::limiting_hop`]: `server:NODE:disk:sdb`,
/// or `switch:NAME:port:PORT` for a switch's port.
pub fn hop_key(hop: &ServerHopUtilisation) -> String {
    if hop.kind == ServerDeviceKind::SwitchPort {
        return format!("switch:{}:port:{}", server_name(hop), hop.name);
    }
    format!(
        "server:{}:{}:{}",
        server_name(hop),
        hop.kind.name(),
        hop.name
    )
}

fn busiest(hops: &[ServerHopUtilisation], kind: ServerDeviceKind) -> Option<&ServerHopUtilisation> {
    hops.iter()
        .filter(|hop| hop.kind == kind)
        .max_by(|a, b| a.busy_percent.total_cmp(&b.busy_percent))
}

fn server_wall(
    hops: &[ServerHopUtilisation],
    client_bytes_per_second: f64,
    cores_count: bool,
) -> Option<(Verdict, String, String)> {
    // A switch's port first: it lies between the client and the server.
    for (kind, verdict, words) in [
        (
            ServerDeviceKind::SwitchPort,
            Verdict::SwitchLinkBound,
            ["switch", "port", "into the switch", "out of it"],
        ),
        (
            ServerDeviceKind::Interface,
            Verdict::ServerLinkBound,
            ["server", "interface", "received", "sent"],
        ),
    ] {
        let Some(link) = busiest(hops, kind).filter(|l| l.busy_percent >= SERVER_BOUND_PERCENT)
        else {
            continue;
        };
        let [owner, device, incoming, outgoing] = words;
        let evidence = format!(
            "{owner} {}: {device} {} at {} of its speed {} ({incoming} {}, {outgoing} {})",
            server_name(link),
            link.name,
            format_percent(link.busy_percent),
            format_rate(link.speed_bytes_per_second.unwrap_or(0) as f64),
            format_rate(link.read_bytes_per_second),
            format_rate(link.write_bytes_per_second),
        );
        return Some((verdict, evidence, hop_key(link)));
    }
    for kind in [ServerDeviceKind::Array, ServerDeviceKind::Disk] {
        let disk = hops
            .iter()
            .filter(|hop| hop.kind == kind && hop.busy_percent >= SERVER_BOUND_PERCENT)
            .filter(|hop| {
                hop.read_bytes_per_second + hop.write_bytes_per_second
                    >= RELATED_TRAFFIC_SHARE * client_bytes_per_second
            })
            .max_by(|a, b| a.busy_percent.total_cmp(&b.busy_percent));
        if let Some(disk) = disk {
            let evidence = format!(
                "server {}: {} {} busy {} of the time ({} read, {} written, {:.1} I/Os in flight on average) while the client moved {}",
                server_name(disk),
                disk.kind.name(),
                disk.name,
                format_percent(disk.busy_percent),
                format_rate(disk.read_bytes_per_second),
                format_rate(disk.write_bytes_per_second),
                disk.queue,
                format_rate(client_bytes_per_second),
            );
            return Some((Verdict::ServerDiskBound, evidence, hop_key(disk)));
        }
    }
    let core = busiest(hops, ServerDeviceKind::Core)
        .filter(|core| cores_count && core.busy_percent >= SERVER_BOUND_PERCENT)?;
    let others: Vec<f64> = hops
        .iter()
        .filter(|hop| {
            hop.kind == ServerDeviceKind::Core && hop.source == core.source && hop.name != core.name
        })
        .map(|hop| hop.busy_percent)
        .collect();
    let shape = if others.is_empty() {
        String::new()
    } else {
        let mean = others.iter().sum::<f64>() / others.len() as f64;
        let single = if mean < 50.0 {
            ": one core full while the others have room, a server process held to one core (single-threaded or pinned) or other work on that core"
        } else {
            ""
        };
        let cores = match others.len() {
            1 => "other core".to_string(),
            count => format!("other {count} cores"),
        };
        format!(", the {cores} {} on average{single}", format_percent(mean))
    };
    let evidence = format!(
        "server {}: core {} busy {}{shape}",
        server_name(core),
        core.name,
        format_percent(core.busy_percent),
    );
    Some((Verdict::ServerCpuBound, evidence, hop_key(core)))
}

/// What each server's busiest devices were, when the verdict stays the client's: nothing
/// full, or a full device that the client's own limit explains first.
fn nothing_full(hops: &[ServerHopUtilisation]) -> String {
    let mut sources: Vec<&str> = hops.iter().map(|hop| hop.source.as_str()).collect();
    sources.dedup();
    let mut servers = Vec::new();
    for source in sources {
        let of_server: Vec<ServerHopUtilisation> = hops
            .iter()
            .filter(|hop| hop.source == source)
            .cloned()
            .collect();
        let mut parts = Vec::new();
        for kind in [
            ServerDeviceKind::Array,
            ServerDeviceKind::Disk,
            ServerDeviceKind::Core,
            ServerDeviceKind::Interface,
            ServerDeviceKind::SwitchPort,
        ] {
            if let Some(hop) = busiest(&of_server, kind) {
                parts.push(format!(
                    "busiest {} {} at {}",
                    kind.name(),
                    hop.name,
                    format_percent(hop.busy_percent)
                ));
            }
        }
        let full = of_server
            .iter()
            .any(|hop| hop.busy_percent >= SERVER_BOUND_PERCENT);
        let said = if full {
            "the client's verdict stands"
        } else {
            "nothing full"
        };
        let what = if of_server
            .iter()
            .any(|hop| hop.kind == ServerDeviceKind::SwitchPort)
        {
            "switch"
        } else {
            "server"
        };
        servers.push(format!(
            "{what} {}: {said} ({})",
            server_name(&of_server[0]),
            parts.join(", ")
        ));
    }
    servers.join("; ")
}
