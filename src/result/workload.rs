//! The workload as run, and the sweep point a test is: what each I/O may be (access
//! specification), where random offsets fall, queue depth, workers, region, run length, rate
//! limits, sync semantics and the engine.
//!
//! Parsing, validation and the descriptions of these types live with the workload readers
//! (`crate::workload`).

use super::engine::EngineKind;
use super::error_policy::ErrorPolicy;
use super::file_setup::FileSetup;
use super::io_handling::IoHandling;
use super::job_controls::JobControls;
use super::verify::VerifySettings;
use super::write_data::WriteData;
use serde::{Deserialize, Serialize};

/// One fully validated workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// What each I/O may be: lines of size, share, read % and random % (one line per block size
    /// for simple workloads).
    pub access: AccessSpec,
    /// Where random offsets fall.
    pub distribution: OffsetDistribution,
    /// I/Os in flight per worker.
    pub queue_depth: u32,
    /// Worker threads per target (per group of `worker_files.per_worker` targets).
    pub workers: u32,
    /// Start of the region, bytes from the start of the target.
    pub region_offset_bytes: u64,
    /// Length of the region, bytes (`None`: to the end of each target).
    pub region_size_bytes: Option<u64>,
    /// Run length.
    pub length: RunLength,
    /// Most I/Os per worker thread (fio's number_ios), if limited.
    pub io_limit: Option<u64>,
    /// Ramp before measuring, ns.
    pub ramp_ns: u64,
    /// Delay before this job starts, ns (fio's startdelay).
    pub start_delay_ns: u64,
    /// Throughput cap over all workers, bytes/s.
    pub rate_bytes_per_second: Option<u64>,
    /// IOPS cap over all workers.
    pub rate_iops: Option<u64>,
    /// Pause after every `think_time_blocks` I/Os, ns (fio's thinktime).
    pub think_time_ns: u64,
    /// I/Os between two think-time pauses (at least 1).
    pub think_time_blocks: u32,
    /// Use the page cache (no O_DIRECT).
    pub buffered: bool,
    /// O_DSYNC on every write.
    pub sync_writes: bool,
    /// fdatasync after every this many writes (fio's fsync / fdatasync), if set.
    pub fsync_every_writes: Option<u32>,
    /// fdatasync once at the end, its time included (dd's conv=fdatasync).
    pub fsync_at_end: bool,
    /// Seed of every random choice; same seed, same offsets.
    pub seed: u64,
    /// How I/O is issued.
    pub engine: EngineKind,
    /// Register buffers and files with the kernel where the engine can.
    pub register_buffers: bool,
    /// Keep going after every I/O error, whatever its kind and errno (errors are still
    /// counted); `errors` holds finer rules (fio's).
    pub continue_on_error: bool,
    /// Which errors the job keeps going after, by kind and errno, and whether an error ending
    /// the job ends the run (fio's `continue_on_error`, `ignore_error`, `exitall_on_error`).
    #[serde(default, skip_serializing_if = "ErrorPolicy::is_default")]
    pub error_policy: ErrorPolicy,
    /// Connections per worker to a network target (protocol engines; at least 1).
    #[serde(default = "one")]
    pub connections: u32,
    /// What writes carry (random, scrambled per write, unless set).
    #[serde(default, skip_serializing_if = "WriteData::is_default")]
    pub write_data: WriteData,
    /// How offsets follow each other beyond the lines' random percentages (fio's offset
    /// modifiers, random map and per-clone regions).
    #[serde(default, skip_serializing_if = "OffsetRules::is_default")]
    pub offsets: OffsetRules,
    /// CPU placement, arrival process, flow between jobs, ending with other jobs and the
    /// latency-target search (mostly from fio job files).
    #[serde(default, skip_serializing_if = "JobControls::is_default")]
    pub controls: JobControls,
    /// How many files each worker moves over, and how it picks the next (fio's `nrfiles`,
    /// `filename=a:b`, `file_service_type`, `openfiles`); by default every target has its own
    /// workers.
    #[serde(default, skip_serializing_if = "WorkerFiles::is_default")]
    pub worker_files: WorkerFiles,
    /// How the job's files are opened and its requests submitted (fio's `create_on_open`,
    /// `fadvise_hint`, `force_async`).
    #[serde(default, skip_serializing_if = "IoHandling::is_default")]
    pub handling: IoHandling,
    /// How a file iopath creates for the job is made: filled first, or only sized (fio's
    /// `overwrite` and `fallocate`).
    #[serde(default, skip_serializing_if = "FileSetup::is_default")]
    pub file_setup: FileSetup,
    /// Data verification (`--verify`, fio's `verify=`); absent: data is not verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifySettings>,
}

fn one() -> u32 {
    1
}

fn is_zero_percent(percent: &u8) -> bool {
    *percent == 0
}

/// How long a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum RunLength {
    /// A measured time after the ramp.
    Time {
        /// Measured time, ns.
        duration_ns: u64,
    },
    /// A total byte count over all workers (dd-like); no ramp.
    Bytes {
        /// Bytes to transfer.
        bytes: u64,
        /// Stop earlier when this time has passed, ns (fio's runtime without time_based).
        time_limit_ns: Option<u64>,
    },
}

/// A whole access specification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessSpec {
    /// The lines; each I/O draws one with probability weight / total weight.
    pub lines: Vec<AccessLine>,
}

/// One line of an access specification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessLine {
    /// Transfer size, bytes.
    pub size_bytes: u64,
    /// Relative weight of this line among all lines.
    pub weight: u32,
    /// Percentage of this line's I/Os that are reads.
    pub read_percent: u8,
    /// Percentage of this line's I/Os that are trims (discards); the rest after reads and
    /// trims are writes. Absent (0) in results written before trims existed.
    #[serde(default, skip_serializing_if = "is_zero_percent")]
    pub trim_percent: u8,
    /// Percentage of this line's I/Os that start at a random offset (else right after the
    /// previous I/O).
    pub random_percent: u8,
    /// Random offsets of this line are multiples of this, bytes.
    pub alignment_bytes: u64,
    /// I/Os issued back to back before the line's delay (Iometer's burst length); 1 when unset.
    pub burst_length: u32,
    /// Pause after each burst, ns (Iometer's transfer delay); 0 for none.
    pub delay_ns: u64,
}

/// The distribution of random offsets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum OffsetDistribution {
    /// Every aligned offset equally likely.
    #[default]
    Uniform,
    /// Zipf with exponent θ.
    Zipf {
        /// Exponent θ (above 0; 1 included).
        theta: f64,
        /// Place of the hottest block, share of the region (0 to 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    /// Pareto with hot share h (0 < h < 1).
    Pareto {
        /// Share of blocks that takes 1-h of the accesses.
        h: f64,
        /// Place of the hottest block, share of the region (0 to 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    /// Gaussian around the middle (or `center`).
    Normal {
        /// Standard deviation, percent of the region.
        stddev_percent: f64,
        /// Place of the mean, share of the region (0 to 1; default 0.5).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    /// Zones of given access and size shares.
    Zoned {
        /// The zones, from the start of the region.
        zones: Vec<Zone>,
    },
    /// Zones of given access shares and absolute sizes, from the start of the region.
    ZonedAbsolute {
        /// The zones.
        zones: Vec<AbsoluteZone>,
    },
    /// A fixed sequence of blocks, repeated.
    Sequence {
        /// Block indexes (multiples of the alignment from the region's start).
        blocks: Vec<u64>,
        /// Each repetition moves on by the sequence's length.
        stride: bool,
    },
}

/// One zone of a zoned distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    /// Share of the accesses, percent.
    pub access_percent: f64,
    /// Share of the region, percent.
    pub size_percent: f64,
}

/// One zone of an absolute zoned distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AbsoluteZone {
    /// Share of the accesses, percent.
    pub access_percent: f64,
    /// Length of the zone, bytes.
    pub size_bytes: u64,
}

/// How a worker's offsets follow each other beyond an access line's random percentage: fio's
/// offset modifiers (`rw=write:4k` leaves holes, `rw=read:-8k` reads backwards,
/// `rw=randread:8` takes a new random offset every 8 I/Os, `rw_sequencer=identical` repeats
/// it), its random map (every block once per pass over the region) and its per-clone regions
/// (`offset_increment`). The default changes nothing: back-to-back sequential I/O, every
/// random I/O drawn on its own, one region for every worker.
///
/// ```
/// use iopath::result::OffsetRules;
/// let rules = OffsetRules { random_every_ios: 8, ..OffsetRules::default() };
/// assert!(!rules.is_default());
/// assert_eq!(rules.random_period(), 8);
/// assert_eq!(OffsetRules::default().random_period(), 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OffsetRules {
    /// Added to the end of a sequential I/O to give the next offset, bytes: holes when
    /// positive (`rw=write:4k`), backwards or overlapping I/O when negative (`rw=read:-8k`).
    /// 0: back to back.
    pub sequential_step_bytes: i64,
    /// A random offset only every this many I/Os (fio's `rw=randread:8`): the first I/O and
    /// then every this-many-th is drawn, the ones between follow the previous I/O (or repeat
    /// its offset with `repeat_offset`). 0 and 1: every I/O is drawn.
    pub random_every_ios: u32,
    /// Between two drawn offsets, issue the previous offset again instead of the one after it
    /// (fio's `rw_sequencer=identical`).
    pub repeat_offset: bool,
    /// Random offsets visit each block of the region once before any block is visited again
    /// (fio's random map, its default): I/Os start at the free blocks in a shuffled order
    /// (`random_order`), and an I/O is cut short where it would reach a visited block. Only
    /// with the uniform distribution.
    pub random_map: bool,
    /// The order in which the random map visits the blocks of a pass.
    #[serde(skip_serializing_if = "RandomOrder::is_default")]
    pub random_order: RandomOrder,
    /// Clone `c` of a job works on its region moved `c ×` this many bytes further (fio's
    /// `offset_increment`; clones are the workers sharing a target).
    pub clone_increment_bytes: u64,
    /// Every trim is followed by a write of the same range (fio's `trimwrite` and
    /// `randtrimwrite`): the I/Os alternate trim, write, trim, write, and only the trims draw
    /// their offset and line.
    pub write_after_trim: bool,
}

/// The order in which random I/O under the random map visits the blocks of a pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RandomOrder {
    /// A shuffle, new each pass: as random as drawing the blocks without replacement.
    #[default]
    Shuffled,
    /// A maximal-length linear-feedback shift register's order, the same each pass (fio's
    /// `random_generator=lfsr`).
    Lfsr,
}

impl RandomOrder {
    /// Whether this is the default order.
    pub fn is_default(&self) -> bool {
        *self == RandomOrder::default()
    }
}

impl OffsetRules {
    /// Whether these are the defaults (nothing changes).
    pub fn is_default(&self) -> bool {
        *self == OffsetRules::default()
    }

    /// I/Os from one drawn offset to the next (at least 1).
    pub fn random_period(&self) -> u32 {
        self.random_every_ios.max(1)
    }
}

/// The files of one worker: the job's targets are taken `per_worker` at a time, in order, and
/// each group is worked by the workload's `workers` workers, each moving over all the group's
/// files with one queue (fio's one thread per job clone, whatever its number of files).
///
/// ```
/// use iopath::result::{FileService, WorkerFiles};
/// let files = WorkerFiles { per_worker: 24, ..WorkerFiles::default() };
/// assert!(!files.is_default());
/// assert_eq!(files.service, FileService::RoundRobin { ios_per_file: 1 });
/// assert_eq!(files.open_at_once(), 24);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkerFiles {
    /// Files each worker moves over (1: a worker has one target).
    pub per_worker: u32,
    /// How a worker picks the file of its next I/O.
    pub service: FileService,
    /// Files a worker does I/O to at a time (fio's `openfiles`): a file leaves this set when a
    /// pass over it is done and the next file takes its place; `None`: all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_files: Option<u32>,
}

impl Default for WorkerFiles {
    fn default() -> Self {
        WorkerFiles {
            per_worker: 1,
            service: FileService::default(),
            open_files: None,
        }
    }
}

impl WorkerFiles {
    /// Whether these are the defaults (every target has its own workers).
    pub fn is_default(&self) -> bool {
        *self == WorkerFiles::default()
    }

    /// Files a worker does I/O to at a time (at least 1).
    pub fn open_at_once(&self) -> u32 {
        self.open_files
            .map_or(self.per_worker, |open| open.min(self.per_worker))
            .max(1)
    }
}

/// How a worker with several files picks the file of its next I/O (fio's
/// `file_service_type`). A file is done for the pass when its sequential I/O reaches the end of
/// its region, or (in a job that runs to a byte count) when its random map is full; done files
/// wait until every file is done, then all start over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FileService {
    /// The next file in order after every `ios_per_file` I/Os (fio's `roundrobin`, the default).
    RoundRobin {
        /// I/Os to one file before the next.
        ios_per_file: u32,
    },
    /// One file until its pass is done, then the next (fio's `sequential`).
    Sequential,
    /// A file drawn at random after every `ios_per_file` I/Os (fio's `random`).
    Random {
        /// I/Os to one file before the next draw.
        ios_per_file: u32,
    },
    /// A file drawn from a zipf, pareto or normal distribution over the files, for every I/O
    /// (fio's `zipf`, `pareto`, `gauss`); files are never done.
    Skewed {
        /// The distribution (zipf, pareto or normal).
        distribution: OffsetDistribution,
    },
}

impl Default for FileService {
    fn default() -> Self {
        FileService::RoundRobin { ios_per_file: 1 }
    }
}

/// One value of one axis at a sweep point, kept in results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepValue {
    /// The axis.
    pub axis: SweepAxis,
    /// The value (bytes for `bs`).
    pub value: u64,
}

/// What a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepAxis {
    /// Queue depth per worker.
    Qd,
    /// Block size (every line of the access specification).
    Bs,
    /// Workers per target.
    Workers,
}
