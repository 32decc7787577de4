//! The summary form of a test: what a multi-client result keeps of each client and each
//! host. Each direction keeps its counts, bytes, rates, latency summary (its percentiles
//! were computed from the whole histogram before it was summarised) and errors; its
//! histogram keeps its count and exact moments but no buckets; series, latency splits and
//! server series go, and a client's jobs (a host keeps its jobs, summarised the same way). A
//! test so summarised is a few KB whatever the run's length.
//!
//! ```
//! use iopath::stats::summary::summarise_test;
//! # let mut test: iopath::result::TestResult = serde_json::from_str(include_str!(
//! #     "../../tests/fixtures/results/small.json"))
//! #     .map(|run: iopath::result::RunResult| run.tests[0].clone()).unwrap();
//! let p99 = test.total.latency.percentile("99");
//! summarise_test(&mut test);
//! assert!(test.jobs.is_empty() && test.total.series.is_empty());
//! assert!(test.total.histogram.buckets.is_empty());
//! assert_eq!(test.total.latency.percentile("99"), p99);
//! ```

use crate::result::{DirectionResult, TestResult};

/// Reduces `test` to its summary form (see the module's documentation): a client's.
pub fn summarise_test(test: &mut TestResult) {
    test.jobs = Vec::new();
    summarise_host_test(test);
}

/// Reduces `test` to its summary form, keeping its jobs in summary form too: a host's (fio's
/// client/server JSON lists each host's jobs).
pub fn summarise_host_test(test: &mut TestResult) {
    drop_series(test);
    for direction in directions(test) {
        direction.histogram.buckets = Vec::new();
        direction.split = None;
    }
}

/// Drops what grows with the run's length (the series of the test and its jobs, its servers'
/// series) and keeps the histograms: what a further exact merge needs.
pub fn drop_series(test: &mut TestResult) {
    test.server_metrics = Vec::new();
    for direction in directions(test) {
        direction.series = Vec::new();
    }
}

/// Every direction of `test` and of its jobs.
fn directions(test: &mut TestResult) -> impl Iterator<Item = &mut DirectionResult> {
    let jobs = test
        .jobs
        .iter_mut()
        .flat_map(|job| [&mut job.read, &mut job.write, &mut job.trim, &mut job.total]);
    [
        &mut test.read,
        &mut test.write,
        &mut test.trim,
        &mut test.total,
    ]
    .into_iter()
    .chain(jobs)
}
