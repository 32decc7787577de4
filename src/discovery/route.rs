//! The IPv4 routing table (`/proc/net/route`) and the neighbour table (`/proc/net/arp`): the
//! gateway of a route, the route a recorded machine's kernel would pick, and the hardware
//! address of the next hop (to find the bridge port it leaves through).

use super::HostView;
use super::host_view::TABLE_LIMIT_BYTES;
use std::net::Ipv4Addr;
use std::path::Path;

/// The kernel's IPv4 routing table.
pub const ROUTE_TABLE: &str = "/proc/net/route";
/// The kernel's IPv4 neighbour (ARP) table.
pub const ARP_TABLE: &str = "/proc/net/arp";

/// One route of `/proc/net/route`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Route<'a> {
    interface: &'a str,
    gateway: Ipv4Addr,
    prefix_bits: u32,
    metric: u32,
    line: &'a str,
}

/// The routes of `text` (hexadecimal fields in host byte order) that reach `destination`.
fn matching_routes(text: &str, destination: Ipv4Addr) -> Vec<Route<'_>> {
    let target = u32::from(destination);
    let parse = |field: &str| u32::from_str_radix(field, 16).ok().map(u32::from_be);
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 {
                return None;
            }
            let network = parse(fields[1])?;
            let gateway = parse(fields[2])?;
            let flags = u32::from_str_radix(fields[3], 16).ok()?;
            let metric = fields[6].parse().ok()?;
            let mask = parse(fields[7])?;
            // RTF_UP
            (flags & 1 == 1 && target & mask == network & mask).then_some(Route {
                interface: fields[0],
                gateway: Ipv4Addr::from(gateway),
                prefix_bits: mask.count_ones(),
                metric,
                line,
            })
        })
        .collect()
}

/// The gateway of the most specific route to `destination` through `interface`; `None` for
/// a directly attached network.
///
/// ```
/// use iopath::discovery::route::best_ipv4_gateway;
/// use std::net::Ipv4Addr;
/// let table = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n\
///              eth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\n";
/// assert_eq!(best_ipv4_gateway(table, Ipv4Addr::new(8, 8, 8, 8), "eth0"), Some(Ipv4Addr::new(10, 0, 0, 1)));
/// ```
pub fn best_ipv4_gateway(text: &str, destination: Ipv4Addr, interface: &str) -> Option<Ipv4Addr> {
    matching_routes(text, destination)
        .into_iter()
        .filter(|route| route.interface == interface)
        .max_by_key(|route| route.prefix_bits)
        .and_then(|route| (!route.gateway.is_unspecified()).then_some(route.gateway))
}

/// The route the kernel would pick to `destination` by the main table alone: the longest
/// prefix, then the lowest metric. Policy routing is not seen.
pub fn best_ipv4_route(text: &str, destination: Ipv4Addr) -> Option<(String, Option<Ipv4Addr>)> {
    let routes = matching_routes(text, destination);
    let longest = routes.iter().map(|route| route.prefix_bits).max()?;
    routes
        .into_iter()
        .filter(|route| route.prefix_bits == longest)
        .min_by_key(|route| route.metric)
        .map(|route| {
            (
                route.interface.to_string(),
                (!route.gateway.is_unspecified()).then_some(route.gateway),
            )
        })
}

/// The interface and gateway of the route to `destination` on the machine `view` shows.
pub fn ipv4_route(view: &HostView, destination: Ipv4Addr) -> Option<(String, Option<Ipv4Addr>)> {
    let path = Path::new(ROUTE_TABLE);
    let text = view.read_text(path, TABLE_LIMIT_BYTES)?;
    let chosen = best_ipv4_route(&text, destination);
    keep_route_lines(
        view,
        &text,
        destination,
        chosen.as_ref().map(|(i, _)| i.as_str()),
    );
    chosen
}

/// The gateway of the route to `destination` through `interface` on the machine `view`
/// shows.
pub fn ipv4_gateway(view: &HostView, destination: Ipv4Addr, interface: &str) -> Option<Ipv4Addr> {
    let path = Path::new(ROUTE_TABLE);
    let text = view.read_text(path, TABLE_LIMIT_BYTES)?;
    keep_route_lines(view, &text, destination, Some(interface));
    best_ipv4_gateway(&text, destination, interface)
}

/// Keeps in a recording the header and the routes to `destination` (through `interface`).
fn keep_route_lines(view: &HostView, text: &str, destination: Ipv4Addr, interface: Option<&str>) {
    let mut kept: Vec<&str> = text.lines().take(1).collect();
    kept.extend(
        matching_routes(text, destination)
            .iter()
            .filter(|route| interface.is_none_or(|name| route.interface == name))
            .map(|route| route.line),
    );
    view.narrow_recording(Path::new(ROUTE_TABLE), &kept.join("\n"));
}

/// The hardware address the neighbour table holds for `address` on `interface`.
pub fn neighbour_address(view: &HostView, address: Ipv4Addr, interface: &str) -> Option<[u8; 6]> {
    let path = Path::new(ARP_TABLE);
    let text = view.read_text(path, TABLE_LIMIT_BYTES)?;
    let wanted = address.to_string();
    let (line, mac) = text.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.len() >= 6 && fields[0] == wanted && fields[5] == interface)
            .then(|| parse_mac(fields[3]).map(|mac| (line, mac)))
            .flatten()
    })?;
    let header = text.lines().next().unwrap_or("");
    view.narrow_recording(path, &format!("{header}\n{line}"));
    Some(mac)
}

/// `aa:bb:cc:dd:ee:ff` → bytes.
pub fn parse_mac(text: &str) -> Option<[u8; 6]> {
    let mut mac = [0u8; 6];
    let mut parts = text.split(':');
    for byte in &mut mac {
        *byte = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0
eth1\t00000000\t0101A8C0\t0003\t0\t0\t200\t00000000\t0\t0\t0
eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
eth0\t0005A8C0\tFE00000A\t0003\t0\t0\t0\t00FFFFFF\t0\t0\t0
eth1\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
";

    #[test]
    fn the_most_specific_route_gives_the_gateway() {
        // default via 10.0.0.1; 10.0.0.0/24 direct; 192.168.5.0/24 via 10.0.0.254.
        assert_eq!(
            best_ipv4_gateway(TABLE, Ipv4Addr::new(8, 8, 8, 8), "eth0"),
            Some(Ipv4Addr::new(10, 0, 0, 1))
        );
        assert_eq!(
            best_ipv4_gateway(TABLE, Ipv4Addr::new(10, 0, 0, 7), "eth0"),
            None
        );
        assert_eq!(
            best_ipv4_gateway(TABLE, Ipv4Addr::new(192, 168, 5, 9), "eth0"),
            Some(Ipv4Addr::new(10, 0, 0, 254))
        );
        assert_eq!(
            best_ipv4_gateway(TABLE, Ipv4Addr::new(8, 8, 8, 8), "eth2"),
            None
        );
    }

    #[test]
    fn the_route_is_the_longest_prefix_then_the_lowest_metric() {
        assert_eq!(
            best_ipv4_route(TABLE, Ipv4Addr::new(192, 168, 1, 20)),
            Some(("eth1".into(), None))
        );
        assert_eq!(
            best_ipv4_route(TABLE, Ipv4Addr::new(8, 8, 8, 8)),
            Some(("eth0".into(), Some(Ipv4Addr::new(10, 0, 0, 1))))
        );
        assert_eq!(best_ipv4_route("Iface\n", Ipv4Addr::new(8, 8, 8, 8)), None);
    }

    #[test]
    fn neighbours_give_hardware_addresses() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("proc/net")).unwrap();
        std::fs::write(
            root.path().join("proc/net/arp"),
            "IP address       HW type     Flags       HW address            Mask     Device\n\
             172.18.0.2       0x1         0x2         02:42:ac:12:00:02     *        br-1\n\
             10.0.0.1         0x1         0x2         52:54:00:12:34:56     *        eth0\n",
        )
        .unwrap();
        let view = HostView::rooted(root.path()).recording();
        assert_eq!(
            neighbour_address(&view, Ipv4Addr::new(172, 18, 0, 2), "br-1"),
            Some([0x02, 0x42, 0xac, 0x12, 0x00, 0x02])
        );
        assert_eq!(
            neighbour_address(&view, Ipv4Addr::new(172, 18, 0, 2), "eth0"),
            None
        );
        let kept = view.recorded();
        let text = match kept
            .entries
            .values()
            .find(|e| matches!(e, super::super::host_view::RecordedEntry::File(_)))
        {
            Some(super::super::host_view::RecordedEntry::File(bytes)) => {
                String::from_utf8_lossy(bytes).into_owned()
            }
            _ => String::new(),
        };
        assert!(
            text.contains("172.18.0.2") && !text.contains("10.0.0.1"),
            "{text}"
        );
        assert_eq!(parse_mac("02:42:ac:12:00:02:00"), None);
        assert_eq!(parse_mac("zz:42:ac:12:00:02"), None);
    }
}
