//! The far end on the dashboard: what each `--server-metrics` exporter and `--switch-snmp`
//! agent said over its last scrape interval, and the busiest core, disk and interface of each
//! over time, on the clock of the client's charts.

use super::marks::CHART_SECONDS;
use iopath::observe::sampler::{LiveScrape, Scrape};
use iopath::observe::window::{interval_between, is_fresh};
use iopath::result::{ServerDeviceKind, ServerDeviceSeries};
use iopath::text::escape::escape_controls;
use std::collections::VecDeque;

/// One device over the last scrape interval.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceNow {
    /// Core, disk, array, interface or switch port.
    pub kind: ServerDeviceKind,
    /// Its name on the server (escaped).
    pub name: String,
    /// Busy percent (a disk: time with I/O in flight; an interface: the busier direction
    /// against its speed, 0 when the speed is unknown).
    pub busy_percent: f64,
    /// Read (disk) or received (interface) bytes per second.
    pub read_bytes_per_second: f64,
    /// Written (disk) or sent (interface) bytes per second.
    pub write_bytes_per_second: f64,
    /// An interface's speed, bytes per second.
    pub speed_bytes_per_second: Option<u64>,
}

/// One server or switch as the dashboard shows it.
#[derive(Clone, Debug)]
pub struct ServerPanel {
    /// The source's place among `--server-metrics` and `--switch-snmp`.
    pub source: usize,
    /// The exporter's URL (password masked) or `snmp://AGENT`, escaped.
    pub label: String,
    /// The server's host name, when its exporter says it (escaped).
    pub node_name: Option<String>,
    /// Whether it is a switch.
    pub switch: bool,
    /// Every device over the last interval (none before the second scrape).
    pub devices: Vec<DeviceNow>,
    /// (seconds on the dashboard's clock, percent) of the busiest core.
    pub busiest_core: VecDeque<(f64, f64)>,
    /// (seconds, percent) of the busiest disk or array.
    pub busiest_disk: VecDeque<(f64, f64)>,
    /// (seconds, percent) of the busiest interface or switch port against its speed.
    pub busiest_link: VecDeque<(f64, f64)>,
    /// The reading the next interval starts from.
    last: Option<Scrape>,
}

impl ServerPanel {
    fn new(scrape: &LiveScrape) -> Self {
        ServerPanel {
            source: scrape.source,
            label: escape_controls(&scrape.label).into_owned(),
            node_name: None,
            switch: scrape.switch,
            devices: Vec::new(),
            busiest_core: VecDeque::new(),
            busiest_disk: VecDeque::new(),
            busiest_link: VecDeque::new(),
            last: None,
        }
    }

    /// What to call it: its host name, else where it is read.
    pub fn title(&self) -> &str {
        self.node_name.as_deref().unwrap_or(&self.label)
    }

    /// Its devices of `kinds`, busiest first (interfaces without a speed by their traffic).
    pub fn busiest(&self, kinds: &[ServerDeviceKind]) -> Vec<&DeviceNow> {
        let mut devices: Vec<&DeviceNow> = self
            .devices
            .iter()
            .filter(|device| kinds.contains(&device.kind))
            .collect();
        let weight = |device: &DeviceNow| {
            (
                device.busy_percent,
                device.read_bytes_per_second + device.write_bytes_per_second,
            )
        };
        devices.sort_by(|a, b| {
            weight(b)
                .partial_cmp(&weight(a))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        devices
    }

    /// Takes a new reading made `at` seconds on the dashboard's clock.
    fn take(&mut self, scrape: Scrape, at: f64) {
        if let Some(name) = scrape.sample.node_name.as_deref() {
            self.node_name = Some(escape_controls(name).into_owned());
        }
        let Some(last) = &self.last else {
            self.last = Some(scrape);
            return;
        };
        if !is_fresh(last, &scrape, self.switch) {
            return;
        }
        if let Some(series) = interval_between(last, &scrape, self.switch) {
            self.devices = series.devices.iter().filter_map(now_of).collect();
            let top = |kinds: &[ServerDeviceKind]| {
                self.busiest(kinds)
                    .first()
                    .map(|device| device.busy_percent)
            };
            let figures = [
                top(&[ServerDeviceKind::Core]),
                top(&[ServerDeviceKind::Disk, ServerDeviceKind::Array]),
                top(&[ServerDeviceKind::Interface, ServerDeviceKind::SwitchPort]),
            ];
            let histories = [
                &mut self.busiest_core,
                &mut self.busiest_disk,
                &mut self.busiest_link,
            ];
            for (history, figure) in histories.into_iter().zip(figures) {
                if let Some(percent) = figure {
                    history.push_back((at, percent));
                }
                while history
                    .front()
                    .is_some_and(|(t, _)| *t < at - CHART_SECONDS)
                {
                    history.pop_front();
                }
            }
        }
        self.last = Some(scrape);
    }
}

fn now_of(device: &ServerDeviceSeries) -> Option<DeviceNow> {
    let point = device.points.last()?;
    Some(DeviceNow {
        kind: device.kind,
        name: device.name.clone(),
        busy_percent: point.busy_percent,
        read_bytes_per_second: point.read_bytes_per_second,
        write_bytes_per_second: point.write_bytes_per_second,
        speed_bytes_per_second: device.speed_bytes_per_second,
    })
}

/// Takes `scrape` into the panel of its source (made on its first scrape), `at` seconds on
/// the dashboard's clock.
pub fn take(panels: &mut Vec<ServerPanel>, scrape: LiveScrape, at: f64) {
    let index = match panels
        .iter()
        .position(|panel| panel.source == scrape.source)
    {
        Some(index) => index,
        None => {
            panels.push(ServerPanel::new(&scrape));
            panels.sort_by_key(|panel| panel.source);
            panels
                .iter()
                .position(|panel| panel.source == scrape.source)
                .unwrap_or(0)
        }
    };
    panels[index].take(scrape.scrape, at);
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use iopath::observe::node_sample::{CoreTimes, DiskCounters, InterfaceCounters, NodeSample};
    use std::time::{Duration, Instant};

    fn reading(origin: Instant, second: u64) -> LiveScrape {
        let s = second as f64;
        let mut sample = NodeSample {
            node_name: Some("nas\u{1b}1".into()),
            ..NodeSample::default()
        };
        for (cpu, share) in [(0, 0.1), (1, 1.0), (2, 0.3)] {
            sample.cores.insert(
                cpu,
                CoreTimes {
                    total: s,
                    busy: s * share,
                },
            );
        }
        for (disk, busy, bytes) in [("sda", 0.2, 1e6), ("sdb", 0.9, 40e6)] {
            sample.disks.insert(
                disk.into(),
                DiskCounters {
                    read_bytes: s * bytes,
                    written_bytes: 0.0,
                    io_time_seconds: s * busy,
                    weighted_io_time_seconds: s,
                },
            );
        }
        sample.interfaces.insert(
            "eth0".into(),
            InterfaceCounters {
                received_bytes: s * 1e6,
                transmitted_bytes: s * 100e6,
                speed_bytes_per_second: Some(125e6),
            },
        );
        from_exporter(origin, second, sample)
    }

    /// `sample` as the exporter `http://nas:9100/metrics` read it `second` s after `origin`.
    pub(in super::super) fn from_exporter(
        origin: Instant,
        second: u64,
        sample: NodeSample,
    ) -> LiveScrape {
        LiveScrape {
            source: 0,
            label: "http://nas:9100/metrics".into(),
            switch: false,
            scrape: Scrape {
                at: origin + Duration::from_secs(second),
                sample,
            },
        }
    }

    #[test]
    fn each_interval_shows_every_device_and_the_busiest_over_time() {
        let origin = Instant::now();
        let mut panels = Vec::new();
        take(&mut panels, reading(origin, 1), 1.0);
        assert!(panels[0].devices.is_empty(), "one reading gives no rate");
        take(&mut panels, reading(origin, 2), 2.0);
        take(&mut panels, reading(origin, 3), 3.0);
        let panel = &panels[0];
        assert_eq!(panel.title(), "nas\\u{1b}1");
        let cores = panel.busiest(&[ServerDeviceKind::Core]);
        assert_eq!(cores[0].name, "cpu1");
        assert!((cores[0].busy_percent - 100.0).abs() < 1e-9);
        assert_eq!(cores.len(), 3);
        let disks = panel.busiest(&[ServerDeviceKind::Disk]);
        assert_eq!(disks[0].name, "sdb");
        assert!((disks[0].read_bytes_per_second - 40e6).abs() < 1e-3);
        assert_eq!(panel.busiest_core, [(2.0, 100.0), (3.0, 100.0)]);
        assert!((panel.busiest_disk[0].1 - 90.0).abs() < 1e-9);
        assert!((panel.busiest_link[0].1 - 80.0).abs() < 1e-9);
    }
}
