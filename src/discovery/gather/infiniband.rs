//! InfiniBand ports as sysfs shows them: `/sys/class/infiniband/HCA/ports/N/rate`
//! (`40 Gb/sec (4X QDR)`), `state` and `link_layer` (Documentation/ABI/stable/sysfs-class-infiniband).
//! An IP-over-InfiniBand interface reaches its port through `device/infiniband/HCA` and its
//! `dev_port` (0 for port 1), so IPoIB, NFS over RDMA and iSER get the fabric's rate from
//! here instead of a declaration.

use crate::discovery::HostView;
use crate::discovery::facts::InfinibandPort;
use std::path::Path;

/// Where InfiniBand HCAs are listed.
const CLASS_INFINIBAND: &str = "/sys/class/infiniband";

/// Every port of every HCA of the machine, in name order.
pub fn ports(view: &HostView) -> Vec<InfinibandPort> {
    let class = Path::new(CLASS_INFINIBAND);
    view.read_dir(class)
        .into_iter()
        .flat_map(|hca| {
            let numbers = view.read_dir(&class.join(&hca).join("ports"));
            numbers
                .into_iter()
                .filter_map(|number| number.parse::<u32>().ok())
                .filter_map(|number| port(view, &hca, number))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Port `number` of HCA `hca`, when sysfs lists it.
pub fn port(view: &HostView, hca: &str, number: u32) -> Option<InfinibandPort> {
    let directory = Path::new(CLASS_INFINIBAND)
        .join(hca)
        .join("ports")
        .join(number.to_string());
    if !view.is_dir(&directory) {
        return None;
    }
    Some(InfinibandPort {
        hca: hca.to_string(),
        port: number,
        rate: view.attribute(&directory.join("rate")),
        state: view.attribute(&directory.join("state")),
        link_layer: view.attribute(&directory.join("link_layer")),
    })
}

/// The port an IPoIB interface whose sysfs directory is `interface` sends through: its
/// device's HCA (`device/infiniband/HCA`) and port `dev_port + 1`.
pub fn port_of_interface(view: &HostView, interface: &Path) -> Option<InfinibandPort> {
    let hca = view
        .read_dir(&interface.join("device/infiniband"))
        .into_iter()
        .next()?;
    let number = view.number::<u32>(&interface.join("dev_port")).unwrap_or(0) + 1;
    port(view, &hca, number)
}
