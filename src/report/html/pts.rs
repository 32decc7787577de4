//! The HTML report of `iopath pts`, in the shape of the specification's report: the test
//! conditions, then for each test its steady-state convergence plot, the measurement-window
//! plot of each tracking variable (the window's average, ±10 % and ±20 % of it, and the
//! least-squares line), the window's figures against the rule, and the test's tables — the
//! IOPS surface (read/write mix × block size as a heat table and as curves), throughput, the
//! latency table, or write saturation's IOPS round by round.
//!
//! ```
//! use iopath::report::html::pts::write_pts_html;
//! # fn result() -> iopath::result::pts::PtsResult { unimplemented!() }
//! # fn main() -> std::io::Result<()> { if false {
//! let mut page = Vec::new();
//! write_pts_html(&result(), &mut page)?;
//! # } Ok(()) }
//! ```

use super::escape::escape;
use super::page::{Section, page};
use super::svg::{Axis, LineChart, Marker, Scale, Series, compact, size_tick};
use crate::report::pts_rate_steps::{
    bytes_before, levels, steady_after_step_words, step_rows, step_words,
};
use crate::report::pts_tables::{
    block_sizes, cell_at, condition_rows, mix_name, read_percents, window_cells, window_rounds,
};
use crate::result::pts::{
    PtsOutcome, PtsResult, PtsTestKind, PtsTestResult, PtsWindow, block_size_name,
};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Writes the whole report of `result` as one HTML document.
pub fn write_pts_html(result: &PtsResult, out: &mut dyn Write) -> io::Result<()> {
    let mut sections = vec![Section {
        id: "conditions",
        title: "Test conditions",
        body: conditions(result),
    }];
    for test in &result.tests {
        sections.push(Section {
            id: test.kind.name(),
            title: test.kind.title(),
            body: test_body(result, test),
        });
    }
    let title = match &result.label {
        Some(label) => format!(
            "SNIA PTS ({}) — {label} — {}",
            result.conditions.edition.name(),
            result.conditions.target.path
        ),
        None => format!(
            "SNIA PTS ({}) — {}",
            result.conditions.edition.name(),
            result.conditions.target.path
        ),
    };
    let footer = format!(
        "Written by iopath {} from the PTS result (pts.json) alone. MB = 10<sup>6</sup> bytes, \
         MiB = 2<sup>20</sup> bytes; latency is measured from submission to completion; each \
         table is the average of the measurement window's rounds (max latency: the largest).",
        escape(env!("CARGO_PKG_VERSION"))
    );
    out.write_all(page(&title, &[], &sections, &footer).as_bytes())
}

fn conditions(result: &PtsResult) -> String {
    let c = &result.conditions;
    let mut html = String::from("<table class=\"conditions\">");
    for (name, value) in condition_rows(result) {
        let _ = write!(
            html,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(name),
            escape(&value)
        );
    }
    html.push_str("</table>");
    if c.scaled_down.is_empty() {
        html.push_str("<p class=\"note\">Run at the specification's parameters.</p>");
    } else {
        html.push_str(
            "<p><b>Scaled down from the specification:</b></p><ul class=\"notes scaled\">",
        );
        for line in &c.scaled_down {
            let _ = write!(html, "<li>{}</li>", escape(line));
        }
        html.push_str("</ul>");
    }
    if !c.notes.is_empty() {
        html.push_str("<ul class=\"notes\">");
        for line in &c.notes {
            let _ = write!(html, "<li>{}</li>", escape(line));
        }
        html.push_str("</ul>");
    }
    if !result.complete {
        html.push_str("<p class=\"outcome worse\">The run did not finish: tests without rounds were not run (resume with --resume).</p>");
    }
    html
}

/// What the outcome of a test says.
pub fn outcome_text(test: &PtsTestResult) -> String {
    let rounds = test.rounds.len();
    let window = test.windows.first();
    match test.outcome {
        PtsOutcome::Steady => {
            let reached = format!(
                "Steady state reached: rounds {}–{} (of {rounds}).",
                window.map_or(0, |w| w.first_round),
                rounds
            );
            match &test.steady_after_step {
                Some(found) => format!("{reached} {}", steady_after_step_words(found)),
                None => reached,
            }
        }
        PtsOutcome::NotSteady => format!(
            "Steady state not reached after {rounds} rounds: the tables show the last {} rounds.",
            window.map_or(0, |w| w.values.len())
        ),
        PtsOutcome::Saturated => format!("Write saturation ended after {rounds} rounds."),
        PtsOutcome::NotFinished if rounds == 0 => "Not run.".into(),
        PtsOutcome::NotFinished => format!("Stopped after {rounds} rounds, before steady state."),
    }
}

fn test_body(result: &PtsResult, test: &PtsTestResult) -> String {
    let class = match test.outcome {
        PtsOutcome::Steady | PtsOutcome::Saturated => "better",
        _ => "worse",
    };
    let mut html = format!(
        "<p class=\"outcome {class}\" data-outcome=\"{:?}\">{}</p>",
        test.outcome,
        escape(&outcome_text(test))
    );
    if test.rounds.is_empty() {
        return html;
    }
    html.push_str(&rate_steps(result, test));
    html.push_str("<div class=\"charts pair\">");
    html.push_str(&convergence_chart(test).render());
    if test.kind == PtsTestKind::Saturation {
        html.push_str(&written_chart(test).render());
    }
    if test.kind != PtsTestKind::Saturation {
        for (index, window) in test.windows.iter().enumerate() {
            html.push_str(&window_chart(test.kind, index, window).render());
        }
    }
    html.push_str("</div>");
    if test.kind != PtsTestKind::Saturation {
        html.push_str(&window_table(&test.windows));
    }
    match test.kind {
        PtsTestKind::Iops => html.push_str(&iops_tables(test)),
        PtsTestKind::Throughput => html.push_str(&throughput_table(test)),
        PtsTestKind::Latency => html.push_str(&latency_table(test)),
        PtsTestKind::Saturation => html.push_str(&saturation_table(result, test)),
    }
    html
}

/// The steps of `test`'s rate: over its rounds (write saturation), then within each element.
fn rate_steps(result: &PtsResult, test: &PtsTestResult) -> String {
    let mut html = String::new();
    if let Some(step) = &test.rate_step {
        let _ = write!(
            html,
            "<p class=\"rate-step\" data-step=\"{}\"><b>{}:</b> {}</p>",
            escape(step.name()),
            escape(test.kind.title()),
            escape(&step_words(step))
        );
    }
    let within: Vec<String> = step_rows(result)
        .iter()
        .filter(|row| row.test == test.kind && row.element.is_some())
        .map(|row| {
            format!(
                "<li>{}: {}</li>",
                escape(&row.place()),
                escape(&step_words(row.step))
            )
        })
        .collect();
    if !within.is_empty() {
        let _ = write!(
            html,
            "<p>Rates that stepped down within an element's own per-second series:</p>\
             <ul class=\"notes rate-steps\">{}</ul>",
            within.concat()
        );
    }
    html
}

/// Write saturation's IOPS by the data written so far (each round at its end), with the
/// fitted step drawn over it: its two levels dashed, and a marker where it came.
fn written_chart(test: &PtsTestResult) -> LineChart {
    let mut written = 0u64;
    let mut points = Vec::new();
    for round in &test.rounds {
        written += round.cells.iter().map(|cell| cell.bytes).sum::<u64>();
        points.push((
            written as f64 / 1e9,
            round.tracked.first().copied().unwrap_or(0.0),
        ));
    }
    let mut series = vec![Series::new("4KiB random write IOPS", 0, points)];
    let mut markers = Vec::new();
    let mut attributes = Vec::new();
    if let Some(step) = &test.rate_step {
        let (_, _, before, after) = levels(step);
        let at = bytes_before(step) / 1e9;
        let end = (written as f64 / 1e9).max(at);
        let mut fitted = Series::new(
            &format!("{} (fitted)", step.name()),
            6,
            vec![(0.0, before), (at, before), (at, after), (end, after)],
        );
        fitted.dashed = true;
        series.push(fitted);
        markers.push(Marker {
            x: at,
            label: step.name().into(),
            color: 6,
        });
        attributes.push(("step-gb".to_string(), format!("{at:.4}")));
    }
    LineChart {
        id: "saturation-written".into(),
        kind: "pts-saturation-written",
        caption: "Write saturation: 4 KiB random write IOPS by data written".into(),
        x: Axis::with("GB written", Scale::Linear, compact),
        y: Axis::linear("IOPS"),
        series,
        markers,
        attributes,
    }
}

/// Tracking variables round by round; for IOPS, every block size's 100 % write IOPS too.
fn convergence_chart(test: &PtsTestResult) -> LineChart {
    let rounds = || test.rounds.iter().map(|round| round.number as f64);
    let mut series: Vec<Series> = test
        .tracking
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let points = rounds()
                .zip(
                    test.rounds
                        .iter()
                        .map(|r| r.tracked.get(index).copied().unwrap_or(0.0)),
                )
                .collect();
            Series::new(name, index, points)
        })
        .collect();
    if test.kind == PtsTestKind::Iops {
        series.clear();
        let sizes = test
            .rounds
            .first()
            .map(|r| block_sizes(&r.cells))
            .unwrap_or_default();
        for (index, size) in sizes.iter().enumerate() {
            let points = test
                .rounds
                .iter()
                .filter_map(|round| {
                    cell_at(&round.cells, *size, 0).map(|cell| (round.number as f64, cell.iops))
                })
                .collect();
            let label = format!("{} 0/100", block_size_name(*size));
            series.push(Series::new(&label, index, points));
        }
    }
    let (caption, y) = match test.kind {
        PtsTestKind::Iops => (
            "Steady-state convergence: 100 % write IOPS of each block size",
            "IOPS",
        ),
        PtsTestKind::Throughput => ("Steady-state convergence: MB/s", "MB/s"),
        PtsTestKind::Latency => ("Steady-state convergence: 4 KiB write mean latency", "µs"),
        PtsTestKind::Saturation => (
            "Write saturation: 4 KiB random write IOPS per round",
            "IOPS",
        ),
    };
    LineChart {
        id: format!("{}-convergence", test.kind.name()),
        kind: "pts-convergence",
        caption: caption.into(),
        x: Axis::with("round", Scale::Linear, compact),
        y: Axis::linear(y),
        series,
        markers: Vec::new(),
        attributes: vec![("rounds".into(), test.rounds.len().to_string())],
    }
}

/// A window's values with its average, the ±10 % and ±20 % bands and the least-squares line.
fn window_chart(kind: PtsTestKind, index: usize, window: &PtsWindow) -> LineChart {
    let first = window.first_round as f64;
    let last = first + window.values.len().saturating_sub(1) as f64;
    let flat = |label: &str, color: usize, factor: f64, dashed: bool| {
        let mut series = Series::new(
            label,
            color,
            vec![
                (first, window.average * factor),
                (last, window.average * factor),
            ],
        );
        series.dashed = dashed;
        series
    };
    let values = window
        .values
        .iter()
        .enumerate()
        .map(|(offset, value)| (first + offset as f64, *value))
        .collect();
    let slope_line = Series::new(
        "least-squares line",
        5,
        vec![
            (first, window.intercept),
            (last, window.intercept + window.slope * (last - first)),
        ],
    );
    LineChart {
        id: format!("{}-window-{index}", kind.name()),
        kind: "pts-window",
        caption: format!("Measurement window: {}", window.variable),
        x: Axis::with("round", Scale::LinearFitted, compact),
        y: Axis::linear(""),
        series: vec![
            Series::new(&window.variable, 0, values),
            flat("average", 6, 1.0, false),
            flat("+10 %", 2, 1.1, true),
            flat("−10 %", 2, 0.9, true),
            flat("+20 %", 1, 1.2, true),
            flat("−20 %", 1, 0.8, true),
            slope_line,
        ],
        markers: Vec::new(),
        attributes: vec![(
            "holds".into(),
            if window.holds() { "yes" } else { "no" }.into(),
        )],
    }
}

fn window_table(windows: &[PtsWindow]) -> String {
    let mut html = String::from(
        "<table class=\"pts-window\"><tr><th>tracking variable</th><th class=\"num\">rounds</th>\
         <th class=\"num\">average</th><th class=\"num\">data excursion</th><th class=\"num\">limit 20 %</th>\
         <th class=\"num\">slope excursion</th><th class=\"num\">limit 10 %</th><th>steady</th></tr>",
    );
    for window in windows {
        let share = |figure: f64| {
            if window.average > 0.0 {
                format!("{:.1} %", figure / window.average * 100.0)
            } else {
                "–".into()
            }
        };
        let last = window.first_round as usize + window.values.len().saturating_sub(1);
        let _ = write!(
            html,
            "<tr><td>{}</td><td class=\"num\">{}–{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(&window.variable),
            window.first_round,
            last,
            compact(window.average),
            compact(window.excursion),
            share(window.excursion),
            compact(window.slope_excursion),
            share(window.slope_excursion),
            match (window.excursion_holds, window.slope_holds) {
                (true, true) => "yes",
                (false, true) => "no: excursion",
                (true, false) => "no: slope",
                (false, false) => "no: excursion and slope",
            }
        );
    }
    html.push_str("</table>");
    html
}

/// The IOPS surface: a heat table (block size × mix) and one curve per mix.
fn iops_tables(test: &PtsTestResult) -> String {
    let cells = window_cells(test);
    let sizes = block_sizes(&cells);
    let mixes = read_percents(&cells);
    let top = cells.iter().map(|cell| cell.iops).fold(0.0, f64::max);
    let rounds = window_rounds(test);
    let mut html = format!(
        "<h3>IOPS surface <small>average of rounds {}–{}, read/write mix × block size</small></h3>\
         <div class=\"table-wrap\"><table class=\"pts-surface\"><tr><th>block size</th>",
        rounds.start + 1,
        rounds.end
    );
    for mix in &mixes {
        let _ = write!(html, "<th class=\"num\">{}</th>", mix_name(*mix));
    }
    html.push_str("</tr>");
    for size in &sizes {
        let _ = write!(html, "<tr><th>{}</th>", block_size_name(*size));
        for mix in &mixes {
            let value = cell_at(&cells, *size, *mix).map_or(0.0, |cell| cell.iops);
            let strength = if top > 0.0 { value / top } else { 0.0 };
            let _ = write!(
                html,
                "<td class=\"num\" style=\"background:rgba(0,114,178,{:.2});color:{}\">{}</td>",
                0.08 + 0.8 * strength,
                if strength > 0.55 { "#fff" } else { "#111" },
                compact(value)
            );
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></div>");
    let series = mixes
        .iter()
        .enumerate()
        .map(|(index, mix)| {
            let points = sizes
                .iter()
                .rev()
                .filter_map(|size| cell_at(&cells, *size, *mix).map(|c| (*size as f64, c.iops)))
                .collect();
            Series::new(&mix_name(*mix), index, points)
        })
        .collect();
    let chart = LineChart {
        id: "iops-surface".into(),
        kind: "pts-iops-surface",
        caption: "IOPS by block size, one curve per read/write mix".into(),
        x: Axis::with("block size", Scale::Log2, size_tick),
        y: Axis::linear("IOPS"),
        series,
        markers: Vec::new(),
        attributes: Vec::new(),
    };
    html.push_str("<div class=\"charts pair\">");
    html.push_str(&chart.render());
    html.push_str("</div>");
    html
}

fn throughput_table(test: &PtsTestResult) -> String {
    let cells = window_cells(test);
    let mut html = String::from(
        "<table class=\"pts-throughput\"><tr><th>block size</th><th>access</th><th class=\"num\">MB/s</th></tr>",
    );
    for cell in &cells {
        let (direction, rate) = if cell.read_percent == 100 {
            ("sequential read", cell.read_bytes_per_second)
        } else {
            ("sequential write", cell.write_bytes_per_second)
        };
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{direction}</td><td class=\"num\">{:.1}</td></tr>",
            block_size_name(cell.block_size_bytes),
            rate / 1e6
        );
    }
    html.push_str("</table>");
    html
}

fn latency_table(test: &PtsTestResult) -> String {
    let cells = window_cells(test);
    let mut html = String::from(
        "<table class=\"pts-latency\"><tr><th>block size</th><th>read/write mix</th><th class=\"num\">mean µs</th>\
         <th class=\"num\">p99 µs</th><th class=\"num\">p99.99 µs</th><th class=\"num\">max µs</th></tr>",
    );
    for cell in &cells {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{:.1}</td><td class=\"num\">{:.1}</td>\
             <td class=\"num\">{:.1}</td><td class=\"num\">{:.1}</td></tr>",
            block_size_name(cell.block_size_bytes),
            mix_name(cell.read_percent),
            cell.mean_latency_ns / 1000.0,
            cell.p99_latency_ns as f64 / 1000.0,
            cell.p9999_latency_ns as f64 / 1000.0,
            cell.max_latency_ns as f64 / 1000.0
        );
    }
    html.push_str("</table>");
    html
}

fn saturation_table(result: &PtsResult, test: &PtsTestResult) -> String {
    let range = result.conditions.active_range_bytes.max(1) as f64;
    let mut html = String::from(
        "<table class=\"pts-saturation\"><tr><th class=\"num\">round</th><th class=\"num\">IOPS</th>\
         <th class=\"num\">written (× active range)</th></tr>",
    );
    let mut written = 0u64;
    for round in &test.rounds {
        written += round.cells.iter().map(|cell| cell.bytes).sum::<u64>();
        let _ = write!(
            html,
            "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2}</td></tr>",
            round.number,
            compact(round.tracked.first().copied().unwrap_or(0.0)),
            written as f64 / range
        );
    }
    html.push_str("</table>");
    html
}
