//! What a plan asks of the host — buffer memory, locked memory, threads, queue depth — checked
//! against what the host can give, before any I/O.
//!
//! Tests run one after the other, and the jobs of one test together, so the plan needs what
//! its most demanding test needs: for every job, each worker's buffers (one per queue slot, as
//! large as the job's largest block, rounded up to the buffer alignment), its per-I/O state and
//! its fixed state (histograms, series, stack). The figures are checked against
//! [`MEMORY_SHARE_PERCENT`] of the kernel's `MemAvailable`, the worker threads against what
//! `RLIMIT_NPROC` and the kernel's thread and PID limits leave. Each job's engine, queue depth
//! and largest block come from its [`TestShape`], whose queue depth was checked once against the
//! engine ([`TestShape::on_engine`]). Registering io_uring buffers needs `RLIMIT_MEMLOCK`
//! room (without `CAP_IPC_LOCK`): a job whose buffers would not fit is run without registered
//! buffers, and says so, rather than refused.
//!
//! Everything here is a pure function of a [`JobDemand`] list and [`HostLimits`], except
//! [`HostLimits::read`], which takes the machine's figures from discovery
//! ([`crate::discovery::resources::room`]) and the process's limits from `getrlimit`.
//!
//! ```
//! use iopath::result::EngineKind;
//! use iopath::run::budget::{HostLimits, JobDemand, check_test};
//! use iopath::run::shape::TestShape;
//! let job = JobDemand {
//!     name: "randread 1g QD64".into(),
//!     shape: TestShape::new(EngineKind::IoUring, 1, 64, 1 << 30),
//!     threads: 1,
//!     random_map_bytes: 0,
//!     verify_ledger_bytes: 0,
//! };
//! let host = HostLimits {
//!     mem_available_bytes: Some(16 << 30),
//!     memlock_bytes: None,
//!     threads_available: Some(10_000),
//! };
//! let error = check_test("randread 1g QD64", &[job], &host).unwrap_err().to_string();
//! assert!(error.contains("64.0 GiB") && error.contains("--qd"));
//! ```

use crate::discovery::HostView;
use crate::discovery::resources::{Room, room};
use crate::engine::buffer::BUFFER_ALIGNMENT;
use crate::host::sys::{Limit, soft_limit};
use crate::result::EngineKind;
use crate::run::shape::TestShape;
use crate::stats::histogram::BUCKET_COUNT;
use crate::stats::live::LIVE_BUCKET_COUNT;

/// Largest share of `MemAvailable` a plan may take, percent.
pub const MEMORY_SHARE_PERCENT: u64 = 50;

/// State kept per I/O slot besides its buffer, bytes: an upper bound over the engines (the
/// worker's slot record, completion entry and free list; the engine's slot state; an io_uring
/// submission entry and two completion entries, or a protocol engine's request header and
/// gather entries).
pub const PER_IO_STATE_BYTES: u64 = 256;

/// Fixed state of each worker thread, bytes: its latency histograms (reads, writes, trims) and
/// the live ones it publishes for the progress views, plus an allowance for its interval
/// series, the stack it touches and the kernel's own stack for the thread.
pub const PER_WORKER_BYTES: u64 = 3 * ((BUCKET_COUNT + LIVE_BUCKET_COUNT) as u64 * 8) + 192 * 1024;

/// What one job of a test asks of the host, as it will really run (after fallbacks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobDemand {
    /// The job's name, for messages.
    pub name: String,
    /// Engine (the one its targets run), queue depth, largest block and buffer registration
    /// of each worker.
    pub shape: TestShape,
    /// Worker threads of the job, over all its targets.
    pub threads: u64,
    /// The random maps of all the job's workers (fio's random map), bytes.
    pub random_map_bytes: u64,
    /// The verification ledgers of all the job's workers (one `u32` per verified block),
    /// bytes.
    pub verify_ledger_bytes: u64,
}

impl JobDemand {
    /// Bytes of one slot's buffer (rounded up to the buffer alignment, as allocated).
    pub fn slot_bytes(&self) -> u64 {
        self.shape
            .largest_block_bytes
            .max(1)
            .div_ceil(BUFFER_ALIGNMENT as u64)
            .saturating_mul(BUFFER_ALIGNMENT as u64)
    }

    /// Bytes of one worker's buffers.
    pub fn buffer_bytes_per_worker(&self) -> u64 {
        u64::from(self.shape.queue_depth()).saturating_mul(self.slot_bytes())
    }

    /// Bytes of every worker's buffers.
    pub fn buffer_bytes(&self) -> u64 {
        self.threads.saturating_mul(self.buffer_bytes_per_worker())
    }

    /// Everything the job's workers hold: buffers, per-I/O state and per-worker state.
    pub fn memory_bytes(&self) -> u64 {
        let per_io = u64::from(self.shape.queue_depth()).saturating_mul(PER_IO_STATE_BYTES);
        self.threads
            .saturating_mul(per_io.saturating_add(PER_WORKER_BYTES))
            .saturating_add(self.buffer_bytes())
            .saturating_add(self.random_map_bytes)
            .saturating_add(self.verify_ledger_bytes)
    }

    /// Bytes the kernel would lock for registered io_uring buffers.
    pub fn registered_bytes(&self) -> u64 {
        if self.shape.register_buffers && self.shape.engine == EngineKind::IoUring {
            self.buffer_bytes()
        } else {
            0
        }
    }

    /// How the buffers come about, in the flags' words.
    fn describe(&self) -> String {
        let workers = if self.shape.depth_as_workers {
            format!(
                "{} worker threads (--workers x --qd, on the sync engine)",
                self.threads
            )
        } else {
            format!(
                "{} worker thread{} (--workers x targets)",
                self.threads,
                if self.threads == 1 { "" } else { "s" }
            )
        };
        let map = if self.random_map_bytes > 0 {
            format!(
                " and {} of random maps (norandommap, or no --random-map, drops them)",
                memory(self.random_map_bytes)
            )
        } else {
            String::new()
        };
        let ledger = if self.verify_ledger_bytes > 0 {
            format!(
                " and {} of verification ledgers (a larger --verify-interval or a smaller region shrinks them)",
                memory(self.verify_ledger_bytes)
            )
        } else {
            String::new()
        };
        format!(
            "'{}': {workers} x {} slot{} (--qd) x {} (largest --bs) = {} of buffers, plus {} of \
             per-I/O and per-worker state{map}{ledger}",
            self.name,
            self.shape.queue_depth(),
            if self.shape.queue_depth() == 1 {
                ""
            } else {
                "s"
            },
            memory(self.slot_bytes()),
            memory(self.buffer_bytes()),
            memory(
                self.memory_bytes()
                    - self.buffer_bytes()
                    - self.random_map_bytes
                    - self.verify_ledger_bytes
            ),
        )
    }
}

/// What the host can give, where it says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostLimits {
    /// `MemAvailable` of `/proc/meminfo`, bytes.
    pub mem_available_bytes: Option<u64>,
    /// `RLIMIT_MEMLOCK`, bytes, when it binds (finite, and no `CAP_IPC_LOCK`).
    pub memlock_bytes: Option<u64>,
    /// Threads this process may still start: `RLIMIT_NPROC`, `kernel.threads-max` and
    /// `kernel.pid_max`, less the threads that already exist.
    pub threads_available: Option<u64>,
}

impl HostLimits {
    /// Reads the limits of this process and host: memory available, threads and the kernel's
    /// thread and PID limits as discovery reads them, `RLIMIT_MEMLOCK` and `RLIMIT_NPROC`
    /// from `getrlimit`. A figure that cannot be read is `None` and is not checked.
    pub fn read() -> Self {
        HostLimits::from_room(
            &room(&HostView::live()),
            soft_limit(Limit::LockedMemory),
            soft_limit(Limit::Processes),
        )
    }

    /// The limits from the machine's `room` and this process's soft `RLIMIT_MEMLOCK` and
    /// `RLIMIT_NPROC` (`None`: unlimited).
    pub fn from_room(room: &Room, memlock: Option<u64>, process_threads: Option<u64>) -> Self {
        HostLimits {
            mem_available_bytes: room.memory_available_bytes,
            memlock_bytes: memlock.filter(|_| !room.ipc_lock),
            threads_available: threads_available(
                process_threads,
                room.own_threads.unwrap_or(1),
                room.system_thread_limits,
                room.threads_in_system,
            ),
        }
    }
}

/// Threads that may still be started: the process limit less this process's threads, and each
/// system-wide limit less every thread of the system.
fn threads_available(
    process_limit: Option<u64>,
    own_threads: u64,
    system_limits: [Option<u64>; 2],
    threads_in_system: Option<u64>,
) -> Option<u64> {
    let by_process = process_limit.map(|limit| limit.saturating_sub(own_threads));
    let by_system = system_limits
        .into_iter()
        .flatten()
        .min()
        .map(|limit| limit.saturating_sub(threads_in_system.unwrap_or(own_threads)));
    [by_process, by_system].into_iter().flatten().min()
}

/// Bytes as KiB (below 1 MiB), or MiB or GiB with one decimal.
fn memory(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = bytes as f64 / MIB;
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else if bytes >= 1 << 20 {
        format!("{mib:.1} MiB")
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// What a plan asks of the host and cannot have; each message names the figures and the flags.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// More worker threads than can be started.
    #[error(
        "test '{test}' needs {threads} worker threads, but only {available} more can be \
         started here (RLIMIT_NPROC, kernel.threads-max and kernel.pid_max, less the threads \
         running); lower --workers, or --qd on the sync engine (numjobs, iodepth in a job \
         file)"
    )]
    Threads {
        /// The test.
        test: String,
        /// Threads it needs.
        threads: u64,
        /// Threads that can still be started.
        available: u64,
    },
    /// More memory for I/O than iopath takes.
    #[error(
        "test '{test}' needs {} of memory for its I/O ({}), but the kernel has {} available \
         (MemAvailable) and iopath takes at most {MEMORY_SHARE_PERCENT} % of it ({}); lower \
         --qd, --bs or --workers (iodepth, bs or numjobs in a job file)",
        memory(*needed_bytes),
        jobs.join("; "),
        memory(*available_bytes),
        memory(*allowed_bytes)
    )]
    Memory {
        /// The test.
        test: String,
        /// Bytes its jobs need.
        needed_bytes: u64,
        /// How each job comes to its share, in the flags' words.
        jobs: Vec<String>,
        /// `MemAvailable`, bytes.
        available_bytes: u64,
        /// The share of it iopath takes, bytes.
        allowed_bytes: u64,
    },
}

/// Checks the jobs of test `test`, which run together, against `host`: an error naming the
/// figures and the flags when their memory or threads do not fit, otherwise the jobs (their
/// places in `jobs`) whose buffers must not be registered with io_uring because
/// `RLIMIT_MEMLOCK` has no room for them, with a message each.
pub fn check_test(
    test: &str,
    jobs: &[JobDemand],
    host: &HostLimits,
) -> Result<Vec<(usize, String)>, BudgetError> {
    let threads = jobs
        .iter()
        .fold(0u64, |sum, job| sum.saturating_add(job.threads));
    if let Some(available) = host.threads_available
        && threads > available
    {
        return Err(BudgetError::Threads {
            test: test.to_string(),
            threads,
            available,
        });
    }
    let needed = jobs
        .iter()
        .fold(0u64, |sum, job| sum.saturating_add(job.memory_bytes()));
    if let Some(available) = host.mem_available_bytes {
        let allowed = available / 100 * MEMORY_SHARE_PERCENT;
        if needed > allowed {
            return Err(BudgetError::Memory {
                test: test.to_string(),
                needed_bytes: needed,
                jobs: jobs.iter().map(JobDemand::describe).collect(),
                available_bytes: available,
                allowed_bytes: allowed,
            });
        }
    }
    let mut unregistered = Vec::new();
    if let Some(limit) = host.memlock_bytes {
        let mut locked = 0u64;
        for (position, job) in jobs.iter().enumerate() {
            let registered = job.registered_bytes();
            if registered == 0 {
                continue;
            }
            if locked.saturating_add(registered) > limit {
                unregistered.push((
                    position,
                    format!(
                        "'{}': io_uring buffers not registered: {} would pass RLIMIT_MEMLOCK ({}); \
                         plain reads and writes instead (raise the limit, or run with \
                         CAP_IPC_LOCK, to register them)",
                        job.name,
                        memory(locked.saturating_add(registered)),
                        memory(limit),
                    ),
                ));
            } else {
                locked += registered;
            }
        }
    }
    Ok(unregistered)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(engine: EngineKind, threads: u64, queue_depth: u32, block: u64) -> JobDemand {
        JobDemand {
            name: "j".into(),
            shape: TestShape::new(engine, 1, queue_depth, block),
            threads,
            random_map_bytes: 0,
            verify_ledger_bytes: 0,
        }
    }

    const ROOMY: HostLimits = HostLimits {
        mem_available_bytes: Some(16 << 30),
        memlock_bytes: None,
        threads_available: Some(30_000),
    };

    #[test]
    fn buffers_are_workers_times_slots_times_the_largest_block() {
        let demand = job(EngineKind::IoUring, 4, 32, 5000);
        assert_eq!(demand.slot_bytes(), 8192);
        assert_eq!(demand.buffer_bytes(), 4 * 32 * 8192);
        assert_eq!(
            demand.memory_bytes(),
            4 * 32 * 8192 + 4 * (32 * PER_IO_STATE_BYTES + PER_WORKER_BYTES)
        );
        assert_eq!(demand.registered_bytes(), demand.buffer_bytes());
        assert_eq!(job(EngineKind::Sync, 4, 1, 4096).registered_bytes(), 0);
        // No overflow whatever the figures.
        assert_eq!(
            job(EngineKind::Null, u64::MAX, u32::MAX, u64::MAX).memory_bytes(),
            u64::MAX
        );
    }

    #[test]
    fn a_plan_over_half_the_available_memory_is_refused_naming_figures_and_flags() {
        let huge = job(EngineKind::IoUring, 1, 64, 1 << 30);
        let error = check_test("t", &[huge], &ROOMY).unwrap_err().to_string();
        for expected in [
            "64.0 GiB",
            "16.0 GiB available",
            "8.0 GiB",
            "50 %",
            "1 worker thread",
            "64 slots",
            "1.0 GiB (largest --bs)",
            "--qd",
            "--bs",
            "--workers",
        ] {
            assert!(error.contains(expected), "{expected}: {error}");
        }
        // Jobs of one test add up: two jobs of 5 GiB do not fit in 8 GiB.
        let half = job(EngineKind::IoUring, 5, 1, 1 << 30);
        assert!(check_test("t", std::slice::from_ref(&half), &ROOMY).is_ok());
        assert!(check_test("t", &[half.clone(), half], &ROOMY).is_err());
        // Unknown memory is not checked.
        let unknown = HostLimits {
            mem_available_bytes: None,
            ..ROOMY
        };
        assert!(check_test("t", &[job(EngineKind::Null, 1, 64, 1 << 30)], &unknown).is_ok());
    }

    #[test]
    fn threads_beyond_what_can_be_started_are_refused() {
        let mut many = job(EngineKind::Sync, 65_536, 1, 4096);
        many.shape.depth_as_workers = true;
        let error = check_test("t", &[many], &ROOMY).unwrap_err().to_string();
        assert!(error.contains("65536 worker threads"), "{error}");
        assert!(error.contains("30000 more"), "{error}");
        assert_eq!(
            threads_available(Some(100), 5, [Some(1000), Some(500)], Some(450)),
            Some(50)
        );
        assert_eq!(
            threads_available(Some(100), 5, [None, None], None),
            Some(95)
        );
        assert_eq!(threads_available(None, 5, [None, None], None), None);
    }

    #[test]
    fn locked_memory_turns_registration_off_instead_of_failing() {
        let limited = HostLimits {
            memlock_bytes: Some(8 << 20),
            ..ROOMY
        };
        let small = JobDemand {
            name: "small".into(),
            ..job(EngineKind::IoUring, 1, 32, 64 << 10)
        };
        let large = JobDemand {
            name: "large".into(),
            ..job(EngineKind::IoUring, 2, 32, 1 << 20)
        };
        let unregistered = check_test("t", &[small.clone(), large], &limited).unwrap();
        assert_eq!(unregistered.len(), 1);
        assert_eq!(unregistered[0].0, 1);
        assert!(
            unregistered[0].1.contains("RLIMIT_MEMLOCK (8.0 MiB)"),
            "{unregistered:?}"
        );
        assert!(check_test("t", &[small], &limited).unwrap().is_empty());
    }

    #[test]
    fn the_room_gives_the_limits() {
        let room = Room {
            memory_available_bytes: Some(1 << 30),
            own_threads: Some(5),
            ipc_lock: false,
            threads_in_system: Some(450),
            system_thread_limits: [Some(1000), Some(500)],
        };
        let limits = HostLimits::from_room(&room, Some(64 << 10), Some(100));
        assert_eq!(
            limits,
            HostLimits {
                mem_available_bytes: Some(1 << 30),
                memlock_bytes: Some(64 << 10),
                threads_available: Some(50),
            }
        );
        let locked = Room {
            ipc_lock: true,
            ..room
        };
        assert_eq!(
            HostLimits::from_room(&locked, Some(64 << 10), None).memlock_bytes,
            None
        );
    }

    #[test]
    fn this_host_reads() {
        let host = HostLimits::read();
        assert!(host.mem_available_bytes.is_some_and(|bytes| bytes > 0));
        assert!(host.threads_available.is_some_and(|threads| threads > 0));
    }
}
