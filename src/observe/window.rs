//! A server's scrapes turned into the per-second series of one test: rates between
//! consecutive scrapes, kept where the interval lies mostly inside the test's measured time,
//! on the test's clock (ns after its measured time began), as the client's own series are.

use super::node_sample::NodeSample;
use super::sampler::{Scrape, ScrapeLog};
use crate::result::{ServerDeviceKind, ServerDeviceSeries, ServerPoint, ServerSeries};
use crate::text::escape::escape_controls;
use std::time::{Duration, Instant};

/// The series of `log` over the measured time `[start, end]`.
pub fn series_in(log: &ScrapeLog, start: Instant, end: Instant) -> ServerSeries {
    let mut series = ServerSeries {
        source: log.source.clone(),
        node_name: log
            .scrapes
            .iter()
            .rev()
            .find_map(|scrape| scrape.sample.node_name.as_deref())
            .map(|name| escape_controls(name).into_owned()),
        ..ServerSeries::default()
    };
    let failures: Vec<&String> = log
        .failures
        .iter()
        .filter(|(at, _)| *at >= start && *at <= end)
        .map(|(_, reason)| reason)
        .collect();
    series.failed_scrapes = failures.len() as u64;
    series.last_failure = failures.last().map(|reason| (*reason).clone());
    let kept = fresh_scrapes(log);
    for pair in kept.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        let length = after.at.saturating_duration_since(before.at);
        let overlap = after
            .at
            .min(end)
            .saturating_duration_since(before.at.max(start));
        if length.is_zero() || overlap < length / 2 {
            continue;
        }
        let end_ns = after.at.saturating_duration_since(start).as_nanos() as u64;
        let ports = if log.switch {
            ServerDeviceKind::SwitchPort
        } else {
            ServerDeviceKind::Interface
        };
        add_interval(
            &mut series,
            &before.sample,
            &after.sample,
            length,
            end_ns,
            ports,
        );
    }
    series
}

/// The longest a switch's agent is taken to serve the same cached counters: a reading with
/// no counter changed after this long is an idle switch, not a stale cache.
pub const MAX_CACHED: Duration = Duration::from_secs(10);

/// The scrapes rates are taken between. An exporter's counters are read live: all of them. A
/// switch's agent serves its counters from a cache it refreshes every few seconds (net-snmp:
/// on the first request after a few seconds; switches: on a timer), so a reading in which no
/// port's counter moved is the previous one again and is passed over, unless [`MAX_CACHED`]
/// has gone by since the last reading kept (the switch is idle). The first reading may come
/// from a cache filled at some time before it: it is kept only once that much time has gone
/// by without a change, else the first reading that changed starts the rates. Rates are then
/// taken over the time between refreshes, as the agent saw them.
fn fresh_scrapes(log: &ScrapeLog) -> Vec<&Scrape> {
    if !log.switch {
        return log.scrapes.iter().collect();
    }
    let mut kept: Vec<&Scrape> = Vec::with_capacity(log.scrapes.len());
    let Some(mut last) = log.scrapes.first() else {
        return kept;
    };
    for scrape in &log.scrapes[1..] {
        if is_fresh(last, scrape, true) {
            kept.push(scrape);
            last = scrape;
        }
    }
    kept
}

/// Whether `next` tells something `last` (the last reading rates were taken from) did not:
/// always for an exporter; for a switch, when a port's counter moved or [`MAX_CACHED`] has
/// gone by (the rule the saved series keep their scrapes by).
pub fn is_fresh(last: &Scrape, next: &Scrape, switch: bool) -> bool {
    !switch
        || last.sample.interfaces != next.sample.interfaces
        || next.at.saturating_duration_since(last.at) >= MAX_CACHED
}

/// Every device's figures over the interval from `before` to `after` (one point each, its
/// `end_ns` 0): what the live dashboard shows of a server or switch each second. `None` when
/// the two readings are not in time order.
pub fn interval_between(before: &Scrape, after: &Scrape, switch: bool) -> Option<ServerSeries> {
    let length = after.at.checked_duration_since(before.at)?;
    if length.is_zero() {
        return None;
    }
    let ports = if switch {
        ServerDeviceKind::SwitchPort
    } else {
        ServerDeviceKind::Interface
    };
    let mut series = ServerSeries {
        node_name: after
            .sample
            .node_name
            .as_deref()
            .map(|name| escape_controls(name).into_owned()),
        ..ServerSeries::default()
    };
    add_interval(&mut series, &before.sample, &after.sample, length, 0, ports);
    Some(series)
}

fn device<'a>(
    series: &'a mut ServerSeries,
    kind: ServerDeviceKind,
    name: &str,
) -> &'a mut ServerDeviceSeries {
    let name = escape_controls(name).into_owned();
    let index = match series
        .devices
        .iter()
        .position(|d| d.kind == kind && d.name == name)
    {
        Some(index) => index,
        None => {
            series.devices.push(ServerDeviceSeries {
                kind,
                name,
                speed_bytes_per_second: None,
                active_members: None,
                points: Vec::new(),
            });
            series.devices.len() - 1
        }
    };
    &mut series.devices[index]
}

/// A counter's growth, or nothing when it went back (the exporter or device restarted).
fn growth(before: f64, after: f64) -> Option<f64> {
    (after >= before).then_some(after - before)
}

fn add_interval(
    series: &mut ServerSeries,
    before: &NodeSample,
    after: &NodeSample,
    length: Duration,
    end_ns: u64,
    ports: ServerDeviceKind,
) {
    let seconds = length.as_secs_f64();
    let point = |busy_percent, read, write, queue| ServerPoint {
        end_ns,
        duration_ns: length.as_nanos() as u64,
        busy_percent,
        read_bytes_per_second: read,
        write_bytes_per_second: write,
        queue,
    };
    for (cpu, now) in &after.cores {
        let Some(then) = before.cores.get(cpu) else {
            continue;
        };
        let (Some(total), Some(busy)) =
            (growth(then.total, now.total), growth(then.busy, now.busy))
        else {
            continue;
        };
        if total <= 0.0 {
            continue;
        }
        let busy = (busy / total * 100.0).clamp(0.0, 100.0);
        device(series, ServerDeviceKind::Core, &format!("cpu{cpu}"))
            .points
            .push(point(busy, 0.0, 0.0, 0.0));
    }
    for (name, now) in &after.disks {
        let Some(then) = before.disks.get(name) else {
            continue;
        };
        let grown = (
            growth(then.read_bytes, now.read_bytes),
            growth(then.written_bytes, now.written_bytes),
            growth(then.io_time_seconds, now.io_time_seconds),
            growth(then.weighted_io_time_seconds, now.weighted_io_time_seconds),
        );
        let (Some(read), Some(written), Some(io_time), Some(weighted)) = grown else {
            continue;
        };
        let members = after.arrays.get(name).copied();
        let kind = if members.is_some() {
            ServerDeviceKind::Array
        } else {
            ServerDeviceKind::Disk
        };
        let entry = device(series, kind, name);
        entry.active_members = members;
        entry.points.push(point(
            (io_time / seconds * 100.0).clamp(0.0, 100.0),
            read / seconds,
            written / seconds,
            weighted / seconds,
        ));
    }
    for (name, now) in &after.interfaces {
        let Some(then) = before.interfaces.get(name) else {
            continue;
        };
        let (Some(received), Some(sent)) = (
            growth(then.received_bytes, now.received_bytes),
            growth(then.transmitted_bytes, now.transmitted_bytes),
        ) else {
            continue;
        };
        let (received, sent) = (received / seconds, sent / seconds);
        let speed = now
            .speed_bytes_per_second
            .filter(|speed| *speed > 0.0)
            .map(|speed| speed as u64);
        let busy = speed.map_or(0.0, |speed| received.max(sent) / speed as f64 * 100.0);
        let entry = device(series, ports, name);
        entry.speed_bytes_per_second = speed;
        entry.points.push(point(busy, received, sent, 0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::node_sample::{CoreTimes, DiskCounters, InterfaceCounters};

    fn sample(second: f64) -> NodeSample {
        let mut node = NodeSample::default();
        node.cores.insert(
            0,
            CoreTimes {
                total: second,
                busy: second * 0.25,
            },
        );
        node.disks.insert(
            "sdb".into(),
            DiskCounters {
                read_bytes: second * 50e6,
                written_bytes: 0.0,
                io_time_seconds: second * 0.95,
                weighted_io_time_seconds: second * 4.0,
            },
        );
        node.interfaces.insert(
            "eth0".into(),
            InterfaceCounters {
                received_bytes: second * 1e6,
                transmitted_bytes: second * 100e6,
                speed_bytes_per_second: Some(125e6),
            },
        );
        node
    }

    #[test]
    fn a_switchs_cached_readings_are_passed_over() {
        // An agent that refreshes its counters every third reading, 10 MB/s out of port 1;
        // its first reading was cached half a second before it was read.
        let origin = Instant::now();
        let port = |bytes: f64| {
            let mut sample = NodeSample::default();
            sample.interfaces.insert(
                "1/1".into(),
                InterfaceCounters {
                    received_bytes: 0.0,
                    transmitted_bytes: bytes,
                    speed_bytes_per_second: Some(12.5e6),
                },
            );
            sample
        };
        let refreshed = [-0.5, -0.5, 2.0, 2.0, 2.0, 5.0, 5.0, 5.0, 8.0];
        let log = ScrapeLog {
            source: "snmp://sw1".into(),
            switch: true,
            scrapes: refreshed
                .iter()
                .enumerate()
                .map(|(second, at)| Scrape {
                    at: origin + Duration::from_secs(second as u64),
                    sample: port((at + 0.5) * 10e6),
                })
                .collect(),
            failures: Vec::new(),
        };
        let series = series_in(&log, origin, origin + Duration::from_secs(8));
        let port = &series.devices[0];
        assert_eq!(port.kind, ServerDeviceKind::SwitchPort);
        let rates: Vec<f64> = port
            .points
            .iter()
            .map(|p| p.write_bytes_per_second)
            .collect();
        assert_eq!(rates, [10e6, 10e6]);
        assert!((port.points[0].busy_percent - 80.0).abs() < 1e-9);
    }

    #[test]
    fn one_interval_gives_every_device_its_figures() {
        let origin = Instant::now();
        let at = |second: u64| Scrape {
            at: origin + Duration::from_secs(second),
            sample: sample(second as f64),
        };
        let series = interval_between(&at(2), &at(4), false).unwrap();
        let disk = series.devices.iter().find(|d| d.name == "sdb").unwrap();
        assert_eq!(disk.points.len(), 1);
        assert!((disk.points[0].read_bytes_per_second - 50e6).abs() < 1e-3);
        assert!((disk.points[0].busy_percent - 95.0).abs() < 1e-9);
        let nic = series.devices.iter().find(|d| d.name == "eth0").unwrap();
        assert!((nic.points[0].busy_percent - 80.0).abs() < 1e-9);
        assert!(interval_between(&at(4), &at(2), false).is_none());
    }

    #[test]
    fn rates_per_interval_inside_the_window() {
        let origin = Instant::now();
        let log = ScrapeLog {
            source: "http://nas:9100/metrics".into(),
            switch: false,
            scrapes: (0..6)
                .map(|second| Scrape {
                    at: origin + Duration::from_secs(second),
                    sample: sample(second as f64),
                })
                .collect(),
            failures: vec![(origin + Duration::from_millis(2500), "refused".into())],
        };
        // Measured from 1.2 s to 4.1 s: the intervals 1–2, 2–3 and 3–4 (0–1 and 4–5 lie mostly outside).
        let series = series_in(
            &log,
            origin + Duration::from_millis(1200),
            origin + Duration::from_millis(4100),
        );
        assert_eq!(series.failed_scrapes, 1);
        let disk = series.devices.iter().find(|d| d.name == "sdb").unwrap();
        assert_eq!(disk.points.len(), 3);
        assert_eq!(disk.points[0].end_ns, 800_000_000);
        assert!((disk.points[0].busy_percent - 95.0).abs() < 1e-9);
        assert!((disk.points[1].read_bytes_per_second - 50e6).abs() < 1e-3);
        assert!((disk.points[2].queue - 4.0).abs() < 1e-9);
        let core = series.devices.iter().find(|d| d.name == "cpu0").unwrap();
        assert!((core.points[0].busy_percent - 25.0).abs() < 1e-9);
        let nic = series.devices.iter().find(|d| d.name == "eth0").unwrap();
        assert_eq!(nic.speed_bytes_per_second, Some(125_000_000));
        assert!((nic.points[0].busy_percent - 80.0).abs() < 1e-9);
    }
}
