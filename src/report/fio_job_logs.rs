//! The log files fio job files ask for (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`), named and laid out as fio's HOWTO ("Log File Formats") says, from what
//! each worker kept ([`IoLogRecords`]) and its job's [`LogOptions`].
//!
//! Files: `PREFIX_bw.N.log`, `PREFIX_iops.N.log`, `PREFIX_lat.N.log`, `PREFIX_clat.N.log`,
//! `PREFIX_slat.N.log`, `PREFIX_clat_hist.N.log`, where N counts the workers of the run from 1
//! (fio's job number: each clone of `numjobs` has its own); with `per_job_logs=0` there is no
//! `.N` and every job's lines go into one file. A line is
//!
//! ```text
//! time (ms), value, [value1,] direction, block size, [offset,] priority, [issue time (ns)]
//! ```
//!
//! `value1` (the window's largest value) only with `log_window_value=both`, the offset only with
//! `log_offset=1`, the issue time only with `log_issue_time=1` (0 outside the clat and slat
//! logs). Without `log_avg_msec` each completed I/O has a line: latencies in ns, bandwidth
//! `bytes × 10⁶ / clat ns` (KiB/s as fio counts it), IOPS 1. With it, each direction with
//! completions in a window has a line at the window's end: mean (or largest) latency, the
//! window's KiB/s and IOPS, block size, offset and issue time 0. Times count from the start of
//! the measurement, or with `log_unix_epoch` (fio's Unix timestamps) from the Unix epoch: the
//! wall clock at the start of the measurement plus the time since. `slat` is the time to the return of the hand-over to the kernel where the
//! engine separates it (io_uring, NBD, null); elsewhere the runner records a submission time of 0, so
//! `slat` lines hold 0 and `clat` equals `lat`. iopath sets
//! no I/O priority: the priority column is 0 (`0x0000` with `log_prio=1`). The histogram log
//! stays empty, as fio's does without `log_hist_msec`.
//!
//! ```
//! use iopath::report::fio_job_logs::{LogKind, write_job_log};
//! use iopath::result::io_log::{IoLogRecords, LoggedIo};
//! use iopath::result::{Direction, log_options::LogOptions};
//! let records = IoLogRecords {
//!     ios: vec![LoggedIo { completed_ns: 2_500_000, issued_ns: 2_400_000, latency_ns: 100_000,
//!         submission_ns: 0, offset: 8192, length: 4096, direction: Direction::Read, file: 0 }],
//!     ..IoLogRecords::default()
//! };
//! let mut out = Vec::new();
//! write_job_log(&records, &LogOptions::default(), LogKind::CompletionLatency, &mut out)?;
//! assert_eq!(String::from_utf8(out)?, "2, 100000, 0, 4096, 0\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::gate::replace::{OutputError, OutputFile};
use crate::result::RunResult;
use crate::result::io_log::{IoLogRecords, LatencySums, LogWindow, LoggedIo};
use crate::result::log_options::{LogOptions, WindowValue};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

/// The kinds of log fio writes for a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// `_bw`: KiB/s.
    Bandwidth,
    /// `_iops`.
    Iops,
    /// `_lat`: submission to completion, ns.
    Latency,
    /// `_clat`: hand-over to completion, ns.
    CompletionLatency,
    /// `_slat`: submission, ns.
    SubmissionLatency,
    /// `_clat_hist`: completion-latency histograms.
    Histogram,
}

impl LogKind {
    /// fio's suffix.
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bandwidth => "bw",
            LogKind::Iops => "iops",
            LogKind::Latency => "lat",
            LogKind::CompletionLatency => "clat",
            LogKind::SubmissionLatency => "slat",
            LogKind::Histogram => "clat_hist",
        }
    }

    /// The kinds `options` asks for, each with its prefix, in the order fio opens them.
    pub fn asked(options: &LogOptions) -> Vec<(LogKind, &str)> {
        let mut kinds = Vec::new();
        if let Some(prefix) = &options.latency {
            kinds.push((LogKind::Latency, prefix.as_str()));
            kinds.push((LogKind::SubmissionLatency, prefix.as_str()));
            kinds.push((LogKind::CompletionLatency, prefix.as_str()));
        }
        if let Some(prefix) = &options.histogram {
            kinds.push((LogKind::Histogram, prefix.as_str()));
        }
        if let Some(prefix) = &options.bandwidth {
            kinds.push((LogKind::Bandwidth, prefix.as_str()));
        }
        if let Some(prefix) = &options.iops {
            kinds.push((LogKind::Iops, prefix.as_str()));
        }
        kinds
    }

    /// Whether the issue-time column holds the issue time (clat and slat logs) or 0.
    fn has_issue_time(self) -> bool {
        matches!(
            self,
            LogKind::CompletionLatency | LogKind::SubmissionLatency
        )
    }
}

/// The path of one log: `PREFIX_KIND.N.log`, or `PREFIX_KIND.log` without per-job logs.
pub fn log_path(prefix: &str, kind: LogKind, job_number: usize, per_job: bool) -> PathBuf {
    if per_job {
        PathBuf::from(format!("{prefix}_{}.{job_number}.log", kind.suffix()))
    } else {
        PathBuf::from(format!("{prefix}_{}.log", kind.suffix()))
    }
}

/// What writing the logs of a run did.
#[derive(Debug, Default)]
pub struct WrittenLogs {
    /// The files, in the order written.
    pub paths: Vec<PathBuf>,
    /// Completions that found no room in the memory reserved for the logs (not logged).
    pub overflow_ios: u64,
}

/// Writes every log the jobs of `result` ask for, from `records` (per test, each worker's
/// records with the index of its job in the test), each file through an [`OutputFile`]
/// (replaced whole or not at all; a path that is not a regular file is refused). Relative
/// prefixes are relative to the working directory, as in fio.
pub fn write_job_logs(
    result: &RunResult,
    records: &[Vec<(usize, IoLogRecords)>],
) -> Result<WrittenLogs, OutputError> {
    let mut files: BTreeMap<PathBuf, (usize, Vec<u8>)> = BTreeMap::new();
    let mut written = WrittenLogs::default();
    let mut job_number = 0;
    for (test, workers) in result.tests.iter().zip(records) {
        for (job_index, worker) in workers {
            job_number += 1;
            let Some(options) = test
                .jobs
                .get(*job_index)
                .and_then(|job| job.workload.controls.logs.as_ref())
            else {
                continue;
            };
            written.overflow_ios += worker.overflow_ios;
            for (kind, prefix) in LogKind::asked(options) {
                let path = log_path(prefix, kind, job_number, options.per_job);
                let order = files.len();
                let (_, text) = files.entry(path).or_insert_with(|| (order, Vec::new()));
                write_job_log(worker, options, kind, text)
                    .expect("writing to memory does not fail");
            }
        }
    }
    let mut in_order: Vec<(PathBuf, (usize, Vec<u8>))> = files.into_iter().collect();
    in_order.sort_by_key(|(_, (order, _))| *order);
    for (path, (_, text)) in in_order {
        OutputFile::check(&path)?.write(|out| out.write_all(&text))?;
        written.paths.push(path);
    }
    Ok(written)
}

/// Writes the lines of one log of one worker.
pub fn write_job_log(
    records: &IoLogRecords,
    options: &LogOptions,
    kind: LogKind,
    out: &mut dyn Write,
) -> io::Result<()> {
    if kind == LogKind::Histogram {
        return Ok(());
    }
    // Times count from the start of the measurement, or from the Unix epoch.
    let base_ms = if options.unix_epoch {
        records.epoch_unix_ms
    } else {
        0
    };
    if records.window_ns == 0 {
        for io in &records.ios {
            let mut line = io_line(io, kind);
            line.time_ms += base_ms;
            write_line(out, options, kind, &line)?;
        }
        return Ok(());
    }
    let window_ms = (records.window_ns / 1_000_000).max(1);
    for (index, window) in records.windows.iter().enumerate() {
        for (direction, figures) in window.iter().enumerate() {
            if figures.io_count == 0 {
                continue;
            }
            let (value, largest) = window_values(figures, kind, window_ms, options.window_value);
            let line = Line {
                time_ms: base_ms + (index as u64 + 1) * window_ms,
                value,
                largest,
                direction: direction as u8,
                block_size: 0,
                offset: 0,
                issue_ns: 0,
            };
            write_line(out, options, kind, &line)?;
        }
    }
    Ok(())
}

/// One line before its columns are chosen.
struct Line {
    time_ms: u64,
    value: u64,
    /// The window's largest value (0 per I/O, as fio writes).
    largest: u64,
    direction: u8,
    block_size: u64,
    offset: u64,
    issue_ns: u64,
}

/// The line of one completed I/O.
fn io_line(io: &LoggedIo, kind: LogKind) -> Line {
    let completion_ns = io.latency_ns - io.submission_ns;
    let value = match kind {
        LogKind::Latency => io.latency_ns,
        LogKind::CompletionLatency => completion_ns,
        LogKind::SubmissionLatency => io.submission_ns,
        LogKind::Bandwidth if completion_ns > 0 => u64::from(io.length) * 1_000_000 / completion_ns,
        LogKind::Bandwidth => 0,
        LogKind::Iops | LogKind::Histogram => 1,
    };
    Line {
        time_ms: io.completed_ns / 1_000_000,
        value,
        largest: 0,
        direction: io.direction_number(),
        block_size: u64::from(io.length),
        offset: io.offset,
        issue_ns: io.issued_ns,
    }
}

/// The value of a window (mean or largest by `window_value`) and its largest value.
fn window_values(
    figures: &LogWindow,
    kind: LogKind,
    window_ms: u64,
    window_value: WindowValue,
) -> (u64, u64) {
    let latency = |sums: &LatencySums| {
        let mean = (sums.sum_ns + figures.io_count / 2) / figures.io_count;
        match window_value {
            WindowValue::Maximum => (sums.max_ns, sums.max_ns),
            WindowValue::Average | WindowValue::Both => (mean, sums.max_ns),
        }
    };
    let rate = |value: u64| (value, value);
    match kind {
        LogKind::Latency => latency(&figures.latency),
        LogKind::CompletionLatency => latency(&figures.completion),
        LogKind::SubmissionLatency => latency(&figures.submission),
        LogKind::Bandwidth => rate(figures.bytes * 1000 / window_ms / 1024),
        LogKind::Iops | LogKind::Histogram => rate(figures.io_count * 1000 / window_ms),
    }
}

/// Writes `line` with the columns `options` asks for.
fn write_line(
    out: &mut dyn Write,
    options: &LogOptions,
    kind: LogKind,
    line: &Line,
) -> io::Result<()> {
    write!(out, "{}, {}", line.time_ms, line.value)?;
    if options.window_value == WindowValue::Both {
        write!(out, ", {}", line.largest)?;
    }
    write!(out, ", {}, {}", line.direction, line.block_size)?;
    if options.offset {
        write!(out, ", {}", line.offset)?;
    }
    if options.priority {
        write!(out, ", 0x0000")?;
    } else {
        write!(out, ", 0")?;
    }
    if options.issue_time {
        let issue_ns = if kind.has_issue_time() {
            line.issue_ns
        } else {
            0
        };
        write!(out, ", {issue_ns}")?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Direction;

    fn io(completed_ms: u64, latency_ns: u64, submission_ns: u64) -> LoggedIo {
        LoggedIo {
            completed_ns: completed_ms * 1_000_000 + 300,
            issued_ns: completed_ms * 1_000_000 - latency_ns + submission_ns,
            latency_ns,
            submission_ns,
            offset: 4096 * completed_ms,
            length: 4096,
            direction: Direction::Write,
            file: 0,
        }
    }

    fn text(records: &IoLogRecords, options: &LogOptions, kind: LogKind) -> String {
        let mut out = Vec::new();
        write_job_log(records, options, kind, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn per_io_lines_follow_the_options() {
        let records = IoLogRecords {
            ios: vec![io(3, 2000, 500)],
            ..IoLogRecords::default()
        };
        let plain = LogOptions::default();
        assert_eq!(
            text(&records, &plain, LogKind::Latency),
            "3, 2000, 1, 4096, 0\n"
        );
        assert_eq!(
            text(&records, &plain, LogKind::SubmissionLatency),
            "3, 500, 1, 4096, 0\n"
        );
        // 4096 bytes in 1500 ns of completion latency.
        assert_eq!(
            text(&records, &plain, LogKind::Bandwidth),
            "3, 2730666, 1, 4096, 0\n"
        );
        let all = LogOptions {
            offset: true,
            priority: true,
            issue_time: true,
            ..LogOptions::default()
        };
        assert_eq!(
            text(&records, &all, LogKind::CompletionLatency),
            "3, 1500, 1, 4096, 12288, 0x0000, 2998500\n"
        );
        assert_eq!(
            text(&records, &all, LogKind::Iops),
            "3, 1, 1, 4096, 12288, 0x0000, 0\n"
        );
    }

    #[test]
    fn windows_give_means_largest_and_rates() {
        let mut window = LogWindow::default();
        for latency in [1000, 3000, 2000] {
            window.io_count += 1;
            window.bytes += 4096;
            window.latency.add(latency);
            window.completion.add(latency);
        }
        let records = IoLogRecords {
            windows: vec![[LogWindow::default(), LogWindow::default(), window]],
            window_ns: 100_000_000,
            ..IoLogRecords::default()
        };
        let both = LogOptions {
            average_ms: 100,
            window_value: WindowValue::Both,
            offset: true,
            ..LogOptions::default()
        };
        assert_eq!(
            text(&records, &both, LogKind::CompletionLatency),
            "100, 2000, 3000, 2, 0, 0, 0\n"
        );
        assert_eq!(
            text(&records, &both, LogKind::Iops),
            "100, 30, 30, 2, 0, 0, 0\n"
        );
        let max = LogOptions {
            average_ms: 100,
            window_value: WindowValue::Maximum,
            ..LogOptions::default()
        };
        assert_eq!(
            text(&records, &max, LogKind::Latency),
            "100, 3000, 2, 0, 0\n"
        );
        assert_eq!(
            text(&records, &max, LogKind::Bandwidth),
            "100, 120, 2, 0, 0\n"
        );
    }

    #[test]
    fn unix_epoch_times_add_the_wall_clock_of_the_start() {
        let epoch_unix_ms = 1_796_518_361_899;
        let per_io = IoLogRecords {
            ios: vec![io(3, 2000, 500)],
            epoch_unix_ms,
            ..IoLogRecords::default()
        };
        let unix = LogOptions {
            unix_epoch: true,
            ..LogOptions::default()
        };
        assert_eq!(
            text(&per_io, &unix, LogKind::Latency),
            "1796518361902, 2000, 1, 4096, 0\n"
        );
        // Without the option the wall clock is not used.
        assert_eq!(
            text(&per_io, &LogOptions::default(), LogKind::Latency),
            "3, 2000, 1, 4096, 0\n"
        );
        let window = LogWindow {
            io_count: 5,
            bytes: 5 * 4096,
            ..LogWindow::default()
        };
        let windowed = IoLogRecords {
            windows: vec![[window, LogWindow::default(), LogWindow::default()]; 2],
            window_ns: 100_000_000,
            epoch_unix_ms,
            ..IoLogRecords::default()
        };
        let unix_windows = LogOptions {
            average_ms: 100,
            ..unix
        };
        assert_eq!(
            text(&windowed, &unix_windows, LogKind::Iops),
            "1796518361999, 50, 0, 0, 0\n1796518362099, 50, 0, 0, 0\n"
        );
    }

    #[test]
    fn names_carry_the_job_number_unless_shared() {
        assert_eq!(
            log_path("out/x", LogKind::CompletionLatency, 3, true),
            PathBuf::from("out/x_clat.3.log")
        );
        assert_eq!(
            log_path("x", LogKind::Iops, 3, false),
            PathBuf::from("x_iops.log")
        );
        let lat = LogOptions {
            latency: Some("l".into()),
            iops: Some("i".into()),
            ..LogOptions::default()
        };
        let kinds: Vec<&str> = LogKind::asked(&lat)
            .iter()
            .map(|(k, _)| k.suffix())
            .collect();
        assert_eq!(kinds, ["lat", "slat", "clat", "iops"]);
    }
}
