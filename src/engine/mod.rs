//! How I/O is issued: one small trait, [`Engine`], in the spirit of fio's queue / commit /
//! getevents, and one file per engine.
//!
//! An engine owns its per-slot buffers (sized to the queue depth before the clock starts) and,
//! for local targets, the open file. The runner places a request into a free slot with
//! [`Engine::submit`], makes queued requests reach the device with [`Engine::flush`], and collects
//! finished ones into a caller-owned slice with [`Engine::reap`]. A slot is busy from its submit to
//! the completion that names it; the runner never reuses a busy slot, so no engine allocates per
//! I/O. A local engine may hold several files (a worker moving over a job's files, as fio's
//! one thread per job does); each request names its file, and protocol engines hold one
//! volume (file 0).
//!
//! ```
//! use iopath::host::clock::Clock;
//! use iopath::engine::{Completion, Engine, IoRequest, null::NullEngine};
//! use iopath::result::Direction;
//! let mut engine = NullEngine::new(4, 4096, None, Clock::new());
//! engine.submit(IoRequest { file: 0, slot: 0, direction: Direction::Read, offset: 0, length: 4096 }).unwrap();
//! engine.flush().unwrap();
//! let mut done = [Completion::default(); 4];
//! assert_eq!(engine.reap(1, &mut done).unwrap(), 1);
//! assert_eq!(done[0].result, 4096);
//! ```

pub mod buffer;
#[cfg(test)]
mod conformance_tests;
pub mod data_path;
pub mod file_operations;
pub mod files_on_demand;
pub mod io_uring;
pub mod iscsi;
pub mod nbd;
pub mod network;
pub mod nfs;
pub mod null;
pub mod pipelined;
pub mod smb;
pub mod stop;
pub mod sync;
pub mod sys;
pub mod trim;
pub mod volume;

pub use stop::StopSignal;

use crate::result::{Capabilities, Direction, EngineKind};
use std::fs::File;
use std::str::FromStr;
use std::time::Duration;
use volume::NetworkVolumeInfo;
use volume::VolumeChange;

/// One request placed into a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    /// Slot (and buffer) index, below the queue depth.
    pub slot: u32,
    /// Which of the engine's files (0 for an engine on one file or volume): a worker that
    /// moves over several files (fio's `nrfiles`) opens one engine on all of them.
    pub file: u32,
    /// Read, write or trim (a trim moves no data: its slot's buffer is not used).
    pub direction: Direction,
    /// Byte offset in the target.
    pub offset: u64,
    /// Length in bytes (at most the buffer size).
    pub length: u32,
}

/// One finished request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    /// The slot given at submit.
    pub slot: u32,
    /// Bytes transferred (for a trim that succeeded, its whole length), or a negative errno.
    pub result: i64,
}

/// Errors of an engine as a whole (a failed single I/O is a [`Completion`] with a negative
/// result instead).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine could not be set up.
    #[error("{engine}: cannot set up: {source}")]
    Setup {
        /// Engine name.
        engine: &'static str,
        /// Cause.
        source: std::io::Error,
    },
    /// Submitting or reaping failed for the engine as a whole.
    #[error("{engine}: {operation} failed: {source}")]
    Operation {
        /// Engine name.
        engine: &'static str,
        /// What was being done.
        operation: &'static str,
        /// Cause.
        source: std::io::Error,
    },
    /// The run was stopping and the server had not answered every request in flight within
    /// [`volume::STOP_GRACE`]: they were abandoned (the engine cannot be used any more).
    #[error("{engine}: the run stopped{}", abandoned_to(*.unanswered, .server))]
    Stopped {
        /// Engine name.
        engine: &'static str,
        /// The server, in words.
        server: String,
        /// Requests in flight when the engine gave up.
        unanswered: usize,
    },
    /// A connection found the network volume different from what the probe before the run
    /// found (the server changed it, or answers connections differently).
    #[error(
        "{engine}: {server}: connection {connection} found the volume changed since the probe ({}); refusing to run on it",
        volume::describe_changes(changes)
    )]
    VolumeChanged {
        /// Engine name.
        engine: &'static str,
        /// The server, in words.
        server: String,
        /// Which connection (1 = the first of the engine).
        connection: usize,
        /// What differs.
        changes: Vec<VolumeChange>,
    },
}

/// What a stop left with `server`: the requests it abandoned, or the connection it gave up.
fn abandoned_to(unanswered: usize, server: &str) -> String {
    if unanswered == 0 {
        format!(" with no request left unanswered by {server}")
    } else {
        format!("; {unanswered} requests still unanswered by {server} were abandoned")
    }
}

impl EngineError {
    /// Whether this error only says that the run was stopping (not a failure of the target).
    pub fn is_stop(&self) -> bool {
        matches!(self, EngineError::Stopped { .. })
    }

    /// Refuses an engine's first connection when its volume differs from what the probe found
    /// (`expected`, when the run has one): `found` writes what this connection read (its size,
    /// its block size) over a copy of the probed description; `server` names the server.
    pub fn unless_same_volume(
        engine: &'static str,
        server: impl FnOnce() -> String,
        expected: Option<&NetworkVolumeInfo>,
        found: impl FnOnce(&mut NetworkVolumeInfo),
    ) -> Result<(), EngineError> {
        let Some(expected) = expected else {
            return Ok(());
        };
        let mut now = expected.without_head();
        found(&mut now);
        let changes = now.changes_from(expected);
        if changes.is_empty() {
            return Ok(());
        }
        Err(EngineError::VolumeChanged {
            engine,
            server: server(),
            connection: 1,
            changes,
        })
    }
}

/// The seam every engine implements.
pub trait Engine: Send {
    /// Short name as used on the command line.
    fn name(&self) -> &'static str;
    /// What this instance does and has.
    fn capabilities(&self) -> &Capabilities;
    /// The buffer of `slot` (for filling write data before the clock starts).
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8];
    /// Queues `request` in its slot. It may not reach the device before [`Engine::flush`].
    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError>;
    /// Hands every queued request to the device.
    fn flush(&mut self) -> Result<(), EngineError>;
    /// Waits for at least `min_completions` finished requests (0: do not wait) and writes up to
    /// `completions.len()` of them; returns how many were written.
    fn reap(
        &mut self,
        min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError>;
    /// Makes written data durable (fdatasync or the protocol's flush).
    fn sync_data(&mut self) -> Result<(), EngineError>;
    /// Drops the page cache's clean pages of file `file` (`posix_fadvise(POSIX_FADV_DONTNEED)`
    /// over the whole file), as fio does at each pass of a timed buffered job with
    /// `invalidate=1`. Advice only; an engine with no local file of that index, or whose file
    /// is not open now, does nothing.
    fn drop_cached_pages(&mut self, file: u32) -> std::io::Result<()> {
        let _ = file;
        Ok(())
    }
}

impl EngineKind {
    /// Name as used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
            EngineKind::Nbd => "nbd",
            EngineKind::Iscsi => "iscsi",
            EngineKind::Nfs => "nfs",
            EngineKind::Smb => "smb",
            EngineKind::FileCreate => "filecreate",
            EngineKind::FileStat => "filestat",
            EngineKind::FileDelete => "filedelete",
            EngineKind::DirCreate => "dircreate",
            EngineKind::DirStat => "dirstat",
            EngineKind::DirDelete => "dirdelete",
        }
    }

    /// Whether this engine reaches storage over the network (chosen by the target's URL).
    pub fn is_protocol(self) -> bool {
        matches!(
            self,
            EngineKind::Nbd | EngineKind::Iscsi | EngineKind::Nfs | EngineKind::Smb
        )
    }

    /// Whether each I/O of this engine is one operation on a file or directory (create,
    /// look up, remove) that moves no data: [`file_operations`].
    pub fn is_file_operation(self) -> bool {
        file_operations::FileOperation::of(self).is_some()
    }

    /// Every engine, for help texts and messages.
    pub const ALL: [EngineKind; 13] = [
        EngineKind::IoUring,
        EngineKind::Sync,
        EngineKind::Null,
        EngineKind::Nbd,
        EngineKind::Iscsi,
        EngineKind::Nfs,
        EngineKind::Smb,
        EngineKind::FileCreate,
        EngineKind::FileStat,
        EngineKind::FileDelete,
        EngineKind::DirCreate,
        EngineKind::DirStat,
        EngineKind::DirDelete,
    ];
}

/// An engine name none of those known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown engine '{name}' (choose one of: io_uring, sync, null; filecreate, filestat, \
     filedelete, dircreate, dirstat, dirdelete (one file operation per I/O); nbd, iscsi, nfs and \
     smb come with nbd://, iscsi://, nfs:// and smb:// targets)"
)]
pub struct UnknownEngine {
    /// The name as given.
    pub name: String,
}

impl FromStr for EngineKind {
    type Err = UnknownEngine;
    fn from_str(text: &str) -> Result<Self, UnknownEngine> {
        match text {
            "io_uring" | "io-uring" | "uring" => Ok(EngineKind::IoUring),
            "sync" | "psync" => Ok(EngineKind::Sync),
            "null" => Ok(EngineKind::Null),
            "nbd" => Ok(EngineKind::Nbd),
            "iscsi" | "libiscsi" => Ok(EngineKind::Iscsi),
            "nfs" => Ok(EngineKind::Nfs),
            "smb" => Ok(EngineKind::Smb),
            "filecreate" => Ok(EngineKind::FileCreate),
            "filestat" => Ok(EngineKind::FileStat),
            "filedelete" => Ok(EngineKind::FileDelete),
            "dircreate" => Ok(EngineKind::DirCreate),
            "dirstat" => Ok(EngineKind::DirStat),
            "dirdelete" => Ok(EngineKind::DirDelete),
            other => Err(UnknownEngine {
                name: other.to_string(),
            }),
        }
    }
}

/// The reap of an engine that holds one request at a time and completes it inside its
/// submit: moves `done` into the first of `completions` (when both are there) and says how
/// many it wrote.
pub(crate) fn hand_over_one(
    done: &mut Option<Completion>,
    completions: &mut [Completion],
) -> usize {
    match (done.take(), completions.first_mut()) {
        (Some(finished), Some(first)) => {
            *first = finished;
            1
        }
        (finished, _) => {
            *done = finished;
            0
        }
    }
}

/// The refusal of a request whose file index is not one of the files `engine` was opened on.
pub(crate) fn not_one_of_the_files(engine: &'static str) -> EngineError {
    EngineError::Operation {
        engine,
        operation: "submit",
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "file is not one of the engine's",
        ),
    }
}

/// Everything an engine needs to be opened, decided before the clock starts.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Slots (requests in flight).
    pub queue_depth: u32,
    /// Size of each slot's buffer: the largest block size of the workload.
    pub buffer_size: usize,
    /// Try to register buffers and the file with the kernel (io_uring).
    pub register: bool,
    /// Every write must be durable when it completes (O_DSYNC for files, FUA for protocol
    /// engines).
    pub write_through: bool,
    /// Connections per worker for protocol engines (at least 1).
    pub connections: u32,
    /// Protocol engines: the longest wait on the server, to connect and finish the handshake
    /// (one deadline for all of it) and for each reply.
    pub net_timeout: Duration,
    /// Protocol engines: raised when the run stops; requests in flight then get
    /// [`volume::STOP_GRACE`] to be answered instead of the whole timeout.
    pub stop: StopSignal,
    /// Protocol engines: what the probe found about the volume (its head left empty); every
    /// connection that finds something else is refused ([`EngineError::VolumeChanged`]).
    pub expected_volume: Option<NetworkVolumeInfo>,
    /// io_uring: every this-many-th submission is flagged to be performed asynchronously
    /// (`IOSQE_ASYNC`, fio's `force_async`); 0: none.
    pub force_async_every: u32,
    /// Sync engine: how each request's bytes move (pread/pwrite, a mapping or a pipe).
    pub data_path: crate::result::DataPath,
    /// Look-up engines (`filestat`, `dirstat`): the system call of each I/O.
    pub stat_call: crate::result::StatCall,
}

impl EngineOptions {
    /// Options for `queue_depth` slots of `buffer_size` bytes: registration tried, no write
    /// through, one connection, [`volume::DEFAULT_NET_TIMEOUT`], no stop signal of the run's,
    /// no expected volume and no forced asynchronous submissions.
    pub fn new(queue_depth: u32, buffer_size: usize) -> Self {
        EngineOptions {
            queue_depth,
            buffer_size,
            register: true,
            write_through: false,
            connections: 1,
            net_timeout: volume::DEFAULT_NET_TIMEOUT,
            stop: StopSignal::new(),
            expected_volume: None,
            force_async_every: 0,
            data_path: crate::result::DataPath::Pread,
            stat_call: crate::result::StatCall::Stat,
        }
    }
}

/// The file an engine works on, already opened with the right flags (O_DIRECT, O_DSYNC).
pub type EngineFile = File;

/// Result of probing whether io_uring can be used here.
pub fn io_uring_available() -> Result<(), std::io::Error> {
    io_uring::probe()
}
