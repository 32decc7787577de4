//! Why a plan cannot run on its targets or on this host, found before any I/O: a target that
//! is missing, a network volume that does not answer, a region or a block size that does not
//! fit the target, a plan larger than its limits or than the host's threads and memory.
//!
//! Each variant names the target (or the test, or the job) and the figures, and the flags that
//! change them; the command line refuses all of them with exit status 2.

use super::budget::BudgetError;
use super::shape::QueueDepthError;
use crate::engine::EngineError;
use crate::units::format_size;
use crate::workload::WorkloadError;
use std::path::PathBuf;

/// A plan that does not fit its targets or the host. See the [module](self) documentation.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The plan has no target.
    #[error("no target given")]
    NoTarget,
    /// A job's verification cannot be set up (its state file, its tracking).
    #[error("job '{job}': {problem}")]
    Verify {
        /// The job.
        job: String,
        /// What is wrong.
        problem: String,
    },
    /// A missing device under /dev (where iopath never creates a test file).
    #[error("{}: no such device (iopath never creates files under /dev)", path.display())]
    NoSuchDevice {
        /// The path given.
        path: PathBuf,
    },
    /// A missing file, and no size to create it with.
    #[error(
        "{}: no such file or device (give a size to create a test file there)",
        path.display()
    )]
    NoSuchFile {
        /// The path given.
        path: PathBuf,
    },
    /// A path a file-operation engine cannot work on, or may not remove.
    #[error("{}: {engine}: {problem}", crate::text::shown(&path.display().to_string()))]
    FileOperationTarget {
        /// The path given.
        path: PathBuf,
        /// The engine (`filedelete`, …).
        engine: &'static str,
        /// What is wrong.
        problem: &'static str,
    },
    /// Every test was skipped (each with a warning).
    #[error("no test can run on these targets (see the warnings above)")]
    NothingToRun,
    /// A test beyond the limits of the run (`--max-jobs`, `--max-threads`).
    #[error("test '{test}': {source}")]
    OverLimit {
        /// The test.
        test: String,
        /// The limit it passes.
        source: WorkloadError,
    },
    /// More file descriptors than the process may have, even after raising its limit.
    #[error(
        "the run needs about {needed} file descriptors at once (each worker holds each of its files open, and a run of few targets each target from its checks), more than the limit of {limit} (ulimit -n): raise it (ulimit -n {needed}), or give fewer files or workers"
    )]
    TooManyDescriptors {
        /// Descriptors the run would hold at once.
        needed: u64,
        /// The hard limit that stands in the way.
        limit: u64,
    },
    /// A network volume that could not be probed.
    #[error("{target}: {source}")]
    Probe {
        /// The volume's URL.
        target: String,
        /// Why the probe failed.
        source: EngineError,
    },
    /// More `--connections` than an SMB session takes channels.
    #[error(
        "--connections {asked}: {target}: an SMB session takes at most {max} channels (the \
         default per-session limit of Windows servers); use --connections {max} or fewer"
    )]
    TooManyConnections {
        /// The target's URL.
        target: String,
        /// Connections asked per worker.
        asked: u32,
        /// The most taken.
        max: u32,
    },
    /// A block size above the largest request an NBD or NFS server accepts.
    #[error(
        "{target}: block size {} ({largest_bytes} bytes) is larger than the largest request the \
         server accepts, {} ({limit_bytes} bytes, its NBD maximum block size or NFS rtmax/wtmax); \
         use a block size of {} or less",
        format_size(*largest_bytes),
        format_size(*limit_bytes),
        format_size(*limit_bytes)
    )]
    RequestTooLarge {
        /// The volume's URL.
        target: String,
        /// The job's largest block, bytes.
        largest_bytes: u64,
        /// The server's largest request, bytes.
        limit_bytes: u64,
    },
    /// A job trims (discards) a target that cannot: checked on the target before any I/O.
    #[error("{target}: cannot trim: {reason}")]
    CannotTrim {
        /// The target, as given.
        target: String,
        /// Why, in words (and the kernel's or server's answer).
        reason: String,
    },
    /// `--offset` at or past the end of the target.
    #[error(
        "--offset {} is past the end of {target} ({size_bytes} bytes)",
        format_size(*offset_bytes)
    )]
    OffsetPastEnd {
        /// The target.
        target: String,
        /// The region's offset, bytes.
        offset_bytes: u64,
        /// The target's size, bytes.
        size_bytes: u64,
    },
    /// A region that ends past the end of the target.
    #[error(
        "the region {}+{} ends past the end of {target} ({size_bytes} bytes)",
        format_size(*offset_bytes),
        format_size(*region_bytes)
    )]
    RegionPastEnd {
        /// The target.
        target: String,
        /// The region's offset, bytes.
        offset_bytes: u64,
        /// The region's size, bytes.
        region_bytes: u64,
        /// The target's size, bytes.
        size_bytes: u64,
    },
    /// A region smaller than the largest block.
    #[error(
        "the region of {target} ({region_bytes} bytes) is smaller than the block size {}",
        format_size(*largest_bytes)
    )]
    RegionTooSmall {
        /// The target.
        target: String,
        /// The region's size, bytes.
        region_bytes: u64,
        /// The largest block, bytes.
        largest_bytes: u64,
    },
    /// An offset or block size that breaks the alignment O_DIRECT needs on the target.
    #[error(
        "{} breaks O_DIRECT alignment on {target}: offsets and block sizes must be multiples of \
         {alignment_bytes} bytes (logical block size {logical_block_bytes}); use --buffered or a \
         multiple of {alignment_bytes}",
        format_size(*value_bytes)
    )]
    DirectAlignment {
        /// The target.
        target: String,
        /// The offset or block size that breaks it.
        value_bytes: u64,
        /// The alignment O_DIRECT needs, bytes.
        alignment_bytes: u64,
        /// The target's logical block size, bytes.
        logical_block_bytes: u32,
    },
    /// A block size that is not a multiple of a device's logical block size.
    #[error(
        "block size {} is not a multiple of {target}'s logical block size ({logical_block_bytes})",
        format_size(*block_bytes)
    )]
    DeviceBlockSize {
        /// The device.
        target: String,
        /// The smallest block, bytes.
        block_bytes: u64,
        /// The device's logical block size, bytes.
        logical_block_bytes: u32,
    },
    /// A queue depth above what the job's engine keeps in flight.
    #[error(transparent)]
    QueueDepth(#[from] QueueDepthError),
    /// More than the host has room for: threads, memory.
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// A job whose targets cannot be grouped per worker as asked (`--files-per-worker`,
    /// `--file-service`, `--open-files`).
    #[error("test '{test}': job '{job}': {source}")]
    WorkerFiles {
        /// The test.
        test: String,
        /// The job.
        job: String,
        /// What is wrong.
        source: WorkloadError,
    },
    /// A network volume in a group of files one worker moves over.
    #[error(
        "job '{job}': {target}: a network volume has workers of its own; it cannot share a worker \
         with other files"
    )]
    NetworkInFileSet {
        /// The job.
        job: String,
        /// The volume's URL.
        target: String,
    },
    /// What a job asks of a target beyond its region that the target does not have room for:
    /// the regions of clones apart (fio's `offset_increment`), absolute zones, sequence
    /// blocks, the random map's memory.
    #[error("{target}: {problem}")]
    DoesNotFit {
        /// The target.
        target: String,
        /// What does not fit.
        problem: String,
    },
    /// The region of one clone (fio's `offset_increment`) past the end of its target.
    #[error("{target}: the region of clone {clone} does not fit")]
    CloneRegion {
        /// The target.
        target: String,
        /// The clone.
        clone: u32,
    },
}
