//! Local disk machines: md RAID10 over ten SAS SSDs behind an expander, and a SATA SSD on an
//! AHCI controller in the chipset.

use super::builder::{MachineDir, Queue};
use super::sources::{ATA, BLOCK, BUS_PCI, MD, PCI_REGS, PROC, SAS, SCSI_HOST};

/// A 1.92 TB SSD in 512-byte sectors.
const SSD_SECTORS: u64 = 3_750_748_848;

/// md RAID10 over ten SAS SSDs (12 Gb/s each) behind an expander whose uplink is a 4-wide
/// 12G port of a SAS3008 HBA (mpt3sas, PCIe 3.0 x8); the array is `/dev/md0`.
pub fn md_raid10_sas() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "md RAID10 over ten 12G SAS SSDs behind an expander on a 4-wide port of a SAS3008 HBA (PCIe 3.0 x8)",
        &[MD, SAS, SCSI_HOST, BUS_PCI, PCI_REGS, BLOCK],
    );
    let hba = m.pcie_slot(
        "0000:00:02.0",
        "0000:02:00.0",
        "0x1000",
        "0x0097",
        "8.0 GT/s PCIe",
        8,
        256,
    );
    m.driver(&hba, "mpt3sas");
    let host = m.scsi_host(&hba, 0, "mpt3sas");
    // The HBA's wide port: four phys to the expander.
    let wide_port = format!("{host}/port-0:0");
    m.sas_port(
        &wide_port,
        &host,
        &["phy-0:0", "phy-0:1", "phy-0:2", "phy-0:3"],
        "12.0 Gbit",
    );
    let expander = format!("{wide_port}/expander-0:0");
    let mut members = Vec::new();
    for index in 0..10u32 {
        let port = format!("{expander}/port-0:0:{index}");
        let phy = format!("phy-0:0:{index}");
        m.sas_port(&port, &expander, &[&phy], "12.0 Gbit");
        let name = format!("sd{}", (b'b' + index as u8) as char);
        let dev = format!("8:{}", 16 * (index + 1));
        m.scsi_disk(
            &format!("{port}/end_device-0:0:{index}/target0:0:{index}/0:0:{index}:0"),
            &name,
            &dev,
            SSD_SECTORS,
            "SEAGATE",
            "XS1920SE70084",
            &Queue::scsi_ssd(254),
        );
        members.push(name);
    }
    let names: Vec<&str> = members.iter().map(String::as_str).collect();
    m.md("md0", "9:0", "raid10", 512 * 1024, SSD_SECTORS * 5, &names);
    (m, "/dev/md0")
}

/// A file on ext4 on the second partition of a SATA SSD on port 3 of the chipset's AHCI
/// controller (on the root bus: no PCIe link of its own), link at 6.0 Gbps.
pub fn sata_ahci() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "SATA SSD on the chipset's AHCI controller, link at 6.0 Gbps, ext4 at /srv",
        &[ATA, SCSI_HOST, BUS_PCI, BLOCK, PROC],
    );
    let controller = m.pci(
        "/sys/devices/pci0000:00",
        "0000:00:17.0",
        "0x8086",
        "0xa352",
    );
    m.driver(&controller, "ahci");
    let port = m.ata_port(&controller, 3, "6.0 Gbps");
    let host = m.scsi_host(&port, 2, "ahci");
    let disk = format!("{host}/target2:0:0/2:0:0:0");
    m.scsi_disk(
        &disk,
        "sda",
        "8:0",
        1_953_525_168,
        "ATA",
        "Samsung SSD 870",
        &Queue::scsi_ssd(32),
    );
    let block = format!("{disk}/block/sda");
    m.partition(&block, "sda1", 1, "8:1", 2048, 1_048_576);
    m.partition(&block, "sda2", 2, "8:2", 1_050_624, 1_952_474_511);
    m.mount("8:2", "/srv", "ext4", "/dev/sda2");
    m.file_state("/srv/data/test.dat", "8:2", 4 << 30);
    (m, "/srv/data/test.dat")
}
