//! The network part of a path: the interface the kernel routes to a server through and what
//! it is built on — a bond's members, the bridge port towards the server, a VLAN's or
//! macvlan's lower device — down to the NIC and its PCI functions.
//!
//! Layouts: Documentation/ABI/testing/sysfs-class-net (`type`, `mtu`, `speed`, `operstate`,
//! `ifindex`, `iflink`), sysfs-class-net-… and Documentation/networking/bonding.rst
//! (`bonding/slaves`, `bonding/mode`, `bonding/active_slave`), net/bridge/br_sysfs_br.c and
//! br_sysfs_if.c (`bridge/`, `brif/PORT/port_no`, the binary `brforward` of
//! `struct __fdb_entry` in include/uapi/linux/if_bridge.h), the netdev adjacency links
//! (`lower_*`), `tun_flags` of tun/tap devices, `DEVTYPE=` in `uevent`.

use super::Gatherer;
use crate::discovery::facts::{InterfaceFacts, InterfaceKind, RouteFacts, RouteOutcome};
use crate::discovery::route;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

/// ARPHRD_LOOPBACK in `type`.
const ARPHRD_LOOPBACK: u32 = 772;
/// ARPHRD_INFINIBAND.
const ARPHRD_INFINIBAND: u32 = 32;
/// ARPHRD_NONE (tun, wireguard).
const ARPHRD_NONE: u32 = 65534;
/// How deep interfaces may stack before discovery stops (VLAN on bond on …).
const MAX_INTERFACE_DEPTH: u32 = 8;
/// Most ports of a bridge followed when the one towards the server is not known.
const MAX_BRIDGE_PORTS: usize = 8;
/// Bytes of one `struct __fdb_entry` in `brforward`.
const FDB_ENTRY_BYTES: usize = 16;
/// Most bytes of `brforward` read.
const FDB_LIMIT_BYTES: usize = 1 << 20;
/// PCI subsystem vendors of hypervisors: Red Hat (QEMU, virtio), VMware, Microsoft, Xen.
const HYPERVISOR_VENDORS: [&str; 4] = ["0x1af4", "0x15ad", "0x1414", "0x5853"];

fn class_net(name: &str) -> PathBuf {
    Path::new("/sys/class/net").join(name)
}

impl Gatherer<'_> {
    /// The route to `host:port` and the interfaces it leaves through.
    pub(super) fn route(&mut self, host: &str, port: u16, depth: u32) -> RouteFacts {
        let system = self.machine.system();
        let outcome = match system.resolve_host(host, port) {
            Err(reason) => RouteOutcome::Unresolved(reason),
            Ok(address) => {
                let ip = address.ip();
                let name = if ip.is_loopback() {
                    Some("lo".to_string())
                } else {
                    system.interface_towards(self.view(), ip)
                };
                match name {
                    None => RouteOutcome::NoRoute(ip),
                    Some(name) => {
                        let gateway = match ip {
                            IpAddr::V4(destination) if !ip.is_loopback() => {
                                route::ipv4_gateway(self.view(), destination, &name)
                            }
                            _ => None,
                        };
                        let next_hop = match ip {
                            IpAddr::V4(destination) => Some(gateway.unwrap_or(destination)),
                            IpAddr::V6(_) => None,
                        };
                        match self.interface(&name, depth, next_hop) {
                            Some(interface) => RouteOutcome::Found {
                                address: ip,
                                gateway,
                                interface: Box::new(interface),
                            },
                            None => RouteOutcome::NoRoute(ip),
                        }
                    }
                }
            }
        };
        RouteFacts {
            host: host.to_string(),
            port,
            outcome,
        }
    }

    /// Interface `name` and what it is built on; `None` when already seen or too deep.
    /// `next_hop` is the IPv4 address packets are sent to (the gateway, or the server).
    pub(super) fn interface(
        &mut self,
        name: &str,
        depth: u32,
        next_hop: Option<Ipv4Addr>,
    ) -> Option<InterfaceFacts> {
        if depth > MAX_INTERFACE_DEPTH || !self.first_visit(&format!("net:{name}")) {
            return None;
        }
        let view = self.view();
        let directory = class_net(name);
        if !view.is_dir(&directory) {
            return None;
        }
        let number = |file: &str| view.number::<i64>(&directory.join(file));
        let link_type = number("type").unwrap_or(1) as u32;
        let mut facts = InterfaceFacts {
            name: name.to_string(),
            mtu: number("mtu").unwrap_or(1500).max(0) as u32,
            operstate: view
                .attribute(&directory.join("operstate"))
                .unwrap_or_else(|| "unknown".into()),
            speed_mbps: number("speed").filter(|s| *s > 0).map(|s| s as u64),
            kind: InterfaceKind::Physical,
            below: Vec::new(),
            below_reason: None,
            bus: Vec::new(),
        };
        if link_type == ARPHRD_LOOPBACK || name == "lo" {
            facts.kind = InterfaceKind::Loopback;
            return Some(facts);
        }
        let devtype = device_type(view.read_to_string(&directory.join("uevent")).as_deref());
        if view.is_dir(&directory.join("bonding")) {
            let bonding = directory.join("bonding");
            let members: Vec<String> = view
                .attribute(&bonding.join("slaves"))
                .map(|line| line.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
            facts.below = self.interfaces(&members, depth, next_hop);
            facts.kind = InterfaceKind::Bond {
                mode: view.attribute(&bonding.join("mode")).unwrap_or_default(),
                active: view.attribute(&bonding.join("active_slave")),
                members,
            };
            return Some(facts);
        }
        if view.is_dir(&directory.join("bridge")) {
            let ports = view.read_dir(&directory.join("brif"));
            let (chosen, reason) = self.bridge_egress(name, &ports, next_hop);
            facts.below = self.interfaces(&chosen, depth, next_hop);
            facts.below_reason = Some(reason);
            facts.kind = InterfaceKind::Bridge { ports };
            return Some(facts);
        }
        if view.exists(&directory.join("tun_flags")) {
            let which = if link_type == ARPHRD_NONE {
                "tun"
            } else {
                "tap"
            };
            facts.kind = InterfaceKind::Virtual(which.into());
            return Some(facts);
        }
        let lowers: Vec<String> = view
            .read_dir_matching(&directory, "lower_")
            .iter()
            .filter_map(|entry| entry.strip_prefix("lower_").map(str::to_string))
            .collect();
        match devtype.as_deref() {
            Some("vlan") => {
                facts.kind = InterfaceKind::Vlan;
                facts.below = self.interfaces(&lowers, depth, next_hop);
                return Some(facts);
            }
            Some(other) if other != "wlan" => {
                facts.kind = InterfaceKind::Virtual(other.to_string());
                facts.below = self.interfaces(&lowers, depth, next_hop);
                return Some(facts);
            }
            _ => {}
        }
        if !lowers.is_empty() {
            facts.kind = InterfaceKind::Stacked;
            facts.below = self.interfaces(&lowers, depth, next_hop);
            return Some(facts);
        }
        let device = view
            .resolve(&directory.join("device"))
            .or_else(|| device_above(view, &directory));
        match device {
            Some(device) => {
                facts.bus = self.pci_chain(&device);
                let driver = view
                    .resolve(&device.join("driver"))
                    .and_then(|driver| driver.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_default();
                let on_hypervisor = facts.bus.last().is_some_and(|function| {
                    function
                        .subsystem_vendor
                        .as_deref()
                        .is_some_and(|vendor| HYPERVISOR_VENDORS.contains(&vendor))
                });
                let device_text = device.to_string_lossy();
                facts.kind = if device_text.contains("/virtio") || driver == "virtio_net" {
                    InterfaceKind::Paravirtual("virtio-net".into())
                } else if driver == "hv_netvsc" || device_text.contains("/VMBUS") {
                    InterfaceKind::Paravirtual("Hyper-V netvsc".into())
                } else if driver == "vif" || driver.starts_with("xen") {
                    InterfaceKind::Paravirtual("Xen netfront".into())
                } else if driver == "vmxnet3" {
                    InterfaceKind::Paravirtual("VMware vmxnet3".into())
                } else if on_hypervisor {
                    InterfaceKind::Paravirtual("a virtual machine's emulated NIC".into())
                } else if link_type == ARPHRD_INFINIBAND {
                    InterfaceKind::InfiniBand(super::infiniband::port_of_interface(
                        view, &directory,
                    ))
                } else {
                    InterfaceKind::Physical
                };
            }
            None => {
                let ifindex = number("ifindex");
                let iflink = number("iflink");
                facts.kind = if ifindex.is_some() && iflink.is_some() && ifindex != iflink {
                    InterfaceKind::Virtual("veth".into())
                } else {
                    InterfaceKind::Virtual("virtual".into())
                };
            }
        }
        Some(facts)
    }

    fn interfaces(
        &mut self,
        names: &[String],
        depth: u32,
        next_hop: Option<Ipv4Addr>,
    ) -> Vec<InterfaceFacts> {
        names
            .iter()
            .filter_map(|name| self.interface(name, depth + 1, next_hop))
            .collect()
    }

    /// The ports of bridge `name` that carry traffic to `next_hop`: the one its forwarding
    /// database names for the next hop's hardware address; else its physical ports; else
    /// all its ports (at most [`MAX_BRIDGE_PORTS`]). The text says how they were chosen.
    fn bridge_egress(
        &self,
        name: &str,
        ports: &[String],
        next_hop: Option<Ipv4Addr>,
    ) -> (Vec<String>, String) {
        let view = self.view();
        let directory = class_net(name);
        if let Some(next_hop) = next_hop
            && let Some(mac) = route::neighbour_address(view, next_hop, name)
            && let Some(port_number) = view
                .read_bytes(&directory.join("brforward"), FDB_LIMIT_BYTES)
                .and_then(|table| forwarding_port(&table, mac))
            && let Some(port) = ports.iter().find(|port| {
                view.attribute(&directory.join("brif").join(port).join("port_no"))
                    .and_then(|text| parse_number(&text))
                    == Some(u32::from(port_number))
            })
        {
            return (
                vec![port.clone()],
                format!("the forwarding database sends {next_hop} through {port}"),
            );
        }
        let physical: Vec<String> = ports
            .iter()
            .filter(|port| view.exists(&class_net(port).join("device")))
            .cloned()
            .collect();
        if !physical.is_empty() {
            return (
                physical,
                "the bridge's physical ports (the port towards the server is not known)".into(),
            );
        }
        (
            ports.iter().take(MAX_BRIDGE_PORTS).cloned().collect(),
            "every port (the one towards the server is not known)".into(),
        )
    }
}

/// The port number the forwarding database `table` (`brforward`) holds for `mac`.
fn forwarding_port(table: &[u8], mac: [u8; 6]) -> Option<u16> {
    table
        .chunks_exact(FDB_ENTRY_BYTES)
        .find(|entry| entry[..6] == mac && entry[7] == 0)
        .map(|entry| u16::from(entry[12]) << 8 | u16::from(entry[6]))
}

/// `DEVTYPE=` of a `uevent` text.
/// The device an interface sits under when its `device` link is missing (captures that did
/// not keep it): the directory above `net/NAME` in the interface's real path, when that lies
/// under a bus in `/sys/devices` rather than `/sys/devices/virtual`.
fn device_above(view: &crate::discovery::HostView, directory: &Path) -> Option<PathBuf> {
    let real = view.resolve(directory)?;
    let parent = real.parent()?;
    if parent.file_name()? != "net" {
        return None;
    }
    let device = parent.parent()?;
    let on_a_bus =
        device.starts_with("/sys/devices") && !device.starts_with("/sys/devices/virtual");
    (on_a_bus && device != Path::new("/sys/devices")).then(|| device.to_path_buf())
}

fn device_type(uevent: Option<&str>) -> Option<String> {
    uevent?
        .lines()
        .find_map(|line| line.strip_prefix("DEVTYPE="))
        .map(|value| value.trim().to_string())
}

/// `0x1f` or `31`.
fn parse_number(text: &str) -> Option<u32> {
    match text.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// One `struct __fdb_entry` for building machines in tests.
#[cfg(test)]
pub fn fdb_entry(mac: [u8; 6], port: u16, local: bool) -> Vec<u8> {
    let mut entry = vec![0u8; FDB_ENTRY_BYTES];
    entry[..6].copy_from_slice(&mac);
    entry[6] = (port & 0xff) as u8;
    entry[7] = u8::from(local);
    entry[12] = (port >> 8) as u8;
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forwarding_database_names_the_port() {
        let mac = [2, 0x42, 0xac, 0x12, 0, 2];
        let mut table = fdb_entry([2, 0x42, 0xac, 0x12, 0, 1], 1, true);
        table.extend(fdb_entry(mac, 0x102, false));
        assert_eq!(forwarding_port(&table, mac), Some(0x102));
        assert_eq!(forwarding_port(&table, [0; 6]), None);
        // A local entry (the bridge's own address) is not a port towards anything.
        assert_eq!(forwarding_port(&table, [2, 0x42, 0xac, 0x12, 0, 1]), None);
        assert_eq!(
            device_type(Some("INTERFACE=br0\nDEVTYPE=bridge\n")).as_deref(),
            Some("bridge")
        );
        assert_eq!(parse_number("0x1f"), Some(31));
        assert_eq!(parse_number("7"), Some(7));
    }
}
