//! The engine a test ran with, what it can do, and the direction of an I/O.

use serde::{Deserialize, Serialize};

/// The engine in effect for a test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineReport {
    /// Engine name.
    pub name: String,
    /// What it did.
    pub capabilities: Capabilities,
    /// How a file protocol's writes were made durable (NFS: `FILE_SYNC` on each, or
    /// `UNSTABLE` with or without a COMMIT at the end); `None` for other engines and for
    /// tests that do not write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_stability: Option<WriteStability>,
    /// How each worker's connections to a network server were used (`--connections`):
    /// recorded for NBD and SMB, `None` for other engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<ConnectionReport>,
}

/// How each worker's connections to a network server were used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionReport {
    /// Connections per worker in use.
    pub per_worker: u32,
    /// Connections per worker asked for (`--connections`).
    pub asked: u32,
    /// SMB: the connections are channels bound to one session (multichannel), not
    /// independent sessions; `None` for NBD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multichannel: Option<bool>,
    /// Why the connections are not what was asked or not one session, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How a file protocol's writes were made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteStability {
    /// Every write was durable when the server answered (NFS `FILE_SYNC`, `--sync`).
    FileSync,
    /// Writes were `UNSTABLE` (the server may cache them) and one COMMIT at the end made them
    /// durable (`--fsync-at-end`).
    UnstableCommit,
    /// Writes were `UNSTABLE` and never committed: the server may have held them in memory.
    Unstable,
}

impl WriteStability {
    /// As written in reports: `FILE_SYNC`, `UNSTABLE+COMMIT`, `UNSTABLE`.
    pub fn label(self) -> &'static str {
        match self {
            WriteStability::FileSync => "FILE_SYNC",
            WriteStability::UnstableCommit => "UNSTABLE+COMMIT",
            WriteStability::Unstable => "UNSTABLE",
        }
    }
}

/// Direction of one I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Data from the target into memory.
    Read,
    /// Data from memory to the target.
    Write,
    /// The target drops the data of a range (a discard: BLKDISCARD, a punched hole, NBD's
    /// TRIM, SCSI UNMAP); no data moves.
    Trim,
}

impl Direction {
    /// `read`, `write` or `trim` (as in results and fio's output).
    pub fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Trim => "trim",
        }
    }

    /// Whether this I/O changes what the target holds (a write or a trim): the safety rules of
    /// writes apply to both.
    pub fn modifies(self) -> bool {
        !matches!(self, Direction::Read)
    }
}

/// What an engine can do, as typed fields rather than flag bits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Highest queue depth one instance keeps in flight.
    pub max_queue_depth: u32,
    /// Buffers are registered with the kernel (io_uring fixed buffers).
    pub registered_buffers: bool,
    /// The file is registered with the kernel (io_uring fixed files).
    pub registered_files: bool,
    /// The engine really transfers data (false only for the null engine).
    pub performs_io: bool,
    /// Handing requests over (its flush) and completing them are separate steps, so that a
    /// submission latency (fio's `slat`) can be measured: io_uring, NBD (its flush returns when
    /// every request is on the socket) and null; not the sync engines, which do each I/O inside
    /// the call that submits it, nor (yet) iSCSI, NFS and SMB. Left out of the JSON when false,
    /// so results written before it read and write back unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub separates_submission: bool,
}

/// The engines iopath offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// Linux io_uring, the default where the kernel allows it.
    IoUring,
    /// pread/pwrite, one I/O at a time per worker.
    Sync,
    /// No I/O at all: iopath's own cost per I/O.
    Null,
    /// iopath's NBD client (chosen by an `nbd://` target).
    Nbd,
    /// iopath's iSCSI initiator (chosen by an `iscsi://` target).
    Iscsi,
    /// iopath's NFSv3 client (chosen by an `nfs://` target).
    Nfs,
    /// iopath's SMB2/3 client (chosen by an `smb://` target).
    Smb,
    /// Each I/O creates one file (`open` with `O_CREAT`, then `close`): fio's `filecreate`.
    #[serde(rename = "filecreate")]
    FileCreate,
    /// Each I/O looks one file up (`stat`, `lstat` or `statx`): fio's `filestat`.
    #[serde(rename = "filestat")]
    FileStat,
    /// Each I/O removes one file iopath created (`unlink`): fio's `filedelete`.
    #[serde(rename = "filedelete")]
    FileDelete,
    /// Each I/O creates one directory (`mkdir`): fio's `dircreate`.
    #[serde(rename = "dircreate")]
    DirCreate,
    /// Each I/O looks one directory up: fio's `dirstat`.
    #[serde(rename = "dirstat")]
    DirStat,
    /// Each I/O removes one directory iopath created (`rmdir`): fio's `dirdelete`.
    #[serde(rename = "dirdelete")]
    DirDelete,
}
