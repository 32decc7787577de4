//! The iSCSI engine (placeholder).

use super::network::NetworkVolumeInfo;
use super::{Capabilities, Completion, Engine, EngineError, EngineOptions, IoRequest};
use crate::target::network::NetworkTarget;

fn unavailable() -> EngineError {
    EngineError::Setup {
        engine: "iscsi",
        source: std::io::Error::new(std::io::ErrorKind::Unsupported, "not implemented yet"),
    }
}

/// Probes an iSCSI logical unit.
pub fn probe(target: &NetworkTarget) -> Result<NetworkVolumeInfo, EngineError> {
    let _ = target;
    Err(unavailable())
}

/// The iSCSI engine.
pub struct IscsiEngine {
    capabilities: Capabilities,
}

impl IscsiEngine {
    /// Connects to `target`.
    pub fn open(target: &NetworkTarget, options: &EngineOptions) -> Result<Self, EngineError> {
        let _ = (target, options);
        Err(unavailable())
    }
}

impl Engine for IscsiEngine {
    fn name(&self) -> &'static str {
        "iscsi"
    }
    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }
    fn buffer_mut(&mut self, _slot: usize) -> &mut [u8] {
        unimplemented!()
    }
    fn submit(&mut self, _request: IoRequest) -> Result<(), EngineError> {
        Err(unavailable())
    }
    fn flush(&mut self) -> Result<(), EngineError> {
        Err(unavailable())
    }
    fn reap(&mut self, _min: usize, _out: &mut [Completion]) -> Result<usize, EngineError> {
        Err(unavailable())
    }
    fn sync_data(&mut self) -> Result<(), EngineError> {
        Err(unavailable())
    }
}
