//! Parsers of the fio values that carry structure: `rw` (with its offset modifier), `ioengine`,
//! `bssplit`, `bsrange`, `random_distribution` and `steadystate`. Each says whether a value is
//! malformed ([`OptionError::BadValue`]) or well-formed but asks for something iopath does not
//! do ([`OptionError::Unsupported`]), so that `--ignore-unsupported` can skip the latter only.

use super::extended::Modifier;
use super::settings::{BlockChoice, Pattern, SplitShare, SteadySpec};
use super::values::{size, size_or_percent};
use crate::result::{EngineKind, OffsetDistribution};
use crate::workload::WorkloadError;
use crate::workload::steady::SteadyMetric;

/// Why an option's value cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
    /// The value is malformed.
    BadValue(String),
    /// The value is well-formed but asks for a feature iopath does not have.
    Unsupported(String),
}

impl From<String> for OptionError {
    fn from(message: String) -> Self {
        OptionError::BadValue(message)
    }
}

impl From<WorkloadError> for OptionError {
    fn from(error: WorkloadError) -> Self {
        OptionError::BadValue(error.to_string())
    }
}

/// Largest block size iopath issues (the engines take 32-bit lengths).
pub const MAX_BLOCK_BYTES: u64 = 1 << 30;

/// Most distinct sizes a `bsrange` expands to: a range with more multiples of its smallest
/// size (`bsrange=512:1M` has 2048) is issued as this many of them, evenly spaced from the
/// smallest to the largest, in equal shares (250 divides the 10 000 hundredths of a percent).
const MAX_RANGE_SIZES: u64 = 250;

/// Reads `rw`: the pattern and its optional `:N` offset modifier (for a random pattern a new
/// random offset every N I/Os, for a sequential one N bytes added after each I/O).
pub fn pattern(text: &str, kb_base: u64) -> Result<(Pattern, Modifier), OptionError> {
    let (name, modifier) = match text.split_once(':') {
        Some((name, modifier)) => (name.trim(), Some(modifier.trim())),
        None => (text.trim(), None),
    };
    let pattern = match name {
        "read" => Pattern::Read,
        "write" => Pattern::Write,
        "randread" => Pattern::RandRead,
        "randwrite" => Pattern::RandWrite,
        "rw" | "readwrite" => Pattern::ReadWrite,
        "randrw" => Pattern::RandReadWrite,
        "trim" => Pattern::Trim,
        "randtrim" => Pattern::RandTrim,
        "trimwrite" => Pattern::TrimWrite,
        "randtrimwrite" => Pattern::RandTrimWrite,
        "filecreate" | "filestat" | "filedelete" => {
            return Err(OptionError::Unsupported(
                "file-metadata workloads are not supported".to_string(),
            ));
        }
        other => {
            return Err(OptionError::BadValue(format!(
                "unknown pattern '{other}' (read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite)"
            )));
        }
    };
    let modifier = match modifier {
        Some(text) => rw_modifier(text, pattern.random(), kb_base)?,
        None => Modifier::None,
    };
    Ok((pattern, modifier))
}

/// Reads `ioengine`: the engine iopath runs for it, and a note when the mapping is not one to
/// one.
pub fn engine(text: &str) -> Result<(EngineKind, Option<&'static str>), OptionError> {
    Ok(match text.trim() {
        "io_uring" => (EngineKind::IoUring, None),
        "libaio" => (
            EngineKind::IoUring,
            Some(
                "libaio runs as io_uring with direct=1 (both keep iodepth I/Os in flight), and as iopath's sync engine with buffered I/O (direct=0), where Linux AIO performs each read and write inside io_submit, one I/O in flight per clone",
            ),
        ),
        "psync" => (EngineKind::Sync, None),
        "sync" | "vsync" | "pvsync" | "pvsync2" => (
            EngineKind::Sync,
            Some("runs as iopath's sync engine (pread/pwrite, one I/O in flight per worker)"),
        ),
        "posixaio" => (
            EngineKind::Sync,
            Some(
                "posixaio runs as iopath's sync engine: glibc's POSIX AIO hands each open file's requests to one helper thread that performs them one after another with pread/pwrite, so a job on one file has one I/O in flight whatever its iodepth, as with sync (on several files fio may have one per file in flight, iopath one)",
            ),
        ),
        "mmap" => (
            EngineKind::Sync,
            Some(
                "mmap runs as iopath's sync engine moving each request's bytes through a shared mapping of the file, as fio's mmap engine (an I/O error under the mapping ends the run with SIGBUS, as it ends fio)",
            ),
        ),
        "splice" => (
            EngineKind::Sync,
            Some(
                "splice runs as iopath's sync engine moving each request's bytes through a pipe (splice and vmsplice), as fio's splice engine",
            ),
        ),
        "null" => (EngineKind::Null, None),
        "nbd" => (
            EngineKind::Nbd,
            Some(
                "runs as iopath's NBD client on the export named by uri= (or on the command line)",
            ),
        ),
        "libiscsi" => (
            EngineKind::Iscsi,
            Some(
                "runs as iopath's iSCSI initiator on the LUN named by filename= (or on the command line)",
            ),
        ),
        "nfs" => (
            EngineKind::Nfs,
            Some(
                "runs as iopath's NFS client on the job's files in the directory named by nfs_url= (or on the nfs:// files of the command line)",
            ),
        ),
        name @ ("filecreate" | "filestat" | "filedelete" | "dircreate" | "dirstat"
        | "dirdelete") => (name.parse().expect("a file-operation engine"), None),
        other => {
            return Err(OptionError::Unsupported(format!(
                "engine '{other}' is not available (iopath runs io_uring, libaio as io_uring (buffered libaio as sync), psync/sync/pvsync/pvsync2/vsync/posixaio as sync, mmap and splice as sync with their data paths, null, nbd, libiscsi, nfs, and the file operations filecreate, filestat, filedelete, dircreate, dirstat and dirdelete)"
            )));
        }
    })
}

fn block_size(text: &str, kb_base: u64) -> Result<u64, OptionError> {
    let bytes = size(text, kb_base)?;
    if bytes == 0 {
        return Err(OptionError::BadValue(format!(
            "'{text}': a block size must be above 0"
        )));
    }
    if bytes > MAX_BLOCK_BYTES {
        return Err(OptionError::BadValue(format!(
            "'{text}': block sizes above 1 GiB are not supported"
        )));
    }
    Ok(bytes)
}

/// Reads one direction's `bs`.
pub fn fixed_block(text: &str, kb_base: u64) -> Result<BlockChoice, OptionError> {
    block_size(text, kb_base).map(BlockChoice::Fixed)
}

/// Reads one direction's `bsrange` (`1k-4k` or `1k:4k`).
pub fn block_range(text: &str, kb_base: u64) -> Result<BlockChoice, OptionError> {
    let (low, high) = text
        .split_once('-')
        .or_else(|| text.split_once(':'))
        .ok_or_else(|| format!("'{text}': a range is MIN-MAX, as in 4k-64k"))?;
    let (mut min, mut max) = (block_size(low, kb_base)?, block_size(high, kb_base)?);
    if min > max {
        std::mem::swap(&mut min, &mut max);
    }
    Ok(if min == max {
        BlockChoice::Fixed(min)
    } else {
        BlockChoice::Range { min, max }
    })
}

/// The sizes of a block choice and their shares in hundredths of a percent.
///
/// A range is drawn as fio draws it (io_u.c, `get_next_buflen`): `min + max × U` for a uniform
/// `U` in [0, 1), rounded down to a multiple of `min` and capped at `max`. Each multiple of
/// `min` up to `max` then has the share `min / max`, and when `max` is not a multiple of `min`,
/// `max` itself takes what is left (`bsrange=3k-8k`: 3k and 6k 37.5 % each, 8k 25 %). A range of
/// more than 250 multiples gives 250 of them, evenly spaced, sharing the multiples' part.
pub fn block_shares(choice: BlockChoice) -> Vec<SplitShare> {
    match choice {
        BlockChoice::Fixed(size_bytes) => vec![SplitShare {
            size_bytes,
            share_hundredths: 10_000,
        }],
        BlockChoice::Range { min, max } => {
            let multiples = max / min;
            let count = multiples.min(MAX_RANGE_SIZES);
            // Hundredths of a percent of the multiples together: `multiples × min / max`.
            let multiples_part = (10_000 * u128::from(multiples * min) / u128::from(max)) as u32;
            // Multiple 1, …, `multiples`: every one, or `count` of them evenly spaced.
            let spacing = (count - 1).max(1);
            let multiple = |index: u64| 1 + (index * (multiples - 1) + spacing / 2) / spacing;
            // Cumulative rounding, so that the shares add up to the multiples' part exactly.
            let up_to = |index: u64| (u64::from(multiples_part) * index / count) as u32;
            let mut shares: Vec<SplitShare> = (0..count)
                .map(|index| SplitShare {
                    size_bytes: min * multiple(index),
                    share_hundredths: up_to(index + 1) - up_to(index),
                })
                .collect();
            let capped = 10_000 - multiples_part;
            if max % min != 0 && capped > 0 {
                shares.push(SplitShare {
                    size_bytes: max,
                    share_hundredths: capped,
                });
            } else {
                shares[0].share_hundredths += capped;
            }
            shares.retain(|share| share.share_hundredths > 0);
            shares
        }
    }
}

/// Reads one direction's `bssplit`: `SIZE/PERCENT:SIZE/PERCENT…`; a blank percentage takes an
/// equal part of what the others leave.
pub fn split(text: &str, kb_base: u64) -> Result<Vec<SplitShare>, OptionError> {
    let mut shares = Vec::new();
    let mut blanks = Vec::new();
    for entry in text.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        let (size_text, percent_text) = match entry.split_once('/') {
            Some((size_text, percent)) => (size_text, percent.trim()),
            None => (entry, ""),
        };
        let size_bytes = block_size(size_text, kb_base)?;
        let share_hundredths = if percent_text.is_empty() {
            blanks.push(shares.len());
            0
        } else {
            match percent_text.parse::<f64>() {
                Ok(percent) if (0.0..=100.0).contains(&percent) => (percent * 100.0).round() as u32,
                _ => {
                    return Err(OptionError::BadValue(format!(
                        "'{entry}': '{percent_text}' is not a percentage"
                    )));
                }
            }
        };
        shares.push(SplitShare {
            size_bytes,
            share_hundredths,
        });
        if shares.len() > 64 {
            return Err(OptionError::BadValue(format!(
                "'{text}': more than 64 block sizes"
            )));
        }
    }
    if shares.is_empty() {
        return Err(OptionError::BadValue(format!(
            "'{text}' names no block size"
        )));
    }
    let given: u32 = shares.iter().map(|share| share.share_hundredths).sum();
    if given > 10_000 {
        return Err(OptionError::BadValue(format!(
            "'{text}': the percentages add up to more than 100"
        )));
    }
    if !blanks.is_empty() {
        let rest = 10_000 - given;
        let each = rest / blanks.len() as u32;
        for (order, index) in blanks.iter().enumerate() {
            shares[*index].share_hundredths =
                each + u32::from(order == 0) * (rest - each * blanks.len() as u32);
        }
    } else if given != 10_000 {
        return Err(OptionError::BadValue(format!(
            "'{text}': the percentages add up to {}, not 100",
            given as f64 / 100.0
        )));
    }
    shares.retain(|share| share.share_hundredths > 0);
    Ok(shares)
}

/// Reads one direction's `random_distribution` into iopath's distribution.
pub fn distribution(text: &str, kb_base: u64) -> Result<OffsetDistribution, OptionError> {
    let text = text.trim();
    let (kind, parameters) = text.split_once(':').unwrap_or((text, ""));
    match kind {
        "random" => return Ok(OffsetDistribution::Uniform),
        "zoned" => return zoned(text, parameters),
        "zoned_abs" => return zoned_absolute(text, parameters, kb_base),
        "sequence_stride" => {
            return Err(OptionError::BadValue(format!(
                "unknown distribution '{kind}' (fio's is sequence:…, with random_sequence_stride)"
            )));
        }
        _ => {}
    }
    Ok(OffsetDistribution::parse(text)?)
}

/// `zoned_abs:A/SIZE:…`, sizes in fio's units under `kb_base`.
fn zoned_absolute(
    text: &str,
    parameters: &str,
    kb_base: u64,
) -> Result<OffsetDistribution, OptionError> {
    let mut normalized = Vec::new();
    for zone in parameters.split(':') {
        let (access, zone_size) = zone
            .split_once('/')
            .ok_or_else(|| format!("'{text}': a zone is ACCESS%/SIZE, as in zoned_abs:60/20g"))?;
        let bytes = size(zone_size, kb_base)?;
        normalized.push(format!("{}/{bytes}", access.trim()));
    }
    OffsetDistribution::parse(&format!("zoned_abs:{}", normalized.join(":")))
        .map_err(|error| OptionError::BadValue(format!("'{text}': {error}")))
}

/// `zoned:A/S:…`, where fio lets the last zone leave its size blank (the rest of the region).
fn zoned(text: &str, parameters: &str) -> Result<OffsetDistribution, OptionError> {
    let zones: Vec<(&str, &str)> = parameters
        .split(':')
        .map(|zone| zone.split_once('/').unwrap_or((zone, "")))
        .collect();
    let mut given = 0.0;
    let mut blanks = 0;
    for (_, size_text) in &zones {
        if size_text.trim().is_empty() {
            blanks += 1;
        } else {
            given += size_text.trim().parse::<f64>().unwrap_or(0.0);
        }
    }
    if blanks > 1 || (blanks == 1 && zones.last().is_some_and(|(_, s)| !s.trim().is_empty())) {
        return Err(OptionError::BadValue(format!(
            "'{text}': only the last zone may leave its size blank"
        )));
    }
    let rest = 100.0 - given;
    let normalized: Vec<String> = zones
        .iter()
        .map(|(access, size_text)| {
            if size_text.trim().is_empty() {
                format!("{}/{}", access.trim(), rest)
            } else {
                format!("{}/{}", access.trim(), size_text.trim())
            }
        })
        .collect();
    OffsetDistribution::parse(&format!("zoned:{}", normalized.join(":")))
        .map_err(|error| OptionError::BadValue(format!("'{text}': {error}")))
}

/// Reads `steadystate` (`iops:10%`, `bw_slope:1%`, `lat:5%`).
pub fn steady(text: &str) -> Result<SteadySpec, OptionError> {
    let (criterion, limit) = text
        .split_once(':')
        .ok_or_else(|| format!("'{text}': a criterion is NAME:LIMIT, as in iops:10%"))?;
    let (metric, slope) = match criterion.trim() {
        "iops" => (SteadyMetric::Iops, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw" => (SteadyMetric::Bandwidth, false),
        "bw_slope" => (SteadyMetric::Bandwidth, true),
        "lat" => (SteadyMetric::Latency, false),
        "lat_slope" => (SteadyMetric::Latency, true),
        other => {
            return Err(OptionError::BadValue(format!(
                "unknown criterion '{other}' (iops, iops_slope, bw, bw_slope, lat, lat_slope)"
            )));
        }
    };
    let Some(percent) = limit.trim().strip_suffix('%') else {
        return Err(OptionError::Unsupported(format!(
            "an absolute limit is not supported; give it in percent of the mean, as in {}:10%",
            criterion.trim()
        )));
    };
    let limit_percent = percent
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|value| *value > 0.0 && *value <= 100.0)
        .ok_or_else(|| format!("'{limit}' is not a percentage above 0"))?;
    Ok(SteadySpec {
        metric,
        slope,
        limit_percent,
    })
}

/// Reads an `offset`: bytes (a percentage of the target is refused as unsupported).
pub fn offset(text: &str, kb_base: u64) -> Result<u64, OptionError> {
    match size_or_percent(text, kb_base)? {
        super::values::SizeValue::Bytes(bytes) => Ok(bytes),
        super::values::SizeValue::Percent(_) => Err(OptionError::Unsupported(
            "a percentage of the target is not supported; give a size".to_string(),
        )),
    }
}

/// Reads `rw`'s suffix for a random (`count`) or sequential (`step`, a signed size) pattern.
pub fn rw_modifier(text: &str, random: bool, kb_base: u64) -> Result<Modifier, OptionError> {
    let text = text.trim();
    if random {
        let count = super::values::integer(text, 1, u64::from(u32::MAX))? as u32;
        return Ok(if count > 1 {
            Modifier::Every(count)
        } else {
            Modifier::None
        });
    }
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let bytes = super::values::size(magnitude, kb_base)?;
    let step = i64::try_from(bytes)
        .map_err(|_| OptionError::BadValue(format!("'{text}' is too large")))?;
    Ok(match (step, negative) {
        (0, _) => Modifier::None,
        (step, true) => Modifier::Step(-step),
        (step, false) => Modifier::Step(step),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsupported<T: std::fmt::Debug>(result: Result<T, OptionError>) -> bool {
        matches!(result, Err(OptionError::Unsupported(_)))
    }

    #[test]
    fn patterns_and_modifiers() {
        let plain = |pattern| Ok((pattern, Modifier::None));
        assert_eq!(pattern("randrw", 1024), plain(Pattern::RandReadWrite));
        assert_eq!(pattern("readwrite", 1024), plain(Pattern::ReadWrite));
        assert_eq!(pattern("randread:1", 1024), plain(Pattern::RandRead));
        assert_eq!(pattern("write:0", 1024), plain(Pattern::Write));
        assert_eq!(
            pattern("read:-8k", 1024),
            Ok((Pattern::Read, Modifier::Step(-8192)))
        );
        assert_eq!(
            pattern("write:4k", 1024),
            Ok((Pattern::Write, Modifier::Step(4096)))
        );
        assert_eq!(
            pattern("randread:8", 1024),
            Ok((Pattern::RandRead, Modifier::Every(8)))
        );
        assert_eq!(rw_modifier("-8k", false, 1024), Ok(Modifier::Step(-8192)));
        assert_eq!(rw_modifier("4k", false, 1024), Ok(Modifier::Step(4096)));
        assert_eq!(rw_modifier("0", false, 1024), Ok(Modifier::None));
        assert_eq!(rw_modifier("8", true, 1024), Ok(Modifier::Every(8)));
        assert_eq!(rw_modifier("1", true, 1024), Ok(Modifier::None));
        assert!(rw_modifier("0", true, 1024).is_err());
        assert_eq!(pattern("randtrim", 1024), plain(Pattern::RandTrim));
        assert_eq!(pattern("trimwrite", 1024), plain(Pattern::TrimWrite));
        assert!(matches!(
            pattern("raed", 1024),
            Err(OptionError::BadValue(_))
        ));
        assert!(matches!(
            pattern("read:x", 1024),
            Err(OptionError::BadValue(_))
        ));
    }

    #[test]
    fn engines_map_or_are_refused() {
        assert_eq!(engine("libaio").unwrap().0, EngineKind::IoUring);
        assert_eq!(engine("pvsync2").unwrap().0, EngineKind::Sync);
        assert_eq!(engine("null").unwrap(), (EngineKind::Null, None));
        assert_eq!(engine("libiscsi").unwrap().0, EngineKind::Iscsi);
        assert_eq!(engine("nbd").unwrap().0, EngineKind::Nbd);
        assert_eq!(engine("nfs").unwrap().0, EngineKind::Nfs);
        assert_eq!(engine("posixaio").unwrap().0, EngineKind::Sync);
        assert_eq!(engine("splice").unwrap().0, EngineKind::Sync);
        assert_eq!(engine("mmap").unwrap().0, EngineKind::Sync);
        assert!(unsupported(engine("sg")));
    }

    #[test]
    fn splits_fill_blanks_and_must_add_up() {
        let shares = split("4k/50:1k/:32k/", 1024).unwrap();
        assert_eq!(
            shares
                .iter()
                .map(|s| s.share_hundredths)
                .collect::<Vec<_>>(),
            [5000, 2500, 2500]
        );
        let shares = split("512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10", 1024).unwrap();
        assert_eq!(shares.len(), 8);
        assert_eq!(
            split("4k/33.5:8k/66.5", 1024).unwrap()[0].share_hundredths,
            3350
        );
        for bad in ["4k/50:8k/40", "4k/80:8k/30", "", "0/100", "4k/x", "4k/101"] {
            assert!(split(bad, 1024).is_err(), "{bad}");
        }
    }

    #[test]
    fn ranges_expand_to_multiples() {
        assert_eq!(block_range("4k-4k", 1024), Ok(BlockChoice::Fixed(4096)));
        let range = block_range("4k:1k", 1024).unwrap();
        assert_eq!(
            range,
            BlockChoice::Range {
                min: 1024,
                max: 4096
            }
        );
        let shares = block_shares(range);
        assert_eq!(shares.len(), 4);
        assert_eq!(
            shares.iter().map(|s| s.share_hundredths).sum::<u32>(),
            10_000
        );
        // Wider than 250 sizes: 250 of them, evenly spaced from the smallest to the largest.
        let wide = block_shares(block_range("512:1M", 1024).unwrap());
        assert_eq!(wide.len(), 250);
        assert_eq!((wide[0].size_bytes, wide[249].size_bytes), (512, 1 << 20));
        assert!(wide.iter().all(|share| share.share_hundredths == 40));
        assert!(
            wide.windows(2)
                .all(|pair| pair[0].size_bytes < pair[1].size_bytes)
        );
        assert!(wide.iter().all(|share| share.size_bytes % 512 == 0));
        let mean = wide.iter().map(|share| share.size_bytes).sum::<u64>() / 250;
        assert!(mean.abs_diff((512 + (1 << 20)) / 2) < 4096, "{mean}");
        // fio: 3k + 4k × U rounded down to 3k is 3k for U < 3/4, else 6k capped at 4k.
        let narrow = block_shares(BlockChoice::Range {
            min: 3072,
            max: 4096,
        });
        let pairs = |shares: Vec<SplitShare>| -> Vec<(u64, u32)> {
            shares
                .iter()
                .map(|share| (share.size_bytes, share.share_hundredths))
                .collect()
        };
        assert_eq!(pairs(narrow), [(3072, 7500), (4096, 2500)]);
        assert!(block_range("4k", 1024).is_err());
    }

    /// Mean bytes of a range's shares.
    fn mean_bytes(shares: &[SplitShare]) -> f64 {
        shares
            .iter()
            .map(|share| share.size_bytes as f64 * f64::from(share.share_hundredths) / 10_000.0)
            .sum()
    }

    #[test]
    fn ranges_are_drawn_as_fio_draws_them() {
        // fio (get_next_buflen): min + max × U, U uniform in [0, 1), rounded down to a multiple
        // of min, capped at max. For 4k-512k each multiple k × 4k, k = 1…128, has the chance
        // 4/512 = 1/128: a mean of 4k × (1 + 128) / 2 = 258 KiB.
        let spdk = block_shares(block_range("4k-512k", 1024).unwrap());
        assert_eq!(spdk.len(), 128);
        assert_eq!(
            (spdk[0].size_bytes, spdk[127].size_bytes),
            (4096, 512 * 1024)
        );
        assert!(
            spdk.iter()
                .all(|share| share.share_hundredths.abs_diff(10_000 / 128) <= 1)
        );
        assert!((mean_bytes(&spdk) - 258.0 * 1024.0).abs() < 64.0);
        // 3k-8k: 3k + 8k × U lies in [3k, 6k) for U < 3/8, in [6k, 9k) for 3/8 ≤ U < 6/8 and
        // [9k, 11k) → 9k, capped at 8k, for the last 2/8: 37.5 %, 37.5 %, 25 %, a mean of
        // 3k × 0.375 + 6k × 0.375 + 8k × 0.25 = 5.375k = 5504 bytes.
        let uneven = block_shares(block_range("3k-8k", 1024).unwrap());
        let sizes: Vec<(u64, u32)> = uneven
            .iter()
            .map(|share| (share.size_bytes, share.share_hundredths))
            .collect();
        assert_eq!(sizes, [(3072, 3750), (6144, 3750), (8192, 2500)]);
        assert!((mean_bytes(&uneven) - 5504.0).abs() < 1e-6);
        // The same formula evaluated directly, for a few ranges: the shares are its chances.
        for (min, max) in [
            (512u64, 1536u64),
            (4096, 10_000),
            (1024, 65_536),
            (3000, 7000),
        ] {
            let shares = block_shares(BlockChoice::Range { min, max });
            let draws = 100_000u64;
            let mut fio_mean = 0.0;
            for draw in 0..draws {
                let unit = (draw as f64 + 0.5) / draws as f64;
                let drawn = min + (max as f64 * unit) as u64;
                fio_mean += ((drawn - drawn % min).min(max)) as f64 / draws as f64;
            }
            let ours = mean_bytes(&shares);
            assert!(
                (ours - fio_mean).abs() < max as f64 * 1e-3,
                "{min}-{max}: {ours} against fio's {fio_mean}"
            );
        }
    }

    #[test]
    fn distributions_follow_fio() {
        assert_eq!(
            distribution("random", 1024),
            Ok(OffsetDistribution::Uniform)
        );
        assert_eq!(
            distribution("zipf:0.5", 1024),
            Ok(OffsetDistribution::Zipf {
                theta: 0.5,
                center: None
            })
        );
        let zoned = distribution("zoned:50/5:30/15:20/", 1024).unwrap();
        assert_eq!(
            zoned,
            OffsetDistribution::parse("zoned:50/5:30/15:20/80").unwrap()
        );
        assert_eq!(
            distribution("zipf:1.2:0.25", 1024),
            OffsetDistribution::parse("zipf:1.2:0.25").map_err(OptionError::from)
        );
        assert_eq!(
            distribution("zoned_abs:50/10G:50/20G", 1000),
            OffsetDistribution::parse("zoned_abs:50/10000000000:50/20000000000")
                .map_err(OptionError::from)
        );
        assert_eq!(
            distribution("sequence:2,0,1", 1024).unwrap().to_string(),
            "sequence:2,0,1"
        );
        assert!(distribution("zoned:50/:50/", 1024).is_err());
        assert!(distribution("lognormal:3", 1024).is_err());
        assert!(distribution("sequence_stride:1", 1024).is_err());
    }

    #[test]
    fn steady_criteria() {
        let spec = steady("bw_slope:1%").unwrap();
        assert!(spec.slope && spec.metric == SteadyMetric::Bandwidth);
        assert!(unsupported(steady("iops:2")));
        assert!(steady("speed:1%").is_err());
    }
}
