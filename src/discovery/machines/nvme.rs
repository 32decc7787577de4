//! NVMe machines: a PCIe 4.0 x4 drive, NVMe over TCP through native multipath, and LVM on
//! dm-crypt on a PCIe 3.0 x4 drive.

use super::builder::{MachineDir, Netdev, Queue};
use super::sources::{BLOCK, BLOCK_DM, BUS_PCI, CLASS_NET, NVME, PCI_REGS, PROC};

/// A 3.84 TB namespace in 512-byte sectors.
const NAMESPACE_SECTORS: u64 = 7_501_476_528;

/// A PCIe NVMe controller `nvme0` with namespace `nvme0n1` below `function`; returns the
/// namespace's block directory.
fn pcie_namespace(m: &MachineDir, function: &str, model: &str, queues: u32) -> String {
    m.driver(function, "nvme");
    let controller = format!("{function}/nvme/nvme0");
    let address = function.rsplit('/').next().unwrap_or_default().to_string();
    m.nvme_controller(&controller, "nvme0", "pcie", model, queues, &address);
    let namespace = format!("{controller}/nvme0n1");
    m.block(
        &namespace,
        "nvme0n1",
        "259:0",
        NAMESPACE_SECTORS,
        &Queue::nvme(queues, 1023),
        Some(&controller),
    );
    namespace
}

/// A file on XFS on the first partition of an NVMe drive on a PCIe 4.0 x4 link.
pub fn nvme_gen4() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "NVMe drive on PCIe 4.0 x4, XFS on its first partition mounted at /data",
        &[NVME, BUS_PCI, PCI_REGS, BLOCK, PROC],
    );
    let function = m.pcie_slot(
        "0000:00:01.1",
        "0000:01:00.0",
        "0x144d",
        "0xa80a",
        "16.0 GT/s PCIe",
        4,
        256,
    );
    let namespace = pcie_namespace(&m, &function, "SAMSUNG MZQL23T8HCLS-00A07", 64);
    m.partition(
        &namespace,
        "nvme0n1p1",
        1,
        "259:1",
        2048,
        NAMESPACE_SECTORS - 4096,
    );
    m.mount("259:1", "/data", "xfs", "/dev/nvme0n1p1");
    m.file_state("/data/test.dat", "259:1", 16 << 30);
    (m, "/data/test.dat")
}

/// NVMe over TCP: controller `nvme1` of subsystem `nvme-subsys1` (native multipath, one
/// path) to a target at 10.20.0.5:4420, reached through a 25GbE port (bnxt_en, PCIe 3.0 x8,
/// MTU 9000); the namespace head is `/dev/nvme1n1`.
pub fn nvme_over_tcp() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "NVMe/TCP namespace (native multipath, one path) over a 25GbE port, MTU 9000",
        &[NVME, CLASS_NET, BUS_PCI, PCI_REGS, BLOCK, PROC],
    );
    let port = m.pcie_slot(
        "0000:00:03.0",
        "0000:3b:00.0",
        "0x14e4",
        "0x16d7",
        "8.0 GT/s PCIe",
        8,
        256,
    );
    m.netdev(
        "ens2f0",
        Some((&port, "bnxt_en")),
        &Netdev::ethernet(3, 25000, 9000),
    );
    m.ipv4_route("ens2f0", "10.20.0.0", 24, None);
    m.route_answer("10.20.0.5", "ens2f0");
    let controller = "/sys/devices/virtual/nvme-fabrics/ctl/nvme1";
    m.nvme_controller(
        controller,
        "nvme1",
        "tcp",
        "Linux",
        8,
        "traddr=10.20.0.5,trsvcid=4420,src_addr=10.20.0.11",
    );
    let subsystem = "/sys/devices/virtual/nvme-subsystem/nvme-subsys1";
    m.attributes(
        subsystem,
        &[
            ("iopolicy", "numa"),
            ("subsysnqn", "nqn.2014-08.org.example:array1"),
            ("model", "Linux"),
        ],
    );
    m.link(&format!("{subsystem}/nvme1"), controller);
    m.link("/sys/class/nvme-subsystem/nvme-subsys1", subsystem);
    let path_disk = format!("{controller}/nvme1c1n1");
    m.attributes(&path_disk, &[("dev", "259:3"), ("hidden", "1")]);
    let head = format!("{subsystem}/nvme1n1");
    m.block(
        &head,
        "nvme1n1",
        "259:2",
        NAMESPACE_SECTORS,
        &Queue::nvme(8, 127),
        Some(subsystem),
    );
    m.link(&format!("{head}/multipath/nvme1c1n1"), &path_disk);
    (m, "/dev/nvme1n1")
}

/// A file on ext4 on an LVM logical volume on dm-crypt on the third partition of an NVMe
/// drive on PCIe 3.0 x4: nvme0n1p3 → dm-0 (LUKS) → dm-1 (vg0-home), mounted at /home.
pub fn lvm_crypt_nvme() -> (MachineDir, &'static str) {
    let m = MachineDir::new(
        "LVM on dm-crypt on an NVMe drive (PCIe 3.0 x4), ext4 at /home",
        &[NVME, BLOCK_DM, BUS_PCI, PCI_REGS, BLOCK, PROC],
    );
    let function = m.pcie_slot(
        "0000:00:1d.0",
        "0000:3d:00.0",
        "0x144d",
        "0xa808",
        "8.0 GT/s PCIe",
        4,
        256,
    );
    let namespace = pcie_namespace(&m, &function, "Samsung SSD 970 EVO Plus 1TB", 8);
    m.partition(&namespace, "nvme0n1p1", 1, "259:1", 2048, 1_048_576);
    m.partition(&namespace, "nvme0n1p2", 2, "259:2", 1_050_624, 2_097_152);
    m.partition(
        &namespace,
        "nvme0n1p3",
        3,
        "259:3",
        3_147_776,
        1_950_000_000,
    );
    m.device_mapper(
        "dm-0",
        "253:0",
        "luks-3f1a9c2e-7b4d-4e8a-9c1f-2d5e6f7a8b9c",
        "CRYPT-LUKS2-3f1a9c2e7b4d4e8a9c1f2d5e6f7a8b9c-luks-3f1a9c2e-7b4d-4e8a-9c1f-2d5e6f7a8b9c",
        1_949_967_232,
        &["nvme0n1p3"],
    );
    m.device_mapper(
        "dm-1",
        "253:1",
        "vg0-home",
        "LVM-Xk2Jd8Qp4Lm6Nz1Rt5Vw7Yb9Cf3Hg0Sa1Ue2Oi4Pk6Mj8Nl0Bh2Dv4Fx6Gz8",
        1_500_000_000,
        &["dm-0"],
    );
    m.mount("253:1", "/home", "ext4", "/dev/mapper/vg0-home");
    m.file_state("/home/alice/test.dat", "253:1", 8 << 30);
    (m, "/home/alice/test.dat")
}
