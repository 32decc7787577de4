//! The I/O trace of a fio job run through the binary (`--trace-io`): one line per issued I/O
//! with its test, worker, direction, offset, length, target and the worker's I/Os in flight
//! once it was issued.

use crate::common::run_in;
use serde_json::Value;
use std::path::Path;

/// One issued I/O of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traced {
    pub test: u32,
    pub worker: u32,
    pub write: bool,
    pub offset: u64,
    pub length: u64,
    /// Index of its file in the run's target list.
    pub target: u32,
    /// The worker's I/Os in flight once it was issued, itself included.
    pub in_flight: u32,
}

/// Runs `job` (written to DIR/job.fio) with `extra` arguments and the I/O trace; returns the
/// trace and the JSON result.
pub fn traced(dir: &Path, job: &str, extra: &[&str]) -> (Vec<Traced>, Value) {
    let (ios, json, _) = traced_with_stderr(dir, job, extra);
    (ios, json)
}

/// [`traced`], with what the run printed on standard error (its notes and warnings).
pub fn traced_with_stderr(dir: &Path, job: &str, extra: &[&str]) -> (Vec<Traced>, Value, String) {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let trace = dir.join("trace.csv");
    let mut args = vec!["--job", "job.fio", "--trace-io", trace.to_str().unwrap()];
    args.extend_from_slice(extra);
    let outcome = run_in(dir, &args);
    assert_eq!(outcome.status, 0, "{}", outcome.stderr);
    let ios = read_trace(&trace);
    (ios, outcome.json.expect("a JSON result"), outcome.stderr)
}

/// Reads a trace file written by `--trace-io`.
pub fn read_trace(path: &Path) -> Vec<Traced> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("test,worker,direction,offset,length,target,in_flight")
    );
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            Traced {
                test: fields[0].parse().unwrap(),
                worker: fields[1].parse().unwrap(),
                write: fields[2] == "write",
                offset: fields[3].parse().unwrap(),
                length: fields[4].parse().unwrap(),
                target: fields[5].parse().unwrap(),
                in_flight: fields[6].parse().unwrap(),
            }
        })
        .collect()
}
