//! The I/O logs jobs record (fio's `write_iolog`): every I/O a job's workers completed in the
//! measured time, in the order they were issued, as a fio version 3 I/O log (fio's HOWTO,
//! "Trace file format") that fio's `read_iolog` and iopath's replay read back.
//!
//! Each file of the job is added and opened at time 0, each I/O is a line
//! `MICROSECONDS FILE read|write|trim OFFSET LENGTH` (its issue time after the start of the
//! measurement), and each file is closed at the time of the last I/O. A log is written only to a
//! path where no file exists yet (created with `O_EXCL`, never through a link): iopath never
//! replaces a file it did not write.
//!
//! ```
//! use iopath::report::fio_iolog::write_iolog_text;
//! use iopath::result::io_log::{IoLogRecords, LoggedIo};
//! use iopath::result::Direction;
//! let io = |issued_ns, offset| LoggedIo { completed_ns: issued_ns + 500, issued_ns, latency_ns: 500,
//!     submission_ns: 0, offset, length: 4096, direction: Direction::Write, file: 0 };
//! let records = IoLogRecords {
//!     ios: vec![io(9_000, 4096), io(2_000, 0)],
//!     files: vec!["data".into()],
//!     ..IoLogRecords::default()
//! };
//! let mut out = Vec::new();
//! write_iolog_text(&[&records], &mut out)?;
//! assert_eq!(String::from_utf8(out)?, "fio version 3 iolog\n0 data add\n0 data open\n\
//!     2 data write 0 4096\n9 data write 4096 4096\n9 data close\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::result::RunResult;
use crate::result::io_log::{IoLogRecords, LoggedIo};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

/// Why an I/O log could not be written. Names the path.
#[derive(Debug, thiserror::Error)]
pub enum IologWriteError {
    /// Creating or writing the file failed (it exists already, or its directory cannot be
    /// written).
    #[error("{path}: {source}", path = path.display())]
    Write {
        /// The log's path.
        path: PathBuf,
        /// Cause.
        source: io::Error,
    },
}

/// Writes the I/O log of the workers `records` (of one job) to `out`.
pub fn write_iolog_text(records: &[&IoLogRecords], out: &mut dyn Write) -> io::Result<()> {
    let mut names: Vec<&str> = Vec::new();
    let mut ios: Vec<(&LoggedIo, usize)> = Vec::new();
    for worker in records {
        let mut index_of = Vec::with_capacity(worker.files.len());
        for name in &worker.files {
            if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(io::Error::other(format!(
                    "the file name \"{}\" holds white space or control characters, which an I/O log cannot carry",
                    crate::text::escape::escape_controls(name)
                )));
            }
            let index = match names.iter().position(|known| known == name) {
                Some(index) => index,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            };
            index_of.push(index);
        }
        for io in &worker.ios {
            if let Some(&name) = index_of.get(io.file as usize) {
                ios.push((io, name));
            }
        }
    }
    ios.sort_by_key(|(io, _)| io.issued_ns);
    writeln!(out, "fio version 3 iolog")?;
    for name in &names {
        writeln!(out, "0 {name} add")?;
        writeln!(out, "0 {name} open")?;
    }
    let mut last_us = 0;
    for (io, name) in &ios {
        let at_us = io.issued_ns / 1000;
        last_us = at_us;
        writeln!(
            out,
            "{at_us} {} {} {} {}",
            names[*name],
            io.direction.name(),
            io.offset,
            io.length
        )?;
    }
    for name in &names {
        writeln!(out, "{last_us} {name} close")?;
    }
    Ok(())
}

/// Writes the I/O log of every job of `result` that asks for one (`write_iolog`), from
/// `records` (per test, each worker's records with the index of its job in the test); returns
/// the paths written. Relative paths are relative to the working directory, as in fio.
pub fn write_iologs(
    result: &RunResult,
    records: &[Vec<(usize, IoLogRecords)>],
) -> Result<Vec<PathBuf>, IologWriteError> {
    let mut logs: BTreeMap<(usize, usize), (PathBuf, Vec<&IoLogRecords>)> = BTreeMap::new();
    for (test_index, (test, workers)) in result.tests.iter().zip(records).enumerate() {
        for (job_index, worker) in workers {
            let Some(path) = test
                .jobs
                .get(*job_index)
                .and_then(|job| job.workload.controls.logs.as_ref())
                .and_then(|logs| logs.iolog.as_ref())
            else {
                continue;
            };
            logs.entry((test_index, *job_index))
                .or_insert_with(|| (PathBuf::from(path), Vec::new()))
                .1
                .push(worker);
        }
    }
    let mut written = Vec::new();
    for (path, workers) in logs.into_values() {
        let fail = |source| IologWriteError::Write {
            path: path.clone(),
            source,
        };
        let mut text = Vec::new();
        write_iolog_text(&workers, &mut text).map_err(fail)?;
        crate::gate::created::write_new(&path, &text).map_err(fail)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Direction;

    fn io(issued_ns: u64, file: u32, direction: Direction) -> LoggedIo {
        LoggedIo {
            completed_ns: issued_ns + 10,
            issued_ns,
            latency_ns: 10,
            submission_ns: 0,
            offset: issued_ns,
            length: 512,
            direction,
            file,
        }
    }

    #[test]
    fn workers_of_a_job_merge_in_issue_order_over_their_files() {
        let first = IoLogRecords {
            ios: vec![io(5_000, 1, Direction::Trim), io(1_000, 0, Direction::Read)],
            files: vec!["/a".into(), "/b".into()],
            ..IoLogRecords::default()
        };
        let second = IoLogRecords {
            ios: vec![io(3_000, 0, Direction::Write)],
            files: vec!["/b".into()],
            ..IoLogRecords::default()
        };
        let mut out = Vec::new();
        write_iolog_text(&[&first, &second], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "fio version 3 iolog\n0 /a add\n0 /a open\n0 /b add\n0 /b open\n\
             1 /a read 1000 512\n3 /b write 3000 512\n5 /b trim 5000 512\n5 /a close\n5 /b close\n"
        );
        // What iopath writes, iopath reads back.
        let log = crate::input::fio::iolog::parse_iolog(&text).unwrap();
        assert_eq!(log.ios.len(), 3);
        assert_eq!(log.ios[1].at_us, 3);
    }

    #[test]
    fn a_name_with_white_space_cannot_be_logged() {
        let records = IoLogRecords {
            ios: vec![io(0, 0, Direction::Read)],
            files: vec!["a b".into()],
            ..IoLogRecords::default()
        };
        let error = write_iolog_text(&[&records], &mut Vec::new()).unwrap_err();
        assert!(error.to_string().contains("white space"), "{error}");
    }
}
