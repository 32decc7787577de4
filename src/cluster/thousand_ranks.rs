//! A simulated merge of a thousand clients, without MPI: each rank's result as rank 0
//! receives it (the JSON of a 60 s test with whole histograms and per-second series carrying
//! their interval buckets), read and folded the way rank 0 does as each comes. Checks what
//! the saved result costs per rank and that the merged percentiles are those of every I/O
//! pooled; prints the merge's time and how much rank 0's memory grew at its peak
//! (`scripts/bench-scale-ranks` runs it). A second test compares that growth with what rank 0
//! held when it kept every rank's message until the last came.

use super::assemble::{Assembly, ClientReport, RankDetail, read_sent_result};
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
/// The host name the patterns carry, replaced in each rank's message by its own.
const HOST_MARK: &str = "simulated-host-name";

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

/// Rank `rank`'s message as rank 0 receives it: the JSON of its pattern's result, with its
/// own host name.
fn message(patterns: &[String], rank: u32) -> String {
    patterns[(rank % PATTERNS) as usize].replacen(
        &format!("\"{HOST_MARK}\""),
        &format!("\"{}\"", host_of(rank)),
        1,
    )
}

/// The host of rank `rank`.
fn host_of(rank: u32) -> String {
    format!("node{}", rank / RANKS_PER_HOST)
}

/// The JSON of each pattern's result, with [`HOST_MARK`] as its host name.
fn pattern_messages() -> Vec<String> {
    (0..PATTERNS)
        .map(|pattern| {
            let mut result = rank_result(pattern);
            result.host.hostname = HOST_MARK.into();
            serde_json::to_string(&result).unwrap()
        })
        .collect()
}

/// Folds rank `rank`'s message into `assembly` as rank 0 does when it comes.
fn fold_message(assembly: &mut Assembly, rank: u32, message: String) {
    let mut lost = None;
    let result = read_sent_result(Some(Ok(message)), &mut lost);
    assert!(lost.is_none(), "{lost:?}");
    assembly.add(ClientReport {
        rank,
        host: host_of(rank),
        local_rank: rank % RANKS_PER_HOST,
        clock_offset_ns: 0,
        clock_uncertainty_ns: 0,
        sync_poll_ns: 0,
        sync_polls: 0,
        result,
        lost: None,
    });
}

/// One line of /proc/self/status, in bytes (the figure is in KiB).
fn status_bytes(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with(key))
        .unwrap_or_else(|| panic!("no {key} in /proc/self/status"));
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|figure| figure.parse().ok())
        .unwrap();
    kib * 1024
}

/// Runs `work`; returns its answer, its time and how far the process's resident memory rose
/// above where it was at the start (its peak, `VmHWM`, reset first; the C library's free
/// memory handed back first so that its reuse does not hide the growth).
fn measured<T>(work: impl FnOnce() -> T) -> (T, std::time::Duration, u64) {
    // SAFETY: malloc_trim only hands free heap memory back to the kernel.
    unsafe { libc::malloc_trim(0) };
    // "5" resets the peak resident size to the current one (proc(5), clear_refs).
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status_bytes("VmRSS:");
    let began = Instant::now();
    let answer = work();
    let took = began.elapsed();
    let peak = status_bytes("VmHWM:");
    (answer, took, peak.saturating_sub(before))
}

/// Rank 0's result of `ranks` ranks (their messages from `patterns`), each rank's message
/// folded as it comes (`held`: false), or every message kept until the last came and then
/// folded one by one, as rank 0 did before.
fn gather(patterns: &[String], ranks: u32, held: bool) -> RunResult {
    let mut assembly = Assembly::new(RankDetail::Summaries);
    let mut waiting = Vec::new();
    for rank in 0..ranks {
        let message = message(patterns, rank);
        if held {
            waiting.push(message);
        } else {
            fold_message(&mut assembly, rank, message);
        }
    }
    for (rank, message) in waiting.into_iter().enumerate() {
        fold_message(&mut assembly, rank as u32, message);
    }
    assembly.finish(rank_result(0), "simulated".into())
}

#[test]
fn a_thousand_ranks_merge_into_a_result_of_under_20_kb_per_rank_with_pooled_percentiles() {
    let patterns = pattern_messages();
    let results: Vec<RunResult> = (0..PATTERNS).map(rank_result).collect();
    let mut pooled = [(); 3].map(|_| LatencyHistogram::new());
    for rank in 0..RANKS {
        let test = &results[(rank % PATTERNS) as usize].tests[0];
        for (pooled, direction) in pooled
            .iter_mut()
            .zip([&test.read, &test.write, &test.total])
        {
            pooled.merge(&LatencyHistogram::from_sparse(&direction.histogram).unwrap());
        }
    }
    let (merged, took, grew) = measured(|| gather(&patterns, RANKS, false));
    let mut saved = Vec::new();
    write_json(&merged, &mut saved).unwrap();
    let per_rank = saved.len() / RANKS as usize;
    println!(
        "{RANKS} ranks: merged in {:.2} s, rank 0's memory grew by {:.1} MiB at its peak \
         ({} bytes a message), saved result {} bytes, {per_rank} bytes per rank",
        took.as_secs_f64(),
        grew as f64 / f64::from(1 << 20),
        patterns[0].len(),
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

#[test]
fn rank_zero_grows_by_a_summary_per_rank_not_by_every_ranks_message() {
    let patterns = pattern_messages();
    let (few, many) = (64, 256);
    let grew = |ranks: u32, held: bool| measured(|| gather(&patterns, ranks, held).tests.len()).2;
    let per_rank = |held: bool| {
        let (small, large) = (grew(few, held), grew(many, held));
        large.saturating_sub(small) / u64::from(many - few)
    };
    let (folded, held) = (per_rank(false), per_rank(true));
    let message = patterns[0].len() as u64;
    println!(
        "rank 0's peak memory per rank, {few} to {many} ranks: {folded} bytes folding each \
         message as it comes, {held} bytes holding every message to the last ({message} bytes \
         a message)"
    );
    // Holding every message costs at least the messages; folding them, a small part of it.
    assert!(held >= message / 2, "{held} bytes per rank held");
    assert!(
        folded * 8 <= held,
        "{folded} bytes per rank folding, {held} holding"
    );
}
