//! A test's server devices over time (`--server-metrics`): the busy share of each disk, array
//! and interface that worked, and of each server's busiest core, on the same axis of seconds
//! measured as the client's MB/s and IOPS charts beside it.

use super::svg::{Axis, LineChart, Series};
use crate::result::{ServerDeviceKind, TestResult};

/// The chart, or nothing when the test has no server series.
pub fn server_chart(id: String, test: &TestResult) -> Option<String> {
    let mut series = Vec::new();
    for server in &test.server_metrics {
        let who = server.node_name.as_deref().unwrap_or(&server.source);
        let mean_busy = |points: &[crate::result::ServerPoint]| {
            points.iter().map(|p| p.busy_percent).sum::<f64>() / points.len().max(1) as f64
        };
        let busiest_core = server
            .devices
            .iter()
            .filter(|d| d.kind == ServerDeviceKind::Core)
            .max_by(|a, b| mean_busy(&a.points).total_cmp(&mean_busy(&b.points)));
        for device in &server.devices {
            let shown = match device.kind {
                ServerDeviceKind::Core => {
                    busiest_core.is_some_and(|core| std::ptr::eq(core, device))
                }
                _ => device.points.iter().any(|p| {
                    p.busy_percent >= 1.0
                        || p.read_bytes_per_second + p.write_bytes_per_second >= 1e5
                }),
            };
            if !shown {
                continue;
            }
            let label = format!("{who} {} {}", device.kind.name(), device.name);
            let points: Vec<(f64, f64)> = device
                .points
                .iter()
                .map(|p| (p.end_ns as f64 / 1e9, p.busy_percent))
                .collect();
            let mut line = Series::new(&label, series.len() + 2, points);
            line.point_titles = line
                .points
                .iter()
                .map(|(second, busy)| format!("{label} at {second:.1} s: {busy:.0} % busy"))
                .collect();
            series.push(line);
        }
    }
    if series.is_empty() {
        return None;
    }
    Some(
        LineChart {
            id,
            kind: "server",
            caption:
                "Server devices over time (% busy; an interface or switch port: % of its speed)"
                    .into(),
            x: Axis::linear("seconds measured"),
            y: Axis::linear("% busy"),
            series,
            markers: Vec::new(),
            attributes: vec![("test".into(), test.name.clone())],
        }
        .render(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{ServerDeviceSeries, ServerPoint, ServerSeries};
    use crate::support::fixtures::mixed;

    fn device(kind: ServerDeviceKind, name: &str, busy: f64) -> ServerDeviceSeries {
        ServerDeviceSeries {
            kind,
            name: name.into(),
            speed_bytes_per_second: None,
            active_members: None,
            points: (1..=3)
                .map(|second| ServerPoint {
                    end_ns: second * 1_000_000_000,
                    duration_ns: 1_000_000_000,
                    busy_percent: busy,
                    ..ServerPoint::default()
                })
                .collect(),
        }
    }

    #[test]
    fn the_busiest_core_and_the_working_devices_are_drawn_on_the_seconds_measured() {
        let mut test = mixed().tests[0].clone();
        assert!(server_chart("t".into(), &test).is_none());
        test.server_metrics = vec![ServerSeries {
            source: "http://nas:9100/metrics".into(),
            node_name: Some("nas<1>".into()),
            devices: vec![
                device(ServerDeviceKind::Core, "cpu0", 20.0),
                device(ServerDeviceKind::Core, "cpu1", 97.0),
                device(ServerDeviceKind::Disk, "sdb", 99.0),
                device(ServerDeviceKind::Disk, "sdc", 0.0),
            ],
            ..ServerSeries::default()
        }];
        let html = server_chart("t".into(), &test).expect("a chart");
        assert!(html.contains("Server devices over time"), "{html}");
        assert!(
            html.contains("core cpu1") && html.contains("disk sdb"),
            "{html}"
        );
        assert!(!html.contains("cpu0") && !html.contains("sdc"), "{html}");
        assert!(
            html.contains("nas&lt;1&gt;") && !html.contains("nas<1>"),
            "{html}"
        );
    }
}
