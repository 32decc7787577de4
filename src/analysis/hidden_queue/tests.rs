//! The hidden queue on synthetic results: seed 004's figures (4 KiB buffered reads at QD 1,
//! one 128 KiB window per 5 ms request), and the cases that must not be called so.

use crate::analysis::confirmation::decide;
use crate::analysis::test_results::{
    SECONDS, direction, empty_direction, hop, idle_cpu, test_of, workload,
};
use crate::analysis::test_support::{assert_latency_bound, facts};
use crate::analysis::verdict::analyse_test;
use crate::result::{
    AccessHint, BlockDeviceUsage, ConfirmationOutcome, CpuResult, Experiment, HopKind, QueueLimits,
    StoragePath, TargetInfo, TargetKind, TestAnalysis, TestResult, TrustKind, Verdict,
};

const KIB: u64 = 1024;

/// /dev/sdb (an iSCSI LUN seen as a local disk, read-ahead `read_ahead_kib`, write-back
/// throttling at 75 ms) under the page cache.
fn path(read_ahead_kib: u64) -> StoragePath {
    let mut disk = hop("block:sdb", HopKind::Disk, "sdb", None);
    disk.queue = Some(QueueLimits {
        nr_requests: Some(64),
        device_queue_depth: Some(128),
        read_ahead_bytes: Some(read_ahead_kib * KIB),
        writeback_throttle_latency_us: Some(75_000),
        ..QueueLimits::default()
    });
    StoragePath {
        target: "/dev/sdb".into(),
        hops: vec![
            {
                let mut cache = hop("page-cache", HopKind::PageCache, "page cache", None);
                cache.description = "passed by buffered I/O only; write-back from 10 % of memory dirty, writers wait from 20 % (vm.dirty_background_ratio, vm.dirty_ratio)".into();
                cache
            },
            disk,
        ].into(),
        notes: Vec::new(),
        first_blocks_all_zero: Some(false),
        allocated_bytes: None,
    }
}

fn target() -> TargetInfo {
    TargetInfo {
        path: "/dev/sdb".into(),
        kind: TargetKind::BlockDevice,
        size_bytes: 100 << 30,
        logical_block_size_bytes: 512,
        physical_block_size_bytes: 512,
        rotational: Some(false),
        filesystem: None,
        device: Some("sdb".into()),
        direct_io_alignment_bytes: Some(512),
        created_by_iopath: false,
        transfer_sizes: None,
        file_session: None,
        created_content: None,
        allocated_bytes_looked: None,
        read_only: false,
    }
}

/// The CPU of an idle host, with `sdb` having done `usage` over the test's seconds.
fn cpu_with(usage: BlockDeviceUsage) -> CpuResult {
    CpuResult {
        block_devices: vec![usage],
        ..idle_cpu()
    }
}

/// `requests` reads of `request_bytes` each over the test, each 0.1 ms in the device.
fn device_reads(requests: u64, request_bytes: u64) -> BlockDeviceUsage {
    BlockDeviceUsage {
        device: "sdb".into(),
        reads: requests,
        read_bytes: requests * request_bytes,
        read_time_ns: requests * 100_000,
        ..BlockDeviceUsage::default()
    }
}

/// Seed 004's dd: 4 KiB buffered sequential reads at QD 1, `rate` bytes/s at `latency_ns`
/// mean, over a device that did `usage`; hint `hint`.
fn dd_read(rate: f64, latency_ns: f64, usage: BlockDeviceUsage, hint: AccessHint) -> TestResult {
    let mut buffered = workload(4096, 100, 0, 1);
    buffered.buffered = true;
    buffered.handling.access_hint = hint;
    test_of(
        buffered,
        direction(rate, 4096, latency_ns, 0.01),
        empty_direction(),
        cpu_with(usage),
    )
}

fn analyse(test: &TestResult, read_ahead_kib: u64) -> TestAnalysis {
    analyse_test(test, &[target()], &[path(read_ahead_kib)], &facts())
}

/// 128 KiB per 4.7 ms: 27.9 MB/s, one window per device request.
const WINDOWS_PER_SECOND: f64 = 1e3 / 4.7;

/// Seed 004's dd at `window_kib` per 4.7 ms, through requests of `request_kib` each, 146 µs
/// per 4 KiB read on average.
fn seed_004(window_kib: u64, request_kib: u64, hint: AccessHint) -> TestResult {
    let rate = (window_kib * KIB) as f64 * WINDOWS_PER_SECOND;
    let requests = (WINDOWS_PER_SECOND * SECONDS as f64) as u64;
    dd_read(
        rate,
        146_000.0,
        device_reads(requests, request_kib * KIB),
        hint,
    )
}

/// Asserts that `analysis` is `verdict` and that its evidence holds every one of `parts`.
#[track_caller]
fn assert_said(analysis: &TestAnalysis, verdict: Verdict, parts: &[&str]) {
    assert_eq!(analysis.verdict, verdict, "{}", analysis.evidence);
    for part in parts {
        assert!(
            analysis.evidence.contains(part),
            "{part}: {}",
            analysis.evidence
        );
    }
}

#[test]
fn seed_004s_28_mb_s_is_the_read_ahead_window_over_its_round_trip() {
    let test = seed_004(128, 128, AccessHint::None);
    assert_said(
        &analyse(&test, 128),
        Verdict::ReadAheadBound,
        &[
            "read-ahead window of sdb in flight (read_ahead_kb 128)",
            "reads of 128.0 KiB each, 213 a second",
            "27.9 MB/s × 4.70 ms per window",
            "blockdev --setra 512 /dev/sdb",
            "O_DIRECT (--direct) with a queue depth",
        ],
    );
    assert_eq!(Verdict::ReadAheadBound.name(), "read-ahead-bound");

    // POSIX_FADV_SEQUENTIAL doubles the file's window: 256 KiB requests match it.
    let test = seed_004(256, 256, AccessHint::Sequential);
    assert_said(
        &analyse(&test, 128),
        Verdict::ReadAheadBound,
        &["doubled by POSIX_FADV_SEQUENTIAL"],
    );
}

#[test]
fn requests_that_do_not_match_the_window_are_not_read_ahead_bound() {
    // A window of 512 KiB the requests never filled.
    let test = seed_004(128, 128, AccessHint::None);
    assert_latency_bound(&analyse(&test, 512), "behind the page cache", &[]);
    // POSIX_FADV_RANDOM turns read-ahead off.
    let test = seed_004(128, 128, AccessHint::Random);
    assert_latency_bound(&analyse(&test, 128), "behind the page cache", &[]);
    // A result without device counters (written before them) says what it said before.
    let mut old = seed_004(128, 128, AccessHint::None);
    old.cpu.block_devices.clear();
    assert_latency_bound(&analyse(&old, 128), "behind the page cache", &[]);
}

#[test]
fn a_stream_that_never_waited_for_the_device_is_not_read_ahead_bound() {
    // 2 GB/s of 4 KiB reads at 2 µs each: the window was always ready before it was needed.
    let rate = 2e9;
    let requests = (rate * SECONDS as f64 / (128.0 * 1024.0)) as u64;
    let test = dd_read(
        rate,
        2_000.0,
        device_reads(requests, 128 * KIB),
        AccessHint::None,
    );
    assert_ne!(analyse(&test, 128).verdict, Verdict::ReadAheadBound);
}

#[test]
fn a_buffered_read_the_device_barely_saw_measured_the_page_cache() {
    let rate = 28e6;
    let moved = rate as u64 * SECONDS;
    // The device read a tenth of it.
    let usage = device_reads(moved / 10 / (128 * KIB), 128 * KIB);
    let test = dd_read(rate, 146_000.0, usage, AccessHint::None);
    let analysis = analyse(&test, 128);
    assert_ne!(analysis.verdict, Verdict::ReadAheadBound);
    let note = analysis
        .trust_notes
        .iter()
        .find(|note| note.kind == TrustKind::BufferedIo && note.message.contains("mostly"))
        .unwrap_or_else(|| panic!("{:?}", analysis.trust_notes));
    assert!(
        note.message
            .starts_with("mostly the page cache: sdb moved 26.6 MiB of the 267.0 MiB"),
        "{}",
        note.message
    );
}

#[test]
fn buffered_writes_the_device_kept_pace_with_are_write_back_bound() {
    let mut buffered = workload(4096, 0, 0, 1);
    buffered.buffered = true;
    let rate = 50e6;
    let written = rate as u64 * SECONDS;
    let usage = BlockDeviceUsage {
        device: "sdb".into(),
        writes: written / (512 * KIB),
        write_bytes: written / 100 * 98,
        write_time_ns: SECONDS * 1_000_000_000 * 3,
        ..BlockDeviceUsage::default()
    };
    let test = test_of(
        buffered.clone(),
        empty_direction(),
        direction(rate, 4096, 80_000.0, 0.01),
        cpu_with(usage.clone()),
    );
    assert_said(
        &analyse(&test, 128),
        Verdict::WriteBackBound,
        &[
            "write-back of sdb carried the writes: the device wrote",
            "(98 %)",
            "3.0 in flight on average (nr_requests 64, write-back throttling at 75000 µs)",
            "the dirty limits decide when a writer waits (write-back from 10 % of memory dirty, writers wait from 20 % (vm.dirty_background_ratio, vm.dirty_ratio))",
        ],
    );
    // Writes the device never saw were absorbed by the page cache: not write-back-bound.
    let absorbed = BlockDeviceUsage {
        write_bytes: written / 10,
        ..usage
    };
    let test = test_of(
        buffered,
        empty_direction(),
        direction(rate, 4096, 80_000.0, 0.01),
        cpu_with(absorbed),
    );
    assert_ne!(analyse(&test, 128).verdict, Verdict::WriteBackBound);
}

#[test]
fn o_direct_at_the_same_depth_confirms_a_hidden_queue_by_losing() {
    let direct = |change, found| decide(Verdict::ReadAheadBound, Experiment::Direct, change, found);
    assert_eq!(
        direct(-97.0, Verdict::QueueDepthBound),
        (ConfirmationOutcome::Confirmed, Verdict::ReadAheadBound)
    );
    assert_eq!(
        direct(-3.0, Verdict::DeviceBound),
        (ConfirmationOutcome::Refuted, Verdict::DeviceBound)
    );
    assert_eq!(
        direct(-30.0, Verdict::DeviceBound),
        (ConfirmationOutcome::Inconclusive, Verdict::ReadAheadBound)
    );
}
