//! Exact merges of what several clients measured in the same test: counts and bytes add up,
//! histograms add bucket by bucket (so a cluster percentile is the percentile of every I/O of
//! every client, within the histogram's stated error), series add interval by interval (the
//! clients' intervals are aligned on one start).
//!
//! ```
//! use iopath::stats::merge::merge_direction;
//! use iopath::result::DirectionResult;
//! use iopath::stats::histogram::LatencyHistogram;
//! use iopath::result::LatencySummary;
//!
//! let direction = |latencies: &[u64]| {
//!     let mut histogram = LatencyHistogram::new();
//!     latencies.iter().for_each(|&l| histogram.record(l));
//!     DirectionResult {
//!         io_count: histogram.count(),
//!         bytes: histogram.count() * 4096,
//!         iops: 0.0,
//!         bytes_per_second: 0.0,
//!         latency: LatencySummary::from_histogram(&histogram),
//!         error_count: 0,
//!         series: Vec::new(),
//!         histogram: histogram.to_sparse(),
//!         split: None,
//!     }
//! };
//! let merged = merge_direction(&[&direction(&[100, 200]), &direction(&[300])], 1_000_000_000);
//! assert_eq!(merged.io_count, 3);
//! assert_eq!(merged.bytes, 3 * 4096);
//! assert_eq!(merged.latency.max_ns, 300);
//! ```

use crate::result::error_policy::add_error_count;
use crate::result::{
    ClusterResult, CpuResult, DirectionResult, ErrorSummary, HostResult, IntervalPoint, JobResult,
    LatencySplit, LatencySummary, RankResult, StopReason, TestResult, VerificationResult,
};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::recorder::SplitHistograms;

/// The first few I/O errors a merged summary keeps (as a test of one client does).
const ERRORS_KEPT: usize = 16;

/// The figures of one direction of several clients together over `measured_ns`: exact sums
/// of counts, bytes and errors, the histograms merged bucket by bucket (a histogram that
/// cannot be read back counts as empty), the series added interval by interval.
pub fn merge_direction(parts: &[&DirectionResult], measured_ns: u64) -> DirectionResult {
    let mut histogram = LatencyHistogram::new();
    let mut bytes = 0u64;
    let mut error_count = 0u64;
    for part in parts {
        if let Some(own) = LatencyHistogram::from_sparse(&part.histogram) {
            histogram.merge(&own);
        }
        bytes += part.bytes;
        error_count += part.error_count;
    }
    let io_count = histogram.count();
    let seconds = measured_ns as f64 / 1e9;
    let rate = |amount: u64| {
        if seconds > 0.0 {
            amount as f64 / seconds
        } else {
            0.0
        }
    };
    DirectionResult {
        io_count,
        bytes,
        iops: rate(io_count),
        bytes_per_second: rate(bytes),
        latency: LatencySummary::from_histogram(&histogram),
        error_count,
        series: merge_points(parts.iter().map(|part| part.series.as_slice())),
        histogram: histogram.to_sparse(),
        split: merge_split(parts),
    }
}

/// The latency splits of `parts` merged exactly (a split that cannot be read back counts as
/// absent); `None` when no part has one.
fn merge_split(parts: &[&DirectionResult]) -> Option<LatencySplit> {
    let splits: Vec<SplitHistograms> = parts
        .iter()
        .filter_map(|part| part.split.as_ref())
        .filter_map(SplitHistograms::from_result)
        .collect();
    SplitHistograms::merged(&splits).map(|split| split.to_result())
}

/// Adds aligned series interval by interval: bytes and I/Os exactly, the mean weighted by
/// each client's I/Os. An interval's p99 is exact (the p99 of the clients' interval
/// histograms merged bucket by bucket, as within one client) when every client's point with
/// I/Os carries its buckets ([`IntervalPoint::latency_buckets`]), and the merged point then
/// keeps the merged buckets; otherwise it is the highest of the clients' p99s (an upper bound).
pub fn merge_points<'a>(series: impl Iterator<Item = &'a [IntervalPoint]>) -> Vec<IntervalPoint> {
    let mut merged: Vec<IntervalPoint> = Vec::new();
    let mut latency_sums: Vec<u128> = Vec::new();
    // Per interval: the merged histogram, while every part with I/Os brought its buckets.
    let mut histograms: Vec<Option<LatencyHistogram>> = Vec::new();
    for points in series {
        for (index, point) in points.iter().enumerate() {
            if index == merged.len() {
                merged.push(IntervalPoint {
                    bytes: 0,
                    io_count: 0,
                    mean_latency_ns: 0,
                    p99_latency_ns: 0,
                    latency_buckets: Vec::new(),
                    ..point.clone()
                });
                latency_sums.push(0);
                histograms.push(Some(LatencyHistogram::new()));
            }
            let into = &mut merged[index];
            into.duration_ns = into.duration_ns.max(point.duration_ns);
            into.bytes += point.bytes;
            into.io_count += point.io_count;
            into.p99_latency_ns = into.p99_latency_ns.max(point.p99_latency_ns);
            latency_sums[index] += u128::from(point.mean_latency_ns) * u128::from(point.io_count);
            let exact = &mut histograms[index];
            if point.io_count > 0 && point.latency_buckets.is_empty() {
                *exact = None;
            }
            if let Some(histogram) = exact {
                for &[bucket, count] in &point.latency_buckets {
                    histogram.record_bucket(bucket as usize, count);
                }
            }
        }
    }
    for ((point, sum), histogram) in merged.iter_mut().zip(latency_sums).zip(histograms) {
        if point.io_count > 0 {
            point.mean_latency_ns = (sum / u128::from(point.io_count)) as u64;
            if let Some(histogram) = histogram {
                point.p99_latency_ns = histogram.percentile(99.0);
                point.latency_buckets = histogram
                    .nonzero_buckets()
                    .map(|(bucket, count)| [bucket as u64, count])
                    .collect();
            }
        }
    }
    merged
}

/// Drops the interval buckets of every series of `test` (its directions and its jobs'): they
/// serve the merge across clients only, and a saved result keeps none.
pub fn drop_interval_buckets(test: &mut TestResult) {
    let jobs = test
        .jobs
        .iter_mut()
        .flat_map(|job| [&mut job.read, &mut job.write, &mut job.trim, &mut job.total]);
    let own = [
        &mut test.read,
        &mut test.write,
        &mut test.trim,
        &mut test.total,
    ];
    for direction in own.into_iter().chain(jobs) {
        for point in &mut direction.series {
            point.latency_buckets = Vec::new();
        }
    }
}

/// Read, write, trim and total of several parts (jobs or tests of the clients) over
/// `measured_ns`.
fn merge_directions<'a, T: 'a>(
    parts: &[&'a T],
    measured_ns: u64,
    of: impl Fn(&'a T) -> [&'a DirectionResult; 4],
) -> [DirectionResult; 4] {
    let each: Vec<[&DirectionResult; 4]> = parts.iter().map(|part| of(part)).collect();
    [0, 1, 2, 3].map(|which| {
        let direction: Vec<&DirectionResult> = each.iter().map(|three| three[which]).collect();
        merge_direction(&direction, measured_ns)
    })
}

/// The worst of several stop reasons (an error over an interruption over completion).
pub fn worst_stop(reasons: impl Iterator<Item = StopReason>) -> StopReason {
    reasons.fold(StopReason::Completed, |worst, reason| {
        match (worst, reason) {
            (StopReason::Error, _) | (_, StopReason::Error) => StopReason::Error,
            (StopReason::Interrupted, _) | (_, StopReason::Interrupted) => StopReason::Interrupted,
            _ => StopReason::Completed,
        }
    })
}

fn merge_errors<'a>(summaries: impl Iterator<Item = &'a ErrorSummary>) -> ErrorSummary {
    let mut merged = ErrorSummary::default();
    for summary in summaries {
        merged.count += summary.count;
        let room = ERRORS_KEPT.saturating_sub(merged.first.len());
        merged
            .first
            .extend(summary.first.iter().take(room).cloned());
        for counted in &summary.by_kind {
            add_error_count(&mut merged.by_kind, counted);
        }
    }
    merged
}

/// The verification of several clients: counts added, the first bad blocks kept in the
/// clients' order (each names its rank when the caller tagged it); `None` when none verified.
fn merge_verification<'a>(
    parts: impl Iterator<Item = Option<&'a VerificationResult>>,
) -> Option<VerificationResult> {
    let mut merged: Option<VerificationResult> = None;
    for found in parts.flatten() {
        match &mut merged {
            None => merged = Some(found.clone()),
            Some(merged) => merged.absorb(found),
        }
    }
    merged
}

/// The CPU of several clients: their own time added, the longest wall time, the busiest
/// worker thread of any, their CPUs added (the caller counts a host shared by several clients
/// once). Cores are a host's: the merged figure keeps none (each client's cores stay in its
/// own test).
pub fn merge_cpu<'a>(parts: impl Iterator<Item = &'a CpuResult>) -> CpuResult {
    let mut merged = CpuResult::default();
    for cpu in parts {
        merged.wall_ns = merged.wall_ns.max(cpu.wall_ns);
        merged.user_ns += cpu.user_ns;
        merged.system_ns += cpu.system_ns;
        merged.cpu_count += cpu.cpu_count;
        merged.busiest_thread_ns = merged.busiest_thread_ns.max(cpu.busiest_thread_ns);
        merged.busiest_thread_cpu_wait_ns = merged
            .busiest_thread_cpu_wait_ns
            .max(cpu.busiest_thread_cpu_wait_ns);
    }
    merged
}

fn merge_job(parts: &[&JobResult]) -> JobResult {
    let first = parts[0];
    let measured_ns = parts.iter().map(|job| job.measured_ns).max().unwrap_or(0);
    let [read, write, trim, total] = merge_directions(parts, measured_ns, |job| {
        [&job.read, &job.write, &job.trim, &job.total]
    });
    JobResult {
        measured_ns,
        worker_threads: parts.iter().map(|job| job.worker_threads).sum(),
        fsync_ns: parts.iter().map(|job| job.fsync_ns).max().unwrap_or(0),
        direct: parts.iter().all(|job| job.direct),
        stop_reason: worst_stop(parts.iter().map(|job| job.stop_reason)),
        errors: merge_errors(parts.iter().map(|job| &job.errors)),
        verification: merge_verification(parts.iter().map(|job| job.verification.as_ref())),
        read,
        write,
        trim,
        total,
        ..first.clone()
    }
}

/// One test as every client ran it (the same plan, so the same jobs in the same order): the
/// merged figures, without an analysis (the merged run is analysed afresh). `None` when no
/// client ran it.
pub fn merge_test(parts: &[&TestResult]) -> Option<TestResult> {
    let first = *parts.first()?;
    let measured_ns = parts.iter().map(|test| test.measured_ns).max().unwrap_or(0);
    let [read, write, trim, total] = merge_directions(parts, measured_ns, |test| {
        [&test.read, &test.write, &test.trim, &test.total]
    });
    let job_count = parts.iter().map(|test| test.jobs.len()).min().unwrap_or(0);
    let mut jobs: Vec<JobResult> = (0..job_count)
        .map(|index| {
            let same: Vec<&JobResult> = parts.iter().map(|test| &test.jobs[index]).collect();
            merge_job(&same)
        })
        .collect();
    // The only job of a test has the test's series: the clients send its interval buckets
    // once, with the test's, and its merged series is the test's.
    if let [job] = jobs.as_mut_slice()
        && parts.iter().all(|test| test.jobs.len() == 1)
    {
        job.read.series = read.series.clone();
        job.write.series = write.series.clone();
        job.trim.series = trim.series.clone();
        job.total.series = total.series.clone();
    }
    let mut warnings: Vec<String> = Vec::new();
    for warning in parts.iter().flat_map(|test| &test.warnings) {
        if !warnings.contains(warning) {
            warnings.push(warning.clone());
        }
    }
    Some(TestResult {
        jobs,
        measured_ns,
        stop_reason: worst_stop(parts.iter().map(|test| test.stop_reason)),
        read,
        write,
        trim,
        total,
        cpu: merge_cpu(parts.iter().map(|test| &test.cpu)),
        errors: merge_errors(parts.iter().map(|test| &test.errors)),
        verification: merge_verification(parts.iter().map(|test| test.verification.as_ref())),
        warnings,
        analysis: None,
        trace_overflow_ios: parts.iter().map(|test| test.trace_overflow_ios).sum(),
        ..first.clone()
    })
}

/// The clients on `host` that were not lost, in rank order.
pub fn host_ranks<'a>(cluster: &'a ClusterResult, host: &str) -> Vec<&'a RankResult> {
    cluster
        .ranks
        .iter()
        .filter(|rank| rank.host == host && rank.lost.is_none())
        .collect()
}

/// Test `index` of every client on `host`, merged: one host's figures (and its cores),
/// whatever number of clients it ran; `None` when none of them ran it. The host's stored
/// merge ([`ClusterResult::hosts`]) when the result has one, else its ranks' whole tests
/// merged now.
pub fn host_test(cluster: &ClusterResult, host: &str, index: usize) -> Option<TestResult> {
    match stored_host(cluster, host) {
        Some(stored) => stored.tests.get(index).cloned(),
        None => merge_host_test(&host_ranks(cluster, host), index),
    }
}

/// The merge of `host`'s clients that rank 0 stored, when it stored the hosts.
fn stored_host<'a>(cluster: &'a ClusterResult, host: &str) -> Option<&'a HostResult> {
    cluster.hosts.iter().find(|stored| stored.name == host)
}

fn merge_host_test(on_host: &[&RankResult], index: usize) -> Option<TestResult> {
    let parts: Vec<&TestResult> = on_host
        .iter()
        .filter_map(|rank| rank.tests.get(index))
        .collect();
    let mut merged = merge_test(&parts)?;
    // The cores and CPUs are the host's, the same for each of its clients.
    merged.cpu.cores = parts[0].cpu.cores.clone();
    merged.cpu.cpu_count = parts[0].cpu.cpu_count;
    Some(merged)
}

/// The tests of every client on `host`, merged ([`host_test`] of each).
pub fn host_tests(cluster: &ClusterResult, host: &str) -> Vec<TestResult> {
    if let Some(stored) = stored_host(cluster, host) {
        return stored.tests.clone();
    }
    let on_host = host_ranks(cluster, host);
    let test_count = on_host.iter().map(|r| r.tests.len()).max().unwrap_or(0);
    (0..test_count)
        .filter_map(|index| merge_host_test(&on_host, index))
        .collect()
}

/// The hosts of a cluster, in the order of their first rank.
pub fn hosts(cluster: &ClusterResult) -> Vec<&str> {
    let mut hosts: Vec<&str> = Vec::new();
    for rank in &cluster.ranks {
        if !hosts.contains(&rank.host.as_str()) {
            hosts.push(&rank.host);
        }
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::series::{SeriesRecorder, merge_series};

    const SECOND: u64 = 1_000_000_000;

    /// A client's series from `(interval, latency)` samples, kept with or without buckets.
    fn series(samples: &[(u64, u64)], keep_buckets: bool) -> Vec<IntervalPoint> {
        let mut recorder = SeriesRecorder::new(SECOND, 4);
        for &(interval, latency) in samples {
            recorder.record(interval * SECOND + 1, latency, 4096);
        }
        recorder.finish();
        merge_series(&[&recorder], 3 * SECOND, keep_buckets)
    }

    /// Many fast I/Os on one client, a few slow ones on another, in each of three seconds.
    fn clients() -> [Vec<(u64, u64)>; 2] {
        let fast = (0..3)
            .flat_map(|second| (0..2_000).map(move |i| (second, 20_000 + i * 7 + second * 1_000)))
            .collect();
        let slow = (0..3)
            .flat_map(|second| (0..15).map(move |i| (second, 5_000_000 + i * 10_000)))
            .collect();
        [fast, slow]
    }

    #[test]
    fn each_intervals_cluster_p99_is_the_p99_of_every_clients_ios_together() {
        let [fast, slow] = clients();
        let merged = merge_points(
            [series(&fast, true), series(&slow, true)]
                .iter()
                .map(Vec::as_slice),
        );
        // One client that did every I/O of both: its p99 per second is the exact one.
        let mut together: Vec<(u64, u64)> = fast.iter().chain(&slow).copied().collect();
        together.sort_by_key(|&(second, _)| second);
        let expected = series(&together, true);
        assert_eq!(merged.len(), 3);
        for (point, alone) in merged.iter().zip(&expected) {
            assert_eq!(point.io_count, 2_015);
            assert_eq!(point.p99_latency_ns, alone.p99_latency_ns);
            assert_eq!(point.latency_buckets, alone.latency_buckets);
            // 15 slow I/Os of 2,015 are under 1 %: the p99 is a fast one.
            assert!(point.p99_latency_ns < 1_000_000, "{}", point.p99_latency_ns);
        }
    }

    #[test]
    fn without_buckets_an_intervals_p99_is_the_highest_of_the_clients() {
        let [fast, slow] = clients();
        let merged = merge_points(
            [series(&fast, true), series(&slow, false)]
                .iter()
                .map(Vec::as_slice),
        );
        let slow_alone = series(&slow, false);
        for (point, slow) in merged.iter().zip(&slow_alone) {
            assert_eq!(point.p99_latency_ns, slow.p99_latency_ns);
            assert!(point.latency_buckets.is_empty());
        }
    }

    #[test]
    fn dropped_buckets_leave_the_figures() {
        let [fast, _] = clients();
        let mut test = crate::support::fixtures::mixed().tests[0].clone();
        test.total.series = series(&fast, true);
        let figures: Vec<u64> = test.total.series.iter().map(|p| p.p99_latency_ns).collect();
        drop_interval_buckets(&mut test);
        assert!(
            test.total
                .series
                .iter()
                .all(|p| p.latency_buckets.is_empty())
        );
        let after: Vec<u64> = test.total.series.iter().map(|p| p.p99_latency_ns).collect();
        assert_eq!(after, figures);
    }
}
