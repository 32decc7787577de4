//! Each recorded machine's path, hop capacities and a verdict on it: the machines are built
//! from the kernel's documented sysfs layout (`crate::discovery::machines`), one is this test
//! host recorded for real (`tests/machines/virtio-vm`). Discovery reads them through the same
//! rooted view it reads a real machine through.

use super::path::inspect_recorded;
use super::test_results::{cpu, direction, empty_direction, idle_cpu, test_on, workload};
use super::{DeclaredPath, describe_path_on, links, verdict};
use crate::discovery::machines::builder::MachineDir;
use crate::discovery::machines::*;
use crate::discovery::{HostFacts, Machine};
use crate::result::{CpuResult, TestResult};
use crate::result::{Hop, HopKind, HopOrigin, StoragePath, TestAnalysis, Verdict};
use crate::result::{TargetInfo, TargetKind};
use std::path::Path;

/// A target's path on a machine, as `iopath path --root DIR TARGET --link …` shows it.
struct Seen {
    info: TargetInfo,
    path: StoragePath,
    facts: HostFacts,
}

fn discover_on(machine: &Machine, target: &str, links: &[&str]) -> Seen {
    let info = inspect_recorded(machine, target).expect("the target is on the machine");
    let facts = machine.host_facts();
    let declared = DeclaredPath::from_flags(
        &links.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
        &[],
    )
    .expect("declared links");
    let path = describe_path_on(&info, &declared, &facts, machine);
    Seen { info, path, facts }
}

fn discover(dir: &MachineDir, target: &str, links: &[&str]) -> Seen {
    discover_on(&dir.machine(), target, links)
}

fn hop<'a>(path: &'a StoragePath, key: &str) -> &'a Hop {
    path.hops
        .iter()
        .find(|hop| hop.key == key)
        .unwrap_or_else(|| panic!("no hop {key} in {}", describe(path)))
}

fn capacity(hop: &Hop) -> u64 {
    hop.capacity
        .as_ref()
        .unwrap_or_else(|| panic!("{} has no capacity", hop.key))
        .payload_bytes_per_second
}

fn describe(path: &StoragePath) -> String {
    let mut text: Vec<String> = crate::report::path::path_lines(path);
    text.extend(path.notes.iter().map(|note| format!("note: {note}")));
    text.join("\n")
}

fn kinds(path: &StoragePath) -> Vec<HopKind> {
    path.hops.iter().map(|hop| hop.kind).collect()
}

/// Reads of 1 MiB at `bytes_per_second` and queue depth 16, over `targets`, with `cpu`.
fn reads(bytes_per_second: f64, cpu: CpuResult, targets: usize) -> TestResult {
    let iops = bytes_per_second / f64::from(1 << 20);
    let latency_ns = 16.0 / iops * 1e9;
    test_on(
        workload(1 << 20, 100, 0, 16),
        direction(bytes_per_second, 1 << 20, latency_ns, 0.003),
        empty_direction(),
        cpu,
        (0..targets).collect(),
    )
}

fn verdict_on(seen: &[&Seen], test: &TestResult) -> TestAnalysis {
    let infos: Vec<TargetInfo> = seen.iter().map(|s| s.info.clone()).collect();
    let paths: Vec<StoragePath> = seen.iter().map(|s| s.path.clone()).collect();
    verdict::analyse_test(test, &infos, &paths, &seen[0].facts)
}

fn utilisation(analysis: &TestAnalysis, key: &str) -> f64 {
    analysis
        .hops
        .iter()
        .find(|hop| hop.hop_key == key)
        .unwrap_or_else(|| panic!("{key} not utilised: {:?}", analysis.hops))
        .utilisation_percent
}

const MIB: f64 = 1_048_576.0;

/// Checks that `path` runs from the page cache and the disk over a Fibre Channel link of
/// `gfc` GFC (hop `fc_key`) to a bus slot (hop `bus_key`, named `bus_name`, carrying what the
/// catalog's link `bus_link` carries); returns the FC and bus hops.
fn fc_link_over_bus<'a>(
    path: &'a StoragePath,
    (fc_key, gfc): (&str, u32),
    (bus_key, bus_name, bus_link): (&str, &str, &str),
) -> (&'a Hop, &'a Hop) {
    assert_eq!(
        kinds(path),
        [
            HopKind::PageCache,
            HopKind::Disk,
            HopKind::FibreChannelLink,
            HopKind::Bus
        ],
        "{}",
        describe(path)
    );
    let fc = hop(path, fc_key);
    assert_eq!(fc.name, format!("{gfc}GFC"));
    assert_eq!(
        capacity(fc),
        links::fibre_channel(gfc)
            .unwrap()
            .payload_bytes_per_second()
    );
    let bus = hop(path, bus_key);
    assert_eq!(bus.name, bus_name);
    assert_eq!(
        capacity(bus),
        links::find(bus_link).unwrap().payload_bytes_per_second()
    );
    (fc, bus)
}

#[test]
fn a_2gfc_hba_on_a_pcix_bus() {
    let (machine, target) = fc_2g_pcix();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    assert_eq!(seen.info.kind, TargetKind::BlockDevice);
    assert_eq!(seen.info.size_bytes, 2 << 40);
    let (fc, bus) = fc_link_over_bus(
        path,
        ("fc:host2", 2),
        ("pci:0000:03:00.0", "PCI-X 133", "pcix133"),
    );
    assert_eq!(fc.protocol.as_deref(), Some("fcp"));
    assert!(
        bus.description.contains("device PCI-X 133 capable"),
        "{}",
        bus.description
    );
    assert!(hop(path, "block:sdb").description.contains("DGC RAID 0"));

    // 200 MB/s of sequential reads: 97 % of what 2GFC carries; the PCI-X bus is at a fifth.
    let analysis = verdict_on(&[&seen], &reads(200e6, idle_cpu(), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.limiting_hop.as_deref(), Some("fc:host2"));
    assert!(
        analysis.evidence.starts_with("200.0 MB/s = 97 % of 2GFC"),
        "{}",
        analysis.evidence
    );
    assert!(utilisation(&analysis, "pci:0000:03:00.0") < 25.0);
}

#[test]
fn a_2gfc_hba_on_pcie_x8_is_bound_by_its_fc_link_not_the_bus() {
    let (machine, target) = fc_2g_pcie();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    let (fc, bus) = fc_link_over_bus(
        path,
        ("fc:host6", 2),
        ("pci:0000:00:04.0", "PCIe 1.0 x8", "pcie1x8"),
    );
    assert!(capacity(bus) > 8 * capacity(fc), "{}", describe(path));
    assert!(hop(path, "block:sdb").description.contains("DGC RAID 0"));

    // 200 MB/s: 97 % of 2GFC; the PCIe 1.0 x8 link is at about a ninth.
    let analysis = verdict_on(&[&seen], &reads(200e6, idle_cpu(), 1));
    assert_judged(&analysis, Verdict::LinkBound, "200.0 MB/s = 97 % of 2GFC");
    assert_eq!(analysis.limiting_hop.as_deref(), Some("fc:host6"));
    assert!(utilisation(&analysis, "pci:0000:00:04.0") < 15.0);
}

#[test]
fn a_4gfc_hba_on_a_pcix_2_bus_is_bound_by_its_fc_link() {
    let (machine, target) = fc_4g_pcix();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    let (_, bus) = fc_link_over_bus(
        path,
        ("fc:host7", 4),
        ("pci:0000:00:06.0", "PCI-X 266", "pcix266"),
    );
    assert!(
        bus.description.contains("device PCI-X 266 capable"),
        "{}",
        bus.description
    );
    // The narrowest hop with a capacity is the FC port, not the PCI-X 2.0 bus.
    let narrowest = path
        .hops
        .iter()
        .filter(|hop| hop.capacity.is_some() && hop.kind != HopKind::PageCache)
        .min_by_key(|hop| capacity(hop))
        .unwrap();
    assert_eq!(narrowest.key, "fc:host7", "{}", describe(path));

    // 400 MB/s: 97 % of 4GFC; the PCI-X 266 bus is at under a fifth.
    let analysis = verdict_on(&[&seen], &reads(400e6, idle_cpu(), 1));
    assert_judged(&analysis, Verdict::LinkBound, "400.0 MB/s = 97 % of 4GFC");
    assert_eq!(analysis.limiting_hop.as_deref(), Some("fc:host7"));
    assert!(utilisation(&analysis, "pci:0000:00:06.0") < 20.0);
}

#[test]
fn a_two_path_4gfc_multipath_lun_is_link_bound_on_the_pair() {
    let (machine, target) = fc_4g_multipath_pcie();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    let dm = hop(path, "block:dm-0");
    assert_eq!(dm.kind, HopKind::DeviceMapper);
    assert!(
        dm.description.starts_with("multipath mpatha over sdc, sdd"),
        "{}",
        dm.description
    );
    let four_gfc = links::fibre_channel(4).unwrap().payload_bytes_per_second();
    for (host, disk) in [("fc:host3", "block:sdc"), ("fc:host4", "block:sdd")] {
        let fc = hop(path, host);
        assert_eq!((fc.name.as_str(), capacity(fc)), ("4GFC", four_gfc));
        assert_eq!(fc.read_share, 0.5);
        assert_eq!(hop(path, disk).depth, 1);
    }
    // Both ports' functions sit behind one PCIe 1.0 x8 link: one hop, carrying both halves.
    let bus = hop(path, "pci:0000:00:03.0");
    assert_eq!(bus.name, "PCIe 1.0 x8");
    assert_eq!(bus.read_share, 1.0);
    assert_eq!(
        path.hops.iter().filter(|h| h.kind == HopKind::Bus).count(),
        1
    );
    assert!(
        path.notes.iter().any(|n| n.contains("paths sdc, sdd")),
        "{:?}",
        path.notes
    );

    // 760 MiB/s over the pair: each 4GFC link carries half, 96.5 % of its payload rate.
    let analysis = verdict_on(&[&seen], &reads(760.0 * MIB, idle_cpu(), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    let used = utilisation(&analysis, "fc:host3");
    assert!((95.0..98.0).contains(&used), "{used}");
    assert!(
        analysis
            .evidence
            .starts_with("796.9 MB/s = 97 % of 2 × 4GFC (payload 412.9 MB/s each)"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn an_8gfc_lun_with_two_paths_through_one_port() {
    let (machine, target) = fc_8g_multipath();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    // Both paths leave through host5: one FC hop with the whole traffic.
    let fc = hop(path, "fc:host5");
    assert_eq!(fc.name, "8GFC");
    assert_eq!(fc.read_share, 1.0);
    assert_eq!(
        path.hops
            .iter()
            .filter(|h| h.kind == HopKind::FibreChannelLink)
            .count(),
        1
    );
    assert_eq!(
        capacity(fc),
        links::fibre_channel(8).unwrap().payload_bytes_per_second()
    );
    assert_eq!(hop(path, "pci:0000:00:02.0").name, "PCIe 2.0 x8");
    assert_eq!(hop(path, "block:sde").read_share, 0.5);

    let analysis = verdict_on(&[&seen], &reads(800e6, idle_cpu(), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.limiting_hop.as_deref(), Some("fc:host5"));
    assert!(
        analysis.evidence.starts_with("800.0 MB/s = 97 % of 8GFC"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn iscsi_over_1gbe_and_over_10gbe() {
    for (build, interface, speed, mtu, rate, percent) in [
        (
            iscsi_1gbe as fn() -> (MachineDir, &'static str),
            "eth1",
            1_000_000_000u64,
            1500,
            112e6,
            "95 %",
        ),
        (iscsi_10gbe, "eth2", 10_000_000_000, 9000, 1.15e9, "93 %"),
    ] {
        let (machine, target) = build();
        let seen = discover(&machine, target, &[]);
        let path = &seen.path;
        let session = hop(path, "iscsi:session1");
        assert_eq!(session.kind, HopKind::Protocol);
        assert!(
            session
                .description
                .contains("iqn.2004-04.com.example:array1.lun0")
        );
        let nic = hop(path, &format!("net:{interface}"));
        assert_eq!(nic.protocol.as_deref(), Some("iscsi"));
        assert_eq!(
            capacity(nic),
            links::ethernet_tcp(speed, mtu)
                .unwrap()
                .payload_bytes_per_second()
        );
        assert!(
            path.hops
                .iter()
                .any(|h| h.kind == HopKind::Bus && h.capacity.is_some())
        );

        let analysis = verdict_on(&[&seen], &reads(rate, idle_cpu(), 1));
        assert_eq!(
            analysis.verdict,
            Verdict::LinkBound,
            "{}",
            analysis.evidence
        );
        assert_eq!(analysis.limiting_hop, Some(format!("net:{interface}")));
        assert!(analysis.evidence.contains(percent), "{}", analysis.evidence);
        // 1 MiB reads carry 4 Data-In PDUs of 256 KiB and a response: 0.02 % in headers,
        // counted in the link's use but too little to be named (under 0.5 %).
        let link = analysis
            .hops
            .iter()
            .find(|h| h.hop_key == format!("net:{interface}"))
            .expect("the link's use");
        let share = link.protocol_overhead_bytes_per_second
            / (link.inbound_bytes_per_second + link.outbound_bytes_per_second);
        assert!((0.0001..0.0005).contains(&share), "{share}");
        assert!(
            !analysis.evidence.contains("iSCSI headers"),
            "{}",
            analysis.evidence
        );
    }
}

#[test]
fn a_dual_port_40gbe_nic_is_bound_by_its_pcie_3_x8_link() {
    let (machine, targets) = dual_40gbe();
    let machine = machine.machine();
    let first = discover_on(&machine, targets[0], &[]);
    let second = discover_on(&machine, targets[1], &[]);
    let forty = links::ethernet_tcp(40_000_000_000, 9000)
        .unwrap()
        .payload_bytes_per_second();
    assert_eq!(capacity(hop(&first.path, "net:ens1f0")), forty);
    assert_eq!(capacity(hop(&second.path, "net:ens1f1")), forty);
    // Both ports' functions share the one x8 link, at 512-byte TLPs.
    let bus = hop(&first.path, "pci:0000:80:03.0");
    assert_eq!(bus.name, "PCIe 3.0 x8");
    assert!(
        bus.description.contains("Max_Payload_Size 512"),
        "{}",
        bus.description
    );
    assert_eq!(
        capacity(bus),
        links::pcie_with_payload(3, 8, 512)
            .unwrap()
            .payload_bytes_per_second()
    );
    assert_eq!(
        capacity(hop(&second.path, "pci:0000:80:03.0")),
        capacity(bus)
    );

    // 7.6 GB/s over both ports: 77 % of each 40GbE port, all of the PCIe 3.0 x8 link.
    let analysis = verdict_on(&[&first, &second], &reads(7.6e9, idle_cpu(), 2));
    assert_eq!(analysis.verdict, Verdict::BusBound, "{}", analysis.evidence);
    assert_eq!(analysis.limiting_hop.as_deref(), Some("pci:0000:80:03.0"));
    assert!(
        analysis
            .evidence
            .starts_with("7.60 GB/s = 101 % of PCIe 3.0 x8 (512-byte TLPs payload 7.52 GB/s)"),
        "{}",
        analysis.evidence
    );
    assert!((75.0..80.0).contains(&utilisation(&analysis, "net:ens1f0")));
}

#[test]
fn four_10gbe_ports_in_an_802_3ad_bond() {
    let (machine, target) = bond_4x10gbe();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    let bond = hop(path, "net:bond0");
    assert!(
        bond.description
            .starts_with("bond (802.3ad 4) of eth0, eth1, eth2, eth3")
    );
    assert_eq!(
        capacity(bond),
        links::ethernet_tcp(40_000_000_000, 9000)
            .unwrap()
            .payload_bytes_per_second()
    );
    let ten = links::ethernet_tcp(10_000_000_000, 9000)
        .unwrap()
        .payload_bytes_per_second();
    for member in ["eth0", "eth1", "eth2", "eth3"] {
        let member = hop(path, &format!("net:{member}"));
        assert_eq!((capacity(member), member.read_share), (ten, 0.25));
        assert_eq!(member.depth, 1);
    }
    // Each card's x8 link carries its two ports.
    assert_eq!(hop(path, "pci:0000:00:02.0").read_share, 0.5);
    assert_eq!(hop(path, "pci:0000:00:03.0").name, "PCIe 2.0 x8");
    assert!(
        path.notes
            .iter()
            .any(|n| n.contains("one TCP connection is bounded by one member"))
    );

    let analysis = verdict_on(&[&seen], &reads(4.6e9, idle_cpu(), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.limiting_hop.as_deref(), Some("net:bond0"));
    assert!(
        analysis.evidence.starts_with("4.60 GB/s = 93 % of bond0"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn nvme_on_pcie_4_x4() {
    let (machine, target) = nvme_gen4();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    assert_eq!(seen.info.kind, TargetKind::File);
    assert_eq!(seen.info.device.as_deref(), Some("nvme0n1p1"));
    assert_eq!(
        kinds(path),
        [
            HopKind::File,
            HopKind::PageCache,
            HopKind::Filesystem,
            HopKind::Partition,
            HopKind::Disk,
            HopKind::Transport,
            HopKind::Bus
        ],
        "{}",
        describe(path)
    );
    assert_eq!(path.hops[2].name, "xfs");
    assert!(path.hops[2].description.contains("mounted at /data"));
    let disk = hop(path, "block:nvme0n1");
    assert_eq!(
        disk.queue.as_ref().unwrap().outstanding_limit(),
        Some(64 * 1023)
    );
    // The model and firmware revision the controller reports (a PTS report's test
    // conditions name both).
    assert!(
        disk.description.contains(", firmware 1.0, "),
        "{}",
        disk.description
    );
    assert!(
        hop(path, "nvme:nvme0")
            .description
            .contains("64 I/O queues")
    );
    let bus = hop(path, "pci:0000:00:01.1");
    assert_eq!(bus.name, "PCIe 4.0 x4");
    assert_eq!(
        capacity(bus),
        links::pcie(4, 4).unwrap().payload_bytes_per_second()
    );
    assert_eq!(path.allocated_bytes, Some(16 << 30));

    let analysis = verdict_on(&[&seen], &reads(7.0e9, idle_cpu(), 1));
    assert_eq!(analysis.verdict, Verdict::BusBound, "{}", analysis.evidence);
    assert!(
        analysis
            .evidence
            .starts_with("7.00 GB/s = 97 % of PCIe 4.0 x4"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn nvme_over_tcp_through_native_multipath() {
    let (machine, target) = nvme_over_tcp();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    let controller = hop(path, "nvme:nvme1");
    assert_eq!(controller.name, "NVMe/TCP");
    assert_eq!(controller.protocol.as_deref(), Some("nvme-tcp"));
    assert!(
        controller.description.contains("8 I/O queues"),
        "{}",
        controller.description
    );
    let nic = hop(path, "net:ens2f0");
    assert_eq!(nic.protocol.as_deref(), Some("nvme-tcp"));
    assert!(nic.description.contains("route to 10.20.0.5"));
    assert_eq!(
        capacity(nic),
        links::ethernet_tcp(25_000_000_000, 9000)
            .unwrap()
            .payload_bytes_per_second()
    );
    assert_eq!(hop(path, "pci:0000:00:03.0").name, "PCIe 3.0 x8");

    let analysis = verdict_on(&[&seen], &reads(2.9e9, idle_cpu(), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.limiting_hop.as_deref(), Some("net:ens2f0"));
}

#[test]
fn lvm_on_dm_crypt_on_nvme_with_a_saturated_core() {
    let (machine, target) = lvm_crypt_nvme();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    let lvm = hop(path, "block:dm-1");
    assert!(
        lvm.description
            .starts_with("LVM logical volume vg0-home over dm-0")
    );
    let crypt = hop(path, "block:dm-0");
    assert!(
        crypt.description.starts_with("dm-crypt luks-"),
        "{}",
        crypt.description
    );
    assert_eq!(crypt.depth, lvm.depth + 1);
    let partition = hop(path, "block:nvme0n1p3");
    assert_eq!(partition.depth, crypt.depth + 1);
    assert_eq!(hop(path, "pci:0000:00:1d.0").name, "PCIe 3.0 x4");
    assert!(path.notes.iter().any(|n| n.contains("dm-crypt encrypts")));

    // 1.1 GB/s, far below the link, with one core at 100 %: the CPU is the limit.
    let analysis = verdict_on(&[&seen], &reads(1.1e9, cpu(60.0, [100.0, 40.0], 3.0), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::HostCpuBound,
        "{}",
        analysis.evidence
    );
}

#[test]
fn md_raid10_over_ten_sas_ssds_behind_an_expander() {
    let (machine, target) = md_raid10_sas();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    let md = hop(path, "block:md0");
    assert_eq!(md.kind, HopKind::MdRaid);
    assert!(
        md.description
            .starts_with("raid10 over 10 devices, chunk 512.0 KiB"),
        "{}",
        md.description
    );
    let narrow = links::sas(12, 1).unwrap().payload_bytes_per_second();
    for index in 0..10 {
        let link = hop(path, &format!("sas:port-0:0:{index}"));
        assert_eq!((link.name.as_str(), capacity(link)), ("SAS 12G x1", narrow));
        assert_eq!(link.read_share, 0.1);
        assert_eq!(link.write_share, 0.2);
    }
    // The HBA's wide port to the expander carries every member: all reads, writes twice.
    let wide = hop(path, "sas:port-0:0");
    assert_eq!(wide.name, "SAS 12G x4");
    assert!((wide.read_share - 1.0).abs() < 1e-9 && (wide.write_share - 2.0).abs() < 1e-9);
    assert_eq!(
        path.hops.iter().filter(|h| h.kind == HopKind::Disk).count(),
        10
    );
    assert_eq!(hop(path, "pci:0000:00:02.0").name, "PCIe 3.0 x8");

    let analysis = verdict_on(&[&seen], &reads(4.5e9, idle_cpu(), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.limiting_hop.as_deref(), Some("sas:port-0:0"));
    assert!(
        analysis
            .evidence
            .starts_with("4.50 GB/s = 97 % of SAS 12G x4"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn a_sata_ssd_on_the_chipset_ahci_controller() {
    let (machine, target) = sata_ahci();
    let seen = discover(&machine, target, &[]);
    let path = &seen.path;
    let link = hop(path, "ata:ata3");
    assert_eq!(link.name, "SATA 6 Gb/s");
    assert_eq!(link.protocol.as_deref(), Some("ata"));
    assert_eq!(
        capacity(link),
        links::sata(60).unwrap().payload_bytes_per_second()
    );
    let bus = hop(path, "pci:0000:00:17.0");
    assert!(bus.capacity.is_none());
    assert!(
        bus.description.contains("integrated in the chipset"),
        "{}",
        bus.description
    );
    assert!(
        hop(path, "block:sda")
            .description
            .contains("ATA Samsung SSD 870")
    );

    let analysis = verdict_on(&[&seen], &reads(540e6, idle_cpu(), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis
            .evidence
            .starts_with("540.0 MB/s = 91 % of SATA 6 Gb/s"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn a_container_behind_a_bridge_and_a_veth_has_no_link_capacity() {
    let (machine, target) = container_bridge();
    let seen = discover(&machine, target, &["40gbe"]);
    let path = &seen.path;
    let bridge = hop(path, "net:br-5f2a1c");
    assert!(bridge.capacity.is_none());
    assert!(
        bridge
            .description
            .starts_with("virtual (bridge of veth1a2b3c4, veth9d8e7f6): capacity unknown"),
        "{}",
        bridge.description
    );
    // The forwarding database says the server is behind the second veth: only it is shown.
    let veth = hop(path, "net:veth9d8e7f6");
    assert!(veth.capacity.is_none());
    assert!(
        veth.description
            .starts_with("virtual (veth): capacity unknown"),
        "{}",
        veth.description
    );
    assert!(
        veth.description
            .contains("reports 10000 Mb/s (not a capacity)"),
        "{}",
        veth.description
    );
    assert_eq!(veth.depth, bridge.depth + 1);
    assert!(!path.hops.iter().any(|h| h.key == "net:veth1a2b3c4"));
    assert_eq!(path.hops.last().unwrap().origin, HopOrigin::Declared);

    // 2.5 GB/s with one core saturated: the host's CPU, not the veth, limits the result.
    let analysis = verdict_on(&[&seen], &reads(2.5e9, cpu(98.0, [100.0, 70.0], 30.0), 1));
    assert_eq!(
        analysis.verdict,
        Verdict::HostCpuBound,
        "{}",
        analysis.evidence
    );
}

/// This test host, recorded with `iopath path --record` (see tests/machines/README.md).
fn recorded_vm() -> Machine {
    Machine::recorded(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/machines/virtio-vm"))
        .expect("the recorded machine")
}

#[test]
fn a_virtio_vm_recorded_for_real() {
    let machine = recorded_vm();
    assert!(machine.machine_file().recorded_by.is_some());
    let file = machine
        .machine_file()
        .targets
        .iter()
        .find(|t| t.kind == TargetKind::File)
        .expect("a file target was recorded")
        .path
        .clone();
    let seen = discover_on(&machine, &file, &[]);
    let path = &seen.path;
    let disk = path
        .hops
        .iter()
        .find(|h| h.kind == HopKind::Disk)
        .unwrap_or_else(|| panic!("a disk: {}", describe(path)));
    assert_eq!(disk.name, "vda");
    let transport = path
        .hops
        .iter()
        .find(|h| h.kind == HopKind::Transport)
        .unwrap();
    assert_eq!(transport.name, "virtio-blk");
    let bus = path.hops.iter().find(|h| h.kind == HopKind::Bus).unwrap();
    assert!(bus.capacity.is_none() && bus.description.contains("virtual PCI device"));
    assert!(path.notes.iter().any(|n| n.contains("a virtual disk")));

    let seen = discover_on(&machine, "nbd://192.0.2.1:10809/export", &["10gbe"]);
    let nic = hop(&seen.path, "net:eth0");
    assert!(nic.capacity.is_none());
    assert!(
        nic.description
            .starts_with("virtual (virtio-net): capacity unknown"),
        "{}",
        nic.description
    );
    // 4 KiB reads at QD 1 over the declared 10GbE: not the virtual NIC, and nothing shows
    // that the server would serve more at once: latency-bound beyond the last visible hop.
    let test = test_on(
        workload(4096, 100, 100, 1),
        direction(40e6, 4096, 100_000.0, 0.01),
        empty_direction(),
        idle_cpu(),
        vec![0],
    );
    crate::analysis::test_support::assert_latency_bound(
        &verdict_on(&[&seen], &test),
        "beyond the last visible hop: 1 I/O in flight, 100.0 µs each",
        &["10GbE at ", "--confirm"],
    );
}

#[test]
fn control_characters_from_a_recorded_machine_are_escaped() {
    let (machine, _) = sata_ahci();
    // A hostile copy: a model string that would clear the terminal, a mount point with a
    // newline (mountinfo's octal escape).
    machine.write(
        "/sys/devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/model",
        "SSD\x1b[2J\n",
    );
    machine.mount("8:2", "/srv\\012evil", "ext4", "/dev/sda2");
    let seen = discover(&machine, "/srv\nevil/test.dat", &[]);
    let text = describe(&seen.path);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert!(text.contains("SSD\\u{1b}[2J"), "{text}");
    assert!(seen.path.target.contains("\\n"), "{}", seen.path.target);
    assert!(
        hop(&seen.path, "fs:sda2")
            .description
            .contains("/srv\\nevil"),
        "{text}"
    );
}

/// Asserts `analysis` gives `verdict` with evidence that starts with `evidence`.
fn assert_judged(analysis: &TestAnalysis, verdict: Verdict, evidence: &str) {
    assert_eq!(analysis.verdict, verdict, "{}", analysis.evidence);
    assert!(
        analysis.evidence.starts_with(evidence),
        "expected evidence starting with {evidence:?}: {}",
        analysis.evidence
    );
}

/// Reads of 1 MiB at queue depth 16, one job per target at `rates[i]` bytes per second.
fn reads_each(rates: &[f64]) -> TestResult {
    let total: f64 = rates.iter().sum();
    let mut test = reads(total, idle_cpu(), rates.len());
    let job = test.jobs[0].clone();
    test.jobs = rates
        .iter()
        .enumerate()
        .map(|(index, &rate)| {
            let one = reads(rate, idle_cpu(), 1);
            let mut job = crate::result::JobResult {
                name: format!("job{index}"),
                target_indexes: vec![index],
                ..job.clone()
            };
            (job.read, job.total) = (one.read.clone(), one.total.clone());
            job
        })
        .collect();
    test
}

/// `test` over `targets` of `machine`, analysed as `iopath run` does it: each target's path
/// gathered there, then `links` (`--link`) and `shared` (`--shared`) hops applied.
fn run_on(
    machine: &Machine,
    targets: &[&str],
    links: &[&str],
    shared: &[&str],
    test: TestResult,
) -> crate::result::RunResult {
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let declared = DeclaredPath::from_flags(&strings(links), &[])
        .and_then(|declared| declared.with_shared(&strings(shared)))
        .expect("declared hops");
    let infos: Vec<TargetInfo> = targets
        .iter()
        .map(|target| inspect_recorded(machine, target).expect("the target is on the machine"))
        .collect();
    let mut result = super::test_results::run_result_of(&infos, vec![test]);
    super::analyse_on(&mut result, &declared, machine, &machine.host_facts());
    result
}

fn declared_utilisations(analysis: &TestAnalysis) -> Vec<(String, f64)> {
    analysis
        .hops
        .iter()
        .filter(|hop| hop.declared)
        .map(|hop| (hop.hop_key.clone(), hop.utilisation_percent))
        .collect()
}

/// The analysis of the one test of `result`.
fn analysis_of(result: &crate::result::RunResult) -> &TestAnalysis {
    result.tests[0].analysis.as_ref().expect("analysed")
}

#[test]
fn four_targets_behind_four_links_are_judged_against_four_links() {
    let (machine, targets) = four_veths();
    let machine = machine.machine();
    let four = &targets[..4];
    // 4 × 116 MB/s read through four veths, `--link 1gbe`: one 1GbE link per route.
    let result = run_on(&machine, four, &["1gbe"], &[], reads_each(&[116e6; 4]));
    for (index, path) in result.paths.iter().enumerate() {
        let declared = path.hops.last().unwrap();
        assert_eq!(declared.key, format!("declared:0@net:lab-1g-{index}"));
        let route = format!("for the route through lab-1g-{index}");
        assert!(declared.description.ends_with(&route), "{declared:?}");
    }
    let analysis = analysis_of(&result);
    assert_judged(
        analysis,
        Verdict::LinkBound,
        "464.0 MB/s = 99 % of 4 × 1GbE",
    );
    assert!(analysis.evidence.contains("each)"), "{}", analysis.evidence);
    let links = declared_utilisations(analysis);
    assert_eq!(links.len(), 4, "{links:?}");
    assert!(
        links
            .iter()
            .all(|(_, percent)| (98.0..100.0).contains(percent)),
        "{links:?}"
    );
    let routes: Vec<Option<&str>> = analysis.hops.iter().map(|hop| hop.route_key()).collect();
    let expected: Vec<String> = (0..4).map(|i| format!("net:lab-1g-{i}")).collect();
    assert_eq!(
        routes,
        expected
            .iter()
            .map(|r| Some(r.as_str()))
            .collect::<Vec<_>>()
    );

    // The same run declared as one aggregate of four links that every target shares.
    let result = run_on(&machine, four, &[], &["4x1gbe"], reads_each(&[116e6; 4]));
    let analysis = analysis_of(&result);
    assert_eq!(analysis.limiting_hop.as_deref(), Some("declared:0"));
    assert_judged(
        analysis,
        Verdict::LinkBound,
        "464.0 MB/s = 99 % of 4 × 1GbE",
    );

    // One 1GbE that all four share cannot carry 464 MB/s: the declared figure is wrong.
    let result = run_on(&machine, four, &[], &["1gbe"], reads_each(&[116e6; 4]));
    let analysis = analysis_of(&result);
    assert_eq!(declared_utilisations(analysis).len(), 1);
    assert_judged(
        analysis,
        Verdict::Inconclusive,
        "missing: 464.0 MB/s is 394 % of what 1GbE",
    );
}

#[test]
fn two_targets_behind_one_link_share_it() {
    let (machine, targets) = four_veths();
    let machine = machine.machine();
    // Two exports of one server, one route: one 1GbE carries both.
    let two = [targets[0], targets[4]];
    let result = run_on(&machine, &two, &["1gbe"], &[], reads_each(&[58e6; 2]));
    let analysis = analysis_of(&result);
    let links = declared_utilisations(analysis);
    assert_eq!(links.len(), 1, "{links:?}");
    assert_eq!(links[0].0, "declared:0");
    assert!((98.0..100.0).contains(&links[0].1), "{links:?}");
    assert_judged(analysis, Verdict::LinkBound, "116.0 MB/s = 99 % of 1GbE");

    // Five targets over four routes: the first route carries two of them.
    let rates = [58e6, 116e6, 116e6, 116e6, 58e6];
    let result = run_on(&machine, &targets, &["1gbe"], &[], reads_each(&rates));
    let analysis = analysis_of(&result);
    let first = utilisation(analysis, "declared:0@net:lab-1g-0");
    let second = utilisation(analysis, "declared:0@net:lab-1g-1");
    assert!((first - second).abs() < 0.01, "{first} {second}");
    assert_judged(
        analysis,
        Verdict::LinkBound,
        "464.0 MB/s = 99 % of 4 × 1GbE",
    );
}

#[test]
fn one_full_link_of_four_is_named_as_an_imbalance() {
    let (machine, targets) = four_veths();
    let machine = machine.machine();
    let rates = [116e6, 10e6, 5e6, 3e6];
    let result = run_on(&machine, &targets[..4], &["1gbe"], &[], reads_each(&rates));
    let analysis = analysis_of(&result);
    assert_eq!(
        analysis.limiting_hop.as_deref(),
        Some("declared:0@net:lab-1g-0")
    );
    assert_judged(analysis, Verdict::LinkBound, "116.0 MB/s = 99 % of 1GbE");
    assert!(
        analysis.evidence.ends_with(
            "; 1 of 4 1GbE at 85 % or more (99 %), the others at 2.5–8.5 %: the load is not spread evenly"
        ),
        "{}",
        analysis.evidence
    );
}

/// A saved lab result (`network`: 115 MB/s of NBD reads, link-bound on a declared 1GbE)
/// explained again on recorded machines, as `iopath explain RESULT --root DIR --target T`
/// does: each shows its own hops, and the verdict weighs the same figures against them.
#[test]
fn a_saved_lab_result_explained_on_recorded_machines_shows_their_hops_and_limits() {
    type Build = fn() -> (MachineDir, &'static str);
    let cases: [(Build, HopKind, &str); 3] = [
        (fc_2g_pcix, HopKind::FibreChannelLink, "2GFC"),
        (nvme_over_tcp, HopKind::NetworkInterface, "ens2f0"),
        (bond_4x10gbe, HopKind::NetworkInterface, "bond0"),
    ];
    for (build, kind, link) in cases {
        let (dir, target) = build();
        let machine = dir.machine();
        let mut result = crate::support::fixtures::result("network");
        let measured = result.tests[0].read.bytes_per_second;
        let info = inspect_recorded(&machine, target).expect("the target is on the machine");
        for saved in &mut result.targets {
            *saved = info.clone();
        }
        result.paths.clear();
        let declared = DeclaredPath::from_flags(&[], &[]).unwrap();
        super::analyse_on(&mut result, &declared, &machine, &machine.host_facts());
        let path = &result.paths[0];
        let shown = describe(path);
        assert!(
            path.hops
                .iter()
                .any(|hop| hop.kind == kind && hop.name.contains(link)),
            "{target}: no {link} hop:\n{shown}"
        );
        let analysis = result.tests[0].analysis.as_ref().expect("analysed again");
        let used = analysis
            .hops
            .iter()
            .find(|hop| hop.kind == kind && hop.hop_name.contains(link))
            .unwrap_or_else(|| panic!("{target}: {link} not weighed: {}", analysis.evidence));
        let share = used.inbound_bytes_per_second / used.capacity_bytes_per_second as f64;
        assert!(
            share > 0.0 && share < 1.0,
            "{target}: {measured} B/s through {link} is {share}"
        );
        // 115 MB/s fills none of these links: the saved run's link-bound is not repeated.
        assert_ne!(
            analysis.verdict,
            Verdict::LinkBound,
            "{}",
            analysis.evidence
        );
    }
}
