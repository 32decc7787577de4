//! Synthetic results for analysis tests: directions, jobs, tests and RunResults with the
//! figures a test wants, built without running anything.

use crate::result::{
    AccessLine, AccessSpec, Capabilities, CoreUsage, CpuResult, DirectionResult, EngineReport,
    ErrorSummary, Hop, HopCapacity, HopKind, HopOrigin, IntervalPoint, JobResult, LatencySummary,
    RunResult, StopReason, TargetInfo, TestResult, Workload,
};
use crate::stats::histogram::LatencyHistogram;
use crate::workload::suite::base_workload;
use std::collections::BTreeMap;

/// A discovered hop of `kind` with `capacity`, no queue settings, carrying all of a target's
/// traffic.
pub fn hop(key: &str, kind: HopKind, name: &str, capacity: Option<HopCapacity>) -> Hop {
    Hop {
        key: key.into(),
        kind,
        name: name.into(),
        description: String::new(),
        depth: 0,
        origin: HopOrigin::Discovered,
        capacity,
        queue: None,
        protocol: None,
        read_share: 1.0,
        write_share: 1.0,
    }
}

/// Seconds every synthetic test lasts.
pub const SECONDS: u64 = 10;

/// A direction moving `bytes_per_second` in I/Os of `io_bytes` for [`SECONDS`] full seconds,
/// each second within ±`wobble` of the mean (alternating), at `latency_ns` mean latency.
pub fn direction(
    bytes_per_second: f64,
    io_bytes: u64,
    latency_ns: f64,
    wobble: f64,
) -> DirectionResult {
    if bytes_per_second == 0.0 {
        return empty_direction();
    }
    let series: Vec<IntervalPoint> = (0..SECONDS)
        .map(|second| {
            let factor = if second % 2 == 0 {
                1.0 + wobble
            } else {
                1.0 - wobble
            };
            let bytes = (bytes_per_second * factor) as u64;
            IntervalPoint {
                start_ns: second * 1_000_000_000,
                duration_ns: 1_000_000_000,
                bytes,
                io_count: bytes / io_bytes,
                mean_latency_ns: latency_ns as u64,
                p99_latency_ns: (latency_ns * 2.0) as u64,
                latency_buckets: Vec::new(),
            }
        })
        .collect();
    let bytes: u64 = series.iter().map(|p| p.bytes).sum();
    let io_count = bytes / io_bytes;
    DirectionResult {
        io_count,
        bytes,
        iops: io_count as f64 / SECONDS as f64,
        bytes_per_second: bytes as f64 / SECONDS as f64,
        latency: latency(latency_ns),
        error_count: 0,
        series,
        histogram: LatencyHistogram::new().to_sparse(),
        split: None,
    }
}

/// A direction that moved nothing.
pub fn empty_direction() -> DirectionResult {
    DirectionResult {
        io_count: 0,
        bytes: 0,
        iops: 0.0,
        bytes_per_second: 0.0,
        latency: latency(0.0),
        error_count: 0,
        series: Vec::new(),
        histogram: LatencyHistogram::new().to_sparse(),
        split: None,
    }
}

/// Latency figures around `mean_ns`.
pub fn latency(mean_ns: f64) -> LatencySummary {
    LatencySummary {
        min_ns: (mean_ns / 2.0) as u64,
        mean_ns,
        stddev_ns: mean_ns / 10.0,
        max_ns: (mean_ns * 3.0) as u64,
        percentiles_ns: BTreeMap::new(),
    }
}

/// Two directions added up.
pub fn add(a: &DirectionResult, b: &DirectionResult) -> DirectionResult {
    if a.io_count == 0 {
        return b.clone();
    }
    if b.io_count == 0 {
        return a.clone();
    }
    let mut total = a.clone();
    total.io_count += b.io_count;
    total.bytes += b.bytes;
    total.iops += b.iops;
    total.bytes_per_second += b.bytes_per_second;
    for (point, other) in total.series.iter_mut().zip(&b.series) {
        point.bytes += other.bytes;
        point.io_count += other.io_count;
    }
    total
}

/// A workload of `io_bytes` I/Os, `read_percent` reads, `random_percent` random, at
/// `queue_depth`.
pub fn workload(io_bytes: u64, read_percent: u8, random_percent: u8, queue_depth: u32) -> Workload {
    Workload {
        access: AccessSpec {
            lines: vec![AccessLine::new(io_bytes, 100, read_percent, random_percent)],
        },
        queue_depth,
        ..base_workload()
    }
}

/// A test of one job on target 0.
pub fn test_of(
    workload: Workload,
    read: DirectionResult,
    write: DirectionResult,
    cpu: CpuResult,
) -> TestResult {
    test_on(workload, read, write, cpu, vec![0])
}

/// A test of one job spread over the targets `target_indexes`.
pub fn test_on(
    workload: Workload,
    read: DirectionResult,
    write: DirectionResult,
    cpu: CpuResult,
    target_indexes: Vec<usize>,
) -> TestResult {
    let total = add(&read, &write);
    let direct = !workload.buffered;
    let queue_depth = workload.queue_depth;
    let job = JobResult {
        verification: None,
        name: "job".into(),
        group: 0,
        workload,
        target_indexes,
        engine: EngineReport {
            name: "io_uring".into(),
            capabilities: Capabilities {
                max_queue_depth: queue_depth,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
                separates_submission: false,
            },
            write_stability: None,
            connections: None,
        },
        direct,
        worker_threads: 1,
        queue_depth_per_worker: queue_depth,
        ramp_ns: 0,
        measured_ns: SECONDS * 1_000_000_000,
        fsync_ns: 0,
        stop_reason: StopReason::Completed,
        read: read.clone(),
        write: write.clone(),
        trim: DirectionResult::default(),
        total: total.clone(),
        errors: ErrorSummary::default(),
        latency_target: None,
    };
    TestResult {
        verification: None,
        name: "test".into(),
        jobs: vec![job],
        measured_ns: SECONDS * 1_000_000_000,
        stop_reason: StopReason::Completed,
        read,
        write,
        trim: DirectionResult::default(),
        total,
        cpu,
        errors: ErrorSummary::default(),
        warnings: Vec::new(),
        sweep: Vec::new(),
        steady_state: None,
        analysis: None,
        trace_overflow_ios: 0,
        server_metrics: Vec::new(),
    }
}

/// CPU figures: iopath's busiest thread at `thread` % of a core, two cores at `cores` % busy.
pub fn cpu(thread: f64, cores: [f64; 2], softirq: f64) -> CpuResult {
    let wall = SECONDS * 1_000_000_000;
    CpuResult {
        wall_ns: wall,
        user_ns: (wall as f64 * thread / 100.0 / 2.0) as u64,
        system_ns: (wall as f64 * thread / 100.0 / 2.0) as u64,
        cpu_count: 2,
        busiest_thread_ns: (wall as f64 * thread / 100.0) as u64,
        busiest_thread_cpu_wait_ns: 0,
        cores: cores
            .iter()
            .enumerate()
            .map(|(index, busy)| CoreUsage {
                cpu: index as u32,
                total_ns: wall,
                busy_ns: (wall as f64 * busy / 100.0) as u64,
                irq_ns: 0,
                softirq_ns: (wall as f64 * softirq / 100.0) as u64,
            })
            .collect(),
        other_processes: Vec::new(),
        block_devices: Vec::new(),
    }
}

/// A CPU that did little.
pub fn idle_cpu() -> CpuResult {
    cpu(8.0, [10.0, 6.0], 0.0)
}

/// A RunResult around one network target and `tests`, built from JSON so that fields other
/// engineers add to the run (with serde defaults) do not break it.
pub fn run_result(target: &TargetInfo, tests: Vec<TestResult>) -> RunResult {
    run_result_of(std::slice::from_ref(target), tests)
}

/// [`run_result`] around several targets.
pub fn run_result_of(targets: &[TargetInfo], tests: Vec<TestResult>) -> RunResult {
    serde_json::from_value(serde_json::json!({
        "schema_version": crate::result::SCHEMA_VERSION,
        "iopath_version": "test",
        "command_line": [],
        "started_at": "2026-01-01T00:00:00Z",
        "label": null,
        "partial": false,
        "host": {
            "hostname": "test",
            "kernel": "6.0",
            "cpu_model": "test",
            "cpu_count": 2,
            "memory_bytes": 8u64 << 30
        },
        "targets": targets,
        "tests": tests,
        "warnings": []
    }))
    .expect("a RunResult")
}
