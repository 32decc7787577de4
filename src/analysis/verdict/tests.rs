//! The classification on synthetic RunResults: one test per verdict, with the figures that
//! should decide it.

use super::*;
use crate::analysis::declared::DeclaredPath;
use crate::analysis::test_results::{
    SECONDS, cpu, direction, empty_direction, hop, idle_cpu, run_result, test_of, workload,
};
use crate::analysis::test_support::{assert_latency_bound, facts};
use crate::result::{DirectionResult, HopCapacity, QueueLimits, RunResult, TrustKind};

fn file_target(size_bytes: u64) -> TargetInfo {
    TargetInfo {
        path: "/data/test.dat".into(),
        kind: TargetKind::File,
        size_bytes,
        logical_block_size_bytes: 512,
        physical_block_size_bytes: 4096,
        rotational: Some(false),
        filesystem: Some("ext4".into()),
        device: Some("nvme0n1".into()),
        direct_io_alignment_bytes: Some(512),
        created_by_iopath: true,
        transfer_sizes: None,
        file_session: None,
        created_content: None,
        allocated_bytes_looked: None,
        read_only: false,
    }
}

fn capacity(bytes_per_second: u64, duplex: Duplex) -> Option<HopCapacity> {
    Some(HopCapacity {
        payload_bytes_per_second: bytes_per_second,
        iops: None,
        duplex,
        catalog_name: None,
        variant: None,
        derivation: String::new(),
    })
}

/// file → page cache (10 GB/s) → ext4 → nvme0n1 (queue limit 1023) → PCIe 3.0 x4.
fn local_nvme_path() -> StoragePath {
    let pcie = crate::analysis::links::pcie(3, 4).unwrap();
    let mut disk = hop("block:nvme0n1", HopKind::Disk, "nvme0n1", None);
    disk.queue = Some(QueueLimits {
        hardware_queues: Some(1),
        hardware_queue_depth: Some(1023),
        ..QueueLimits::default()
    });
    StoragePath {
        target: "/data/test.dat".into(),
        hops: vec![
            hop("file:/data/test.dat", HopKind::File, "test.dat", None),
            hop(
                "page-cache",
                HopKind::PageCache,
                "page cache",
                capacity(10_000_000_000, Duplex::Half),
            ),
            hop("fs:nvme0n1", HopKind::Filesystem, "ext4", None),
            disk,
            hop(
                "pci:0000:01:00.0",
                HopKind::Bus,
                "PCIe 3.0 x4",
                Some(crate::analysis::block::capacity_of(&pcie)),
            ),
        ]
        .into(),
        notes: Vec::new(),
        first_blocks_all_zero: Some(false),
        allocated_bytes: Some(1 << 30),
    }
}

fn analyse_local(test: &TestResult) -> TestAnalysis {
    analyse_test(
        test,
        &[file_target(1 << 30)],
        &[local_nvme_path()],
        &facts(),
    )
}

pub(crate) fn nbd_target() -> TargetInfo {
    TargetInfo {
        path: "nbd://127.0.0.1:10809/disk".into(),
        kind: TargetKind::Nbd,
        size_bytes: 8 << 30,
        logical_block_size_bytes: 512,
        physical_block_size_bytes: 4096,
        rotational: None,
        filesystem: Some("ext4".into()),
        device: None,
        direct_io_alignment_bytes: Some(512),
        created_by_iopath: false,
        transfer_sizes: None,
        file_session: None,
        created_content: None,
        allocated_bytes_looked: None,
        read_only: false,
    }
}

/// An NBD test of 1 MiB reads at QD 8 moving `read`, analysed with a declared 1GbE link.
fn nbd_reads_over_a_declared_1gbe(read: DirectionResult) -> RunResult {
    let test = test_of(
        workload(1 << 20, 100, 0, 8),
        read,
        empty_direction(),
        idle_cpu(),
    );
    let mut result = run_result(&nbd_target(), vec![test]);
    let declared = DeclaredPath::from_flags(&["1gbe".into()], &[]).unwrap();
    crate::analysis::analyse_with(&mut result, &declared, &facts());
    result
}

#[test]
fn a_declared_1gbe_link_at_95_percent_is_link_bound() {
    // An NBD read at 112 MB/s, QD 8 of 1 MiB, over a link declared as 1GbE.
    let read = direction(112e6, 1 << 20, 70_000_000.0, 0.004);
    let result = nbd_reads_over_a_declared_1gbe(read);

    assert_eq!(result.paths.len(), 1);
    let path = &result.paths[0];
    let link = path.hops.last().unwrap();
    assert_eq!(link.origin, HopOrigin::Declared);
    assert_eq!(link.protocol.as_deref(), Some("nbd"));

    let analysis = result.tests[0].analysis.as_ref().unwrap();
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.limiting_hop.as_deref(), Some("declared:0"));
    let utilisation = analysis
        .hops
        .iter()
        .find(|h| h.hop_key == "declared:0")
        .unwrap();
    assert!(
        (90.0..=100.0).contains(&utilisation.utilisation_percent),
        "{utilisation:?}"
    );
    // 112 MB/s of 117.7: 95 %, NBD headers included.
    assert!(
        analysis
            .evidence
            .starts_with("112.0 MB/s = 95 % of 1GbE (TCP/IP MTU 1500 payload 117.7 MB/s)"),
        "{}",
        analysis.evidence
    );
    assert!(utilisation.protocol_overhead_bytes_per_second > 0.0);
    let ci = analysis.confidence.read.bytes_per_second.as_ref().unwrap();
    assert_eq!(ci.intervals, SECONDS as u32);
    assert!(ci.half_width_percent < 1.0, "{ci:?}");
}

#[test]
fn queue_depth_one_with_idle_hops_is_queue_depth_bound() {
    // 4 KiB random reads at QD 1: 80 µs each, 12.5 k IOPS, 51 MB/s: 1.4 % of PCIe 3.0 x4.
    let read = direction(51.2e6, 4096, 80_000.0, 0.01);
    let test = test_of(
        workload(4096, 100, 100, 1),
        read,
        empty_direction(),
        idle_cpu(),
    );
    let analysis = analyse_local(&test);
    assert_eq!(
        analysis.verdict,
        Verdict::QueueDepthBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.queue.configured_outstanding, 1);
    assert!((analysis.queue.achieved_outstanding - 1.0).abs() < 0.01);
    assert_eq!(analysis.queue.device_queue_limit, Some(1023));
    assert!(
        analysis.evidence.contains("1 I/O outstanding")
            && analysis
                .evidence
                .contains("device queue limit 1023 not reached")
            && analysis
                .evidence
                .contains("more outstanding I/O would raise throughput"),
        "{}",
        analysis.evidence
    );
}

/// The NBD run of a disk throttled to 20 MB/s behind 1GbE: 8 MiB-sized reads in flight,
/// 408 ms each, the link at 17 %. Nothing shows the server would serve more at once, so the
/// verdict says where the time goes and what would tell, not "queue-depth-bound".
#[test]
fn a_full_shallow_queue_to_a_server_is_latency_bound_beyond_the_last_visible_hop() {
    let read = direction(20.3e6, 1 << 20, 408_000_000.0, 0.01);
    let result = nbd_reads_over_a_declared_1gbe(read);
    let analysis = result.tests[0].analysis.as_ref().unwrap();
    assert_latency_bound(
        analysis,
        "beyond the last visible hop: 8 I/Os in flight, 408.00 ms each",
        &["busiest hop 1GbE at 17 %", "--confirm", "--path"],
    );
    assert!(!analysis.evidence.contains("would raise throughput"));
    assert_eq!(Verdict::LatencyBound.short_name(), "latency");
}

/// Buffered 4 KiB sequential reads at QD 1 from a local disk with room in its queue: the page
/// cache's read-ahead, not iopath's queue, decides what reaches the device.
#[test]
fn buffered_sequential_reads_are_not_queue_depth_bound_without_evidence() {
    let mut buffered = workload(4096, 100, 0, 1);
    buffered.buffered = true;
    let read = direction(26.2e6, 4096, 156_000.0, 0.01);
    let test = test_of(buffered, read, empty_direction(), idle_cpu());
    assert_latency_bound(
        &analyse_local(&test),
        "behind the page cache",
        &["without --buffered"],
    );

    // Direct I/O to a local disk whose queue limit is not known: no evidence either.
    let direct = test_of(
        workload(4096, 100, 0, 1),
        direction(26.2e6, 4096, 156_000.0, 0.01),
        empty_direction(),
        idle_cpu(),
    );
    let mut path = local_nvme_path();
    for hop in path.hops.to_mut() {
        hop.queue = None;
    }
    let analysis = analyse_test(&direct, &[file_target(1 << 30)], &[path], &facts());
    assert_latency_bound(
        &analysis,
        "in the device, whose queue limit is not known",
        &[],
    );
    // A local file whose path was not discovered: nothing lies beyond a hop, the device is
    // simply not known.
    let analysis = analyse_test(&direct, &[file_target(1 << 30)], &[], &facts());
    assert_latency_bound(&analysis, "in the device", &[]);
}

#[test]
fn buffered_reads_above_a_hop_are_cached() {
    // 2.1 GB/s of buffered reads through a file whose PCIe link carries 3.6 GB/s, behind a
    // declared 1GbE link: far above the link, so served by the page cache.
    let mut buffered = workload(1 << 20, 100, 0, 1);
    buffered.buffered = true;
    let read = direction(2.1e9, 1 << 20, 450_000.0, 0.01);
    let test = test_of(buffered, read, empty_direction(), idle_cpu());
    let mut path = local_nvme_path();
    let declared = DeclaredPath::from_flags(&["1gbe".into()], &[]).unwrap();
    crate::analysis::declared::apply(&mut path, &declared, None, None);
    let analysis = analyse_test(&test, &[file_target(1 << 30)], &[path], &facts());
    assert_eq!(analysis.verdict, Verdict::Cached, "{}", analysis.evidence);
    assert_eq!(analysis.limiting_hop.as_deref(), Some("declared:0"));
    assert!(
        analysis
            .evidence
            .contains("buffered reads came from the page cache"),
        "{}",
        analysis.evidence
    );
    let kinds: Vec<TrustKind> = analysis.trust_notes.iter().map(|n| n.kind).collect();
    assert!(kinds.contains(&TrustKind::BufferedIo), "{kinds:?}");
    assert!(kinds.contains(&TrustKind::WorkingSetInMemory), "{kinds:?}");
    assert!(kinds.contains(&TrustKind::AboveCapacity), "{kinds:?}");
    // The page cache itself is a hop for buffered I/O.
    assert!(analysis.hops.iter().any(|h| h.kind == HopKind::PageCache));
    assert!(
        analysis
            .hops
            .iter()
            .find(|h| h.hop_key == "declared:0")
            .unwrap()
            .below_page_cache
    );
}

#[test]
fn buffered_random_reads_at_memory_latency_are_cached_without_a_hop() {
    let mut buffered = workload(4096, 100, 100, 1);
    buffered.buffered = true;
    // 4 KiB in 3 µs: no device answers that fast.
    let read = direction(1.3e9, 4096, 3_000.0, 0.01);
    let test = test_of(
        buffered,
        read,
        empty_direction(),
        cpu(70.0, [72.0, 10.0], 0.0),
    );
    let target = file_target(256 << 20);
    let path = StoragePath {
        hops: vec![hop("file:x", HopKind::File, "x", None)].into(),
        ..local_nvme_path()
    };
    let analysis = analyse_test(&test, &[target], &[path], &facts());
    assert_eq!(analysis.verdict, Verdict::Cached, "{}", analysis.evidence);
    assert!(
        analysis.evidence.contains("page cache"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn a_host_busy_with_other_processes_is_named_with_the_busiest_of_them() {
    // 4 KiB reads while both cores are full, iopath using 5 % of the host: the host's CPU is
    // the limit, taken by others, and the run names who took it.
    let read = direction(40e6, 4096, 800_000.0, 0.01);
    let mut busy = cpu(10.0, [100.0, 100.0], 0.0);
    let host_ns = busy.wall_ns * 2;
    busy.other_processes = vec![
        crate::result::ProcessUsage {
            pid: 4242,
            name: "stress-ng-cpu".into(),
            cpu_ns: host_ns * 61 / 100,
        },
        crate::result::ProcessUsage {
            pid: 77,
            name: "fio".into(),
            cpu_ns: host_ns * 24 / 100,
        },
    ];
    let test = test_of(workload(4096, 100, 100, 32), read, empty_direction(), busy);
    let analysis = analyse_local(&test);
    assert_eq!(
        analysis.verdict,
        Verdict::HostCpuBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis
            .evidence
            .contains("the host's CPU, taken by other processes")
            && analysis.evidence.contains("(stress-ng-cpu 61 %, fio 24 %)"),
        "{}",
        analysis.evidence
    );

    // iopath itself filling the cores: no "taken by other processes".
    let own = test_of(
        workload(512, 100, 100, 32),
        direction(153.6e6, 512, 100_000.0, 0.01),
        empty_direction(),
        cpu(97.0, [100.0, 100.0], 0.0),
    );
    let analysis = analyse_local(&own);
    assert!(
        !analysis.evidence.contains("taken by other processes"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn one_core_at_100_percent_is_host_cpu_bound() {
    // 512-byte random reads at QD 32: 300 k IOPS, 154 MB/s, one core saturated.
    let read = direction(153.6e6, 512, 100_000.0, 0.01);
    let test = test_of(
        workload(512, 100, 100, 32),
        read,
        empty_direction(),
        cpu(97.0, [100.0, 35.0], 30.0),
    );
    let analysis = analyse_local(&test);
    assert_eq!(
        analysis.verdict,
        Verdict::HostCpuBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.cpu.busiest_core, Some(0));
    assert!(analysis.cpu.busiest_core_percent >= 99.9);
    assert!(
        analysis.evidence.contains("core 0 at 100 % busy")
            && analysis.evidence.contains("softirq 30 %")
            && analysis.evidence.contains("busiest thread 97 %"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn a_reached_rate_cap_is_rate_limited() {
    let mut capped = workload(1 << 20, 0, 0, 8);
    capped.rate_bytes_per_second = Some(100_000_000);
    let write = direction(99.6e6, 1 << 20, 1_000_000.0, 0.002);
    let test = test_of(capped, empty_direction(), write, idle_cpu());
    let analysis = analyse_local(&test);
    assert_eq!(
        analysis.verdict,
        Verdict::RateLimited,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis
            .evidence
            .starts_with("99.6 MB/s = 100 % of the rate cap 100.0 MB/s"),
        "{}",
        analysis.evidence
    );

    let mut paced = workload(4096, 100, 100, 1);
    paced.think_time_ns = 10_000_000;
    let read = direction(0.4e6, 4096, 100_000.0, 0.01);
    let test = test_of(paced, read, empty_direction(), idle_cpu());
    assert_eq!(analyse_local(&test).verdict, Verdict::RateLimited);
}

#[test]
fn nothing_known_is_inconclusive_and_says_what_is_missing() {
    // A network target at QD 64 with no capacity known anywhere on its path.
    let read = direction(300e6, 65536, 13_000_000.0, 0.01);
    let test = test_of(
        workload(65536, 100, 0, 64),
        read,
        empty_direction(),
        idle_cpu(),
    );
    let path = StoragePath {
        target: "nbd://server/x".into(),
        hops: vec![hop("protocol:nbd", HopKind::Protocol, "NBD", None), {
            let mut nic = hop("net:eth0", HopKind::NetworkInterface, "eth0", None);
            nic.protocol = Some("nbd".into());
            nic
        }]
        .into(),
        ..StoragePath::default()
    };
    let analysis = analyse_test(&test, &[nbd_target()], &[path], &facts());
    assert_eq!(
        analysis.verdict,
        Verdict::Inconclusive,
        "{}",
        analysis.evidence
    );
    assert!(!analysis.missing.is_empty());
    assert!(
        analysis.evidence.starts_with("missing: "),
        "{}",
        analysis.evidence
    );
    assert!(
        analysis.evidence.contains("--link"),
        "{}",
        analysis.evidence
    );

    // No I/O at all.
    let test = test_of(
        workload(4096, 100, 0, 1),
        empty_direction(),
        empty_direction(),
        idle_cpu(),
    );
    let analysis = analyse_local(&test);
    assert_eq!(analysis.verdict, Verdict::Inconclusive);
    assert!(analysis.evidence.contains("no I/O completed"));
}

#[test]
fn a_busy_pcie_link_is_bus_bound_and_a_full_deep_queue_is_device_bound() {
    // 3.4 GB/s of 128 KiB reads on PCIe 3.0 x4 (3.60 GB/s payload): 94 %.
    let read = direction(3.4e9, 128 << 10, 1_200_000.0, 0.005);
    let test = test_of(
        workload(128 << 10, 100, 0, 32),
        read,
        empty_direction(),
        idle_cpu(),
    );
    let analysis = analyse_local(&test);
    assert_eq!(analysis.verdict, Verdict::BusBound, "{}", analysis.evidence);
    assert!(
        analysis
            .evidence
            .contains("of PCIe 3.0 x4 (payload 3.60 GB/s)"),
        "{}",
        analysis.evidence
    );

    // 200 MB/s of 4 KiB random reads at QD 64 with the queue full: the device.
    let read = direction(200e6, 4096, 1_310_000.0, 0.01);
    let test = test_of(
        workload(4096, 100, 100, 64),
        read,
        empty_direction(),
        idle_cpu(),
    );
    let analysis = analyse_local(&test);
    assert_eq!(
        analysis.verdict,
        Verdict::DeviceBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis.evidence.contains("queue kept full at 64"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn a_declared_array_figure_makes_it_device_bound_with_iops() {
    let read = direction(380e6, 4096, 300_000.0, 0.01);
    let test = test_of(
        workload(4096, 100, 100, 32),
        read,
        empty_direction(),
        idle_cpu(),
    );
    let mut path = local_nvme_path();
    let declared = DeclaredPath::from_flags(&[], &["array:1GB/s:95k".into()]).unwrap();
    crate::analysis::declared::apply(&mut path, &declared, None, None);
    let analysis = analyse_test(&test, &[file_target(1 << 30)], &[path], &facts());
    assert_eq!(
        analysis.verdict,
        Verdict::DeviceBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis
            .evidence
            .starts_with("92.8 k IOPS = 98 % of array's 95.0 k IOPS"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn the_null_engine_and_trust_notes() {
    let read = direction(5e9, 4096, 1_000.0, 0.01);
    let mut test = test_of(
        workload(4096, 100, 100, 32),
        read,
        empty_direction(),
        idle_cpu(),
    );
    test.jobs[0].engine.capabilities.performs_io = false;
    let analysis = analyse_local(&test);
    assert_eq!(analysis.verdict, Verdict::Inconclusive);
    assert!(analysis.evidence.contains("null engine"));

    // A falling, noisy series over a never-written volume.
    let mut read = direction(100e6, 1 << 20, 1_000_000.0, 0.0);
    for (index, point) in read.series.iter_mut().enumerate() {
        point.bytes = (150e6 - 10e6 * index as f64) as u64;
    }
    let test = test_of(
        workload(1 << 20, 100, 0, 1),
        read,
        empty_direction(),
        idle_cpu(),
    );
    let mut path = local_nvme_path();
    path.first_blocks_all_zero = Some(true);
    let mut target = file_target(1 << 30);
    target.filesystem = None;
    let analysis = analyse_test(&test, &[target], &[path], &facts());
    let kinds: Vec<TrustKind> = analysis.trust_notes.iter().map(|n| n.kind).collect();
    assert!(
        kinds.contains(&TrustKind::NotSteady),
        "{:?}",
        analysis.trust_notes
    );
    assert!(
        kinds.contains(&TrustKind::TooShort),
        "{:?}",
        analysis.trust_notes
    );
    assert!(
        kinds.contains(&TrustKind::NeverWritten),
        "{:?}",
        analysis.trust_notes
    );
    let steady = analysis
        .trust_notes
        .iter()
        .find(|n| n.kind == TrustKind::NotSteady)
        .unwrap();
    assert!(steady.message.contains("fell"), "{}", steady.message);
}

#[test]
fn shared_hops_add_up_over_targets_and_half_duplex_adds_directions() {
    // Two targets on the same SATA link, one reading and one writing 300 MB/s each:
    // a half-duplex link carries 600 MB/s of 594: link-bound.
    let sata = crate::analysis::links::sata(60).unwrap();
    let link = Hop {
        protocol: Some("ata".into()),
        ..hop(
            "transport:sda",
            HopKind::DeviceLink,
            "SATA 6 Gb/s",
            Some(crate::analysis::block::capacity_of(&sata)),
        )
    };
    let path = StoragePath {
        hops: vec![link].into(),
        ..StoragePath::default()
    };
    let read = direction(290e6, 1 << 20, 3_000_000.0, 0.002);
    let write = direction(290e6, 1 << 20, 3_000_000.0, 0.002);
    let mut test = test_of(
        workload(1 << 20, 50, 0, 1),
        read.clone(),
        write.clone(),
        idle_cpu(),
    );
    let mut second = test.jobs[0].clone();
    test.jobs[0].write = empty_direction();
    test.jobs[0].total = read.clone();
    second.target_indexes = vec![1];
    second.read = empty_direction();
    second.total = write.clone();
    test.jobs.push(second);
    let targets = [file_target(1 << 30), file_target(1 << 30)];
    let analysis = analyse_test(&test, &targets, &[path.clone(), path], &facts());
    assert_eq!(analysis.hops.len(), 1);
    let utilisation = &analysis.hops[0];
    assert!(utilisation.utilisation_percent > 97.0, "{utilisation:?}");
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis.evidence.contains("shared by both directions"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn compression_explains_a_rate_above_capacity_only_when_the_data_allows_it() {
    // 300 MB/s of direct 1 MiB writes behind a declared 1GbE link (125 MB/s).
    let above = |write_data: crate::result::WriteData| {
        let mut writes = workload(1 << 20, 0, 0, 4);
        writes.write_data = write_data;
        let write = direction(300e6, 1 << 20, 10_000_000.0, 0.01);
        let test = test_of(writes, empty_direction(), write, idle_cpu());
        let mut path = local_nvme_path();
        let declared = DeclaredPath::from_flags(&["1gbe".into()], &[]).unwrap();
        crate::analysis::declared::apply(&mut path, &declared, None, None);
        analyse_test(&test, &[file_target(1 << 30)], &[path], &facts())
    };
    let note = |analysis: &TestAnalysis, kind| {
        analysis
            .trust_notes
            .iter()
            .find(|n| n.kind == kind)
            .map(|n| n.message.clone())
    };
    let random = above(Default::default());
    let message = note(&random, TrustKind::AboveCapacity).expect("above capacity");
    assert!(
        message.contains("a cache behind it (the data written neither compresses nor repeats)"),
        "{message}"
    );
    assert_eq!(note(&random, TrustKind::ReducibleData), None);

    let compressible = above(crate::result::WriteData {
        compress_percent: Some(60),
        ..Default::default()
    });
    let message = note(&compressible, TrustKind::AboveCapacity).expect("above capacity");
    assert!(
        message.contains("compression or deduplication of the data written"),
        "{message}"
    );
    let reducible = note(&compressible, TrustKind::ReducibleData).expect("reducible data");
    assert!(reducible.contains("60% compressible"), "{reducible}");
}

#[test]
fn an_encrypted_sessions_cipher_is_named() {
    let ccm = encrypted_with("SMB 3.0, encrypted (AES-128-CCM)");
    assert_eq!(ccm, Some(" (AES-128-CCM)"));
    assert_eq!(encrypted_with("SMB 3.1.1, encrypted"), Some(""));
    assert_eq!(encrypted_with("SMB 3.1.1, signed (AES-128-GMAC)"), None);
}

#[test]
fn a_cpu_bound_run_on_an_encrypted_smb_session_says_the_client_encrypts() {
    // 1 MiB reads at QD 8, one core saturated, on a file of an SMB share.
    let read = direction(500e6, 1 << 20, 477.0, 0.017);
    let test = test_of(
        workload(1 << 20, 100, 0, 8),
        read,
        empty_direction(),
        cpu(99.0, [100.0, 40.0], 5.0),
    );
    let on_share = |session: &str| {
        let mut target = file_target(1 << 30);
        target.path = "smb://u@nas/share/t.bin".into();
        target.kind = TargetKind::Smb;
        target.file_session = Some(session.into());
        analyse_test(&test, &[target], &[local_nvme_path()], &facts())
    };
    let sealed = on_share("SMB 3.0, encrypted (AES-128-CCM)");
    assert_eq!(sealed.verdict, Verdict::HostCpuBound, "{}", sealed.evidence);
    assert!(
        sealed.evidence.contains(
            "the SMB session is encrypted (AES-128-CCM): the client encrypts and decrypts every byte on its CPU"
        ),
        "{}",
        sealed.evidence
    );
    let signed = on_share("SMB 3.1.1, signed (AES-128-GMAC)");
    assert_eq!(signed.verdict, Verdict::HostCpuBound, "{}", signed.evidence);
    assert!(!signed.evidence.contains("encrypt"), "{}", signed.evidence);
}

#[test]
fn writes_to_a_file_created_without_data_are_first_writes() {
    let writes = |content| {
        let test = test_of(
            workload(4096, 0, 100, 32),
            empty_direction(),
            direction(100e6, 4096, 100_000.0, 0.01),
            idle_cpu(),
        );
        let mut target = file_target(1 << 30);
        target.created_content = content;
        let analysis = analyse_test(&test, &[target], &[local_nvme_path()], &facts());
        analysis
            .trust_notes
            .iter()
            .find(|note| note.kind == TrustKind::FirstWrites)
            .map(|note| note.message.clone())
    };
    let sized = crate::result::CreatedContent::Sized {
        preallocation: crate::result::Preallocation::Native,
    };
    let message = writes(Some(sized)).expect("a first-writes note");
    assert!(
        message.contains("sized with fallocate, no data written")
            && message.contains("--overwrite"),
        "{message}"
    );
    assert_eq!(writes(Some(crate::result::CreatedContent::Filled)), None);
    assert_eq!(writes(None), None);
}
