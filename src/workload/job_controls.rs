//! What a job asks of the runner beyond its I/O pattern — mostly from fio job files: which
//! CPUs its workers run on (`cpus_allowed`, `cpus_allowed_policy`, `numa_cpu_nodes`), whether
//! rated I/O arrives evenly or as a Poisson process (`rate_process`), random start delays
//! (`startdelay=A-B`), which other jobs end when it ends (`exitall`, `exit_what`), a flow
//! that keeps jobs' I/O counts in proportion (`flow`, `flow_id`), and the search for the
//! deepest queue that meets a latency target (`latency_target` …).
//!
//! The default changes nothing. The controls are data of the result ([`JobControls`]); this
//! module holds how workers read them.
//!
//! ```
//! use iopath::result::JobControls;
//! let controls = JobControls { cpus: vec![0, 1], ..JobControls::default() };
//! assert_eq!(controls.cpus_of_worker(5), vec![0, 1]);
//! let split = JobControls { cpu_split_start: Some(1), ..controls };
//! assert_eq!(split.cpus_of_worker(0), vec![1]);
//! assert_eq!(split.cpus_of_worker(1), vec![0]);
//! ```

use crate::result::JobControls;

impl JobControls {
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
