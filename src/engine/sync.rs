//! The sync engine: pread / pwrite, one request at a time.
//!
//! A queue depth above 1 is not silently ignored (as fio's psync does): the runner maps it onto
//! workers and says so, so this engine is only ever opened with one slot.

use super::buffer::BufferPool;
use super::{Completion, Engine, EngineError, EngineFile, IoRequest};
use crate::result::{Capabilities, Direction};
use std::os::unix::fs::FileExt;

/// See the module documentation.
pub struct SyncEngine {
    file: EngineFile,
    buffers: BufferPool,
    capabilities: Capabilities,
    done: Option<Completion>,
}

impl SyncEngine {
    /// A sync engine on `file` with one buffer of `buffer_size` bytes.
    pub fn new(file: EngineFile, buffer_size: usize) -> Self {
        SyncEngine {
            file,
            buffers: BufferPool::new(1, buffer_size),
            capabilities: Capabilities {
                max_queue_depth: 1,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
            },
            done: None,
        }
    }
}

impl Engine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        self.buffers.slot_mut(slot)
    }

    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        assert!(
            self.done.is_none(),
            "sync engine holds one request at a time"
        );
        let length = request.length as usize;
        let outcome = match request.direction {
            Direction::Read => self
                .file
                .read_at(&mut self.buffers.slot_mut(0)[..length], request.offset),
            Direction::Write => self
                .file
                .write_at(&self.buffers.slot(0)[..length], request.offset),
        };
        let result = match outcome {
            Ok(bytes) => bytes as i64,
            Err(error) => -(error.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        self.done = Some(Completion {
            slot: request.slot,
            result,
        });
        Ok(())
    }

    fn flush(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn reap(
        &mut self,
        _min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        match (self.done.take(), completions.first_mut()) {
            (Some(done), Some(first)) => {
                *first = done;
                Ok(1)
            }
            (done, _) => {
                self.done = done;
                Ok(0)
            }
        }
    }

    fn sync_data(&mut self) -> Result<(), EngineError> {
        self.file
            .sync_data()
            .map_err(|source| EngineError::Operation {
                engine: "sync",
                operation: "fdatasync",
                source,
            })
    }
}
