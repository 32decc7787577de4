//! Draws a [`DashboardState`]: a header with the suite's progress and the keys, a table of
//! each job and target's figures, charts of the last minutes (the servers' busiest core, disk
//! and interface beside the client's figures, on the same clock), the servers and switches
//! ([`super::server_view`]), the hops with a live counter and the CPU of every core.

use super::marks::{CHART_SECONDS, COLOURS, ChartLine, bar};
use super::server_view;
use super::state::{DashboardState, Series, VerifyLine};
use iopath::text::shown;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Cell, Chart, Dataset, GraphType, LegendPosition, Paragraph, Row, Table,
};
use std::collections::VecDeque;

/// Most series drawn in one chart (the latest ones).
const MOST_SERIES: usize = 4;

/// `12 s`, `3 min 05 s`, `1 h 02 min`.
pub fn duration(ns: u64) -> String {
    let seconds = ns / 1_000_000_000;
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min {:02} s", seconds / 60, seconds % 60),
        _ => format!("{} h {:02} min", seconds / 3600, seconds % 3600 / 60),
    }
}

/// `820 ns`, `14.2 µs`, `3.1 ms`.
pub fn latency(ns: Option<u64>) -> String {
    match ns {
        None => "–".into(),
        Some(ns) if ns < 1_000 => format!("{ns} ns"),
        Some(ns) if ns < 1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        Some(ns) if ns < 1_000_000_000 => format!("{:.1} ms", ns as f64 / 1e6),
        Some(ns) => format!("{:.2} s", ns as f64 / 1e9),
    }
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, state: &DashboardState) {
    let rows = state.rows.len().max(1) as u16;
    let verification = state.verification();
    let [header, table, checks, charts, servers, bottom] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Length(rows + 3),
        Constraint::Length(verification.len().min(6) as u16),
        Constraint::Min(8),
        Constraint::Length(server_view::height(state)),
        Constraint::Length((state.hops.len().max(state.cores.len()).max(1) as u16 + 2).min(12)),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(header_lines(state)), header);
    draw_table(frame, state, table);
    draw_verification(frame, &verification, checks);
    let columns = if state.servers.is_empty() { 3 } else { 4 };
    let areas =
        Layout::horizontal(vec![Constraint::Ratio(1, columns); columns as usize]).split(charts);
    let (throughput, iops, latency_area) = (areas[0], areas[1], areas[2]);
    let now = state.updated.duration_since(state.started).as_secs_f64();
    let recent: Vec<&Series> = state.series.iter().rev().take(MOST_SERIES).rev().collect();
    let pick = |field: fn(&Series) -> &VecDeque<(f64, f64)>| {
        recent
            .iter()
            .enumerate()
            .map(|(index, series)| (series.label.clone(), field(series), COLOURS[index % 6]))
            .collect::<Vec<_>>()
    };
    chart(frame, throughput, "MB/s", now, &pick(|s| &s.megabytes));
    chart(frame, iops, "IOPS", now, &pick(|s| &s.iops));
    let mut latencies = Vec::new();
    for (index, series) in recent.iter().enumerate() {
        let colour = COLOURS[index % 6];
        latencies.push((format!("{} p99", series.label), &series.p99_us, colour));
        latencies.push((format!("{} p50", series.label), &series.p50_us, colour));
    }
    chart(
        frame,
        latency_area,
        "latency µs (p50, p99)",
        now,
        &latencies,
    );
    if let Some(server_area) = areas.get(3) {
        let lines = server_view::chart_lines(state);
        chart(frame, *server_area, "server % busy", now, &lines);
        server_view::draw_servers(frame, state, servers);
    }
    let [path, cpu] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(bottom);
    draw_hops(frame, state, path);
    draw_cores(frame, state, cpu);
}

fn header_lines(state: &DashboardState) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut first = vec![Span::styled("iopath ", bold)];
    match (&state.current, &state.sample) {
        (Some((index, name)), sample) => {
            let of = if *index < state.plan.len() {
                format!("test {} of {}: ", index + 1, state.plan.len())
            } else {
                "confirming: ".to_string()
            };
            first.push(Span::raw(of));
            first.push(Span::styled(shown(name).to_string(), bold));
            if let Some(sample) = sample {
                let total = sample
                    .total_ns
                    .map_or(String::new(), |total| format!(" of {}", duration(total)));
                let ramp = if sample.ramping { " (ramp)" } else { "" };
                first.push(Span::raw(format!(
                    "  {}{total}{ramp}",
                    duration(sample.elapsed_ns)
                )));
            }
        }
        (None, _) => first.push(Span::raw(format!(
            "{} of {} tests done",
            state.finished,
            state.plan.len()
        ))),
    }
    let suite = match state.progress() {
        Some((share, left)) => format!(
            "suite {} {:.0} %, about {} left",
            bar(share, 20),
            share * 100.0,
            duration(left)
        ),
        None => "suite: time left unknown (a test ends with its bytes)".into(),
    };
    let mut keys = Vec::new();
    if state.stopping {
        keys.push(Span::styled(
            "stopping… ",
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ));
    }
    if state.paused {
        keys.push(Span::styled(
            "PAUSED (the run goes on) ",
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        ));
    }
    keys.push(Span::styled("q", bold));
    keys.push(Span::raw(" stop  "));
    keys.push(Span::styled("p", bold));
    keys.push(Span::raw(if state.paused {
        " resume   "
    } else {
        " pause   "
    }));
    keys.push(Span::raw(suite));
    let note = state
        .notes
        .last()
        .map_or(String::new(), |note| shown(note).into_owned());
    vec![
        Line::from(first),
        Line::from(keys),
        Line::styled(note, Style::default().fg(Color::Yellow)),
    ]
}

fn draw_table(frame: &mut Frame<'_>, state: &DashboardState, area: Rect) {
    let header = Row::new(["test or job", "target", "", "MB/s", "IOPS", "p50", "p99"])
        .style(Style::default().add_modifier(Modifier::BOLD));
    let rows = state.rows.iter().map(|row| {
        Row::new(vec![
            Cell::from(shown(&row.job).to_string()),
            Cell::from(shown(&row.target).to_string()),
            Cell::from(row.direction),
            Cell::from(format!("{:.1}", row.bytes_per_second / 1e6)),
            Cell::from(format!("{:.0}", row.iops)),
            Cell::from(latency(row.p50_ns)),
            Cell::from(latency(row.p99_ns)),
        ])
    });
    let widths = [
        Constraint::Min(14),
        Constraint::Min(20),
        Constraint::Length(5),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(9),
        Constraint::Length(9),
    ];
    let title = if state.rows.is_empty() {
        " per job and target: waiting for the first second "
    } else {
        " per job and target, last second "
    };
    frame.render_widget(
        Table::new(rows, widths)
            .header(header)
            .block(Block::bordered().title(title)),
        area,
    );
}

/// One line per verifying job and target: blocks checked, bad blocks (red when any) and the
/// first bad block's kind and offset.
fn draw_verification(frame: &mut Frame<'_>, lines: &[VerifyLine], area: Rect) {
    let lines: Vec<Line<'_>> = lines
        .iter()
        .map(|line| {
            let colour = if line.bad { Color::Red } else { Color::Green };
            Line::styled(shown(&line.text).to_string(), Style::default().fg(colour))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

fn chart(frame: &mut Frame<'_>, area: Rect, title: &str, now: f64, series: &[ChartLine<'_>]) {
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|(_, data, _)| data.iter().copied().collect())
        .collect();
    let top = points
        .iter()
        .flatten()
        .map(|(_, y)| *y)
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.1;
    let start = (now - CHART_SECONDS).max(0.0);
    let datasets = series
        .iter()
        .zip(&points)
        .map(|((name, _, colour), data)| {
            Dataset::default()
                .name(shown(name).to_string())
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::default().fg(*colour))
                .data(data)
        })
        .collect();
    let chart = Chart::new(datasets)
        .block(Block::bordered().title(format!(" {title} ")))
        .legend_position(Some(LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Percentage(60), Constraint::Percentage(60)))
        .x_axis(
            Axis::default()
                .bounds([start, now.max(start + 1.0)])
                .labels([
                    format!("-{}", duration(((now - start) * 1e9) as u64)),
                    "now".to_string(),
                ]),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels(["0".to_string(), format!("{top:.0}")]),
        );
    frame.render_widget(chart, area);
}

fn draw_hops(frame: &mut Frame<'_>, state: &DashboardState, area: Rect) {
    let lines: Vec<Line<'_>> = if state.hops.is_empty() {
        vec![Line::from(state.hop_note.clone())]
    } else {
        state
            .hops
            .iter()
            .map(|hop| match hop.utilisation {
                Some(share) => Line::from(format!(
                    "{:<10} {} {:>3.0} % of {}  (r {:.1} / w {:.1} MB/s)",
                    shown(&hop.name),
                    bar(share, 10),
                    share * 100.0,
                    shown(&hop.capacity_name),
                    hop.rates.0 / 1e6,
                    hop.rates.1 / 1e6
                )),
                None => Line::from(format!(
                    "{:<10} {}   – of {}",
                    shown(&hop.name),
                    bar(0.0, 10),
                    shown(&hop.capacity_name)
                )),
            })
            .collect()
    };
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" path: hops with a live counter ")),
        area,
    );
}

fn draw_cores(frame: &mut Frame<'_>, state: &DashboardState, area: Rect) {
    let lines: Vec<Line<'_>> = state
        .cores
        .iter()
        .map(|(cpu, share)| {
            Line::from(format!(
                "cpu{cpu:<3} {} {:>3.0} %",
                bar(*share, 20),
                share * 100.0
            ))
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" CPU per core ")),
        area,
    );
}
