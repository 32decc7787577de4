//! The terminal table: one row per test (plus read and write rows for mixed tests) with MB/s
//! (10^6 B/s) and MiB/s, IOPS, mean / p99 / p99.9 / max latency, iopath's CPU share of the host
//! and the busiest core's use. When the analysis ran: "± x %" (95 % confidence interval of the
//! per-second rates) on MB/s and IOPS, a verdict column, and below the table one evidence line
//! per test with its trust notes.

use super::model::RunReport;
use super::verification;
use crate::result::{
    ClusterResult, ConfidenceInterval, DirectionConfidence, DirectionResult, FigureDirection,
    LatencySummary, LatencyTargetResult, RunResult, StopReason, TestResult, VerificationResult,
};
use crate::text::escape::escape_controls;
use crate::text::shown;
use crate::units::{format_count, format_latency};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};
use std::io::Write;

/// `value ± x %` when a confidence interval is known.
fn with_interval(value: String, interval: Option<&ConfidenceInterval>) -> String {
    match interval {
        Some(interval) => format!("{value} ± {:.1} %", interval.half_width_percent),
        None => value,
    }
}

fn direction_cells(
    label: String,
    direction: &DirectionResult,
    test: &TestResult,
    cpu: bool,
    confidence: Option<&DirectionConfidence>,
) -> Vec<String> {
    let latency = &direction.latency;
    let (cpu_share, busiest) = if cpu {
        (
            format!("{:.1}", test.cpu.process_percent_of_host()),
            format!("{:.0}", test.cpu.busiest_core_percent()),
        )
    } else {
        (String::new(), String::new())
    };
    vec![
        label,
        with_interval(
            format!("{:.1}", direction.bytes_per_second / 1e6),
            confidence.and_then(|c| c.bytes_per_second.as_ref()),
        ),
        format!("{:.1}", direction.bytes_per_second / 1048576.0),
        with_interval(
            format_count(direction.iops),
            confidence.and_then(|c| c.iops.as_ref()),
        ),
        format_latency(latency.mean_ns),
        format_latency(latency.percentile("99") as f64),
        format_latency(latency.percentile("99.9") as f64),
        format_latency(latency.max_ns as f64),
        cpu_share,
        busiest,
    ]
}

/// A row of latency figures only (a part of the row above's latency), `label` first.
fn latency_cells(label: &str, latency: &LatencySummary) -> Vec<String> {
    vec![
        label.to_string(),
        String::new(),
        String::new(),
        String::new(),
        format_latency(latency.mean_ns),
        format_latency(latency.percentile("99") as f64),
        format_latency(latency.percentile("99.9") as f64),
        format_latency(latency.max_ns as f64),
        String::new(),
        String::new(),
    ]
}

/// Builds the table of every test of `result`.
pub fn results_table(result: &RunResult) -> Table {
    let show_verdict = result.tests.iter().any(|test| test.analysis.is_some());
    let mut header = vec![
        "test", "MB/s", "MiB/s", "IOPS", "mean", "p99", "p99.9", "max", "CPU %", "core %",
    ];
    if show_verdict {
        header.push("verdict");
    }
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    for test in &result.tests {
        let mut name = shown(&test.name).into_owned();
        if test.stop_reason != StopReason::Completed {
            name.push_str(match test.stop_reason {
                StopReason::Interrupted => " (partial)",
                _ => " (error)",
            });
        }
        let direction = test.main_direction();
        let mixed = direction == FigureDirection::Total;
        let main = test.figures(direction);
        let confidence = test.analysis.as_ref().map(|a| &a.confidence);
        let main_confidence = confidence.map(|c| c.direction(direction));
        let verdict_cell = |row: &mut Vec<String>, verdict: Option<&str>| {
            if show_verdict {
                row.push(verdict.unwrap_or("").to_string());
            }
        };
        let mut row = direction_cells(name, main, test, true, main_confidence);
        let verdict = test
            .analysis
            .as_ref()
            .map(super::confirmation::verdict_cell);
        verdict_cell(&mut row, verdict.as_deref());
        table.add_row(row);
        let mut rows = Vec::new();
        if let Some(split) = &main.split {
            rows.push(latency_cells("  slat", &split.submission));
            rows.push(latency_cells("  clat", &split.completion));
        }
        if test.jobs.len() > 1 {
            for job in &test.jobs {
                rows.push(direction_cells(
                    format!("  {}", shown(&job.name)),
                    &job.total,
                    test,
                    false,
                    None,
                ));
            }
        } else {
            if mixed {
                rows.push(direction_cells(
                    "  read".into(),
                    &test.read,
                    test,
                    false,
                    confidence.map(|c| &c.read),
                ));
                rows.push(direction_cells(
                    "  write".into(),
                    &test.write,
                    test,
                    false,
                    confidence.map(|c| &c.write),
                ));
            }
            // Trims beside other I/O (a trimwrite) get their own row.
            if direction != FigureDirection::Trim && test.trim.io_count > 0 {
                rows.push(direction_cells(
                    "  trim".into(),
                    &test.trim,
                    test,
                    false,
                    confidence.map(|c| &c.trim),
                ));
            }
        }
        for mut row in rows {
            verdict_cell(&mut row, None);
            table.add_row(row);
        }
    }
    for index in 1..10 {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// Writes the table and every warning and error note of `report`'s run; names from the result
/// are shown as [`shown`] makes them, other text with control characters escaped.
pub fn write_text(report: &RunReport<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    let result = report.result;
    writeln!(out, "{}", results_table(result))?;
    writeln!(
        out,
        "MB/s = 10^6 bytes/s; latency = submission to completion; CPU % = iopath's user+system share of all {} CPUs; core % = busiest core (all processes).",
        result
            .tests
            .first()
            .filter(|_| result.cluster.is_some())
            .map_or(result.host.cpu_count, |test| test.cpu.cpu_count)
    )?;
    if result
        .tests
        .iter()
        .any(|test| test.figures(test.main_direction()).split.is_some())
    {
        writeln!(
            out,
            "slat = issue to the return of the call that handed the I/O to the kernel; clat = from then to completion (slat + clat = latency)."
        )?;
    }
    write_verdicts(result, out)?;
    if let Some(cluster) = &result.cluster {
        write_clients(report, cluster, out)?;
    }
    for test in &result.tests {
        if test.errors.count > 0 {
            writeln!(
                out,
                "{}: {} I/O errors",
                shown(&test.name),
                test.errors.count
            )?;
            if !test.errors.by_kind.is_empty() {
                writeln!(out, "  by kind: {}", error_kinds(&test.errors.by_kind))?;
            }
            for error in &test.errors.first {
                writeln!(
                    out,
                    "  {} {:?} at offset {} ({} bytes): {}",
                    escape_controls(&error.target),
                    error.direction,
                    error.offset,
                    error.length,
                    escape_controls(&error.error)
                )?;
            }
        }
    }
    for job in result.tests.iter().flat_map(|test| &test.jobs) {
        if let Some(verification) = &job.verification {
            write_verification(&job.name, verification, out)?;
        }
        if let Some(search) = &job.latency_target {
            writeln!(out, "{}", latency_target_line(&job.name, search))?;
        }
    }
    for warning in &result.warnings {
        writeln!(out, "warning: {}", escape_controls(warning))?;
    }
    if result.partial {
        writeln!(out, "partial: the run stopped before every test was done")?;
    }
    Ok(())
}

/// A multi-client run: who took part, then each test's figures host by host.
fn write_clients(
    report: &RunReport<'_>,
    cluster: &ClusterResult,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let hosts = &report.hosts;
    let widest_offset = cluster
        .ranks
        .iter()
        .map(|rank| rank.clock_offset_ns.unsigned_abs() + rank.clock_uncertainty_ns)
        .max()
        .unwrap_or(0);
    writeln!(
        out,
        "clients: {} ranks on {} host{} ({}); clocks aligned within {:.0} µs",
        cluster.size,
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        escape_controls(&cluster.launcher),
        widest_offset as f64 / 1e3
    )?;
    for (index, test) in report.result.tests.iter().enumerate() {
        writeln!(out, "{} by host:", shown(&test.name))?;
        for host in hosts {
            let Some(own) = host.test(index) else {
                continue;
            };
            writeln!(
                out,
                "  {} (rank {}): {:.0} IOPS, {:.1} MB/s, p99 {:.1} µs, busiest core {:.0} %",
                escape_controls(host.name),
                host.rank_list(),
                own.total.iops,
                own.total.bytes_per_second / 1e6,
                own.total.latency.percentile("99") as f64 / 1e3,
                own.cpu.busiest_core_percent()
            )?;
        }
    }
    Ok(())
}

/// What a job's verification found: one summary line, then each kept bad block.
fn write_verification(
    name: &str,
    found: &VerificationResult,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "{}: {}", shown(name), verification::summary(found))?;
    for bad in &found.mismatches {
        writeln!(
            out,
            "  BAD {} {}",
            escape_controls(&bad.target),
            verification::mismatch(bad, |text| escape_controls(text).into_owned())
        )?;
    }
    let more = verification::more_bad_blocks(found);
    if more > 0 {
        writeln!(out, "  … and {more} more bad blocks")?;
    }
    Ok(())
}

/// What a job's latency-target search found, in one line.
fn latency_target_line(name: &str, search: &LatencyTargetResult) -> String {
    let depths: Vec<String> = search.depths.iter().map(u32::to_string).collect();
    let found = if search.met {
        format!("depth {} found", depths.join(", "))
    } else {
        format!("not met, even at depth {}", depths.join(", "))
    };
    format!(
        "{}: latency target {} for {} % of the I/Os of each {} window: {found}, {} IOPS",
        shown(name),
        format_latency(search.target_ns as f64),
        search.percentile,
        format_latency(search.window_ns as f64),
        format_count(search.iops)
    )
}

/// One evidence line per analysed test (`SEQ1M Q8 read: link-bound — 117 MB/s = 98 % of
/// 1GbE (…)`), each followed by its trust notes.
fn write_verdicts(result: &RunResult, out: &mut dyn Write) -> std::io::Result<()> {
    if result.tests.iter().any(|test| test.analysis.is_some()) {
        writeln!(
            out,
            "± = 95 % confidence interval of the per-interval rates (1 s; 250 ms in runs under 10 s) (Student t); verdicts in docs/verdict.md."
        )?;
        if result.tests.iter().any(|test| {
            test.analysis
                .as_ref()
                .and_then(|analysis| analysis.confirmation.as_ref())
                .is_some_and(|c| c.outcome == crate::result::ConfirmationOutcome::Refuted)
        }) {
            writeln!(
                out,
                "a→b in the verdict column: the confirming experiment refuted verdict a and points to b."
            )?;
        }
    }
    for test in &result.tests {
        let Some(analysis) = &test.analysis else {
            continue;
        };
        writeln!(
            out,
            "{}: {} — {}",
            shown(&test.name),
            analysis.verdict.name(),
            escape_controls(&analysis.evidence)
        )?;
        if let Some(confirmation) = &analysis.confirmation {
            let line = super::confirmation::confirmation_line(confirmation);
            writeln!(out, "  {}", escape_controls(&line))?;
        }
        for line in super::server::server_lines(analysis) {
            writeln!(out, "  {line}")?;
        }
        for note in &analysis.trust_notes {
            writeln!(out, "  note: {}", escape_controls(&note.message))?;
        }
    }
    Ok(())
}

/// Errors by kind and errno on one line: `write ENOSPC 3 (2 went on), read EIO 1`.
fn error_kinds(counts: &[crate::result::ErrorCount]) -> String {
    counts
        .iter()
        .map(|count| {
            let went_on = match count.continued {
                0 => String::new(),
                all if all == count.count => " (all went on)".to_string(),
                some => format!(" ({some} went on)"),
            };
            format!(
                "{} {} {}{went_on}",
                count.kind.name(),
                escape_controls(&count.name),
                count.count
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_target_search_reads_in_one_line() {
        let search = LatencyTargetResult {
            target_ns: 500_000,
            window_ns: 1_000_000_000,
            percentile: 99.9,
            depths: vec![12, 16],
            met: true,
            iops: 43_210.0,
        };
        let line = latency_target_line("device", &search);
        assert!(line.starts_with("device: latency target 500"), "{line}");
        assert!(
            line.contains("99.9 %") && line.contains("depth 12, 16 found"),
            "{line}"
        );
        let missed = LatencyTargetResult {
            met: false,
            depths: vec![1],
            ..search
        };
        assert!(latency_target_line("d", &missed).contains("not met, even at depth 1"));
    }
}
