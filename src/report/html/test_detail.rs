//! One part per test of each run: the workload, the verdict and its evidence, MB/s and IOPS
//! over time (the per-second series), the latency distribution (the stored histogram, four
//! bins per power of two) with its percentiles, the utilisation of every hop, and the test's
//! trust notes.

use super::escape::escape;
use super::page::Section;
use super::parts::{
    confirmation_note, directions, num, seconds, test_anchor, utilisation_bar, verdict_badge,
};
use super::svg::{Axis, LineChart, Marker, Scale, Series, latency_tick};
use crate::report::model::RunReport;
use crate::result::{DirectionResult, PERCENTILES, TestAnalysis, TestResult};
use crate::stats::histogram::bucket_value;
use crate::units::{format_count, format_latency, format_percent, format_rate};
use std::fmt::Write;

/// Bins of the latency distribution per power of two.
pub const BINS_PER_OCTAVE: f64 = 4.0;

/// The colour of a direction: reads first, writes second, as in every chart.
fn direction_color(name: &str) -> usize {
    usize::from(name == "write")
}

/// A rate per second of each interval: `(end of the interval in s, value)`.
fn rates(direction: &DirectionResult, value: fn(u64, u64) -> f64) -> Vec<(f64, f64)> {
    direction
        .series
        .iter()
        .filter(|point| point.duration_ns > 0)
        .map(|point| {
            let seconds = point.duration_ns as f64 / 1e9;
            (
                (point.start_ns as f64 + point.duration_ns as f64) / 1e9,
                value(point.bytes, point.io_count) / seconds,
            )
        })
        .collect()
}

fn time_chart(id: String, test: &TestResult, iops: bool) -> String {
    let mut series: Vec<Series> = directions(test)
        .into_iter()
        .map(|(name, direction)| {
            let points = if iops {
                rates(direction, |_, count| count as f64)
            } else {
                rates(direction, |bytes, _| bytes as f64 / 1e6)
            };
            let mut series = Series::new(name, direction_color(name), points);
            series.point_titles = series
                .points
                .iter()
                .map(|(second, value)| {
                    if iops {
                        format!("{name} at {second:.1} s: {} IOPS", format_count(*value))
                    } else {
                        format!("{name} at {second:.1} s: {value:.1} MB/s")
                    }
                })
                .collect();
            series
        })
        .collect();
    let mut markers = Vec::new();
    if let Some((fitted, marker)) = super::rate_step_chart::fitted_step(test, iops) {
        series.push(fitted);
        markers.push(marker);
    }
    LineChart {
        id,
        kind: if iops { "iops" } else { "throughput" },
        caption: if iops {
            "IOPS over time".into()
        } else {
            "MB/s over time".into()
        },
        x: Axis::linear("seconds measured"),
        y: Axis::linear(if iops { "IOPS" } else { "MB/s" }),
        series,
        markers,
        attributes: vec![("test".into(), test.name.clone())],
    }
    .render()
}

/// The latency distribution of `direction`: `(bin centre in ns, share of I/Os in %)` for
/// every bin from the fastest to the slowest, empty bins included, and the I/Os counted.
pub fn distribution(direction: &DirectionResult) -> (Vec<(f64, f64)>, u64) {
    let histogram = &direction.histogram;
    let mut bins: Vec<(i64, u64)> = Vec::new();
    for [index, count] in &histogram.buckets {
        let value = bucket_value(*index as usize).max(1) as f64;
        let bin = (value.log2() * BINS_PER_OCTAVE).floor() as i64;
        match bins.iter_mut().find(|(key, _)| *key == bin) {
            Some(entry) => entry.1 = entry.1.saturating_add(*count),
            None => bins.push((bin, *count)),
        }
    }
    let total = bins
        .iter()
        .fold(0u64, |total, (_, count)| total.saturating_add(*count));
    let (Some(first), Some(last)) = (
        bins.iter().map(|(key, _)| *key).min(),
        bins.iter().map(|(key, _)| *key).max(),
    ) else {
        return (Vec::new(), 0);
    };
    let points = (first..=last)
        .map(|key| {
            let count = bins
                .iter()
                .find(|(bin, _)| *bin == key)
                .map_or(0, |(_, count)| *count);
            (
                2f64.powf((key as f64 + 0.5) / BINS_PER_OCTAVE),
                count as f64 / total.max(1) as f64 * 100.0,
            )
        })
        .collect();
    (points, total)
}

fn distribution_chart(id: String, test: &TestResult) -> String {
    let mut series = Vec::new();
    let mut markers = Vec::new();
    for (name, direction) in directions(test) {
        let (points, total) = distribution(direction);
        let mut line = Series::new(name, direction_color(name), points);
        line.point_titles = line
            .points
            .iter()
            .map(|(ns, share)| {
                format!(
                    "{name} around {}: {share:.2} % of I/Os",
                    format_latency(*ns)
                )
            })
            .collect();
        line.attributes = vec![("count".into(), total.to_string())];
        series.push(line);
        for key in ["50", "99"] {
            markers.push(Marker {
                x: direction.latency.percentile(key) as f64,
                label: format!("p{key}"),
                color: direction_color(name),
            });
        }
    }
    LineChart {
        id,
        kind: "latency-distribution",
        caption: "Latency distribution (share of I/Os, p50 and p99 marked)".into(),
        x: Axis::with("latency (log scale)", Scale::Log10, latency_tick),
        y: Axis::linear("% of I/Os"),
        series,
        markers,
        attributes: vec![("test".into(), test.name.clone())],
    }
    .render()
}

fn percentile_table(test: &TestResult) -> String {
    let mut html = String::from(
        r#"<div class="table-wrap"><table class="percentiles"><thead><tr><th></th><th class="num">I/Os</th><th class="num">min</th><th class="num">mean</th>"#,
    );
    for (_, key) in PERCENTILES {
        let _ = write!(html, r#"<th class="num">p{key}</th>"#);
    }
    html.push_str(r#"<th class="num">max</th></tr></thead><tbody>"#);
    for (name, direction) in directions(test) {
        let latency = &direction.latency;
        let _ = write!(html, "<tr><td>{name}</td>");
        html.push_str(&num(&format_count(direction.io_count as f64)));
        html.push_str(&num(&format_latency(latency.min_ns as f64)));
        html.push_str(&num(&format_latency(latency.mean_ns)));
        for (_, key) in PERCENTILES {
            html.push_str(&num(&format_latency(latency.percentile(key) as f64)));
        }
        html.push_str(&num(&format_latency(latency.max_ns as f64)));
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div>");
    html
}

fn workload_lines(test: &TestResult) -> String {
    let mut html = String::from(r#"<p class="meta">"#);
    for (index, job) in test.jobs.iter().enumerate() {
        if index > 0 {
            html.push_str("<br>");
        }
        if test.jobs.len() > 1 {
            let _ = write!(html, "<b>{}</b>: ", escape(&job.name));
        }
        let _ = write!(
            html,
            "{} · engine {} · {} · {} worker thread{} × QD {} · {} measured",
            escape(&job.workload.summary()),
            escape(&job.engine.name),
            if job.direct { "O_DIRECT" } else { "buffered" },
            job.worker_threads,
            if job.worker_threads == 1 { "" } else { "s" },
            job.queue_depth_per_worker,
            seconds(job.measured_ns)
        );
        if job.ramp_ns > 0 {
            let _ = write!(html, " after {} ramp", seconds(job.ramp_ns));
        }
    }
    if let Some(steady) = &test.steady_state {
        let _ = write!(
            html,
            "<br>steady state {}: {}",
            escape(&steady.criterion),
            match steady.attained_after_ns {
                Some(ns) => format!("held after {}", seconds(ns)),
                None => "never held".into(),
            }
        );
    }
    html.push_str("</p>");
    html
}

fn analysis_part(analysis: &TestAnalysis) -> String {
    let mut html = format!(
        r#"<p>{} {}{}</p>"#,
        verdict_badge(analysis.verdict, &analysis.evidence),
        escape(&analysis.evidence),
        confirmation_note(analysis)
    );
    if !analysis.missing.is_empty() && !analysis.evidence.contains(&analysis.missing.join("; ")) {
        let _ = write!(
            html,
            r#"<p class="meta">Missing to decide: {}</p>"#,
            escape(&analysis.missing.join("; "))
        );
    }
    if !analysis.hops.is_empty() {
        html.push_str(r#"<div class="table-wrap"><table class="hops"><thead><tr><th>hop</th><th>kind</th><th class="num">inbound</th><th class="num">outbound</th><th class="num">capacity</th><th class="num">IOPS</th><th>utilisation</th></tr></thead><tbody>"#);
        for hop in &analysis.hops {
            let mut name = escape(&hop.hop_name);
            match hop.route_key() {
                Some(route) => {
                    let _ = write!(
                        name,
                        r#" <span class="muted">(declared, route {})</span>"#,
                        escape(route)
                    );
                }
                None if hop.declared => name.push_str(r#" <span class="muted">(declared)</span>"#),
                None => {}
            }
            if hop.below_page_cache {
                name.push_str(r#" <span class="muted">(below the page cache)</span>"#);
            }
            let _ = write!(html, "<tr><td>{name}</td><td>{}</td>", hop.kind.label());
            html.push_str(&num(&format_rate(hop.inbound_bytes_per_second)));
            html.push_str(&num(&format_rate(hop.outbound_bytes_per_second)));
            html.push_str(&num(&format_rate(hop.capacity_bytes_per_second as f64)));
            html.push_str(&num(&format_count(hop.iops)));
            let _ = write!(
                html,
                r#"<td class="bar-cell">{}</td></tr>"#,
                utilisation_bar(hop.utilisation_percent)
            );
        }
        html.push_str("</tbody></table></div>");
    }
    let cpu = &analysis.cpu;
    let queue = &analysis.queue;
    let _ = write!(
        html,
        r#"<p class="meta">CPU: iopath {} of the host, busiest worker thread {} of a core{}. Outstanding I/O: {} configured, {:.1} achieved (IOPS × mean latency){}.</p>"#,
        format_percent(cpu.process_percent_of_host),
        format_percent(cpu.busiest_thread_percent),
        cpu.busiest_core.map_or(String::new(), |core| format!(
            ", busiest core cpu{core} at {}",
            format_percent(cpu.busiest_core_percent)
        )),
        queue.configured_outstanding,
        queue.achieved_outstanding,
        queue
            .device_queue_limit
            .map_or(String::new(), |limit| format!(
                ", device queue limit {limit}"
            ))
    );
    if !analysis.trust_notes.is_empty() {
        html.push_str(r#"<ul class="notes trust">"#);
        for note in &analysis.trust_notes {
            let _ = write!(html, "<li>{}</li>", escape(&note.message));
        }
        html.push_str("</ul>");
    }
    html
}

fn test_part(run_index: usize, label: &str, index: usize, test: &TestResult) -> String {
    let id = test_anchor(run_index, index, &test.name);
    let mut html = format!(
        r#"<section class="test" id="{id}" data-run="{run_index}" data-test-index="{index}"><h3>{}"#,
        escape(&test.name)
    );
    let _ = write!(html, " <small>{}</small></h3>", escape(label));
    html.push_str(&workload_lines(test));
    match &test.analysis {
        Some(analysis) => html.push_str(&analysis_part(analysis)),
        None => html.push_str(
            r#"<p class="meta">Not analysed: no verdict or hop utilisation in this result.</p>"#,
        ),
    }
    if directions(test).is_empty() {
        html.push_str(r#"<p class="note">No I/O completed in this test.</p></section>"#);
        return html;
    }
    html.push_str(r#"<div class="charts">"#);
    html.push_str(&time_chart(format!("{id}-throughput"), test, false));
    html.push_str(&time_chart(format!("{id}-iops"), test, true));
    html.push_str(&distribution_chart(format!("{id}-latency"), test));
    if let Some(chart) = super::server_chart::server_chart(format!("{id}-server"), test) {
        html.push_str(&chart);
    }
    html.push_str("</div>");
    html.push_str(&percentile_table(test));
    if test.errors.count > 0 {
        let _ = write!(html, r#"<p class="note">{} I/O errors"#, test.errors.count);
        if let Some(first) = test.errors.first.first() {
            let _ = write!(
                html,
                ", the first at offset {} of {}: {}",
                first.offset,
                escape(&first.target),
                escape(&first.error)
            );
        }
        html.push_str("</p>");
    }
    html.push_str("</section>");
    html
}

/// The tests section.
pub fn section(runs: &[RunReport<'_>]) -> Section {
    let mut html = String::new();
    for (run_index, run) in runs.iter().enumerate() {
        for (index, test) in run.result.tests.iter().enumerate() {
            html.push_str(&test_part(run_index, &run.label, index, test));
        }
    }
    if html.is_empty() {
        html.push_str(r#"<p class="note">No tests.</p>"#);
    }
    Section {
        id: "tests",
        title: "Tests",
        body: html,
    }
}
