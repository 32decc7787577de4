//! The shape of a test: for each of its jobs, the engine, the workers, the queue depth and the
//! largest block it really runs with (after fallbacks), as one value.
//!
//! A [`TestShape`] is built once per job ([`TestShape::of`]) while the plan is checked, and its
//! queue depth is checked once against the engine that will keep it in flight
//! ([`TestShape::on_engine`], one message: [`QueueDepthError`]). Everything after reads it
//! instead of carrying a copy that must agree: the host budget (`budget::JobDemand` holds
//! the shape), the engine (its `EngineOptions` come from [`TestShape::engine_options`]) and
//! every worker (its `WorkerPlan` holds the shape, and sizes its queue from it).
//!
//! ```
//! use iopath::result::EngineKind;
//! use iopath::run::shape::TestShape;
//! let shape = TestShape::new(EngineKind::IoUring, 2, 64, 1 << 20);
//! assert_eq!(shape.queue_depth(), 64);
//! assert_eq!(shape.engine_options().queue_depth, 64);
//! assert_eq!(shape.engine_options().buffer_size, 1 << 20);
//! assert_eq!(shape.on_engine("j", EngineKind::Nbd).unwrap().engine, EngineKind::Nbd);
//! assert!(TestShape::new(EngineKind::IoUring, 1, 40_000, 4096)
//!     .on_engine("j", EngineKind::IoUring)
//!     .unwrap_err()
//!     .to_string()
//!     .contains("--qd 40000"));
//! ```

use crate::engine::EngineOptions;
use crate::result::EngineKind;
use crate::workload::JobPlan;

/// Engine, workers, queue depth and largest block a job really runs with, and why they differ
/// from what was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestShape {
    /// Engine in effect.
    pub engine: EngineKind,
    /// Worker threads per target (per group of `worker_files.per_worker` targets).
    pub workers_per_target: u32,
    /// I/Os in flight per worker, at least 1.
    queue_depth: u32,
    /// The job's largest block, bytes: the size of every slot's buffer.
    pub largest_block_bytes: u64,
    /// Register buffers with io_uring (asked for, and room under `RLIMIT_MEMLOCK`).
    pub register_buffers: bool,
    /// The sync engine runs the asked queue depth as workers (for messages).
    pub depth_as_workers: bool,
    /// What was changed and why.
    pub warnings: Vec<String>,
}

/// A queue depth above what the engine keeps in flight; the message names the flag.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{job}': --qd {queue_depth} is more than the {} engine keeps in flight ({limit}{}); \
     lower --qd, or add --workers to go further (iodepth, numjobs in a job file)",
    engine.name(),
    if *engine == EngineKind::IoUring { ", the kernel's limit on ring entries" } else { "" }
)]
pub struct QueueDepthError {
    /// The job.
    pub job: String,
    /// Its engine.
    pub engine: EngineKind,
    /// The queue depth asked for.
    pub queue_depth: u32,
    /// The engine's limit.
    pub limit: u32,
}

/// Most I/Os one engine instance keeps in flight; `None` when only memory bounds it (the null
/// engine) and `Some(1)` for the sync engine, whose depth runs as workers.
pub fn queue_depth_limit(engine: EngineKind) -> Option<u32> {
    match engine {
        EngineKind::IoUring => Some(crate::engine::io_uring::MAX_QUEUE_DEPTH),
        EngineKind::Nbd => Some(crate::engine::nbd::MAX_QUEUE_DEPTH),
        EngineKind::Iscsi => Some(crate::engine::iscsi::MAX_QUEUE_DEPTH),
        EngineKind::Nfs => Some(crate::engine::nfs::MAX_QUEUE_DEPTH),
        EngineKind::Smb => Some(crate::engine::smb::MAX_QUEUE_DEPTH),
        EngineKind::Sync => Some(1),
        EngineKind::Null => None,
        // One operation at a time, as the sync engine: a depth above 1 runs as workers.
        _ => Some(1),
    }
}

impl TestShape {
    /// A shape of `workers_per_target` workers of `queue_depth` (taken as at least 1) I/Os in
    /// flight on `engine`, each slot's buffer `largest_block_bytes`: buffers registered where
    /// the engine can, no warnings.
    pub fn new(
        engine: EngineKind,
        workers_per_target: u32,
        queue_depth: u32,
        largest_block_bytes: u64,
    ) -> Self {
        TestShape {
            engine,
            workers_per_target,
            queue_depth: queue_depth.max(1),
            largest_block_bytes,
            register_buffers: true,
            depth_as_workers: false,
            warnings: Vec::new(),
        }
    }

    /// Works out the shape of `job`: io_uring falls back to sync (announced) when the kernel
    /// refuses it (`io_uring_refusal`, the kernel's answer); sync maps a queue depth above 1
    /// onto workers.
    pub fn of(job: &JobPlan, io_uring_refusal: Option<&std::io::Error>) -> Self {
        let workload = &job.workload;
        let mut warnings = Vec::new();
        let mut engine = workload.engine;
        if engine == EngineKind::IoUring
            && let Some(reason) = io_uring_refusal
        {
            warnings.push(format!(
                "io_uring is not available ({reason}); using the sync engine"
            ));
            engine = EngineKind::Sync;
        }
        // A replay's clone issues its trace once: more workers would issue it again.
        let replay_on_sync =
            engine == EngineKind::Sync && workload.queue_depth > 1 && job.replay.is_some();
        let depth_as_workers =
            engine == EngineKind::Sync && workload.queue_depth > 1 && !replay_on_sync;
        let (workers_per_target, queue_depth) = if replay_on_sync {
            warnings.push(format!(
                "the sync engine keeps one I/O in flight per worker: the replay's queue depth {} runs as 1, each clone issuing its log once",
                workload.queue_depth
            ));
            (workload.workers, 1)
        } else if engine.is_file_operation() {
            if workload.queue_depth > 1 {
                warnings.push(format!(
                    "the {} engine does one file operation at a time per worker: queue depth {} runs as 1 (add workers with --workers, numjobs in a job file)",
                    engine.name(),
                    workload.queue_depth
                ));
            }
            (workload.workers, 1)
        } else if depth_as_workers {
            warnings.push(format!(
                "the sync engine keeps one I/O in flight per worker: queue depth {} runs as {} workers of depth 1 ({} workers x {})",
                workload.queue_depth,
                workload.workers * workload.queue_depth,
                workload.workers,
                workload.queue_depth
            ));
            (workload.workers * workload.queue_depth, 1)
        } else {
            (workload.workers, workload.queue_depth)
        };
        TestShape {
            register_buffers: workload.register_buffers,
            depth_as_workers,
            warnings,
            ..TestShape::new(
                engine,
                workers_per_target,
                queue_depth,
                workload.access.max_size_bytes(),
            )
        }
    }

    /// I/Os in flight per worker (at least 1): the engine's slots and the worker's queue.
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    /// This shape with at most `depth` I/Os in flight per worker (at least 1): a replaying
    /// clone whose capture shows a shallower queue than the job's deepest.
    pub fn at_most_deep(&self, depth: u32) -> TestShape {
        TestShape {
            queue_depth: self.queue_depth.min(depth).max(1),
            ..self.clone()
        }
    }

    /// This shape on `engine` (the engine a set of targets really runs: a network volume's
    /// protocol engine for a job on one), its queue depth checked against what that engine
    /// keeps in flight — the one check of the queue depth after the readers' own range.
    pub fn on_engine(&self, job: &str, engine: EngineKind) -> Result<TestShape, QueueDepthError> {
        match queue_depth_limit(engine) {
            Some(limit) if limit > 1 && self.queue_depth > limit => Err(QueueDepthError {
                job: job.to_string(),
                engine,
                queue_depth: self.queue_depth,
                limit,
            }),
            _ => Ok(TestShape {
                engine,
                ..self.clone()
            }),
        }
    }

    /// The engine's options for this shape: a slot per queue entry, each as large as the
    /// largest block, registration as settled; the rest as [`EngineOptions::new`] has it.
    pub fn engine_options(&self) -> EngineOptions {
        EngineOptions {
            register: self.register_buffers,
            ..EngineOptions::new(self.queue_depth, self.buffer_bytes())
        }
    }

    /// Bytes of each slot's buffer: the largest block.
    pub fn buffer_bytes(&self) -> usize {
        usize::try_from(self.largest_block_bytes).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::prepare::tests::job;

    #[test]
    fn a_refused_io_uring_falls_back_to_sync_and_says_why() {
        let refused = std::io::Error::from_raw_os_error(libc::ENOSYS);
        let shape = TestShape::of(&job(EngineKind::IoUring, 8, 2), Some(&refused));
        assert_eq!(shape.engine, EngineKind::Sync);
        assert_eq!((shape.workers_per_target, shape.queue_depth()), (16, 1));
        assert!(shape.depth_as_workers);
        assert!(shape.warnings[0].contains("io_uring is not available"));
        assert!(shape.warnings[1].contains("16 workers of depth 1"));
        let shape = TestShape::of(&job(EngineKind::IoUring, 8, 2), None);
        assert_eq!(shape.engine, EngineKind::IoUring);
        assert_eq!((shape.workers_per_target, shape.queue_depth()), (2, 8));
        assert!(shape.warnings.is_empty());
    }

    #[test]
    fn a_replay_on_sync_keeps_one_worker_per_clone_as_each_issues_its_log_once() {
        let mut replaying = job(EngineKind::Sync, 4, 2);
        replaying.replay = Some(crate::workload::replay::CloneTraces::default());
        let shape = TestShape::of(&replaying, None);
        assert_eq!((shape.workers_per_target, shape.queue_depth()), (2, 1));
        assert!(!shape.depth_as_workers);
        assert!(shape.warnings[0].contains("each clone issuing its log once"));
    }

    #[test]
    fn queue_depth_one_with_sync_needs_no_mapping() {
        let shape = TestShape::of(&job(EngineKind::Sync, 1, 3), None);
        assert_eq!((shape.workers_per_target, shape.queue_depth()), (3, 1));
        assert!(!shape.depth_as_workers && shape.warnings.is_empty());
    }

    #[test]
    fn queue_depths_stop_at_the_engine_limit() {
        let depth = |queue_depth| TestShape::new(EngineKind::IoUring, 1, queue_depth, 4096);
        depth(32_768).on_engine("j", EngineKind::IoUring).unwrap();
        let error = depth(32_769)
            .on_engine("j", EngineKind::IoUring)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--qd 32769") && error.contains("32768"),
            "{error}"
        );
        let on_nbd = depth(65_536).on_engine("j", EngineKind::Nbd).unwrap();
        assert_eq!(on_nbd.engine, EngineKind::Nbd);
        depth(65_536).on_engine("j", EngineKind::Sync).unwrap();
        depth(65_536).on_engine("j", EngineKind::Null).unwrap();
    }

    #[test]
    fn engine_options_and_buffers_come_from_the_shape() {
        let mut shape = TestShape::of(&job(EngineKind::IoUring, 32, 1), None);
        shape.register_buffers = false;
        let options = shape.engine_options();
        assert_eq!(options.queue_depth, shape.queue_depth());
        assert_eq!(options.buffer_size, shape.buffer_bytes());
        assert!(!options.register);
        assert_eq!(TestShape::new(EngineKind::Null, 1, 0, 512).queue_depth(), 1);
    }
}
