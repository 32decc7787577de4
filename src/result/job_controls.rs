//! What a job asks of the runner beyond its I/O pattern — mostly from fio job files: CPU
//! placement, the arrival process of rated I/O, random start delays, which other jobs end when
//! it ends, flows between jobs and the latency-target search. The logic that reads these lives
//! with the workload (`crate::workload::job_controls`).

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
    /// The log files the job asks for (fio's `write_*_log`); `None`: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs: Option<super::log_options::LogOptions>,
}

impl JobControls {
    /// Whether these are the defaults (nothing changes).
    pub fn is_default(&self) -> bool {
        *self == JobControls::default()
    }
}
