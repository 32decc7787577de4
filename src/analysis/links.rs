//! The catalog of links and buses: what each carries per direction, derived from its line rate,
//! its line encoding and its framing, with the standard each figure comes from
//! (docs/links.md says the same per family, with sources).
//!
//! Every entry is computed, not typed in: `lanes × lane rate × bits per symbol` is the line
//! rate; the encoding (8b/10b, 64b/66b, 128b/130b, FEC) leaves the data rate; the framing of
//! the unit that carries storage data (a TLP, an FC frame, a TCP segment in an Ethernet frame)
//! leaves the payload rate, which is the capacity iopath compares results against.
//!
//! ```
//! use iopath::analysis::links::find;
//! let link = find("pcie3x8").unwrap();
//! // 8 GT/s × 8 lanes × 128/130 / 8 bits
//! assert_eq!(link.data_bytes_per_second().round(), 7_876_923_077.0);
//! let gbe = find("1gbe").unwrap();
//! // 125 MB/s × 1448 TCP payload bytes per 1538 bytes on the wire
//! assert_eq!(gbe.payload_bytes_per_second(), 117_685_305);
//! ```

use crate::result::{Duplex, HopKind};
use crate::units::format_rate;
use std::sync::OnceLock;

/// The family of a link or bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkFamily {
    /// Fibre Channel.
    FibreChannel,
    /// Ethernet carrying TCP/IPv4.
    Ethernet,
    /// RoCE v2 (RDMA over UDP/IP over Ethernet), the NVMe/RDMA transport on Ethernet.
    RoceV2,
    /// InfiniBand, 4x ports.
    InfiniBand,
    /// Serial Attached SCSI, per lane and wide ports.
    Sas,
    /// Serial ATA.
    Sata,
    /// USB mass storage.
    Usb,
    /// Conventional PCI.
    Pci,
    /// PCI-X.
    PciX,
    /// PCI Express.
    Pcie,
}

impl LinkFamily {
    /// Every family, in catalog order.
    pub const ALL: [LinkFamily; 10] = [
        LinkFamily::FibreChannel,
        LinkFamily::Ethernet,
        LinkFamily::RoceV2,
        LinkFamily::InfiniBand,
        LinkFamily::Sas,
        LinkFamily::Sata,
        LinkFamily::Usb,
        LinkFamily::Pci,
        LinkFamily::PciX,
        LinkFamily::Pcie,
    ];

    /// Heading for listings.
    pub fn title(self) -> &'static str {
        match self {
            LinkFamily::FibreChannel => "Fibre Channel (FC link)",
            LinkFamily::Ethernet => {
                "Ethernet with TCP/IPv4 (network link; iSCSI, NBD, SMB, NFS, NVMe/TCP)"
            }
            LinkFamily::RoceV2 => "RoCE v2 over Ethernet (network link; NVMe/RDMA, iSER)",
            LinkFamily::InfiniBand => "InfiniBand 4x (network link; NVMe/RDMA, SRP, iSER)",
            LinkFamily::Sas => "SAS (device link), per lane and wide ports",
            LinkFamily::Sata => "SATA (device link)",
            LinkFamily::Usb => "USB (device link)",
            LinkFamily::Pci => "PCI (bus)",
            LinkFamily::PciX => "PCI-X (bus)",
            LinkFamily::Pcie => "PCI Express (bus)",
        }
    }

    /// The kind of hop a link of this family is.
    pub fn hop_kind(self) -> HopKind {
        match self {
            LinkFamily::FibreChannel => HopKind::FibreChannelLink,
            LinkFamily::Ethernet | LinkFamily::RoceV2 | LinkFamily::InfiniBand => {
                HopKind::NetworkLink
            }
            LinkFamily::Sas | LinkFamily::Sata | LinkFamily::Usb => HopKind::DeviceLink,
            LinkFamily::Pci | LinkFamily::PciX | LinkFamily::Pcie => HopKind::Bus,
        }
    }

    /// The storage protocol usually carried, whose per-I/O headers count on this link.
    pub fn default_protocol(self) -> Option<&'static str> {
        match self {
            LinkFamily::FibreChannel => Some("fcp"),
            LinkFamily::Sas => Some("ssp"),
            LinkFamily::Sata => Some("ata"),
            _ => None,
        }
    }
}

/// How symbols on the lane are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateUnit {
    /// Symbols per second (serial links: GBd).
    Baud,
    /// Transfers per second (PCIe GT/s, PCI-X MT/s).
    Transfers,
    /// Clock cycles per second of a parallel bus (PCI MHz).
    Hertz,
    /// Bits per second at the MAC (where the PHY's own coding is outside the data rate).
    Bits,
}

/// A line encoding: `data_bits` of data for every `coded_bits` on the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoding {
    /// Its name (`8b/10b`, `128b/130b`, `256b/257b + RS(544,514)`).
    pub name: &'static str,
    /// Data bits…
    pub data_bits: u32,
    /// …per this many line bits.
    pub coded_bits: u32,
}

const NONE: Encoding = Encoding {
    name: "none",
    data_bits: 1,
    coded_bits: 1,
};
const B8B10: Encoding = Encoding {
    name: "8b/10b",
    data_bits: 8,
    coded_bits: 10,
};
const B64B66: Encoding = Encoding {
    name: "64b/66b",
    data_bits: 64,
    coded_bits: 66,
};
const B128B130: Encoding = Encoding {
    name: "128b/130b",
    data_bits: 128,
    coded_bits: 130,
};
const B128B132: Encoding = Encoding {
    name: "128b/132b",
    data_bits: 128,
    coded_bits: 132,
};
const B128B150: Encoding = Encoding {
    name: "128b/150b (128b/130b + FEC)",
    data_bits: 128,
    coded_bits: 150,
};
/// 256b/257b transcoding inside RS(528,514): 20 blocks of 256 data bits per 5280-bit codeword.
const RS528: Encoding = Encoding {
    name: "256b/257b + RS(528,514) FEC",
    data_bits: 5120,
    coded_bits: 5280,
};
/// 256b/257b transcoding inside RS(544,514): 20 blocks of 256 data bits per 5440-bit codeword.
const RS544: Encoding = Encoding {
    name: "256b/257b + RS(544,514) FEC",
    data_bits: 5120,
    coded_bits: 5440,
};
/// InfiniBand HDR/NDR: 50 Gb/s of data per 53.125 Gb/s lane.
const IB_PAM4: Encoding = Encoding {
    name: "RS-FEC coding (50 of 53.125 Gb/s)",
    data_bits: 16,
    coded_bits: 17,
};
/// PCIe 6.0 flit mode: 236 of every 256 flit bytes carry TLPs (6 DLP, 8 CRC, 6 FEC bytes).
const FLIT: Encoding = Encoding {
    name: "FLIT (236 TLP bytes per 256-byte flit)",
    data_bits: 236,
    coded_bits: 256,
};

/// The unit that carries storage data over the link: its payload and what surrounds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Framing {
    /// Payload bytes per unit.
    pub payload_bytes: u32,
    /// Bytes of headers, CRCs, delimiters and gaps per unit.
    pub overhead_bytes: u32,
    /// What the overhead is.
    pub description: String,
}

/// One link or bus of the catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkEntry {
    /// Name as storage people write it (`4GFC`, `10GbE`, `PCIe 3.0 x8`, `SAS 12G x4`).
    pub name: String,
    /// A variant of the same link (`TCP/IP MTU 9000`), if the family has several.
    pub variant: Option<String>,
    /// Names accepted by `--link` and `--path` (lower case: `4gfc`, `pcie3x8`, `sas12x4`).
    pub aliases: Vec<String>,
    /// Family.
    pub family: LinkFamily,
    /// Lanes (or 1 for a parallel bus).
    pub lanes: u32,
    /// Symbols, transfers or cycles per second on each lane.
    pub lane_rate: f64,
    /// What `lane_rate` counts.
    pub rate_unit: RateUnit,
    /// Bits per symbol or transfer (1 NRZ, 2 PAM4, 32/64 for a parallel bus).
    pub bits_per_symbol: u32,
    /// Line encoding.
    pub encoding: Encoding,
    /// Framing of the data unit.
    pub framing: Framing,
    /// Full duplex or shared.
    pub duplex: Duplex,
    /// I/Os per second, where the link itself bounds them.
    pub iops: Option<u64>,
    /// The standard the figures come from (details in docs/links.md).
    pub source: &'static str,
}

impl LinkEntry {
    /// Bits per second on the line, all lanes.
    pub fn line_bits_per_second(&self) -> f64 {
        self.lane_rate * f64::from(self.bits_per_symbol) * f64::from(self.lanes)
    }

    /// Bytes per second after line encoding.
    pub fn data_bytes_per_second(&self) -> f64 {
        self.line_bits_per_second() * f64::from(self.encoding.data_bits)
            / f64::from(self.encoding.coded_bits)
            / 8.0
    }

    /// Payload bytes per second in each direction (or shared, for a half-duplex link), after
    /// framing; rounded down.
    pub fn payload_bytes_per_second(&self) -> u64 {
        let framing = &self.framing;
        let efficiency = f64::from(framing.payload_bytes)
            / f64::from(framing.payload_bytes + framing.overhead_bytes);
        (self.data_bytes_per_second() * efficiency).floor() as u64
    }

    /// The name with its variant (`1GbE TCP/IP MTU 9000`).
    pub fn full_name(&self) -> String {
        match &self.variant {
            Some(variant) => format!("{} {variant}", self.name),
            None => self.name.clone(),
        }
    }

    /// How the payload figure is reached, in one line.
    pub fn derivation(&self) -> String {
        let rate = match self.rate_unit {
            RateUnit::Baud => format!("{} GBd", trim_number(self.lane_rate / 1e9)),
            RateUnit::Transfers if self.lane_rate >= 1e9 => {
                format!("{} GT/s", trim_number(self.lane_rate / 1e9))
            }
            RateUnit::Transfers => format!("{} MT/s", trim_number(self.lane_rate / 1e6)),
            RateUnit::Hertz => format!("{} MHz", trim_number(self.lane_rate / 1e6)),
            RateUnit::Bits if self.lane_rate >= 1e9 => {
                format!("{} Gb/s", trim_number(self.lane_rate / 1e9))
            }
            RateUnit::Bits => format!("{} Mb/s", trim_number(self.lane_rate / 1e6)),
        };
        let mut text = rate;
        if self.lanes > 1 {
            text.push_str(&format!(" × {} lanes", self.lanes));
        }
        match (self.rate_unit, self.bits_per_symbol) {
            (RateUnit::Hertz | RateUnit::Transfers, bits) if bits > 2 => {
                text.push_str(&format!(" × {bits} bits"));
            }
            (_, 2) => text.push_str(" × 2 bits (PAM4)"),
            _ => {}
        }
        if self.encoding != NONE {
            text.push_str(&format!(
                " × {}/{} ({})",
                self.encoding.data_bits, self.encoding.coded_bits, self.encoding.name
            ));
        }
        text.push_str(&format!(
            " / 8 = {} data",
            format_rate(self.data_bytes_per_second())
        ));
        let framing = &self.framing;
        if framing.overhead_bytes > 0 {
            text.push_str(&format!(
                "; × {}/{} ({}) = {} payload",
                framing.payload_bytes,
                framing.payload_bytes + framing.overhead_bytes,
                framing.description,
                format_rate(self.payload_bytes_per_second() as f64)
            ));
        } else if !framing.description.is_empty() {
            text.push_str(&format!(" ({})", framing.description));
        }
        text
    }
}

/// `8`, `2.5`, `33.33`: a number without trailing zeros.
fn trim_number(value: f64) -> String {
    let text = format!("{value:.5}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

/// Lower case, without the separators people put in link names (`-`, `_`, space).
pub fn normalise(alias: &str) -> String {
    alias
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The whole catalog, built once.
pub fn catalog() -> &'static [LinkEntry] {
    static CATALOG: OnceLock<Vec<LinkEntry>> = OnceLock::new();
    CATALOG.get_or_init(build_catalog)
}

/// The entry with `alias` (case and `-`/`_`/space ignored), or an Ethernet link with an MTU
/// of your choosing (`10gbe-mtu4200`).
pub fn find(alias: &str) -> Option<LinkEntry> {
    let wanted = normalise(alias);
    if let Some(entry) = catalog()
        .iter()
        .find(|entry| entry.aliases.iter().any(|a| normalise(a) == wanted))
    {
        return Some(entry.clone());
    }
    let (speed, mtu) = wanted.split_once("mtu")?;
    let mtu: u32 = mtu.parse().ok()?;
    let base = catalog().iter().find(|entry| {
        entry.family == LinkFamily::Ethernet && entry.aliases.iter().any(|a| normalise(a) == speed)
    })?;
    ethernet_tcp((base.data_bytes_per_second() * 8.0).round() as u64, mtu)
}

/// Aliases close to `alias`, for a "did you mean" (at most five).
pub fn suggestions(alias: &str) -> Vec<String> {
    let wanted = normalise(alias);
    let mut scored: Vec<(usize, &String)> = catalog()
        .iter()
        .flat_map(|entry| entry.aliases.iter())
        .map(|candidate| (edit_distance(&wanted, &normalise(candidate)), candidate))
        .filter(|(distance, candidate)| {
            *distance <= 2 || (wanted.len() >= 3 && normalise(candidate).starts_with(&wanted))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(5)
        .map(|(_, name)| name.clone())
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Bytes on an Ethernet wire per frame besides the IP packet: preamble and start delimiter
/// (8), MAC header (14), FCS (4), inter-frame gap (12).
pub const ETHERNET_WIRE_OVERHEAD_BYTES: u32 = 38;
/// IPv4 header (20), TCP header (20) and the TCP timestamp option Linux sends by default (12).
pub const TCP_IPV4_HEADER_BYTES: u32 = 52;

/// TCP/IPv4 over Ethernet at `speed_bits_per_second` (the MAC data rate) with `mtu`: what a
/// NIC of that speed carries as TCP payload. `None` for an MTU too small for the headers.
pub fn ethernet_tcp(speed_bits_per_second: u64, mtu: u32) -> Option<LinkEntry> {
    if mtu <= TCP_IPV4_HEADER_BYTES || speed_bits_per_second == 0 {
        return None;
    }
    let speed_gbps = speed_bits_per_second as f64 / 1e9;
    let name = ethernet_name(speed_gbps);
    Some(LinkEntry {
        aliases: vec![format!(
            "{}gbe-mtu{mtu}",
            trim_number(speed_gbps).to_lowercase()
        )],
        name,
        variant: Some(format!("TCP/IP MTU {mtu}")),
        family: LinkFamily::Ethernet,
        lanes: 1,
        lane_rate: speed_bits_per_second as f64,
        rate_unit: RateUnit::Bits,
        bits_per_symbol: 1,
        encoding: NONE,
        framing: tcp_framing(mtu),
        duplex: Duplex::Full,
        iops: None,
        source: "IEEE 802.3; RFC 791 (IPv4), RFC 9293 (TCP), RFC 7323 (timestamps)",
    })
}

fn ethernet_name(speed_gbps: f64) -> String {
    format!("{}GbE", trim_number(speed_gbps))
}

fn tcp_framing(mtu: u32) -> Framing {
    Framing {
        payload_bytes: mtu - TCP_IPV4_HEADER_BYTES,
        overhead_bytes: TCP_IPV4_HEADER_BYTES + ETHERNET_WIRE_OVERHEAD_BYTES,
        description: format!(
            "TCP payload per MTU-{mtu} frame: 52 bytes IPv4+TCP+timestamps, 38 bytes preamble, MAC header, FCS, gap"
        ),
    }
}

/// PCI Express generation `generation` (1–6) with `lanes` lanes, any width, with TLPs of 256
/// payload bytes (the common Max_Payload_Size).
pub fn pcie(generation: u8, lanes: u32) -> Option<LinkEntry> {
    pcie_with_payload(generation, lanes, 256)
}

/// [`pcie`] with TLPs of `payload_bytes` (the Max_Payload_Size in force, 128 to 4096): the
/// variant names it when it is not 256.
///
/// ```
/// use iopath::analysis::links::{pcie, pcie_with_payload};
/// let common = pcie(3, 8).unwrap().payload_bytes_per_second();
/// let larger = pcie_with_payload(3, 8, 512).unwrap();
/// assert!(larger.payload_bytes_per_second() > common);
/// assert_eq!(larger.variant.as_deref(), Some("512-byte TLPs"));
/// ```
pub fn pcie_with_payload(generation: u8, lanes: u32, payload_bytes: u32) -> Option<LinkEntry> {
    if !(128..=4096).contains(&payload_bytes) || !payload_bytes.is_power_of_two() {
        return None;
    }
    let (rate, encoding, version, overhead, tlp) = match generation {
        1 => (2.5e9, B8B10, "1.0", 24, PCIE_TLP_GEN1),
        2 => (5e9, B8B10, "2.0", 24, PCIE_TLP_GEN1),
        3 => (8e9, B128B130, "3.0", 24, PCIE_TLP_GEN3),
        4 => (16e9, B128B130, "4.0", 24, PCIE_TLP_GEN3),
        5 => (32e9, B128B130, "5.0", 24, PCIE_TLP_GEN3),
        6 => (64e9, FLIT, "6.0", 16, PCIE_TLP_FLIT),
        _ => return None,
    };
    if lanes == 0 {
        return None;
    }
    let mut aliases = vec![
        format!("pcie{generation}x{lanes}"),
        format!("pcie{version}x{lanes}"),
        format!("gen{generation}x{lanes}"),
    ];
    if lanes == 1 {
        aliases.push(format!("pcie{generation}"));
    }
    let description = if payload_bytes == 256 {
        tlp.to_string()
    } else {
        tlp.replace("256-byte", &format!("{payload_bytes}-byte"))
    };
    Some(LinkEntry {
        name: format!("PCIe {version} x{lanes}"),
        variant: (payload_bytes != 256).then(|| format!("{payload_bytes}-byte TLPs")),
        aliases,
        family: LinkFamily::Pcie,
        lanes,
        lane_rate: rate,
        rate_unit: RateUnit::Transfers,
        bits_per_symbol: 1,
        encoding,
        framing: Framing {
            payload_bytes,
            overhead_bytes: overhead,
            description,
        },
        duplex: Duplex::Full,
        iops: None,
        source: PCIE_SOURCES[usize::from(generation) - 1],
    })
}

const PCIE_TLP_GEN1: &str =
    "TLP with 256-byte payload: STP 1, sequence 2, 4DW header 16, LCRC 4, END 1; DLLPs not counted";
const PCIE_TLP_GEN3: &str = "TLP with 256-byte payload: STP token 4 (with sequence), 4DW header 16, LCRC 4; DLLPs not counted";
const PCIE_TLP_FLIT: &str =
    "TLP with 256-byte payload and 16-byte header; sequence and CRC live in the flit";
const PCIE_SOURCES: [&str; 6] = [
    "PCI Express Base Specification 1.0a",
    "PCI Express Base Specification 2.0",
    "PCI Express Base Specification 3.0",
    "PCI Express Base Specification 4.0",
    "PCI Express Base Specification 5.0",
    "PCI Express Base Specification 6.0",
];

/// A PCI-X bus running in `mode_frequency`, the Secondary Bus Mode and Frequency field of its
/// bridge (the kernel's `pcix_bus_speed` table: 1–3 mode 1 at 66, 100, 133 MHz, 5–7 the same
/// with ECC, 9–B PCI-X 266 and D–F PCI-X 533 at those clocks), `bits64` wide. `None` for a
/// conventional or unknown mode.
///
/// ```
/// use iopath::analysis::links::{find, pcix};
/// assert_eq!(pcix(0x3, true).unwrap().name, "PCI-X 133");
/// assert_eq!(pcix(0xb, true).unwrap().payload_bytes_per_second(),
///            find("pcix266").unwrap().payload_bytes_per_second());
/// assert_eq!(pcix(0x9, true).unwrap().name, "PCI-X 266 at 66 MHz");
/// assert!(pcix(0x0, true).is_none());
/// ```
pub fn pcix(mode_frequency: u8, bits64: bool) -> Option<LinkEntry> {
    let clock = match mode_frequency & 0x3 {
        1 => 200e6 / 3.0,
        2 => 100e6,
        3 => 400e6 / 3.0,
        _ => return None,
    };
    let clock_name = ["", "66", "100", "133"][usize::from(mode_frequency & 0x3)];
    let (multiplier, class, source) = match mode_frequency >> 2 {
        0 | 1 => (
            1.0,
            None,
            "PCI-X Addendum to the PCI Local Bus Specification 1.0b",
        ),
        2 => (
            2.0,
            Some("266"),
            "PCI-X Protocol Addendum to the PCI Local Bus Specification 2.0a",
        ),
        _ => (
            4.0,
            Some("533"),
            "PCI-X Protocol Addendum to the PCI Local Bus Specification 2.0a",
        ),
    };
    let mut name = match class {
        None => format!("PCI-X {clock_name}"),
        Some(class) if clock_name == "133" => format!("PCI-X {class}"),
        Some(class) => format!("PCI-X {class} at {clock_name} MHz"),
    };
    if mode_frequency >> 2 == 1 {
        name.push_str(" ECC");
    }
    if !bits64 {
        name.push_str(" 32-bit");
    }
    Some(LinkEntry {
        name,
        variant: None,
        aliases: Vec::new(),
        family: LinkFamily::PciX,
        lanes: 1,
        lane_rate: clock * multiplier,
        rate_unit: if multiplier > 1.0 {
            RateUnit::Transfers
        } else {
            RateUnit::Hertz
        },
        bits_per_symbol: if bits64 { 64 } else { 32 },
        encoding: NONE,
        framing: Framing {
            payload_bytes: 1,
            overhead_bytes: 0,
            description: "bus peak; shared by every device on the bus".into(),
        },
        duplex: Duplex::Half,
        iops: None,
        source,
    })
}

/// Fibre Channel at `gfc` (1, 2, 4, 8, 16, 32, 64, 128).
pub fn fibre_channel(gfc: u32) -> Option<LinkEntry> {
    let (lanes, baud, bits, encoding, source) = match gfc {
        1 => (1, 1.0625e9, 1, B8B10, "INCITS T11 FC-PI-2"),
        2 => (1, 2.125e9, 1, B8B10, "INCITS T11 FC-PI-2"),
        4 => (1, 4.25e9, 1, B8B10, "INCITS T11 FC-PI-2"),
        8 => (1, 8.5e9, 1, B8B10, "INCITS T11 FC-PI-4"),
        16 => (1, 14.025e9, 1, B64B66, "INCITS T11 FC-PI-5"),
        32 => (1, 28.05e9, 1, RS528, "INCITS T11 FC-PI-6"),
        64 => (1, 28.9e9, 2, RS544, "INCITS T11 FC-PI-7"),
        128 => (4, 28.05e9, 1, RS528, "INCITS T11 FC-PI-6P"),
        _ => return None,
    };
    Some(LinkEntry {
        name: format!("{gfc}GFC"),
        variant: None,
        aliases: vec![
            format!("{gfc}gfc"),
            format!("fc{gfc}"),
            format!("fc-{gfc}g"),
        ],
        family: LinkFamily::FibreChannel,
        lanes,
        lane_rate: baud,
        rate_unit: RateUnit::Baud,
        bits_per_symbol: bits,
        encoding,
        framing: Framing {
            payload_bytes: 2048,
            overhead_bytes: 60,
            description: "2048-byte data frames: SOF 4, header 24, CRC 4, EOF 4, 6 idle words 24 (FC-FS); FCIA's rounder nominal figure is lower"
                .into(),
        },
        duplex: Duplex::Full,
        iops: None,
        source,
    })
}

/// SAS at `gbps` (3, 6, 12, 24) over `lanes` lanes (1 for a narrow port, 4 for a wide one).
pub fn sas(gbps: u32, lanes: u32) -> Option<LinkEntry> {
    let (baud, encoding, source) = match gbps {
        3 => (3e9, B8B10, "INCITS T10 SAS-1.1"),
        6 => (6e9, B8B10, "INCITS T10 SAS-2"),
        12 => (12e9, B8B10, "INCITS T10 SAS-3"),
        24 => (22.5e9, B128B150, "INCITS T10 SAS-4 (SPL-4)"),
        _ => return None,
    };
    if lanes == 0 {
        return None;
    }
    let mut aliases = vec![format!("sas{gbps}x{lanes}"), format!("sas{gbps}gx{lanes}")];
    if lanes == 1 {
        aliases.push(format!("sas{gbps}"));
        aliases.push(format!("sas{gbps}g"));
    }
    Some(LinkEntry {
        name: format!("SAS {gbps}G x{lanes}"),
        variant: None,
        aliases,
        family: LinkFamily::Sas,
        lanes,
        lane_rate: baud,
        rate_unit: RateUnit::Baud,
        bits_per_symbol: 1,
        encoding,
        framing: Framing {
            payload_bytes: 1024,
            overhead_bytes: 36,
            description: "SSP DATA frames of 1024 bytes: SOF 4, header 24, CRC 4, EOF 4".into(),
        },
        duplex: Duplex::Full,
        iops: None,
        source,
    })
}

/// SATA at 1.5, 3 or 6 Gb/s (`tenths` = 15, 30, 60).
pub fn sata(tenths_gbps: u32) -> Option<LinkEntry> {
    let (baud, label) = match tenths_gbps {
        15 => (1.5e9, "1.5"),
        30 => (3e9, "3"),
        60 => (6e9, "6"),
        _ => return None,
    };
    Some(LinkEntry {
        name: format!("SATA {label} Gb/s"),
        variant: None,
        aliases: vec![
            format!("sata{label}g"),
            format!("sata{label}gbps"),
        ]
        .into_iter()
        .chain((tenths_gbps == 60).then(|| "sata6".to_string()))
        .collect(),
        family: LinkFamily::Sata,
        lanes: 1,
        lane_rate: baud,
        rate_unit: RateUnit::Baud,
        bits_per_symbol: 1,
        encoding: B8B10,
        framing: Framing {
            payload_bytes: 8192,
            overhead_bytes: 80,
            description: "8192-byte Data FIS: SOF, FIS header, CRC, EOF 16; a pair of ALIGNs per 256 dwords 64".into(),
        },
        duplex: Duplex::Half,
        iops: None,
        source: "Serial ATA Revision 3.x (SATA-IO)",
    })
}

fn build_catalog() -> Vec<LinkEntry> {
    let mut entries = Vec::new();
    for gfc in [1, 2, 4, 8, 16, 32, 64, 128] {
        entries.extend(fibre_channel(gfc));
    }
    entries.extend(ethernet_entries());
    entries.extend(roce_entries());
    entries.extend(infiniband_entries());
    for gbps in [3, 6, 12, 24] {
        for lanes in [1, 2, 4, 8] {
            entries.extend(sas(gbps, lanes));
        }
    }
    for tenths in [15, 30, 60] {
        entries.extend(sata(tenths));
    }
    entries.extend(usb_entries());
    entries.extend(pci_entries());
    for generation in 1..=6 {
        for lanes in [1, 2, 4, 8, 16] {
            entries.extend(pcie(generation, lanes));
        }
    }
    entries
}

/// Ethernet speeds: Gb/s, lanes, baud per lane, bits per symbol, encoding, PHY and standard.
const ETHERNET: [(f64, u32, f64, u32, Encoding, &str); 10] = [
    (1.0, 1, 1.25e9, 1, B8B10, "1000BASE-X, IEEE 802.3 clause 36"),
    (2.5, 1, 2.5e9, 1, NONE, "2.5GBASE-T MAC rate, IEEE 802.3bz"),
    (5.0, 1, 5e9, 1, NONE, "5GBASE-T MAC rate, IEEE 802.3bz"),
    (
        10.0,
        1,
        10.3125e9,
        1,
        B64B66,
        "10GBASE-R, IEEE 802.3 clause 49",
    ),
    (25.0, 1, 25.78125e9, 1, B64B66, "25GBASE-R, IEEE 802.3by"),
    (40.0, 4, 10.3125e9, 1, B64B66, "40GBASE-R4, IEEE 802.3ba"),
    (50.0, 1, 26.5625e9, 2, RS544, "50GBASE-R, IEEE 802.3cd"),
    (
        100.0,
        4,
        25.78125e9,
        1,
        B64B66,
        "100GBASE-R4, IEEE 802.3ba/bm",
    ),
    (200.0, 4, 26.5625e9, 2, RS544, "200GBASE-R4, IEEE 802.3bs"),
    (400.0, 8, 26.5625e9, 2, RS544, "400GBASE-R8, IEEE 802.3bs"),
];

fn ethernet_entries() -> Vec<LinkEntry> {
    let mut entries = Vec::new();
    for (gbps, lanes, baud, bits, encoding, phy) in ETHERNET {
        let speed = trim_number(gbps);
        for mtu in [1500u32, 9000] {
            let mut aliases = vec![
                format!("{speed}gbe-{mtu}"),
                format!("{speed}gbe-mtu{mtu}"),
                format!("{speed}ge-{mtu}"),
            ];
            if mtu == 1500 {
                aliases.extend([format!("{speed}gbe"), format!("{speed}ge")]);
                if gbps == 1.0 {
                    aliases.push("gbe".into());
                }
            } else {
                aliases.push(format!("{speed}gbe-jumbo"));
            }
            entries.push(LinkEntry {
                name: ethernet_name(gbps),
                variant: Some(format!("TCP/IP MTU {mtu}")),
                aliases,
                family: LinkFamily::Ethernet,
                lanes,
                lane_rate: baud,
                rate_unit: if encoding == NONE {
                    RateUnit::Bits
                } else {
                    RateUnit::Baud
                },
                bits_per_symbol: bits,
                encoding: encoding.clone(),
                framing: tcp_framing(mtu),
                duplex: Duplex::Full,
                iops: None,
                source: leak_source(format!(
                    "{phy}; RFC 791 (IPv4), RFC 9293 (TCP), RFC 7323 (timestamps)"
                )),
            });
        }
    }
    entries
}

/// Sources built from parts live as long as the catalog (built once).
fn leak_source(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

fn roce_entries() -> Vec<LinkEntry> {
    ETHERNET
        .iter()
        .filter(|(gbps, ..)| *gbps >= 10.0)
        .map(|(gbps, lanes, baud, bits, encoding, phy)| {
            let speed = trim_number(*gbps);
            LinkEntry {
                name: format!("RoCE v2 {speed}GbE"),
                variant: Some("IB MTU 4096".into()),
                aliases: vec![
                    format!("roce-{speed}gbe"),
                    format!("rocev2-{speed}gbe"),
                    format!("nvme-rdma-{speed}gbe"),
                ],
                family: LinkFamily::RoceV2,
                lanes: *lanes,
                lane_rate: *baud,
                rate_unit: RateUnit::Baud,
                bits_per_symbol: *bits,
                encoding: encoding.clone(),
                framing: Framing {
                    payload_bytes: 4096,
                    overhead_bytes: 82,
                    description: "4096-byte RDMA packets: IPv4 20, UDP 8, BTH 12, ICRC 4 and 38 bytes of Ethernet framing".into(),
                },
                duplex: Duplex::Full,
                iops: None,
                source: leak_source(format!(
                    "IBTA InfiniBand Architecture Specification Annex A17 (RoCEv2); {phy}"
                )),
            }
        })
        .collect()
}

fn infiniband_entries() -> Vec<LinkEntry> {
    let speeds: [(&str, f64, u32, Encoding, &str); 8] = [
        (
            "SDR",
            2.5e9,
            1,
            B8B10,
            "IBTA InfiniBand Architecture Specification Vol. 2, Release 1.0",
        ),
        (
            "DDR",
            5e9,
            1,
            B8B10,
            "IBTA InfiniBand Architecture Specification Vol. 2, Release 1.2",
        ),
        (
            "QDR",
            10e9,
            1,
            B8B10,
            "IBTA InfiniBand Architecture Specification Vol. 2, Release 1.2",
        ),
        (
            "FDR10",
            10.3125e9,
            1,
            B64B66,
            "IBTA InfiniBand Architecture Specification Vol. 2, Release 1.3",
        ),
        (
            "FDR",
            14.0625e9,
            1,
            B64B66,
            "IBTA InfiniBand Architecture Specification Vol. 2, Release 1.3",
        ),
        (
            "EDR",
            25.78125e9,
            1,
            B64B66,
            "IBTA InfiniBand Architecture Specification Vol. 2, Release 1.3.1",
        ),
        (
            "HDR",
            26.5625e9,
            2,
            IB_PAM4,
            "IBTA InfiniBand Architecture Specification Vol. 2, Release 1.4",
        ),
        (
            "NDR",
            53.125e9,
            2,
            IB_PAM4,
            "IBTA InfiniBand Architecture Specification Vol. 2, Release 1.5",
        ),
    ];
    speeds
        .into_iter()
        .map(|(name, baud, bits, encoding, source)| {
            let lower = name.to_lowercase();
            LinkEntry {
                name: format!("InfiniBand {name} 4x"),
                variant: None,
                aliases: vec![
                    format!("ib-{lower}"),
                    format!("ib-{lower}-4x"),
                    format!("{lower}-4x"),
                ],
                family: LinkFamily::InfiniBand,
                lanes: 4,
                lane_rate: baud,
                rate_unit: RateUnit::Baud,
                bits_per_symbol: bits,
                encoding,
                framing: Framing {
                    payload_bytes: 4096,
                    overhead_bytes: 26,
                    description: "4096-byte packets (IB MTU): LRH 8, BTH 12, ICRC 4, VCRC 2".into(),
                },
                duplex: Duplex::Full,
                iops: None,
                source,
            }
        })
        .collect()
}

fn usb_entries() -> Vec<LinkEntry> {
    let super_speed_framing = || Framing {
        payload_bytes: 1024,
        overhead_bytes: 32,
        description:
            "1024-byte bulk packets: header packet 20 (with framing), payload framing and CRC-32 12"
                .into(),
    };
    vec![
        LinkEntry {
            name: "USB 2.0 Hi-Speed".into(),
            variant: None,
            aliases: vec!["usb2".into(), "usb2.0".into(), "usb-hs".into()],
            family: LinkFamily::Usb,
            lanes: 1,
            lane_rate: 480e6,
            rate_unit: RateUnit::Bits,
            bits_per_symbol: 1,
            encoding: NONE,
            framing: Framing {
                payload_bytes: 6656,
                overhead_bytes: 844,
                description:
                    "at most 13 bulk packets of 512 bytes per 125 µs microframe of 7500 bytes"
                        .into(),
            },
            duplex: Duplex::Half,
            iops: None,
            source: "USB 2.0 Specification (USB-IF), table 5-10",
        },
        LinkEntry {
            name: "USB 3.2 Gen 1".into(),
            variant: None,
            aliases: vec![
                "usb3".into(),
                "usb3.0".into(),
                "usb3.1gen1".into(),
                "usb3.2gen1".into(),
                "usb-5g".into(),
            ],
            family: LinkFamily::Usb,
            lanes: 1,
            lane_rate: 5e9,
            rate_unit: RateUnit::Baud,
            bits_per_symbol: 1,
            encoding: B8B10,
            framing: super_speed_framing(),
            duplex: Duplex::Full,
            iops: None,
            source: "USB 3.2 Specification (USB-IF)",
        },
        LinkEntry {
            name: "USB 3.2 Gen 2".into(),
            variant: None,
            aliases: vec!["usb3.1gen2".into(), "usb3.2gen2".into(), "usb-10g".into()],
            family: LinkFamily::Usb,
            lanes: 1,
            lane_rate: 10e9,
            rate_unit: RateUnit::Baud,
            bits_per_symbol: 1,
            encoding: B128B132,
            framing: super_speed_framing(),
            duplex: Duplex::Full,
            iops: None,
            source: "USB 3.2 Specification (USB-IF)",
        },
        LinkEntry {
            name: "USB 3.2 Gen 2x2".into(),
            variant: None,
            aliases: vec!["usb3.2gen2x2".into(), "usb-20g".into()],
            family: LinkFamily::Usb,
            lanes: 2,
            lane_rate: 10e9,
            rate_unit: RateUnit::Baud,
            bits_per_symbol: 1,
            encoding: B128B132,
            framing: super_speed_framing(),
            duplex: Duplex::Full,
            iops: None,
            source: "USB 3.2 Specification (USB-IF)",
        },
    ]
}

fn pci_entries() -> Vec<LinkEntry> {
    let pci_clock_33 = 100e6 / 3.0;
    let pci_clock_66 = 200e6 / 3.0;
    let pci_clock_133 = 400e6 / 3.0;
    let bus = |name: &str,
               aliases: &[&str],
               family,
               rate: f64,
               unit,
               bits,
               note: &str,
               source: &'static str| LinkEntry {
        name: name.into(),
        variant: None,
        aliases: aliases.iter().map(|a| a.to_string()).collect(),
        family,
        lanes: 1,
        lane_rate: rate,
        rate_unit: unit,
        bits_per_symbol: bits,
        encoding: NONE,
        framing: Framing {
            payload_bytes: 1,
            overhead_bytes: 0,
            description: note.into(),
        },
        duplex: Duplex::Half,
        iops: None,
        source,
    };
    const BURST: &str = "bus peak; address phases and turnarounds, not counted, cost a few % per burst; shared by every device on the bus";
    const PCI: &str = "PCI Local Bus Specification 3.0";
    const PCIX1: &str = "PCI-X Addendum to the PCI Local Bus Specification 1.0b";
    const PCIX2: &str = "PCI-X Protocol Addendum to the PCI Local Bus Specification 2.0a";
    vec![
        bus(
            "PCI 32-bit 33 MHz",
            &["pci", "pci32", "pci-33", "pci32-33"],
            LinkFamily::Pci,
            pci_clock_33,
            RateUnit::Hertz,
            32,
            BURST,
            PCI,
        ),
        bus(
            "PCI 32-bit 66 MHz",
            &["pci-66", "pci32-66"],
            LinkFamily::Pci,
            pci_clock_66,
            RateUnit::Hertz,
            32,
            BURST,
            PCI,
        ),
        bus(
            "PCI 64-bit 33 MHz",
            &["pci64", "pci64-33"],
            LinkFamily::Pci,
            pci_clock_33,
            RateUnit::Hertz,
            64,
            BURST,
            PCI,
        ),
        bus(
            "PCI 64-bit 66 MHz",
            &["pci64-66"],
            LinkFamily::Pci,
            pci_clock_66,
            RateUnit::Hertz,
            64,
            BURST,
            PCI,
        ),
        bus(
            "PCI-X 66",
            &["pcix66"],
            LinkFamily::PciX,
            pci_clock_66,
            RateUnit::Hertz,
            64,
            BURST,
            PCIX1,
        ),
        bus(
            "PCI-X 133",
            &["pcix133", "pcix"],
            LinkFamily::PciX,
            pci_clock_133,
            RateUnit::Hertz,
            64,
            BURST,
            PCIX1,
        ),
        bus(
            "PCI-X 266",
            &["pcix266"],
            LinkFamily::PciX,
            2.0 * pci_clock_133,
            RateUnit::Transfers,
            64,
            "double data rate at 133 MHz; shared by every device on the bus",
            PCIX2,
        ),
        bus(
            "PCI-X 533",
            &["pcix533"],
            LinkFamily::PciX,
            4.0 * pci_clock_133,
            RateUnit::Transfers,
            64,
            "quad data rate at 133 MHz; shared by every device on the bus",
            PCIX2,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(alias: &str) -> LinkEntry {
        find(alias).unwrap_or_else(|| panic!("{alias} is in the catalog"))
    }

    fn assert_close(actual: f64, expected: f64, what: &str) {
        assert!(
            (actual - expected).abs() <= expected * 1e-12 + 1.0,
            "{what}: {actual} != {expected}"
        );
    }

    #[test]
    fn pcie_follows_transfer_rate_times_lanes_times_encoding() {
        // The documented derivation: PCIe 3.0 x8 = 8 GT/s × 8 × 128/130 / 8 bytes.
        let link = entry("pcie3x8");
        assert_eq!(link.name, "PCIe 3.0 x8");
        assert_close(
            link.data_bytes_per_second(),
            8e9 * 8.0 * 128.0 / 130.0 / 8.0,
            "data",
        );
        assert_close(
            link.payload_bytes_per_second() as f64,
            (8e9_f64 * 8.0 * 128.0 / 130.0 / 8.0 * 256.0 / 280.0).floor(),
            "payload",
        );
        assert_close(entry("pcie1x1").data_bytes_per_second(), 250e6, "gen1 x1");
        assert_close(entry("pcie2x4").data_bytes_per_second(), 2e9, "gen2 x4");
        assert_close(
            entry("pcie4x16").data_bytes_per_second(),
            16e9 * 16.0 * 128.0 / 130.0 / 8.0,
            "gen4 x16",
        );
        assert_close(
            entry("pcie5x4").data_bytes_per_second(),
            32e9 * 4.0 * 128.0 / 130.0 / 8.0,
            "gen5 x4",
        );
        // 6.0: 64 GT/s, 236 of 256 flit bytes carry TLPs.
        assert_close(
            entry("pcie6x16").data_bytes_per_second(),
            64e9 * 16.0 * 236.0 / 256.0 / 8.0,
            "gen6 x16",
        );
        for generation in 1..=6u8 {
            for lanes in [1, 2, 4, 8, 16] {
                assert!(find(&format!("pcie{generation}x{lanes}")).is_some());
            }
        }
        assert_eq!(entry("PCIe-3.0-x8"), link);
        assert_eq!(entry("gen3x8"), link);
        assert!(pcie(7, 4).is_none());
        assert!(pcie(3, 0).is_none());
    }

    #[test]
    fn fibre_channel_follows_baud_rate_encoding_and_framing() {
        let frame = 2048.0 / 2108.0;
        for (alias, baud, encoding, nominal_mb) in [
            ("1gfc", 1.0625e9, 0.8, 100.0),
            ("2gfc", 2.125e9, 0.8, 200.0),
            ("4gfc", 4.25e9, 0.8, 400.0),
            ("8gfc", 8.5e9, 0.8, 800.0),
            ("16gfc", 14.025e9, 64.0 / 66.0, 1600.0),
            ("32gfc", 28.05e9, 5120.0 / 5280.0, 3200.0),
            ("64gfc", 2.0 * 28.9e9, 5120.0 / 5440.0, 6400.0),
            ("128gfc", 4.0 * 28.05e9, 5120.0 / 5280.0, 12800.0),
        ] {
            let link = entry(alias);
            let data = baud * encoding / 8.0;
            assert_close(link.data_bytes_per_second(), data, alias);
            assert_eq!(
                link.payload_bytes_per_second(),
                (data * frame).floor() as u64
            );
            // The computed payload sits just above FCIA's round nominal figure.
            let payload_mb = link.payload_bytes_per_second() as f64 / 1e6;
            assert!(
                payload_mb > nominal_mb && payload_mb < nominal_mb * 1.05,
                "{alias}: {payload_mb}"
            );
        }
        assert_close(entry("4gfc").data_bytes_per_second(), 425e6, "4GFC data");
        assert_close(entry("16gfc").data_bytes_per_second(), 1700e6, "16GFC data");
        assert_close(entry("32gfc").data_bytes_per_second(), 3400e6, "32GFC data");
        assert_close(entry("64gfc").data_bytes_per_second(), 6800e6, "64GFC data");
        assert_eq!(entry("fc4"), entry("4GFC"));
    }

    #[test]
    fn ethernet_carries_tcp_payload_per_frame_on_the_wire() {
        // 1 Gb/s = 125 MB/s; 1448 payload bytes per 1538 on the wire.
        let gbe = entry("1gbe");
        assert_close(gbe.data_bytes_per_second(), 125e6, "1GbE data");
        assert_eq!(
            gbe.payload_bytes_per_second(),
            (125e6_f64 * 1448.0 / 1538.0).floor() as u64
        );
        assert_eq!(gbe.payload_bytes_per_second(), 117_685_305);
        let jumbo = entry("10gbe-9000");
        assert_close(jumbo.data_bytes_per_second(), 1.25e9, "10GbE data");
        assert_eq!(
            jumbo.payload_bytes_per_second(),
            (1.25e9_f64 * 8948.0 / 9038.0).floor() as u64
        );
        for (alias, gbps) in [
            ("1gbe", 1.0),
            ("2.5gbe", 2.5),
            ("5gbe", 5.0),
            ("10gbe", 10.0),
            ("25gbe", 25.0),
            ("40gbe", 40.0),
            ("50gbe", 50.0),
            ("100gbe", 100.0),
            ("200gbe", 200.0),
            ("400gbe", 400.0),
        ] {
            let link = entry(alias);
            assert_close(link.data_bytes_per_second(), gbps * 1e9 / 8.0, alias);
            assert_eq!(link.variant.as_deref(), Some("TCP/IP MTU 1500"));
            assert!(find(&format!("{alias}-9000")).is_some(), "{alias} jumbo");
        }
        assert_ne!(entry("2.5gbe"), entry("25gbe"));
        // Any MTU on request; the catalog's MTU 1500 entry is the same figure.
        let custom = entry("10gbe-mtu4000");
        assert_eq!(custom.framing.payload_bytes, 4000 - 52);
        assert_eq!(
            ethernet_tcp(1_000_000_000, 1500)
                .unwrap()
                .payload_bytes_per_second(),
            117_685_305
        );
        assert!(ethernet_tcp(1_000_000_000, 40).is_none());
    }

    #[test]
    fn infiniband_sas_sata_usb_and_pci_follow_their_derivations() {
        assert_close(entry("ib-sdr").data_bytes_per_second(), 1e9, "SDR 4x");
        assert_close(entry("ib-qdr").data_bytes_per_second(), 4e9, "QDR 4x");
        assert_close(
            entry("ib-fdr").data_bytes_per_second(),
            4.0 * 14.0625e9 * 64.0 / 66.0 / 8.0,
            "FDR 4x",
        );
        assert_close(entry("ib-edr").data_bytes_per_second(), 12.5e9, "EDR 4x");
        assert_close(entry("ib-hdr").data_bytes_per_second(), 25e9, "HDR 4x");
        assert_close(entry("ib-ndr").data_bytes_per_second(), 50e9, "NDR 4x");

        assert_close(entry("sas6").data_bytes_per_second(), 600e6, "SAS 6G");
        assert_close(
            entry("sas12x4").data_bytes_per_second(),
            4.8e9,
            "SAS 12G x4",
        );
        assert_close(entry("sas24").data_bytes_per_second(), 2.4e9, "SAS 24G");
        assert_eq!(
            entry("sas12x4").payload_bytes_per_second(),
            (4.8e9_f64 * 1024.0 / 1060.0).floor() as u64
        );

        let sata = entry("sata6g");
        assert_close(sata.data_bytes_per_second(), 600e6, "SATA 6G");
        assert_eq!(sata.duplex, Duplex::Half);
        assert_close(entry("sata-3g").data_bytes_per_second(), 300e6, "SATA 3G");
        assert_close(
            entry("sata1.5g").data_bytes_per_second(),
            150e6,
            "SATA 1.5G",
        );

        assert_eq!(entry("usb2").payload_bytes_per_second(), 53_248_000);
        assert_close(entry("usb3").data_bytes_per_second(), 500e6, "USB 5G");
        assert_close(
            entry("usb3.2gen2").data_bytes_per_second(),
            10e9 * 128.0 / 132.0 / 8.0,
            "USB 10G",
        );

        assert_eq!(entry("pci").payload_bytes_per_second(), 133_333_333);
        assert_eq!(entry("pcix133").payload_bytes_per_second(), 1_066_666_666);
        assert_eq!(entry("pcix266").payload_bytes_per_second(), 2_133_333_333);
        assert_eq!(entry("pcix533").payload_bytes_per_second(), 4_266_666_666);
        assert_eq!(entry("pcix66").payload_bytes_per_second(), 533_333_333);

        assert_close(
            entry("roce-100gbe").payload_bytes_per_second() as f64,
            (12.5e9_f64 * 4096.0 / 4178.0).floor(),
            "RoCE 100GbE",
        );
    }

    #[test]
    fn aliases_are_unique_and_every_entry_explains_itself() {
        let mut seen = std::collections::HashMap::new();
        for entry in catalog() {
            assert!(!entry.aliases.is_empty(), "{}", entry.name);
            for alias in &entry.aliases {
                if let Some(other) = seen.insert(normalise(alias), entry.full_name()) {
                    panic!("alias {alias} of {} also names {other}", entry.full_name());
                }
            }
            let derivation = entry.derivation();
            assert!(derivation.contains(" / 8 = "), "{derivation}");
            assert!(!entry.source.is_empty());
            assert!(entry.payload_bytes_per_second() > 0);
            assert!(
                entry.payload_bytes_per_second() as f64 <= entry.data_bytes_per_second(),
                "{}",
                entry.name
            );
        }
        assert!(
            entry("pcie3x8")
                .derivation()
                .starts_with("8 GT/s × 8 lanes × 128/130 (128b/130b) / 8 = 7.88 GB/s data"),
            "{}",
            entry("pcie3x8").derivation()
        );
        assert!(entry("pci").derivation().contains("33.33333 MHz × 32 bits"));
    }

    #[test]
    fn near_misses_get_suggestions() {
        assert!(find("4gfcc").is_none());
        assert!(suggestions("4gfcc").contains(&"4gfc".to_string()));
        assert!(suggestions("sas12x").iter().any(|s| s.starts_with("sas12")));
        assert!(suggestions("zzzzzzzz").is_empty());
    }
}
