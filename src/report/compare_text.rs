//! The comparison as a terminal table (`iopath compare A.json B.json`): one row per test with
//! a line per metric (MB/s, IOPS, mean, p99, and the verdicts when analysed), each run's
//! figures side by side, then for each run but the baseline the ratio, the difference and
//! whether the change is beyond noise. Below it: notes, the tests not in every run, the cost
//! table when prices or ports were given, and the legend.

use super::compare_cells::{LEGEND, difference_cell, money, outcome_cell, ratio_cell, value_cell};
use crate::compare::{ComparedTest, Comparison, CostReport, Metric};
use crate::text::escape::escape_controls;
use crate::text::shorten::{SHOWN_CHARS, shorten};
use crate::text::shown;
use crate::units::format_count;
use crate::units::format_rate;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL};
use std::io::{self, Write};

/// The column headers: test, metric, each run, then ratio, difference and change per run
/// other than the baseline. Labels are shortened to [`SHOWN_CHARS`] characters; control
/// characters are left for each format to escape its own way.
pub fn header(comparison: &Comparison) -> Vec<String> {
    let base = shorten(&comparison.baseline, SHOWN_CHARS);
    let mut header = vec!["test".to_string(), String::new()];
    header.extend(
        comparison
            .runs
            .iter()
            .map(|run| shorten(&run.label, SHOWN_CHARS).into_owned()),
    );
    for run in others(comparison) {
        let run = shorten(run, SHOWN_CHARS);
        header.push(format!("{run}/{base}"));
        header.push(format!("{run} − {base}"));
        header.push(format!("{run} vs {base}"));
    }
    header
}

/// `labels` as `show` makes each of them, comma-separated.
pub(crate) fn join_shown(labels: &[String], show: impl Fn(&str) -> String) -> String {
    labels
        .iter()
        .map(|label| show(label))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Labels of every run but the baseline, in order.
pub fn others(comparison: &Comparison) -> Vec<&str> {
    comparison
        .runs
        .iter()
        .map(|run| run.label.as_str())
        .filter(|label| *label != comparison.baseline)
        .collect()
}

/// The name cell of a test: its name, the direction of its figures, and how it ended where
/// that matters; names and labels as [`shown`] makes them.
pub fn test_title(test: &ComparedTest) -> String {
    let mut title = format!("{}\n{}", shown(&test.name), test.direction.name());
    for figures in &test.figures {
        let run = shown(&figures.run);
        if figures.stopped_early {
            title.push_str(&format!("\n{run}: stopped early"));
        }
        if figures.error_count > 0 {
            title.push_str(&format!("\n{run}: {} I/O errors", figures.error_count));
        }
    }
    title
}

/// Whether any run of the comparison carries a verdict.
pub fn has_verdicts(comparison: &Comparison) -> bool {
    comparison
        .tests
        .iter()
        .any(|test| test.figures.iter().any(|figures| figures.verdict.is_some()))
}

/// The cells of one test, one line per metric in each cell.
fn test_row(test: &ComparedTest, verdicts: bool) -> Vec<String> {
    let lines = |cell: &dyn Fn(Metric) -> String| {
        Metric::ALL
            .iter()
            .map(|m| cell(*m))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut row = vec![test_title(test), lines(&|metric| metric.name().to_string())];
    if verdicts {
        row[1].push_str("\nverdict");
    }
    for figures in &test.figures {
        let mut cell = lines(&|metric| value_cell(metric, figures.value(metric)));
        if verdicts {
            cell.push('\n');
            cell.push_str(figures.verdict.map_or("", |verdict| verdict.name()));
        }
        row.push(cell);
    }
    for changes in &test.changes {
        let change = |metric: Metric| changes.metric(metric);
        row.push(lines(&|m| ratio_cell(change(m).and_then(|c| c.ratio))));
        row.push(lines(&|m| {
            change(m).map_or(String::new(), |c| difference_cell(m, c.difference))
        }));
        row.push(lines(&|m| {
            change(m).map_or(String::new(), |c| outcome_cell(c.outcome).to_string())
        }));
    }
    row
}

/// The table of every compared test.
pub fn comparison_table(comparison: &Comparison) -> Table {
    let verdicts = has_verdicts(comparison);
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(
            header(comparison)
                .iter()
                .map(|cell| escape_controls(cell).into_owned()),
        );
    for test in &comparison.tests {
        table.add_row(test_row(test, verdicts));
    }
    let runs = comparison.runs.len();
    for index in 2..2 + runs + 3 * (runs - 1) {
        let outcome_column = index >= 2 + runs && (index - 2 - runs) % 3 == 2;
        if let Some(column) = table.column_mut(index)
            && !outcome_column
        {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The cost table: one row per run.
pub fn cost_table(cost: &CostReport) -> Table {
    let target = cost.target_bytes_per_second.map(format_rate);
    let mut header: Vec<String> = [
        "run",
        "price",
        "ports",
        "peak MB/s",
        "per GB/s",
        "peak IOPS",
        "per 1,000 IOPS",
        "MB/s per port",
    ]
    .map(String::from)
    .to_vec();
    if let Some(target) = &target {
        header.push(format!("ports for {target}"));
        header.push(format!("units for {target}"));
        header.push(format!("price for {target}"));
    }
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    let optional = |value: Option<String>| value.unwrap_or_else(|| "—".into());
    for run in &cost.runs {
        let mut row = vec![
            shown(&run.run).into_owned(),
            optional(run.price.map(money)),
            optional(run.ports.map(|ports| ports.to_string())),
            format!(
                "{:.1}\n{}",
                run.peak_bytes_per_second / 1e6,
                shown(&run.peak_bytes_per_second_test)
            ),
            optional(run.price_per_gigabyte_per_second.map(money)),
            format!(
                "{}\n{}",
                format_count(run.peak_iops),
                shown(&run.peak_iops_test)
            ),
            optional(run.price_per_thousand_iops.map(money)),
            optional(
                run.bytes_per_second_per_port
                    .map(|rate| format!("{:.1}", rate / 1e6)),
            ),
        ];
        if target.is_some() {
            row.push(optional(run.ports_needed.map(|n| n.to_string())));
            row.push(optional(run.units_needed.map(|n| n.to_string())));
            row.push(optional(run.price_for_target.map(money)));
        }
        table.add_row(row);
    }
    for index in 1..11 {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// What a cost table rests on, one line.
pub fn cost_basis(cost: &CostReport) -> String {
    let mut line = format!("Cost: {}.", escape_controls(&cost.basis));
    if cost.target_bytes_per_second.is_some() {
        line.push_str(" Ports and units for the target assume they add up linearly (switch, array and hosts permitting).");
    }
    line
}

/// Writes the whole comparison for a terminal. Text read from the results (labels, names,
/// hosts, notes) has its control characters escaped; labels and names are shortened to
/// [`SHOWN_CHARS`] characters.
pub fn write_compare_text(comparison: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let runs: Vec<String> = comparison
        .runs
        .iter()
        .map(|run| {
            let partial = if run.partial { ", partial" } else { "" };
            format!(
                "{} ({}, {}, {} tests{partial})",
                shown(&run.label),
                shown(&run.started_at),
                shown(&run.hostname),
                run.test_count
            )
        })
        .collect();
    writeln!(out, "Compared: {}", runs.join("; "))?;
    writeln!(out, "Baseline: {}", shown(&comparison.baseline))?;
    if !comparison.tests.is_empty() {
        writeln!(out, "{}", comparison_table(comparison))?;
    }
    for test in &comparison.tests {
        for note in &test.notes {
            writeln!(
                out,
                "note: {}: {}",
                shown(&test.name),
                escape_controls(note)
            )?;
        }
    }
    if !comparison.unmatched.is_empty() {
        writeln!(out, "Not in every run (not compared):")?;
        for test in &comparison.unmatched {
            writeln!(
                out,
                "  {}: in {}; missing from {}",
                shown(&test.name),
                join_shown(&test.present_in, |label| shown(label).into_owned()),
                join_shown(&test.missing_from, |label| shown(label).into_owned())
            )?;
        }
    }
    for note in &comparison.notes {
        writeln!(out, "note: {}", escape_controls(note))?;
    }
    if let Some(cost) = &comparison.cost {
        writeln!(out, "{}", cost_table(cost))?;
        writeln!(out, "{}", cost_basis(cost))?;
    }
    writeln!(out, "{LEGEND}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareOptions, CostInputs, LabeledRun, compare};
    use crate::support::fixtures::mixed;

    #[test]
    fn every_test_every_run_and_the_unmatched_are_shown() {
        let a = mixed().clone();
        let mut b = mixed().clone();
        b.tests[1].name = "other".into();
        let cost =
            CostInputs::from_flags(&["a=100".into()], &["b=2".into()], Some("1GB/s")).unwrap();
        let comparison = compare(
            &[LabeledRun::new("a", &a), LabeledRun::new("b", &b)],
            &CompareOptions {
                baseline: None,
                cost,
            },
        )
        .unwrap();
        let mut out = Vec::new();
        write_compare_text(&comparison, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("Compared: a ("), "{text}");
        assert!(text.contains("Baseline: a\n"), "{text}");
        for header in ["b/a", "b − a", "b vs a"] {
            assert!(text.contains(header), "{header}: {text}");
        }
        assert!(text.contains("mixed"), "{text}");
        assert!(text.contains("read+write"), "{text}");
        assert!(text.contains("same"), "{text}");
        assert!(text.contains("  pair: in a; missing from b"), "{text}");
        assert!(text.contains("  other: in b; missing from a"), "{text}");
        assert!(text.contains("ports for 1.00 GB/s"), "{text}");
        assert!(
            text.contains("Cost: peaks over the 1 test every run has."),
            "{text}"
        );
        assert!(
            text.trim_end().ends_with("full one-second intervals."),
            "{text}"
        );
    }
}
