//! Fibre Channel machines: a 2GFC HBA on a PCI-X bus and on PCIe 1.0 x8, a 4GFC HBA on a
//! PCI-X 2.0 (PCI-X 266) bus, a dual-port 4GFC HBA on PCIe 1.0 x8 with dm-multipath over both
//! ports, and one 8GFC port reaching a LUN over two array ports.

use super::builder::{MachineDir, Queue};
use super::sources::{BLOCK, BLOCK_DM, BUS_PCI, FC_HBAS, FC_HOST, PCI_REGS, SCSI_HOST};
use crate::discovery::gather::pci::{
    config_space, express_capability, pcix_bridge_capability, pcix_device_capability,
};

/// A 2 TiB LUN in 512-byte sectors.
const LUN_SECTORS: u64 = 2 << 31;

/// A 2GFC QLogic HBA (PCI-X 133 capable) in a slot behind a PCIe-to-PCI-X 2.0 bridge, whose
/// bus runs at PCI-X 133 because that is all the HBA can do, to a RAID-0 LUN as `/dev/sdb`.
pub fn fc_2g_pcix() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "2GFC qla2xxx HBA on a PCI-X bus (PCIe-to-PCI-X 2.0 bridge, bus at PCI-X 133) to a RAID-0 LUN",
        &[FC_HOST, SCSI_HOST, BUS_PCI, PCI_REGS, BLOCK],
    );
    let root_port = m.pci(
        "/sys/devices/pci0000:00",
        "0000:00:02.0",
        "0x8086",
        "0x3595",
    );
    m.pcie_link(&root_port, "2.5 GT/s PCIe", 8, 256);
    // The bridge: a PCI Express upstream link, and a PCI-X 2.0 secondary bus running in
    // mode 1 at 133 MHz (Secondary Bus Mode and Frequency 0x3), 64 bits wide.
    let bridge = m.pci(&root_port, "0000:03:00.0", "0x8086", "0x0329");
    m.pcie_link(&bridge, "2.5 GT/s PCIe", 8, 256);
    m.write(
        &format!("{bridge}/config"),
        config_space(
            1,
            &[express_capability(256), pcix_bridge_capability(true, 0x3)],
        ),
    );
    let hba = m.pci(&bridge, "0000:04:01.0", "0x1077", "0x2312");
    m.write(
        &format!("{hba}/config"),
        config_space(0, &[pcix_device_capability(true, true, false)]),
    );
    let port = FcPort {
        driver: "qla2xxx",
        host: 2,
        speed: "2 Gbit",
        port_name: "0x210000e08b1a2b3c",
    };
    raid0_lun(&m, &hba, &port, "0x5006016041e0a1b2");
    (m, "/dev/sdb")
}

/// A 2GFC Emulex HBA (lpfc, PCI device 0xf0f5, "Neptune" in drivers/scsi/lpfc/lpfc_hw.h) on
/// a PCIe 1.0 x8 link, to a RAID-0 LUN as `/dev/sdb`: the bus carries nine times what the
/// port does.
pub fn fc_2g_pcie() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "2GFC lpfc HBA on PCIe 1.0 x8 to a RAID-0 LUN",
        &[FC_HOST, FC_HBAS, SCSI_HOST, BUS_PCI, PCI_REGS, BLOCK],
    );
    let hba = m.pcie_slot(
        "0000:00:04.0",
        "0000:07:00.0",
        "0x10df",
        "0xf0f5",
        "2.5 GT/s PCIe",
        8,
        256,
    );
    let port = FcPort {
        driver: "lpfc",
        host: 6,
        speed: "2 Gbit",
        port_name: "0x10000000c9a1b2c3",
    };
    raid0_lun(&m, &hba, &port, "0x5006016041e0a1b2");
    (m, "/dev/sdb")
}

/// A 4GFC QLogic HBA (ISP2422, PCI-X 266 capable) on the PCI-X 2.0 bus of an AMD-8132
/// HyperTransport tunnel (PCI device 0x7458), whose secondary bus runs in mode 2 at 133 MHz:
/// PCI-X 266 (Secondary Bus Mode and Frequency 0xB). A RAID-0 LUN as `/dev/sdb`.
pub fn fc_4g_pcix() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "4GFC qla2xxx HBA on a PCI-X 2.0 bus (AMD-8132 bridge, bus at PCI-X 266) to a RAID-0 LUN",
        &[FC_HOST, FC_HBAS, SCSI_HOST, BUS_PCI, PCI_REGS, BLOCK],
    );
    let bridge = m.pci(
        "/sys/devices/pci0000:00",
        "0000:00:06.0",
        "0x1022",
        "0x7458",
    );
    m.write(
        &format!("{bridge}/config"),
        config_space(1, &[pcix_bridge_capability(true, 0xb)]),
    );
    let hba = m.pci(&bridge, "0000:01:03.0", "0x1077", "0x2422");
    m.write(
        &format!("{hba}/config"),
        config_space(0, &[pcix_device_capability(true, true, true)]),
    );
    let port = FcPort {
        driver: "qla2xxx",
        host: 7,
        speed: "4 Gbit",
        port_name: "0x210000e08b8c9d0e",
    };
    raid0_lun(&m, &hba, &port, "0x5006016041e0a1b2");
    (m, "/dev/sdb")
}

/// The FC port of an HBA: its driver, SCSI host number, `fc_host` speed and WWPN.
struct FcPort {
    driver: &'static str,
    host: u32,
    speed: &'static str,
    port_name: &'static str,
}

/// The port of `hba` logged in to one array port (`array_port`, its WWPN), which presents a
/// 2 TiB RAID-0 LUN 0 as `sdb`.
fn raid0_lun(m: &MachineDir, hba: &str, port: &FcPort, array_port: &str) {
    let number = port.host;
    m.driver(hba, port.driver);
    let host = m.scsi_host(hba, number, port.driver);
    m.fc_host(&host, number, port.speed, port.port_name);
    let rport = m.fc_remote_port(&host, &format!("rport-{number}:0-0"), array_port);
    m.scsi_disk(
        &format!("{rport}/target{number}:0:0/{number}:0:0:0"),
        "sdb",
        "8:16",
        LUN_SECTORS,
        "DGC",
        "RAID 0",
        &Queue::scsi_ssd(32),
    );
}

/// A dual-port 4GFC QLogic HBA (one PCI function per port) on a PCIe 1.0 x8 link, each port
/// reaching the same RAID-0 LUN: `sdc` through host3, `sdd` through host4, joined by
/// dm-multipath as `/dev/mapper/mpatha`.
pub fn fc_4g_multipath_pcie() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "dual-port 4GFC qla2xxx HBA on PCIe 1.0 x8, dm-multipath over both ports to a RAID-0 LUN",
        &[FC_HOST, SCSI_HOST, BUS_PCI, PCI_REGS, BLOCK, BLOCK_DM],
    );
    let root_port = m.pci(
        "/sys/devices/pci0000:00",
        "0000:00:03.0",
        "0x8086",
        "0x3c08",
    );
    m.pcie_link(&root_port, "2.5 GT/s PCIe", 8, 256);
    let wwpns = ["0x21000024ff3a1b2c", "0x21000024ff3a1b2d"];
    let array_ports = ["0x5006016041e0a1b2", "0x5006016941e0a1b2"];
    for (index, (disk, dev)) in [("sdc", "8:32"), ("sdd", "8:48")].into_iter().enumerate() {
        let hba = m.pci(
            &root_port,
            &format!("0000:05:00.{index}"),
            "0x1077",
            "0x2432",
        );
        m.pcie_link(&hba, "2.5 GT/s PCIe", 8, 256);
        m.driver(&hba, "qla2xxx");
        let host_number = 3 + index as u32;
        let host = m.scsi_host(&hba, host_number, "qla2xxx");
        m.fc_host(&host, host_number, "4 Gbit", wwpns[index]);
        let rport = m.fc_remote_port(
            &host,
            &format!("rport-{host_number}:0-0"),
            array_ports[index],
        );
        m.scsi_disk(
            &format!("{rport}/target{host_number}:0:0/{host_number}:0:0:1"),
            disk,
            dev,
            LUN_SECTORS,
            "DGC",
            "RAID 0",
            &Queue::scsi_ssd(32),
        );
    }
    m.device_mapper(
        "dm-0",
        "253:0",
        "mpatha",
        "mpath-3600601604e302c00a1b2c3d4e5f6a7b8",
        LUN_SECTORS,
        &["sdc", "sdd"],
    );
    (m, "/dev/mapper/mpatha")
}

/// One port of a dual-port 8GFC Emulex HBA (PCIe 2.0 x8) reaching a LUN through two array
/// ports (`rport-5:0-0`, `rport-5:0-1`): two paths, `sde` and `sdf`, joined by dm-multipath
/// as `/dev/mapper/mpathb`, both over the one FC link.
pub fn fc_8g_multipath() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "8GFC lpfc port (PCIe 2.0 x8 HBA) with two paths to a LUN through two array ports, dm-multipath",
        &[FC_HOST, SCSI_HOST, BUS_PCI, PCI_REGS, BLOCK, BLOCK_DM],
    );
    let hba = m.pcie_slot(
        "0000:00:02.0",
        "0000:06:00.0",
        "0x10df",
        "0xf100",
        "5.0 GT/s PCIe",
        8,
        256,
    );
    m.driver(&hba, "lpfc");
    let host = m.scsi_host(&hba, 5, "lpfc");
    m.fc_host(&host, 5, "8 Gbit", "0x10000090fa1b2c3d");
    for (index, (disk, dev)) in [("sde", "8:64"), ("sdf", "8:80")].into_iter().enumerate() {
        let rport = m.fc_remote_port(
            &host,
            &format!("rport-5:0-{index}"),
            &format!("0x500507680b2{index}1a2b"),
        );
        m.scsi_disk(
            &format!("{rport}/target5:0:{index}/5:0:{index}:0"),
            disk,
            dev,
            LUN_SECTORS,
            "IBM",
            "2145",
            &Queue::scsi_ssd(30),
        );
    }
    m.device_mapper(
        "dm-1",
        "253:1",
        "mpathb",
        "mpath-360050768018085e2f8000000000000a1",
        LUN_SECTORS,
        &["sde", "sdf"],
    );
    (m, "/dev/mapper/mpathb")
}
