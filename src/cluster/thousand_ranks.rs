//! A simulated merge of a thousand clients, without MPI: each rank's result as rank 0
//! receives it (a 60 s test with whole histograms and per-second series carrying their
//! interval buckets), assembled the way rank 0 assembles them. Checks what the saved result
//! costs per rank and that the merged percentiles are those of every I/O pooled; prints the
//! merge's time (`scripts/bench-scale-ranks` runs it under `/usr/bin/time` for its memory).

use super::assemble::{Assembly, ClientReport, RankDetail};
use crate::report::json::write_json;
use crate::result::{DirectionResult, LatencySummary, RunResult, TestResult};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::series::{SeriesRecorder, merge_series};
use crate::support::fixtures::mixed;
use std::time::Instant;

const SECOND: u64 = 1_000_000_000;
/// Ranks simulated.
const RANKS: u32 = 1_000;
/// Ranks per host (a cluster node runs several clients).
const RANKS_PER_HOST: u32 = 8;
/// Length of the simulated test, s.
const SECONDS: u64 = 60;
/// I/Os each rank completes per second and direction (enough to fill a wide histogram).
const IOS_PER_SECOND: u64 = 100;
/// Distinct sets of figures the ranks take in turn (building each is the test's costliest
/// part; merging them is what is measured).
const PATTERNS: u32 = 16;
/// The saved result's goal, bytes per rank.
const BYTES_PER_RANK: usize = 20_000;

/// A deterministic stream of latencies spread over four decades (10 µs to 100 ms), a
/// different one per rank and direction.
struct Latencies(u64);

impl Iterator for Latencies {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let decades = (z % 4_000) as f64 / 1_000.0;
        Some((10_000.0 * 10f64.powf(decades)) as u64)
    }
}

/// One direction of one rank over [`SECONDS`]: its whole histogram and its series with the
/// interval buckets a rank sends.
fn direction(seed: u64) -> DirectionResult {
    let mut histogram = LatencyHistogram::new();
    let mut series = SeriesRecorder::new(SECOND, SECONDS as usize);
    let mut latencies = Latencies(seed);
    for second in 0..SECONDS {
        for io in 0..IOS_PER_SECOND {
            let latency = latencies.next().unwrap_or(0);
            histogram.record(latency);
            series.record(
                second * SECOND + io * (SECOND / IOS_PER_SECOND),
                latency,
                4096,
            );
        }
    }
    series.finish();
    let seconds = SECONDS as f64;
    DirectionResult {
        io_count: histogram.count(),
        bytes: histogram.count() * 4096,
        iops: histogram.count() as f64 / seconds,
        bytes_per_second: (histogram.count() * 4096) as f64 / seconds,
        latency: LatencySummary::from_histogram(&histogram),
        error_count: 0,
        series: merge_series(&[&series], SECONDS * SECOND, true),
        histogram: histogram.to_sparse(),
        split: None,
    }
}

/// The seed of rank `rank`'s figures of direction `which`.
fn seed(rank: u32, which: u64) -> u64 {
    (u64::from(rank % PATTERNS) << 8) + which
}

/// Rank `rank`'s result, as it sends it: the `mixed` fixture's first test (one job of
/// random reads and writes) with simulated figures; the job's series carry no buckets (a
/// rank sends them once, with the test's).
fn rank_result(rank: u32) -> RunResult {
    let mut result = mixed().clone();
    result.tests.truncate(1);
    let test: &mut TestResult = &mut result.tests[0];
    test.measured_ns = SECONDS * SECOND;
    test.read = direction(seed(rank, 0));
    test.write = direction(seed(rank, 1));
    test.total = direction(seed(rank, 2));
    let job = &mut test.jobs[0];
    job.measured_ns = SECONDS * SECOND;
    job.read = test.read.clone();
    job.write = test.write.clone();
    job.total = test.total.clone();
    for direction in [&mut job.read, &mut job.write, &mut job.total] {
        for point in &mut direction.series {
            point.latency_buckets = Vec::new();
        }
    }
    result
}

#[test]
fn a_thousand_ranks_merge_into_a_result_of_under_20_kb_per_rank_with_pooled_percentiles() {
    let patterns: Vec<RunResult> = (0..PATTERNS).map(rank_result).collect();
    let mut pooled = [(); 3].map(|_| LatencyHistogram::new());
    let mut assembly = Assembly::new(RankDetail::Summaries);
    let mut merge_ns = 0u128;
    for rank in 0..RANKS {
        let mut result = patterns[(rank % PATTERNS) as usize].clone();
        result.host.hostname = format!("node{}", rank / RANKS_PER_HOST);
        let test = &result.tests[0];
        for (pooled, direction) in pooled
            .iter_mut()
            .zip([&test.read, &test.write, &test.total])
        {
            pooled.merge(&LatencyHistogram::from_sparse(&direction.histogram).unwrap());
        }
        let merging = Instant::now();
        assembly.add(ClientReport {
            rank,
            host: result.host.hostname.clone(),
            local_rank: rank % RANKS_PER_HOST,
            clock_offset_ns: 0,
            clock_uncertainty_ns: 0,
            sync_poll_ns: 0,
            sync_polls: 0,
            result: Some(result),
            lost: None,
        });
        merge_ns += merging.elapsed().as_nanos();
    }
    let merging = Instant::now();
    let merged = assembly.finish(patterns[0].clone(), "simulated".into());
    merge_ns += merging.elapsed().as_nanos();
    let mut saved = Vec::new();
    write_json(&merged, &mut saved).unwrap();
    let per_rank = saved.len() / RANKS as usize;
    println!(
        "{RANKS} ranks: merged in {:.2} s, saved result {} bytes, {per_rank} bytes per rank",
        merge_ns as f64 / 1e9,
        saved.len()
    );
    assert!(
        per_rank <= BYTES_PER_RANK,
        "{per_rank} bytes per rank, over {BYTES_PER_RANK}"
    );
    let test = &merged.tests[0];
    let cluster = merged.cluster.as_ref().unwrap();
    assert_eq!(cluster.ranks.len(), RANKS as usize);
    assert_eq!(cluster.hosts.len(), RANKS.div_ceil(RANKS_PER_HOST) as usize);
    for (direction, pooled) in [&test.read, &test.write, &test.total]
        .into_iter()
        .zip(&pooled)
    {
        assert_eq!(
            direction.io_count,
            u64::from(RANKS) * SECONDS * IOS_PER_SECOND
        );
        assert_eq!(direction.latency, LatencySummary::from_histogram(pooled));
        assert_eq!(direction.series.len(), SECONDS as usize);
    }
    // Each second's p99 is that of the second's I/Os of every rank pooled.
    let mut second_zero = LatencyHistogram::new();
    for rank in 0..RANKS {
        let mut latencies = Latencies(seed(rank, 2));
        for latency in latencies.by_ref().take(IOS_PER_SECOND as usize) {
            second_zero.record(latency);
        }
    }
    assert_eq!(
        test.total.series[0].p99_latency_ns,
        second_zero.percentile(99.0)
    );
}
