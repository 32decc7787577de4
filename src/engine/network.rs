//! The probe of a network volume before the run: the dispatch to the probe of a target's
//! protocol (what it finds is a [`NetworkVolumeInfo`]; how long it may wait, and what later
//! connections must find, are in [`super::volume`]).

use super::volume::NetworkVolumeInfo;
use super::{EngineError, iscsi, nbd};
use crate::engine::network_target::NetworkTarget;
use std::time::Duration;

/// Connects to `target`, learns its geometry and reads its first bytes, waiting at most
/// `timeout` on the server at each step (see [`super::volume::DEFAULT_NET_TIMEOUT`]).
pub fn probe(target: &NetworkTarget, timeout: Duration) -> Result<NetworkVolumeInfo, EngineError> {
    match target {
        NetworkTarget::Nbd { .. } => nbd::probe(target, timeout),
        NetworkTarget::Iscsi { .. } => iscsi::probe(target, timeout),
    }
}
