//! The server's counters in the verdict, on synthetic results: an NBD read of 1 MiB at QD 8
//! over a declared 1GbE, with one server's series beside it.

use super::server::RELATED_TRAFFIC_SHARE;
use crate::analysis::declared::DeclaredPath;
use crate::analysis::test_results::{
    direction, empty_direction, idle_cpu, run_result, test_of, workload,
};
use crate::analysis::test_support::facts;
use crate::analysis::verdict::tests::nbd_target;
use crate::result::{
    ServerDeviceKind, ServerDeviceSeries, ServerPoint, ServerSeries, TestAnalysis, Verdict,
};

/// A device of kind `kind` at `busy` % for five seconds, moving `bytes` per second.
fn device(kind: ServerDeviceKind, name: &str, busy: f64, bytes: f64) -> ServerDeviceSeries {
    ServerDeviceSeries {
        kind,
        name: name.into(),
        speed_bytes_per_second: (kind == ServerDeviceKind::Interface).then_some(125_000_000),
        active_members: None,
        points: (1..=5)
            .map(|second| ServerPoint {
                end_ns: second * 1_000_000_000,
                duration_ns: 1_000_000_000,
                busy_percent: busy,
                read_bytes_per_second: bytes,
                write_bytes_per_second: 0.0,
                queue: busy / 100.0 * 8.0,
            })
            .collect(),
    }
}

/// The analysis of reads at `client` bytes/s, with the server `nas` showing `devices`.
fn analysed(client: f64, devices: Vec<ServerDeviceSeries>) -> TestAnalysis {
    // 8 I/Os in flight: mean latency = 8 × 1 MiB / rate.
    let latency_ns = 8.0 * (1u64 << 20) as f64 / client * 1e9;
    let mut test = test_of(
        workload(1 << 20, 100, 0, 8),
        direction(client, 1 << 20, latency_ns, 0.004),
        empty_direction(),
        idle_cpu(),
    );
    test.server_metrics = vec![ServerSeries {
        source: "http://nas:9100/metrics".into(),
        node_name: Some("nas".into()),
        devices,
        failed_scrapes: 0,
        last_failure: None,
    }];
    let mut result = run_result(&nbd_target(), vec![test]);
    let declared = DeclaredPath::from_flags(&["1gbe".into()], &[]).unwrap();
    crate::analysis::analyse_with(&mut result, &declared, &facts());
    result.tests[0].analysis.take().expect("analysed")
}

fn quiet_cores() -> Vec<ServerDeviceSeries> {
    vec![
        device(ServerDeviceKind::Core, "cpu0", 12.0, 0.0),
        device(ServerDeviceKind::Core, "cpu1", 8.0, 0.0),
    ]
}

#[test]
fn a_busy_server_disk_at_the_clients_rate_is_server_disk_bound() {
    let mut devices = quiet_cores();
    devices.push(device(ServerDeviceKind::Disk, "sdb", 99.0, 20e6));
    devices.push(device(ServerDeviceKind::Interface, "eth0", 16.0, 1e5));
    let analysis = analysed(20e6, devices);
    assert_eq!(
        analysis.verdict,
        Verdict::ServerDiskBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(
        analysis.limiting_hop.as_deref(),
        Some("server:nas:disk:sdb")
    );
    assert!(
        analysis
            .evidence
            .starts_with("server nas: disk sdb busy 99 % of the time (20.0 MB/s read"),
        "{}",
        analysis.evidence
    );
    assert!(
        analysis
            .evidence
            .ends_with("the client alone: latency-bound"),
        "{}",
        analysis.evidence
    );
    assert_eq!(analysis.server_hops.len(), 4);
}

#[test]
fn a_busy_disk_moving_little_of_the_clients_bytes_is_not_the_wall() {
    let mut devices = quiet_cores();
    let unrelated = 20e6 * RELATED_TRAFFIC_SHARE / 2.0;
    devices.push(device(ServerDeviceKind::Disk, "sda", 100.0, unrelated));
    let analysis = analysed(20e6, devices);
    assert_eq!(
        analysis.verdict,
        Verdict::LatencyBound,
        "{}",
        analysis.evidence
    );
}

#[test]
fn nothing_full_on_the_server_leaves_the_clients_verdict_and_says_so() {
    let mut devices = quiet_cores();
    devices.push(device(ServerDeviceKind::Disk, "sdb", 40.0, 20e6));
    let analysis = analysed(20e6, devices);
    assert_eq!(analysis.verdict, Verdict::LatencyBound);
    assert!(
        analysis.evidence.ends_with(
            "server nas: nothing full (busiest disk sdb at 40 %, busiest core cpu0 at 12 %)"
        ),
        "{}",
        analysis.evidence
    );
}

#[test]
fn the_clients_full_link_comes_before_a_busy_server_disk() {
    let mut devices = quiet_cores();
    devices.push(device(ServerDeviceKind::Disk, "sdb", 99.0, 112e6));
    let analysis = analysed(112e6, devices);
    assert_eq!(
        analysis.verdict,
        Verdict::LinkBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis.evidence.contains("the client's verdict stands"),
        "{}",
        analysis.evidence
    );
}

#[test]
fn one_full_core_while_the_others_idle_is_a_server_held_to_one_core_or_other_work_on_it() {
    let devices = vec![
        device(ServerDeviceKind::Core, "cpu0", 10.0, 0.0),
        device(ServerDeviceKind::Core, "cpu1", 100.0, 0.0),
        device(ServerDeviceKind::Core, "cpu2", 6.0, 0.0),
        device(ServerDeviceKind::Disk, "sdb", 30.0, 60e6),
    ];
    let analysis = analysed(60e6, devices);
    assert_eq!(
        analysis.verdict,
        Verdict::ServerCpuBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis.evidence.starts_with(
            "server nas: core cpu1 busy 100 %, the other 2 cores 8.0 % on average: one core full \
             while the others have room, a server process held to one core (single-threaded or \
             pinned) or other work on that core; the client alone: "
        ),
        "{}",
        analysis.evidence
    );
}

#[test]
fn a_server_interface_at_its_speed_is_server_link_bound() {
    let mut devices = quiet_cores();
    devices.push(device(ServerDeviceKind::Interface, "eth0", 96.0, 1e5));
    devices.push(device(ServerDeviceKind::Disk, "sdb", 99.0, 60e6));
    let analysis = analysed(60e6, devices);
    assert_eq!(
        analysis.verdict,
        Verdict::ServerLinkBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(
        analysis.limiting_hop.as_deref(),
        Some("server:nas:interface:eth0")
    );
}

#[test]
fn a_switch_port_at_its_speed_is_switch_link_bound_before_the_server() {
    let mut devices = quiet_cores();
    devices.push(device(ServerDeviceKind::Interface, "eth0", 40.0, 1e5));
    // The switch's ports: the one toward the client full, the one toward the server not.
    let mut port = device(ServerDeviceKind::SwitchPort, "ge-0/0/7", 97.0, 1e5);
    port.speed_bytes_per_second = Some(25_000_000);
    let idle_port = device(ServerDeviceKind::SwitchPort, "ge-0/0/1", 20.0, 24e6);
    devices.push(port);
    devices.push(idle_port);
    let analysis = analysed(23e6, devices);
    assert_eq!(
        analysis.verdict,
        Verdict::SwitchLinkBound,
        "{}",
        analysis.evidence
    );
    assert_eq!(
        analysis.limiting_hop.as_deref(),
        Some("switch:nas:port:ge-0/0/7")
    );
    assert!(
        analysis
            .evidence
            .starts_with("switch nas: port ge-0/0/7 at 97 % of its speed 25.0 MB/s"),
        "{}",
        analysis.evidence
    );
}
