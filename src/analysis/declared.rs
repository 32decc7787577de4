//! Hops the user declares where they cannot be seen: `--link 4gfc`,
//! `--path "pcie3x8,40gbe,array:3.8GB/s"`, `--shared array:3.8GB/s`.
//!
//! With several targets that leave this host by different routes (four NBD servers, each
//! behind its own NIC), every `--link` and `--path` hop is one per route: `--link 1gbe` over
//! four routes is four 1GbE links, each carrying the targets of its route. A hop that every
//! target passes whatever its route (one switch uplink, one array) is declared with
//! `--shared`, and carries the sum of all of them. A target's route is the outermost hop
//! discovered on its path: the interface it leaves by (a bond's last member, a bridge's
//! port), or the last port, link or bus of a local device ([`routes`]).
//!
//! Each comma-separated item is one of:
//! - a catalog alias (`4gfc`, `10gbe`, `10gbe-9000`, `pcie3x8`, `sas12x4`; `iopath links`
//!   lists them all), optionally multiplied for parallel links: `2x4gfc`;
//! - `NAME:RATE[:IOPS]`, a hop of your own: `array:3.8GB/s`, `ssd:550MB/s:90k`,
//!   `wan:10Gb/s`. Rates are decimal (`MB/s` = 10^6 bytes/s); `b` is a bit, `B` a byte;
//!   `KiB/s`, `MiB/s`, `GiB/s` are binary. IOPS take `k` and `m` (×1000, ×10^6).
//!
//! ```
//! use iopath::analysis::declared::DeclaredPath;
//! let declared = DeclaredPath::from_flags(&["4gfc".into()], &["array:3.8GB/s:200k".into()]).unwrap();
//! assert_eq!(declared.hops.len(), 2);
//! assert_eq!(declared.hops[1].capacity.payload_bytes_per_second, 3_800_000_000);
//! assert_eq!(declared.hops[1].capacity.iops, Some(200_000));
//! assert!(DeclaredPath::from_flags(&["4gfcc".into()], &[]).is_err());
//! ```

use super::links::{self, LinkEntry};
use crate::result::{Duplex, Hop, HopCapacity, HopKind, HopOrigin, StoragePath};

/// Every hop declared for a run, in order from this host outward.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeclaredPath {
    /// The hops: `--link` items first, then `--path` items.
    pub hops: Vec<DeclaredHop>,
}

/// One declared hop.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclaredHop {
    /// The item as typed (`2x4gfc`, `array:3.8GB/s`).
    pub spec: String,
    /// Display name (`4GFC`, `2 × 4GFC`, `array`).
    pub name: String,
    /// What it is.
    pub kind: HopKind,
    /// What it carries.
    pub capacity: HopCapacity,
    /// Protocol whose headers count on it when the target does not say (`fcp` on FC).
    pub protocol: Option<String>,
    /// One hop for every target whatever its route (`--shared`), not one per route.
    pub shared: bool,
}

/// A declared item that cannot be read; each message quotes the item.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeclaredError {
    /// Not in the catalog and not `NAME:RATE`.
    #[error("'{spec}' is not a link in the catalog{}; `iopath links` lists them, or declare NAME:RATE such as array:3.8GB/s", did_you_mean(.suggestions))]
    Unknown {
        /// The item.
        spec: String,
        /// Close aliases.
        suggestions: Vec<String>,
    },
    /// A rate that cannot be read.
    #[error("'{spec}': {reason}")]
    Rate {
        /// The item.
        spec: String,
        /// Why.
        reason: String,
    },
    /// An empty list or item.
    #[error("'{spec}': empty hop (items are separated by commas)")]
    Empty {
        /// The whole flag value.
        spec: String,
    },
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", suggestions.join(", "))
    }
}

impl DeclaredPath {
    /// Reads every `--link` value, then every `--path` value (each a comma-separated list).
    pub fn from_flags(links: &[String], paths: &[String]) -> Result<Self, DeclaredError> {
        let mut hops = Vec::new();
        for text in links.iter().chain(paths) {
            hops.extend(parse_list(text)?);
        }
        Ok(DeclaredPath { hops })
    }

    /// Adds the hops of every `--shared` value (comma-separated lists, each hop passed by
    /// every target whatever its route), after the others.
    pub fn with_shared(mut self, shared: &[String]) -> Result<Self, DeclaredError> {
        for text in shared {
            self.hops
                .extend(parse_list(text)?.into_iter().map(|hop| DeclaredHop {
                    shared: true,
                    ..hop
                }));
        }
        Ok(self)
    }

    /// Whether nothing was declared.
    pub fn is_empty(&self) -> bool {
        self.hops.is_empty()
    }
}

/// Reads one comma-separated list of hops.
pub fn parse_list(text: &str) -> Result<Vec<DeclaredHop>, DeclaredError> {
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.iter().any(|item| item.is_empty()) {
        return Err(DeclaredError::Empty {
            spec: text.to_string(),
        });
    }
    items.into_iter().map(parse_hop).collect()
}

/// Reads one hop: a catalog alias, `NxALIAS`, or `NAME:RATE[:IOPS]`.
pub fn parse_hop(spec: &str) -> Result<DeclaredHop, DeclaredError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(DeclaredError::Empty {
            spec: spec.to_string(),
        });
    }
    if let Some((name, rest)) = spec.split_once(':') {
        return parse_custom(spec, name.trim(), rest);
    }
    if let Some(entry) = links::find(spec) {
        return Ok(from_entry(spec, &entry, 1));
    }
    if let Some((count, alias)) = spec.split_once(['x', 'X'])
        && let Ok(count) = count.parse::<u32>()
        && (2..=64).contains(&count)
        && let Some(entry) = links::find(alias)
    {
        return Ok(from_entry(spec, &entry, count));
    }
    Err(DeclaredError::Unknown {
        spec: spec.to_string(),
        suggestions: links::suggestions(spec),
    })
}

fn from_entry(spec: &str, entry: &LinkEntry, count: u32) -> DeclaredHop {
    let (name, payload, derivation) = if count == 1 {
        (
            entry.name.clone(),
            entry.payload_bytes_per_second(),
            entry.derivation(),
        )
    } else {
        (
            format!("{count} × {}", entry.name),
            entry.payload_bytes_per_second() * u64::from(count),
            format!("{count} links in parallel, each {}", entry.derivation()),
        )
    };
    DeclaredHop {
        spec: spec.to_string(),
        name,
        kind: entry.family.hop_kind(),
        capacity: HopCapacity {
            payload_bytes_per_second: payload,
            iops: entry.iops.map(|iops| iops * u64::from(count)),
            duplex: entry.duplex,
            catalog_name: Some(entry.name.clone()),
            variant: entry.variant.clone(),
            derivation: format!("{derivation} ({})", entry.source),
        },
        protocol: entry.family.default_protocol().map(str::to_string),
        shared: false,
    }
}

fn parse_custom(spec: &str, name: &str, rest: &str) -> Result<DeclaredHop, DeclaredError> {
    let rate_error = |reason: String| DeclaredError::Rate {
        spec: spec.to_string(),
        reason,
    };
    if name.is_empty() {
        return Err(rate_error(
            "a declared hop needs a name before the colon (array:3.8GB/s)".into(),
        ));
    }
    let (rate_text, iops_text) = match rest.split_once(':') {
        Some((rate, iops)) => (rate, Some(iops)),
        None => (rest, None),
    };
    let bytes_per_second = parse_rate(rate_text).map_err(rate_error)?;
    let iops = iops_text.map(parse_iops).transpose().map_err(rate_error)?;
    let catalog = links::find(name);
    let kind = catalog
        .as_ref()
        .map(|entry| entry.family.hop_kind())
        .unwrap_or_else(|| kind_from_name(name));
    let duplex = catalog.as_ref().map_or(Duplex::Full, |entry| entry.duplex);
    let mut derivation = format!("declared as {spec}");
    if let Some(entry) = &catalog {
        derivation.push_str(&format!(
            " (the catalog's {} carries {})",
            entry.full_name(),
            crate::units::format_rate(entry.payload_bytes_per_second() as f64)
        ));
    }
    Ok(DeclaredHop {
        spec: spec.to_string(),
        name: catalog
            .as_ref()
            .map_or_else(|| name.to_string(), |entry| entry.name.clone()),
        kind,
        capacity: HopCapacity {
            payload_bytes_per_second: bytes_per_second,
            iops,
            duplex,
            catalog_name: None,
            variant: None,
            derivation,
        },
        protocol: catalog
            .as_ref()
            .and_then(|entry| entry.family.default_protocol())
            .map(str::to_string),
        shared: false,
    })
}

/// What a hop of your own is, from its name: links and buses by their usual words, anything
/// else (`array`, `ssd`, `raid`, `server`) a device.
fn kind_from_name(name: &str) -> HopKind {
    let lower = name.to_lowercase();
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| lower.starts_with(p));
    if starts(&["fc", "fibre", "fiber", "san-link"]) {
        HopKind::FibreChannelLink
    } else if starts(&["pci", "bus"]) {
        HopKind::Bus
    } else if starts(&["sas", "sata", "usb"]) {
        HopKind::DeviceLink
    } else if starts(&[
        "link",
        "net",
        "eth",
        "wan",
        "lan",
        "ib",
        "infiniband",
        "roce",
        "uplink",
        "isl",
        "vpn",
    ]) {
        HopKind::NetworkLink
    } else {
        HopKind::Device
    }
}

/// Reads a rate in bytes per second: `3.8GB/s`, `400 MB/s`, `10Gb/s`, `10gbit`, `1.5GiB/s`.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a rate (such as 3.8GB/s, 400MB/s or 10Gb/s)"))?;
    let unit = unit.trim();
    let unit_lower = unit.to_lowercase();
    let per_second = unit
        .strip_suffix("/s")
        .or_else(|| unit.strip_suffix("ps"))
        .unwrap_or(unit);
    let bits_word = ["bits/s", "bit/s", "bits", "bit"]
        .iter()
        .find_map(|suffix| unit_lower.strip_suffix(suffix));
    let (prefix, bits) = if let Some(prefix) = bits_word {
        (prefix.to_string(), true)
    } else if let Some(prefix) = per_second.strip_suffix('b') {
        (prefix.to_string(), true)
    } else if let Some(prefix) = per_second.strip_suffix('B') {
        (prefix.to_string(), false)
    } else if unit.is_empty() {
        return Err(format!(
            "'{text}' has no unit: write 3.8GB/s (bytes) or 10Gb/s (bits)"
        ));
    } else {
        return Err(format!(
            "'{text}': unknown unit '{unit}' (use B/s, kB/s, MB/s, GB/s, TB/s, MiB/s, GiB/s, Mb/s, Gb/s, Gbit)"
        ));
    };
    let multiplier = match prefix.as_str() {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" | "m" => 1e6,
        "G" | "g" => 1e9,
        "T" | "t" => 1e12,
        "Ki" | "ki" => 1024.0,
        "Mi" | "mi" => 1048576.0,
        "Gi" | "gi" => 1073741824.0,
        "Ti" | "ti" => 1099511627776.0,
        other => {
            return Err(format!("'{text}': unknown prefix '{other}'"));
        }
    };
    let bytes = value * multiplier / if bits { 8.0 } else { 1.0 };
    if !(bytes >= 1.0 && bytes.is_finite()) {
        return Err(format!("'{text}': a rate must be at least 1 byte/s"));
    }
    Ok(bytes.round() as u64)
}

/// Reads an I/O rate: `90000`, `200k`, `1.5m`, `200kiops`.
pub fn parse_iops(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let lower = trimmed.to_lowercase();
    let lower = lower.strip_suffix("iops").unwrap_or(&lower).trim();
    let (number, multiplier) = if let Some(number) = lower.strip_suffix('k') {
        (number, 1e3)
    } else if let Some(number) = lower.strip_suffix('m') {
        (number, 1e6)
    } else {
        (lower, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("'{trimmed}' is not an I/O rate (such as 90000, 200k, 1.5m)"))?;
    let iops = value * multiplier;
    if !(iops >= 1.0 && iops.is_finite()) {
        return Err(format!("'{trimmed}': an I/O rate must be at least 1"));
    }
    Ok(iops.round() as u64)
}

/// The route a target leaves this host by: the outermost hop discovered on its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// That hop's key (`net:eth2`).
    pub key: String,
    /// That hop's name (`eth2`).
    pub name: String,
}

/// The route of every path, when they take more than one: `None` for all when every path
/// ends at the same discovered hop (declared hops are then simply shared), and for a path
/// with no discovered hop. Declared hops already in a path are not looked at.
pub fn routes(paths: &[StoragePath]) -> Vec<Option<Route>> {
    let routes: Vec<Option<Route>> = paths
        .iter()
        .map(|path| {
            path.hops
                .iter()
                .rev()
                .find(|hop| hop.origin == HopOrigin::Discovered)
                .map(|hop| Route {
                    key: hop.key.clone(),
                    name: hop.name.clone(),
                })
        })
        .collect();
    let first = routes.iter().flatten().next();
    if routes.iter().flatten().all(|route| Some(route) == first) {
        return vec![None; paths.len()];
    }
    routes
}

/// Appends the declared hops to `path`, replacing any declared before. Each is marked
/// declared and, on a network or FC link, given `protocol` (the target's storage protocol)
/// unless it has its own. A hop is keyed `declared:N`, so that every target shares it, unless
/// the path has a `route` of its own and the hop is not `--shared`: then it is one hop per
/// route, keyed `declared:N@ROUTE` (`declared:0@net:eth2`).
pub fn apply(
    path: &mut StoragePath,
    declared: &DeclaredPath,
    protocol: Option<&str>,
    route: Option<&Route>,
) {
    // Hops shared with other paths are copied only when something changes.
    if path
        .hops
        .iter()
        .any(|hop| hop.origin == HopOrigin::Declared)
    {
        path.hops
            .to_mut()
            .retain(|hop| hop.origin != HopOrigin::Declared);
    }
    for (index, hop) in declared.hops.iter().enumerate() {
        let carries_storage_protocol = matches!(
            hop.kind,
            HopKind::NetworkLink | HopKind::FibreChannelLink | HopKind::NetworkInterface
        );
        let hop_protocol = if carries_storage_protocol {
            protocol
                .map(str::to_string)
                .or_else(|| hop.protocol.clone())
        } else {
            hop.protocol.clone()
        };
        let (key, description) = match route {
            Some(route) if !hop.shared => (
                format!("declared:{index}@{}", route.key),
                format!(
                    "declared as {}, for the route through {}",
                    hop.spec, route.name
                ),
            ),
            _ if hop.shared => (
                format!("declared:{index}"),
                format!("declared as {}, shared by every target", hop.spec),
            ),
            _ => (
                format!("declared:{index}"),
                format!("declared as {}", hop.spec),
            ),
        };
        path.hops.push(Hop {
            key,
            kind: hop.kind,
            name: hop.name.clone(),
            description,
            depth: 0,
            origin: HopOrigin::Declared,
            capacity: Some(hop.capacity.clone()),
            queue: None,
            protocol: hop_protocol,
            read_share: 1.0,
            write_share: 1.0,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_aliases_become_hops() {
        let hop = parse_hop("4gfc").unwrap();
        assert_eq!(hop.name, "4GFC");
        assert_eq!(hop.kind, HopKind::FibreChannelLink);
        assert_eq!(hop.protocol.as_deref(), Some("fcp"));
        assert_eq!(
            hop.capacity.payload_bytes_per_second,
            links::find("4gfc").unwrap().payload_bytes_per_second()
        );
        let hop = parse_hop("1GbE").unwrap();
        assert_eq!(hop.kind, HopKind::NetworkLink);
        assert_eq!(hop.capacity.variant.as_deref(), Some("TCP/IP MTU 1500"));
        assert_eq!(parse_hop("pcie3x8").unwrap().kind, HopKind::Bus);
        assert_eq!(parse_hop("sas12x4").unwrap().kind, HopKind::DeviceLink);
        let double = parse_hop("2x4gfc").unwrap();
        assert_eq!(double.name, "2 × 4GFC");
        assert_eq!(
            double.capacity.payload_bytes_per_second,
            2 * hop_capacity("4gfc")
        );
    }

    fn hop_capacity(alias: &str) -> u64 {
        parse_hop(alias).unwrap().capacity.payload_bytes_per_second
    }

    #[test]
    fn custom_hops_take_a_rate_and_iops() {
        let array = parse_hop("array:3.8GB/s").unwrap();
        assert_eq!(array.name, "array");
        assert_eq!(array.kind, HopKind::Device);
        assert_eq!(array.capacity.payload_bytes_per_second, 3_800_000_000);
        assert_eq!(array.capacity.iops, None);
        let ssd = parse_hop("ssd:550MB/s:90k").unwrap();
        assert_eq!(ssd.capacity.payload_bytes_per_second, 550_000_000);
        assert_eq!(ssd.capacity.iops, Some(90_000));
        assert_eq!(parse_hop("wan:1Gb/s").unwrap().kind, HopKind::NetworkLink);
        assert_eq!(
            parse_hop("wan:1Gb/s")
                .unwrap()
                .capacity
                .payload_bytes_per_second,
            125_000_000
        );
        // A catalog name with a measured figure of its own keeps the catalog's kind.
        let fc = parse_hop("4gfc:380MB/s").unwrap();
        assert_eq!(fc.kind, HopKind::FibreChannelLink);
        assert_eq!(fc.capacity.payload_bytes_per_second, 380_000_000);
    }

    #[test]
    fn rates_read_bits_bytes_and_binary_prefixes() {
        assert_eq!(parse_rate("3.8GB/s"), Ok(3_800_000_000));
        assert_eq!(parse_rate("400 MB/s"), Ok(400_000_000));
        assert_eq!(parse_rate("10Gb/s"), Ok(1_250_000_000));
        assert_eq!(parse_rate("10gbit"), Ok(1_250_000_000));
        assert_eq!(parse_rate("10Gbps"), Ok(1_250_000_000));
        assert_eq!(parse_rate("100MBps"), Ok(100_000_000));
        assert_eq!(parse_rate("1GiB/s"), Ok(1 << 30));
        assert_eq!(parse_rate("800MiB/s"), Ok(800 << 20));
        assert_eq!(parse_rate("512B/s"), Ok(512));
        assert!(parse_rate("10").unwrap_err().contains("no unit"));
        assert!(
            parse_rate("10 furlongs")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0MB/s").is_err());
        assert_eq!(parse_iops("90000"), Ok(90_000));
        assert_eq!(parse_iops("200k"), Ok(200_000));
        assert_eq!(parse_iops("1.5M"), Ok(1_500_000));
        assert_eq!(parse_iops("200kiops"), Ok(200_000));
        assert!(parse_iops("lots").is_err());
    }

    #[test]
    fn bad_items_are_quoted() {
        let error = parse_hop("4gfcc").unwrap_err();
        let message = error.to_string();
        assert!(message.contains("'4gfcc'"), "{message}");
        assert!(message.contains("did you mean 4gfc"), "{message}");
        let error = parse_list("pcie3x8,,array:1GB/s").unwrap_err();
        assert!(matches!(error, DeclaredError::Empty { .. }), "{error}");
        let error = parse_hop("array:fast").unwrap_err();
        assert!(error.to_string().contains("'array:fast'"), "{error}");
        assert!(parse_hop(":1GB/s").is_err());
        assert!(parse_hop("array:1GB/s:lots").is_err());
    }

    #[test]
    fn flags_make_a_path_in_order_and_apply_replaces_earlier_declarations() {
        let declared =
            DeclaredPath::from_flags(&["4gfc".into()], &["pcie3x8, 40gbe ,array:3.8GB/s".into()])
                .unwrap();
        let names: Vec<&str> = declared.hops.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["4GFC", "PCIe 3.0 x8", "40GbE", "array"]);
        assert!(DeclaredPath::from_flags(&[], &[]).unwrap().is_empty());

        let mut path = StoragePath::default();
        apply(&mut path, &declared, Some("iscsi"), None);
        apply(&mut path, &declared, Some("iscsi"), None);
        assert_eq!(path.hops.len(), 4);
        assert!(path.hops.iter().all(|h| h.origin == HopOrigin::Declared));
        assert_eq!(path.hops[0].key, "declared:0");
        // The target's protocol rides on network and FC links, not on buses or arrays.
        assert_eq!(path.hops[0].protocol.as_deref(), Some("iscsi"));
        assert_eq!(path.hops[1].protocol, None);
        assert_eq!(path.hops[2].protocol.as_deref(), Some("iscsi"));
        assert_eq!(path.hops[3].protocol, None);
        apply(&mut path, &DeclaredPath::default(), None, None);
        assert!(path.hops.is_empty());
    }
}
