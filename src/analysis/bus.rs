//! The bus of a controller, as hops: its PCI Express link at the speed, width and TLP size in
//! force (and any narrower link upstream), or the PCI-X bus its bridge runs; a function with
//! neither is conventional, integrated or virtual PCI and has no capacity.
//!
//! A link is keyed by the function above it (`pci:0000:3a:00.0`): every function behind one
//! link (the ports of a dual-port NIC, SR-IOV functions) shares it, and so does every device
//! on one PCI-X bus.

use super::block::capacity_of;
use super::links;
use super::path::{Share, Walker};
use crate::discovery::facts::{PciFunctionFacts, PcieLinkFacts, PcixFacts};
use crate::result::HopKind;

/// PCI subsystem vendors of hypervisors: Red Hat (QEMU, virtio), VMware, Microsoft, Xen.
const HYPERVISOR_VENDORS: [&str; 4] = ["0x1af4", "0x15ad", "0x1414", "0x5853"];

impl Walker<'_> {
    /// The bus hops of a device whose PCI functions (outermost first) are `functions`.
    pub fn bus(&mut self, functions: &[PciFunctionFacts], depth: u32, share: Share) {
        let Some((endpoint, above)) = functions.split_last() else {
            return;
        };
        let key = |index: usize| {
            let parent = index
                .checked_sub(1)
                .and_then(|i| functions.get(i))
                .unwrap_or(&functions[index]);
            format!("pci:{}", parent.address)
        };
        let endpoint_index = functions.len() - 1;
        let mut slowest = if let Some(link) = &endpoint.link {
            self.push_pcie(key(endpoint_index), endpoint, link, depth, share)
        } else if let Some(rate) =
            self.pcix_bus(endpoint, above.last(), key(endpoint_index), depth, share)
        {
            Some(rate)
        } else {
            self.conventional_pci(endpoint, functions.len(), key(endpoint_index), depth, share);
            return;
        };
        for (index, upstream) in above.iter().enumerate().rev() {
            let Some(link) = &upstream.link else {
                continue;
            };
            let rate = PcieEntry::of(link, upstream.max_payload_bytes)
                .map(|entry| entry.payload_bytes_per_second());
            if let (Some(rate), Some(limit)) = (rate, slowest)
                && rate < limit
            {
                self.push_pcie(key(index), upstream, link, depth, share);
                self.note(format!(
                    "an upstream PCIe link ({}) is narrower than the device's own",
                    upstream.address
                ));
                slowest = Some(rate);
            }
        }
    }

    /// Adds a PCI Express link hop; returns its payload rate when known.
    fn push_pcie(
        &mut self,
        key: String,
        function: &PciFunctionFacts,
        link: &PcieLinkFacts,
        depth: u32,
        share: Share,
    ) -> Option<u64> {
        let address = &function.address;
        let current_gts = transfer_rate(&link.current_speed);
        let max_gts = link.max_speed.as_deref().and_then(transfer_rate);
        let entry = PcieEntry::of(link, function.max_payload_bytes);
        let mut description = format!(
            "{address}, running at {} GT/s x{}",
            current_gts.as_deref().unwrap_or("unknown"),
            link.current_width
        );
        if let (Some(max_gts), Some(max_width)) = (&max_gts, link.max_width)
            && (Some(max_gts) != current_gts.as_ref() || max_width != link.current_width)
        {
            description.push_str(&format!(", capable of {max_gts} GT/s x{max_width}"));
            self.note(format!(
                "PCIe {address} runs at {} GT/s x{} below its maximum {max_gts} GT/s x{max_width} (power saving, slot or link training)",
                current_gts.as_deref().unwrap_or("unknown"),
                link.current_width
            ));
        }
        match function.max_payload_bytes {
            Some(bytes) => description.push_str(&format!(", Max_Payload_Size {bytes}")),
            None => description.push_str(", Max_Payload_Size not readable (256 assumed)"),
        }
        let capacity = entry.as_ref().map(capacity_of);
        let rate = capacity.as_ref().map(|c| c.payload_bytes_per_second);
        self.push(
            key,
            HopKind::Bus,
            entry.map_or_else(|| format!("PCIe x{}", link.current_width), |e| e.name),
            description,
            depth,
            share,
            capacity,
        );
        rate
    }

    /// Adds the PCI-X bus a device sits on when its bridge says what mode the bus runs in;
    /// returns the bus's rate.
    fn pcix_bus(
        &mut self,
        device: &PciFunctionFacts,
        bridge: Option<&PciFunctionFacts>,
        key: String,
        depth: u32,
        share: Share,
    ) -> Option<u64> {
        let bridge_mode = bridge.and_then(|bridge| match bridge.pcix {
            Some(PcixFacts::Bridge {
                bits64,
                mode_frequency,
            }) => Some((bridge, bits64, mode_frequency)),
            _ => None,
        });
        let capable = match device.pcix {
            Some(PcixFacts::Device {
                capable_133,
                capable_266,
                capable_533,
                ..
            }) => Some(if capable_533 {
                "PCI-X 533"
            } else if capable_266 {
                "PCI-X 266"
            } else if capable_133 {
                "PCI-X 133"
            } else {
                "PCI-X 66"
            }),
            _ => None,
        };
        let Some((bridge, bits64, mode)) = bridge_mode else {
            if let Some(capable) = capable {
                self.push(
                    key,
                    HopKind::Bus,
                    "PCI-X",
                    format!(
                        "{}, a {capable} capable device; the mode its bus runs in is not readable",
                        device.address
                    ),
                    depth,
                    share,
                    None,
                );
                self.note(format!(
                    "{}: a PCI-X device whose bridge does not show the bus mode (reading configuration space beyond 64 bytes needs root); declare the bus with --path (for example pcix133)",
                    device.address
                ));
                return Some(u64::MAX);
            }
            return None;
        };
        let entry = links::pcix(mode, bits64);
        let mut description = format!(
            "{} on the PCI-X bus of bridge {}",
            device.address, bridge.address
        );
        match &entry {
            Some(entry) => description.push_str(&format!(", running {}", entry.name)),
            None => description.push_str(", running in conventional PCI mode"),
        }
        if let Some(capable) = capable {
            description.push_str(&format!(", device {capable} capable"));
        }
        description.push_str("; shared by every device on that bus");
        let capacity = entry.as_ref().map(capacity_of);
        let rate = capacity.as_ref().map(|c| c.payload_bytes_per_second);
        self.push(
            key,
            HopKind::Bus,
            entry.map_or_else(|| "PCI".to_string(), |e| e.name),
            description,
            depth,
            share,
            capacity,
        );
        rate.or(Some(u64::MAX))
    }

    /// A function with no link speed: conventional PCI, a function integrated in the
    /// chipset, or a hypervisor's virtual device. No capacity.
    fn conventional_pci(
        &mut self,
        function: &PciFunctionFacts,
        chain_length: usize,
        key: String,
        depth: u32,
        share: Share,
    ) {
        let ids = format!(
            "{}:{}",
            function
                .vendor
                .as_deref()
                .unwrap_or_default()
                .trim_start_matches("0x"),
            function
                .device
                .as_deref()
                .unwrap_or_default()
                .trim_start_matches("0x")
        );
        let virtual_device = [&function.vendor, &function.subsystem_vendor]
            .iter()
            .any(|vendor| {
                vendor
                    .as_deref()
                    .is_some_and(|vendor| HYPERVISOR_VENDORS.contains(&vendor))
            });
        let what = if virtual_device {
            "a virtual PCI device of the hypervisor: no link of its own"
        } else if chain_length == 1 {
            "on the root bus: integrated in the chipset or conventional PCI; its link to the CPU is not visible"
        } else {
            "no link speed reported (conventional PCI)"
        };
        self.push(
            key,
            HopKind::Bus,
            "PCI",
            format!("{} [{ids}], {what}", function.address),
            depth,
            share,
            None,
        );
    }
}

/// The catalog entry of a PCI Express link at its current speed, width and TLP size.
struct PcieEntry;

impl PcieEntry {
    fn of(link: &PcieLinkFacts, max_payload_bytes: Option<u32>) -> Option<links::LinkEntry> {
        let generation = pcie_generation(&transfer_rate(&link.current_speed)?)?;
        links::pcie_with_payload(
            generation,
            link.current_width,
            max_payload_bytes.unwrap_or(256),
        )
    }
}

/// `8.0 GT/s PCIe` or `8 GT/s` → `8.0`-style number text; `None` for `Unknown`.
pub fn transfer_rate(text: &str) -> Option<String> {
    let number = text.split_whitespace().next()?;
    number.parse::<f64>().ok()?;
    Some(number.to_string())
}

/// PCIe generation of a transfer rate in GT/s.
pub fn pcie_generation(gts: &str) -> Option<u8> {
    let value: f64 = gts.parse().ok()?;
    [
        (2.5, 1),
        (5.0, 2),
        (8.0, 3),
        (16.0, 4),
        (32.0, 5),
        (64.0, 6),
    ]
    .iter()
    .find(|(rate, _)| (value - rate).abs() < 0.01)
    .map(|(_, generation)| *generation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_map_to_generations() {
        assert_eq!(transfer_rate("8.0 GT/s PCIe"), Some("8.0".into()));
        assert_eq!(transfer_rate("2.5 GT/s"), Some("2.5".into()));
        assert_eq!(transfer_rate("Unknown"), None);
        assert_eq!(pcie_generation("8.0"), Some(3));
        assert_eq!(pcie_generation("16"), Some(4));
        assert_eq!(pcie_generation("2.5"), Some(1));
        assert_eq!(pcie_generation("3.3"), None);
    }

    fn function(
        address: &str,
        link: Option<(&str, u32)>,
        pcix: Option<PcixFacts>,
    ) -> PciFunctionFacts {
        PciFunctionFacts {
            address: address.into(),
            vendor: Some("0x8086".into()),
            device: Some("0x1234".into()),
            subsystem_vendor: Some("0x8086".into()),
            link: link.map(|(speed, width)| PcieLinkFacts {
                current_speed: speed.into(),
                current_width: width,
                max_speed: Some(speed.into()),
                max_width: Some(width),
            }),
            pcix,
            max_payload_bytes: None,
        }
    }

    fn hops(functions: &[PciFunctionFacts]) -> (Vec<crate::result::Hop>, Vec<String>) {
        let facts = crate::analysis::test_support::facts();
        let mut walker = Walker {
            hops: Vec::new(),
            notes: Vec::new(),
            facts: &facts,
        };
        walker.bus(functions, 0, Share::WHOLE);
        (walker.hops, walker.notes)
    }

    #[test]
    fn a_narrower_upstream_link_is_shown_too() {
        // A x16 device behind a switch whose uplink runs x4.
        let (hops, notes) = hops(&[
            function("0000:00:01.0", Some(("8.0 GT/s PCIe", 4)), None),
            function("0000:01:00.0", Some(("8.0 GT/s PCIe", 4)), None),
            function("0000:02:08.0", Some(("8.0 GT/s PCIe", 16)), None),
            function("0000:03:00.0", Some(("8.0 GT/s PCIe", 16)), None),
        ]);
        let names: Vec<(&str, &str)> = hops
            .iter()
            .map(|h| (h.key.as_str(), h.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("pci:0000:02:08.0", "PCIe 3.0 x16"),
                ("pci:0000:00:01.0", "PCIe 3.0 x4")
            ]
        );
        assert!(
            hops[0]
                .description
                .contains("Max_Payload_Size not readable (256 assumed)")
        );
        assert!(notes.iter().any(|n| n.contains("narrower")), "{notes:?}");
    }

    #[test]
    fn a_pcix_device_whose_bus_mode_is_not_readable_asks_for_it() {
        let device = PcixFacts::Device {
            bits64: true,
            capable_133: true,
            capable_266: true,
            capable_533: false,
        };
        // Root port, PCIe-to-PCI-X bridge (its configuration space unread), the device.
        let (hops, notes) = hops(&[
            function("0000:00:02.0", Some(("2.5 GT/s PCIe", 8)), None),
            function("0000:03:00.0", Some(("2.5 GT/s PCIe", 8)), None),
            function("0000:04:01.0", None, Some(device)),
        ]);
        assert_eq!(hops[0].name, "PCI-X");
        assert!(hops[0].capacity.is_none());
        assert!(
            hops[0].description.contains("PCI-X 266 capable"),
            "{}",
            hops[0].description
        );
        assert!(notes.iter().any(|n| n.contains("pcix133")), "{notes:?}");
        // What is visible above it is still shown.
        assert_eq!(hops[1].name, "PCIe 1.0 x8");
        assert_eq!(hops[1].key, "pci:0000:00:02.0");
        // No PCI-X at all: conventional PCI, no capacity.
        let (hops, _) = hops_of_plain();
        assert!(hops[0].capacity.is_none() && hops[0].description.contains("conventional PCI"));
    }

    fn hops_of_plain() -> (Vec<crate::result::Hop>, Vec<String>) {
        hops(&[
            function("0000:00:1e.0", None, None),
            function("0000:05:02.0", None, None),
        ])
    }
}
