//! What I/O to issue: the validated [`Workload`] and [`Plan`], block-size mixes, and the
//! generators the worker asks on the hot path — the per-worker [`planner::IoPlanner`] that
//! turns a workload into offsets, distributions, the random map, file sets, write data — plus
//! the default suite and sweep expansion.
//!
//! Nothing here reads outside input: the flags, fio job files and TOML job files are read in
//! [`crate::input`], which builds a [`Plan`] of these types; only a fully valid plan reaches
//! the runner.

pub mod access;
pub mod block_shuffle;
pub mod block_size;
pub mod buffer_pattern;
pub mod distribution;
pub mod error;
pub mod file_set;
pub mod job_controls;
pub mod lfsr;
pub mod limits;
pub mod offset_rules;
pub mod planner;
pub mod random_map;
pub mod random_pass;
pub mod replay;
pub mod steady;
pub mod suite;
pub mod sweep;
pub mod target_fit;
pub mod verify_settings;
pub mod write_data;

pub use block_size::BlockSizeMix;
pub use error::WorkloadError;

use crate::result::{AccessLine, AccessSpec, SweepValue, Workload};
use serde::{Deserialize, Serialize};

/// Direction and pattern as fio's `rw` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessPattern {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes.
    Rw,
    /// Random mixed reads and writes.
    RandRw,
    /// Sequential trims (discards).
    Trim,
    /// Random trims.
    RandTrim,
    /// Sequential trims, each followed by a write of the same range (fio's `trimwrite`).
    TrimWrite,
    /// Random trims, each followed by a write of the same range (fio's `randtrimwrite`).
    RandTrimWrite,
}

impl AccessPattern {
    /// Read percentage and random percentage this pattern means by default.
    pub fn defaults(self) -> (u8, u8) {
        match self {
            AccessPattern::Read => (100, 0),
            AccessPattern::Write => (0, 0),
            AccessPattern::RandRead => (100, 100),
            AccessPattern::RandWrite => (0, 100),
            AccessPattern::Rw => (50, 0),
            AccessPattern::RandRw => (50, 100),
            AccessPattern::Trim | AccessPattern::TrimWrite => (0, 0),
            AccessPattern::RandTrim | AccessPattern::RandTrimWrite => (0, 100),
        }
    }

    /// Percentage of trims this pattern means (the rest after reads are writes).
    pub fn trim_percent(self) -> u8 {
        match self {
            AccessPattern::Trim | AccessPattern::RandTrim => 100,
            AccessPattern::TrimWrite | AccessPattern::RandTrimWrite => 50,
            _ => 0,
        }
    }

    /// Whether every trim of this pattern is followed by a write of the same range.
    pub fn write_after_trim(self) -> bool {
        matches!(
            self,
            AccessPattern::TrimWrite | AccessPattern::RandTrimWrite
        )
    }

    /// Whether the pattern mixes reads and writes (`rw`, `randrw`): only then does a read
    /// percentage apply.
    pub fn is_mixed(self) -> bool {
        matches!(self, AccessPattern::Rw | AccessPattern::RandRw)
    }

    /// fio's name of the pattern.
    pub fn name(self) -> &'static str {
        match self {
            AccessPattern::Read => "read",
            AccessPattern::Write => "write",
            AccessPattern::RandRead => "randread",
            AccessPattern::RandWrite => "randwrite",
            AccessPattern::Rw => "rw",
            AccessPattern::RandRw => "randrw",
            AccessPattern::Trim => "trim",
            AccessPattern::RandTrim => "randtrim",
            AccessPattern::TrimWrite => "trimwrite",
            AccessPattern::RandTrimWrite => "randtrimwrite",
        }
    }

    /// Reads fio's spelling (`randread`, `readwrite` …).
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        Ok(match text {
            "read" => AccessPattern::Read,
            "write" => AccessPattern::Write,
            "randread" => AccessPattern::RandRead,
            "randwrite" => AccessPattern::RandWrite,
            "rw" | "readwrite" => AccessPattern::Rw,
            "randrw" => AccessPattern::RandRw,
            "trim" => AccessPattern::Trim,
            "randtrim" => AccessPattern::RandTrim,
            "trimwrite" => AccessPattern::TrimWrite,
            "randtrimwrite" => AccessPattern::RandTrimWrite,
            other => {
                return Err(WorkloadError::Unknown {
                    kind: "pattern",
                    name: other.to_string(),
                    choices: "choose read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite or randtrimwrite".to_string(),
                });
            }
        })
    }
}

impl Workload {
    /// Whether any I/O of this workload writes.
    pub fn writes(&self) -> bool {
        self.access.writes()
    }

    /// Whether any I/O of this workload reads.
    pub fn reads(&self) -> bool {
        self.access.reads()
    }

    /// Whether any I/O of this workload trims (discards).
    pub fn trims(&self) -> bool {
        self.access.trims()
    }

    /// Whether any I/O of this workload changes what the target holds (writes or trims): the
    /// safety rules of writes apply.
    pub fn modifies(&self) -> bool {
        self.access.modifies()
    }

    /// Sets a simple workload: `mix` of block sizes, all lines with the same read and random
    /// percentages, random offsets aligned to `alignment_bytes`.
    pub fn set_simple(
        &mut self,
        mix: &BlockSizeMix,
        read_percent: u8,
        random_percent: u8,
        alignment_bytes: u64,
    ) {
        self.set_simple_with_trims(mix, read_percent, 0, random_percent, alignment_bytes);
    }

    /// As [`Workload::set_simple`], with `trim_percent` of the I/Os trims (writes are what
    /// reads and trims leave).
    pub fn set_simple_with_trims(
        &mut self,
        mix: &BlockSizeMix,
        read_percent: u8,
        trim_percent: u8,
        random_percent: u8,
        alignment_bytes: u64,
    ) {
        self.access = AccessSpec {
            lines: mix
                .shares
                .iter()
                .map(|share| AccessLine {
                    alignment_bytes,
                    trim_percent,
                    ..AccessLine::new(
                        share.size_bytes,
                        share.percent,
                        read_percent,
                        random_percent,
                    )
                })
                .collect(),
        };
    }

    /// A short description like `randread 4k QD32`.
    pub fn summary(&self) -> String {
        let read = self.access.read_percent().round() as u32;
        let random = self.access.random_percent().round() as u32;
        let trim = self.access.trim_percent().round() as u32;
        let then_write = self.offsets.write_after_trim;
        let pattern = match (read, trim, random, then_write) {
            (100, 0, 0, _) => "read".to_string(),
            (0, 0, 0, _) => "write".to_string(),
            (100, 0, 100, _) => "randread".to_string(),
            (0, 0, 100, _) => "randwrite".to_string(),
            (0, 100, 0, _) => "trim".to_string(),
            (0, 100, 100, _) => "randtrim".to_string(),
            (0, 50, 0, true) => "trimwrite".to_string(),
            (0, 50, 100, true) => "randtrimwrite".to_string(),
            (read, 0, random, _) => format!("{read}% read {random}% random"),
            (read, trim, random, _) => format!("{read}% read {trim}% trim {random}% random"),
        };
        let sizes = match self.access.single_size() {
            Some(size) => crate::units::format_size(size),
            None => "mixed sizes".to_string(),
        };
        let workers = if self.workers > 1 {
            format!(" x{} workers", self.workers)
        } else {
            String::new()
        };
        let data = match self.write_data.describe() {
            Some(data) if self.writes() => format!(", {data}"),
            _ => String::new(),
        };
        let files = &self.worker_files;
        let files = if files.per_worker > 1 {
            let open = match files.open_files {
                Some(open) if open < files.per_worker => format!(", {open} at a time"),
                _ => String::new(),
            };
            format!(
                ", {} files per worker ({}{open})",
                files.per_worker, files.service
            )
        } else {
            String::new()
        };
        format!(
            "{pattern} {sizes} QD{}{workers}{files}{data}",
            self.queue_depth
        )
    }
}

/// A job: a workload against some of the run's targets. Jobs of one test run at the same time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobPlan {
    /// Name (a fio job's section name, or the test's name).
    pub name: String,
    /// Reporting group (fio's groups: `new_group`, `stonewall`).
    pub group: u32,
    /// The workload.
    pub workload: Workload,
    /// Indexes into [`Plan::targets`].
    pub targets: Vec<usize>,
    /// The traces the job's clones replay instead of generating I/O (fio's `read_iolog`), their
    /// files mapped to `targets` in order; kept out of saved plans (the workload names the log).
    #[serde(skip)]
    pub replay: Option<replay::CloneTraces>,
}

impl JobPlan {
    /// The job's targets in the groups its workers move over: `worker_files.per_worker` at a
    /// time, in order (one each by default).
    pub fn file_sets(&self) -> std::slice::Chunks<'_, usize> {
        self.targets
            .chunks(self.workload.worker_files.per_worker.max(1) as usize)
    }

    /// Worker threads of the job when each group of files has `workers_per_set` workers.
    pub fn worker_threads(&self, workers_per_set: u32) -> usize {
        workers_per_set as usize * self.file_sets().len()
    }
}

/// One test of a plan: jobs that start together; the next test starts when all have ended
/// (fio's stonewall).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestPlan {
    /// Name shown in tables and kept in results.
    pub name: String,
    /// The jobs, started together.
    pub jobs: Vec<JobPlan>,
    /// How the test is run beyond its jobs (sweep point, caches, steady state).
    #[serde(default)]
    pub settings: TestSettings,
}

/// How a test is run beyond its jobs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TestSettings {
    /// The sweep point this test is (empty when not swept).
    pub sweep: Vec<SweepValue>,
    /// Drop the page cache before the test (`--drop-caches`).
    pub drop_caches_before: bool,
    /// End the test once this steady-state criterion holds (`--steady`).
    pub steady: Option<steady::SteadyCriterion>,
}

impl TestPlan {
    /// A test of one job running `workload` against `targets`.
    pub fn single(name: impl Into<String>, workload: Workload, targets: Vec<usize>) -> Self {
        let name = name.into();
        TestPlan {
            jobs: vec![JobPlan {
                name: name.clone(),
                group: 0,
                workload,
                targets,
                replay: None,
            }],
            name,
            settings: TestSettings::default(),
        }
    }
}

/// Everything a run will do, validated before any I/O.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Every target of every job.
    pub targets: Vec<crate::targets::TargetSpec>,
    /// Tests in order.
    pub tests: Vec<TestPlan>,
}
