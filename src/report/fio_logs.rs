//! fio's per-interval logs (`--write-logs PREFIX`), written from a [`RunResult`]'s per-second
//! series so that fio2gnuplot, fio-plot and other readers of fio's logs plot iopath's runs.
//!
//! Each iopath job of each test, numbered from 1 in the order run, gets three files named as
//! fio names them: `PREFIX_bw.N.log` (KiB/s), `PREFIX_iops.N.log` (I/Os per second) and
//! `PREFIX_lat.N.log` (mean latency, ns, submission to completion). Every line is one interval
//! of one direction, as fio writes a windowed log (`log_avg_msec`):
//!
//! ```text
//! 1000, 57112, 0, 4096, 0
//! 1000, 56890, 1, 4096, 0
//! ```
//!
//! time at the end of the interval (ms after the measurement started), value, direction
//! (0 read, 1 write), block size (bytes; 0 for a mix of sizes), offset (always 0). A direction
//! the job never issued has no lines; an interval in which no I/O of a direction completed has
//! bandwidth and IOPS 0 and no latency line. Details in docs/reports.md.
//!
//! ```no_run
//! use iopath::report::{fio_logs::write_fio_logs, json::read_json};
//! let result = read_json(&std::fs::read_to_string("out.json")?)?;
//! for path in write_fio_logs(&result, std::path::Path::new("logs/randread"))? {
//!     println!("{}", path.display());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::gate::replace::{OutputError, OutputFile};
use crate::result::{DirectionResult, IntervalPoint, JobResult, RunResult};
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The kinds of log fio writes per job, and what their value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FioLogKind {
    /// `_bw`: bandwidth, KiB/s (1024 bytes).
    Bandwidth,
    /// `_iops`: I/Os per second.
    Iops,
    /// `_lat`: mean latency of the interval, ns (submission to completion).
    Latency,
}

impl FioLogKind {
    /// Every kind, in the order the files are written.
    pub const ALL: [FioLogKind; 3] = [FioLogKind::Bandwidth, FioLogKind::Iops, FioLogKind::Latency];

    /// fio's suffix for this log (`bw`, `iops`, `lat`).
    pub fn suffix(self) -> &'static str {
        match self {
            FioLogKind::Bandwidth => "bw",
            FioLogKind::Iops => "iops",
            FioLogKind::Latency => "lat",
        }
    }
}

/// One log file of a run: where it goes, and what it holds.
#[derive(Clone, Copy, Debug)]
pub struct FioLog<'a> {
    /// The job whose intervals it holds.
    pub job: &'a JobResult,
    /// Which log.
    pub kind: FioLogKind,
    /// The job's number, from 1, in the order run.
    pub number: usize,
}

impl FioLog<'_> {
    /// `PREFIX_KIND.N.log` (`prefix` is used as text, so `logs/run` gives `logs/run_bw.1.log`).
    pub fn path(&self, prefix: &Path) -> PathBuf {
        let mut name = OsString::from(prefix.as_os_str());
        name.push(format!("_{}.{}.log", self.kind.suffix(), self.number));
        PathBuf::from(name)
    }
}

/// The bandwidth, IOPS and latency logs of every job of `result`, in the order they are
/// written.
pub fn fio_logs(result: &RunResult) -> Vec<FioLog<'_>> {
    let jobs = result.tests.iter().flat_map(|test| test.jobs.iter());
    jobs.enumerate()
        .flat_map(|(index, job)| {
            FioLogKind::ALL.map(|kind| FioLog {
                job,
                kind,
                number: index + 1,
            })
        })
        .collect()
}

/// Writes the bandwidth, IOPS and latency logs of every job of `result` next to `prefix`
/// (`PREFIX_bw.1.log` …, see [`FioLog::path`]), each through an [`OutputFile`]: an existing
/// log is replaced whole or not at all, and a path that is not a regular file is refused.
/// Returns the files written, in order. The directory must exist.
pub fn write_fio_logs(result: &RunResult, prefix: &Path) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    for log in fio_logs(result) {
        let path = log.path(prefix);
        OutputFile::check(&path)?.write(|out| write_fio_log(log.job, log.kind, out))?;
        written.push(path);
    }
    Ok(written)
}

/// Writes one log of one job in fio's format.
pub fn write_fio_log(job: &JobResult, kind: FioLogKind, out: &mut dyn Write) -> io::Result<()> {
    let block_size = job.workload.access.single_size().unwrap_or(0);
    let directions: Vec<(u8, &DirectionResult)> =
        [(0u8, &job.read), (1, &job.write), (2, &job.trim)]
            .into_iter()
            .filter(|(_, figures)| figures.io_count > 0)
            .collect();
    let intervals = directions
        .iter()
        .map(|(_, figures)| figures.series.len())
        .max()
        .unwrap_or(0);
    for interval in 0..intervals {
        for (direction, figures) in &directions {
            let Some(point) = figures.series.get(interval) else {
                continue;
            };
            let Some(value) = value_of(point, kind) else {
                continue;
            };
            let end_ms = point
                .start_ns
                .saturating_add(point.duration_ns)
                .saturating_add(500_000)
                / 1_000_000;
            writeln!(out, "{end_ms}, {value}, {direction}, {block_size}, 0")?;
        }
    }
    Ok(())
}

/// The logged value of one interval; `None` for the latency of an interval without I/O.
fn value_of(point: &IntervalPoint, kind: FioLogKind) -> Option<u64> {
    let per_second = |amount: u64| {
        if point.duration_ns == 0 {
            0.0
        } else {
            amount as f64 * 1e9 / point.duration_ns as f64
        }
    };
    match kind {
        FioLogKind::Bandwidth => Some((per_second(point.bytes) / 1024.0).round() as u64),
        FioLogKind::Iops => Some(per_second(point.io_count).round() as u64),
        FioLogKind::Latency => (point.io_count > 0).then_some(point.mean_latency_ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::fixtures::mixed;

    fn lines(job: &JobResult, kind: FioLogKind) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        write_fio_log(job, kind, &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|line| line.split(", ").map(|f| f.parse().unwrap()).collect())
            .collect()
    }

    #[test]
    fn mixed_job_logs_both_directions_per_second() {
        let job = &mixed().tests[0].jobs[0];
        let bandwidth = lines(job, FioLogKind::Bandwidth);
        let times: Vec<u64> = bandwidth.iter().map(|l| l[0]).collect();
        assert_eq!(times, [1000, 1000, 2000, 2000]);
        let directions: Vec<u64> = bandwidth.iter().map(|l| l[2]).collect();
        assert_eq!(directions, [0, 1, 0, 1]);
        assert!(
            bandwidth
                .iter()
                .all(|l| l.len() == 5 && l[3] == 4096 && l[4] == 0)
        );
        let read_kib: u64 = bandwidth.iter().filter(|l| l[2] == 0).map(|l| l[1]).sum();
        let expected = job.read.bytes / 1024;
        assert!(read_kib.abs_diff(expected) <= 2, "{read_kib} vs {expected}");

        let iops = lines(job, FioLogKind::Iops);
        let write_ios: u64 = iops.iter().filter(|l| l[2] == 1).map(|l| l[1]).sum();
        assert!(write_ios.abs_diff(job.write.io_count) <= 2);

        let latency = lines(job, FioLogKind::Latency);
        assert_eq!(latency.len(), 4);
        for line in &latency {
            let point =
                &[&job.read, &job.write][line[2] as usize].series[line[0] as usize / 1000 - 1];
            assert_eq!(line[1], point.mean_latency_ns);
        }
    }

    #[test]
    fn one_direction_jobs_log_only_it() {
        let test = &mixed().tests[1];
        let reader = lines(&test.jobs[0], FioLogKind::Iops);
        assert!(!reader.is_empty() && reader.iter().all(|l| l[2] == 0 && l[3] == 65536));
        let writer = lines(&test.jobs[1], FioLogKind::Bandwidth);
        assert!(!writer.is_empty() && writer.iter().all(|l| l[2] == 1));
    }

    #[test]
    fn files_are_numbered_per_job() {
        let directory = tempfile::tempdir().unwrap();
        let prefix = directory.path().join("run");
        let written = write_fio_logs(mixed(), &prefix).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "run_bw.1.log",
                "run_iops.1.log",
                "run_lat.1.log",
                "run_bw.2.log",
                "run_iops.2.log",
                "run_lat.2.log",
                "run_bw.3.log",
                "run_iops.3.log",
                "run_lat.3.log",
            ]
        );
        assert!(written.iter().all(|p| p.parent() == Some(directory.path())));
        let mut expected = Vec::new();
        write_fio_log(
            &mixed().tests[0].jobs[0],
            FioLogKind::Latency,
            &mut expected,
        )
        .unwrap();
        assert_eq!(std::fs::read(&written[2]).unwrap(), expected);
    }
}
