//! A compact Markdown summary (`--md`) for pasting into tickets and chats: the host and every
//! target in a short list, then one table row per test with MB/s, IOPS, mean and p99 latency
//! and CPU, and for each job that verified its data what was checked and the first bad blocks.
//!
//! ```markdown
//! - **Host:** vm: Intel(R) Xeon(R) Processor, 2 CPUs, 23.5 GiB RAM, Linux 6.18.44
//! - **Target:** `f.dat`: file, 16 MiB, ext4 on vda, created by iopath
//! - **Run:** iopath 0.1.0, 2026-11-30T08:23:05Z
//!
//! | test | MB/s | IOPS | mean | p99 | CPU % |
//! |:--|--:|--:|--:|--:|--:|
//! | 50% read 100% random 4k QD4 | 117.0 | 28,564 | 138.6 µs | 602.1 µs | 14.5 |
//! ```
//!
//! The figures are those of iopath's terminal table: a mixed test shows reads and writes
//! together, MB = 10^6 bytes, latency from submission to completion, CPU = iopath's user and
//! system time as a share of all the host's CPUs.
//!
//! ```no_run
//! use iopath::report::{json::read_json, markdown::write_markdown, model::Report};
//! let result = read_json(&std::fs::read_to_string("out.json")?)?;
//! write_markdown(Report::of_run(&result).run(), &mut std::io::stdout())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::alike::alike_line;
use super::model::RunReport;
use super::verification;
use crate::result::target_groups::group;
use crate::result::{DirectionResult, RunResult, StopReason, TargetInfo, TargetKind, TestResult};
use crate::text::escape::{escape_controls, needs_escape};
use crate::text::shorten::{SHOWN_CHARS, shorten};
use crate::units::{format_count, format_latency};
use std::io::{self, Write};

/// Writes the summary of `report`'s run (without the table when the run has no test, as
/// after `iopath net`).
pub fn write_markdown(report: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()> {
    let result = report.result;
    let host = &result.host;
    writeln!(
        out,
        "- **Host:** {}: {}, {} CPUs, {} RAM, Linux {}",
        escape(&host.hostname),
        escape(&host.cpu_model),
        host.cpu_count,
        binary_size(host.memory_bytes),
        escape(&host.kernel)
    )?;
    // Targets alike (the files of a job on one filesystem): the first, then one line.
    for entry in group(&result.targets, &[]).0 {
        writeln!(out, "- **Target:** {}", describe_target(&entry.first))?;
        if let Some(alike) = &entry.alike {
            let line = alike_line(alike, entry.first.size_bytes, &code);
            writeln!(out, "- **Targets:** {line}")?;
        }
    }
    let mut run = format!(
        "iopath {}, {}",
        escape(&result.iopath_version),
        result.started_at
    );
    if let Some(label) = &result.label {
        run.push_str(&format!(", label {}", escape_name(label)));
    }
    if result.partial {
        run.push_str(", **stopped early: partial results**");
    }
    writeln!(out, "- **Run:** {run}")?;
    if result.tests.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "| test | MB/s | IOPS | mean | p99 | CPU % |")?;
    writeln!(out, "|:--|--:|--:|--:|--:|--:|")?;
    for test in &result.tests {
        let figures = main_figures(test);
        writeln!(
            out,
            "| {} | {:.1} | {} | {} | {} | {:.1} |",
            test_label(test),
            figures.bytes_per_second / 1e6,
            format_count(figures.iops),
            format_latency(figures.latency.mean_ns),
            format_latency(figures.latency.percentile("99") as f64),
            test.cpu.process_percent_of_host()
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "MB/s = 10^6 bytes/s; latency = submission to completion; CPU % = iopath's user+system share of all {} CPUs.",
        host.cpu_count
    )?;
    write_verification(result, out)?;
    write_confirmations(result, out)
}

/// Bad blocks listed per job; the rest are counted.
const LISTED_BAD_BLOCKS: usize = 3;

/// One line per job that verified its data (docs/verify.md): what was checked and how many
/// blocks were bad, then the first bad blocks with their kind and offset.
fn write_verification(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let verified = result
        .tests
        .iter()
        .flat_map(|test| &test.jobs)
        .filter_map(|job| Some((job, job.verification.as_ref()?)));
    let mut first = true;
    for (job, found) in verified {
        if std::mem::take(&mut first) {
            writeln!(out)?;
        }
        let bad = if found.mismatch_count > 0 {
            " **BAD DATA**"
        } else {
            ""
        };
        writeln!(
            out,
            "- **{}**:{bad} {}",
            escape_name(&job.name),
            escape(&verification::summary(found))
        )?;
        for mismatch in found.mismatches.iter().take(LISTED_BAD_BLOCKS) {
            writeln!(
                out,
                "  - {} {}",
                code(&mismatch.target),
                escape(&verification::mismatch(mismatch, |text| text.to_string()))
            )?;
        }
        let more = found.mismatch_count - found.mismatches.len().min(LISTED_BAD_BLOCKS) as u64;
        if more > 0 {
            writeln!(out, "  - … and {more} more bad blocks")?;
        }
    }
    Ok(())
}

/// One line per test whose verdict was put to an experiment (`--confirm`).
fn write_confirmations(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let confirmed = result.tests.iter().filter_map(|test| {
        let analysis = test.analysis.as_ref()?;
        let confirmation = analysis.confirmation.as_ref()?;
        Some((test, analysis.verdict, confirmation))
    });
    let mut first = true;
    for (test, verdict, confirmation) in confirmed {
        if std::mem::take(&mut first) {
            writeln!(out)?;
        }
        writeln!(
            out,
            "- **{}**: {}; {}",
            test_label(test),
            verdict.name(),
            escape(&super::confirmation::confirmation_line(confirmation))
        )?;
    }
    Ok(())
}

/// Reads and writes together for a mixed test, else the one direction it did.
fn main_figures(test: &TestResult) -> &DirectionResult {
    test.main_figures()
}

/// The test's name, with how it ended and its errors when that matters.
fn test_label(test: &TestResult) -> String {
    let mut label = escape_name(&test.name);
    match test.stop_reason {
        StopReason::Completed => {}
        StopReason::Interrupted => label.push_str(" (partial)"),
        StopReason::Error => label.push_str(" (stopped by an error)"),
    }
    if test.errors.count > 0 {
        label.push_str(&format!(" ({} I/O errors)", test.errors.count));
    }
    label
}

fn describe_target(target: &TargetInfo) -> String {
    let kind = target.kind.description();
    let mut parts = vec![
        format!("{}: {kind}", code(&target.path)),
        binary_size(target.size_bytes),
    ];
    match (&target.filesystem, &target.device) {
        (Some(filesystem), Some(device)) if target.kind == TargetKind::File => {
            parts.push(format!("{} on {}", escape(filesystem), escape(device)))
        }
        (Some(filesystem), _) => parts.push(escape(filesystem)),
        (None, Some(device)) if target.kind == TargetKind::File => {
            parts.push(format!("on {}", escape(device)))
        }
        _ => {}
    }
    match target.rotational {
        Some(true) => parts.push("rotational".into()),
        Some(false) => parts.push("non-rotational".into()),
        None => {}
    }
    if target.created_by_iopath {
        parts.push("created by iopath".into());
    }
    parts.join(", ")
}

/// `text` as inline code: backquotes turned into quotes, control characters made visible.
fn code(text: &str) -> String {
    format!("`{}`", escape_controls(text).replace('`', "'"))
}

/// Bytes in the largest binary unit that keeps one decimal (`16 MiB`, `23.5 GiB`).
fn binary_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = "B";
    for name in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = name;
    }
    let text = format!("{value:.1}");
    format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
}

/// Text safe inside a table cell or list item: pipes and markup characters escaped, line
/// breaks turned into spaces, other control characters made visible (`\\u{1b}`, which Markdown
/// shows as `\u{1b}`).
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '\\' => {
                out.push('\\');
                out.push(character);
            }
            '\n' | '\r' => out.push(' '),
            control if needs_escape(control) => {
                out.push('\\');
                out.push_str(&escape_controls(control.encode_utf8(&mut [0; 4])));
            }
            other => out.push(other),
        }
    }
    out
}

/// A label or a name for a table cell: [`escape`]d, shortened to [`SHOWN_CHARS`] characters.
pub(crate) fn escape_name(text: &str) -> String {
    escape(&shorten(text, SHOWN_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Report;
    use crate::support::fixtures::mixed;

    fn markdown() -> String {
        let mut out = Vec::new();
        write_markdown(Report::of_run(mixed()).run(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn host_target_and_one_row_per_test() {
        let text = markdown();
        let result = mixed();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("- **Host:** "));
        assert!(lines[0].contains(&format!("{} CPUs", result.host.cpu_count)));
        assert!(lines[1].starts_with("- **Target:** `"));
        assert!(lines[1].contains("f.dat`: file, 16 MiB"));
        assert!(lines[1].contains("created by iopath"));
        assert!(lines[2].starts_with("- **Run:** iopath "));
        let rows: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.starts_with('|'))
            .collect();
        assert_eq!(rows.len(), 2 + result.tests.len());
        assert_eq!(rows[0], "| test | MB/s | IOPS | mean | p99 | CPU % |");
        for (row, test) in rows[2..].iter().zip(&result.tests) {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 6, "{row}");
            assert_eq!(cells[0], test.name);
            let figures = main_figures(test);
            assert_eq!(cells[1], format!("{:.1}", figures.bytes_per_second / 1e6));
            assert_eq!(cells[2], format_count(figures.iops));
            assert_eq!(cells[3], format_latency(figures.latency.mean_ns));
            assert_eq!(
                cells[4],
                format_latency(figures.latency.percentile("99") as f64)
            );
        }
        assert!(text.ends_with("CPUs.\n"));
    }

    #[test]
    fn verifying_jobs_show_their_checks_and_first_bad_blocks() {
        use crate::result::{MismatchKind, VerificationResult, VerifyKind, VerifyMismatch};
        let mut result = mixed().clone();
        let bad = |offset: u64| VerifyMismatch {
            target: "f|.dat".into(),
            offset,
            length: 4096,
            kind: MismatchKind::Checksum,
            expected: "crc32c 1a2b3c4d".into(),
            found: "crc32c 00000000".into(),
            written_by_run: Some("667dfe27783aff36".into()),
            rank: None,
        };
        result.tests[0].jobs[0].verification = Some(VerificationResult {
            kind: VerifyKind::Crc32c,
            run_id: "0123456789abcdef".into(),
            blocks_checked: 256,
            bytes_checked: 1 << 20,
            mismatch_count: 20,
            mismatches: (0..16).map(|block| bad(block * 8192)).collect(),
            ..VerificationResult::default()
        });
        let mut out = Vec::new();
        write_markdown(Report::of_run(&result).run(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let job = escape_name(&result.tests[0].jobs[0].name);
        assert!(
            text.contains(&format!(
                "- **{job}**: **BAD DATA** verify crc32c: 256 blocks checked (1m), 20 bad; run \
                 0123456789abcdef\n  - `f|.dat` at offset 0 (4096 bytes): checksum: expected \
                 crc32c 1a2b3c4d, found crc32c 00000000 \\[block written by run \
                 667dfe27783aff36\\]\n  - `f|.dat` at offset 8192 "
            )),
            "{text}"
        );
        assert!(text.contains("  - … and 17 more bad blocks\n"), "{text}");
        // Without verification, no such lines.
        assert!(!markdown().contains("blocks checked"));
    }

    #[test]
    fn cells_cannot_break_the_table() {
        assert_eq!(escape("a|b_c\nd"), "a\\|b\\_c d");
        assert_eq!(escape("a\u{1b}[2J"), "a\\\\u{1b}\\[2J");
        assert_eq!(escape_name(&"x".repeat(500)).chars().count(), 201);
        assert_eq!(binary_size(16 << 20), "16 MiB");
        assert_eq!(binary_size(25_276_502_016), "23.5 GiB");
        assert_eq!(binary_size(512), "512 B");
    }
}
