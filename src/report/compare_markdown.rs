//! The comparison as Markdown (`iopath compare --md`), for tickets and chats: a line naming
//! the runs, then a table with one line per metric of each test (the test named on its first
//! line), the tests not in every run, the cost table when asked for, and the legend.
//!
//! ```markdown
//! **Compared:** before (2026-11-30T09:02:11Z, vm) · after (2026-11-30T09:02:16Z, vm); baseline **before**
//!
//! | test | | before | after | after/before | after − before | after vs before |
//! |:--|:--|--:|--:|--:|--:|:--|
//! | randread 4k QD32 (read) | MB/s | 271.6 ± 4.2 % | 251.8 ± 3.9 % | 0.93 | -19.8 | same |
//! | | IOPS | 66,310 ± 4.2 % | 61,465 ± 3.9 % | 0.93 | -4,845 | same |
//! ```

use super::compare_cells::{LEGEND, difference_cell, money, outcome_cell, ratio_cell, value_cell};
use super::compare_text::{has_verdicts, header, join_shown};
use super::markdown::{escape, escape_name};
use crate::compare::{Comparison, CostReport, Metric};
use crate::units::{format_count, format_rate};
use std::io::{self, Write};

/// Writes the comparison as Markdown.
pub fn write_compare_markdown(comparison: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let runs: Vec<String> = comparison
        .runs
        .iter()
        .map(|run| {
            let partial = if run.partial { ", **partial**" } else { "" };
            format!(
                "{} ({}, {}{partial})",
                escape_name(&run.label),
                escape_name(&run.started_at),
                escape_name(&run.hostname)
            )
        })
        .collect();
    writeln!(
        out,
        "**Compared:** {}; baseline **{}**",
        runs.join(" · "),
        escape_name(&comparison.baseline)
    )?;
    if !comparison.tests.is_empty() {
        writeln!(out)?;
        write_table(comparison, out)?;
    }
    let mut notes: Vec<String> = Vec::new();
    for test in &comparison.tests {
        for note in &test.notes {
            notes.push(format!("{}: {}", escape_name(&test.name), escape(note)));
        }
    }
    notes.extend(comparison.notes.iter().map(|note| escape(note)));
    if !notes.is_empty() {
        writeln!(out)?;
        for note in notes {
            writeln!(out, "- **Note:** {note}")?;
        }
    }
    if !comparison.unmatched.is_empty() {
        writeln!(out)?;
        writeln!(out, "Not in every run (not compared):")?;
        writeln!(out)?;
        for test in &comparison.unmatched {
            writeln!(
                out,
                "- {}: in {}; missing from {}",
                escape_name(&test.name),
                join_shown(&test.present_in, escape_name),
                join_shown(&test.missing_from, escape_name)
            )?;
        }
    }
    if let Some(cost) = &comparison.cost {
        writeln!(out)?;
        write_cost(cost, out)?;
    }
    writeln!(out)?;
    writeln!(out, "{}", LEGEND.replace('"', "*"))
}

fn write_table(comparison: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let header = header(comparison);
    let runs = comparison.runs.len();
    let cells: Vec<String> = header.iter().map(|cell| escape(cell)).collect();
    writeln!(out, "| {} |", cells.join(" | "))?;
    let mut rule = vec![":--", ":--"];
    rule.extend(std::iter::repeat_n("--:", runs));
    for _ in 1..runs {
        rule.extend(["--:", "--:", ":--"]);
    }
    writeln!(out, "|{}|", rule.join("|"))?;
    let verdicts = has_verdicts(comparison);
    for test in &comparison.tests {
        for (line, metric) in Metric::ALL.iter().enumerate() {
            let mut row = vec![
                if line == 0 {
                    format!("{} ({})", escape_name(&test.name), test.direction.name())
                } else {
                    String::new()
                },
                metric.name().to_string(),
            ];
            for figures in &test.figures {
                row.push(value_cell(*metric, figures.value(*metric)));
            }
            for changes in &test.changes {
                match changes.metric(*metric) {
                    Some(change) => row.extend([
                        ratio_cell(change.ratio),
                        difference_cell(*metric, change.difference),
                        outcome_cell(change.outcome).to_string(),
                    ]),
                    None => row.extend([String::new(), String::new(), String::new()]),
                }
            }
            writeln!(out, "| {} |", row.join(" | "))?;
        }
        if verdicts {
            let mut row = vec![String::new(), "verdict".to_string()];
            for figures in &test.figures {
                row.push(figures.verdict.map_or("", |v| v.name()).to_string());
            }
            row.extend(std::iter::repeat_n(String::new(), 3 * (runs - 1)));
            writeln!(out, "| {} |", row.join(" | "))?;
        }
    }
    Ok(())
}

fn write_cost(cost: &CostReport, out: &mut dyn Write) -> io::Result<()> {
    let target = cost.target_bytes_per_second.map(format_rate);
    let mut header = vec![
        "run".to_string(),
        "price".into(),
        "ports".into(),
        "peak MB/s".into(),
        "per GB/s".into(),
        "peak IOPS".into(),
        "per 1,000 IOPS".into(),
        "MB/s per port".into(),
    ];
    if let Some(target) = &target {
        header.extend([
            format!("ports for {target}"),
            format!("units for {target}"),
            format!("price for {target}"),
        ]);
    }
    writeln!(out, "| {} |", header.join(" | "))?;
    let mut rule = vec![":--"];
    rule.extend(std::iter::repeat_n("--:", header.len() - 1));
    writeln!(out, "|{}|", rule.join("|"))?;
    let optional = |value: Option<String>| value.unwrap_or_else(|| "—".into());
    for run in &cost.runs {
        let mut row = vec![
            escape_name(&run.run),
            optional(run.price.map(money)),
            optional(run.ports.map(|ports| ports.to_string())),
            format!(
                "{:.1} ({})",
                run.peak_bytes_per_second / 1e6,
                escape_name(&run.peak_bytes_per_second_test)
            ),
            optional(run.price_per_gigabyte_per_second.map(money)),
            format!(
                "{} ({})",
                format_count(run.peak_iops),
                escape_name(&run.peak_iops_test)
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
        writeln!(out, "| {} |", row.join(" | "))?;
    }
    writeln!(out)?;
    writeln!(out, "{}", escape(&super::compare_text::cost_basis(cost)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareOptions, LabeledRun, compare};
    use crate::support::fixtures::mixed;

    #[test]
    fn a_row_per_metric_and_escaped_names() {
        let a = mixed().clone();
        let mut b = mixed().clone();
        let mut c = mixed().clone();
        for result in [&mut b, &mut c] {
            result.tests[0].name = "mixed | piped".into();
        }
        let mut a_renamed = a.clone();
        a_renamed.tests[0].name = "mixed | piped".into();
        let comparison = compare(
            &[
                LabeledRun::new("a", &a_renamed),
                LabeledRun::new("b", &b),
                LabeledRun::new("c", &c),
            ],
            &CompareOptions::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        write_compare_markdown(&comparison, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("**Compared:** a ("), "{text}");
        assert_eq!(
            lines[2],
            "| test |  | a | b | c | b/a | b − a | b vs a | c/a | c − a | c vs a |"
        );
        assert_eq!(lines[3], "|:--|:--|--:|--:|--:|--:|--:|:--|--:|--:|:--|");
        assert!(
            lines[4].starts_with("| mixed \\| piped (read+write) | MB/s | "),
            "{}",
            lines[4]
        );
        assert!(lines[5].starts_with("|  | IOPS | "), "{}", lines[5]);
        // Two tests, four metrics each, eleven cells per line.
        let rows: Vec<&&str> = lines
            .iter()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| test"))
            .collect();
        assert_eq!(rows.len(), 8, "{text}");
        assert!(
            rows.iter().all(|row| row.matches(" | ").count() == 10),
            "{text}"
        );
    }
}
