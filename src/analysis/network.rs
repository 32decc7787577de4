//! The network part of a path: the interface the kernel routes to a server through, what it
//! is built on (bond members, VLAN parents), its link speed and MTU, and the PCI Express link
//! of the NIC.
//!
//! The route is found the way the kernel would pick it: a UDP socket connected to the server
//! (no packet is sent) reports the local address chosen, and the interface holding that
//! address is the one. The gateway comes from `/proc/net/route` (IPv4).

use super::block::{capacity_of, read_attribute};
use super::links;
use super::path::{Share, Walker};
use crate::host::sys::interface_with_address;
use crate::result::HopKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::path::Path;

/// ARPHRD_LOOPBACK in `/sys/class/net/IF/type`.
const ARPHRD_LOOPBACK: u32 = 772;
/// ARPHRD_INFINIBAND.
const ARPHRD_INFINIBAND: u32 = 32;

impl Walker<'_> {
    /// Adds the interface hops that carry traffic to `host:port`.
    pub fn route(
        &mut self,
        host: &str,
        port: u16,
        protocol: Option<&str>,
        depth: u32,
        share: Share,
    ) {
        let address = match (host, port).to_socket_addrs() {
            Ok(mut addresses) => match addresses.next() {
                Some(address) => address,
                None => {
                    self.note(format!("{host}: no address found"));
                    return;
                }
            },
            Err(error) => {
                self.note(format!("{host}: cannot resolve ({error})"));
                return;
            }
        };
        let interface = if address.ip().is_loopback() {
            Some("lo".to_string())
        } else {
            local_address_towards(address).and_then(interface_with_address)
        };
        let Some(interface) = interface else {
            self.note(format!(
                "{host}: no route or no interface found towards {}",
                address.ip()
            ));
            return;
        };
        let mut route = format!("route to {}", address.ip());
        if let IpAddr::V4(destination) = address.ip()
            && let Some(gateway) = ipv4_gateway(destination, &interface)
        {
            route.push_str(&format!(" via {gateway}"));
        }
        self.interface(&interface, &route, protocol, depth, share);
    }

    /// Adds interface `name` and what it is built on.
    fn interface(
        &mut self,
        name: &str,
        route: &str,
        protocol: Option<&str>,
        depth: u32,
        share: Share,
    ) {
        let key = format!("net:{name}");
        if depth > 8 || !self.first_visit(&key) {
            return;
        }
        let directory = Path::new("/sys/class/net").join(name);
        let number =
            |file: &str| read_attribute(&directory.join(file)).and_then(|t| t.parse::<i64>().ok());
        let mtu = number("mtu").unwrap_or(1500).max(0) as u32;
        let link_type = number("type").unwrap_or(1) as u32;
        let state =
            read_attribute(&directory.join("operstate")).unwrap_or_else(|| "unknown".into());
        if link_type == ARPHRD_LOOPBACK || name == "lo" {
            let capacity = self.memory_capacity("loopback network");
            self.push(
                key,
                HopKind::NetworkInterface,
                name,
                format!("loopback, {route}, MTU {mtu}"),
                depth,
                share,
                capacity,
            )
            .protocol = protocol.map(str::to_string);
            return;
        }
        let members: Vec<String> = read_attribute(&directory.join("bonding/slaves"))
            .map(|line| line.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default();
        let lowers = lower_interfaces(&directory);
        if !members.is_empty() {
            let mode = read_attribute(&directory.join("bonding/mode")).unwrap_or_default();
            let speeds: Vec<u64> = members
                .iter()
                .filter_map(|member| interface_speed_bits(member))
                .collect();
            let capacity = (speeds.len() == members.len())
                .then(|| links::ethernet_tcp(speeds.iter().sum(), mtu))
                .flatten()
                .map(|entry| {
                    let mut capacity = capacity_of(&entry);
                    capacity.derivation = format!(
                        "{} member links together; {}",
                        members.len(),
                        capacity.derivation
                    );
                    capacity
                });
            self.push(
                key,
                HopKind::NetworkInterface,
                name,
                format!(
                    "bond ({mode}) of {}, {route}, MTU {mtu}, {state}",
                    members.join(", ")
                ),
                depth,
                share,
                capacity,
            )
            .protocol = protocol.map(str::to_string);
            self.note(format!(
                "{name}: one TCP connection travels over one member link of the bond; its capacity is the sum only for many connections"
            ));
            let member_share = Share {
                read: share.read / members.len() as f64,
                write: share.write / members.len() as f64,
            };
            for member in &members {
                self.interface(member, "bond member", protocol, depth + 1, member_share);
            }
            return;
        }
        if !lowers.is_empty() {
            self.push(
                key,
                HopKind::NetworkInterface,
                name,
                format!("on {}, {route}, MTU {mtu}, {state}", lowers.join(", ")),
                depth,
                share,
                None,
            )
            .protocol = protocol.map(str::to_string);
            for lower in &lowers {
                self.interface(lower, "lower device", protocol, depth + 1, share);
            }
            return;
        }
        let speed = interface_speed_bits(name);
        let capacity = match (link_type, speed) {
            (ARPHRD_INFINIBAND, _) => None,
            (_, Some(speed)) => links::ethernet_tcp(speed, mtu).as_ref().map(capacity_of),
            (_, None) => None,
        };
        let speed_text = speed.map_or("no speed reported".to_string(), |s| {
            format!("{} Mb/s", s / 1_000_000)
        });
        self.push(
            key,
            HopKind::NetworkInterface,
            name,
            format!("{route}, {speed_text}, MTU {mtu}, {state}"),
            depth,
            share,
            capacity,
        )
        .protocol = protocol.map(str::to_string);
        if link_type == ARPHRD_INFINIBAND {
            self.note(format!(
                "{name}: IP over InfiniBand; declare the fabric's rate with --link (for example ib-edr)"
            ));
        } else if speed.is_none() {
            self.note(format!(
                "{name} reports no link speed (a virtual NIC): declare the link with --link (for example 10gbe)"
            ));
        }
        if let Ok(device) = std::fs::canonicalize(directory.join("device")) {
            self.pci_links(&device, depth, share);
        }
    }
}

/// The link speed of interface `name` in bits per second (`None` when unknown, as on
/// virtual NICs that report -1).
fn interface_speed_bits(name: &str) -> Option<u64> {
    let text = read_attribute(&Path::new("/sys/class/net").join(name).join("speed"))?;
    let mbps: i64 = text.parse().ok()?;
    (mbps > 0).then(|| mbps as u64 * 1_000_000)
}

/// Interfaces `directory` is stacked on (`lower_eth0` links of VLANs, macvlans, bridges).
fn lower_interfaces(directory: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .strip_prefix("lower_")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// The local address the kernel would use to reach `destination`.
fn local_address_towards(destination: SocketAddr) -> Option<IpAddr> {
    let bind: SocketAddr = match destination {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = UdpSocket::bind(bind).ok()?;
    socket.connect(destination).ok()?;
    Some(socket.local_addr().ok()?.ip())
}

/// The gateway of the most specific IPv4 route to `destination` through `interface`, if the
/// route has one.
fn ipv4_gateway(destination: Ipv4Addr, interface: &str) -> Option<Ipv4Addr> {
    let text = std::fs::read_to_string("/proc/net/route").ok()?;
    best_ipv4_gateway(&text, destination, interface)
}

/// Parses `/proc/net/route` text (hexadecimal, host byte order) for the gateway of the most
/// specific route to `destination` on `interface`; `None` for a directly attached network.
pub fn best_ipv4_gateway(text: &str, destination: Ipv4Addr, interface: &str) -> Option<Ipv4Addr> {
    let target = u32::from(destination);
    let parse = |field: &str| u32::from_str_radix(field, 16).ok().map(u32::from_be);
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 || fields[0] != interface {
                return None;
            }
            let network = parse(fields[1])?;
            let gateway = parse(fields[2])?;
            let mask = parse(fields[7])?;
            (target & mask == network & mask).then_some((mask.count_ones(), gateway))
        })
        .max_by_key(|(bits, _)| *bits)
        .and_then(|(_, gateway)| (gateway != 0).then(|| Ipv4Addr::from(gateway)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_route_gives_the_gateway() {
        // default via 10.0.0.1; 10.0.0.0/24 direct; 192.168.5.0/24 via 10.0.0.254.
        let text = "\
Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
eth0\t0005A8C0\tFE00000A\t0003\t0\t0\t0\t00FFFFFF\t0\t0\t0
";
        assert_eq!(
            best_ipv4_gateway(text, Ipv4Addr::new(8, 8, 8, 8), "eth0"),
            Some(Ipv4Addr::new(10, 0, 0, 1))
        );
        assert_eq!(
            best_ipv4_gateway(text, Ipv4Addr::new(10, 0, 0, 7), "eth0"),
            None
        );
        assert_eq!(
            best_ipv4_gateway(text, Ipv4Addr::new(192, 168, 5, 9), "eth0"),
            Some(Ipv4Addr::new(10, 0, 0, 254))
        );
        assert_eq!(
            best_ipv4_gateway(text, Ipv4Addr::new(8, 8, 8, 8), "eth1"),
            None
        );
    }

    #[test]
    fn the_loopback_address_belongs_to_lo() {
        assert_eq!(
            interface_with_address(IpAddr::V4(Ipv4Addr::LOCALHOST)).as_deref(),
            Some("lo")
        );
        assert_eq!(
            local_address_towards((Ipv4Addr::LOCALHOST, 9).into()),
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
    }
}
