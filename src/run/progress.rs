//! Live progress: each worker publishes its running totals per direction through relaxed
//! atomics (plain loads and stores on the hot path: only the owning worker writes them, so no
//! read-modify-write and no lock), and counts each latency in a coarse live histogram
//! ([`crate::stats::live`]), and a verifying worker its verification counts. The coordinator
//! reads them once a second into a [`LiveSample`]: the one snapshot that the progress line, the
//! dashboard and `--metrics` all read.

use crate::result::{Direction, MismatchKind, RunLength, VerificationResult};
use crate::stats::live::{LIVE_BUCKET_COUNT, live_bucket_index, live_percentile};
use crate::workload::{JobPlan, TestPlan};
use std::sync::atomic::{AtomicU64, Ordering};

/// Running totals of one direction of one worker, including the ramp.
#[derive(Debug)]
pub struct DirectionProgress {
    bytes: AtomicU64,
    io_count: AtomicU64,
    latency_sum_ns: AtomicU64,
    buckets: Box<[AtomicU64]>,
}

impl Default for DirectionProgress {
    fn default() -> Self {
        DirectionProgress {
            bytes: AtomicU64::new(0),
            io_count: AtomicU64::new(0),
            latency_sum_ns: AtomicU64::new(0),
            buckets: (0..LIVE_BUCKET_COUNT).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// Totals of one direction as read: bytes, I/Os and their latency sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectionTotals {
    /// Bytes of completed I/Os.
    pub bytes: u64,
    /// Completed I/Os.
    pub io_count: u64,
    /// Sum of their latencies, ns.
    pub latency_sum_ns: u64,
}

impl DirectionProgress {
    /// Counts one completed I/O's latency in the live histogram (owning worker only).
    #[inline]
    pub fn count_latency(&self, latency_ns: u64) {
        let bucket = &self.buckets[live_bucket_index(latency_ns)];
        // Only the owning worker writes: a load and a store, never a locked add.
        bucket.store(bucket.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Publishes the direction's totals (owning worker only).
    #[inline]
    pub fn publish(&self, totals: DirectionTotals) {
        self.bytes.store(totals.bytes, Ordering::Relaxed);
        self.io_count.store(totals.io_count, Ordering::Relaxed);
        self.latency_sum_ns
            .store(totals.latency_sum_ns, Ordering::Relaxed);
    }

    /// Reads the totals.
    pub fn read(&self) -> DirectionTotals {
        DirectionTotals {
            bytes: self.bytes.load(Ordering::Relaxed),
            io_count: self.io_count.load(Ordering::Relaxed),
            latency_sum_ns: self.latency_sum_ns.load(Ordering::Relaxed),
        }
    }

    /// Adds the live histogram's counts into `counts` ([`LIVE_BUCKET_COUNT`] long).
    pub fn add_buckets_to(&self, counts: &mut [u64]) {
        for (sum, bucket) in counts.iter_mut().zip(self.buckets.iter()) {
            *sum += bucket.load(Ordering::Relaxed);
        }
    }
}

/// The directions the live views follow, in the order of their arrays.
pub const DIRECTIONS: [Direction; 3] = [Direction::Read, Direction::Write, Direction::Trim];

/// Index of `direction` in [`DIRECTIONS`].
#[inline]
pub fn direction_index(direction: Direction) -> usize {
    match direction {
        Direction::Read => 0,
        Direction::Write => 1,
        Direction::Trim => 2,
    }
}

/// What a worker's data verification has found so far, as the live views show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveVerify {
    /// Blocks (header intervals) checked.
    pub blocks_checked: u64,
    /// Bad blocks.
    pub mismatch_count: u64,
    /// The kind and offset of the first bad block.
    pub first_mismatch: Option<(MismatchKind, u64)>,
}

impl LiveVerify {
    /// The counts of `found`, and its first bad block.
    pub fn of(found: &VerificationResult) -> Self {
        LiveVerify {
            blocks_checked: found.blocks_checked,
            mismatch_count: found.mismatch_count,
            first_mismatch: found.mismatches.first().map(|bad| (bad.kind, bad.offset)),
        }
    }

    /// Adds `other`'s counts; the first bad block stays the one already known, if any.
    pub fn absorb(&mut self, other: LiveVerify) {
        self.blocks_checked += other.blocks_checked;
        self.mismatch_count += other.mismatch_count;
        self.first_mismatch = self.first_mismatch.or(other.first_mismatch);
    }
}

/// A worker's running verification counts (only the owning worker writes them).
#[derive(Debug, Default)]
pub struct VerifyProgress {
    /// Whether the worker verifies at all.
    verifies: std::sync::atomic::AtomicBool,
    blocks_checked: AtomicU64,
    mismatch_count: AtomicU64,
    /// 1 + the index of the first bad block's kind in [`MismatchKind::ALL`]; 0: none yet.
    first_kind: AtomicU64,
    first_offset: AtomicU64,
}

impl VerifyProgress {
    /// Publishes what the worker's checks found so far (owning worker only).
    #[inline]
    pub fn publish(&self, found: LiveVerify) {
        self.verifies.store(true, Ordering::Relaxed);
        self.blocks_checked
            .store(found.blocks_checked, Ordering::Relaxed);
        self.mismatch_count
            .store(found.mismatch_count, Ordering::Relaxed);
        if let Some((kind, offset)) = found.first_mismatch
            && self.first_kind.load(Ordering::Relaxed) == 0
        {
            let index = MismatchKind::ALL
                .iter()
                .position(|k| *k == kind)
                .unwrap_or(0);
            self.first_offset.store(offset, Ordering::Relaxed);
            self.first_kind.store(index as u64 + 1, Ordering::Release);
        }
    }

    /// What was published, or `None` when the worker has not published (it does not verify,
    /// or has checked nothing yet).
    pub fn read(&self) -> Option<LiveVerify> {
        if !self.verifies.load(Ordering::Relaxed) {
            return None;
        }
        let kind = self.first_kind.load(Ordering::Acquire);
        let first_mismatch = (kind > 0)
            .then(|| MismatchKind::ALL.get(kind as usize - 1).copied())
            .flatten()
            .map(|kind| (kind, self.first_offset.load(Ordering::Relaxed)));
        Some(LiveVerify {
            blocks_checked: self.blocks_checked.load(Ordering::Relaxed),
            mismatch_count: self.mismatch_count.load(Ordering::Relaxed),
            first_mismatch,
        })
    }
}

/// Running totals of one worker, including the ramp. Aligned to its own cache lines, so that
/// workers never write into a line another worker writes.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct WorkerProgress {
    directions: [DirectionProgress; 3],
    /// Data verification's counts.
    pub verify: VerifyProgress,
}

impl WorkerProgress {
    /// One direction.
    #[inline]
    pub fn direction(&self, direction: Direction) -> &DirectionProgress {
        &self.directions[direction_index(direction)]
    }

    /// Reads the totals of every direction together: `(bytes, io_count, latency_sum_ns)`.
    pub fn read(&self) -> (u64, u64, u64) {
        self.directions
            .iter()
            .fold((0, 0, 0), |(b, i, l), direction| {
                let totals = direction.read();
                (
                    b + totals.bytes,
                    i + totals.io_count,
                    l + totals.latency_sum_ns,
                )
            })
    }

    /// Sums the totals of several workers.
    pub fn sum(progress: &[WorkerProgress]) -> (u64, u64, u64) {
        progress.iter().fold((0, 0, 0), |(b, i, l), p| {
            let (bytes, ios, latency) = p.read();
            (b + bytes, i + ios, l + latency)
        })
    }
}

/// What the live views show, once a second.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveSample {
    /// Name of the test running.
    pub test_name: String,
    /// Time since the test started (ramp included), ns.
    pub elapsed_ns: u64,
    /// Planned total time (ramp + duration), ns; None for byte-count runs.
    pub total_ns: Option<u64>,
    /// Still in the ramp.
    pub ramping: bool,
    /// Bytes per second over the last interval.
    pub bytes_per_second: f64,
    /// I/Os per second over the last interval.
    pub iops: f64,
    /// Per job and target, in the order of the test's jobs.
    pub groups: Vec<LiveGroup>,
    /// The test's last sample, taken when its workers ended: its totals are final, and its
    /// interval (since the sample before) may be short.
    pub last: bool,
}

/// The workers of one job on one target (or set of files).
#[derive(Clone, Debug, PartialEq)]
pub struct LiveGroup {
    /// The job's name.
    pub job: String,
    /// The target (the first file of a set, with how many more).
    pub target: String,
    /// Reads.
    pub read: LiveDirection,
    /// Writes.
    pub write: LiveDirection,
    /// Trims (discards).
    pub trim: LiveDirection,
    /// What the group's data verification found so far (`None`: it does not verify, or has
    /// checked nothing yet).
    pub verify: Option<LiveVerify>,
}

impl LiveGroup {
    /// Every direction with its figures, in [`DIRECTIONS`] order.
    pub fn directions(&self) -> [(Direction, &LiveDirection); 3] {
        [
            (Direction::Read, &self.read),
            (Direction::Write, &self.write),
            (Direction::Trim, &self.trim),
        ]
    }
}

/// One direction of a [`LiveGroup`]: totals since the test started (ramp included) and the
/// figures of the last interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveDirection {
    /// Totals since the test started.
    pub totals: DirectionTotals,
    /// Bytes per second over the last interval.
    pub bytes_per_second: f64,
    /// I/Os per second over the last interval.
    pub iops: f64,
    /// Median latency of the last interval, ns (within the live histogram's error).
    pub p50_latency_ns: Option<u64>,
    /// 99th percentile latency of the last interval, ns.
    pub p99_latency_ns: Option<u64>,
    /// Live histogram counts since the test started ([`crate::stats::live`] layout).
    pub latency_buckets: Vec<u64>,
}

/// Which workers make up each [`LiveGroup`], and what the coordinator read last.
#[derive(Debug)]
pub struct LiveGroups {
    names: Vec<(String, String)>,
    worker_group: Vec<usize>,
    last: Vec<LiveDirection>,
}

impl LiveGroups {
    /// Groups named `(job, target)`; `worker_group[i]` is the group of worker `i`.
    pub fn new(names: Vec<(String, String)>, worker_group: Vec<usize>) -> Self {
        let last = vec![LiveDirection::default(); names.len() * DIRECTIONS.len()];
        LiveGroups {
            names,
            worker_group,
            last,
        }
    }

    /// Reads every worker's progress and returns each group's figures since the last read,
    /// `seconds` ago.
    pub fn sample(&mut self, progress: &[WorkerProgress], seconds: f64) -> Vec<LiveGroup> {
        let mut now: Vec<LiveDirection> = (0..self.last.len())
            .map(|_| LiveDirection {
                latency_buckets: vec![0; LIVE_BUCKET_COUNT],
                ..LiveDirection::default()
            })
            .collect();
        for (worker, &group) in progress.iter().zip(&self.worker_group) {
            for (offset, direction) in DIRECTIONS.into_iter().enumerate() {
                let Some(slot) = now.get_mut(group * DIRECTIONS.len() + offset) else {
                    continue;
                };
                let source = worker.direction(direction);
                let totals = source.read();
                slot.totals.bytes += totals.bytes;
                slot.totals.io_count += totals.io_count;
                slot.totals.latency_sum_ns += totals.latency_sum_ns;
                source.add_buckets_to(&mut slot.latency_buckets);
            }
        }
        let mut verify: Vec<Option<LiveVerify>> = vec![None; self.names.len()];
        for (worker, &group) in progress.iter().zip(&self.worker_group) {
            if let (Some(found), Some(slot)) = (worker.verify.read(), verify.get_mut(group)) {
                slot.get_or_insert_with(LiveVerify::default).absorb(found);
            }
        }
        let seconds = seconds.max(1e-9);
        let mut interval = vec![0u64; LIVE_BUCKET_COUNT];
        for (current, last) in now.iter_mut().zip(&self.last) {
            current.bytes_per_second =
                current.totals.bytes.saturating_sub(last.totals.bytes) as f64 / seconds;
            current.iops =
                current.totals.io_count.saturating_sub(last.totals.io_count) as f64 / seconds;
            for (index, count) in interval.iter_mut().enumerate() {
                let before = last.latency_buckets.get(index).copied().unwrap_or(0);
                *count = current.latency_buckets[index].saturating_sub(before);
            }
            current.p50_latency_ns = live_percentile(&interval, 50.0);
            current.p99_latency_ns = live_percentile(&interval, 99.0);
        }
        let groups = self
            .names
            .iter()
            .enumerate()
            .map(|(index, (job, target))| LiveGroup {
                job: job.clone(),
                target: target.clone(),
                read: now[index * 3].clone(),
                write: now[index * 3 + 1].clone(),
                trim: now[index * 3 + 2].clone(),
                verify: verify[index],
            })
            .collect();
        self.last = now;
        groups
    }
}

/// Planned end of a job's window after the common start, ns (None: ends with its bytes).
fn planned_end_ns(job: &JobPlan) -> Option<u64> {
    let workload = &job.workload;
    match workload.length {
        RunLength::Time { duration_ns } => {
            let latest_start = workload
                .controls
                .start_delay_high_ns
                .unwrap_or(workload.start_delay_ns);
            Some(latest_start + workload.ramp_ns + duration_ns)
        }
        RunLength::Bytes { .. } => None,
    }
}

/// How long `test` is planned to take from its start (delays and ramp included), ns; `None`
/// when a job ends with its bytes rather than a time.
pub fn planned_test_ns(test: &TestPlan) -> Option<u64> {
    test.jobs
        .iter()
        .map(planned_end_ns)
        .try_fold(0u64, |latest, end| end.map(|end| latest.max(end)))
}
