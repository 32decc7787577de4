//! The workload options, declared once: the same struct is the `iopath run` flags (clap) and
//! the keys of a native TOML job (serde, spelled like the flags: `read-pct`, `fsync-at-end`),
//! and both go through the same parsers ([`super::option_values`]) and the same
//! [`WorkloadOptions::apply`].

use super::option_values as parse;
use crate::result::{AccessSpec, EngineKind, FileService, OffsetDistribution, RunLength, Workload};
use crate::result::{BufferPattern, DedupeMode, VerifyKind, VerifySettings, WriteData};
use crate::result::{FileSetup, Preallocation};
use crate::units::format_size;
use crate::units::format_time;
use crate::workload::{AccessPattern, BlockSizeMix, WorkloadError};
use clap::Args;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value as a job file may write it: a string, a number or a boolean.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawValue {
    Text(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
}

impl RawValue {
    fn text(&self) -> String {
        match self {
            RawValue::Text(text) => text.clone(),
            RawValue::Integer(value) => value.to_string(),
            RawValue::Float(value) => value.to_string(),
            RawValue::Bool(value) => value.to_string(),
        }
    }
}

macro_rules! deserialize_with {
    ($name:ident, $parser:path, $ty:ty) => {
        fn $name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<$ty>, D::Error> {
            Option::<RawValue>::deserialize(deserializer)?
                .map(|raw| $parser(&raw.text()).map_err(D::Error::custom))
                .transpose()
        }
    };
}

deserialize_with!(de_pattern, parse::pattern, AccessPattern);
deserialize_with!(de_percent, parse::percent, u8);
deserialize_with!(de_block_sizes, parse::block_sizes, BlockSizeMix);
deserialize_with!(de_spec, parse::spec, AccessSpec);
deserialize_with!(de_distribution, parse::distribution, OffsetDistribution);
deserialize_with!(de_positive_size, parse::positive_size, u64);
deserialize_with!(de_size, parse::size, u64);
deserialize_with!(de_queue_depth, parse::queue_depth, u32);
deserialize_with!(de_workers, parse::workers, u32);
deserialize_with!(de_files, parse::files, u32);
deserialize_with!(de_file_service, parse::file_service, FileService);
deserialize_with!(de_blocks, parse::blocks, u32);
deserialize_with!(de_positive_time, parse::positive_time, u64);
deserialize_with!(de_time, parse::time, u64);
deserialize_with!(de_iops, parse::iops, u64);
deserialize_with!(de_engine, parse::engine, EngineKind);
deserialize_with!(de_seed, parse::seed, u64);
deserialize_with!(de_boolean, parse::boolean, bool);
deserialize_with!(de_buffer_pattern, parse::buffer_pattern, BufferPattern);
deserialize_with!(de_dedupe_mode, parse::dedupe_mode, DedupeMode);
deserialize_with!(de_verify_kind, parse::verify_kind, VerifyKind);
deserialize_with!(de_preallocation, parse::preallocation, Preallocation);

fn ser_display<T: std::fmt::Display, S: Serializer>(
    value: &Option<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => serializer.serialize_str(&value.to_string()),
        None => serializer.serialize_none(),
    }
}

fn ser_size<S: Serializer>(value: &Option<u64>, serializer: S) -> Result<S::Ok, S::Error> {
    ser_display(&value.map(format_size), serializer)
}

fn ser_dedupe_mode<S: Serializer>(
    value: &Option<DedupeMode>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    ser_display(&value.map(DedupeMode::name), serializer)
}

fn ser_verify_kind<S: Serializer>(
    value: &Option<VerifyKind>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    ser_display(&value.map(VerifyKind::name), serializer)
}

fn ser_preallocation<S: Serializer>(
    value: &Option<Preallocation>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    ser_display(&value.map(Preallocation::name), serializer)
}

fn ser_time<S: Serializer>(value: &Option<u64>, serializer: S) -> Result<S::Ok, S::Error> {
    ser_display(&value.map(format_time), serializer)
}

fn ser_engine<S: Serializer>(value: &Option<EngineKind>, serializer: S) -> Result<S::Ok, S::Error> {
    ser_display(&value.map(EngineKind::name), serializer)
}

fn ser_pattern<S: Serializer>(
    value: &Option<AccessPattern>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    ser_display(&value.map(AccessPattern::name), serializer)
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Every option that shapes a workload. `None` (or `false`) leaves the default.
#[derive(Clone, Debug, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct WorkloadOptions {
    /// Direction and pattern: read, write, randread, randwrite, rw, randrw; trim, randtrim
    /// (discards: a block device's discard, a file's punched hole, NBD TRIM, SCSI UNMAP),
    /// trimwrite, randtrimwrite (each trim followed by a write of the same range). Trims
    /// destroy data as writes do and are refused where the target cannot discard.
    #[arg(long, value_name = "PATTERN", value_parser = parse::pattern, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_pattern",
        serialize_with = "ser_pattern",
        skip_serializing_if = "Option::is_none"
    )]
    pub rw: Option<AccessPattern>,
    /// Percentage of reads of a mixed pattern, rw or randrw (default 50); ignored, with a note,
    /// for a single direction (read, write, randread, randwrite), as fio does.
    #[arg(long, value_name = "PCT", value_parser = parse::percent, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_percent",
        skip_serializing_if = "Option::is_none"
    )]
    pub read_pct: Option<u8>,
    /// Percentage of I/Os that start at a random offset; the others follow the previous I/O
    /// (Iometer's "percent random").
    #[arg(long, value_name = "PCT", value_parser = parse::percent, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_percent",
        skip_serializing_if = "Option::is_none"
    )]
    pub random_pct: Option<u8>,
    /// Block size (4k) or size mix (512/10,4k/60,64k/30: size/percent).
    #[arg(long, value_name = "SIZE[/PCT],...", value_parser = parse::block_sizes, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_block_sizes",
        serialize_with = "ser_display",
        skip_serializing_if = "Option::is_none"
    )]
    pub bs: Option<BlockSizeMix>,
    /// Iometer access specification: lines of
    /// size:share:read%:random%[:align[:burst[:delay[:trim%]]]], each I/O drawing its line
    /// first (size, direction and randomness chosen together); the eighth field makes that
    /// share of the line's I/Os trims.
    #[arg(long, value_name = "LINES", value_parser = parse::spec, help_heading = "Workload",
          conflicts_with_all = ["rw", "read_pct", "random_pct", "bs", "align"])]
    #[serde(
        default,
        deserialize_with = "de_spec",
        serialize_with = "ser_display",
        skip_serializing_if = "Option::is_none"
    )]
    pub spec: Option<AccessSpec>,
    /// Where random offsets fall: random (uniform), zipf:θ, pareto:h, normal:σ% (each with an
    /// optional :centre from 0 to 1), zoned:A/S:…, zoned_abs:A/SIZE:…, sequence:B,B,…
    #[arg(long, value_name = "DIST", value_parser = parse::distribution, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_distribution",
        serialize_with = "ser_display",
        skip_serializing_if = "Option::is_none"
    )]
    pub distribution: Option<OffsetDistribution>,
    /// Alignment of random offsets (default: the smallest block size).
    #[arg(long, value_name = "SIZE", value_parser = parse::positive_size, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_positive_size",
        serialize_with = "ser_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub align: Option<u64>,
    /// Random offsets visit each block of the region once before any block again, as fio does
    /// by default, in a shuffled order new each pass; an I/O stops short where it would reach
    /// a visited block (uniform distribution only).
    #[arg(long, help_heading = "Workload")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub random_map: bool,
    /// I/Os in flight per worker (default 1, or the depth a replayed blktrace capture shows;
    /// io_uring keeps at most 32768, nbd and iscsi 65536; the plan's buffers must fit in half
    /// the available memory).
    #[arg(long, value_name = "N", value_parser = parse::queue_depth, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_queue_depth",
        skip_serializing_if = "Option::is_none"
    )]
    pub qd: Option<u32>,
    /// Worker threads per target, or per group of --files-per-worker files (default 1).
    #[arg(long, value_name = "N", value_parser = parse::workers, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_workers",
        skip_serializing_if = "Option::is_none"
    )]
    pub workers: Option<u32>,
    /// Files each worker moves over with one queue, as fio's one thread per job does with
    /// several files: the targets are taken N at a time, each group worked by --workers
    /// workers (default 1: every target has workers of its own). Up to 1 048 576; each file
    /// stays open for the run, and `ulimit -n` is checked for them before it starts.
    #[arg(long, value_name = "N", value_parser = parse::files, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_files",
        skip_serializing_if = "Option::is_none"
    )]
    pub files_per_worker: Option<u32>,
    /// How a worker with several files picks the next: roundrobin[:N] (default; N I/Os to a
    /// file before the next), sequential (one file until a pass over it is done), random[:N],
    /// zipf[:θ], pareto[:h], normal:σ%.
    // The brackets are the help text's notation for optional parts, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "TYPE", value_parser = parse::file_service, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_file_service",
        serialize_with = "ser_display",
        skip_serializing_if = "Option::is_none"
    )]
    pub file_service: Option<FileService>,
    /// Files a worker does I/O to, and holds open, at a time (fio's openfiles): a file whose
    /// pass is done makes room for the next; with the sync (by pread/pwrite, or fio's mmap and
    /// splice) and io_uring engines each file is opened (mapped, with mmap) when its turn comes
    /// and the least recently used with no I/O in flight is closed beyond N (default: all of its files, all opened before the run; up to 1 048 576).
    #[arg(long, value_name = "N", value_parser = parse::files, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_files",
        skip_serializing_if = "Option::is_none"
    )]
    pub open_files: Option<u32>,
    /// Start of the region, bytes into the target.
    #[arg(long, value_name = "SIZE", value_parser = parse::size, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_size",
        serialize_with = "ser_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub offset: Option<u64>,
    /// Size of the region; also the size of a file created for a missing target.
    #[arg(long, value_name = "SIZE", value_parser = parse::positive_size, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_positive_size",
        serialize_with = "ser_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub size: Option<u64>,
    /// Fill a file created for tests that only write it before the run, so that the writes
    /// overwrite data (fio's overwrite=1). By default only a file some test reads is filled
    /// first; one that tests only write is sized (--fallocate) and the writes lay it out, as
    /// in fio.
    #[arg(long, help_heading = "Workload")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub overwrite: bool,
    /// How a created file that is not filled first gets its size (fio's fallocate): native
    /// (default: fallocate, blocks reserved, no data written), posix, keep (blocks reserved,
    /// size left at 0), truncate (a sparse file) or none (empty); the writes extend a file
    /// left short.
    #[arg(long, value_name = "MODE", value_parser = parse::preallocation, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_preallocation",
        serialize_with = "ser_preallocation",
        skip_serializing_if = "Option::is_none"
    )]
    pub fallocate: Option<Preallocation>,
    /// Measured time of each test (default 5 s). `--runtime` is accepted too, as fio names it.
    #[arg(long, visible_alias = "runtime", value_name = "TIME", value_parser = parse::positive_time, help_heading = "Run length")]
    #[serde(
        default,
        deserialize_with = "de_positive_time",
        serialize_with = "ser_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub duration: Option<u64>,
    /// Transfer exactly this many bytes over all workers instead of running for a time (dd-like).
    #[arg(long, value_name = "SIZE", value_parser = parse::positive_size, help_heading = "Run length", conflicts_with = "duration")]
    #[serde(
        default,
        deserialize_with = "de_positive_size",
        serialize_with = "ser_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub bytes: Option<u64>,
    /// Unmeasured warm-up before each test (default 1 s; 0 allowed).
    #[arg(long, value_name = "TIME", value_parser = parse::time, help_heading = "Run length")]
    #[serde(
        default,
        deserialize_with = "de_time",
        serialize_with = "ser_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub ramp: Option<u64>,
    /// Throughput cap over all workers, bytes/s (100m = 100 MiB/s); below one block a second
    /// it issues one block every so many seconds.
    #[arg(long, value_name = "SIZE", value_parser = parse::positive_size, help_heading = "Run length")]
    #[serde(
        default,
        deserialize_with = "de_positive_size",
        serialize_with = "ser_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub rate: Option<u64>,
    /// IOPS cap over all workers.
    #[arg(long, value_name = "N", value_parser = parse::iops, help_heading = "Run length")]
    #[serde(
        default,
        deserialize_with = "de_iops",
        skip_serializing_if = "Option::is_none"
    )]
    pub rate_iops: Option<u64>,
    /// Pause after every --think-blocks I/Os of each worker (fio's thinktime).
    #[arg(long, value_name = "TIME", value_parser = parse::time, help_heading = "Run length")]
    #[serde(
        default,
        deserialize_with = "de_time",
        serialize_with = "ser_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub think_time: Option<u64>,
    /// I/Os between two think-time pauses (default 1).
    #[arg(long, value_name = "N", value_parser = parse::blocks, help_heading = "Run length", requires = "think_time")]
    #[serde(
        default,
        deserialize_with = "de_blocks",
        skip_serializing_if = "Option::is_none"
    )]
    pub think_blocks: Option<u32>,
    /// Connections per worker to an nbd:// or smb:// target, I/Os spread over them round
    /// robin (no more than the queue depth): NBD multi-conn where the server announces it;
    /// SMB channels of one session where the server offers multichannel, else independent
    /// sessions (at most 32); default 1. Applies to every test of the default suite and of a
    /// preset too.
    #[arg(long, value_name = "N", value_parser = parse::workers, help_heading = "Workload")]
    #[serde(
        default,
        deserialize_with = "de_workers",
        skip_serializing_if = "Option::is_none"
    )]
    pub connections: Option<u32>,
    /// Use the page cache (default: O_DIRECT where the target allows it).
    #[arg(long, help_heading = "I/O")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub buffered: bool,
    /// O_DSYNC on every write.
    #[arg(long, help_heading = "I/O")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub sync: bool,
    /// fdatasync once at the end, its time included (dd's conv=fdatasync); no effect on a
    /// workload that only reads (a note says so).
    #[arg(long, help_heading = "I/O")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub fsync_at_end: bool,
    /// Seed of every random choice: the same seed issues the same offsets.
    #[arg(long, value_name = "N", value_parser = parse::seed, help_heading = "I/O")]
    #[serde(
        default,
        deserialize_with = "de_seed",
        skip_serializing_if = "Option::is_none"
    )]
    pub seed: Option<u64>,
    /// io_uring (default), sync (pread/pwrite; QD above 1 runs as more workers), null (no I/O),
    /// or one file operation per I/O: filecreate, filestat, filedelete, dircreate, dirstat,
    /// dirdelete (with --files N).
    #[arg(long, value_name = "ENGINE", value_parser = parse::engine, help_heading = "I/O")]
    #[serde(
        default,
        deserialize_with = "de_engine",
        serialize_with = "ser_engine",
        skip_serializing_if = "Option::is_none"
    )]
    pub engine: Option<EngineKind>,
    /// Do not register buffers and files with io_uring.
    #[arg(long, help_heading = "I/O")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_register: bool,
    /// Keep going after an I/O error (each is counted).
    #[arg(long, help_heading = "I/O")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub continue_on_error: bool,
    /// Written data compresses by this share, percent (fio's buffer_compress_percentage): each
    /// chunk is random bytes then zeros (or --buffer-pattern); 100 writes zeros. Buffers are
    /// refilled before every write (CPU time) unless --refill-buffers=false.
    #[arg(long, value_name = "PCT", value_parser = parse::percent, help_heading = "Data")]
    #[serde(
        default,
        deserialize_with = "de_percent",
        skip_serializing_if = "Option::is_none"
    )]
    pub compress_pct: Option<u8>,
    /// Chunk that --compress-pct shapes (default 512; 0: the smallest write block; never more
    /// than it).
    #[arg(long, value_name = "SIZE", value_parser = parse::size, help_heading = "Data")]
    #[serde(
        default,
        deserialize_with = "de_size",
        serialize_with = "ser_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub compress_chunk: Option<u64>,
    /// Share of written buffers that repeat an earlier one, percent (fio's dedupe_percentage);
    /// buffers are refilled before every write.
    #[arg(long, value_name = "PCT", value_parser = parse::percent, help_heading = "Data")]
    #[serde(
        default,
        deserialize_with = "de_percent",
        skip_serializing_if = "Option::is_none"
    )]
    pub dedupe_pct: Option<u8>,
    /// Which buffer a duplicate repeats: repeat (the previous new one; default) or working_set
    /// (one of the worker's first new buffers, --dedupe-working-set-pct of the region).
    #[arg(long, value_name = "MODE", value_parser = parse::dedupe_mode, help_heading = "Data")]
    #[serde(
        default,
        deserialize_with = "de_dedupe_mode",
        serialize_with = "ser_dedupe_mode",
        skip_serializing_if = "Option::is_none"
    )]
    pub dedupe_mode: Option<DedupeMode>,
    /// Working set of --dedupe-mode working_set, percent of the region (default 5); with
    /// --dedupe-pct at most 100 in all.
    #[arg(long, value_name = "PCT", value_parser = parse::percent, help_heading = "Data")]
    #[serde(
        default,
        deserialize_with = "de_percent",
        skip_serializing_if = "Option::is_none"
    )]
    pub dedupe_working_set_pct: Option<u8>,
    /// Fill write buffers with this pattern, in fio's buffer_pattern syntax: 0xdeadface,
    /// "text", 'file', decimal numbers, one after the other (at most 64 KiB).
    #[arg(long, value_name = "PATTERN", value_parser = parse::buffer_pattern, help_heading = "Data")]
    #[serde(
        default,
        deserialize_with = "de_buffer_pattern",
        serialize_with = "ser_display",
        skip_serializing_if = "Option::is_none"
    )]
    pub buffer_pattern: Option<BufferPattern>,
    /// Write zeros instead of random data (fio's zero_buffers).
    #[arg(long, help_heading = "Data")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub zero_buffers: bool,
    /// Fill write buffers again before every write (=false: only before the run). Default: on
    /// with --compress-pct below 100 or --dedupe-pct, else off.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse::boolean, help_heading = "Data")]
    #[serde(
        default,
        deserialize_with = "de_boolean",
        skip_serializing_if = "Option::is_none"
    )]
    pub refill_buffers: Option<bool>,
    /// Stamp every 512-byte sector of each write with 24 bytes drawn from its offset and the
    /// write, so that writing a buffer again does not give a block a deduplicating device stores
    /// once
    /// (=false: off). Default: on, unless refilled, zeros, a pattern, --compress-pct or
    /// --dedupe-pct.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse::boolean, help_heading = "Data")]
    #[serde(
        default,
        deserialize_with = "de_boolean",
        skip_serializing_if = "Option::is_none"
    )]
    pub scramble_buffers: Option<bool>,
    /// Verify the data: every written block carries a header (offset, length, generation,
    /// run, checksum of KIND: crc32c, crc32, md5, sha256, xxhash; meta: the header alone;
    /// pattern: --verify-pattern, no header); every read is checked, and every written block
    /// is read back and checked after the workload (with --duration, as fio: each pass's
    /// writes when the next pass begins, as reads of the job). A bad block fails the run
    /// (exit 1). See docs/verify.md.
    #[arg(long, value_name = "KIND", value_parser = parse::verify_kind, help_heading = "Verify")]
    #[serde(
        default,
        deserialize_with = "de_verify_kind",
        serialize_with = "ser_verify_kind",
        skip_serializing_if = "Option::is_none"
    )]
    pub verify: Option<VerifyKind>,
    /// Read back and check every written block after the workload, or after each pass with
    /// --duration (=false: only the workload's own reads are checked; fio's do_verify).
    /// Default: on.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse::boolean, help_heading = "Verify")]
    #[serde(
        default,
        deserialize_with = "de_boolean",
        skip_serializing_if = "Option::is_none"
    )]
    pub verify_read_back: Option<bool>,
    /// Run no workload: only read and check what an earlier run wrote (with
    /// --verify-state-load exactly its blocks, else every block of the region; blocks without
    /// a header count as never written).
    #[arg(long, help_heading = "Verify")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_only: bool,
    /// Stop at the first bad block (default: check everything, then fail).
    #[arg(long, help_heading = "Verify")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_fatal: bool,
    /// Bytes each header covers (default: the smallest block size; at least 80).
    #[arg(long, value_name = "SIZE", value_parser = parse::positive_size, help_heading = "Verify")]
    #[serde(
        default,
        deserialize_with = "de_positive_size",
        serialize_with = "ser_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub verify_interval: Option<u64>,
    /// Where the header sits in each interval, bytes (default 0).
    #[arg(long, value_name = "SIZE", value_parser = parse::size, help_heading = "Verify")]
    #[serde(
        default,
        deserialize_with = "de_size",
        serialize_with = "ser_size",
        skip_serializing_if = "Option::is_none"
    )]
    pub verify_offset: Option<u64>,
    /// The bytes after each header are this pattern and are checked (fio's buffer_pattern
    /// syntax).
    #[arg(long, value_name = "PATTERN", value_parser = parse::buffer_pattern, help_heading = "Verify")]
    #[serde(
        default,
        deserialize_with = "de_buffer_pattern",
        serialize_with = "ser_display",
        skip_serializing_if = "Option::is_none"
    )]
    pub verify_pattern: Option<BufferPattern>,
    /// After every N writes, read those blocks back and check them while the workload runs
    /// (fio's verify_backlog; the reads count as reads, not towards --bytes).
    #[arg(long, value_name = "N", value_parser = parse::blocks, help_heading = "Verify")]
    #[serde(
        default,
        deserialize_with = "de_blocks",
        skip_serializing_if = "Option::is_none"
    )]
    pub verify_backlog: Option<u32>,
    /// Save which blocks each worker wrote, and on which targets, to JOB-N-verify.state in the
    /// current directory.
    #[arg(long, help_heading = "Verify")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_state_save: bool,
    /// Check the blocks a saved state names (with --verify-only: write in one run, verify in
    /// the next); a state saved for another target is refused.
    #[arg(long, help_heading = "Verify")]
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_state_load: bool,
}

impl WorkloadOptions {
    /// Whether any option describes the I/O itself (else the default suite runs).
    pub fn describes_a_workload(&self) -> bool {
        self.rw.is_some()
            || self.spec.is_some()
            || self.distribution.is_some()
            || self.read_pct.is_some()
            || self.random_pct.is_some()
            || self.bs.is_some()
            || self.align.is_some()
            || self.qd.is_some()
            || self.workers.is_some()
            || self.files_per_worker.is_some()
            || self.file_service.is_some()
            || self.open_files.is_some()
            || self.offset.is_some()
            || self.bytes.is_some()
            || self.rate.is_some()
            || self.rate_iops.is_some()
            || self.think_time.is_some()
            || self.sync
            || self.fsync_at_end
            || self.engine.is_some_and(EngineKind::is_file_operation)
    }

    /// Applies the options that every test of a run shares (engine, connections, seed, I/O
    /// mode, how created files are made, random map, duration, ramp) to `workload`: also to each test of the default suite
    /// and of a preset.
    pub fn apply_common(&self, workload: &mut Workload) {
        if let Some(engine) = self.engine {
            workload.engine = engine;
        }
        if let Some(connections) = self.connections {
            workload.connections = connections;
        }
        if let Some(seed) = self.seed {
            workload.seed = seed;
        }
        self.apply_data(&mut workload.write_data);
        workload.buffered |= self.buffered;
        workload.register_buffers &= !self.no_register;
        workload.continue_on_error |= self.continue_on_error;
        self.apply_verify(workload);
        workload.file_setup = FileSetup {
            overwrite: workload.file_setup.overwrite || self.overwrite,
            preallocation: self.fallocate.unwrap_or(workload.file_setup.preallocation),
            first_job_lays_out: workload.file_setup.first_job_lays_out,
        };
        workload.offsets.random_map |= self.random_map;
        if let Some(duration_ns) = self.duration {
            workload.length = RunLength::Time { duration_ns };
        }
        if let Some(ramp_ns) = self.ramp {
            workload.ramp_ns = ramp_ns;
        }
    }

    /// Sets the verify options that give `verify` (a job written back as TOML).
    pub fn set_verify(&mut self, verify: &VerifySettings) {
        self.verify = Some(verify.kind);
        self.verify_read_back = (!verify.after_writes).then_some(false);
        self.verify_only = verify.only;
        self.verify_fatal = verify.fatal;
        self.verify_interval = verify.interval_bytes;
        self.verify_offset =
            (verify.header_offset_bytes != 0).then_some(verify.header_offset_bytes);
        self.verify_pattern = verify.pattern.clone();
        self.verify_state_save = verify.state_save;
        self.verify_state_load = verify.state_load;
        self.verify_backlog = verify.backlog_writes;
    }

    /// Whether any verify option was given.
    fn verifies(&self) -> bool {
        self.verify.is_some()
            || self.verify_read_back.is_some()
            || self.verify_only
            || self.verify_fatal
            || self.verify_interval.is_some()
            || self.verify_offset.is_some()
            || self.verify_pattern.is_some()
            || self.verify_state_save
            || self.verify_state_load
            || self.verify_backlog.is_some()
    }

    /// Sets the verify options given (any of them turns verification on, crc32c unless
    /// --verify names another kind).
    fn apply_verify(&self, workload: &mut crate::result::Workload) {
        if !self.verifies() {
            return;
        }
        let verify = workload.verify.get_or_insert_with(|| VerifySettings {
            after_writes: true,
            ..VerifySettings::default()
        });
        if let Some(kind) = self.verify {
            verify.kind = kind;
        }
        if let Some(read_back) = self.verify_read_back {
            verify.after_writes = read_back;
        }
        verify.only |= self.verify_only;
        verify.fatal |= self.verify_fatal;
        verify.state_save |= self.verify_state_save;
        verify.state_load |= self.verify_state_load;
        if let Some(writes) = self.verify_backlog {
            verify.backlog_writes = Some(writes);
        }
        if let Some(interval) = self.verify_interval {
            verify.interval_bytes = Some(interval);
        }
        if let Some(offset) = self.verify_offset {
            verify.header_offset_bytes = offset;
        }
        if let Some(pattern) = &self.verify_pattern {
            verify.pattern = Some(pattern.clone());
        }
    }

    /// Sets the data options given on `data` (those not given leave it as it is).
    fn apply_data(&self, data: &mut WriteData) {
        if let Some(percent) = self.compress_pct {
            data.compress_percent = Some(percent);
        }
        if let Some(chunk) = self.compress_chunk {
            data.compress_chunk_bytes = Some(chunk);
        }
        if let Some(percent) = self.dedupe_pct {
            data.dedupe_percent = Some(percent);
        }
        if let Some(mode) = self.dedupe_mode {
            data.dedupe_mode = mode;
        }
        if let Some(percent) = self.dedupe_working_set_pct {
            data.dedupe_working_set_percent = Some(percent);
        }
        if let Some(pattern) = &self.buffer_pattern {
            data.pattern = Some(pattern.clone());
        }
        data.zero |= self.zero_buffers;
        if let Some(refill) = self.refill_buffers {
            data.refill = Some(refill);
        }
        if let Some(scramble) = self.scramble_buffers {
            data.scramble = Some(scramble);
        }
    }

    /// Sets the data options that give `data` again through [`WorkloadOptions::apply`] (the
    /// inverse of applying them, for writing a workload as a job file).
    pub fn set_data(&mut self, data: &WriteData) {
        self.compress_pct = data.compress_percent;
        self.compress_chunk = data.compress_chunk_bytes;
        self.dedupe_pct = data.dedupe_percent;
        self.dedupe_mode = (data.dedupe_mode != DedupeMode::default()).then_some(data.dedupe_mode);
        self.dedupe_working_set_pct = data.dedupe_working_set_percent;
        self.buffer_pattern = data.pattern.clone();
        self.zero_buffers = data.zero;
        self.refill_buffers = data.refill;
        self.scramble_buffers = data.scramble;
    }

    /// The data flags given (they only shape what writes carry).
    pub fn data_flags_given(&self) -> Vec<&'static str> {
        [
            (self.compress_pct.is_some(), "--compress-pct"),
            (self.compress_chunk.is_some(), "--compress-chunk"),
            (self.dedupe_pct.is_some(), "--dedupe-pct"),
            (self.dedupe_mode.is_some(), "--dedupe-mode"),
            (
                self.dedupe_working_set_pct.is_some(),
                "--dedupe-working-set-pct",
            ),
            (self.buffer_pattern.is_some(), "--buffer-pattern"),
            (self.zero_buffers, "--zero-buffers"),
            (self.refill_buffers.is_some(), "--refill-buffers"),
            (self.scramble_buffers.is_some(), "--scramble-buffers"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect()
    }

    /// The options given that change what the I/O is (pattern, sizes, mix, alignment, length):
    /// a preset or job file keeps its own, so these are refused with it.
    pub fn access_flags_given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        for (set, flag) in [
            (self.rw.is_some(), "--rw"),
            (self.read_pct.is_some(), "--read-pct"),
            (self.random_pct.is_some(), "--random-pct"),
            (self.bs.is_some(), "--bs"),
            (self.spec.is_some(), "--spec"),
            (self.align.is_some(), "--align"),
            (self.bytes.is_some(), "--bytes"),
            (self.think_time.is_some(), "--think-time"),
        ] {
            if set {
                given.push(flag);
            }
        }
        given
    }

    /// Applies the options that tune a workload without changing what its I/O is: queue depth,
    /// workers, region, distribution, rate caps and write sync.
    pub fn apply_tuning(&self, workload: &mut Workload) {
        if let Some(distribution) = &self.distribution {
            workload.distribution = distribution.clone();
        }
        if let Some(queue_depth) = self.qd {
            workload.queue_depth = queue_depth;
        }
        if let Some(workers) = self.workers {
            workload.workers = workers;
        }
        if let Some(files) = self.files_per_worker {
            workload.worker_files.per_worker = files;
        }
        if let Some(service) = &self.file_service {
            workload.worker_files.service = service.clone();
        }
        if let Some(open) = self.open_files {
            workload.worker_files.open_files = Some(open);
        }
        if let Some(offset) = self.offset {
            workload.region_offset_bytes = offset;
        }
        if let Some(size) = self.size {
            workload.region_size_bytes = Some(size);
        }
        if let Some(rate) = self.rate {
            workload.rate_bytes_per_second = Some(rate);
        }
        if let Some(rate) = self.rate_iops {
            workload.rate_iops = Some(rate);
        }
        workload.sync_writes |= self.sync;
        workload.fsync_at_end |= self.fsync_at_end;
    }

    /// The pattern of a simple workload: `--rw`, read by default (as fio).
    fn pattern(&self) -> AccessPattern {
        self.rw.unwrap_or(AccessPattern::Read)
    }

    /// What [`WorkloadOptions::apply`] leaves out and the user should know, one line each:
    /// `--read-pct` with a single direction (ignored, as fio ignores `rwmixread` there), and
    /// `--fsync-at-end` on `workload` (what `apply` built) when it only reads (no effect, as
    /// dd's conv=fdatasync and fio's end_fsync on reads).
    pub fn notes(&self, workload: &Workload) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(read_percent) = self.read_pct
            && self.spec.is_none()
            && !self.pattern().is_mixed()
        {
            notes.push(format!(
                "--read-pct {read_percent} is ignored: --rw {} is a single direction (as in fio); use --rw rw or --rw randrw for a mix",
                self.pattern().name()
            ));
        }
        if self.fsync_at_end && !workload.modifies() {
            notes.push(
                "--fsync-at-end has no effect: this workload only reads (as dd conv=fdatasync and fio end_fsync on reads)"
                    .into(),
            );
        }
        notes
    }

    /// Builds the workload these options describe on top of `base`. Errors name the option.
    pub fn apply(&self, base: &Workload) -> Result<Workload, WorkloadError> {
        let mut workload = base.clone();
        self.apply_common(&mut workload);
        if let Some(spec) = &self.spec {
            workload.access = spec.clone();
        } else if self.rw.is_some()
            || self.bs.is_some()
            || self.read_pct.is_some()
            || self.random_pct.is_some()
            || self.align.is_some()
        {
            let pattern = self.pattern();
            let (read_default, random_default) = pattern.defaults();
            // A single direction stays that direction whatever --read-pct says (see `notes`).
            let read_percent = match self.read_pct {
                Some(read_percent) if pattern.is_mixed() => read_percent,
                _ => read_default,
            };
            let mix = self
                .bs
                .clone()
                .unwrap_or_else(|| BlockSizeMix::single(4096));
            let alignment = self.align.unwrap_or(mix.min_bytes());
            workload.set_simple_with_trims(
                &mix,
                read_percent,
                pattern.trim_percent(),
                self.random_pct.unwrap_or(random_default),
                alignment,
            );
            workload.offsets.write_after_trim = pattern.write_after_trim();
        }
        self.apply_tuning(&mut workload);
        if let Some(bytes) = self.bytes {
            if self.ramp.is_some_and(|ramp| ramp > 0) {
                return Err(WorkloadError::RampWithBytes);
            }
            workload.ramp_ns = 0;
            if let Some(size) = workload.access.single_size()
                && !bytes.is_multiple_of(size)
            {
                return Err(WorkloadError::BytesNotWholeBlocks {
                    bytes,
                    block_bytes: size,
                });
            }
            workload.length = RunLength::Bytes {
                bytes,
                time_limit_ns: None,
            };
        }
        if let Some(think_time) = self.think_time {
            workload.think_time_ns = think_time;
            workload.think_time_blocks = self.think_blocks.unwrap_or(1);
        }
        if let Some(conflict) = workload.write_data.conflict() {
            return Err(conflict.into());
        }
        if let Some(flag) = self.data_flags_given().first()
            && !workload.writes()
        {
            return Err(WorkloadError::DataFlagOnReads { flag });
        }
        if self.sync && !workload.writes() {
            return Err(WorkloadError::SyncOnReads);
        }
        // Nothing to flush after reads: accepted, with a note (see `notes`). Trims are made
        // durable by the same fdatasync (a punched hole, a discard the device caches).
        workload.fsync_at_end &= workload.modifies();
        Ok(workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::suite::base_workload;

    #[test]
    fn times_format_to_what_parses_back() {
        for nanos in [
            5_000_000_000u64,
            250_000_000,
            1_500_000,
            7,
            3_600_000_000_000,
            0,
        ] {
            assert_eq!(parse::time(&format_time(nanos)), Ok(nanos), "{nanos}");
        }
    }

    #[test]
    fn toml_keys_are_the_flag_names_and_round_trip() {
        let text = r#"
            rw = "randrw"
            read-pct = 70
            bs = "4k/50,64k/50"
            qd = 16
            duration = "30s"
            ramp = 2
            fsync-at-end = true
            distribution = "zipf:1.2"
        "#;
        let options: WorkloadOptions = toml::from_str(text).unwrap();
        assert_eq!(options.read_pct, Some(70));
        assert_eq!(options.ramp, Some(2_000_000_000));
        let written = toml::to_string(&options).unwrap();
        let again: WorkloadOptions = toml::from_str(&written).unwrap();
        assert_eq!(again, options);
        let workload = options.apply(&base_workload()).unwrap();
        assert_eq!(workload.queue_depth, 16);
        assert!(workload.fsync_at_end);
    }

    #[test]
    fn bad_values_in_toml_are_refused_with_their_line() {
        let error = toml::from_str::<WorkloadOptions>("qd = 4\nbs = \"4kk\"\n").unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("4kk") && message.contains("line 2"),
            "{message}"
        );
        let error = toml::from_str::<WorkloadOptions>("queue-depth = 4\n").unwrap_err();
        assert!(error.to_string().contains("queue-depth"));
    }

    #[test]
    fn a_read_percentage_applies_to_mixes_only() {
        let options = |rw: Option<AccessPattern>, read_pct: u8| WorkloadOptions {
            rw,
            read_pct: Some(read_pct),
            ..WorkloadOptions::default()
        };
        for (rw, read_pct) in [
            (Some(AccessPattern::Read), 0),
            (Some(AccessPattern::RandRead), 30),
            (None, 0),
        ] {
            let options = options(rw, read_pct);
            let workload = options.apply(&base_workload()).unwrap();
            assert!(workload.reads() && !workload.writes(), "{rw:?} {read_pct}");
            let notes = options.notes(&workload);
            assert_eq!(notes.len(), 1);
            assert!(
                notes[0].starts_with(&format!("--read-pct {read_pct} is ignored")),
                "{notes:?}"
            );
        }
        let options = options(Some(AccessPattern::Write), 100);
        let workload = options.apply(&base_workload()).unwrap();
        assert!(workload.writes() && !workload.reads());
        assert!(options.notes(&workload)[0].contains("--rw write is a single direction"));

        let mixed = WorkloadOptions {
            rw: Some(AccessPattern::RandRw),
            read_pct: Some(70),
            ..WorkloadOptions::default()
        };
        let workload = mixed.apply(&base_workload()).unwrap();
        assert!((workload.access.read_percent() - 70.0).abs() < 1e-9);
        assert!(mixed.notes(&workload).is_empty());
    }

    #[test]
    fn fsync_at_end_on_reads_is_a_note_and_sync_on_reads_an_error() {
        let reads = WorkloadOptions {
            rw: Some(AccessPattern::RandRead),
            fsync_at_end: true,
            ..WorkloadOptions::default()
        };
        let workload = reads.apply(&base_workload()).unwrap();
        assert!(!workload.fsync_at_end);
        let notes = reads.notes(&workload);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("--fsync-at-end has no effect: this workload only reads"));

        let writes = WorkloadOptions {
            rw: Some(AccessPattern::RandRw),
            ..reads.clone()
        };
        let workload = writes.apply(&base_workload()).unwrap();
        assert!(workload.fsync_at_end);
        assert!(writes.notes(&workload).is_empty());

        let sync_reads = WorkloadOptions {
            sync: true,
            fsync_at_end: false,
            ..reads
        };
        let refused = sync_reads.apply(&base_workload()).unwrap_err();
        assert_eq!(refused, WorkloadError::SyncOnReads);
        assert_eq!(
            refused.to_string(),
            "--sync only affects writes, and this workload writes nothing (it only reads or trims)"
        );
    }
}
