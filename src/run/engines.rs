//! Opening the engine a worker uses: a local engine on an open file, or the protocol engine of
//! a network target.

use super::worker::{WorkerLinks, WorkerOutcome, WorkerPlan, run_worker};
use crate::engine::file_operations::{FileOperation, FileOperationEngine};
use crate::engine::files_on_demand::FilesOnDemand;
use crate::engine::io_uring::IoUringEngine;
use crate::engine::iscsi::IscsiEngine;
use crate::engine::nbd::NbdEngine;
use crate::engine::nfs::NfsEngine;
use crate::engine::nfs::nfs3::Stability;
use crate::engine::null::{InjectedDelay, NullEngine};
use crate::engine::smb::SmbEngine;
use crate::engine::sync::SyncEngine;
use crate::engine::{Engine, EngineError, EngineOptions};
use crate::host::clock::{Clock, Ticks};
use crate::result::{Capabilities, ConnectionReport, EngineKind, WriteStability};
use crate::targets::network_target::NetworkTarget;
use std::fs::File;

/// What an engine is opened on.
pub enum Endpoint<'a> {
    /// Local files or block devices (at least one), already opened with the right flags;
    /// requests name them by their index here.
    Files(Vec<File>),
    /// Local regular files opened as requests come to them, a bound of them at once (the
    /// sync engine over pread/pwrite, mappings or a pipe, and io_uring: fio's `openfiles`).
    FilesOnDemand(FilesOnDemand),
    /// A network volume (the engine makes its own connections).
    Network(&'a NetworkTarget),
    /// Paths of files or directories, not opened (the file-operation engines).
    Paths(Vec<std::path::PathBuf>),
    /// Nothing (the null engine).
    Nothing,
}

/// An engine of any kind, so a worker can be run on the concrete type (no dynamic dispatch on
/// the hot path).
pub enum AnyEngine {
    /// io_uring.
    IoUring(Box<IoUringEngine>),
    /// pread/pwrite.
    Sync(SyncEngine),
    /// No I/O.
    Null(NullEngine),
    /// NBD client.
    Nbd(Box<NbdEngine>),
    /// iSCSI initiator.
    Iscsi(Box<IscsiEngine>),
    /// NFSv3 or NFSv4.1 client.
    Nfs(Box<NfsEngine>),
    /// SMB2/3 client.
    Smb(Box<SmbEngine>),
    /// One file operation (create, look-up, removal) per I/O.
    FileOperations(FileOperationEngine),
}

fn wrong_endpoint(engine: &'static str, what: &str) -> EngineError {
    EngineError::Setup {
        engine,
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("the {engine} engine cannot work on {what}"),
        ),
    }
}

impl AnyEngine {
    /// Opens an engine of `kind` on `endpoint`.
    pub fn open(
        kind: EngineKind,
        endpoint: Endpoint<'_>,
        options: &EngineOptions,
        delay: Option<InjectedDelay>,
        clock: &Clock,
    ) -> Result<AnyEngine, EngineError> {
        Ok(match (kind, endpoint) {
            (EngineKind::Null, _) => AnyEngine::Null(NullEngine::new(
                options.queue_depth,
                options.buffer_size,
                delay,
                clock.clone(),
            )),
            (EngineKind::IoUring, Endpoint::Files(files)) => {
                AnyEngine::IoUring(Box::new(IoUringEngine::open_files(files, options)?))
            }
            (EngineKind::Sync, Endpoint::Files(files)) if !files.is_empty() => AnyEngine::Sync(
                SyncEngine::with_data_path(files, options.buffer_size, options.data_path)?,
            ),
            (EngineKind::Sync, Endpoint::FilesOnDemand(files)) if files.count() > 0 => {
                AnyEngine::Sync(SyncEngine::on_demand(
                    files,
                    options.buffer_size,
                    options.data_path,
                )?)
            }
            (EngineKind::IoUring, Endpoint::FilesOnDemand(files)) => {
                AnyEngine::IoUring(Box::new(IoUringEngine::on_demand(files, options)?))
            }
            (kind, Endpoint::Paths(paths)) if kind.is_file_operation() => {
                let operation = FileOperation::of(kind).expect("a file-operation engine");
                AnyEngine::FileOperations(FileOperationEngine::new(
                    operation,
                    options.stat_call,
                    &paths,
                    options.buffer_size,
                )?)
            }
            (EngineKind::Nbd, Endpoint::Network(target)) => {
                AnyEngine::Nbd(Box::new(NbdEngine::open(target, options)?))
            }
            (EngineKind::Iscsi, Endpoint::Network(target)) => {
                AnyEngine::Iscsi(Box::new(IscsiEngine::open(target, options)?))
            }
            (EngineKind::Nfs, Endpoint::Network(target)) => {
                AnyEngine::Nfs(Box::new(NfsEngine::open_target(target, options)?))
            }
            (EngineKind::Smb, Endpoint::Network(target)) => {
                AnyEngine::Smb(Box::new(SmbEngine::open_target(target, options)?))
            }
            (kind, Endpoint::Network(target)) => {
                return Err(wrong_endpoint(kind.name(), &target.to_string()));
            }
            (kind, _) => return Err(wrong_endpoint(kind.name(), "a local file")),
        })
    }

    /// Whether dropping the engine does work of its own on the target (a `filecreate` engine
    /// marks the files it made as iopath's): such an engine is dropped once every worker of
    /// its test has ended, so that this work falls in no worker's measured time.
    pub fn finishes_on_drop(&self) -> bool {
        matches!(self, AnyEngine::FileOperations(_))
    }

    /// The engine as the trait.
    pub fn as_engine(&mut self) -> &mut dyn Engine {
        match self {
            AnyEngine::IoUring(engine) => engine.as_mut(),
            AnyEngine::Sync(engine) => engine,
            AnyEngine::Null(engine) => engine,
            AnyEngine::Nbd(engine) => engine.as_mut(),
            AnyEngine::Iscsi(engine) => engine.as_mut(),
            AnyEngine::Nfs(engine) => engine.as_mut(),
            AnyEngine::Smb(engine) => engine.as_mut(),
            AnyEngine::FileOperations(engine) => engine,
        }
    }

    /// How this engine's writes are made durable when it speaks a file protocol (NFS):
    /// `FILE_SYNC` on each, or `UNSTABLE` with a COMMIT at the end when `commit_at_end`
    /// (`--fsync-at-end`), or without; `None` for other engines.
    pub fn write_stability(&self, commit_at_end: bool) -> Option<WriteStability> {
        match self {
            AnyEngine::Nfs(engine) => Some(match (engine.stability(), commit_at_end) {
                (Stability::FileSync | Stability::DataSync, _) => WriteStability::FileSync,
                (Stability::Unstable, true) => WriteStability::UnstableCommit,
                (Stability::Unstable, false) => WriteStability::Unstable,
            }),
            _ => None,
        }
    }

    /// A warning when an NFSv4.1 server granted fewer session slots than the queue depth
    /// asked for (requests beyond them wait for a slot: slot stalls); `None` otherwise.
    pub fn slot_warning(&self, target: &str) -> Option<String> {
        let AnyEngine::Nfs(engine) = self else {
            return None;
        };
        let slots = engine.slots()?;
        (slots.granted < slots.wanted).then(|| {
            format!(
                "{target}: the server granted {} NFSv4.1 session slots for a queue depth of {}: \
                 at most {} requests are in flight, the others wait for a free slot",
                slots.granted, slots.wanted, slots.granted
            )
        })
    }

    /// How this engine's connections are used (`--connections`, `asked` of them): NBD and
    /// SMB; `None` for other engines.
    pub fn connections(&self, asked: u32) -> Option<ConnectionReport> {
        match self {
            AnyEngine::Nbd(engine) => Some(ConnectionReport {
                per_worker: engine.connection_count() as u32,
                asked,
                multichannel: None,
                note: engine.connection_note().map(str::to_string),
            }),
            AnyEngine::Smb(engine) => {
                let channels = engine.channels();
                Some(ConnectionReport {
                    per_worker: channels.count,
                    asked: channels.asked,
                    multichannel: Some(channels.multichannel),
                    note: channels.note(),
                })
            }
            _ => None,
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
            AnyEngine::Nbd(engine) => run_worker(engine.as_mut(), plan, links, clock, start),
            AnyEngine::Iscsi(engine) => run_worker(engine.as_mut(), plan, links, clock, start),
            AnyEngine::Nfs(engine) => run_worker(engine.as_mut(), plan, links, clock, start),
            AnyEngine::Smb(engine) => run_worker(engine.as_mut(), plan, links, clock, start),
            AnyEngine::FileOperations(engine) => run_worker(engine, plan, links, clock, start),
        }
    }
}
