//! The exporters against the real tools that read their formats: fio's own
//! `fio_jsonplus_clat2csv` and fio2gnuplot (Debian's `fio` package) and fio-plot (PyPI
//! `fio-plot`), fed the saved `small` run (tests/fixtures) and the logs a job file asks for
//! (`write_bw_log`, …) from a fresh run; and every exporter on one fresh
//! real run of the binary, checked for structure (the snapshots in exporter_snapshots.rs
//! check the exact output on saved runs). A test whose tool is not installed is skipped, or
//! fails under CI (tests/support); scripts/test installs them.

use crate::support;

use iopath::compare::{CompareOptions, LabeledRun, compare};
use iopath::report::compare_json::write_compare_json;
use iopath::report::compare_markdown::write_compare_markdown;
use iopath::report::compare_text::write_compare_text;
use iopath::report::csv::{COLUMNS, write_iometer_csv};
use iopath::report::fio_json::write_fio_json;
use iopath::report::fio_logs::write_fio_logs;
use iopath::report::html::write_html;
use iopath::report::json::{read_json, write_json};
use iopath::report::markdown::write_markdown;
use iopath::report::model::Report;
use iopath::report::text::write_text;
use iopath::result::RunResult;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The saved run the tools read: one job of 4 KiB random reads and writes at QD 4 for 2 s.
fn saved_run() -> RunResult {
    support::fixtures::result("small")
}

/// A directory under the target's temporary directory, removed when dropped.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("exporters-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn describe(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A Python 3 that can import every module of `modules`; `None` after skipping the calling
/// test (`support::require`) when there is none.
fn python_with(modules: &[&str], install: &str) -> Option<String> {
    let imports = modules
        .iter()
        .map(|module| format!("import {module}"))
        .collect::<Vec<_>>()
        .join("; ");
    let python = ["python3", "/usr/bin/python3"]
        .into_iter()
        .find(|python| {
            Command::new(python)
                .args(["-c", &imports])
                .output()
                .is_ok_and(|output| output.status.success())
        })
        .map(str::to_string);
    support::require(
        python.is_some(),
        format_args!("no python3 here imports {} ({install})", modules.join(", ")),
    );
    python
}

/// An installed fio tool: on PATH, in /usr/bin, or listed by `dpkg -L fio`; `None` after
/// skipping the calling test (`support::require`) when there is none.
fn fio_tool(name: &str) -> Option<PathBuf> {
    let found = find_fio_tool(name);
    support::require(
        found.is_some(),
        format_args!("{name} is not installed (apt-get install fio)"),
    );
    found
}

fn find_fio_tool(name: &str) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/bin")])
        .map(|directory| directory.join(name))
        .find(|candidate| candidate.is_file());
    on_path.or_else(|| {
        let listing = Command::new("dpkg").args(["-L", "fio"]).output().ok()?;
        String::from_utf8_lossy(&listing.stdout)
            .lines()
            .find(|line| line.ends_with(&format!("/{name}")))
            .map(PathBuf::from)
    })
}

fn write_file(path: &Path, write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) {
    let mut file = std::fs::File::create(path).unwrap();
    write(&mut file).unwrap();
}

fn assert_png(path: &Path) {
    let bytes =
        std::fs::read(path).unwrap_or_else(|_| panic!("{} was not written", path.display()));
    assert!(
        bytes.len() > 1000,
        "{} is {} bytes",
        path.display(),
        bytes.len()
    );
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
}

/// One latency column group of fio_jsonplus_clat2csv's CSV: (nsec, count, cumulative,
/// percentile) of every row that has a count.
fn csv_column(text: &str, prefix: &str) -> Vec<(u64, u64, u64, f64)> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    let column = header
        .iter()
        .position(|name| *name == format!("{prefix}_count"))
        .unwrap_or_else(|| panic!("no {prefix}_count in {header:?}"));
    lines
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let count = fields.get(column)?.parse().ok()?;
            Some((
                fields[0].parse().unwrap(),
                count,
                fields[column + 1].parse().unwrap(),
                fields[column + 2].parse().unwrap(),
            ))
        })
        .collect()
}

#[test]
fn fio_jsonplus_clat2csv_reads_json_plus_and_gets_the_percentiles() {
    let Some(script) = fio_tool("fio_jsonplus_clat2csv") else {
        return;
    };
    let Some(python) = python_with(&["six"], SIX) else {
        return;
    };
    let result = &saved_run();
    let directory = scratch();
    let json_path = directory.path().join("fio-plus.json");
    write_file(&json_path, |out| {
        write_fio_json(Report::of_run(result).run(), true, out)
    });
    let fio: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();

    let convert = |extra: &[&str]| {
        let output = Command::new(&python)
            .current_dir(directory.path())
            .arg(&script)
            .args(["fio-plus.json", "latency.csv"])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert!(convert(&[]).contains("latency_job0.csv generated"));
    assert!(convert(&["--validate"]).contains("latency_job0.csv validated"));

    let csv = std::fs::read_to_string(directory.path().join("latency_job0.csv")).unwrap();
    let job = &result.tests[0].jobs[0];
    for (key, figures) in [("read", &job.read), ("write", &job.write)] {
        let rows = csv_column(&csv, &format!("{key}_clat_ns"));
        let total = figures.io_count;
        assert!(total > 0);
        assert_eq!(rows.iter().map(|row| row.1).sum::<u64>(), total);
        assert_eq!(rows.last().unwrap().2, total);
        assert!(rows.windows(2).all(|pair| pair[0].0 < pair[1].0));
        // The smallest and largest bins hold the exact minimum and maximum.
        let within = |value: u64, truth: u64| value.abs_diff(truth) as f64 <= truth as f64 / 64.0;
        assert!(
            within(rows[0].0, figures.latency.min_ns),
            "{} vs min",
            rows[0].0
        );
        let last = rows.last().unwrap().0;
        assert!(within(last, figures.latency.max_ns), "{last} vs max");

        // Every percentile fio's JSON states is where the CSV's cumulative count crosses it.
        let stated = fio["jobs"][0][key]["clat_ns"]["percentile"]
            .as_object()
            .unwrap();
        assert_eq!(stated.len(), 17);
        for (percent_key, value) in stated {
            let percent: f64 = percent_key.parse().unwrap();
            let crossing = rows
                .iter()
                .find(|row| row.2 as f64 >= percent / 100.0 * total as f64)
                .unwrap();
            assert_eq!(crossing.0, value.as_u64().unwrap(), "{key} p{percent_key}");
            assert!((crossing.3 - crossing.2 as f64 / total as f64).abs() < 1e-9);
        }
        // And they agree with iopath's own percentiles within the histograms' error.
        for (percent_key, own_key) in [
            ("50.000000", "50"),
            ("90.000000", "90"),
            ("95.000000", "95"),
            ("99.000000", "99"),
            ("99.900000", "99.9"),
            ("99.990000", "99.99"),
        ] {
            let fio_value = stated[percent_key].as_u64().unwrap();
            let own = figures.latency.percentile(own_key);
            assert!(
                within(fio_value, own),
                "{key} p{own_key}: {fio_value} vs {own}"
            );
        }
    }
}

#[test]
fn fio_plot_charts_fio_json() {
    let Some(python) = python_with(&["fio_plot", "matplotlib"], FIO_PLOT) else {
        return;
    };
    let result = &saved_run();
    let directory = scratch();
    // fio-plot reads every JSON file of a directory and keeps those whose rw, iodepth and
    // numjobs match its arguments; bench-fio names them like this.
    let data = directory.path().join("4k");
    std::fs::create_dir(&data).unwrap();
    write_file(&data.join("randrw-4-1.json"), |out| {
        write_fio_json(Report::of_run(result).run(), false, out)
    });
    for (name, chart) in [
        ("iops-latency-read.png", ["-l", "-f", "read"]),
        ("iops-latency-write.png", ["-l", "-f", "write"]),
        ("histogram-read.png", ["-H", "-f", "read"]),
    ] {
        let png = directory.path().join(name);
        let output = Command::new(&python)
            .current_dir(directory.path())
            .env("MPLBACKEND", "Agg")
            .args(["-m", "fio_plot", "-i"])
            .arg(&data)
            .args(["-T", "iopath", "-r", "randrw", "-d", "4", "-n", "1", "-o"])
            .arg(&png)
            .args(chart)
            .output()
            .unwrap();
        assert!(output.status.success(), "{name}: {}", describe(&output));
        assert_png(&png);
    }
}

/// How to get the `six` module that fio's Python tools import.
const SIX: &str = "apt-get install python3-six";
/// How to get fio-plot.
const FIO_PLOT: &str = "pip install fio-plot";

/// Writes the saved run's fio logs under a fresh directory: (directory, logs folder).
fn saved_logs(result: &RunResult) -> (tempfile::TempDir, PathBuf) {
    let directory = scratch();
    let logs = directory.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    // fio-plot's expected name: RW-iodepth-QD-numjobs-N_TYPE.JOB.log
    let written = write_fio_logs(result, &logs.join("randrw-iodepth-4-numjobs-1")).unwrap();
    assert_eq!(written.len(), 3);
    (directory, logs)
}

#[test]
fn fio_plot_reads_the_logs() {
    let Some(python) = python_with(&["fio_plot", "matplotlib"], FIO_PLOT) else {
        return;
    };
    let (directory, logs) = saved_logs(&saved_run());
    let png = directory.path().join("log.png");
    let output = Command::new(&python)
        .current_dir(directory.path())
        .env("MPLBACKEND", "Agg")
        .args(["-m", "fio_plot", "-i"])
        .arg(&logs)
        .args([
            "-T", "iopath", "-g", "-t", "iops", "lat", "bw", "-r", "randrw",
        ])
        .args(["-d", "4", "-n", "1", "-o"])
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "fio-plot -g: {}",
        describe(&output)
    );
    assert_png(&png);
}

/// fio2gnuplot's summary (`gnuplot/result.global`) of the bandwidth logs in `logs`.
fn fio2gnuplot_summary(python: &str, script: &Path, logs: &Path) -> String {
    let output = Command::new(python)
        .current_dir(logs)
        .arg(script)
        .args(["-b", "-k", "-d", "gnuplot"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "fio2gnuplot: {}",
        describe(&output)
    );
    std::fs::read_to_string(logs.join("gnuplot/result.global")).unwrap()
}

#[test]
fn fio2gnuplot_reads_the_logs() {
    let Some(script) = fio_tool("fio2gnuplot") else {
        return;
    };
    let Some(python) = python_with(&["six"], SIX) else {
        return;
    };
    let result = saved_run();
    let (_directory, logs) = saved_logs(&result);
    let summary = fio2gnuplot_summary(&python, &script, &logs);
    let job = &result.tests[0].jobs[0];
    let points = job.read.series.len() + job.write.series.len();
    assert!(
        summary.contains(&format!("values_count={points}")),
        "{summary}"
    );
}

/// A job file whose job asks for its bandwidth, IOPS and latency logs (one line per I/O, or
/// per `window` when given), under fio-plot's file-name pattern; run by the binary in a fresh
/// directory: (directory, logs folder, I/Os completed).
fn job_file_logs(window: Option<&str>) -> (tempfile::TempDir, PathBuf, u64) {
    let directory = scratch();
    let logs = directory.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let prefix = "logs/randrw-iodepth-4-numjobs-1";
    let window = window.map_or(String::new(), |ms| format!("log_avg_msec={ms}\n"));
    let job = format!(
        "[randrw]\nioengine=null\nsize=1g\nrw=randrw\nbs=4k\niodepth=4\ntime_based\nruntime=2\n\
         rate_iops=1000\nwrite_bw_log={prefix}\nwrite_iops_log={prefix}\nwrite_lat_log={prefix}\n{window}"
    );
    std::fs::write(directory.path().join("logged.fio"), job).unwrap();
    let output = support::history::command(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(directory.path())
        .args("run --job logged.fio --json out.json".split_whitespace())
        .output()
        .expect("iopath runs");
    assert!(output.status.success(), "{}", describe(&output));
    let text = std::fs::read_to_string(directory.path().join("out.json")).unwrap();
    let job = &read_json(&text).unwrap().tests[0].jobs[0];
    (directory, logs, job.read.io_count + job.write.io_count)
}

#[test]
fn fio_plot_draws_a_job_files_logs() {
    let Some(python) = python_with(&["fio_plot", "matplotlib"], FIO_PLOT) else {
        return;
    };
    for window in [None, Some("250")] {
        let (directory, logs, _) = job_file_logs(window);
        // fio-plot draws lat with iops and bw, and clat with slat, on charts of their own.
        for (index, kinds) in [&["iops", "lat", "bw"][..], &["clat", "slat"]]
            .into_iter()
            .enumerate()
        {
            let png = directory.path().join(format!("log{index}.png"));
            let output = Command::new(&python)
                .current_dir(directory.path())
                .env("MPLBACKEND", "Agg")
                .args(["-m", "fio_plot", "-i"])
                .arg(&logs)
                .args(["-T", "iopath", "-g", "-t"])
                .args(kinds)
                .args(["-r", "randrw", "-d", "4", "-n", "1", "-o"])
                .arg(&png)
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "fio-plot -g -t {kinds:?} ({window:?}): {}",
                describe(&output)
            );
            assert_png(&png);
        }
    }
}

#[test]
fn fio2gnuplot_reads_a_job_files_per_io_log() {
    let Some(script) = fio_tool("fio2gnuplot") else {
        return;
    };
    let Some(python) = python_with(&["six"], SIX) else {
        return;
    };
    let (_directory, logs, completed) = job_file_logs(None);
    // One line per completed I/O in the bandwidth logs; fio2gnuplot reads every line whose
    // time is past 0 ms (it keeps `time > 0`), so I/Os completed within the first millisecond
    // are the only ones it leaves out.
    let times: Vec<u64> = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().contains("_bw."))
        .flat_map(|entry| {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            text.lines()
                .map(|line| line.split(',').next().unwrap().trim().parse().unwrap())
                .collect::<Vec<u64>>()
        })
        .collect();
    assert!(completed > 0);
    assert_eq!(
        times.len() as u64,
        completed,
        "a log line per completed I/O"
    );
    let after_zero = times.iter().filter(|time| **time > 0).count();
    let summary = fio2gnuplot_summary(&python, &script, &logs);
    assert!(
        summary.contains(&format!("values_count={after_zero}\n")),
        "{completed} I/Os, {after_zero} after 0 ms: {summary}"
    );
}

/// Milliseconds since the Unix epoch, now.
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn log_unix_epoch_puts_the_wall_clock_in_the_log_times() {
    let directory = scratch();
    let job = "[unix]\nioengine=null\nsize=1g\nrw=read\nbs=4k\ntime_based\nruntime=1\n\
               rate_iops=2000\nwrite_iops_log=u\nlog_avg_msec=100\nlog_unix_epoch=1\n\
               [relative]\nioengine=null\nsize=1g\nrw=read\nbs=4k\ntime_based\nruntime=1\n\
               rate_iops=2000\nwrite_iops_log=r\nlog_avg_msec=100\n";
    std::fs::write(directory.path().join("epoch.fio"), job).unwrap();
    let before = unix_ms();
    let output = support::history::command(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(directory.path())
        .args("run --job epoch.fio --ramp 0 --json out.json".split_whitespace())
        .output()
        .expect("iopath runs");
    let after = unix_ms();
    assert!(output.status.success(), "{}", describe(&output));
    let times = |name: &str| -> Vec<u64> {
        std::fs::read_to_string(directory.path().join(name))
            .unwrap()
            .lines()
            .map(|line| line.split(',').next().unwrap().trim().parse().unwrap())
            .collect()
    };
    let unix = times("u_iops.1.log");
    assert!(unix.len() >= 5, "{unix:?}");
    // Every window ends while the command ran, in order, 100 ms apart.
    assert!(
        unix.iter().all(|time| (before..=after).contains(time)),
        "{before}..{after}: {unix:?}"
    );
    assert!(
        unix.windows(2).all(|pair| pair[1] - pair[0] == 100),
        "{unix:?}"
    );
    // The job without the option counts from the start of the measurement.
    let relative = times("r_iops.2.log");
    assert_eq!(relative.first(), Some(&100), "{relative:?}");
}

/// `iopath run f.dat --size 16m --rw randrw --bs 4k --qd 4 --duration 2 --ramp 0`, read back
/// from its JSON file.
fn fresh_run() -> RunResult {
    let directory = scratch();
    let output = support::history::command(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(directory.path())
        .args(
            "run f.dat --size 16m --rw randrw --bs 4k --qd 4 --duration 2 --ramp 0 --json out.json"
                .split_whitespace(),
        )
        .output()
        .expect("iopath runs");
    assert!(output.status.success(), "{}", describe(&output));
    let text = std::fs::read_to_string(directory.path().join("out.json")).unwrap();
    read_json(&text).expect("a RunResult")
}

/// What `write` makes of its input, as text.
fn written(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    write(&mut out).unwrap();
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn every_exporter_on_a_fresh_run() {
    let result = fresh_run();
    let test = &result.tests[0];
    assert_eq!(result.tests.len(), 1);
    assert!(test.total.io_count > 0 && test.read.io_count > 0 && test.write.io_count > 0);

    // JSON: what is read back is what was written.
    let json = written(|out| write_json(&result, out));
    assert_eq!(read_json(&json).unwrap(), result);

    // The terminal table: a header, the test and both directions, the verdict line.
    let text = written(|out| write_text(Report::of_run(&result).run(), out));
    for word in [
        "MB/s", "IOPS", "p99", "verdict", "read", "write", &test.name,
    ] {
        assert!(text.contains(word), "{word} in\n{text}");
    }

    // fio JSON (and JSON+): one job with both directions' I/O counts.
    for plus in [false, true] {
        let fio: Value = serde_json::from_str(&written(|out| {
            write_fio_json(Report::of_run(&result).run(), plus, out)
        }))
        .expect("fio JSON parses");
        let jobs = fio["jobs"].as_array().expect("jobs");
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0]["read"]["total_ios"], test.jobs[0].read.io_count);
        assert_eq!(jobs[0]["write"]["total_ios"], test.jobs[0].write.io_count);
        assert_eq!(jobs[0]["read"]["clat_ns"].get("bins").is_some(), plus);
    }

    // Iometer CSV: the header, one ALL row and one WORKER row.
    let csv = written(|out| write_iometer_csv(Report::of_run(&result).run(), out));
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .map(|l| l.trim_end().split(',').collect())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0], COLUMNS);
    assert_eq!(rows[1][0], "ALL");
    assert_eq!(rows[2][0], "WORKER");
    let iops: f64 = rows[1][6].parse().unwrap();
    assert!((iops - test.total.iops).abs() < 1e-3);

    // Markdown: the table header and a row for the test.
    let markdown = written(|out| write_markdown(Report::of_run(&result).run(), out));
    assert!(markdown.contains("| test | MB/s | IOPS | mean | p99 | CPU % |"));
    assert!(markdown.contains(&format!("| {} |", test.name)));

    // fio logs: bandwidth, IOPS and latency, a line per second and direction at least.
    let directory = scratch();
    let logs = write_fio_logs(&result, &directory.path().join("run")).unwrap();
    assert_eq!(logs.len(), 3);
    for log in &logs {
        let lines = std::fs::read_to_string(log).unwrap().lines().count();
        assert!(lines >= 2, "{} has {lines} lines", log.display());
    }

    // HTML: one complete page naming the test.
    let html = written(|out| write_html(&Report::of_run(&result), out));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    assert!(html.contains(&test.name));

    // compare, against the saved run of the same command: one matched test in every format.
    let saved = saved_run();
    let runs = [
        LabeledRun::new("saved", &saved),
        LabeledRun::new("fresh", &result),
    ];
    let comparison = compare(&runs, &CompareOptions::default()).unwrap();
    assert_eq!(comparison.tests.len(), 1, "{:?}", comparison.unmatched);
    let compared = written(|out| write_compare_text(&comparison, out));
    assert!(
        compared.contains("saved") && compared.contains("fresh"),
        "{compared}"
    );
    let compared = written(|out| write_compare_markdown(&comparison, out));
    assert!(compared.contains("baseline **saved**"), "{compared}");
    assert!(compared.contains(&format!("| {}", test.name)), "{compared}");
    let compared: Value =
        serde_json::from_str(&written(|out| write_compare_json(&comparison, out))).unwrap();
    assert_eq!(
        compared["tests"].as_array().map(Vec::len),
        Some(1),
        "{compared}"
    );
}
