//! Parsers of option values, shared by the command line and job files so that a value means
//! the same everywhere and is refused with the same message.

use crate::result::{AccessSpec, EngineKind, FileService, OffsetDistribution};
use crate::units::{parse_duration_ns, parse_size};
use crate::workload::{AccessPattern, BlockSizeMix, WorkloadError};

/// A size in bytes (`4k`, `1m`, `512`); 0 allowed.
pub fn size(text: &str) -> Result<u64, WorkloadError> {
    Ok(parse_size(text)?)
}

/// A size in bytes above 0.
pub fn positive_size(text: &str) -> Result<u64, WorkloadError> {
    match size(text)? {
        0 => Err(WorkloadError::value(text, "must be greater than 0")),
        value => Ok(value),
    }
}

/// A time in ns (`5` = 5 s, `250ms`); 0 allowed.
pub fn time(text: &str) -> Result<u64, WorkloadError> {
    Ok(parse_duration_ns(text)?)
}

/// A time in ns above 0.
pub fn positive_time(text: &str) -> Result<u64, WorkloadError> {
    match time(text)? {
        0 => Err(WorkloadError::value(text, "must be longer than 0")),
        value => Ok(value),
    }
}

/// A whole percentage, 0–100 (a trailing `%` is allowed).
pub fn percent(text: &str) -> Result<u8, WorkloadError> {
    match text.trim().trim_end_matches('%').parse::<u8>() {
        Ok(value) if value <= 100 => Ok(value),
        _ => Err(WorkloadError::value(
            text,
            "is not a percentage from 0 to 100",
        )),
    }
}

fn count(text: &str, max: u32) -> Result<u32, WorkloadError> {
    count_or(text, max, "")
}

/// A whole number from 1 to `max`; `alternative` follows the range in the message.
fn count_or(text: &str, max: u32, alternative: &str) -> Result<u32, WorkloadError> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err(WorkloadError::value(
            text,
            format!("must be at least 1{alternative}"),
        )),
        Ok(value) if value <= max => Ok(value),
        _ => Err(WorkloadError::value(
            text,
            format!("is not a whole number from 1 to {max}{alternative}"),
        )),
    }
}

/// A queue depth, 1–65536, or one of Iometer's load levels (linear 1, very-light 4, light 8,
/// moderate 64, heavy 256).
pub fn queue_depth(text: &str) -> Result<u32, WorkloadError> {
    if let Some((_, depth)) = super::presets::LOAD_LEVELS
        .iter()
        .find(|(name, _)| *name == text.trim())
    {
        return Ok(*depth);
    }
    count_or(
        text,
        crate::workload::limits::MAX_QUEUE_DEPTH,
        " (or a load level: linear, very-light, light, moderate, heavy)",
    )
}

/// A worker count, 1–4096.
pub fn workers(text: &str) -> Result<u32, WorkloadError> {
    count(text, 4_096)
}

/// A file count (`--files-per-worker`, `--open-files`), 1–1 048 576
/// ([`crate::workload::limits::MAX_FILES`]).
pub fn files(text: &str) -> Result<u32, WorkloadError> {
    count(text, crate::workload::limits::MAX_FILES)
}

/// A count of I/Os between pauses, 1–10^9.
pub fn blocks(text: &str) -> Result<u32, WorkloadError> {
    count(text, 1_000_000_000)
}

/// fio's `rw` names.
pub fn pattern(text: &str) -> Result<AccessPattern, WorkloadError> {
    AccessPattern::parse(text)
}

/// A block size or mix.
pub fn block_sizes(text: &str) -> Result<BlockSizeMix, WorkloadError> {
    BlockSizeMix::parse(text)
}

/// An Iometer access specification.
pub fn spec(text: &str) -> Result<AccessSpec, WorkloadError> {
    AccessSpec::parse(text)
}

/// A random-offset distribution.
pub fn distribution(text: &str) -> Result<OffsetDistribution, WorkloadError> {
    OffsetDistribution::parse(text)
}

/// How a worker with several files picks the next: `roundrobin[:N]`, `sequential`,
/// `random[:N]`, `zipf[:θ]`, `pareto[:h]`, `normal:σ%`.
pub fn file_service(text: &str) -> Result<FileService, WorkloadError> {
    FileService::parse(text)
}

/// An engine name.
pub fn engine(text: &str) -> Result<EngineKind, WorkloadError> {
    Ok(text.parse()?)
}

/// A whole number of I/Os per second above 0.
pub fn iops(text: &str) -> Result<u64, WorkloadError> {
    match text.trim().parse::<u64>() {
        Ok(value) if value > 0 => Ok(value),
        _ => Err(WorkloadError::value(
            text,
            "is not a whole number of I/Os per second above 0",
        )),
    }
}

/// A seed: any whole number.
pub fn seed(text: &str) -> Result<u64, WorkloadError> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| WorkloadError::value(text, "is not a whole number from 0 to 2^64-1"))
}

/// A yes/no value: true, false, 1, 0, on, off, yes, no.
pub fn boolean(text: &str) -> Result<bool, WorkloadError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Ok(true),
        "false" | "0" | "off" | "no" => Ok(false),
        _ => Err(WorkloadError::value(
            text,
            "is not true or false (1/0, on/off, yes/no)",
        )),
    }
}

/// A buffer pattern in fio's syntax (`0xdeadface`, `"text"`, `'file'`, numbers, together).
pub fn buffer_pattern(text: &str) -> Result<crate::result::BufferPattern, WorkloadError> {
    crate::result::BufferPattern::parse(text)
}

/// A verify kind: crc32c, crc32, md5, sha256, xxhash, meta or pattern.
pub fn verify_kind(text: &str) -> Result<crate::result::VerifyKind, WorkloadError> {
    crate::workload::verify_settings::parse_kind(text)
}

/// How duplicate buffers are chosen: repeat or working_set.
pub fn dedupe_mode(text: &str) -> Result<crate::result::DedupeMode, WorkloadError> {
    crate::result::DedupeMode::parse(text)
}

/// How a created file that is not filled gets its size (fio's `fallocate`): none, native,
/// posix, keep or truncate (and fio's `0` and `1`).
pub fn preallocation(text: &str) -> Result<crate::result::Preallocation, WorkloadError> {
    crate::result::Preallocation::from_name(text)
        .ok_or_else(|| WorkloadError::value(text, "is not none, native, posix, keep or truncate"))
}
