//! The network part of a path, as hops: the interface the kernel routes to the server
//! through, what it is built on, its link speed and MTU, and the bus of the NIC.
//!
//! Only a physical NIC's link is a capacity. A virtual interface — veth, bridge, tun/tap,
//! VLAN, macvlan/ipvlan, vxlan, virtio-net and the other NICs of virtual machines — says
//! "virtual: capacity unknown" whatever speed it reports (a veth says 10000 Mb/s), and the
//! path goes on to the physical device where it is visible: a bridge's port towards the
//! server, a bond's members, a VLAN's or macvlan's lower device.

use super::block::capacity_of;
use super::links;
use super::path::{Share, Walker};
use super::transport::infiniband_from_rate;
use crate::discovery::facts::{InterfaceFacts, InterfaceKind, RouteFacts, RouteOutcome};
use crate::result::HopKind;

impl Walker<'_> {
    /// Adds the interface hops that carry traffic to a server.
    pub fn route(&mut self, route: &RouteFacts, protocol: Option<&str>, depth: u32, share: Share) {
        match &route.outcome {
            RouteOutcome::Unresolved(reason) => self.note(reason.clone()),
            RouteOutcome::NoRoute(address) => self.note(format!(
                "{}: no route or no interface found towards {address}",
                route.host
            )),
            RouteOutcome::Found {
                address,
                gateway,
                interface,
            } => {
                let mut text = format!("route to {address}");
                if let Some(gateway) = gateway {
                    text.push_str(&format!(" via {gateway}"));
                }
                self.interface(interface, &text, protocol, depth, share);
            }
        }
    }

    /// Adds interface `interface` (reached as `how`) and what it is built on.
    fn interface(
        &mut self,
        interface: &InterfaceFacts,
        how: &str,
        protocol: Option<&str>,
        depth: u32,
        share: Share,
    ) {
        let name = interface.name.as_str();
        let key = format!("net:{name}");
        let mtu = interface.mtu;
        let state = &interface.operstate;
        let protocol_text = protocol.map(str::to_string);
        match &interface.kind {
            InterfaceKind::Loopback => {
                let capacity = self.memory_capacity("loopback network");
                self.push(
                    key,
                    HopKind::NetworkInterface,
                    name,
                    format!("loopback, {how}, MTU {mtu}"),
                    depth,
                    share,
                    capacity,
                )
                .protocol = protocol_text;
            }
            InterfaceKind::Physical | InterfaceKind::InfiniBand(_) => {
                let port = match &interface.kind {
                    InterfaceKind::InfiniBand(port) => Some(port),
                    _ => None,
                };
                let infiniband = port.is_some();
                let fabric = port
                    .and_then(Option::as_ref)
                    .and_then(|port| Some((port, port.rate.as_deref()?)))
                    .and_then(|(port, rate)| Some((port, rate, infiniband_from_rate(rate)?)));
                let speed = interface.speed_mbps.map(|mbps| mbps * 1_000_000);
                let capacity = match (speed, &fabric) {
                    (_, Some((_, _, entry))) => Some(capacity_of(entry)),
                    (Some(speed), None) if !infiniband => {
                        links::ethernet_tcp(speed, mtu).as_ref().map(capacity_of)
                    }
                    _ => None,
                };
                let speed_text = match &fabric {
                    Some((port, rate, entry)) => {
                        format!("{} port {} at {rate} ({})", port.hca, port.port, entry.name)
                    }
                    None => speed.map_or("no speed reported".to_string(), |s| {
                        format!("{} Mb/s", s / 1_000_000)
                    }),
                };
                self.push(
                    key,
                    HopKind::NetworkInterface,
                    name,
                    format!("{how}, {speed_text}, MTU {mtu}, {state}"),
                    depth,
                    share,
                    capacity,
                )
                .protocol = protocol_text;
                if infiniband && fabric.is_none() {
                    self.note(format!(
                        "{name}: IP over InfiniBand; declare the fabric's rate with --link (for example ib-edr)"
                    ));
                } else if speed.is_none() {
                    self.note(format!(
                        "{name} reports no link speed (its link is down or unknown): declare the link with --link (for example 10gbe)"
                    ));
                }
                self.bus(&interface.bus, depth, share);
            }
            InterfaceKind::Bond {
                mode,
                active,
                members,
            } => self.bond(
                interface,
                how,
                mode,
                active.as_deref(),
                members,
                protocol,
                depth,
                share,
            ),
            InterfaceKind::Bridge { ports } => {
                self.virtual_interface(
                    interface,
                    format!("bridge of {}", list_or_none(ports)),
                    how,
                    protocol,
                    depth,
                    share,
                );
                if let Some(reason) = &interface.below_reason
                    && interface.below.len() > 1
                {
                    self.note(format!(
                        "{name}: traffic to the server leaves through one of {} ({reason}); each is shown carrying all of it",
                        interface
                            .below
                            .iter()
                            .map(|port| port.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                self.below(interface, "bridge port", protocol, depth, share);
            }
            InterfaceKind::Vlan => {
                self.virtual_interface(interface, "VLAN".into(), how, protocol, depth, share);
                self.below(interface, "lower device", protocol, depth, share);
            }
            InterfaceKind::Stacked => {
                self.virtual_interface(
                    interface,
                    "stacked device (macvlan, ipvlan or similar)".into(),
                    how,
                    protocol,
                    depth,
                    share,
                );
                self.below(interface, "lower device", protocol, depth, share);
            }
            InterfaceKind::Paravirtual(what) => {
                self.virtual_interface(interface, what.clone(), how, protocol, depth, share);
                self.note(format!(
                    "{name}: {what}, the NIC of a virtual machine; its speed is set by the hypervisor and the host's own NIC: declare that link with --link (for example 10gbe)"
                ));
                self.bus(&interface.bus, depth, share);
            }
            InterfaceKind::Virtual(what) => {
                self.virtual_interface(interface, what.clone(), how, protocol, depth, share);
                if interface.below.is_empty() {
                    self.note(format!(
                        "{name}: a {what} interface has no link of its own; what lies beyond it (its peer, a bridge, the host's NIC) is not visible here: declare the link with --link"
                    ));
                }
                self.below(interface, "lower device", protocol, depth, share);
            }
        }
    }

    /// Adds a virtual interface: no capacity, whatever speed it reports.
    fn virtual_interface(
        &mut self,
        interface: &InterfaceFacts,
        what: String,
        how: &str,
        protocol: Option<&str>,
        depth: u32,
        share: Share,
    ) {
        let mut description = format!(
            "virtual ({what}): capacity unknown, {how}, MTU {}",
            interface.mtu
        );
        if let Some(mbps) = interface.speed_mbps {
            description.push_str(&format!(", reports {mbps} Mb/s (not a capacity)"));
        }
        description.push_str(&format!(", {}", interface.operstate));
        self.push(
            format!("net:{}", interface.name),
            HopKind::NetworkInterface,
            interface.name.as_str(),
            description,
            depth,
            share,
            None,
        )
        .protocol = protocol.map(str::to_string);
    }

    /// Adds the interfaces below `interface`, each carrying all of its traffic.
    fn below(
        &mut self,
        interface: &InterfaceFacts,
        how: &str,
        protocol: Option<&str>,
        depth: u32,
        share: Share,
    ) {
        for lower in &interface.below {
            self.interface(lower, how, protocol, depth + 1, share);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn bond(
        &mut self,
        interface: &InterfaceFacts,
        how: &str,
        mode: &str,
        active: Option<&str>,
        members: &[String],
        protocol: Option<&str>,
        depth: u32,
        share: Share,
    ) {
        let name = interface.name.as_str();
        let mtu = interface.mtu;
        let mode_name = mode.split_whitespace().next().unwrap_or("");
        // active-backup carries everything on the active member; broadcast sends everything
        // on every member; the other modes spread flows over the members.
        let (carriers, member_share): (Vec<&InterfaceFacts>, Share) = match mode_name {
            "active-backup" => (
                interface
                    .below
                    .iter()
                    .filter(|member| Some(member.name.as_str()) == active)
                    .collect(),
                share,
            ),
            "broadcast" => (interface.below.iter().collect(), share),
            _ => (
                interface.below.iter().collect(),
                share.split(interface.below.len()),
            ),
        };
        let speeds: Vec<u64> = carriers
            .iter()
            .filter(|member| member.kind == InterfaceKind::Physical)
            .filter_map(|member| member.speed_mbps)
            .collect();
        let summed = !carriers.is_empty() && speeds.len() == carriers.len();
        let total_bits = match mode_name {
            "active-backup" | "broadcast" => speeds.iter().min().copied().unwrap_or(0),
            _ => speeds.iter().sum(),
        } * 1_000_000;
        let capacity = summed
            .then(|| links::ethernet_tcp(total_bits, mtu))
            .flatten()
            .map(|entry| {
                let mut capacity = capacity_of(&entry);
                capacity.derivation = match mode_name {
                    "active-backup" => format!("the active member only; {}", capacity.derivation),
                    "broadcast" => {
                        format!("every member carries everything; {}", capacity.derivation)
                    }
                    _ => format!(
                        "{} member links together; {}",
                        carriers.len(),
                        capacity.derivation
                    ),
                };
                capacity
            });
        self.push(
            format!("net:{name}"),
            HopKind::NetworkInterface,
            name,
            format!(
                "bond ({mode}) of {}, {how}, MTU {mtu}, {}",
                list_or_none(members),
                interface.operstate
            ),
            depth,
            share,
            capacity,
        )
        .protocol = protocol.map(str::to_string);
        if !matches!(mode_name, "active-backup" | "broadcast" | "balance-rr") {
            self.note(format!(
                "{name}: the bond sends each flow over one member link; its capacity is the sum only for many connections (one TCP connection is bounded by one member)"
            ));
        }
        if mode_name == "active-backup" && carriers.is_empty() {
            self.note(format!("{name}: the active member is not known"));
        }
        for member in carriers {
            self.interface(member, "bond member", protocol, depth + 1, member_share);
        }
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "no ports".into()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::super::path::{build, storage_protocol};
    use super::super::test_results::{cpu, direction, empty_direction, test_of, workload};
    use super::super::test_support::facts;
    use super::super::{DeclaredPath, declared, verdict};
    use crate::discovery::facts::{
        InterfaceFacts, InterfaceKind, PathFacts, RouteFacts, RouteOutcome,
    };
    use crate::result::{HopKind, Verdict};
    use crate::result::{TargetInfo, TargetKind};

    fn nbd_over(interface: InterfaceFacts) -> (TargetInfo, PathFacts) {
        let info = TargetInfo {
            path: "nbd://172.18.0.2:10809/export".into(),
            kind: TargetKind::Nbd,
            size_bytes: 64 << 30,
            logical_block_size_bytes: 512,
            physical_block_size_bytes: 4096,
            rotational: None,
            filesystem: None,
            device: None,
            direct_io_alignment_bytes: Some(512),
            created_by_iopath: false,
            transfer_sizes: None,
            file_session: None,
            created_content: None,
            allocated_bytes_looked: None,
            read_only: false,
        };
        let route = RouteFacts {
            host: "172.18.0.2".into(),
            port: 10809,
            outcome: RouteOutcome::Found {
                address: "172.18.0.2".parse().unwrap(),
                gateway: None,
                interface: Box::new(interface),
            },
        };
        (info, PathFacts::Network(Some(route)))
    }

    fn veth() -> InterfaceFacts {
        InterfaceFacts {
            name: "veth0".into(),
            mtu: 1500,
            operstate: "up".into(),
            speed_mbps: Some(10000),
            kind: InterfaceKind::Virtual("veth".into()),
            below: Vec::new(),
            below_reason: None,
            bus: Vec::new(),
        }
    }

    #[test]
    fn a_veth_only_path_with_a_declared_40gbe_link_is_never_inconclusive_because_of_the_veth() {
        let (info, gathered) = nbd_over(veth());
        let mut path = build(&info, &gathered, &facts());
        let veth = &path.hops[1];
        assert_eq!(
            (veth.kind, veth.name.as_str()),
            (HopKind::NetworkInterface, "veth0")
        );
        assert!(
            veth.capacity.is_none(),
            "a veth's 10000 Mb/s is not a capacity"
        );
        assert!(
            veth.description
                .contains("virtual (veth): capacity unknown")
        );
        let declared = DeclaredPath::from_flags(&["40gbe".into()], &[]).unwrap();
        let protocol = storage_protocol(&info, &path);
        declared::apply(&mut path, &declared, protocol.as_deref(), None);

        // 3 GB/s of 1 MiB reads with a core saturated: 64 % of 40GbE, 300 % of what the
        // veth reports; the host's CPU is the limit.
        let saturated = test_of(
            workload(1 << 20, 100, 0, 16),
            direction(3e9, 1 << 20, 5_600_000.0, 0.003),
            empty_direction(),
            cpu(99.0, [100.0, 85.0], 35.0),
        );
        let analysis = verdict::analyse_test(
            &saturated,
            std::slice::from_ref(&info),
            std::slice::from_ref(&path),
            &facts(),
        );

        assert_eq!(
            analysis.verdict,
            Verdict::HostCpuBound,
            "{}",
            analysis.evidence
        );
        assert!(analysis.hops.iter().all(|hop| hop.hop_name != "veth0"));

        // At 4.5 GB/s with the CPU free the declared 40GbE link is the limit.
        let fast = test_of(
            workload(1 << 20, 100, 0, 16),
            direction(4.5e9, 1 << 20, 3_700_000.0, 0.003),
            empty_direction(),
            cpu(40.0, [45.0, 30.0], 10.0),
        );
        let analysis = verdict::analyse_test(&fast, &[info], &[path], &facts());
        assert_eq!(
            analysis.verdict,
            Verdict::LinkBound,
            "{}",
            analysis.evidence
        );
        assert_eq!(analysis.limiting_hop.as_deref(), Some("declared:0"));
    }

    #[test]
    fn ip_over_infiniband_takes_its_ports_rate_and_without_one_asks_for_it() {
        let port = |rate: &str| crate::discovery::facts::InfinibandPort {
            hca: "mlx4_0".into(),
            port: 1,
            rate: Some(rate.into()),
            state: Some("4: ACTIVE".into()),
            link_layer: Some("InfiniBand".into()),
        };
        let ib = |kind| InterfaceFacts {
            name: "ib0".into(),
            mtu: 65520,
            speed_mbps: None,
            kind,
            ..veth()
        };
        // QDR 4x: 40 Gb/s of signalling, 32 Gb/s of data after 8b/10b.
        let (info, gathered) = nbd_over(ib(InterfaceKind::InfiniBand(Some(port(
            "40 Gb/sec (4X QDR)",
        )))));
        let path = build(&info, &gathered, &facts());
        let hop = &path.hops[1];
        let capacity = hop
            .capacity
            .as_ref()
            .expect("the port's rate is a capacity");
        assert!(
            (3.9e9..=4.0e9).contains(&(capacity.payload_bytes_per_second as f64)),
            "{capacity:?}"
        );
        assert!(
            hop.description
                .contains("mlx4_0 port 1 at 40 Gb/sec (4X QDR)"),
            "{}",
            hop.description
        );
        assert!(
            path.notes
                .iter()
                .all(|note| !note.contains("declare the fabric"))
        );

        // No port seen: no capacity, and a note asks for the fabric.
        let (info, gathered) = nbd_over(ib(InterfaceKind::InfiniBand(None)));
        let path = build(&info, &gathered, &facts());
        assert!(path.hops[1].capacity.is_none());
        assert!(
            path.notes
                .iter()
                .any(|note| note.contains("declare the fabric"))
        );
    }

    #[test]
    fn infiniband_rates_name_their_link() {
        use super::super::transport::infiniband_from_rate;
        let name = |rate: &str| infiniband_from_rate(rate).map(|entry| entry.name);
        assert_eq!(
            name("40 Gb/sec (4X QDR)").as_deref(),
            Some("InfiniBand QDR 4x")
        );
        assert_eq!(
            name("100 Gb/sec (4X EDR)").as_deref(),
            Some("InfiniBand EDR 4x")
        );
        // iWARP and older HCAs give the width alone: the rate per lane names the speed.
        assert_eq!(name("10 Gb/sec (4X)").as_deref(), Some("InfiniBand SDR 4x"));
        assert_eq!(
            name("10 Gb/sec (1X QDR)").as_deref(),
            Some("InfiniBand QDR 1x")
        );
        assert_eq!(name("fast"), None);
        assert_eq!(name("10 Gb/sec"), None);
    }

    #[test]
    fn virtual_interfaces_lead_to_the_physical_device_below() {
        let physical = InterfaceFacts {
            name: "eno1".into(),
            kind: InterfaceKind::Physical,
            ..veth()
        };
        for kind in [
            InterfaceKind::Bridge {
                ports: vec!["eno1".into(), "vnet0".into()],
            },
            InterfaceKind::Vlan,
            InterfaceKind::Stacked,
        ] {
            let upper = InterfaceFacts {
                name: "upper0".into(),
                speed_mbps: None,
                kind,
                below: vec![physical.clone()],
                ..veth()
            };
            let (info, gathered) = nbd_over(upper);
            let path = build(&info, &gathered, &facts());
            assert!(path.hops[1].capacity.is_none(), "{:?}", path.hops[1]);
            let lower = &path.hops[2];
            assert_eq!(lower.name, "eno1");
            assert_eq!(lower.depth, 1);
            assert!(lower.capacity.is_some());
            assert_eq!(lower.protocol.as_deref(), Some("nbd"));
        }
        // A tap, a virtio-net: virtual, with a note that asks for the link.
        for kind in [
            InterfaceKind::Virtual("tap".into()),
            InterfaceKind::Paravirtual("virtio-net".into()),
        ] {
            let (info, gathered) = nbd_over(InterfaceFacts { kind, ..veth() });
            let path = build(&info, &gathered, &facts());
            assert!(path.hops[1].capacity.is_none());
            assert!(
                path.notes.iter().any(|n| n.contains("--link")),
                "{:?}",
                path.notes
            );
        }
    }

    #[test]
    fn an_active_backup_bond_carries_everything_on_its_active_member() {
        let member = |name: &str| InterfaceFacts {
            name: name.into(),
            kind: InterfaceKind::Physical,
            mtu: 9000,
            ..veth()
        };
        let bond = |mode: &str| InterfaceFacts {
            name: "bond0".into(),
            mtu: 9000,
            kind: InterfaceKind::Bond {
                mode: mode.into(),
                active: Some("eth1".into()),
                members: vec!["eth0".into(), "eth1".into()],
            },
            below: vec![member("eth0"), member("eth1")],
            ..veth()
        };
        let ten = crate::analysis::links::ethernet_tcp(10_000_000_000, 9000)
            .unwrap()
            .payload_bytes_per_second();

        let (info, gathered) = nbd_over(bond("active-backup 1"));
        let path = build(&info, &gathered, &facts());
        let capacity = |index: usize| path.hops[index].capacity.as_ref().unwrap();
        assert_eq!(capacity(1).payload_bytes_per_second, ten);
        assert!(capacity(1).derivation.starts_with("the active member only"));
        assert_eq!(path.hops.len(), 3, "only the active member is followed");
        assert_eq!(
            (path.hops[2].name.as_str(), path.hops[2].read_share),
            ("eth1", 1.0)
        );

        let (info, gathered) = nbd_over(bond("balance-rr 0"));
        let path = build(&info, &gathered, &facts());
        assert!(
            path.hops[1]
                .capacity
                .as_ref()
                .unwrap()
                .payload_bytes_per_second
                >= 2 * ten
        );
        assert_eq!(path.hops[2].read_share, 0.5);
        assert!(!path.notes.iter().any(|n| n.contains("one member")));
    }
}
