//! Iometer-style results CSV (`--csv FILE`), written from a run's report model
//! ([`RunReport`]), for the
//! spreadsheets and scripts that read Iometer's `results.csv`.
//!
//! One header line, then per test one `ALL` row (every job of the test together), for a
//! multi-client run one `MANAGER` row per host (its clients together), then one `WORKER` row
//! per job. The columns are the subset of Iometer's result columns that
//! iopath measures, in Iometer's order and with Iometer's names and units (rates per second,
//! MB = 10^6 bytes for "(Decimal)" and 2^20 bytes for "(Binary)", response times in
//! milliseconds), followed by columns Iometer does not have: the 99th percentile response
//! time, and the trims (discards) — their IOPS, MB/s of discarded ranges, response times,
//! errors, bytes and count; Iometer's totals are reads and writes. [`COLUMNS`] lists them;
//! docs/reports.md says where each value comes from.
//!
//! ```no_run
//! use iopath::report::{csv::write_iometer_csv, json::read_json, model::Report};
//! let result = read_json(&std::fs::read_to_string("out.json")?)?;
//! write_iometer_csv(Report::of_run(&result).run(), &mut std::fs::File::create("results.csv")?)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::model::{HostReport, RunReport};
use crate::result::{CpuResult, DirectionResult, ErrorSummary, TestResult};
use std::collections::BTreeSet;
use std::io::{self, Write};

/// The header: Iometer's column names in Iometer's order, then iopath's additions.
pub const COLUMNS: [&str; 39] = [
    "Target Type",
    "Target Name",
    "Access Specification Name",
    "# Managers",
    "# Workers",
    "# Disks",
    "IOps",
    "Read IOps",
    "Write IOps",
    "MBps (Binary)",
    "Read MBps (Binary)",
    "Write MBps (Binary)",
    "MBps (Decimal)",
    "Read MBps (Decimal)",
    "Write MBps (Decimal)",
    "Transactions per Second",
    "Average Response Time",
    "Average Read Response Time",
    "Average Write Response Time",
    "Maximum Response Time",
    "Maximum Read Response Time",
    "Maximum Write Response Time",
    "Errors",
    "Read Errors",
    "Write Errors",
    "Bytes Read",
    "Bytes Written",
    "Read I/Os",
    "Write I/Os",
    "Queue Depth",
    "% CPU Utilization",
    "99th Percentile Response Time",
    "Trim IOps",
    "Trim MBps (Decimal)",
    "Average Trim Response Time",
    "Maximum Trim Response Time",
    "Trim Errors",
    "Bytes Trimmed",
    "Trim I/Os",
];

/// Writes the header and one `ALL` row per test and one `WORKER` row per job of `report`'s
/// run.
pub fn write_iometer_csv(report: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()> {
    let result = report.result;
    write_row(out, COLUMNS.iter().map(|name| name.to_string()))?;
    let managers = if result.cluster.is_some() {
        report.hosts.len()
    } else {
        1
    };
    for (index, test) in result.tests.iter().enumerate() {
        write_row(out, test_row("ALL", "All", test, managers))?;
        if result.cluster.is_some() {
            write_manager_rows(&report.hosts, index, out)?;
        }
        for job in &test.jobs {
            let disks: BTreeSet<usize> = job.target_indexes.iter().copied().collect();
            write_row(
                out,
                row(
                    Figures {
                        kind: "WORKER",
                        target: &job.name,
                        test,
                        workers: job.worker_threads,
                        disks: disks.len(),
                        read: &job.read,
                        write: &job.write,
                        trim: &job.trim,
                        total: &job.total,
                        errors: &job.errors,
                        queue_depth: Some(job.queue_depth_per_worker),
                        managers: 1,
                    },
                    None,
                ),
            )?;
        }
    }
    Ok(())
}

/// A multi-client run: one `MANAGER` row per host for test `index` (Iometer's manager rows),
/// with that host's clients merged and its own CPU.
fn write_manager_rows(
    hosts: &[HostReport<'_>],
    index: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    for host in hosts {
        if let Some(test) = host.test(index) {
            write_row(out, test_row("MANAGER", host.name, test, 1))?;
        }
    }
    Ok(())
}

/// The row of a whole test (`ALL`) or of one host's part of it (`MANAGER`): every job
/// together, with the test's CPU; a queue depth only when every job has the same.
fn test_row(kind: &str, target: &str, test: &TestResult, managers: usize) -> Vec<String> {
    let disks: BTreeSet<usize> = test
        .jobs
        .iter()
        .flat_map(|job| job.target_indexes.iter().copied())
        .collect();
    let depths: BTreeSet<u32> = test.jobs.iter().map(|j| j.queue_depth_per_worker).collect();
    row(
        Figures {
            kind,
            target,
            test,
            workers: test.jobs.iter().map(|j| j.worker_threads).sum(),
            disks: disks.len(),
            read: &test.read,
            write: &test.write,
            trim: &test.trim,
            total: &test.total,
            errors: &test.errors,
            queue_depth: (depths.len() == 1)
                .then(|| depths.first().copied())
                .flatten(),
            managers,
        },
        Some(&test.cpu),
    )
}

/// What one row is made of.
struct Figures<'a> {
    kind: &'a str,
    target: &'a str,
    test: &'a TestResult,
    workers: u32,
    disks: usize,
    read: &'a DirectionResult,
    write: &'a DirectionResult,
    trim: &'a DirectionResult,
    total: &'a DirectionResult,
    errors: &'a ErrorSummary,
    queue_depth: Option<u32>,
    managers: usize,
}

fn row(figures: Figures<'_>, cpu: Option<&CpuResult>) -> Vec<String> {
    let decimal = |value: f64| format!("{value:.6}");
    let binary_mb = |d: &DirectionResult| decimal(d.bytes_per_second / 1_048_576.0);
    let decimal_mb = |d: &DirectionResult| decimal(d.bytes_per_second / 1e6);
    let mean_ms = |d: &DirectionResult| decimal(d.latency.mean_ns / 1e6);
    let max_ms = |d: &DirectionResult| decimal(d.latency.max_ns as f64 / 1e6);
    vec![
        figures.kind.to_string(),
        figures.target.to_string(),
        figures.test.name.clone(),
        figures.managers.to_string(),
        figures.workers.to_string(),
        figures.disks.to_string(),
        decimal(figures.total.iops),
        decimal(figures.read.iops),
        decimal(figures.write.iops),
        binary_mb(figures.total),
        binary_mb(figures.read),
        binary_mb(figures.write),
        decimal_mb(figures.total),
        decimal_mb(figures.read),
        decimal_mb(figures.write),
        decimal(figures.total.iops),
        mean_ms(figures.total),
        mean_ms(figures.read),
        mean_ms(figures.write),
        max_ms(figures.total),
        max_ms(figures.read),
        max_ms(figures.write),
        figures.errors.count.to_string(),
        figures.read.error_count.to_string(),
        figures.write.error_count.to_string(),
        figures.read.bytes.to_string(),
        figures.write.bytes.to_string(),
        figures.read.io_count.to_string(),
        figures.write.io_count.to_string(),
        figures
            .queue_depth
            .map(|d| d.to_string())
            .unwrap_or_default(),
        cpu.and_then(host_cpu_percent)
            .map(decimal)
            .unwrap_or_default(),
        decimal(figures.total.latency.percentile("99") as f64 / 1e6),
        decimal(figures.trim.iops),
        decimal_mb(figures.trim),
        mean_ms(figures.trim),
        max_ms(figures.trim),
        figures.trim.error_count.to_string(),
        figures.trim.bytes.to_string(),
        figures.trim.io_count.to_string(),
    ]
}

/// Iometer's "% CPU Utilization": how busy the host's CPUs were (every process), averaged
/// over all of them; `None` when /proc/stat gave nothing.
fn host_cpu_percent(cpu: &CpuResult) -> Option<f64> {
    let total: f64 = cpu.cores.iter().map(|core| core.total_ns as f64).sum();
    let busy: f64 = cpu.cores.iter().map(|core| core.busy_ns as f64).sum();
    (total > 0.0).then(|| busy / total * 100.0)
}

/// One CSV line (RFC 4180: a field with a comma, quote or line break is quoted).
fn write_row(out: &mut dyn Write, fields: impl IntoIterator<Item = String>) -> io::Result<()> {
    let line: Vec<String> = fields
        .into_iter()
        .map(|field| {
            if field.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", field.replace('"', "\"\""))
            } else {
                field
            }
        })
        .collect();
    write!(out, "{}\r\n", line.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Report;
    use crate::support::fixtures::mixed;

    fn table() -> Vec<Vec<String>> {
        let mut out = Vec::new();
        write_iometer_csv(Report::of_run(mixed()).run(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with("\r\n"));
        text.split("\r\n")
            .filter(|line| !line.is_empty())
            .map(|line| line.split(',').map(str::to_string).collect())
            .collect()
    }

    fn number(row: &[String], column: &str) -> f64 {
        let index = COLUMNS.iter().position(|c| *c == column).unwrap();
        row[index].parse().unwrap()
    }

    #[test]
    fn one_all_row_per_test_and_one_worker_row_per_job() {
        let rows = table();
        assert_eq!(rows[0], COLUMNS);
        let kinds: Vec<(&str, &str, &str)> = rows[1..]
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("ALL", "All", "mixed"),
                ("WORKER", "mixed", "mixed"),
                ("ALL", "All", "pair"),
                ("WORKER", "reader", "pair"),
                ("WORKER", "writer", "pair"),
            ]
        );
        assert!(rows.iter().all(|r| r.len() == COLUMNS.len()));
    }

    #[test]
    fn values_come_from_the_result_in_iometers_units() {
        let rows = table();
        let test = &mixed().tests[0];
        let all = &rows[1];
        assert!((number(all, "IOps") - test.total.iops).abs() < 1e-3);
        assert!(
            (number(all, "Read IOps") + number(all, "Write IOps") - test.total.iops).abs() < 1e-3
        );
        assert!((number(all, "MBps (Decimal)") - test.total.bytes_per_second / 1e6).abs() < 1e-3);
        assert!(
            (number(all, "MBps (Binary)") * 1_048_576.0 - test.total.bytes_per_second).abs() < 1.0
        );
        assert!(
            (number(all, "Average Response Time") - test.total.latency.mean_ns / 1e6).abs() < 1e-6
        );
        assert_eq!(
            number(all, "Maximum Response Time"),
            test.total.latency.max_ns as f64 / 1e6
        );
        assert_eq!(number(all, "Bytes Read"), test.read.bytes as f64);
        assert_eq!(number(all, "Write I/Os"), test.write.io_count as f64);
        assert_eq!(number(all, "Errors"), 0.0);
        assert_eq!(number(all, "Queue Depth"), 4.0);
        let cpu = number(all, "% CPU Utilization");
        assert!(cpu > 0.0 && cpu <= 100.0, "{cpu}");
        // Worker rows leave the CPU column empty: CPU is measured per test.
        let cpu_column = COLUMNS
            .iter()
            .position(|c| *c == "% CPU Utilization")
            .unwrap();
        assert_eq!(rows[2][cpu_column], "");
        let pair = &rows[3];
        let reader = &rows[4];
        let writer = &rows[5];
        assert_eq!(
            pair[COLUMNS.iter().position(|c| *c == "Queue Depth").unwrap()],
            ""
        );
        assert_eq!(number(reader, "Write IOps"), 0.0);
        assert_eq!(number(writer, "Read IOps"), 0.0);
        assert!(
            (number(reader, "IOps") + number(writer, "IOps") - number(pair, "IOps")).abs() < 1.0
        );
    }

    #[test]
    fn awkward_names_are_quoted() {
        let mut out = Vec::new();
        write_row(
            &mut out,
            ["a,b".to_string(), "say \"hi\"".into(), "plain".into()],
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a,b\",\"say \"\"hi\"\"\",plain\r\n"
        );
    }

    #[test]
    fn a_multi_client_run_has_a_manager_row_per_host() {
        let result = crate::support::fixtures::clustered();
        let mut out = Vec::new();
        write_iometer_csv(Report::of_run(&result).run(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let managers: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("MANAGER,"))
            .collect();
        // Two hosts, for each of the fixture's tests.
        assert_eq!(managers.len(), 2 * result.tests.len());
        assert!(managers[0].starts_with("MANAGER,node1,"));
        assert!(managers[1].starts_with("MANAGER,node2,"));
        let all = text.lines().find(|line| line.starts_with("ALL,")).unwrap();
        assert_eq!(all.split(',').nth(3), Some("2"), "# Managers: {all}");
    }
}
