//! A switch's port counters over SNMPv2c (`--switch-snmp HOST[:PORT]`): a small client of its
//! own — BER written and read by hand within bounds, GetRequest and GetBulkRequest over UDP
//! with time-outs and retries — reading IF-MIB's octet counters and speed for every port once
//! a second, so that a switch port in the path becomes a hop like the server's interfaces.
//!
//! - [`agent`]: the agent's `HOST[:PORT]` and the community from its owner-only file;
//! - [`ber`]: the BER forms SNMP uses;
//! - [`message`]: SNMPv2c requests and responses;
//! - [`client`]: one request and its answer over UDP;
//! - [`if_mib`]: the walk of the port table into counters per port.
//!
//! ```no_run
//! use iopath::observe::snmp::{agent::SwitchAgent, read_switch};
//! let agent = SwitchAgent::parse("198.18.0.1", b"public".to_vec())?;
//! let ports = read_switch(&agent).map_err(|reason| iopath::observe::ObserveError::SwitchScrape {
//!     agent: agent.text.clone(),
//!     reason,
//! })?;
//! for (name, port) in &ports.interfaces {
//!     println!("{name}: {} bytes in", port.received_bytes);
//! }
//! # Ok::<(), iopath::observe::ObserveError>(())
//! ```

pub mod agent;
pub mod ber;
pub mod client;
pub mod if_mib;
pub mod message;

use super::node_sample::NodeSample;
use std::time::{Duration, Instant};

/// How long one reading of a switch may take, as a node exporter's scrape.
pub const READING_TIMEOUT: Duration = Duration::from_secs(2);

/// Reads `agent`'s name and port counters once (at most [`READING_TIMEOUT`]); the reason when
/// it cannot.
pub fn read_switch(agent: &agent::SwitchAgent) -> Result<NodeSample, String> {
    let deadline = Instant::now() + READING_TIMEOUT;
    let mut session = client::Session::open(agent)?;
    if_mib::read_ports(&mut session, deadline)
}
