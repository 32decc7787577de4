//! What a job asks of the runner beyond its I/O pattern — mostly from fio job files: which
//! CPUs its workers run on (`cpus_allowed`, `cpus_allowed_policy`, `numa_cpu_nodes`), whether
//! rated I/O arrives evenly or as a Poisson process (`rate_process`), random start delays
//! (`startdelay=A-B`), which other jobs end when it ends (`exitall`, `exit_what`), a flow
//! that keeps jobs' I/O counts in proportion (`flow`, `flow_id`), and the search for the
//! deepest queue that meets a latency target (`latency_target` …).
//!
//! The default changes nothing.
//!
//! ```
//! use iopath::workload::job_controls::JobControls;
//! let controls = JobControls { cpus: vec![0, 1], ..JobControls::default() };
//! assert_eq!(controls.cpus_of_worker(5), vec![0, 1]);
//! let split = JobControls { cpu_split_start: Some(1), ..controls };
//! assert_eq!(split.cpus_of_worker(0), vec![1]);
//! assert_eq!(split.cpus_of_worker(1), vec![0]);
//! ```

use serde::{Deserialize, Serialize};

/// Which jobs end when a job with [`JobControls::ends_others`] ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndOthers {
    /// None: every job runs its own course (the default).
    #[default]
    None,
    /// The jobs of its reporting group (fio's `exitall`, `exit_what=group`).
    Group,
    /// Every job of its test; the next test still runs (fio's `exit_what=stonewall`).
    Test,
    /// Every job of its test, and no later test runs (fio's `exit_what=all`).
    Run,
}

/// A flow: jobs with the same id keep their I/O counts in the ratio of their weights (fio's
/// `flow`, `flow_id`, `flow_sleep`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    /// Jobs with the same id share the flow.
    pub id: u32,
    /// This job's weight (each of its workers has it, as each fio clone does).
    pub weight: u32,
    /// How long a worker ahead of its share waits before it looks again, ns.
    pub sleep_ns: u64,
}

/// The search for the deepest queue whose latency meets a target (fio's `latency_target`,
/// `latency_window`, `latency_percentile`, `latency_run`): each worker starts at depth 1 and,
/// window after window, doubles its depth while the target holds and halves the distance to
/// the last depth that held when it fails.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    /// The latency a completion must not exceed, ns.
    pub target_ns: u64,
    /// Length of each window judged, ns.
    pub window_ns: u64,
    /// Share of the window's I/Os that must meet the target, percent (100: every I/O, and
    /// the first that misses it lowers the depth at once).
    pub percentile: f64,
    /// Keep adjusting the depth until the run ends (fio's `latency_run=1`) instead of ending
    /// the job after one more window at the depth found.
    pub keep_running: bool,
}

/// What a job asks of the runner beyond its I/O pattern (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JobControls {
    /// CPUs the job's workers may run on; empty: wherever the process may.
    pub cpus: Vec<u32>,
    /// Each worker runs on one CPU of `cpus`, in turn, the first at this index of the list
    /// (fio's `cpus_allowed_policy=split`, counting clones over the whole job file); `None`:
    /// every worker may use all of them.
    pub cpu_split_start: Option<u32>,
    /// Rated I/O arrives as a Poisson process — exponentially distributed gaps whose mean is
    /// the rate's — instead of evenly spaced.
    pub poisson_arrivals: bool,
    /// The latest start delay, ns: each worker starts after a delay drawn evenly between the
    /// workload's `start_delay_ns` and this (fio's `startdelay=A-B`).
    pub start_delay_high_ns: Option<u64>,
    /// Which other jobs end when this one has ended.
    pub ends_others: EndOthers,
    /// The flow this job belongs to.
    pub flow: Option<Flow>,
    /// The latency-target search.
    pub latency_target: Option<LatencyTarget>,
}

impl JobControls {
    /// Whether these are the defaults (nothing changes).
    pub fn is_default(&self) -> bool {
        *self == JobControls::default()
    }

    /// The CPUs worker `worker` (its index among the job's workers) may run on; empty: any.
    pub fn cpus_of_worker(&self, worker: u32) -> Vec<u32> {
        match (self.cpu_split_start, self.cpus.len()) {
            (_, 0) => Vec::new(),
            (Some(start), count) => {
                vec![self.cpus[(start as usize + worker as usize) % count]]
            }
            (None, _) => self.cpus.clone(),
        }
    }

    /// The start delay of worker `worker`, ns, between `low_ns` and `start_delay_high_ns`,
    /// drawn from `seed` (the same seed, the same delays).
    pub fn start_delay_of_worker(&self, low_ns: u64, seed: u64, worker: u32) -> u64 {
        match self.start_delay_high_ns {
            Some(high) if high > low_ns => {
                let mut rng = fastrand::Rng::with_seed(
                    seed ^ 0x5354_4152_5444_4c59 ^ u64::from(worker).wrapping_mul(0x9e37),
                );
                rng.u64(low_ns..=high)
            }
            _ => low_ns,
        }
    }
}
