//! Flags of `iopath run`, and their translation into a validated plan (stage two of parsing:
//! every value is checked here, before any target is touched).

use clap::Args;
use iopath::engine::EngineKind;
use iopath::engine::null::InjectedDelay;
use iopath::run::RunOptions;
use iopath::target::TargetSpec;
use iopath::target::safety::WritePolicy;
use iopath::units::{format_size, parse_duration_ns, parse_size};
use iopath::workload::suite::{base_workload, default_suite};
use iopath::workload::{
    AccessPattern, AccessSpec, BlockSizeMix, OffsetDistribution, Plan, RunLength, TestPlan,
    Workload,
};
use std::path::PathBuf;

fn size_arg(text: &str) -> Result<u64, String> {
    parse_size(text).map_err(|e| e.to_string())
}

fn positive_size_arg(text: &str) -> Result<u64, String> {
    match size_arg(text)? {
        0 => Err(format!("'{text}' must be greater than 0")),
        value => Ok(value),
    }
}

fn time_arg(text: &str) -> Result<u64, String> {
    parse_duration_ns(text).map_err(|e| e.to_string())
}

fn positive_time_arg(text: &str) -> Result<u64, String> {
    match time_arg(text)? {
        0 => Err(format!("'{text}' must be longer than 0")),
        value => Ok(value),
    }
}

fn percent_arg(text: &str) -> Result<u8, String> {
    match text.trim().trim_end_matches('%').parse::<u8>() {
        Ok(value) if value <= 100 => Ok(value),
        _ => Err(format!("'{text}' is not a percentage from 0 to 100")),
    }
}

fn count_arg(text: &str, max: u32) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err(format!("'{text}' must be at least 1")),
        Ok(value) if value <= max => Ok(value),
        _ => Err(format!("'{text}' is not a whole number from 1 to {max}")),
    }
}

fn queue_depth_arg(text: &str) -> Result<u32, String> {
    count_arg(text, 65_536)
}

fn workers_arg(text: &str) -> Result<u32, String> {
    count_arg(text, 4_096)
}

fn pattern_arg(text: &str) -> Result<AccessPattern, String> {
    AccessPattern::parse(text)
}

fn block_size_arg(text: &str) -> Result<BlockSizeMix, String> {
    BlockSizeMix::parse(text)
}

fn spec_arg(text: &str) -> Result<AccessSpec, String> {
    AccessSpec::parse(text)
}

fn distribution_arg(text: &str) -> Result<OffsetDistribution, String> {
    OffsetDistribution::parse(text)
}

fn engine_arg(text: &str) -> Result<EngineKind, String> {
    text.parse()
}

fn iops_arg(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(value) if value > 0 => Ok(value),
        _ => Err(format!(
            "'{text}' is not a whole number of I/Os per second above 0"
        )),
    }
}

/// Reads `1ms` (every I/O) or `200us,2ms,10` (10 % of I/Os take the second delay).
fn null_delay_arg(text: &str) -> Result<InjectedDelay, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [fixed] => Ok(InjectedDelay::Fixed {
            delay_ns: time_arg(fixed)?,
        }),
        [first, second, percent] => {
            let percent: f64 = percent
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=100.0).contains(p))
                .ok_or_else(|| format!("'{percent}' is not a percentage"))?;
            Ok(InjectedDelay::TwoValued {
                first_ns: time_arg(first)?,
                second_ns: time_arg(second)?,
                second_per_million: (percent * 10_000.0).round() as u32,
            })
        }
        _ => Err(format!(
            "'{text}': expected DELAY or FIRST,SECOND,PERCENT_SECOND"
        )),
    }
}

/// Flags of `iopath run`.
#[derive(Debug, Args)]
#[command(after_help = "\
Without workload flags, runs the default suite: SEQ 1 MiB read and write at QD 8, RND 4 KiB read
and write at QD 32 and QD 1, SEQ 512 B read at QD 64; 5 s each after a 1 s ramp. Without a target,
on a temporary file in the current directory (1 GiB, at most a quarter of the free space), filled
with incompressible data first and removed afterwards.

Sizes take k, m, g, t in powers of 1024 (4k = 4096; 4KiB and 4kb too). Times are seconds when bare
and accept ms, s, m, h.

Examples:
  iopath run
  iopath run /dev/nvme0n1 --rw randread --bs 4k --qd 32 --duration 30
  iopath run data.bin --size 2g --rw randrw --read-pct 70 --random-pct 80 --bs 512/10,4k/60,64k/30
  iopath run data.bin --rw write --bs 4k --bytes 1g --fsync-at-end
  iopath run /dev/sdb --rw write --allow-destructive     (only a device without a filesystem)
  iopath run --json - > result.json")]
pub struct RunArgs {
    /// Files or block devices. A missing file is created with --size; none: a temporary file.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,

    /// Direction and pattern: read, write, randread, randwrite, rw, randrw.
    #[arg(long, value_name = "PATTERN", value_parser = pattern_arg, help_heading = "Workload")]
    pub rw: Option<AccessPattern>,
    /// Percentage of reads for mixed workloads (default 50 for rw and randrw).
    #[arg(long, value_name = "PCT", value_parser = percent_arg, help_heading = "Workload")]
    pub read_pct: Option<u8>,
    /// Percentage of I/Os that start at a random offset; the others follow the previous I/O
    /// (Iometer's "percent random").
    #[arg(long, value_name = "PCT", value_parser = percent_arg, help_heading = "Workload")]
    pub random_pct: Option<u8>,
    /// Block size (4k) or size mix (512/10,4k/60,64k/30: size/percent).
    #[arg(long, value_name = "SIZE[/PCT],...", value_parser = block_size_arg, help_heading = "Workload")]
    pub bs: Option<BlockSizeMix>,
    /// Iometer access specification: lines of size:share:read%:random%[:align[:burst[:delay]]],
    /// each I/O drawing its line first (size, direction and randomness chosen together).
    #[arg(long, value_name = "LINES", value_parser = spec_arg, help_heading = "Workload",
          conflicts_with_all = ["rw", "read_pct", "random_pct", "bs", "align"])]
    pub spec: Option<AccessSpec>,
    /// Where random offsets fall: random (uniform), zipf:θ, pareto:h, normal:σ%, zoned:A/S:…
    #[arg(long, value_name = "DIST", value_parser = distribution_arg, help_heading = "Workload")]
    pub distribution: Option<OffsetDistribution>,
    /// Alignment of random offsets (default: the smallest block size).
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, help_heading = "Workload")]
    pub align: Option<u64>,
    /// I/Os in flight per worker (default 1).
    #[arg(long, value_name = "N", value_parser = queue_depth_arg, help_heading = "Workload")]
    pub qd: Option<u32>,
    /// Worker threads per target (default 1).
    #[arg(long, value_name = "N", value_parser = workers_arg, help_heading = "Workload")]
    pub workers: Option<u32>,
    /// Start of the region, bytes into the target.
    #[arg(long, value_name = "SIZE", value_parser = size_arg, help_heading = "Workload")]
    pub offset: Option<u64>,
    /// Size of the region; also the size of a file created for a missing target.
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, help_heading = "Workload")]
    pub size: Option<u64>,
    /// Measured time of each test (default 5 s).
    #[arg(long, value_name = "TIME", value_parser = positive_time_arg, help_heading = "Run length")]
    pub duration: Option<u64>,
    /// Transfer exactly this many bytes over all workers instead of running for a time (dd-like).
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, help_heading = "Run length", conflicts_with = "duration")]
    pub bytes: Option<u64>,
    /// Unmeasured warm-up before each test (default 1 s; 0 allowed).
    #[arg(long, value_name = "TIME", value_parser = time_arg, help_heading = "Run length")]
    pub ramp: Option<u64>,
    /// Throughput cap over all workers, bytes/s (100m = 100 MiB/s).
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, help_heading = "Run length")]
    pub rate: Option<u64>,
    /// IOPS cap over all workers.
    #[arg(long, value_name = "N", value_parser = iops_arg, help_heading = "Run length")]
    pub rate_iops: Option<u64>,
    /// Use the page cache (default: O_DIRECT where the target allows it).
    #[arg(long, help_heading = "I/O")]
    pub buffered: bool,
    /// O_DSYNC on every write.
    #[arg(long, help_heading = "I/O")]
    pub sync: bool,
    /// fdatasync once at the end, its time included (dd's conv=fdatasync).
    #[arg(long, help_heading = "I/O")]
    pub fsync_at_end: bool,
    /// Seed of every random choice: the same seed issues the same offsets.
    #[arg(long, value_name = "N", help_heading = "I/O")]
    pub seed: Option<u64>,
    /// io_uring (default), sync (pread/pwrite; QD above 1 runs as more workers) or null (no I/O).
    #[arg(long, value_name = "ENGINE", value_parser = engine_arg, help_heading = "I/O")]
    pub engine: Option<EngineKind>,
    /// Do not register buffers and files with io_uring.
    #[arg(long, help_heading = "I/O")]
    pub no_register: bool,
    /// Keep going after an I/O error (each is counted).
    #[arg(long, help_heading = "I/O")]
    pub continue_on_error: bool,

    /// Write the RunResult as JSON to FILE ('-': stdout, every message on stderr).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,
    /// Label of this run in comparisons.
    #[arg(long, value_name = "TEXT", help_heading = "Output")]
    pub label: Option<String>,
    /// Name of the test (single-workload runs).
    #[arg(long, value_name = "TEXT", help_heading = "Output")]
    pub name: Option<String>,

    /// Allow writes to block devices and to files iopath did not create.
    #[arg(long, help_heading = "Safety")]
    pub allow_destructive: bool,
    /// With --allow-destructive: write even over a filesystem or partition-table signature.
    #[arg(long, help_heading = "Safety", requires = "allow_destructive")]
    pub force_overwrite_signature: bool,

    /// Write every issued I/O (test, worker, direction, offset, length) as CSV to FILE.
    #[arg(long, value_name = "FILE", hide = true)]
    pub trace_io: Option<PathBuf>,
    /// Stamp every written block with its offset and a marker (first 16 bytes).
    #[arg(long, hide = true)]
    pub stamp_writes: bool,
    /// Null engine: delay every I/O (DELAY) or FIRST,SECOND,PERCENT_SECOND.
    #[arg(long, value_name = "SPEC", value_parser = null_delay_arg, hide = true)]
    pub null_delay: Option<InjectedDelay>,
    /// Length of a series interval (default 1 s).
    #[arg(long, value_name = "TIME", value_parser = positive_time_arg, hide = true)]
    pub interval: Option<u64>,
}

/// A run as the flags describe it.
pub struct RunRequest {
    /// The tests.
    pub plan: Plan,
    /// Options for the runner.
    pub options: RunOptions,
    /// The default suite: tests that may not write a target are skipped, not refused.
    pub is_default_suite: bool,
}

impl RunArgs {
    fn has_workload_flags(&self) -> bool {
        self.rw.is_some()
            || self.spec.is_some()
            || self.distribution.is_some()
            || self.read_pct.is_some()
            || self.random_pct.is_some()
            || self.bs.is_some()
            || self.align.is_some()
            || self.qd.is_some()
            || self.workers.is_some()
            || self.offset.is_some()
            || self.bytes.is_some()
            || self.rate.is_some()
            || self.rate_iops.is_some()
            || self.sync
            || self.fsync_at_end
    }

    /// Checks every flag together and builds the plan. Errors name the flag.
    pub fn to_request(&self, command_line: Vec<String>) -> Result<RunRequest, String> {
        let mut template = base_workload();
        if let Some(engine) = self.engine {
            template.engine = engine;
        }
        if let Some(seed) = self.seed {
            template.seed = seed;
        }
        template.buffered = self.buffered;
        template.register_buffers = !self.no_register;
        template.continue_on_error = self.continue_on_error;
        if let Some(duration_ns) = self.duration {
            template.length = RunLength::Time { duration_ns };
        }
        if let Some(ramp_ns) = self.ramp {
            template.ramp_ns = ramp_ns;
        }
        let is_default_suite = !self.has_workload_flags();
        let targets: Vec<TargetSpec> = if self.targets.is_empty() {
            vec![TargetSpec::TempFile {
                directory: PathBuf::from("."),
                size: self.size.map(|size| size + self.offset.unwrap_or(0)),
            }]
        } else {
            self.targets
                .iter()
                .map(|path| TargetSpec::Path {
                    path: path.clone(),
                    create_size: self.size.map(|size| size + self.offset.unwrap_or(0)),
                })
                .collect()
        };
        let target_indexes: Vec<usize> = (0..targets.len()).collect();
        let tests = if is_default_suite {
            if self.name.is_some() {
                return Err("--name names a single-workload test; give workload flags too".into());
            }
            default_suite(&template, &target_indexes)
        } else {
            vec![self.single_test(template, target_indexes)?]
        };
        Ok(RunRequest {
            plan: Plan { targets, tests },
            options: RunOptions {
                write_policy: WritePolicy {
                    allow_destructive: self.allow_destructive,
                    force_overwrite_signature: self.force_overwrite_signature,
                },
                label: self.label.clone(),
                command_line,
                null_delay: self.null_delay,
                trace: self.trace_io.is_some(),
                stamp_writes: self.stamp_writes,
                interval_ns: self.interval.unwrap_or(0),
            },
            is_default_suite,
        })
    }

    fn single_test(&self, mut workload: Workload, targets: Vec<usize>) -> Result<TestPlan, String> {
        if let Some(spec) = &self.spec {
            workload.access = spec.clone();
        } else {
            let pattern = self.rw.unwrap_or(AccessPattern::Read);
            let (read_default, random_default) = pattern.defaults();
            let mix = self
                .bs
                .clone()
                .unwrap_or_else(|| BlockSizeMix::single(4096));
            let alignment = self.align.unwrap_or(mix.min_bytes());
            workload.set_simple(
                &mix,
                self.read_pct.unwrap_or(read_default),
                self.random_pct.unwrap_or(random_default),
                alignment,
            );
        }
        if let Some(distribution) = &self.distribution {
            workload.distribution = distribution.clone();
        }
        workload.queue_depth = self.qd.unwrap_or(1);
        workload.workers = self.workers.unwrap_or(1);
        workload.region_offset_bytes = self.offset.unwrap_or(0);
        workload.region_size_bytes = self.size;
        if let Some(bytes) = self.bytes {
            if self.ramp.is_some_and(|ramp| ramp > 0) {
                return Err("--ramp cannot be combined with --bytes: a byte count measures every byte (like dd)".into());
            }
            workload.ramp_ns = 0;
            if let Some(size) = workload.access.single_size()
                && bytes % size != 0
            {
                return Err(format!(
                    "--bytes {} is not a whole number of {}-byte blocks",
                    format_size(bytes),
                    size
                ));
            }
            workload.length = RunLength::Bytes {
                bytes,
                time_limit_ns: None,
            };
        }
        workload.rate_bytes_per_second = self.rate;
        workload.rate_iops = self.rate_iops;
        workload.sync_writes = self.sync;
        workload.fsync_at_end = self.fsync_at_end;
        if (self.sync || self.fsync_at_end) && !workload.writes() {
            return Err(format!(
                "--{} only affects writes, and this workload only reads",
                if self.sync { "sync" } else { "fsync-at-end" }
            ));
        }
        let name = self.name.clone().unwrap_or_else(|| workload.summary());
        Ok(TestPlan::single(name, workload, targets))
    }
}
