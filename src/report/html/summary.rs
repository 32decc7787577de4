//! The summary: one table per run, a row per test (read and write rows under a mixed test),
//! with MB/s, IOPS, latency, CPU and the verdict, then each verdict's evidence.

use super::escape::escape;
use super::page::Section;
use super::parts::{confirmation_note, num, test_anchor, verdict_badge};
use crate::compare::TestFigures;
use crate::compare::comparison::{FigureDirection, Metric};
use crate::report::compare_cells::value_cell;
use crate::report::model::RunReport;
use crate::result::{StopReason, TestResult};
use crate::units::format_latency;
use std::fmt::Write;

const HEADER: &str = r#"<tr><th>test</th><th class="num">MB/s</th><th class="num">MiB/s</th><th class="num">IOPS</th><th class="num">mean</th><th class="num">p99</th><th class="num">p99.9</th><th class="num">max</th><th class="num">CPU %</th><th>verdict</th></tr>"#;

fn row(
    name_cell: &str,
    test: &TestResult,
    (direction, figures): (FigureDirection, &TestFigures),
    sub: bool,
) -> String {
    let values = test.figures(direction);
    let mut html = format!(
        "<tr{}><td>{name_cell}</td>",
        if sub { r#" class="sub""# } else { "" }
    );
    html.push_str(&num(&value_cell(
        Metric::Throughput,
        &figures.bytes_per_second,
    )));
    html.push_str(&num(&format!(
        "{:.1}",
        values.bytes_per_second / 1_048_576.0
    )));
    html.push_str(&num(&value_cell(Metric::Iops, &figures.iops)));
    html.push_str(&num(&value_cell(
        Metric::MeanLatency,
        &figures.mean_latency_ns,
    )));
    html.push_str(&num(&value_cell(
        Metric::P99Latency,
        &figures.p99_latency_ns,
    )));
    html.push_str(&num(&format_latency(
        values.latency.percentile("99.9") as f64
    )));
    html.push_str(&num(&format_latency(values.latency.max_ns as f64)));
    if sub {
        html.push_str("<td></td><td></td></tr>");
        return html;
    }
    html.push_str(&num(&format!("{:.1}", test.cpu.process_percent_of_host())));
    match &test.analysis {
        Some(analysis) => {
            let _ = write!(
                html,
                "<td>{}</td>",
                verdict_badge(analysis.verdict, &analysis.evidence)
            );
        }
        None => html.push_str(r#"<td class="muted">not analysed</td>"#),
    }
    html.push_str("</tr>");
    html
}

fn test_name(run: usize, index: usize, test: &TestResult) -> String {
    let mut name = format!(
        r##"<a href="#{}">{}</a>"##,
        test_anchor(run, index, &test.name),
        escape(&test.name)
    );
    match test.stop_reason {
        StopReason::Completed => {}
        StopReason::Interrupted => name.push_str(" (partial)"),
        StopReason::Error => name.push_str(" (stopped by an error)"),
    }
    if test.errors.count > 0 {
        let _ = write!(name, " ({} I/O errors)", test.errors.count);
    }
    name
}

/// The summary section.
pub fn section(runs: &[RunReport<'_>]) -> Section {
    let mut html = String::new();
    for (run_index, run) in runs.iter().enumerate() {
        if runs.len() > 1 {
            let _ = write!(html, "<h3>{}</h3>", escape(&run.label));
        }
        if run.result.tests.is_empty() {
            html.push_str(r#"<p class="note">This run has no storage tests.</p>"#);
            continue;
        }
        let _ = write!(
            html,
            r#"<div class="table-wrap"><table class="summary" data-run="{run_index}"><thead>{HEADER}</thead><tbody>"#
        );
        for ((index, test), set) in run.result.tests.iter().enumerate().zip(&run.figures) {
            let direction = set.main;
            let sub = |name: &str, direction: FigureDirection| {
                set.get(direction)
                    .map(|figures| row(name, test, (direction, figures), true))
                    .unwrap_or_default()
            };
            if let Some(figures) = set.get(direction) {
                html.push_str(&row(
                    &test_name(run_index, index, test),
                    test,
                    (direction, figures),
                    false,
                ));
            }
            if direction == FigureDirection::Total && test.read.io_count > 0 {
                html.push_str(&sub("read", FigureDirection::Read));
                html.push_str(&sub("write", FigureDirection::Write));
            }
            if direction != FigureDirection::Trim && test.trim.io_count > 0 {
                html.push_str(&sub("trim", FigureDirection::Trim));
            }
        }
        html.push_str("</tbody></table></div>");
        let analysed: Vec<&TestResult> = run
            .result
            .tests
            .iter()
            .filter(|test| test.analysis.is_some())
            .collect();
        if !analysed.is_empty() {
            html.push_str(r#"<ul class="notes verdicts">"#);
            for test in analysed {
                if let Some(analysis) = &test.analysis {
                    let _ = write!(
                        html,
                        "<li><b>{}</b>: {} — {}{}</li>",
                        escape(&test.name),
                        verdict_badge(analysis.verdict, &analysis.evidence),
                        escape(&analysis.evidence),
                        confirmation_note(analysis)
                    );
                }
            }
            html.push_str("</ul>");
        } else {
            html.push_str(
                r#"<p class="note">No verdicts: this result was saved without the analysis of its path.</p>"#,
            );
        }
    }
    html.push_str(
        r#"<p class="meta">MB/s = 10<sup>6</sup> bytes/s; ± = 95 % confidence interval of the per-interval values (1 s; 250 ms in runs under 10 s); CPU % = iopath's user + system time as a share of all the host's CPUs. A mixed test shows reads and writes together, then each.</p>"#,
    );
    Section {
        id: "summary",
        title: "Summary",
        body: html,
    }
}
