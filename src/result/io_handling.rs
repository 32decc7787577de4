//! How a job's files are opened and its requests handed to the kernel, beyond the access
//! pattern: files created when opened (fio's `create_on_open`), the access-pattern hint given
//! to the kernel (fio's `fadvise_hint`), the job's cached pages dropped (fio's `invalidate`), io_uring submissions forced to run asynchronously
//! (fio's `force_async`), and overlapping I/Os kept from being in flight together (fio's
//! `serialize_overlap`).
//!
//! ```
//! use iopath::result::{AccessHint, IoHandling};
//! assert!(IoHandling::default().is_default());
//! assert_eq!(serde_json::to_string(&AccessHint::ByPattern).unwrap(), "\"by_pattern\"");
//! ```

use serde::{Deserialize, Serialize};

/// See the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IoHandling {
    /// Files the job would create are not laid out and filled before the run: each is created
    /// empty when opened and the job's writes extend it (fio's `create_on_open=1`).
    pub create_on_open: bool,
    /// The hint given to the kernel (`posix_fadvise`) on each file the job opens.
    pub access_hint: AccessHint,
    /// Before the job starts, the cached pages of its region of each file are dropped
    /// (`POSIX_FADV_DONTNEED`, fio's `invalidate=1`): only the job's files, without root.
    pub invalidate_cache: bool,
    /// io_uring: every this-many-th submission is performed asynchronously by the kernel
    /// (`IOSQE_ASYNC`, fio's `force_async=N`); 0: none.
    pub force_async_every: u32,
    /// How the sync engine moves each request's bytes (fio's `mmap` and `splice` engines).
    pub data_path: DataPath,
    /// An I/O that overlaps one of the worker's I/Os in flight waits until that one has
    /// completed (fio's `serialize_overlap`), whatever their directions.
    pub serialize_overlap: bool,
    /// The system call of the look-up engines (`filestat`, `dirstat`; fio's `stat_type`).
    #[serde(skip_serializing_if = "StatCall::is_default")]
    pub stat_call: StatCall,
}

/// The system call a look-up engine (`filestat`, `dirstat`) makes for each I/O (fio's
/// `stat_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatCall {
    /// `stat`: follows a symbolic link.
    #[default]
    Stat,
    /// `lstat`: the link itself.
    Lstat,
    /// `statx` with the basic attributes and the birth time.
    Statx,
}

impl StatCall {
    /// Whether this is the default (`stat`).
    pub fn is_default(&self) -> bool {
        *self == StatCall::Stat
    }
}

/// How the sync engine moves a request's bytes between its buffer and the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataPath {
    /// `pread` / `pwrite`.
    #[default]
    Pread,
    /// A shared mapping of the file: reads and writes are copies (fio's `mmap` engine).
    Mmap,
    /// A pipe: `splice` and `vmsplice` (fio's `splice` engine).
    Splice,
}

impl DataPath {
    /// Name as in results (`pread`, `mmap`, `splice`).
    pub fn name(self) -> &'static str {
        match self {
            DataPath::Pread => "pread",
            DataPath::Mmap => "mmap",
            DataPath::Splice => "splice",
        }
    }
}

impl IoHandling {
    /// Whether these are the defaults (nothing changes).
    pub fn is_default(&self) -> bool {
        *self == IoHandling::default()
    }
}

/// The access-pattern hint given to the kernel for a job's files (`posix_fadvise` over the
/// job's region).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessHint {
    /// No hint (the kernel's default read-ahead).
    #[default]
    None,
    /// `POSIX_FADV_RANDOM` when the job's offsets are random, `POSIX_FADV_SEQUENTIAL`
    /// otherwise (fio's default, `fadvise_hint=1`).
    ByPattern,
    /// `POSIX_FADV_NORMAL`.
    Normal,
    /// `POSIX_FADV_SEQUENTIAL`.
    Sequential,
    /// `POSIX_FADV_RANDOM` (no read-ahead).
    Random,
}
