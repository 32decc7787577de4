//! The io_uring engine (placeholder until implemented): reports io_uring as unavailable.

use super::{Capabilities, Completion, Engine, EngineError, EngineFile, EngineOptions, IoRequest};

/// Whether io_uring can be used on this kernel.
pub fn probe() -> Result<(), std::io::Error> {
    Err(std::io::Error::from_raw_os_error(libc::ENOSYS))
}

/// io_uring engine.
pub struct IoUringEngine {
    capabilities: Capabilities,
}

impl IoUringEngine {
    /// Opens an io_uring engine on `file`.
    pub fn open(_file: EngineFile, _options: &EngineOptions) -> Result<Self, EngineError> {
        Err(EngineError::Setup {
            engine: "io_uring",
            source: std::io::Error::from_raw_os_error(libc::ENOSYS),
        })
    }
}

impl Engine for IoUringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }
    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }
    fn buffer_mut(&mut self, _slot: usize) -> &mut [u8] {
        unimplemented!()
    }
    fn submit(&mut self, _request: IoRequest) -> Result<(), EngineError> {
        unimplemented!()
    }
    fn flush(&mut self) -> Result<(), EngineError> {
        unimplemented!()
    }
    fn reap(&mut self, _min: usize, _completions: &mut [Completion]) -> Result<usize, EngineError> {
        unimplemented!()
    }
    fn sync_data(&mut self) -> Result<(), EngineError> {
        unimplemented!()
    }
}
