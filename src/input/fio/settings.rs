//! What one fio job asks for, in fio's own terms, after its options were read (stage one of the
//! two-stage parse): typed values with fio's defaults, each kept with the line that set it where
//! a later message may need to point there. [`super::mapping`] turns this into iopath's plan.

use super::location::{Location, Set};
use crate::result::{EngineKind, FileService, OffsetDistribution};
use crate::workload::steady::SteadyMetric;

/// fio's `rw` patterns that iopath runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `read`: sequential reads.
    Read,
    /// `write`: sequential writes.
    Write,
    /// `randread`.
    RandRead,
    /// `randwrite`.
    RandWrite,
    /// `rw` / `readwrite`: sequential mix.
    ReadWrite,
    /// `randrw`: random mix.
    RandReadWrite,
    /// `trim`: sequential trims.
    Trim,
    /// `randtrim`: random trims.
    RandTrim,
    /// `trimwrite`: sequential trims, each followed by a write of the same blocks.
    TrimWrite,
    /// `randtrimwrite`: random trims, each followed by a write of the same blocks.
    RandTrimWrite,
}

impl Pattern {
    /// Whether offsets are random.
    pub fn random(self) -> bool {
        matches!(
            self,
            Pattern::RandRead
                | Pattern::RandWrite
                | Pattern::RandReadWrite
                | Pattern::RandTrim
                | Pattern::RandTrimWrite
        )
    }

    /// Whether the pattern reads.
    pub fn reads(self) -> bool {
        matches!(
            self,
            Pattern::Read | Pattern::RandRead | Pattern::ReadWrite | Pattern::RandReadWrite
        )
    }

    /// Whether the pattern writes.
    pub fn writes(self) -> bool {
        !matches!(
            self,
            Pattern::Read | Pattern::RandRead | Pattern::Trim | Pattern::RandTrim
        )
    }

    /// Whether the pattern trims (discards).
    pub fn trims(self) -> bool {
        matches!(
            self,
            Pattern::Trim | Pattern::RandTrim | Pattern::TrimWrite | Pattern::RandTrimWrite
        )
    }

    /// Whether each trim is followed by a write of the same blocks (`trimwrite`,
    /// `randtrimwrite`).
    pub fn write_after_trim(self) -> bool {
        matches!(self, Pattern::TrimWrite | Pattern::RandTrimWrite)
    }
}

/// Block sizes of one direction set by `bs` or `bsrange` (the later of the two wins, as in fio).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockChoice {
    /// One size.
    Fixed(u64),
    /// Every multiple of `min` up to `max`.
    Range {
        /// Smallest size.
        min: u64,
        /// Largest size.
        max: u64,
    },
}

/// One size of a `bssplit` and its share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitShare {
    /// Block size, bytes.
    pub size_bytes: u64,
    /// Share in hundredths of a percent (10000 = 100 %).
    pub share_hundredths: u32,
}

/// A steady-state criterion as fio writes it (`iops:10%`, `bw_slope:1%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadySpec {
    /// What is watched.
    pub metric: SteadyMetric,
    /// fio's `*_slope` criteria.
    pub slope: bool,
    /// Limit, percent of the mean (per second for slopes, as fio computes it).
    pub limit_percent: f64,
}

/// Index of reads in per-direction arrays.
pub const READ: usize = 0;
/// Index of writes in per-direction arrays.
pub const WRITE: usize = 1;
/// Index of trims in per-direction arrays that have them (block sizes, alignments, random %).
pub const TRIM: usize = 2;

/// Everything one job asks for. `[global]` sections fill one of these that each new job starts
/// from.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSettings {
    /// Unit base of sizes (1024 or 1000).
    pub kb_base: u64,
    /// `name` given in the job's own section (a `[global]` name is replaced by the section name).
    pub name: Option<String>,
    /// `filename`: the job's files (shared by its clones).
    pub filenames: Option<Set<Vec<String>>>,
    /// `directory`: where files go (one per clone, round robin, when several).
    pub directories: Vec<String>,
    /// `filename_format`, for generated names.
    pub filename_format: Option<String>,
    /// `nrfiles`: files per clone when names are generated.
    pub nrfiles: u32,
    /// `file_service_type`: how a clone picks the file of its next I/O.
    pub file_service: Option<Set<FileService>>,
    /// `openfiles`: files a clone does I/O to at a time.
    pub open_files: Option<Set<u32>>,
    /// `size`: I/O per clone, spread over its files (and their size when created).
    pub size: Option<Set<u64>>,
    /// `filesize`: size of each file.
    pub filesize: Option<Set<u64>>,
    /// `io_size`: I/O per clone, independent of the region.
    pub io_size: Option<Set<u64>>,
    /// `offset`: start of the region in each file.
    pub offset: u64,
    /// `rw` (default read).
    pub pattern: Pattern,
    /// `rwmixread` (default 50).
    pub read_mix_percent: u8,
    /// Where `rwmixread` or `rwmixwrite` was set.
    pub read_mix_at: Option<Location>,
    /// `percentage_random` per direction, trims third (default 100).
    pub random_percent: [u8; 3],
    /// Where `percentage_random` was set.
    pub random_percent_at: Option<Location>,
    /// `bs` / `bsrange` per direction, trims third (default 4k).
    pub blocks: [BlockChoice; 3],
    /// `bssplit` per direction; wins over `bs`.
    pub splits: [Option<Vec<SplitShare>>; 3],
    /// `blockalign` per direction (default: the direction's smallest block).
    pub alignments: [Option<u64>; 3],
    /// `iodepth` (default 1).
    pub iodepth: u32,
    /// Whether the job (or `[global]`) sets `iodepth`: a blktrace replay without it takes the
    /// capture's depth.
    pub iodepth_set: bool,
    /// `numjobs` (default 1).
    pub numjobs: u32,
    /// `ioengine` as written and what it runs as (default psync → sync).
    pub engine: Set<(String, EngineKind)>,
    /// Page cache in the path (fio's default `direct=0`).
    pub buffered: bool,
    /// `sync`: O_DSYNC writes.
    pub sync_writes: bool,
    /// The buffer options: what writes carry.
    pub write_data: crate::result::WriteData,
    /// Where the last buffer option was set.
    pub write_data_at: Option<Location>,
    /// `fsync` / `fdatasync`: a data sync after every this many writes.
    pub fsync_every_writes: Option<u32>,
    /// `end_fsync`.
    pub end_fsync: Option<Location>,
    /// `runtime`.
    pub runtime: Option<Set<u64>>,
    /// `time_based`.
    pub time_based: Option<Location>,
    /// `ramp_time`.
    pub ramp: Option<Set<u64>>,
    /// `startdelay`, ns.
    pub start_delay_ns: u64,
    /// `rate` per direction, bytes/s per clone.
    pub rate: [Option<u64>; 2],
    /// `rate_iops` per direction, per clone.
    pub rate_iops: [Option<u64>; 2],
    /// Where the last rate cap was set.
    pub rate_at: Option<Location>,
    /// `thinktime`, ns.
    pub think_time_ns: u64,
    /// `thinktime_blocks`.
    pub think_time_blocks: u32,
    /// `random_distribution`.
    pub distribution: Option<Set<OffsetDistribution>>,
    /// `randrepeat` (default true).
    pub randrepeat: bool,
    /// `randseed`.
    pub randseed: Option<u64>,
    /// `stonewall` / `wait_for_previous`.
    pub stonewall: bool,
    /// `wait_for`: the name of an earlier job this one starts after.
    pub wait_for: Option<Set<String>>,
    /// `new_group`.
    pub new_group: bool,
    /// `group_reporting`.
    pub group_reporting: bool,
    /// `loops` (default 1).
    pub loops: u32,
    /// `number_ios`.
    pub number_ios: Option<Set<u64>>,
    /// `allow_file_create` (default true).
    pub allow_file_create: bool,
    /// `invalidate` (default true).
    pub invalidate: bool,
    /// `continue_on_error` and `ignore_error` (what an error ends, from `exitall_on_error`,
    /// is set when the job is mapped).
    pub error_policy: crate::result::ErrorPolicy,
    /// `create_on_open`.
    pub create_on_open: Option<Set<bool>>,
    /// `overwrite`: a file the job only writes is filled before the run all the same.
    pub overwrite: bool,
    /// `fallocate` (fio's default on Linux: `native`).
    pub fallocate: crate::result::Preallocation,
    /// `fadvise_hint` (fio's default: by the job's pattern).
    pub fadvise_hint: crate::result::AccessHint,
    /// `force_async` (io_uring).
    pub force_async: Option<Set<u32>>,
    /// `serialize_overlap`.
    pub serialize_overlap: bool,
    /// `read_iolog`, `write_iolog` and the `replay_*` options.
    pub replay: super::replay_settings::ReplaySettings,
    /// `stat_type`: the look-up call of `ioengine=filestat` and `dirstat`.
    pub stat_type: crate::result::StatCall,
    /// `norandommap` was given.
    pub norandommap: bool,
    /// `steadystate`.
    pub steady: Option<Set<SteadySpec>>,
    /// `ss_dur`, ns.
    pub steady_duration: Option<Set<u64>>,
    /// `ss_ramp`, ns.
    pub steady_ramp: Option<Set<u64>>,
    /// `unlink`.
    pub unlink: bool,
    /// `uri`: the NBD export of `ioengine=nbd`.
    pub uri: Option<Set<String>>,
    /// `nfs_url`: the NFS export (and directory) of `ioengine=nfs`, where the job's files are
    /// named.
    pub nfs_url: Option<Set<String>>,
    /// Shares of the file, offset modifiers, placement, arrivals, exits, flows and latency
    /// targets.
    pub extended: super::extended::ExtendedSettings,
    /// Verification options.
    pub verify: FioVerify,
    /// Log files (`write_bw_log`, …).
    pub logs: crate::result::log_options::LogOptions,
}

impl JobSettings {
    /// fio's defaults; `at` is where an implied default is said to come from (the job file).
    pub fn fio_defaults(at: Location) -> Self {
        JobSettings {
            kb_base: 1024,
            name: None,
            filenames: None,
            directories: Vec::new(),
            filename_format: None,
            nrfiles: 1,
            file_service: None,
            open_files: None,
            size: None,
            filesize: None,
            io_size: None,
            offset: 0,
            pattern: Pattern::Read,
            read_mix_percent: 50,
            read_mix_at: None,
            random_percent: [100, 100, 100],
            random_percent_at: None,
            blocks: [BlockChoice::Fixed(4096); 3],
            splits: [None, None, None],
            alignments: [None, None, None],
            iodepth: 1,
            iodepth_set: false,
            numjobs: 1,
            engine: Set {
                value: ("psync".to_string(), EngineKind::Sync),
                at,
            },
            buffered: true,
            sync_writes: false,
            write_data: Default::default(),
            write_data_at: None,
            fsync_every_writes: None,
            end_fsync: None,
            runtime: None,
            time_based: None,
            ramp: None,
            start_delay_ns: 0,
            rate: [None, None],
            rate_iops: [None, None],
            rate_at: None,
            think_time_ns: 0,
            think_time_blocks: 1,
            distribution: None,
            randrepeat: true,
            randseed: None,
            stonewall: false,
            wait_for: None,
            new_group: false,
            group_reporting: false,
            loops: 1,
            number_ios: None,
            allow_file_create: true,
            invalidate: true,
            error_policy: Default::default(),
            serialize_overlap: false,
            replay: Default::default(),
            stat_type: crate::result::StatCall::Stat,
            create_on_open: None,
            overwrite: false,
            fallocate: crate::result::Preallocation::Native,
            fadvise_hint: crate::result::AccessHint::ByPattern,
            force_async: None,
            norandommap: false,
            steady: None,
            steady_duration: None,
            steady_ramp: None,
            unlink: false,
            uri: None,
            nfs_url: None,
            extended: Default::default(),
            verify: Default::default(),
            logs: Default::default(),
        }
    }

    /// Whether the job issues writes.
    pub fn writes(&self) -> bool {
        self.pattern.writes()
            && !(matches!(self.pattern, Pattern::ReadWrite | Pattern::RandReadWrite)
                && self.read_mix_percent == 100)
    }
}

/// A job's verification options as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioVerify {
    /// `verify` (`None`: 0 or none).
    pub kind: Option<crate::result::VerifyKind>,
    /// `do_verify` (default 1).
    pub after_writes: bool,
    /// `verify_only`.
    pub only: bool,
    /// `verify_fatal`.
    pub fatal: bool,
    /// `verify_interval`, bytes.
    pub interval_bytes: Option<u64>,
    /// `verify_offset`, bytes.
    pub header_offset_bytes: u64,
    /// `verify_pattern`.
    pub pattern: Option<crate::result::BufferPattern>,
    /// `verify_backlog`.
    pub backlog_writes: Option<u32>,
    /// `verify_state_save` given true.
    pub state_save: bool,
    /// `verify_state_load`.
    pub state_load: bool,
    /// `trim_percentage` (0: none).
    pub trim_percent: u8,
    /// `trim_backlog`, writes (0: none).
    pub trim_backlog_writes: u32,
    /// `trim_backlog_batch` (0: `trim_backlog`).
    pub trim_batch: u32,
    /// `trim_verify_zero` (default 1).
    pub trim_verify_zero: bool,
}

impl Default for FioVerify {
    fn default() -> Self {
        FioVerify {
            kind: None,
            after_writes: true,
            only: false,
            fatal: false,
            interval_bytes: None,
            header_offset_bytes: 0,
            pattern: None,
            backlog_writes: None,
            state_save: false,
            state_load: false,
            trim_percent: 0,
            trim_backlog_writes: 0,
            trim_batch: 0,
            trim_verify_zero: true,
        }
    }
}

impl FioVerify {
    /// The workload's settings (`None` when the job does not verify).
    pub fn settings(&self) -> Option<crate::result::VerifySettings> {
        let kind = self.kind?;
        Some(crate::result::VerifySettings {
            kind,
            after_writes: self.after_writes,
            only: self.only,
            fatal: self.fatal,
            interval_bytes: self.interval_bytes,
            header_offset_bytes: self.header_offset_bytes,
            pattern: self.pattern.clone(),
            backlog_writes: self.backlog_writes,
            state_save: self.state_save,
            state_load: self.state_load,
            trim: self.trim(),
        })
    }

    /// The trims of verified blocks: fio trims only with both `trim_percentage` and
    /// `trim_backlog` (init.c: `td->trim_verify`; io_u.c: `check_get_trim`).
    pub fn trim(&self) -> Option<crate::result::VerifyTrim> {
        let percent = self.trim_percent;
        (percent > 0 && self.trim_backlog_writes > 0).then_some(crate::result::VerifyTrim {
            percent,
            backlog_writes: self.trim_backlog_writes,
            batch: if self.trim_batch == 0 {
                self.trim_backlog_writes
            } else {
                self.trim_batch
            },
            verify_zero: self.trim_verify_zero,
        })
    }
}
