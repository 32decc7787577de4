//! The dispatch of a network target to its protocol engine's probe (one short look at the
//! volume before the run; what it finds is a [`NetworkVolumeInfo`]).

use super::volume::NetworkVolumeInfo;
use super::{EngineError, iscsi, nbd};
use crate::engine::network_target::NetworkTarget;

/// Connects to `target`, learns its geometry and reads its first bytes.
pub fn probe(target: &NetworkTarget) -> Result<NetworkVolumeInfo, EngineError> {
    match target {
        NetworkTarget::Nbd { .. } => nbd::probe(target),
        NetworkTarget::Iscsi { .. } => iscsi::probe(target),
    }
}
