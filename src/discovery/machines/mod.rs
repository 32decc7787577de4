//! Recorded machines built from the kernel's documented sysfs layout, for tests: each one a
//! few lines of [`builder`] calls that write the files discovery reads on such a machine
//! (the documents each layout follows are cited in the machine's `sources`). One more machine,
//! this test host, is recorded for real under `tests/machines/virtio-vm`.
//!
//! The tests that assert each machine's path, hop capacities and verdicts are in
//! `src/analysis/machine_tests.rs`.

pub mod builder;
mod disks;
mod ethernet;
mod fibre_channel;
mod nvme;

pub use disks::{md_raid10_sas, sata_ahci};
pub use ethernet::{
    bond_4x10gbe, container_bridge, dual_40gbe, four_veths, iscsi_1gbe, iscsi_10gbe,
};
pub use fibre_channel::{
    fc_2g_pcie, fc_2g_pcix, fc_4g_multipath_pcie, fc_4g_pcix, fc_8g_multipath,
};
pub use nvme::{lvm_crypt_nvme, nvme_gen4, nvme_over_tcp};

/// Where the sysfs layouts come from (Linux kernel source tree).
pub mod sources {
    /// PCI functions and their links.
    pub const BUS_PCI: &str = "Documentation/ABI/testing/sysfs-bus-pci (current_link_speed, current_link_width, max_link_speed, max_link_width, config)";
    /// Configuration space registers.
    pub const PCI_REGS: &str = "include/uapi/linux/pci_regs.h (PCI-X capability and bridge secondary status, PCI Express Device Control Max_Payload_Size); drivers/pci/probe.c pcix_bus_speed";
    /// Block devices.
    pub const BLOCK: &str = "Documentation/ABI/stable/sysfs-block (dev, size, queue/, mq/, slaves/, holders/, partition, start)";
    /// Device-mapper.
    pub const BLOCK_DM: &str = "Documentation/ABI/testing/sysfs-block-dm (dm/name, dm/uuid); dm-multipath and LVM set the uuid prefixes mpath-, LVM-, CRYPT-";
    /// md RAID.
    pub const MD: &str = "Documentation/admin-guide/md.rst (md/level, md/raid_disks, md/chunk_size, md/degraded, md/dev-*)";
    /// Fibre Channel hosts.
    pub const FC_HOST: &str = "Documentation/ABI/testing/sysfs-class-fc_host; drivers/scsi/scsi_transport_fc.c (fc_host/hostN/speed, port_name, port_state; rport-H:B-R)";
    /// The PCI device IDs of FC HBAs.
    pub const FC_HBAS: &str = "drivers/scsi/lpfc/lpfc_hw.h (PCI_DEVICE_ID_NEPTUNE 0xf0f5); drivers/scsi/qla2xxx/qla_def.h (PCI_DEVICE_ID_QLOGIC_ISP2422 0x2422)";
    /// SCSI hosts.
    pub const SCSI_HOST: &str =
        "Documentation/ABI/testing/sysfs-class-scsi_host (scsi_host/hostN/proc_name)";
    /// iSCSI sessions.
    pub const ISCSI: &str = "drivers/scsi/scsi_transport_iscsi.c (iscsi_session/sessionN/targetname, iscsi_connection/connectionN:0/persistent_address, persistent_port)";
    /// SATA links.
    pub const ATA: &str = "Documentation/ABI/testing/sysfs-ata (ata_link/linkN/sata_spd)";
    /// SAS ports and phys.
    pub const SAS: &str = "drivers/scsi/scsi_transport_sas.c (port-*, phy-*, sas_phy/phy-*/negotiated_linkrate, expander-*)";
    /// NVMe controllers and native multipath.
    pub const NVME: &str = "Documentation/ABI/testing/sysfs-class-nvme; drivers/nvme/host/sysfs.c (transport, address, queue_count, state, model) and multipath.c (nvme-subsysN, multipath/, iopolicy)";
    /// Network interfaces.
    pub const CLASS_NET: &str = "Documentation/ABI/testing/sysfs-class-net (type, mtu, speed, operstate, ifindex, iflink); the netdev adjacency links lower_* and upper_*";
    /// Bonds.
    pub const BONDING: &str =
        "Documentation/networking/bonding.rst (bonding/slaves, bonding/mode, bonding/active_slave)";
    /// Bridges.
    pub const BRIDGE: &str = "net/bridge/br_sysfs_br.c and br_sysfs_if.c (bridge/, brif/, brport/port_no, brforward); include/uapi/linux/if_bridge.h (struct __fdb_entry)";
    /// The proc tables discovery reads.
    pub const PROC: &str = "Documentation/filesystems/proc.rst (/proc/self/mountinfo, /proc/net/route, /proc/net/arp, /proc/meminfo)";
}
