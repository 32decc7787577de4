//! What the jobs of one test share while it runs: each job's pacer (its rate caps over all
//! its workers), the flows between jobs, and the flag that ends a job's window — raised by the
//! coordinator when the test is steady, and by a job with `ends_others` (fio's `exitall`) when
//! its last worker has ended (or by one failing worker of a job with `exitall_on_error`), for
//! the jobs of its group or of the whole test.
//!
//! ```
//! use iopath::run::job_links::TestLinks;
//! use iopath::result::EndOthers;
//! use iopath::workload::suite::base_workload;
//! use iopath::workload::{JobPlan, TestPlan};
//! let mut first = base_workload();
//! first.controls.ends_others = EndOthers::Group;
//! let job = |name: &str, workload| JobPlan { name: name.into(), group: 0, workload, targets: vec![0], replay: None };
//! let test = TestPlan {
//!     name: "t".into(),
//!     jobs: vec![job("a", first), job("b", base_workload())],
//!     settings: Default::default(),
//! };
//! let links = TestLinks::new(&test, &[1, 1]);
//! assert!(!links.finish(1).load(std::sync::atomic::Ordering::Relaxed));
//! links.worker_ended(0, false);
//! assert!(links.finish(1).load(std::sync::atomic::Ordering::Relaxed));
//! ```

use super::flow::FlowGroup;
use super::pacer::JobPacer;
use crate::result::{EndOthers, ErrorScope};
use crate::workload::TestPlan;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The shared state of a test's jobs (see the module documentation).
pub struct TestLinks {
    pacers: Vec<Option<JobPacer>>,
    flows: Vec<FlowGroup>,
    flow_of_job: Vec<Option<usize>>,
    finish: Vec<AtomicBool>,
    workers_left: Vec<AtomicU64>,
    ends_others: Vec<EndOthers>,
    error_ends: Vec<ErrorScope>,
    groups: Vec<u32>,
    flow_weights: Vec<u64>,
}

impl TestLinks {
    /// The links of `test`, whose jobs run `workers[job]` worker threads each.
    pub fn new(test: &TestPlan, workers: &[u64]) -> Self {
        let mut flows: Vec<(u32, u64)> = Vec::new();
        let mut flow_of_job = Vec::with_capacity(test.jobs.len());
        for (job, &count) in test.jobs.iter().zip(workers) {
            flow_of_job.push(job.workload.controls.flow.map(|flow| {
                let weight = u64::from(flow.weight) * count;
                match flows.iter().position(|(id, _)| *id == flow.id) {
                    Some(index) => {
                        flows[index].1 += weight;
                        index
                    }
                    None => {
                        flows.push((flow.id, weight));
                        flows.len() - 1
                    }
                }
            }));
        }
        TestLinks {
            pacers: test
                .jobs
                .iter()
                .map(|job| {
                    let workload = &job.workload;
                    JobPacer::with_arrivals(
                        workload.rate_bytes_per_second,
                        workload.rate_iops,
                        workload.controls.poisson_arrivals.then_some(workload.seed),
                    )
                })
                .collect(),
            flows: flows
                .into_iter()
                .map(|(_, weight)| FlowGroup::new(weight))
                .collect(),
            flow_of_job,
            finish: test.jobs.iter().map(|_| AtomicBool::new(false)).collect(),
            workers_left: workers.iter().map(|&count| AtomicU64::new(count)).collect(),
            ends_others: test
                .jobs
                .iter()
                .map(|job| job.workload.controls.ends_others)
                .collect(),
            error_ends: test
                .jobs
                .iter()
                .map(|job| job.workload.error_policy.error_ends)
                .collect(),
            groups: test.jobs.iter().map(|job| job.group).collect(),
            flow_weights: test
                .jobs
                .iter()
                .map(|job| {
                    job.workload
                        .controls
                        .flow
                        .map_or(0, |flow| u64::from(flow.weight))
                })
                .collect(),
        }
    }

    /// The pacer of `job`, when it has rate caps.
    pub fn pacer(&self, job: usize) -> Option<&JobPacer> {
        self.pacers.get(job).and_then(Option::as_ref)
    }

    /// The flow of `job`, when it is in one.
    pub fn flow(&self, job: usize) -> Option<&FlowGroup> {
        self.flow_of_job
            .get(job)
            .copied()
            .flatten()
            .map(|index| &self.flows[index])
    }

    /// The flag that ends `job`'s window.
    pub fn finish(&self, job: usize) -> &AtomicBool {
        &self.finish[job]
    }

    /// Ends every job's window (the test is steady).
    pub fn finish_all(&self) {
        for flag in &self.finish {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// A worker of `job` has ended (`failed`: on an error): it leaves its flow; when it failed
    /// and the job's error policy ends others (fio's `exitall_on_error`), their windows end;
    /// when it was the job's last and the job ends others (`exitall`), their windows end.
    pub fn worker_ended(&self, job: usize, failed: bool) {
        if let Some(flow) = self.flow(job) {
            flow.leave(self.flow_weights[job]);
        }
        if failed {
            match self.error_ends[job] {
                ErrorScope::Everything | ErrorScope::Worker => {}
                ErrorScope::Group => self.end_others(job, EndOthers::Group),
                ErrorScope::Test => self.end_others(job, EndOthers::Test),
                ErrorScope::Run => self.end_others(job, EndOthers::Run),
            }
        }
        let left = self.workers_left[job].fetch_sub(1, Ordering::AcqRel);
        if left != 1 {
            return;
        }
        self.end_others(job, self.ends_others[job]);
    }

    /// Ends the windows of the jobs `scope` names, seen from `job`.
    fn end_others(&self, job: usize, scope: EndOthers) {
        match scope {
            EndOthers::None => {}
            EndOthers::Group => {
                for (other, flag) in self.finish.iter().enumerate() {
                    if self.groups[other] == self.groups[job] {
                        flag.store(true, Ordering::Relaxed);
                    }
                }
            }
            EndOthers::Test | EndOthers::Run => self.finish_all(),
        }
    }
}
