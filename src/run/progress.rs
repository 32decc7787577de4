//! Live progress: each worker publishes its running totals through relaxed atomics (a plain
//! store on the hot path, no lock); the coordinator reads them once a second for the live line.

use std::sync::atomic::{AtomicU64, Ordering};

/// Running totals of one worker, including the ramp.
#[derive(Debug, Default)]
pub struct WorkerProgress {
    bytes: AtomicU64,
    io_count: AtomicU64,
    latency_sum_ns: AtomicU64,
}

impl WorkerProgress {
    /// Publishes the worker's totals (called by the owning worker only).
    #[inline]
    pub fn publish(&self, bytes: u64, io_count: u64, latency_sum_ns: u64) {
        self.bytes.store(bytes, Ordering::Relaxed);
        self.io_count.store(io_count, Ordering::Relaxed);
        self.latency_sum_ns.store(latency_sum_ns, Ordering::Relaxed);
    }

    /// Reads the totals: `(bytes, io_count, latency_sum_ns)`.
    pub fn read(&self) -> (u64, u64, u64) {
        (
            self.bytes.load(Ordering::Relaxed),
            self.io_count.load(Ordering::Relaxed),
            self.latency_sum_ns.load(Ordering::Relaxed),
        )
    }

    /// Sums the totals of several workers.
    pub fn sum(progress: &[WorkerProgress]) -> (u64, u64, u64) {
        progress.iter().fold((0, 0, 0), |(b, i, l), p| {
            let (bytes, ios, latency) = p.read();
            (b + bytes, i + ios, l + latency)
        })
    }
}

/// What the live line shows, once a second.
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
}
