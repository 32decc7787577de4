//! Link tests: raw TCP throughput between two hosts (`iopath net`), kept beside the storage
//! tests of a [`RunResult`](super::RunResult) so that what a storage path moved can be set
//! against what the wire under it carries.
//!
//! A link test counts the payload bytes the *receiver* read from its sockets (TCP and IP
//! headers are not counted), over a measured window timed by the receiver's clock.

use super::cpu::CpuResult;
use super::series::IntervalPoint;
use serde::{Deserialize, Serialize};

/// Which way the bytes went, as seen from the client that started the test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkDirection {
    /// Client to server (the server counted the bytes).
    Send,
    /// Server to client (the client counted the bytes).
    Receive,
}

impl LinkDirection {
    /// `send` or `receive`.
    pub fn name(self) -> &'static str {
        match self {
            LinkDirection::Send => "send",
            LinkDirection::Receive => "receive",
        }
    }
}

impl std::fmt::Display for LinkDirection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// One direction of one link test. A test of both directions at once gives two of these,
/// measured over the same time and sharing the same CPU figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkTestResult {
    /// Test name (`net send`, `net receive`).
    pub name: String,
    /// The server, as `ADDR:PORT`.
    pub peer: String,
    /// Which way the bytes went.
    pub direction: LinkDirection,
    /// TCP connections that carried data in this direction.
    pub streams: u32,
    /// Length of the receiver's measured window, ns.
    pub measured_ns: u64,
    /// Payload bytes the receiver read in that window.
    pub bytes: u64,
    /// `bytes` per second of `measured_ns`.
    pub bytes_per_second: f64,
    /// Per-second series of received bytes (`io_count` and latencies are 0: a byte stream
    /// has no I/Os).
    pub series: Vec<IntervalPoint>,
    /// CPU used on the client's host while measuring (the client's process, and every core).
    pub cpu: CpuResult,
    /// Reasons to doubt this figure (a stream that moved nothing, a short window, an error).
    pub warnings: Vec<String>,
}

impl LinkTestResult {
    /// Throughput in decimal megabytes per second.
    pub fn megabytes_per_second(&self) -> f64 {
        self.bytes_per_second / 1e6
    }

    /// Throughput in gigabits per second.
    pub fn gigabits_per_second(&self) -> f64 {
        self.bytes_per_second * 8.0 / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_decimal() {
        let test = LinkTestResult {
            name: "net send".into(),
            peer: "127.0.0.1:5280".into(),
            direction: LinkDirection::Send,
            streams: 1,
            measured_ns: 2_000_000_000,
            bytes: 250_000_000,
            bytes_per_second: 125_000_000.0,
            series: Vec::new(),
            cpu: CpuResult::default(),
            warnings: Vec::new(),
        };
        assert_eq!(test.megabytes_per_second(), 125.0);
        assert_eq!(test.gigabits_per_second(), 1.0);
    }

    #[test]
    fn direction_is_snake_case_in_json() {
        let json = serde_json::to_string(&LinkDirection::Receive).unwrap();
        assert_eq!(json, "\"receive\"");
    }
}
