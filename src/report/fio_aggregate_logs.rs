//! fio's aggregate bandwidth logs (`--bandwidth-log`): `agg-read_bw.log`,
//! `agg-write_bw.log` and `agg-trim_bw.log` in the working directory, one line per interval
//! of the run's per-second series of every job together, in fio's windowed layout:
//!
//! ```text
//! 1000, 57112, 0, 0, 0
//! ```
//!
//! time at the end of the interval (ms after the first test's measurement started; a later
//! test's intervals follow the earlier tests' measured time), KiB/s, direction (0 read,
//! 1 write, 2 trim), block size and priority 0. An interval without I/O of a direction has no
//! line in its file; a direction the run never issued leaves its file empty.

use crate::gate::replace::{OutputError, OutputFile};
use crate::result::{DirectionResult, RunResult};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The three files, by direction number.
pub const AGGREGATE_LOG_NAMES: [&str; 3] =
    ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"];

/// Writes the three aggregate bandwidth logs of `result` into `directory`, each through an
/// [`OutputFile`]; returns the files written.
pub fn write_aggregate_logs(
    result: &RunResult,
    directory: &Path,
) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    for (number, name) in AGGREGATE_LOG_NAMES.iter().enumerate() {
        let path = directory.join(name);
        OutputFile::check(&path)?.write(|out| write_aggregate_log(result, number as u8, out))?;
        written.push(path);
    }
    Ok(written)
}

/// Writes the aggregate bandwidth log of one direction (0 read, 1 write, 2 trim).
pub fn write_aggregate_log(
    result: &RunResult,
    direction: u8,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut offset_ns = 0u64;
    for test in &result.tests {
        let figures: &DirectionResult = match direction {
            0 => &test.read,
            1 => &test.write,
            _ => &test.trim,
        };
        for point in figures.series.iter().filter(|point| point.bytes > 0) {
            let end_ns = offset_ns + point.start_ns + point.duration_ns;
            let kib_per_second =
                point.bytes as f64 * 1e9 / point.duration_ns.max(1) as f64 / 1024.0;
            writeln!(
                out,
                "{}, {}, {direction}, 0, 0",
                (end_ns + 500_000) / 1_000_000,
                kib_per_second.round() as u64
            )?;
        }
        offset_ns += test.measured_ns;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::fixtures::mixed;

    #[test]
    fn every_interval_with_io_has_a_line() {
        let result = mixed();
        let mut out = Vec::new();
        write_aggregate_log(result, 1, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let expected: usize = result
            .tests
            .iter()
            .map(|test| test.write.series.iter().filter(|p| p.bytes > 0).count())
            .sum();
        assert_eq!(text.lines().count(), expected);
        let kib: u64 = text
            .lines()
            .take(test_lines(result))
            .map(|line| line.split(", ").nth(1).unwrap().parse::<u64>().unwrap())
            .sum();
        let bytes = result.tests[0].write.bytes;
        assert!(kib.abs_diff(bytes / 1024) <= 2, "{kib} vs {}", bytes / 1024);
        assert!(text.lines().all(|line| line.ends_with(", 1, 0, 0")));
    }

    fn test_lines(result: &RunResult) -> usize {
        result.tests[0]
            .write
            .series
            .iter()
            .filter(|p| p.bytes > 0)
            .count()
    }
}
