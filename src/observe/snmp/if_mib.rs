//! A switch's port counters from IF-MIB (RFC 2863), walked with GetBulk: each port's name
//! (`ifName`), the 64-bit octet counters (`ifHCInOctets`, `ifHCOutOctets`) and its speed
//! (`ifSpeed` in bit/s below 4.29 Gbit/s, where it is exact, else `ifHighSpeed` in Mbit/s),
//! plus the agent's `sysName`. The walk is bounded: at most [`MAX_PORTS`] ports and
//! [`MAX_REQUESTS`] requests per reading.

use super::client::Session;
use super::message::{Request, Value};
use crate::observe::node_sample::{InterfaceCounters, NodeSample};
use std::collections::BTreeMap;
use std::time::Instant;

/// `sysName.0`.
pub const SYS_NAME: [u32; 9] = [1, 3, 6, 1, 2, 1, 1, 5, 0];
/// `ifName` (ifXTable column 1).
pub const IF_NAME: [u32; 10] = [1, 3, 6, 1, 2, 1, 31, 1, 1, 1];
/// The columns walked, in this order: ifName, ifHCInOctets, ifHCOutOctets, ifHighSpeed
/// (ifXTable 1, 6, 10, 15) and ifSpeed (ifTable 5).
pub const COLUMNS: [&[u32]; 5] = [
    &[1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1],
    &[1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6],
    &[1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 10],
    &[1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 15],
    &[1, 3, 6, 1, 2, 1, 2, 2, 1, 5],
];
/// The most ports read from one agent.
pub const MAX_PORTS: usize = 4096;
/// The most requests one reading makes.
pub const MAX_REQUESTS: usize = 512;
/// Rows asked for per GetBulk (five columns of 16 rows fit a 1,500-byte answer with short
/// names; an agent sends fewer when they do not).
pub const ROWS_PER_REQUEST: u16 = 16;
/// `ifSpeed`'s value when the speed is beyond it (then `ifHighSpeed` says it).
const IF_SPEED_SATURATED: u64 = u32::MAX as u64;

/// One port's row.
#[derive(Clone, Debug, Default, PartialEq)]
struct Row {
    name: Option<String>,
    in_octets: Option<u64>,
    out_octets: Option<u64>,
    high_speed_mbit: Option<u64>,
    speed_bit: Option<u64>,
}

/// Reads the agent's name and every port's counters, before `deadline`.
pub fn read_ports(session: &mut Session, deadline: Instant) -> Result<NodeSample, String> {
    let id = session.next_id();
    let name = session.exchange(&Request::get(id, &[SYS_NAME.to_vec()]), deadline)?;
    let node_name = name
        .bindings
        .into_iter()
        .find_map(|(_, value)| match value {
            Value::Bytes(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            _ => None,
        });
    let mut rows: BTreeMap<u32, Row> = BTreeMap::new();
    // Where each column's walk stands; None once it has left its column.
    let mut cursors: Vec<Option<Vec<u32>>> = COLUMNS.iter().map(|c| Some(c.to_vec())).collect();
    for _ in 0..MAX_REQUESTS {
        let walking: Vec<usize> = (0..COLUMNS.len())
            .filter(|c| cursors[*c].is_some())
            .collect();
        if walking.is_empty() {
            break;
        }
        let oids: Vec<Vec<u32>> = walking
            .iter()
            .map(|c| cursors[*c].clone().expect("walking"))
            .collect();
        let id = session.next_id();
        let response =
            session.exchange(&Request::get_bulk(id, ROWS_PER_REQUEST, &oids), deadline)?;
        if response.error_status != 0 {
            return Err(format!(
                "the agent answered with error-status {}",
                response.error_status
            ));
        }
        if response.bindings.is_empty() {
            return Err("the agent answered a GetBulk with no variables".into());
        }
        // The answer holds the walked columns' next rows, row after row.
        for (position, (oid, value)) in response.bindings.into_iter().enumerate() {
            let column = walking[position % walking.len()];
            if cursors[column].is_none() {
                continue;
            }
            let prefix = COLUMNS[column];
            let index = match oid.strip_prefix(prefix) {
                Some([index]) if value != Value::EndOfView => *index,
                _ => {
                    cursors[column] = None;
                    continue;
                }
            };
            // An agent whose answer does not move forward would be walked for ever.
            if cursors[column].as_ref().is_some_and(|at| oid <= *at) {
                return Err("the agent's answers do not move forward (a broken walk)".into());
            }
            if !rows.contains_key(&index) && rows.len() >= MAX_PORTS {
                return Err(format!("more than {MAX_PORTS} ports"));
            }
            let row = rows.entry(index).or_default();
            match (column, value) {
                (0, Value::Bytes(bytes)) => {
                    row.name = Some(String::from_utf8_lossy(&bytes).into_owned())
                }
                (1, Value::Unsigned(n)) => row.in_octets = Some(n),
                (2, Value::Unsigned(n)) => row.out_octets = Some(n),
                (3, Value::Unsigned(n)) => row.high_speed_mbit = Some(n),
                (4, Value::Unsigned(n)) => row.speed_bit = Some(n),
                _ => {}
            }
            cursors[column] = Some(oid);
        }
    }
    if cursors.iter().any(Option::is_some) {
        return Err(format!("more than {MAX_REQUESTS} requests for one reading"));
    }
    let mut sample = NodeSample {
        node_name,
        ..NodeSample::default()
    };
    for (index, row) in rows {
        let (Some(received), Some(sent)) = (row.in_octets, row.out_octets) else {
            continue;
        };
        let speed_bits = match (row.speed_bit, row.high_speed_mbit) {
            (Some(bits), _) if bits > 0 && bits < IF_SPEED_SATURATED => Some(bits as f64),
            (_, Some(mbit)) if mbit > 0 => Some(mbit as f64 * 1e6),
            _ => None,
        };
        sample.interfaces.insert(
            row.name.unwrap_or_else(|| format!("if{index}")),
            InterfaceCounters {
                received_bytes: received as f64,
                transmitted_bytes: sent as f64,
                speed_bytes_per_second: speed_bits.map(|bits| bits / 8.0),
            },
        );
    }
    if sample.interfaces.is_empty() {
        return Err(
            "the agent reports no port with ifHCInOctets and ifHCOutOctets (IF-MIB ifXTable)"
                .into(),
        );
    }
    Ok(sample)
}
