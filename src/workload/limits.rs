//! How large a plan may grow before it is refused: jobs in a job file, and worker threads
//! started at once. A job file of thousands of sections, or `numjobs` and queue depths that
//! multiply into millions of threads, is refused with a message before any thread starts;
//! `--max-jobs` and `--max-threads` raise the limits for a run that really wants that much.
//!
//! ```
//! use iopath::workload::limits::PlanLimits;
//! let limits = PlanLimits::default();
//! assert!(limits.check_jobs(1024).is_ok());
//! assert!(limits.check_jobs(1025).unwrap_err().to_string().contains("--max-jobs"));
//! ```

use super::WorkloadError;

/// Highest queue depth a workload may ask for, whichever reader it comes from (`--qd`, a TOML
/// job's `qd`, fio's `iodepth`, a `--sweep qd=` value); the engine that runs it may keep
/// fewer in flight (`run::shape::TestShape::on_engine` checks that).
pub const MAX_QUEUE_DEPTH: u32 = 65_536;

/// Most files one job may have (fio's `nrfiles` × `numjobs`, `--files-per-worker`,
/// `--open-files`): fio's own bound is the descriptor limit, whose usual ceiling
/// (`fs.nr_open`) is this number.
pub const MAX_FILES: u32 = 1 << 20;

/// The limits in force for one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanLimits {
    /// Most jobs a job file may define (after its includes), and most jobs in one test.
    pub max_jobs: usize,
    /// Most worker threads one test may start (every job, every target, every worker).
    pub max_worker_threads: u64,
}

impl PlanLimits {
    /// Default of `--max-jobs`.
    pub const DEFAULT_MAX_JOBS: usize = 1024;
    /// Default of `--max-threads`.
    pub const DEFAULT_MAX_WORKER_THREADS: u64 = 4096;
    /// Highest value `--max-jobs` and `--max-threads` take.
    pub const CEILING: u64 = 1 << 20;

    /// Refuses `count` jobs when there are more than the limit.
    pub fn check_jobs(&self, count: usize) -> Result<(), WorkloadError> {
        if count > self.max_jobs {
            return Err(WorkloadError::TooManyJobs {
                limit: self.max_jobs,
            });
        }
        Ok(())
    }

    /// Refuses `count` worker threads started at once when there are more than the limit.
    pub fn check_worker_threads(&self, count: u64) -> Result<(), WorkloadError> {
        if count > self.max_worker_threads {
            return Err(WorkloadError::TooManyThreads {
                count,
                limit: self.max_worker_threads,
            });
        }
        Ok(())
    }
}

impl Default for PlanLimits {
    fn default() -> Self {
        PlanLimits {
            max_jobs: Self::DEFAULT_MAX_JOBS,
            max_worker_threads: Self::DEFAULT_MAX_WORKER_THREADS,
        }
    }
}

/// Reads the value of `--max-jobs` or `--max-threads`: 1 to [`PlanLimits::CEILING`].
pub fn parse_limit(text: &str) -> Result<u64, WorkloadError> {
    match text.trim().parse::<u64>() {
        Ok(value) if (1..=PlanLimits::CEILING).contains(&value) => Ok(value),
        _ => Err(WorkloadError::value(
            text,
            format!("is not a whole number from 1 to {}", PlanLimits::CEILING),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_refuse_only_past_their_value() {
        let limits = PlanLimits {
            max_jobs: 2,
            max_worker_threads: 8,
        };
        assert!(limits.check_jobs(2).is_ok());
        assert!(limits.check_jobs(3).is_err());
        assert!(limits.check_worker_threads(8).is_ok());
        let message = limits.check_worker_threads(9).unwrap_err().to_string();
        assert!(message.contains("9 worker threads"), "{message}");
        assert!(message.contains("--max-threads"), "{message}");
    }

    #[test]
    fn flag_values_are_bounded() {
        assert_eq!(parse_limit("9000"), Ok(9000));
        assert!(parse_limit("0").is_err());
        assert!(parse_limit("x").is_err());
        assert!(parse_limit(&(PlanLimits::CEILING + 1).to_string()).is_err());
    }
}
