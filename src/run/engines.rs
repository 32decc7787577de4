//! Opening the engine a worker uses, with an announced fallback from io_uring to sync.

use super::worker::{WorkerLinks, WorkerOutcome, WorkerPlan, run_worker};
use crate::clock::{Clock, Ticks};
use crate::engine::io_uring::IoUringEngine;
use crate::engine::null::{InjectedDelay, NullEngine};
use crate::engine::sync::SyncEngine;
use crate::engine::{Capabilities, Engine, EngineError, EngineKind, EngineOptions};
use std::fs::File;

/// An engine of any kind, so a worker can be run on the concrete type (no dynamic dispatch on
/// the hot path).
pub enum AnyEngine {
    /// io_uring.
    IoUring(Box<IoUringEngine>),
    /// pread/pwrite.
    Sync(SyncEngine),
    /// No I/O.
    Null(NullEngine),
}

impl AnyEngine {
    /// Opens an engine of `kind` on `file` (ignored by the null engine).
    pub fn open(
        kind: EngineKind,
        file: File,
        options: &EngineOptions,
        delay: Option<InjectedDelay>,
        clock: &Clock,
    ) -> Result<AnyEngine, EngineError> {
        Ok(match kind {
            EngineKind::IoUring => {
                AnyEngine::IoUring(Box::new(IoUringEngine::open(file, options)?))
            }
            EngineKind::Sync => AnyEngine::Sync(SyncEngine::new(file, options.buffer_size)),
            EngineKind::Null => AnyEngine::Null(NullEngine::new(
                options.queue_depth,
                options.buffer_size,
                delay,
                clock.clone(),
            )),
        })
    }

    /// The engine as the trait.
    pub fn as_engine(&mut self) -> &mut dyn Engine {
        match self {
            AnyEngine::IoUring(engine) => engine.as_mut(),
            AnyEngine::Sync(engine) => engine,
            AnyEngine::Null(engine) => engine,
        }
    }

    /// Name and capabilities.
    pub fn describe(&mut self) -> (&'static str, Capabilities) {
        let engine = self.as_engine();
        (engine.name(), engine.capabilities().clone())
    }

    /// Runs a worker on this engine.
    pub fn run(
        &mut self,
        plan: WorkerPlan,
        links: WorkerLinks<'_>,
        clock: &Clock,
        start: Ticks,
    ) -> WorkerOutcome {
        match self {
            AnyEngine::IoUring(engine) => run_worker(engine.as_mut(), plan, links, clock, start),
            AnyEngine::Sync(engine) => run_worker(engine, plan, links, clock, start),
            AnyEngine::Null(engine) => run_worker(engine, plan, links, clock, start),
        }
    }
}
