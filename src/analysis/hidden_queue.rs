//! Buffered I/O's hidden queue: the requests the kernel sends to the device on a buffered
//! stream's behalf, seen in the device's own counters over the measured window
//! ([`crate::result::BlockDeviceUsage`]).
//!
//! - A buffered sequential read at a shallow queue is carried by the read-ahead window
//!   (`queue/read_ahead_kb`): the window in flight, by Little's law the stream's throughput ×
//!   the time of one device request, matches the window → *read-ahead-bound*.
//! - Buffered writes whose bytes the device wrote in the window were paced by write-back →
//!   *write-back-bound*.
//! - A buffered test whose bytes mostly never reached the device measured the page cache.
//!
//! Pure functions of the result and the path; docs/verdict.md, "The hidden queue".

use crate::result::{AccessHint, BlockDeviceUsage, Hop, HopKind, StoragePath, TestResult};
use crate::units::{format_bytes, format_latency, format_percent, format_rate};

/// The window in flight within this share (either way) of the read-ahead window matches it.
pub const WINDOW_MATCH_PERCENT: f64 = 25.0;
/// A buffered writer is paced by write-back when the device wrote at least this share of the
/// bytes the test wrote in the same window.
pub const WRITE_BACK_REACHED_PERCENT: f64 = 75.0;
/// Below this share of the test's bytes reaching the device, the page cache served most of
/// the test.
pub const CACHE_SERVED_PERCENT: f64 = 50.0;

/// The topmost block device of a path that has queue settings, and what it did during `test`.
pub fn stream_device<'a>(
    test: &'a TestResult,
    paths: &'a [StoragePath],
    target_indexes: &[usize],
) -> Option<(&'a Hop, &'a BlockDeviceUsage)> {
    target_indexes.iter().find_map(|&index| {
        let hop = paths
            .get(index)?
            .hops
            .iter()
            .find(|hop| hop.queue.is_some() && hop.key.starts_with("block:"))?;
        let usage = test
            .cpu
            .block_devices
            .iter()
            .find(|usage| usage.device == hop.name)?;
        Some((hop, usage))
    })
}

/// The read-ahead window a job's hint gives its files, from the device's `read_ahead_kb`:
/// twice it for `POSIX_FADV_SEQUENTIAL`, none for `POSIX_FADV_RANDOM`.
fn hinted_window(test: &TestResult, device_window: u64) -> (u64, &'static str) {
    let sequential_hint = test.jobs.iter().any(|job| {
        matches!(
            job.workload.handling.access_hint,
            AccessHint::Sequential | AccessHint::ByPattern
        )
    });
    let random_hint = test
        .jobs
        .iter()
        .any(|job| job.workload.handling.access_hint == AccessHint::Random);
    if random_hint {
        (0, ", POSIX_FADV_RANDOM: no read-ahead")
    } else if sequential_hint {
        (
            device_window.saturating_mul(2),
            ", doubled by POSIX_FADV_SEQUENTIAL",
        )
    } else {
        (device_window, "")
    }
}

/// The figures of a buffered sequential read stream carried by read-ahead.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadAheadWindow {
    /// The device whose window it is (`loop0`).
    pub device: String,
    /// The window the kernel reads ahead, bytes (after the job's hint).
    pub window_bytes: u64,
    /// The device's `read_ahead_kb`, bytes.
    pub device_window_bytes: u64,
    /// The window in flight by Little's law, bytes.
    pub in_flight_bytes: f64,
    /// The time one window took, ns.
    pub window_latency_ns: f64,
    /// The device's read requests and their mean size.
    pub requests: u64,
    /// Mean bytes of a device read request.
    pub request_bytes: f64,
    /// Device read requests per second.
    pub requests_per_second: f64,
    /// The job's access hint, as words (empty without one).
    pub hint: &'static str,
}

impl ReadAheadWindow {
    /// The evidence line's figures: `read-ahead window of loop0 in flight (read_ahead_kb 128): …`.
    pub fn evidence(&self, throughput: f64) -> String {
        let larger = (self.device_window_bytes / 1024).saturating_mul(2).max(256);
        format!(
            "read-ahead window of {} in flight (read_ahead_kb {}{}): the device served {} reads of {} each, {:.0} a second; Little's law: {} × {} per window = {}, one window at a time",
            self.device,
            self.device_window_bytes / 1024,
            self.hint,
            self.requests,
            format_bytes(self.request_bytes.round() as u64),
            self.requests_per_second,
            format_rate(throughput),
            format_latency(self.window_latency_ns),
            format_bytes(self.in_flight_bytes.round() as u64),
        ) + &format!(
            "; the kernel's queue, not iopath's --qd, sets the rate: a larger window (blockdev --setra {} /dev/{}, read_ahead_kb {larger}), O_DIRECT (--direct) with a queue depth, or a larger block",
            larger * 2,
            self.device,
        )
    }
}

/// The read-ahead window that carried a buffered sequential read, when the device's requests
/// show it: every job buffered, reading only and sequentially; most of the bytes reached the
/// device; and the window in flight — the stream's throughput × the time of one device
/// request (the device's own time per request when several overlap, else the time between
/// requests) — within [`WINDOW_MATCH_PERCENT`] of the window.
pub fn read_ahead_window(
    test: &TestResult,
    paths: &[StoragePath],
    target_indexes: &[usize],
) -> Option<ReadAheadWindow> {
    let reading_sequentially = !test.jobs.is_empty()
        && test.jobs.iter().all(|job| {
            !job.direct
                && job
                    .workload
                    .access
                    .lines
                    .iter()
                    .all(|line| line.random_percent == 0 && line.read_percent == 100)
        });
    if !reading_sequentially || test.read.io_count == 0 || test.write.io_count > 0 {
        return None;
    }
    let (hop, usage) = stream_device(test, paths, target_indexes)?;
    let device_window = hop.queue.as_ref()?.read_ahead_bytes?;
    let (window, hint) = hinted_window(test, device_window);
    let wall_ns = test.cpu.wall_ns as f64;
    let throughput = test.read.bytes_per_second;
    if window == 0 || usage.reads == 0 || wall_ns <= 0.0 || throughput <= 0.0 {
        return None;
    }
    let reached = usage.read_bytes as f64 / (throughput * wall_ns / 1e9) * 100.0;
    if reached < CACHE_SERVED_PERCENT {
        return None;
    }
    let between_requests_ns = wall_ns / usage.reads as f64;
    let in_device_ns = usage.read_time_ns as f64 / usage.reads as f64;
    let window_latency_ns = between_requests_ns.max(in_device_ns);
    let in_flight = throughput * window_latency_ns / 1e9;
    let off = (in_flight / window as f64 - 1.0).abs() * 100.0;
    (off <= WINDOW_MATCH_PERCENT).then(|| ReadAheadWindow {
        device: hop.name.clone(),
        window_bytes: window,
        device_window_bytes: device_window,
        in_flight_bytes: in_flight,
        window_latency_ns,
        requests: usage.reads,
        request_bytes: usage.mean_read_bytes().unwrap_or(0.0),
        requests_per_second: usage.reads as f64 / (wall_ns / 1e9),
        hint,
    })
}

/// Evidence that write-back paced buffered writes: every job buffered and writing only, and
/// the device wrote at least [`WRITE_BACK_REACHED_PERCENT`] of the test's bytes in the same
/// window.
pub fn write_back(
    test: &TestResult,
    paths: &[StoragePath],
    target_indexes: &[usize],
) -> Option<String> {
    let buffered_writes = !test.jobs.is_empty()
        && test.jobs.iter().all(|job| !job.direct)
        && test.write.io_count > 0
        && test.read.io_count == 0;
    if !buffered_writes {
        return None;
    }
    let (hop, usage) = stream_device(test, paths, target_indexes)?;
    let wall_ns = test.cpu.wall_ns as f64;
    let written = test.write.bytes_per_second * wall_ns / 1e9;
    if usage.writes == 0 || written <= 0.0 {
        return None;
    }
    let reached = usage.write_bytes as f64 / written * 100.0;
    if reached < WRITE_BACK_REACHED_PERCENT {
        return None;
    }
    let queue = hop.queue.as_ref()?;
    let in_flight = usage.write_time_ns as f64 / wall_ns;
    let mut settings = Vec::new();
    if let Some(requests) = queue.nr_requests {
        settings.push(format!("nr_requests {requests}"));
    }
    match queue.writeback_throttle_latency_us {
        Some(0) => settings.push("write-back throttling off".into()),
        Some(us) => settings.push(format!("write-back throttling at {us} µs")),
        None => {}
    }
    // The host's dirty limits, as discovery wrote them into the page cache hop.
    let dirty = target_indexes
        .iter()
        .filter_map(|&index| paths.get(index))
        .flat_map(|path| &path.hops)
        .filter(|hop| hop.kind == HopKind::PageCache)
        .find_map(|hop| hop.description.split_once("; ").map(|(_, limits)| limits))
        .unwrap_or("vm.dirty_ratio, vm.dirty_bytes");
    Some(format!(
        "write-back of {} carried the writes: the device wrote {} of the {} the test wrote ({}), {} writes of {} each, {:.1} in flight on average{}; the kernel's queue, not iopath's --qd, sets the rate: the dirty limits decide when a writer waits ({dirty}); O_DIRECT (--direct) with a queue depth measures the device's own",
        hop.name,
        format_bytes(usage.write_bytes),
        format_bytes(written.round() as u64),
        format_percent(reached),
        usage.writes,
        format_bytes(usage.mean_write_bytes().unwrap_or(0.0).round() as u64),
        in_flight,
        if settings.is_empty() {
            String::new()
        } else {
            format!(" ({})", settings.join(", "))
        }
    ))
}

/// A trust note when a buffered test's bytes mostly never reached the device: the page cache
/// served (or absorbed) them.
pub fn cache_served(
    test: &TestResult,
    paths: &[StoragePath],
    target_indexes: &[usize],
) -> Option<String> {
    if test.jobs.iter().all(|job| job.direct) {
        return None;
    }
    let (hop, usage) = stream_device(test, paths, target_indexes)?;
    let wall_ns = test.cpu.wall_ns as f64;
    let moved = (test.read.bytes_per_second + test.write.bytes_per_second) * wall_ns / 1e9;
    if moved < 1024.0 * 1024.0 {
        return None;
    }
    let reached = (usage.read_bytes + usage.write_bytes) as f64 / moved * 100.0;
    (reached < CACHE_SERVED_PERCENT).then(|| {
        format!(
            "mostly the page cache: {} moved {} of the {} the test read and wrote ({}); the rest was served from or left in memory",
            hop.name,
            format_bytes(usage.read_bytes + usage.write_bytes),
            format_bytes(moved.round() as u64),
            format_percent(reached)
        )
    })
}

#[cfg(test)]
mod tests;
