//! Discovery on sysfs captures that other projects keep as test data (`../shared/foreign-sys`,
//! tests/support/foreign.rs): trees this project did not record, with their own gaps. Each
//! expected fact is read from the capture's own files, then compared with what discovery
//! makes of the tree.

use super::Gatherer;
use crate::discovery::facts::{BlockNode, FilesystemBelow, InterfaceKind};
use crate::discovery::{HostView, Machine};
use crate::support::foreign::capture;
use std::path::Path;

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path))
        .unwrap_or_else(|error| panic!("{path}: {error}"))
        .trim()
        .to_string()
}

#[test]
fn md_members_are_read_from_md_dev_entries_when_slaves_is_missing() {
    let Some(root) = capture("node_exporter-sys.ttar") else {
        return;
    };
    assert!(
        !root.join("sys/block/md1/slaves").exists(),
        "the capture has no slaves/"
    );
    let raid_disks: usize = read(&root, "sys/block/md1/md/raid_disks").parse().unwrap();
    let mut expected: Vec<String> = std::fs::read_dir(root.join("sys/block/md1/md"))
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_prefix("dev-").map(str::to_string)
        })
        .collect();
    expected.sort();
    assert_eq!(expected.len(), raid_disks);

    let machine = Machine::recorded(&root).unwrap();
    let facts = Gatherer::new(&machine).block_device("md1", 0);
    let BlockNode::Md(md) = facts.node else {
        panic!("md1 is not seen as md RAID: {:?}", facts.node);
    };
    let members: Vec<&str> = md.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(members, expected);
    assert_eq!(md.raid_disks, Some(raid_disks as u32));
    // The members the capture holds are followed down to their disks.
    for member in &md.members {
        if root.join("sys/block").join(&member.name).is_dir() {
            assert!(matches!(member.node, BlockNode::Disk { .. }), "{member:?}");
        }
    }
}

#[test]
fn a_bond_member_under_a_pci_device_without_a_device_link_is_a_physical_nic() {
    let Some(root) = capture("node_exporter-sys.ttar") else {
        return;
    };
    let members = read(&root, "sys/class/net/dmz/bonding/slaves");
    assert!(members.split_whitespace().any(|m| m == "eth0"), "{members}");
    assert!(!root.join("sys/class/net/eth0/device").exists());
    let real = std::fs::read_link(root.join("sys/class/net/eth0")).unwrap();
    assert!(real.to_string_lossy().contains("/devices/pci"), "{real:?}");
    let speed: u64 = read(&root, "sys/class/net/eth0/speed").parse().unwrap();

    let machine = Machine::recorded(&root).unwrap();
    let bond = Gatherer::new(&machine)
        .interface("dmz", 0, None)
        .expect("dmz is seen");
    assert!(
        matches!(bond.kind, InterfaceKind::Bond { .. }),
        "{:?}",
        bond.kind
    );
    let eth0 = bond
        .below
        .iter()
        .find(|member| member.name == "eth0")
        .expect("eth0 is a member");
    assert_eq!(eth0.kind, InterfaceKind::Physical);
    assert_eq!(eth0.speed_mbps, Some(speed));
    let function = eth0.bus.last().expect("its PCI function");
    assert_eq!(function.address, "0000:03:00.0");
}

#[test]
fn a_sata_disk_behind_a_sas_expander_is_tunnelled_over_stp() {
    let Some(root) = capture("procfs-fixtures.ttar") else {
        return;
    };
    let machine = Machine::recorded(&root).unwrap();
    for (disk, end_device) in [("sdv", "end_device-11:0:0"), ("sdw", "end_device-11:0:1")] {
        let expected = read(
            &root,
            &format!("sys/class/sas_device/{end_device}/target_port_protocols"),
        );
        let facts = Gatherer::new(&machine).block_device(disk, 0);
        let BlockNode::Disk { transport, .. } = facts.node else {
            panic!("{disk}: not a disk: {:?}", facts.node);
        };
        let crate::discovery::facts::TransportFacts::Sas {
            end_device_protocols,
            ports,
            ..
        } = *transport
        else {
            panic!("{disk}: not SAS: {transport:?}");
        };
        assert_eq!(
            end_device_protocols.as_deref(),
            Some(expected.as_str()),
            "{disk}"
        );
        assert!(!ports.is_empty(), "{disk}");
    }
}

#[test]
fn btrfs_on_several_devices_lists_every_device_and_its_data_profile() {
    let Some(root) = capture("procfs-fixtures.ttar") else {
        return;
    };
    let uuid = "7f07c59f-6136-449c-ab87-e1cf2328731b";
    let filesystem = root.join("sys/fs/btrfs").join(uuid);
    let mut expected: Vec<String> = std::fs::read_dir(filesystem.join("devices"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    expected.sort();
    assert!(expected.len() > 1);
    let profile = std::fs::read_dir(filesystem.join("allocation/data"))
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_type().unwrap().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .next();

    let machine = Machine::recorded(&root).unwrap();
    let facts = Gatherer::new(&machine).filesystem(
        Path::new("/mnt/data/file"),
        None,
        Some(&expected[0]),
        Some("btrfs"),
        0,
    );
    let FilesystemBelow::Devices(devices) = facts.below else {
        panic!("one device only: {:?}", facts.below);
    };
    assert_eq!(devices.uuid, uuid);
    let members: Vec<&str> = devices.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(members, expected);
    assert_eq!(devices.data_profile, profile);
}

#[test]
fn infiniband_ports_carry_the_rate_their_files_give() {
    let Some(root) = capture("node_exporter-sys.ttar") else {
        return;
    };
    let view = HostView::rooted(&root);
    let ports = super::infiniband::ports(&view);
    let mut expected = Vec::new();
    for hca in ["i40iw0", "mlx4_0"] {
        let mut numbers: Vec<u32> =
            std::fs::read_dir(root.join("sys/class/infiniband").join(hca).join("ports"))
                .unwrap()
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().parse().unwrap())
                .collect();
        numbers.sort();
        for number in numbers {
            let rate = read(
                &root,
                &format!("sys/class/infiniband/{hca}/ports/{number}/rate"),
            );
            expected.push((hca.to_string(), number, rate));
        }
    }
    let seen: Vec<(String, u32, String)> = ports
        .iter()
        .map(|port| (port.hca.clone(), port.port, port.rate.clone().unwrap()))
        .collect();
    assert_eq!(seen, expected);
}
