//! The comparison section: the table of `iopath compare` (a row group per test, a row per
//! metric), bars of MB/s and IOPS per test with each run's ratio to the baseline, the tests
//! not in every run, and the cost table when prices or ports were given.

use super::escape::escape;
use super::page::Section;
use super::parts::num;
use super::svg::{BarChart, BarSeries, compact};
use crate::compare::{Comparison, CostReport, Metric};
use crate::report::compare_cells::{
    LEGEND, difference_cell, money, outcome_cell, ratio_cell, value_cell,
};
use crate::report::compare_text::{cost_basis, has_verdicts, header};
use crate::units::{format_count, format_rate};
use std::fmt::Write;

fn table(comparison: &Comparison) -> String {
    let runs = comparison.runs.len();
    let mut html = String::from(r#"<div class="table-wrap"><table class="compare"><thead><tr>"#);
    for (index, cell) in header(comparison).iter().enumerate() {
        let class = if index >= 2 { r#" class="num""# } else { "" };
        let _ = write!(html, "<th{class}>{}</th>", escape(cell));
    }
    html.push_str("</tr></thead>");
    let verdicts = has_verdicts(comparison);
    let lines = Metric::ALL.len() + usize::from(verdicts);
    for test in &comparison.tests {
        html.push_str(r#"<tbody class="test">"#);
        for (line, metric) in Metric::ALL.iter().enumerate() {
            html.push_str("<tr>");
            if line == 0 {
                let _ = write!(
                    html,
                    r#"<td rowspan="{lines}"><b>{}</b><br><span class="muted">{}</span>"#,
                    escape(&test.name),
                    test.direction.name()
                );
                for note in &test.notes {
                    let _ = write!(html, r#"<br><span class="muted">{}</span>"#, escape(note));
                }
                html.push_str("</td>");
            }
            let _ = write!(html, "<td>{}</td>", metric.name());
            for figures in &test.figures {
                html.push_str(&num(&value_cell(*metric, figures.value(*metric))));
            }
            for changes in &test.changes {
                match changes.metric(*metric) {
                    Some(change) => {
                        html.push_str(&num(&ratio_cell(change.ratio)));
                        html.push_str(&num(&difference_cell(*metric, change.difference)));
                        let word = outcome_cell(change.outcome);
                        let _ = write!(
                            html,
                            r#"<td class="num"><span class="outcome {}">{word}</span></td>"#,
                            word.replace(' ', "-")
                        );
                    }
                    None => html.push_str("<td></td><td></td><td></td>"),
                }
            }
            html.push_str("</tr>");
        }
        if verdicts {
            html.push_str("<tr><td>verdict</td>");
            for figures in &test.figures {
                let _ = write!(
                    html,
                    r#"<td class="num">{}</td>"#,
                    figures.verdict.map_or("", |v| v.name())
                );
            }
            for _ in 1..runs {
                html.push_str("<td></td><td></td><td></td>");
            }
            html.push_str("</tr>");
        }
        html.push_str("</tbody>");
    }
    html.push_str("</table></div>");
    html
}

fn bars(comparison: &Comparison, metric: Metric, id: &str, kind: &'static str) -> String {
    let baseline = comparison.baseline_index();
    let series = comparison
        .runs
        .iter()
        .enumerate()
        .map(|(index, run)| BarSeries {
            label: run.label.clone(),
            color: index,
            values: comparison
                .tests
                .iter()
                .map(|test| {
                    let value = test.figures[index].value(metric).value;
                    if metric == Metric::Throughput {
                        value / 1e6
                    } else {
                        value
                    }
                })
                .collect(),
            annotations: comparison
                .tests
                .iter()
                .map(|test| {
                    if index == baseline {
                        return "baseline".to_string();
                    }
                    test.changes
                        .iter()
                        .find(|changes| changes.run == run.label)
                        .and_then(|changes| changes.metric(metric))
                        .map_or(String::new(), |change| {
                            format!(
                                "{}× {}",
                                ratio_cell(change.ratio),
                                outcome_cell(change.outcome)
                            )
                        })
                })
                .collect(),
        })
        .collect();
    BarChart {
        id: id.into(),
        kind,
        caption: format!(
            "{} by test, with each run's ratio to {}",
            metric.name(),
            comparison.baseline
        ),
        groups: comparison
            .tests
            .iter()
            .map(|test| test.name.clone())
            .collect(),
        series,
        format: compact,
    }
    .render()
}

fn cost_table(cost: &CostReport) -> String {
    let target = cost.target_bytes_per_second.map(format_rate);
    let mut html = String::from(
        r#"<div class="table-wrap"><table class="cost"><thead><tr><th>run</th><th class="num">price</th><th class="num">ports</th><th class="num">peak MB/s</th><th class="num">per GB/s</th><th class="num">peak IOPS</th><th class="num">per 1,000 IOPS</th><th class="num">MB/s per port</th>"#,
    );
    if let Some(target) = &target {
        let target = escape(target);
        let _ = write!(
            html,
            r#"<th class="num">ports for {target}</th><th class="num">units for {target}</th><th class="num">price for {target}</th>"#
        );
    }
    html.push_str("</tr></thead><tbody>");
    let optional = |value: Option<String>| value.unwrap_or_else(|| "—".into());
    for run in &cost.runs {
        let _ = write!(html, "<tr><td>{}</td>", escape(&run.run));
        html.push_str(&num(&optional(run.price.map(money))));
        html.push_str(&num(&optional(run.ports.map(|p| p.to_string()))));
        let _ = write!(
            html,
            r#"<td class="num">{:.1}<br><span class="muted">{}</span></td>"#,
            run.peak_bytes_per_second / 1e6,
            escape(&run.peak_bytes_per_second_test)
        );
        html.push_str(&num(&optional(
            run.price_per_gigabyte_per_second.map(money),
        )));
        let _ = write!(
            html,
            r#"<td class="num">{}<br><span class="muted">{}</span></td>"#,
            format_count(run.peak_iops),
            escape(&run.peak_iops_test)
        );
        html.push_str(&num(&optional(run.price_per_thousand_iops.map(money))));
        html.push_str(&num(&optional(
            run.bytes_per_second_per_port
                .map(|rate| format!("{:.1}", rate / 1e6)),
        )));
        if target.is_some() {
            html.push_str(&num(&optional(run.ports_needed.map(|n| n.to_string()))));
            html.push_str(&num(&optional(run.units_needed.map(|n| n.to_string()))));
            html.push_str(&num(&optional(run.price_for_target.map(money))));
        }
        html.push_str("</tr>");
    }
    let _ = write!(
        html,
        r#"</tbody></table></div><p class="meta">{}</p>"#,
        escape(&cost_basis(cost))
    );
    html
}

/// The comparison section.
pub fn section(comparison: &Comparison) -> Section {
    let mut html = format!(
        r#"<p class="meta">Baseline: <b>{}</b>. Each other run is given as a ratio to it and a difference from it; a change is <span class="outcome better">better</span> or <span class="outcome worse">worse</span> only where the 95 % intervals do not overlap.</p>"#,
        escape(&comparison.baseline)
    );
    if !comparison.tests.is_empty() {
        html.push_str(&table(comparison));
        html.push_str(r#"<div class="charts pair">"#);
        html.push_str(&bars(
            comparison,
            Metric::Throughput,
            "compare-throughput",
            "compare-throughput",
        ));
        html.push_str(&bars(
            comparison,
            Metric::Iops,
            "compare-iops",
            "compare-iops",
        ));
        html.push_str("</div>");
    }
    if !comparison.unmatched.is_empty() {
        html.push_str(r#"<h3>Not in every run</h3><ul class="notes unmatched">"#);
        for test in &comparison.unmatched {
            let _ = write!(
                html,
                "<li><b>{}</b>: in {}; missing from {}</li>",
                escape(&test.name),
                escape(&test.present_in.join(", ")),
                escape(&test.missing_from.join(", "))
            );
        }
        html.push_str("</ul>");
    }
    if !comparison.notes.is_empty() {
        html.push_str(r#"<ul class="notes">"#);
        for note in &comparison.notes {
            let _ = write!(html, "<li>{}</li>", escape(note));
        }
        html.push_str("</ul>");
    }
    if let Some(cost) = &comparison.cost {
        html.push_str("<h3>Cost and density</h3>");
        html.push_str(&cost_table(cost));
    }
    let _ = write!(html, r#"<p class="meta">{}</p>"#, escape(LEGEND));
    Section {
        id: "comparison",
        title: "Comparison",
        body: html,
    }
}
