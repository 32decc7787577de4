//! The evidence of `iopath run --confirm`: after a test's verdict is known, the test is run
//! again briefly with the suspected limit moved (a deeper queue, more workers, larger blocks),
//! and what changed confirms or refutes the verdict.
//!
//! ```
//! use iopath::result::{ConfirmationOutcome, Experiment};
//! assert_eq!(Experiment::QueueDepth.name(), "queue depth");
//! assert_eq!(ConfirmationOutcome::Refuted.name(), "refuted");
//! ```

use super::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// Which limit the experiment moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Experiment {
    /// Twice the queue depth of every job.
    QueueDepth,
    /// Twice the worker threads of every job.
    Workers,
    /// Every block four times larger.
    BlockSize,
    /// O_DIRECT at the same queue depth: buffered I/O without the kernel's hidden queue
    /// (read-ahead, write-back).
    Direct,
}

impl Experiment {
    /// What is moved, in words (`queue depth`).
    pub fn name(self) -> &'static str {
        match self {
            Experiment::QueueDepth => "queue depth",
            Experiment::Workers => "workers",
            Experiment::BlockSize => "block size",
            Experiment::Direct => "O_DIRECT",
        }
    }
}

/// What the experiment says of the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmationOutcome {
    /// The rate moved as the verdict predicts.
    Confirmed,
    /// The rate moved against the prediction: the verdict was wrong.
    Refuted,
    /// The change was too small to confirm and too large to refute, the experiment could not
    /// run to its end, or the verdict predicts nothing the experiment can test.
    Inconclusive,
}

impl ConfirmationOutcome {
    /// As written in reports (`confirmed`).
    pub fn name(self) -> &'static str {
        match self {
            ConfirmationOutcome::Confirmed => "confirmed",
            ConfirmationOutcome::Refuted => "refuted",
            ConfirmationOutcome::Inconclusive => "inconclusive",
        }
    }
}

/// One confirming experiment and what it found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The verdict put to the test.
    pub tested_verdict: Verdict,
    /// The limit moved.
    pub experiment: Experiment,
    /// The setting before (queue depth, workers per target, or largest block in bytes), of the
    /// first job.
    pub setting_before: u64,
    /// The setting in the experiment.
    pub setting_after: u64,
    /// The experiment's ramp, ns (nothing measured during it).
    pub ramp_ns: u64,
    /// The experiment's measured time, ns.
    pub measured_ns: u64,
    /// The test's rate, bytes per second (reads and writes).
    pub bytes_per_second_before: f64,
    /// The experiment's rate, bytes per second.
    pub bytes_per_second_after: f64,
    /// The test's I/Os per second.
    pub iops_before: f64,
    /// The experiment's I/Os per second.
    pub iops_after: f64,
    /// The change of the bytes-per-second rate, percent (+41.0 for 41 % more).
    pub change_percent: f64,
    /// What the change says of the verdict.
    pub outcome: ConfirmationOutcome,
    /// The verdict re-derived from the experiment: the tested one when confirmed, what the
    /// experiment points to when refuted.
    pub derived_verdict: Verdict,
    /// The finding in one line (`QD 2 gave +98 %: queue-depth-bound, confirmed`).
    pub summary: String,
}
