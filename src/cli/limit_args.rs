//! `--max-jobs` and `--max-threads`: the limits on how large a plan may grow, for `iopath run`
//! and `iopath job`.

use clap::Args;
use iopath::workload::limits::{PlanLimits, parse_limit};

/// Flags that raise (or lower) the plan limits.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct LimitArgs {
    /// Most jobs a job file may define, and most jobs one test may run at once (default 1024).
    #[arg(long, value_name = "N", value_parser = parse_limit, help_heading = "Safety")]
    pub max_jobs: Option<u64>,
    /// Most worker threads one test may start: every job, target and worker, a sync-engine
    /// queue depth counted as workers (default 4096).
    #[arg(long, value_name = "N", value_parser = parse_limit, help_heading = "Safety")]
    pub max_threads: Option<u64>,
}

impl LimitArgs {
    /// The limits these flags ask for.
    pub fn limits(&self) -> PlanLimits {
        let defaults = PlanLimits::default();
        PlanLimits {
            max_jobs: self
                .max_jobs
                .and_then(|jobs| usize::try_from(jobs).ok())
                .unwrap_or(defaults.max_jobs),
            max_worker_threads: self.max_threads.unwrap_or(defaults.max_worker_threads),
        }
    }
}
