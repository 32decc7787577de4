//! The RunResult schema: plain, versioned serde data, the one artifact every exporter,
//! `compare` and the analysis read. Field by field in docs/result-schema.md.
//!
//! This module is the bottom layer of iopath: it holds data and the small accessors that read
//! it (names of variants, shares derived from stored counts), and imports nothing of the rest
//! of iopath. The code that builds these values lives above it — the runner, the engines, the
//! recorders, the analysis — each adding its own `impl` blocks where it needs logic.
//!
//! Measured values are integers with their unit in the name (`bytes`, `latency_ns`); rates
//! (`iops`, `bytes_per_second`) are derived from them and stored for convenience.
//!
//! One file per area:
//! - [`run`]: the run as a whole ([`RunResult`], [`SCHEMA_VERSION`]); [`host`]: the machine
//!   ([`HostInfo`]);
//! - [`test`](mod@test): a test, its jobs and the figures of each direction;
//! - [`cpu`]: CPU use while measuring; [`block_io`]: what each block device did meanwhile;
//! - [`engine`]: the engine in effect, what it can do, the direction of an I/O;
//! - [`workload`]: the workload as run and the sweep point;
//! - [`job_controls`]: what a job asks of the runner beyond its I/O pattern;
//! - [`log_options`]: the fio-style log files a job asks for, and [`io_log`] what a run kept
//!   for them;
//! - [`io_handling`]: how a job's files are opened and its requests submitted;
//! - [`file_setup`]: how the files iopath creates are made (filled, or only sized);
//! - [`error_policy`]: what a job does after a failed I/O, and the counts by kind;
//! - [`target`]: what was found about a target before the run;
//! - [`histogram`] and [`series`]: the stored latency histogram and per-second series;
//! - [`path`] and [`analysis`]: the storage path of a target (its hops, a [`shared_list`]:
//!   the paths of files of one filesystem share the hops below their files), and what the
//!   analysis says of a test; [`confirmation`]: the experiment of `iopath run --confirm`;
//! - [`link`]: link tests (`iopath net`);
//! - [`cluster`]: the clients of a multi-client run and each one's own figures.
//! - [`verify`]: data verification asked for and found;
//! - [`server`]: a server's own counters during a test (`--server-metrics`);
//! - [`rate_step`]: a rate that stepped down (a burst bucket, a write cliff);
//! - [`target_groups`] and [`index_runs`]: how a saved result holds thousands of alike
//!   targets (files of one job on one filesystem) and the runs of indexes that name them.
//!
//! ```
//! use iopath::result::{SCHEMA_VERSION, StopReason};
//! assert_eq!(SCHEMA_VERSION, 2);
//! assert_eq!(serde_json::to_string(&StopReason::Interrupted).unwrap(), "\"interrupted\"");
//! ```

pub mod analysis;
pub mod block_io;
pub mod cluster;
pub mod confirmation;
pub mod cpu;
pub mod engine;
pub mod error_policy;
pub mod file_setup;
pub mod histogram;
pub mod host;
pub mod index_runs;
pub mod io_handling;
pub mod io_log;
pub mod job_controls;
pub mod link;
pub mod log_options;
pub mod path;
pub mod pts;
pub mod rate_step;
pub mod run;
pub mod series;
pub mod server;
pub mod shared_list;
pub mod stored_run;
pub mod target;
pub mod target_groups;
pub mod test;
pub mod verdict;
pub mod verify;
pub mod workload;
pub mod write_data;

pub use analysis::{
    ConfidenceInterval, CoreUtilisation, CpuUtilisation, DirectionConfidence, HopUtilisation,
    QueueUtilisation, TestAnalysis, TestConfidence, TrustKind, TrustNote,
};
pub use block_io::BlockDeviceUsage;
pub use cluster::{ClusterLimit, ClusterResult, ClusterVerdict, HostResult, RankResult, Straggler};
pub use confirmation::{Confirmation, ConfirmationOutcome, Experiment};
pub use cpu::{CoreUsage, CpuResult, ProcessUsage};
pub use engine::{
    Capabilities, ConnectionReport, Direction, EngineKind, EngineReport, WriteStability,
};
pub use error_policy::{ErrorCount, ErrorKind, ErrorPolicy, ErrorScope};
pub use file_setup::{CreatedContent, FileSetup, Preallocation};
pub use histogram::SparseHistogram;
pub use host::HostInfo;
pub use io_handling::{AccessHint, DataPath, IoHandling, StatCall};
pub use job_controls::{EndOthers, Flow, JobControls, LatencyTarget};
pub use link::{LinkDirection, LinkTestResult};
pub use path::{Duplex, Hop, HopCapacity, HopKind, HopOrigin, Hops, QueueLimits, StoragePath};
pub use rate_step::{BurstBucket, RateStep, WriteCliff};
pub use run::{RunResult, SCHEMA_VERSION};
pub use series::IntervalPoint;
pub use server::{
    ServerDeviceKind, ServerDeviceSeries, ServerHopUtilisation, ServerPoint, ServerSeries,
};
pub use target::{TargetInfo, TargetKind, TransferSizes};
pub use test::{
    DirectionResult, ErrorSummary, FigureDirection, IoErrorRecord, JobResult, LatencySplit,
    LatencySummary, LatencyTargetResult, PERCENTILES, SteadyOutcome, StopReason, TestResult,
};
pub use verdict::Verdict;
pub use verify::{
    KEPT_MISMATCHES, MismatchKind, VerificationResult, VerifyKind, VerifyMismatch, VerifySettings,
    VerifyTrim,
};
pub use workload::{
    AbsoluteZone, AccessLine, AccessSpec, FileService, OffsetDistribution, OffsetRules,
    RandomOrder, RunLength, SweepAxis, SweepValue, WorkerFiles, Workload, Zone,
};
pub use write_data::{BufferPattern, DedupeMode, WriteData};

/// Whether a flag is off: the `skip_serializing_if` of flags a result leaves out when unset.
fn is_false(value: &bool) -> bool {
    !*value
}

/// Whether a count is 0: the `skip_serializing_if` of counts a result leaves out when none.
fn is_zero(value: &u64) -> bool {
    *value == 0
}
