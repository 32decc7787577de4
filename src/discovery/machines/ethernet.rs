//! Machines whose storage is reached over Ethernet: iSCSI sessions over a 1GbE and a 10GbE
//! NIC, a dual-port 40GbE NIC on PCIe 3.0 x8, four 10GbE ports in an 802.3ad bond, and a
//! storage server in a container behind a bridge and a veth.

use super::builder::{MachineDir, Netdev, Queue};
use super::sources::{
    BLOCK, BONDING, BRIDGE, BUS_PCI, CLASS_NET, ISCSI, PCI_REGS, PROC, SCSI_HOST,
};

/// A 1 TiB LUN in 512-byte sectors.
const LUN_SECTORS: u64 = 1 << 31;

/// An iSCSI LUN (`/dev/sdb`, session1 of the software initiator) whose portal `portal` is
/// reached through `interface`, a port of `nic` (vendor, device, driver, link speed and
/// width) at `speed` Mb/s and `mtu`.
#[allow(clippy::too_many_arguments)]
fn iscsi_machine(
    description: &str,
    nic: (&str, &str, &str, &str, u32),
    interface: &str,
    speed: i64,
    mtu: u32,
    network: &str,
    portal: &str,
) -> MachineDir {
    let m = MachineDir::new(
        description,
        &[ISCSI, SCSI_HOST, CLASS_NET, BUS_PCI, PCI_REGS, BLOCK, PROC],
    );
    let (vendor, device, driver, link_speed, width) = nic;
    let root_port = m.pci(
        "/sys/devices/pci0000:00",
        "0000:00:1c.0",
        "0x8086",
        "0xa110",
    );
    m.pcie_link(&root_port, link_speed, width, 256);
    for (function, name) in [(0, "eth0"), (1, interface)] {
        let port = m.pci(
            &root_port,
            &format!("0000:02:00.{function}"),
            vendor,
            device,
        );
        m.pcie_link(&port, link_speed, width, 256);
        m.netdev(
            name,
            Some((&port, driver)),
            &Netdev::ethernet(2 + function, speed, if function == 0 { 1500 } else { mtu }),
        );
    }
    m.ipv4_route("eth0", "0.0.0.0", 0, Some("192.168.1.1"));
    m.ipv4_route("eth0", "192.168.1.0", 24, None);
    m.ipv4_route(interface, network, 24, None);
    m.route_answer(portal, interface);
    let host = m.scsi_host("/sys/devices/platform", 7, "iscsi_tcp");
    let session = m.iscsi_session(
        &host,
        1,
        "iqn.2004-04.com.example:array1.lun0",
        portal,
        3260,
    );
    m.scsi_disk(
        &format!("{session}/target7:0:0/7:0:0:0"),
        "sdb",
        "8:16",
        LUN_SECTORS,
        "LIO-ORG",
        "lun0",
        &Queue::scsi_ssd(128),
    );
    m
}

/// An iSCSI LUN over a 1GbE port of an Intel I350 (igb, PCIe 2.0 x4), MTU 1500.
pub fn iscsi_1gbe() -> (MachineDir, &'static str) {
    let m = iscsi_machine(
        "iSCSI session over a 1GbE port (igb, MTU 1500) to a LUN",
        ("0x8086", "0x1521", "igb", "5.0 GT/s PCIe", 4),
        "eth1",
        1000,
        1500,
        "192.168.10.0",
        "192.168.10.20",
    );
    (m, "/dev/sdb")
}

/// An iSCSI LUN over a 10GbE port of an Intel 82599 (ixgbe, PCIe 2.0 x8), MTU 9000.
pub fn iscsi_10gbe() -> (MachineDir, &'static str) {
    let m = iscsi_machine(
        "iSCSI session over a 10GbE port (ixgbe, MTU 9000) to a LUN",
        ("0x8086", "0x10fb", "ixgbe", "5.0 GT/s PCIe", 8),
        "eth2",
        10000,
        9000,
        "10.10.10.0",
        "10.10.10.20",
    );
    (m, "/dev/sdb")
}

/// A dual-port 40GbE Intel XL710 (i40e, one PCI function per port) on one PCIe 3.0 x8 link
/// with a Max_Payload_Size of 512, each port on its own network to an NBD server:
/// `nbd://10.1.0.5/a` through ens1f0 and `nbd://10.2.0.5/b` through ens1f1.
pub fn dual_40gbe() -> (MachineDir, [&'static str; 2]) {
    let m = MachineDir::new(
        "dual-port 40GbE NIC (i40e, MTU 9000) on PCIe 3.0 x8, one NBD server on each port",
        &[CLASS_NET, BUS_PCI, PCI_REGS, PROC],
    );
    let root_port = m.pci(
        "/sys/devices/pci0000:80",
        "0000:80:03.0",
        "0x8086",
        "0x2f08",
    );
    m.pcie_link(&root_port, "8.0 GT/s PCIe", 8, 512);
    for (function, name, network, server) in [
        (0, "ens1f0", "10.1.0.0", "10.1.0.5"),
        (1, "ens1f1", "10.2.0.0", "10.2.0.5"),
    ] {
        let port = m.pci(
            &root_port,
            &format!("0000:81:00.{function}"),
            "0x8086",
            "0x1583",
        );
        m.pcie_link(&port, "8.0 GT/s PCIe", 8, 512);
        m.netdev(
            name,
            Some((&port, "i40e")),
            &Netdev::ethernet(4 + function, 40000, 9000),
        );
        m.ipv4_route(name, network, 24, None);
        m.route_answer(server, name);
    }
    (m, ["nbd://10.1.0.5:10809/a", "nbd://10.2.0.5:10809/b"])
}

/// Four 10GbE ports (two dual-port Intel X520 cards, ixgbe, each on PCIe 2.0 x8) in an
/// 802.3ad bond, MTU 9000, to an NBD server `nbd://10.0.0.50/export`.
pub fn bond_4x10gbe() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "four 10GbE ports (two dual-port ixgbe cards on PCIe 2.0 x8) in an 802.3ad bond, MTU 9000",
        &[BONDING, CLASS_NET, BUS_PCI, PCI_REGS, PROC],
    );
    let mut members = Vec::new();
    for (card, root) in [(3, "0000:00:02.0"), (4, "0000:00:03.0")] {
        let root_port = m.pci("/sys/devices/pci0000:00", root, "0x8086", "0x2f04");
        m.pcie_link(&root_port, "5.0 GT/s PCIe", 8, 256);
        for function in 0..2 {
            let port = m.pci(
                &root_port,
                &format!("0000:{card:02x}:00.{function}"),
                "0x8086",
                "0x10fb",
            );
            m.pcie_link(&port, "5.0 GT/s PCIe", 8, 256);
            let name = format!("eth{}", members.len());
            m.netdev(
                &name,
                Some((&port, "ixgbe")),
                &Netdev::ethernet(2 + members.len() as u32, 10000, 9000),
            );
            members.push(name);
        }
    }
    let bond = m.netdev(
        "bond0",
        None,
        &Netdev {
            devtype: Some("bond"),
            ..Netdev::ethernet(6, 40000, 9000)
        },
    );
    let names: Vec<&str> = members.iter().map(String::as_str).collect();
    m.attributes(
        &format!("{bond}/bonding"),
        &[
            ("slaves", &names.join(" ")),
            ("mode", "802.3ad 4"),
            ("xmit_hash_policy", "layer3+4 1"),
            ("miimon", "100"),
        ],
    );
    m.enslave(&bond, "bond0", &names);
    m.ipv4_route("bond0", "10.0.0.0", 24, None);
    m.route_answer("10.0.0.50", "bond0");
    (m, "nbd://10.0.0.50:10809/export")
}

/// An NBD server in a container (172.18.0.2) seen from the host: the route leaves through
/// a user-defined bridge with two containers' veths on it; the bridge's forwarding database
/// says which veth leads to the server. Nothing physical is on the path.
pub fn container_bridge() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "an NBD server in a container behind a bridge and a veth (the host's view)",
        &[BRIDGE, CLASS_NET, PROC],
    );
    let bridge_name = "br-5f2a1c";
    let bridge = m.netdev(
        bridge_name,
        None,
        &Netdev {
            devtype: Some("bridge"),
            speed: None,
            ..Netdev::ethernet(4, 0, 1500)
        },
    );
    m.attributes(&format!("{bridge}/bridge"), &[("stp_state", "0")]);
    for (port, name, peer) in [(1u16, "veth1a2b3c4", 7), (2, "veth9d8e7f6", 8)] {
        let path = m.netdev(
            name,
            None,
            &Netdev {
                iflink: peer,
                ..Netdev::ethernet(u32::from(port) + 9, 10000, 1500)
            },
        );
        m.attributes(
            &format!("{path}/brport"),
            &[("port_no", &format!("0x{port:x}")), ("state", "3")],
        );
        m.link(&format!("{bridge}/brif/{name}"), &format!("{path}/brport"));
        m.link(&format!("{path}/master"), &bridge);
    }
    m.bridge_forwarding(
        &bridge,
        &[
            ([0x02, 0x42, 0x9c, 0x1d, 0x4e, 0x01], 0, true),
            ([0x02, 0x42, 0xac, 0x12, 0x00, 0x03], 1, false),
            ([0x02, 0x42, 0xac, 0x12, 0x00, 0x02], 2, false),
        ],
    );
    m.ipv4_route(bridge_name, "172.18.0.0", 16, None);
    m.neighbour("172.18.0.2", "02:42:ac:12:00:02", bridge_name);
    m.neighbour("172.18.0.3", "02:42:ac:12:00:03", bridge_name);
    m.route_answer("172.18.0.2", bridge_name);
    (m, "nbd://172.18.0.2:10809/export")
}
