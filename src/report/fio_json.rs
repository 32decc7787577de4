//! fio 3.x's JSON output (`--output-format json` and `json+`), written from a [`RunResult`] so
//! that tools built for fio read iopath's results: fio-plot, fio's own
//! `fio_jsonplus_clat2csv`, dashboards that parse fio's `jobs` array.
//!
//! The layout is fio 3.33's. Each iopath job of each test becomes one entry of `jobs`, with
//! the figures of all its worker threads together, as fio reports a job with
//! `group_reporting`. What iopath does not measure is written the way fio writes a statistic
//! without samples (zeros), so that readers find every key they expect. The mapping, field by
//! field, and every deviation are in docs/reports.md ("Formats other tools read").
//!
//! A multi-client run (docs/multi-host.md) is written in the layout of fio's client/server
//! mode: `client_stats` instead of `jobs`, holding each host's jobs (with `hostname`) and then
//! the merged jobs of every client, named "All clients".
//!
//! Latency is measured from submission to completion, which fio calls the total latency
//! (`lat_ns`). Where the engine hands requests over apart from completing them (io_uring,
//! NBD, null), it is split at the moment the hand-over returned: `slat_ns` before, `clat_ns`
//! after, and their means add up to `lat_ns`'s. Where it does not (the sync engines; iSCSI,
//! NFS and SMB, not split yet), `clat_ns` carries the same figures as `lat_ns` and `slat_ns` has no samples (all
//! zeros, as fio writes a statistic it did not collect). Percentiles come from the same histogram fio uses
//! (64 buckets per power of two), so `json+`'s `bins` reproduce them exactly.
//!
//! ```no_run
//! use iopath::report::{fio_json::write_fio_json, json::read_json, model::Report};
//! let result = read_json(&std::fs::read_to_string("out.json")?)?;
//! write_fio_json(Report::of_run(&result).run(), true, &mut std::io::stdout())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::model::RunReport;
use crate::host::time::{format_ctime, parse_rfc3339};
use crate::result::{
    DirectionResult, IntervalPoint, JobResult, LatencySummary, RunResult, SparseHistogram,
    TestResult, VerificationResult,
};
use crate::stats::histogram::{LatencyHistogram, SUB_BUCKET_BITS, bucket_bounds};
use crate::units::format_size;
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The percentiles fio reports by default, in its order.
const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Buckets of fio's latency histogram: 29 groups of 64. Latencies beyond the last bucket's
/// range (about 17.2 s) are counted in the last bucket, as fio does.
const FIO_HISTOGRAM_BUCKETS: usize = 1856;

/// Writes `result` in fio 3.x's JSON layout (`json+` when `plus`: with `bins`, the latency
/// histogram, under every `clat_ns` that has samples), followed by a newline.
pub fn write_fio_json(report: &RunReport<'_>, plus: bool, out: &mut dyn Write) -> io::Result<()> {
    let report = build_report(report, plus);
    serde_json::to_writer_pretty(&mut *out, &report)?;
    writeln!(out)
}

/// A JSON object whose keys keep the order they were added in (fio's order).
struct Ordered<V>(Vec<(String, V)>);

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<V> Ordered<V> {
    fn from_pairs<K: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Ordered(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

/// The top-level object.
#[derive(serde::Serialize)]
struct FioReport {
    #[serde(rename = "fio version")]
    fio_version: String,
    timestamp: u64,
    timestamp_ms: u64,
    time: String,
    #[serde(rename = "global options")]
    global_options: Ordered<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jobs: Option<Vec<FioJob>>,
    /// A multi-client run: fio's client/server layout (each host's jobs, then "All clients").
    #[serde(skip_serializing_if = "Option::is_none")]
    client_stats: Option<Vec<FioJob>>,
    disk_util: Vec<serde_json::Value>,
}

/// One entry of `jobs`.
#[derive(serde::Serialize)]
struct FioJob {
    jobname: String,
    groupid: u32,
    error: i32,
    eta: u64,
    elapsed: u64,
    #[serde(rename = "job options")]
    job_options: Ordered<String>,
    read: FioDirection,
    write: FioDirection,
    trim: FioDirection,
    sync: FioSync,
    job_runtime: u64,
    usr_cpu: f64,
    sys_cpu: f64,
    ctx: u64,
    majf: u64,
    minf: u64,
    iodepth_level: Ordered<f64>,
    iodepth_submit: Ordered<f64>,
    iodepth_complete: Ordered<f64>,
    latency_ns: Ordered<f64>,
    latency_us: Ordered<f64>,
    latency_ms: Ordered<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_err: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_error: Option<i32>,
    latency_depth: u32,
    latency_target: u64,
    latency_percentile: f64,
    latency_window: u64,
    desc: String,
    /// The client's host (client/server layout only).
    #[serde(skip_serializing_if = "Option::is_none")]
    hostname: Option<String>,
    /// fio's server port; iopath's clients listen on none (client/server layout only: 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    port: Option<u16>,
}

/// `read`, `write` or `trim` of a job.
#[derive(serde::Serialize)]
struct FioDirection {
    io_bytes: u64,
    io_kbytes: u64,
    bw_bytes: u64,
    bw: u64,
    iops: f64,
    runtime: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    slat_ns: FioLatency,
    clat_ns: FioLatency,
    lat_ns: FioLatency,
    bw_min: u64,
    bw_max: u64,
    bw_agg: f64,
    bw_mean: f64,
    bw_dev: f64,
    bw_samples: u64,
    iops_min: u64,
    iops_max: u64,
    iops_mean: f64,
    iops_stddev: f64,
    iops_samples: u64,
}

/// `slat_ns`, `clat_ns` or `lat_ns`.
#[derive(serde::Serialize, Default)]
struct FioLatency {
    min: u64,
    max: u64,
    mean: f64,
    stddev: f64,
    #[serde(rename = "N")]
    samples: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    percentile: Option<Ordered<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bins: Option<Ordered<u64>>,
}

/// `sync`: the final fdatasync, when there was one.
#[derive(serde::Serialize)]
struct FioSync {
    total_ios: u64,
    lat_ns: FioLatency,
}

/// What fio calls a group's aggregate: the group's bytes over its longest runtime.
#[derive(Clone, Copy, Default)]
struct GroupTotals {
    bytes: [u64; 3],
    longest_ns: [u64; 3],
}

impl GroupTotals {
    fn bytes_per_second(&self, direction: usize) -> f64 {
        rate(self.bytes[direction], self.longest_ns[direction])
    }
}

fn build_report(report: &RunReport<'_>, plus: bool) -> FioReport {
    let result = report.result;
    let timestamp = parse_rfc3339(&result.started_at).unwrap_or(0);
    let (jobs, client_stats) = match &result.cluster {
        None => (Some(build_jobs(result, &result.tests, plus)), None),
        Some(_) => {
            let mut clients = Vec::new();
            for host in &report.hosts {
                let tests = host.tests.iter().flatten();
                clients.extend(
                    build_jobs(result, tests, plus)
                        .into_iter()
                        .map(|job| FioJob {
                            hostname: Some(host.name.to_string()),
                            port: Some(0),
                            ..job
                        }),
                );
            }
            clients.extend(
                build_jobs(result, &result.tests, plus)
                    .into_iter()
                    .map(|job| FioJob {
                        jobname: "All clients".to_string(),
                        ..job
                    }),
            );
            (None, Some(clients))
        }
    };
    let listed = jobs.as_ref().or(client_stats.as_ref());
    FioReport {
        fio_version: format!("iopath-{}", result.iopath_version),
        timestamp,
        timestamp_ms: timestamp * 1000,
        time: format_ctime(timestamp),
        global_options: shared_options(listed.map_or(&[][..], Vec::as_slice)),
        jobs,
        client_stats,
        disk_util: Vec::new(),
    }
}

/// One entry per job of each of `tests`, numbered into fio's reporting groups.
fn build_jobs<'t>(
    result: &RunResult,
    tests: impl IntoIterator<Item = &'t TestResult>,
    plus: bool,
) -> Vec<FioJob> {
    let mut jobs = Vec::new();
    let mut next_group = 0u32;
    for test in tests {
        let mut groups: BTreeMap<u32, (u32, GroupTotals)> = BTreeMap::new();
        for job in &test.jobs {
            let entry = groups.entry(job.group).or_insert_with(|| {
                next_group += 1;
                (next_group - 1, GroupTotals::default())
            });
            for (direction, figures) in [&job.read, &job.write, &job.trim].into_iter().enumerate() {
                if figures.io_count > 0 {
                    entry.1.bytes[direction] =
                        entry.1.bytes[direction].saturating_add(figures.bytes);
                    entry.1.longest_ns[direction] =
                        entry.1.longest_ns[direction].max(job.measured_ns);
                }
            }
        }
        for job in &test.jobs {
            let (groupid, totals) = groups[&job.group];
            jobs.push(build_job(result, test, job, groupid, &totals, plus));
        }
    }
    jobs
}

/// The options every job has with the same value (fio's `[global]` section); each job's own
/// `job options` still lists them, so that a job is complete on its own.
fn shared_options(jobs: &[FioJob]) -> Ordered<String> {
    let Some(first) = jobs.first() else {
        return Ordered(Vec::new());
    };
    Ordered(
        first
            .job_options
            .0
            .iter()
            .filter(|(key, _)| key != "name")
            .filter(|(key, value)| {
                jobs.iter().all(|job| {
                    job.job_options
                        .0
                        .iter()
                        .any(|(k, v)| k == key && v == value)
                })
            })
            .cloned()
            .collect(),
    )
}

fn build_job(
    result: &RunResult,
    test: &TestResult,
    job: &JobResult,
    groupid: u32,
    totals: &GroupTotals,
    plus: bool,
) -> FioJob {
    let cpu_share = job_cpu_share(test, job);
    let cpu_percent = |ns: u64| {
        if test.cpu.wall_ns == 0 {
            0.0
        } else {
            ns as f64 / test.cpu.wall_ns as f64 * 100.0 * cpu_share
        }
    };
    let first_errno = job
        .errors
        .first
        .first()
        .and_then(|record| errno_of(&record.error));
    let error = if job.errors.count > 0 {
        first_errno.unwrap_or(libc::EIO)
    } else {
        0
    };
    let continue_on_error =
        job.workload.continue_on_error || job.workload.error_policy.continue_on.contains(&true);
    let search = LatencySearchFields::of(job);
    FioJob {
        jobname: job.name.clone(),
        groupid,
        error,
        eta: 0,
        elapsed: job
            .ramp_ns
            .saturating_add(job.measured_ns)
            .div_ceil(1_000_000_000),
        job_options: Ordered::from_pairs(job_options(result, job)),
        read: with_read_back(
            direction(&job.read, job.measured_ns, totals.bytes_per_second(0), plus),
            job.verification.as_ref(),
            job.workload
                .verify
                .as_ref()
                .is_some_and(|verify| verify.backlog_writes.is_some()),
        ),
        write: direction(
            &job.write,
            job.measured_ns,
            totals.bytes_per_second(1),
            plus,
        ),
        trim: direction(&job.trim, job.measured_ns, totals.bytes_per_second(2), plus),
        sync: sync(job.fsync_ns, plus),
        job_runtime: ns_to_ms(job.measured_ns),
        usr_cpu: cpu_percent(test.cpu.user_ns),
        sys_cpu: cpu_percent(test.cpu.system_ns),
        ctx: 0,
        majf: 0,
        minf: 0,
        iodepth_level: depth_levels(job),
        iodepth_submit: batch_levels(),
        iodepth_complete: batch_levels(),
        latency_ns: latency_classes(&job.total.histogram, &NS_CLASSES),
        latency_us: latency_classes(&job.total.histogram, &US_CLASSES),
        latency_ms: latency_classes(&job.total.histogram, &MS_CLASSES),
        total_err: continue_on_error.then_some(job.errors.count),
        first_error: continue_on_error.then_some(first_errno.unwrap_or(0)),
        latency_depth: search.depth,
        latency_target: search.target_ns,
        latency_percentile: search.percentile,
        latency_window: search.window_us,
        desc: job.workload.summary(),
        hostname: None,
        port: None,
    }
}

/// The job's part of the test's CPU time (CPU is measured per test): its share of the test's
/// worker threads.
fn job_cpu_share(test: &TestResult, job: &JobResult) -> f64 {
    let threads: u64 = test.jobs.iter().map(|j| u64::from(j.worker_threads)).sum();
    if threads == 0 {
        1.0 / test.jobs.len().max(1) as f64
    } else {
        job.worker_threads as f64 / threads as f64
    }
}

/// The errno in "No space left on device (os error 28)".
fn errno_of(message: &str) -> Option<i32> {
    let (_, rest) = message.rsplit_once("(os error ")?;
    rest.split(')').next()?.trim().parse().ok()
}

fn ns_to_ms(ns: u64) -> u64 {
    ns.saturating_add(500_000) / 1_000_000
}

fn rate(amount: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        amount as f64 * 1e9 / ns as f64
    }
}

/// The options of a job, as fio job-file keys and values.
fn job_options(result: &RunResult, job: &JobResult) -> Vec<(&'static str, String)> {
    let workload = &job.workload;
    let mut options = vec![("name", job.name.clone())];
    let filenames: Vec<String> = job
        .target_indexes
        .iter()
        .filter_map(|&index| result.targets.get(index))
        .map(|target| target.path.replace(':', "\\:"))
        .collect();
    options.push(("filename", filenames.join(":")));

    let read = workload.access.read_percent().round() as u32;
    let random = workload.access.random_percent().round() as u32;
    let base = match (read, workload.trims(), workload.writes()) {
        (_, true, true) => "trimwrite",
        (_, true, false) => "trim",
        (100, ..) => "read",
        (0, ..) => "write",
        _ => "rw",
    };
    let pattern = if random == 0 {
        base.to_string()
    } else {
        format!("rand{base}")
    };
    options.push(("rw", pattern));
    if read != 0 && read != 100 {
        options.push(("rwmixread", read.to_string()));
    }
    if random != 0 && random != 100 {
        options.push(("percentage_random", random.to_string()));
    }
    match workload.access.single_size() {
        Some(size) => options.push(("bs", format_size(size))),
        None => {
            options.push((
                "bs",
                format!(
                    "{}-{}",
                    format_size(workload.access.min_size_bytes()),
                    format_size(workload.access.max_size_bytes())
                ),
            ));
            options.push(("bssplit", block_size_split(job)));
        }
    }
    options.push(("ioengine", fio_engine_name(&job.engine.name)));
    options.push(("iodepth", job.queue_depth_per_worker.to_string()));
    let targets = job.target_indexes.len().max(1) as u32;
    options.push(("numjobs", (job.worker_threads / targets).max(1).to_string()));
    options.push(("direct", u8::from(job.direct).to_string()));
    if let Some(size) = workload.region_size_bytes {
        options.push(("size", format_size(size)));
    }
    if workload.region_offset_bytes > 0 {
        options.push(("offset", format_size(workload.region_offset_bytes)));
    }
    match workload.length {
        crate::result::RunLength::Time { duration_ns } => {
            options.push(("runtime", fio_seconds(duration_ns)));
            options.push(("time_based", "1".into()));
        }
        crate::result::RunLength::Bytes {
            bytes,
            time_limit_ns,
        } => {
            options.push(("io_size", format_size(bytes)));
            if let Some(limit) = time_limit_ns {
                options.push(("runtime", fio_seconds(limit)));
            }
        }
    }
    if workload.ramp_ns > 0 {
        options.push(("ramp_time", fio_seconds(workload.ramp_ns)));
    }
    if let Some(limit) = workload.io_limit {
        options.push(("number_ios", limit.to_string()));
    }
    if workload.start_delay_ns > 0 {
        options.push(("startdelay", fio_seconds(workload.start_delay_ns)));
    }
    if let Some(rate) = workload.rate_bytes_per_second {
        options.push(("rate", format_size(rate)));
    }
    if let Some(rate) = workload.rate_iops {
        options.push(("rate_iops", rate.to_string()));
    }
    if workload.think_time_ns > 0 {
        options.push(("thinktime", (workload.think_time_ns / 1000).to_string()));
        if workload.think_time_blocks > 1 {
            options.push(("thinktime_blocks", workload.think_time_blocks.to_string()));
        }
    }
    if workload.sync_writes {
        options.push(("sync", "dsync".into()));
    }
    if let Some(every) = workload.fsync_every_writes {
        options.push(("fdatasync", every.to_string()));
    }
    if workload.fsync_at_end {
        options.push(("end_fsync", "1".into()));
    }
    if random > 0 && workload.distribution != crate::result::OffsetDistribution::Uniform {
        options.push(("random_distribution", workload.distribution.to_string()));
    }
    if workload.writes() {
        options.extend(workload.write_data.fio_options());
    }
    options.push(("randseed", workload.seed.to_string()));
    if workload.continue_on_error {
        options.push(("continue_on_error", "io".into()));
    } else if let Some(value) = continue_on_error_value(&workload.error_policy) {
        options.push(("continue_on_error", value.into()));
    }
    if job.worker_threads > 1 {
        options.push(("group_reporting", "1".into()));
    }
    options
}

/// fio's `continue_on_error` value for `policy`'s kinds (`None` when it continues on none).
fn continue_on_error_value(policy: &crate::result::ErrorPolicy) -> Option<&'static str> {
    match policy.continue_on {
        [false, false, false] => None,
        [true, false, false] => Some("read"),
        [false, true, false] => Some("write"),
        [true, true, false] => Some("io"),
        [false, false, true] => Some("verify"),
        _ => Some("all"),
    }
}

/// fio's `bssplit` (`4k/60:64k/40`): each size's share of the I/Os, adding up to 100.
fn block_size_split(job: &JobResult) -> String {
    let spec = &job.workload.access;
    let total = spec.total_weight().max(1);
    let mut shares: Vec<(u64, u64)> = Vec::new();
    for line in spec.active_lines() {
        match shares.iter_mut().find(|(size, _)| *size == line.size_bytes) {
            Some(share) => share.1 += line.weight as u64,
            None => shares.push((line.size_bytes, line.weight as u64)),
        }
    }
    let mut percents: Vec<(u64, u64)> = shares
        .iter()
        .map(|&(size, weight)| (size, weight * 100 / total))
        .collect();
    let missing = 100 - percents.iter().map(|(_, p)| p).sum::<u64>();
    if let Some(largest) = percents.iter_mut().max_by_key(|(_, p)| *p) {
        largest.1 += missing;
    }
    percents
        .iter()
        .map(|(size, percent)| format!("{}/{percent}", format_size(*size)))
        .collect::<Vec<_>>()
        .join(":")
}

/// fio's name of the engine that does what iopath's engine did.
fn fio_engine_name(name: &str) -> String {
    match name {
        "sync" => "psync".into(),
        "iscsi" => "libiscsi".into(),
        other => other.into(),
    }
}

/// A duration as fio reads it: whole seconds bare, otherwise milliseconds.
fn fio_seconds(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000_000) {
        (ns / 1_000_000_000).to_string()
    } else {
        format!("{}ms", ns_to_ms(ns))
    }
}

fn empty_direction() -> FioDirection {
    FioDirection {
        io_bytes: 0,
        io_kbytes: 0,
        bw_bytes: 0,
        bw: 0,
        iops: 0.0,
        runtime: 0,
        total_ios: 0,
        short_ios: 0,
        drop_ios: 0,
        slat_ns: FioLatency::default(),
        clat_ns: FioLatency::default(),
        lat_ns: FioLatency::default(),
        bw_min: 0,
        bw_max: 0,
        bw_agg: 0.0,
        bw_mean: 0.0,
        bw_dev: 0.0,
        bw_samples: 0,
        iops_min: 0,
        iops_max: 0,
        iops_mean: 0.0,
        iops_stddev: 0.0,
        iops_samples: 0,
    }
}

/// `read` with the verification read-back after the workload counted in its bytes and I/Os, as
/// fio counts it (its rates and latencies stay those of the measured reads). Not with a
/// verify backlog: fio's last pass then reads only the few blocks the backlog left, where
/// iopath's reads every written block again.
fn with_read_back(
    mut read: FioDirection,
    verification: Option<&VerificationResult>,
    backlog: bool,
) -> FioDirection {
    if let Some(verification) = verification.filter(|_| !backlog) {
        read.io_bytes += verification.read_back_bytes;
        read.io_kbytes = read.io_bytes >> 10;
        read.total_ios += verification.read_back_ios;
    }
    read
}

fn direction(
    figures: &DirectionResult,
    measured_ns: u64,
    group_bytes_per_second: f64,
    plus: bool,
) -> FioDirection {
    if figures.io_count == 0 {
        return empty_direction();
    }
    let bw_bytes = rate(figures.bytes, measured_ns) as u64;
    let intervals = full_intervals(&figures.series);
    let bandwidth = SampleStats::of(
        intervals
            .iter()
            .map(|point| (rate(point.bytes, point.duration_ns) / 1024.0).round() as u64),
    );
    let iops = SampleStats::of(
        intervals
            .iter()
            .map(|point| rate(point.io_count, point.duration_ns).round() as u64),
    );
    let group_kib = group_bytes_per_second / 1024.0;
    let bw_agg = if bandwidth.samples == 0 {
        0.0
    } else if group_bytes_per_second > 1024.0 {
        (bandwidth.mean * 100.0 / group_kib).min(100.0)
    } else {
        100.0
    };
    FioDirection {
        io_bytes: figures.bytes,
        io_kbytes: figures.bytes >> 10,
        bw_bytes,
        bw: bw_bytes / 1024,
        iops: rate(figures.io_count, measured_ns),
        runtime: ns_to_ms(measured_ns),
        total_ios: figures.io_count,
        short_ios: 0,
        drop_ios: 0,
        slat_ns: figures
            .split
            .as_ref()
            .map_or_else(FioLatency::default, |split| {
                latency(&split.submission, &split.submission_histogram, false, false)
            }),
        clat_ns: match &figures.split {
            Some(split) => latency(&split.completion, &split.completion_histogram, true, plus),
            None => latency(&figures.latency, &figures.histogram, true, plus),
        },
        lat_ns: latency(&figures.latency, &figures.histogram, false, false),
        bw_min: bandwidth.min,
        bw_max: bandwidth.max,
        bw_agg,
        bw_mean: bandwidth.mean,
        bw_dev: bandwidth.stddev,
        bw_samples: bandwidth.samples,
        iops_min: iops.min,
        iops_max: iops.max,
        iops_mean: iops.mean,
        iops_stddev: iops.stddev,
        iops_samples: iops.samples,
    }
}

/// The intervals that cover at least half of the longest one: a short last interval (the
/// tail of a byte-count run) would make an outlier of a rate sample.
fn full_intervals(series: &[IntervalPoint]) -> Vec<&IntervalPoint> {
    let longest = series.iter().map(|p| p.duration_ns).max().unwrap_or(0);
    series
        .iter()
        .filter(|p| p.duration_ns > 0 && p.duration_ns.saturating_mul(2) >= longest)
        .collect()
}

/// min / max / mean / sample standard deviation of per-interval rates, as fio keeps them.
struct SampleStats {
    min: u64,
    max: u64,
    mean: f64,
    stddev: f64,
    samples: u64,
}

impl SampleStats {
    fn of(values: impl Iterator<Item = u64>) -> Self {
        let values: Vec<u64> = values.collect();
        let samples = values.len() as u64;
        if samples == 0 {
            return SampleStats {
                min: 0,
                max: 0,
                mean: 0.0,
                stddev: 0.0,
                samples: 0,
            };
        }
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / samples as f64;
        let stddev = if samples > 1 {
            let squares: f64 = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
            (squares / (samples - 1) as f64).sqrt()
        } else {
            0.0
        };
        SampleStats {
            min: values.iter().copied().min().unwrap_or(0),
            max: values.iter().copied().max().unwrap_or(0),
            mean,
            stddev,
            samples,
        }
    }
}

fn latency(
    summary: &LatencySummary,
    histogram: &SparseHistogram,
    percentiles: bool,
    bins: bool,
) -> FioLatency {
    if histogram.count == 0 {
        return FioLatency::default();
    }
    let fio = fio_bins(histogram);
    FioLatency {
        min: summary.min_ns,
        max: summary.max_ns,
        mean: summary.mean_ns,
        stddev: summary.stddev_ns,
        samples: histogram.count,
        percentile: (percentiles && !fio.is_empty()).then(|| fio_percentiles(&fio)),
        bins: (bins && !fio.is_empty()).then(|| {
            Ordered::from_pairs(fio.iter().map(|&(value, count)| (value.to_string(), count)))
        }),
    }
}

fn sync(fsync_ns: u64, plus: bool) -> FioSync {
    if fsync_ns == 0 {
        return FioSync {
            total_ios: 0,
            lat_ns: FioLatency::default(),
        };
    }
    let mut histogram = LatencyHistogram::new();
    histogram.record(fsync_ns);
    let summary = LatencySummary::from_histogram(&histogram);
    FioSync {
        total_ios: 1,
        lat_ns: latency(&summary, &histogram.to_sparse(), true, plus),
    }
}

/// Index of fio's histogram bucket that counts `value_ns` (fio's `plat_val_to_idx`): values
/// below 128 exactly, then 64 buckets per power of two, the last bucket open-ended.
fn fio_bucket_index(value_ns: u64) -> usize {
    if value_ns < 128 {
        return value_ns as usize;
    }
    let most_significant_bit = 63 - value_ns.leading_zeros();
    let error_bits = most_significant_bit - 6;
    let index = (((error_bits + 1) as u64) << 6) + ((value_ns >> error_bits) & 63);
    (index as usize).min(FIO_HISTOGRAM_BUCKETS - 1)
}

/// The value fio reports for bucket `index` (fio's `plat_idx_to_val`): the middle of the
/// bucket, as the bucket's key in `bins` and as a percentile.
fn fio_bucket_value(index: usize) -> u64 {
    if index < 128 {
        return index as u64;
    }
    let error_bits = (index >> 6) as u32 - 1;
    let base = 1u64 << (error_bits + 6);
    let width = 1u64 << error_bits;
    base + (index as u64 % 64) * width + width / 2
}

/// iopath's histogram as fio's `bins`: `(bucket value, count)` of every non-empty fio bucket,
/// smallest first.
///
/// Both histograms split every power of two into 64 buckets from 128 ns up, so below fio's
/// last bucket each iopath bucket is exactly one fio bucket; the conversion maps each
/// bucket's lower bound to fio's bucket and adds counts that land in the same one (only the
/// last, open-ended bucket collects several). Empty when the stored layout is not this
/// build's.
fn fio_bins(histogram: &SparseHistogram) -> Vec<(u64, u64)> {
    if histogram.sub_bucket_bits != SUB_BUCKET_BITS {
        return Vec::new();
    }
    let mut counts: BTreeMap<usize, u64> = BTreeMap::new();
    for [index, count] in &histogram.buckets {
        let (low, _) = bucket_bounds(*index as usize);
        let bin = counts.entry(fio_bucket_index(low)).or_default();
        *bin = bin.saturating_add(*count);
    }
    counts
        .into_iter()
        .filter(|(_, count)| *count > 0)
        .map(|(index, count)| (fio_bucket_value(index), count))
        .collect()
}

/// fio's `percentile` map from `bins`: for each percentile p, the value of the first bucket
/// at which the running count reaches p % of all samples, keyed as fio prints it ("99.900000").
fn fio_percentiles(bins: &[(u64, u64)]) -> Ordered<u64> {
    let total = bins
        .iter()
        .fold(0u64, |total, (_, count)| total.saturating_add(*count));
    let mut values = Vec::with_capacity(FIO_PERCENTILES.len());
    let mut running = 0u64;
    let mut next = 0;
    for &(value, count) in bins {
        running = running.saturating_add(count);
        while next < FIO_PERCENTILES.len()
            && running as f64 >= FIO_PERCENTILES[next] / 100.0 * total as f64
        {
            values.push((format!("{:.6}", FIO_PERCENTILES[next]), value));
            next += 1;
        }
    }
    Ordered(values)
}

/// fio's `latency_ns`, `latency_us` and `latency_ms` classes: key and range in ns (end
/// exclusive). A value is counted in nanoseconds below 1 µs, in microseconds below 1 ms and in
/// milliseconds above.
type LatencyClasses = [(&'static str, u64, u64)];

const NS_CLASSES: [(&str, u64, u64); 10] = [
    ("2", 0, 2),
    ("4", 2, 4),
    ("10", 4, 10),
    ("20", 10, 20),
    ("50", 20, 50),
    ("100", 50, 100),
    ("250", 100, 250),
    ("500", 250, 500),
    ("750", 500, 750),
    ("1000", 750, 1000),
];

const US_CLASSES: [(&str, u64, u64); 10] = [
    ("2", 1_000, 2_000),
    ("4", 2_000, 4_000),
    ("10", 4_000, 10_000),
    ("20", 10_000, 20_000),
    ("50", 20_000, 50_000),
    ("100", 50_000, 100_000),
    ("250", 100_000, 250_000),
    ("500", 250_000, 500_000),
    ("750", 500_000, 750_000),
    ("1000", 750_000, 1_000_000),
];

const MS_CLASSES: [(&str, u64, u64); 12] = [
    ("2", 1_000_000, 2_000_000),
    ("4", 2_000_000, 4_000_000),
    ("10", 4_000_000, 10_000_000),
    ("20", 10_000_000, 20_000_000),
    ("50", 20_000_000, 50_000_000),
    ("100", 50_000_000, 100_000_000),
    ("250", 100_000_000, 250_000_000),
    ("500", 250_000_000, 500_000_000),
    ("750", 500_000_000, 750_000_000),
    ("1000", 750_000_000, 1_000_000_000),
    ("2000", 1_000_000_000, 2_000_000_000),
    (">=2000", 2_000_000_000, u64::MAX),
];

/// Percentage of all I/Os in each latency class, from the histogram. A bucket that straddles a
/// class boundary is split in proportion, its samples taken as spread evenly over the part of
/// the bucket inside the exact [min, max]. As fio does, a class holding at least one I/O shows
/// at least 0.01 %.
fn latency_classes(histogram: &SparseHistogram, classes: &LatencyClasses) -> Ordered<f64> {
    let total = histogram.count as f64;
    Ordered::from_pairs(classes.iter().map(|&(key, low, high)| {
        let count = samples_below(histogram, high) - samples_below(histogram, low);
        let percent = if total == 0.0 || count < 0.5 {
            0.0
        } else {
            (count / total * 100.0).max(0.01)
        };
        (key, percent)
    }))
}

/// Estimated number of samples below `threshold_ns`.
fn samples_below(histogram: &SparseHistogram, threshold_ns: u64) -> f64 {
    if histogram.count == 0
        || histogram.sub_bucket_bits != SUB_BUCKET_BITS
        || threshold_ns <= histogram.min_ns
    {
        return 0.0;
    }
    if threshold_ns > histogram.max_ns {
        return histogram.count as f64;
    }
    let mut below = 0.0;
    for [index, count] in &histogram.buckets {
        let (low, width) = bucket_bounds(*index as usize);
        let start = low.max(histogram.min_ns);
        let end = low
            .saturating_add(width)
            .min(histogram.max_ns.saturating_add(1));
        if end <= start || threshold_ns >= end {
            below += *count as f64;
        } else if threshold_ns > start {
            below += *count as f64 * (threshold_ns - start) as f64 / (end - start) as f64;
        }
    }
    below
}

/// fio's `latency_depth`, `latency_target`, `latency_percentile` and `latency_window` of one
/// job: with a latency-target search, the depth its last worker ended at (fio writes the last
/// clone's) and the target (ns), percentile and window (µs) it searched with; without one, the
/// job's queue depth, no target, 100 % and no window, as fio writes them.
struct LatencySearchFields {
    depth: u32,
    target_ns: u64,
    percentile: f64,
    window_us: u64,
}

impl LatencySearchFields {
    fn of(job: &JobResult) -> Self {
        match &job.latency_target {
            Some(search) => LatencySearchFields {
                depth: search
                    .depths
                    .last()
                    .copied()
                    .unwrap_or(job.queue_depth_per_worker),
                target_ns: search.target_ns,
                percentile: search.percentile,
                window_us: search.window_ns / 1_000,
            },
            None => LatencySearchFields {
                depth: job.queue_depth_per_worker,
                target_ns: 0,
                percentile: 100.0,
                window_us: 0,
            },
        }
    }
}

/// fio's `iodepth_level`: iopath keeps each worker's queue at its depth and does not sample
/// it, so the whole share is put at that depth: the configured one, or the one a latency-target
/// search ended at (the depth of the job's figures).
fn depth_levels(job: &JobResult) -> Ordered<f64> {
    let depth = LatencySearchFields::of(job).depth;
    let level = match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    };
    let done = job.total.io_count > 0;
    Ordered::from_pairs(
        ["1", "2", "4", "8", "16", "32", ">=64"]
            .into_iter()
            .enumerate()
            .map(|(index, key)| (key, if done && index == level { 100.0 } else { 0.0 })),
    )
}

/// fio's `iodepth_submit` / `iodepth_complete`: not measured by iopath, written as fio writes
/// a distribution without samples.
fn batch_levels() -> Ordered<f64> {
    Ordered::from_pairs(
        ["0", "4", "8", "16", "32", "64", ">=64"]
            .into_iter()
            .map(|key| (key, 0.0)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Report;
    use crate::stats::histogram::{BUCKET_COUNT, bucket_index};
    use crate::support::fixtures::mixed;
    use serde_json::Value;

    fn fio_json(plus: bool) -> Value {
        let mut out = Vec::new();
        write_fio_json(Report::of_run(mixed()).run(), plus, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn top_level_and_one_job_per_iopath_job() {
        let json = fio_json(false);
        for key in [
            "fio version",
            "timestamp",
            "timestamp_ms",
            "time",
            "global options",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert!(json["disk_util"].as_array().unwrap().is_empty());
        let jobs = json["jobs"].as_array().unwrap();
        let names: Vec<&str> = jobs
            .iter()
            .map(|j| j["jobname"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["mixed", "reader", "writer"]);
        let groups: Vec<u64> = jobs
            .iter()
            .map(|j| j["groupid"].as_u64().unwrap())
            .collect();
        assert_eq!(groups, [0, 1, 1]);
        let result = mixed();
        assert_eq!(
            json["timestamp"].as_u64(),
            parse_rfc3339(&result.started_at)
        );
        for job in jobs {
            let options = &job["job options"];
            for key in ["iodepth", "numjobs", "bs", "rw"] {
                assert!(options[key].is_string(), "{key} in {options}");
            }
            for key in ["read", "write", "trim"] {
                for latency in ["slat_ns", "clat_ns", "lat_ns"] {
                    assert!(job[key][latency]["N"].is_u64());
                }
            }
        }
        assert_eq!(jobs[0]["job options"]["rw"], "randrw");
        assert_eq!(jobs[0]["job options"]["rwmixread"], "50");
        assert_eq!(jobs[0]["job options"]["iodepth"], "4");
        assert_eq!(jobs[0]["job options"]["bs"], "4k");
        assert_eq!(jobs[1]["job options"]["rw"], "read");
        assert_eq!(jobs[1]["job options"]["bs"], "64k");
        assert_eq!(jobs[2]["job options"]["rw"], "randwrite");
        assert_eq!(json["global options"]["runtime"], Value::Null);
        assert_eq!(json["global options"]["time_based"], "1");
    }

    #[test]
    fn the_read_back_after_the_workload_counts_as_reads_as_in_fio() {
        let mut result = mixed().clone();
        let job = &mut result.tests[0].jobs[0];
        let (bytes, ios) = (job.read.bytes, job.read.io_count);
        job.verification = Some(VerificationResult {
            read_back_ios: 128,
            read_back_bytes: 512 << 10,
            ..VerificationResult::default()
        });
        let read = |result: &RunResult| {
            let mut out = Vec::new();
            write_fio_json(Report::of_run(result).run(), false, &mut out).unwrap();
            let json: Value = serde_json::from_slice(&out).unwrap();
            json["jobs"][0]["read"].clone()
        };
        let counted = read(&result);
        assert_eq!(counted["io_bytes"], bytes + (512 << 10));
        assert_eq!(counted["io_kbytes"], (bytes + (512 << 10)) >> 10);
        assert_eq!(counted["total_ios"], ios + 128);
        // With a backlog fio's last pass reads only what the backlog left: not counted.
        let job = &mut result.tests[0].jobs[0];
        job.workload.verify = Some(crate::result::VerifySettings {
            backlog_writes: Some(32),
            ..Default::default()
        });
        assert_eq!(read(&result)["io_bytes"], bytes);
    }

    #[test]
    fn directions_match_the_result() {
        let json = fio_json(false);
        let job = &mixed().tests[0].jobs[0];
        let fio = &json["jobs"][0];
        for (key, figures) in [("read", &job.read), ("write", &job.write)] {
            let direction = &fio[key];
            assert_eq!(direction["io_bytes"], figures.bytes);
            assert_eq!(direction["io_kbytes"], figures.bytes / 1024);
            assert_eq!(direction["total_ios"], figures.io_count);
            assert_eq!(direction["runtime"], job.measured_ns / 1_000_000);
            let bw_bytes = direction["bw_bytes"].as_f64().unwrap();
            assert!((bw_bytes - figures.bytes_per_second).abs() <= 1.0);
            assert_eq!(direction["bw"].as_u64().unwrap(), bw_bytes as u64 / 1024);
            assert!((direction["iops"].as_f64().unwrap() - figures.iops).abs() < 1e-6);
            for latency in ["clat_ns", "lat_ns"] {
                assert_eq!(direction[latency]["min"], figures.latency.min_ns);
                assert_eq!(direction[latency]["max"], figures.latency.max_ns);
                assert_eq!(direction[latency]["N"], figures.io_count);
            }
            assert_eq!(direction["slat_ns"]["N"], 0);
            assert_eq!(direction["slat_ns"]["max"], 0);
            assert!(direction["lat_ns"].get("percentile").is_none());
            assert!(direction["clat_ns"].get("bins").is_none());
            let percentiles = direction["clat_ns"]["percentile"].as_object().unwrap();
            assert_eq!(percentiles.len(), FIO_PERCENTILES.len());
            for (fio_key, own_key) in [("50.000000", "50"), ("99.000000", "99")] {
                let fio_value = percentiles[fio_key].as_f64().unwrap();
                let own = figures.latency.percentile(own_key) as f64;
                assert!(
                    (fio_value - own).abs() / own <= 1.0 / 64.0,
                    "{fio_key}: {fio_value} vs {own}"
                );
            }
            // Two whole seconds: two rate samples whose mean is the run's rate.
            assert_eq!(direction["bw_samples"], 2);
            assert_eq!(direction["iops_samples"], 2);
            let mean = direction["iops_mean"].as_f64().unwrap();
            assert!(
                (mean - figures.iops).abs() <= 1.0,
                "{mean} vs {}",
                figures.iops
            );
            assert!(direction["iops_min"].as_u64() <= direction["iops_max"].as_u64());
            assert!((direction["bw_agg"].as_f64().unwrap() - 100.0).abs() < 1.0);
        }
        assert_eq!(fio["trim"]["total_ios"], 0);
        assert!(fio["trim"]["clat_ns"].get("percentile").is_none());
        assert_eq!(fio["sync"]["total_ios"], 0);
        assert_eq!(fio["error"], 0);
        assert_eq!(fio["latency_depth"], 4);
        assert_eq!(fio["iodepth_level"]["4"], 100.0);
        let usr = fio["usr_cpu"].as_f64().unwrap();
        let sys = fio["sys_cpu"].as_f64().unwrap();
        assert!(usr + sys > 0.0 && usr + sys <= 100.0 * mixed().host.cpu_count as f64);
    }

    #[test]
    fn trims_fill_the_trim_section_and_name_the_pattern() {
        let mut result = mixed().clone();
        let job = &mut result.tests[0].jobs[0];
        job.trim = job.write.clone();
        job.workload.access.lines[0].trim_percent = 50;
        job.workload.access.lines[0].read_percent = 0;
        let mut out = Vec::new();
        write_fio_json(Report::of_run(&result).run(), false, &mut out).unwrap();
        let json: Value = serde_json::from_slice(&out).unwrap();
        let fio = &json["jobs"][0];
        let figures = &result.tests[0].jobs[0].trim;
        assert_eq!(fio["trim"]["total_ios"], figures.io_count);
        assert_eq!(fio["trim"]["io_bytes"], figures.bytes);
        assert_eq!(fio["trim"]["clat_ns"]["max"], figures.latency.max_ns);
        assert_eq!(fio["job options"]["rw"], "randtrimwrite");
    }

    #[test]
    fn a_latency_target_search_reports_the_depth_it_ended_at_and_its_target() {
        let mut result = mixed().clone();
        let job = &mut result.tests[0].jobs[0];
        job.queue_depth_per_worker = 32;
        job.latency_target = Some(crate::result::LatencyTargetResult {
            target_ns: 1_000_000,
            window_ns: 5_000_000_000,
            percentile: 99.9,
            depths: vec![1],
            met: true,
            iops: 1000.0,
        });
        let mut out = Vec::new();
        write_fio_json(Report::of_run(&result).run(), false, &mut out).unwrap();
        let json: Value = serde_json::from_slice(&out).unwrap();
        let fio = &json["jobs"][0];
        assert_eq!(fio["latency_depth"], 1);
        assert_eq!(fio["latency_target"], 1_000_000);
        assert_eq!(fio["latency_percentile"], 99.9);
        assert_eq!(fio["latency_window"], 5_000_000);
        assert_eq!(fio["iodepth_level"]["1"], 100.0);
        assert_eq!(fio["iodepth_level"]["32"], 0.0);
        // A job that did not search: its own depth and fio's figures for no target.
        let other = &json["jobs"][1];
        assert_eq!(other["latency_target"], 0);
        assert_eq!(other["latency_percentile"], 100.0);
        assert_eq!(other["latency_window"], 0);
    }

    #[test]
    fn latency_classes_add_up_to_all_ios() {
        let json = fio_json(false);
        for job in json["jobs"].as_array().unwrap() {
            let sum: f64 = ["latency_ns", "latency_us", "latency_ms"]
                .iter()
                .flat_map(|key| job[*key].as_object().unwrap().values())
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!((sum - 100.0).abs() < 0.2, "{sum}");
        }
    }

    #[test]
    fn plus_bins_hold_every_sample_and_give_the_percentiles() {
        let json = fio_json(true);
        for job in json["jobs"].as_array().unwrap() {
            for key in ["read", "write"] {
                let clat = &job[key]["clat_ns"];
                let total = clat["N"].as_u64().unwrap();
                if total == 0 {
                    assert!(clat.get("bins").is_none());
                    continue;
                }
                let mut bins: Vec<(u64, u64)> = clat["bins"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
                    .collect();
                bins.sort_unstable();
                assert_eq!(bins.iter().map(|b| b.1).sum::<u64>(), total);
                for (key, value) in clat["percentile"].as_object().unwrap() {
                    let percent: f64 = key.parse().unwrap();
                    let mut running = 0;
                    let first = bins
                        .iter()
                        .find(|(_, count)| {
                            running += count;
                            running as f64 >= percent / 100.0 * total as f64
                        })
                        .unwrap();
                    assert_eq!(first.0, value.as_u64().unwrap(), "{key}");
                }
            }
        }
    }

    #[test]
    fn bucket_layouts_agree_with_fio() {
        for index in 0..FIO_HISTOGRAM_BUCKETS {
            let (low, width) = bucket_bounds(index);
            assert_eq!(fio_bucket_index(low), index);
            assert_eq!(fio_bucket_index(low + width - 1), index);
            let value = fio_bucket_value(index);
            assert!(low <= value && value < low + width.max(1));
            assert_eq!(bucket_index(value), index);
        }
        assert_eq!(fio_bucket_value(FIO_HISTOGRAM_BUCKETS - 1), 17_112_760_320);
        assert_eq!(fio_bucket_index(u64::MAX), FIO_HISTOGRAM_BUCKETS - 1);
        const { assert!(BUCKET_COUNT > FIO_HISTOGRAM_BUCKETS) };
    }

    #[test]
    fn long_latencies_collect_in_fios_last_bucket() {
        let mut histogram = LatencyHistogram::new();
        for value in [100u64, 20_000_000_000, 40_000_000_000] {
            histogram.record(value);
        }
        let bins = fio_bins(&histogram.to_sparse());
        assert_eq!(bins, [(100, 1), (17_112_760_320, 2)]);
        let percentiles = fio_percentiles(&bins);
        assert_eq!(percentiles.0[0], ("1.000000".to_string(), 100));
        assert_eq!(percentiles.0.last().unwrap().1, 17_112_760_320);
    }

    #[test]
    fn classes_split_a_straddling_bucket() {
        let mut histogram = LatencyHistogram::new();
        for value in 0..4000u64 {
            histogram.record(value * 1000 + 500);
        }
        let sparse = histogram.to_sparse();
        let ms = latency_classes(&sparse, &MS_CLASSES);
        let us = latency_classes(&sparse, &US_CLASSES);
        // 1000 of 4000 samples lie in [1 ms, 2 ms), 2000 in [2 ms, 4 ms).
        assert!((ms.0[0].1 - 25.0).abs() < 0.5, "{:?}", ms.0);
        assert!((ms.0[1].1 - 50.0).abs() < 0.5, "{:?}", ms.0);
        assert!((us.0[9].1 - 6.25).abs() < 0.5, "{:?}", us.0);
    }

    #[test]
    fn errno_and_seconds_helpers() {
        assert_eq!(errno_of("No space left on device (os error 28)"), Some(28));
        assert_eq!(errno_of("short transfer: 1 of 4096 bytes"), None);
        assert_eq!(fio_seconds(2_000_000_000), "2");
        assert_eq!(fio_seconds(2_500_000_000), "2500ms");
    }
}
