//! Gathering the facts of one target's path from a [`Machine`]: file → filesystem → block
//! device and its stack → disk → transport → PCI functions; for network storage the route
//! to the server and the interfaces it leaves through.
//!
//! Everything is read through the machine's [`HostView`](super::HostView) and
//! [`System`](super::System); nothing here fails: what cannot be read is left out of the
//! facts, and the analysis says so.

mod block;
mod filesystem;
#[cfg(test)]
mod foreign_tests;
pub mod infiniband;
pub(crate) mod network;
pub(crate) mod pci;
mod transport;

use super::Machine;
use super::facts::{DeviceTargetFacts, FileFacts, PathFacts, RouteFacts};
use crate::result::{TargetInfo, TargetKind};
use std::path::Path;

/// How deep a stack may go before discovery stops following it (a loop over a file on a
/// loop over a file…).
pub const MAX_DEPTH: u32 = 16;

/// Gathers the facts of the path of `info` on `machine`. `server` is the host and port of a
/// network target reached over TCP (the caller reads them from the URL); `None` for local
/// targets and Unix sockets.
pub fn gather(info: &TargetInfo, server: Option<(&str, u16)>, machine: &Machine) -> PathFacts {
    let mut gatherer = Gatherer::new(machine);
    match info.kind {
        TargetKind::File => {
            let file = Path::new(&info.path);
            let state = machine.system().file_state(file, true);
            let filesystem = gatherer.filesystem(
                file,
                state.directory.as_deref(),
                info.device.as_deref(),
                info.filesystem.as_deref(),
                0,
            );
            PathFacts::File(Box::new(FileFacts {
                exists: state.exists,
                allocated_bytes: state.allocated_bytes.filter(|_| state.exists),
                head_zero: state.head_zero.filter(|_| state.exists),
                filesystem,
            }))
        }
        TargetKind::BlockDevice => {
            let state = machine.system().file_state(Path::new(&info.path), true);
            PathFacts::BlockDevice(Box::new(DeviceTargetFacts {
                device: info
                    .device
                    .as_deref()
                    .map(|name| gatherer.block_device(name, 0)),
                head_zero: state.head_zero,
            }))
        }
        TargetKind::Nbd | TargetKind::Iscsi | TargetKind::Nfs | TargetKind::Smb => {
            PathFacts::Network(server.map(|(host, port)| gatherer.route(host, port, 0)))
        }
    }
}

/// The route to `host:port` on `machine` and the interfaces it leaves through.
pub fn gather_route(host: &str, port: u16, machine: &Machine) -> RouteFacts {
    Gatherer::new(machine).route(host, port, 0)
}

/// Walks one target's path, remembering what it has seen so that loops end.
struct Gatherer<'m> {
    machine: &'m Machine,
    visited: Vec<String>,
}

impl<'m> Gatherer<'m> {
    fn new(machine: &'m Machine) -> Self {
        Gatherer {
            machine,
            visited: Vec::new(),
        }
    }

    /// Whether `key` was walked already; marks it walked.
    fn first_visit(&mut self, key: &str) -> bool {
        if self.visited.iter().any(|seen| seen == key) {
            return false;
        }
        self.visited.push(key.to_string());
        true
    }

    fn view(&self) -> &'m super::HostView {
        self.machine.view()
    }
}
