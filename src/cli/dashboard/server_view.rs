//! Draws the servers and switches of a [`DashboardState`]: per server its cores (the busiest
//! highlighted), its busiest disks (busy % and MB/s) and interfaces (MB/s against their
//! speed), the rest counted as hidden; and the lines of the chart that puts the busiest of
//! each beside the client's figures on one clock.

use super::marks::{COLOURS, ChartLine, bar};
use super::servers::{DeviceNow, ServerPanel};
use super::state::{DashboardState, rate};
use iopath::result::ServerDeviceKind;
use iopath::text::shown;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

/// Most disks (and arrays) shown per server; the others are counted.
pub const MOST_DISKS: usize = 3;
/// Most interfaces (or switch ports) shown per server or switch.
pub const MOST_LINKS: usize = 2;
/// Columns one core takes on its line (`cpu12 ▕███▏100 %  `).
const CORE_COLUMNS: usize = 19;
/// Most servers charted (three lines each).
const MOST_CHARTED: usize = 2;

const DISKS: [ServerDeviceKind; 2] = [ServerDeviceKind::Disk, ServerDeviceKind::Array];
const LINKS: [ServerDeviceKind; 2] = [ServerDeviceKind::Interface, ServerDeviceKind::SwitchPort];

/// Rows the servers' panel needs (borders included; 0 without servers).
pub fn height(state: &DashboardState) -> u16 {
    if state.servers.is_empty() {
        return 0;
    }
    let lines: usize = state.servers.iter().map(lines_of).sum();
    (lines + 2).min(16) as u16
}

/// Lines a server takes: its title, its cores, its disks and links shown, the hidden count.
fn lines_of(panel: &ServerPanel) -> usize {
    let disks = panel.busiest(&DISKS).len().min(MOST_DISKS);
    let links = panel.busiest(&LINKS).len().min(MOST_LINKS);
    let cores = usize::from(!panel.switch);
    1 + cores + disks + links + 1
}

/// Draws the panel of every server and switch.
pub fn draw_servers(frame: &mut Frame<'_>, state: &DashboardState, area: Rect) {
    let width = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line<'_>> = state
        .servers
        .iter()
        .flat_map(|panel| server_lines(panel, width))
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" far end: servers and switches ")),
        area,
    );
}

/// A server's lines, for a panel `width` columns wide.
pub fn server_lines(panel: &ServerPanel, width: usize) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let cores = panel.busiest(&[ServerDeviceKind::Core]);
    let disks = panel.busiest(&DISKS);
    let links = panel.busiest(&LINKS);
    let (link_word, what) = if panel.switch {
        ("port", "switch")
    } else {
        ("interface", "server")
    };
    let mut counts = Vec::new();
    if !panel.switch {
        counts.push(count(cores.len(), "core"));
        counts.push(count(disks.len(), "disk"));
    }
    counts.push(count(links.len(), link_word));
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{what} {}", shown(panel.title())), bold),
        Span::raw(format!("  {}: {}", shown(&panel.label), counts.join(", "))),
    ])];
    if panel.devices.is_empty() {
        lines.push(Line::from("  waiting for the second scrape…"));
        return lines;
    }
    let mut hidden = Vec::new();
    if !panel.switch {
        let fit = (width.saturating_sub(8) / CORE_COLUMNS).max(1);
        let mut spans = vec![Span::raw("  cores ")];
        for (place, core) in cores.iter().take(fit).enumerate() {
            let text = format!(
                "{:<6}{}{:>3.0} %  ",
                shown(&core.name),
                bar(core.busy_percent / 100.0, 3),
                core.busy_percent
            );
            let style = if place == 0 {
                Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            spans.push(Span::styled(text, style));
        }
        lines.push(Line::from(spans));
        if cores.len() > fit {
            hidden.push(count(cores.len() - fit, "core"));
        }
        for disk in disks.iter().take(MOST_DISKS) {
            lines.push(Line::from(disk_line(disk)));
        }
        if disks.len() > MOST_DISKS {
            hidden.push(count(disks.len() - MOST_DISKS, "disk"));
        }
    }
    for link in links.iter().take(MOST_LINKS) {
        lines.push(Line::from(link_line(link, link_word)));
    }
    if links.len() > MOST_LINKS {
        hidden.push(count(links.len() - MOST_LINKS, link_word));
    }
    lines.push(Line::styled(
        if hidden.is_empty() {
            "  nothing hidden".to_string()
        } else {
            format!("  {} hidden (the busiest are shown)", hidden.join(", "))
        },
        Style::default().fg(Color::DarkGray),
    ));
    lines
}

/// `3 disks`, `1 core`.
fn count(number: usize, word: &str) -> String {
    let plural = if number == 1 { "" } else { "s" };
    format!("{number} {word}{plural}")
}

fn disk_line(disk: &DeviceNow) -> String {
    let kind = if disk.kind == ServerDeviceKind::Array {
        "array"
    } else {
        "disk"
    };
    format!(
        "  {kind:<5} {:<10} {} {:>3.0} % busy  read {}  written {}",
        shown(&disk.name),
        bar(disk.busy_percent / 100.0, 10),
        disk.busy_percent,
        rate(disk.read_bytes_per_second),
        rate(disk.write_bytes_per_second)
    )
}

fn link_line(link: &DeviceNow, word: &str) -> String {
    let word = if word == "interface" { "nic" } else { word };
    let traffic = format!(
        "in {}  out {}",
        rate(link.read_bytes_per_second),
        rate(link.write_bytes_per_second)
    );
    match link.speed_bytes_per_second {
        Some(speed) => format!(
            "  {word:<5} {:<10} {} {:>3.0} % of {}  ({traffic})",
            shown(&link.name),
            bar(link.busy_percent / 100.0, 10),
            link.busy_percent,
            rate(speed as f64)
        ),
        None => format!(
            "  {word:<5} {:<10} {}   – speed unknown  ({traffic})",
            shown(&link.name),
            bar(0.0, 10)
        ),
    }
}

/// The chart's lines: per server (the first [`MOST_CHARTED`]) its busiest core, disk and
/// interface, percent, on the client's clock.
pub fn chart_lines(state: &DashboardState) -> Vec<ChartLine<'_>> {
    let mut lines = Vec::new();
    for (index, panel) in state.servers.iter().take(MOST_CHARTED).enumerate() {
        let title = shown(panel.title()).to_string();
        let link = if panel.switch { "port" } else { "nic" };
        let named = [
            ("core", &panel.busiest_core),
            ("disk", &panel.busiest_disk),
            (link, &panel.busiest_link),
        ];
        for (place, (what, points)) in named.into_iter().enumerate() {
            if points.is_empty() {
                continue;
            }
            let colour = COLOURS[(index * 3 + place) % COLOURS.len()];
            lines.push((format!("{title} {what}"), points, colour));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::super::servers::tests::from_exporter;
    use super::super::servers::{ServerPanel, take};
    use super::*;
    use iopath::observe::node_sample::{CoreTimes, DiskCounters, NodeSample};
    use std::time::Instant;

    /// A server of 16 cores (core 5 the busiest) and 12 disks, read twice a second apart.
    fn big_server() -> ServerPanel {
        let origin = Instant::now();
        let reading = |second: u64| {
            let s = second as f64;
            let mut sample = NodeSample::default();
            for cpu in 0..16u32 {
                let share = if cpu == 5 { 1.0 } else { 0.01 * f64::from(cpu) };
                sample.cores.insert(
                    cpu,
                    CoreTimes {
                        total: s,
                        busy: s * share,
                    },
                );
            }
            for disk in 0..12 {
                sample.disks.insert(
                    format!("sd{disk}"),
                    DiskCounters {
                        read_bytes: s * 1e6 * f64::from(disk),
                        written_bytes: 0.0,
                        io_time_seconds: s * 0.05 * f64::from(disk),
                        weighted_io_time_seconds: 0.0,
                    },
                );
            }
            from_exporter(origin, second, sample)
        };
        let mut panels = Vec::new();
        take(&mut panels, reading(1), 1.0);
        take(&mut panels, reading(2), 2.0);
        panels.remove(0)
    }

    #[test]
    fn many_cores_and_disks_show_the_busiest_and_count_the_rest() {
        let panel = big_server();
        let lines: Vec<String> = server_lines(&panel, 80)
            .iter()
            .map(|line| line.to_string())
            .collect();
        assert!(
            lines[0].contains("16 cores, 12 disks, 0 interfaces"),
            "{lines:?}"
        );
        // 80 columns hold 3 cores; the busiest first.
        assert!(
            lines[1].trim_start().starts_with("cores cpu5 "),
            "{lines:?}"
        );
        assert_eq!(lines[1].matches("cpu").count(), 3, "{lines:?}");
        assert!(lines[2].contains("disk  sd11 "), "{lines:?}");
        assert!(lines[2].contains("55 % busy") && lines[2].contains("11.0 MB/s"));
        assert!(lines[4].contains("disk  sd9 "), "{lines:?}");
        assert_eq!(
            lines.last().unwrap().trim(),
            "13 cores, 9 disks hidden (the busiest are shown)"
        );
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn a_switch_shows_its_busiest_ports_against_their_speed_and_no_cores() {
        use iopath::observe::node_sample::InterfaceCounters;
        let origin = Instant::now();
        let reading = |second: u64| {
            let s = second as f64;
            let mut sample = NodeSample::default();
            for (port, out) in [("p1", 1e6), ("p2", 24e6), ("p3", 0.0)] {
                sample.interfaces.insert(
                    port.into(),
                    InterfaceCounters {
                        received_bytes: 0.0,
                        transmitted_bytes: s * out,
                        speed_bytes_per_second: Some(25e6),
                    },
                );
            }
            let mut live = from_exporter(origin, second, sample);
            live.switch = true;
            live.label = "snmp://sw1".into();
            live
        };
        let mut panels = Vec::new();
        take(&mut panels, reading(1), 1.0);
        take(&mut panels, reading(2), 2.0);
        let lines: Vec<String> = server_lines(&panels[0], 100)
            .iter()
            .map(|line| line.to_string())
            .collect();
        assert_eq!(
            lines[0], "switch snmp://sw1  snmp://sw1: 3 ports",
            "{lines:?}"
        );
        assert!(lines[1].starts_with("  port  p2 "), "{lines:?}");
        assert!(lines[1].contains(" 96 % of 25.0 MB/s"), "{lines:?}");
        assert!(lines[2].starts_with("  port  p1 "), "{lines:?}");
        assert_eq!(lines[3].trim(), "1 port hidden (the busiest are shown)");
        assert!(!lines.iter().any(|line| line.contains("cores")));
        let mut state = DashboardState::new(Vec::new());
        state.servers = panels;
        let chart = chart_lines(&state);
        assert_eq!(chart.len(), 1, "only the port's line");
        assert_eq!(chart[0].0, "snmp://sw1 port");
    }
}
