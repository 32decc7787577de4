//! The purge before each PTS test: the specification asks for the device to be returned to
//! its fresh-out-of-box state. iopath does it the way it can on every target that can drop
//! data: trims of the whole target, issued through the engine that runs the tests — a block
//! device discards (`BLKDISCARD`), an NBD export gets `NBD_CMD_TRIM` (where its server
//! advertises trims), an iSCSI LUN gets UNMAP (where it is thin provisioned), and a file that
//! iopath created (its ownership mark, as the rule for removing files has it) gets holes
//! punched. A file iopath did not create is never purged: its blocks are the user's, and the
//! tests only overwrite them. iopath issues no NVMe format or ATA security erase:
//! `--purge secure-erase` is refused before any I/O. Every other target is tested from the
//! state it is in, which the report says.
//!
//! Whether a target can be purged is decided before any I/O, with the plans of the tests: the
//! trims are prepared as `iopath run` prepares a trim job, and a target that cannot trim
//! (the runner's trim check says why) keeps the note.
//!
//! ```
//! use iopath::pts::purge::{PURGE_TRIM_BYTES, purge_tests};
//! // 40 MiB: two trims of 16 MiB in one pass, then the last 8 MiB in one.
//! let tests = purge_tests(40 << 20, 512, true);
//! assert_eq!(tests.len(), 2);
//! assert_eq!(tests[0].jobs[0].workload.access.lines[0].size_bytes, PURGE_TRIM_BYTES);
//! assert_eq!(tests[1].jobs[0].workload.region_offset_bytes, 32 << 20);
//! ```

use crate::result::{
    AccessLine, AccessSpec, EngineKind, RunLength, TargetInfo, TargetKind, Workload,
};
use crate::run::{PlanError, RunError, RunOptions, prepare};
use crate::targets::TargetSpec;
use crate::workload::suite::base_workload;
use crate::workload::{Plan, TestPlan};

/// How a test's target is purged (`--purge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PurgeMethod {
    /// Not at all: the results start from the state the target is in.
    None,
    /// Trims of the whole target where it can (the default; `--purge discard`).
    Discard,
    /// An NVMe or ATA secure erase: refused (iopath does not issue it).
    SecureErase,
}

impl PurgeMethod {
    /// Reads `none`, `discard` or `secure-erase`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "none" => Some(PurgeMethod::None),
            "discard" => Some(PurgeMethod::Discard),
            "secure-erase" => Some(PurgeMethod::SecureErase),
            _ => None,
        }
    }
}

/// Bytes of one trim of the purge: large enough that a terabyte takes 65,536 of them, small
/// enough for one slot's buffer and for a stop request to be seen between them.
pub const PURGE_TRIM_BYTES: u64 = 16 << 20;

/// The words of the report when the results start from the state the target was in.
const USED_STATE: &str = "results start from a used state";

/// How each test's purge goes, decided before any I/O.
#[derive(Clone, Debug)]
pub enum PurgePlan {
    /// Trims of the whole target through its engine.
    Trim {
        /// The trims, as tests of the runner.
        tests: Vec<TestPlan>,
        /// Bytes they drop (the whole target, but for a tail smaller than a logical block).
        bytes: u64,
        /// How, in the report's words.
        method: String,
    },
    /// No purge.
    Skip {
        /// Why, in the report's words (ending in "results start from a used state").
        method: String,
    },
}

impl PurgePlan {
    /// What the report's *Purge* line says.
    pub fn method(&self) -> &str {
        match self {
            PurgePlan::Trim { method, .. } | PurgePlan::Skip { method } => method,
        }
    }
}

/// How a target of `kind` drops data, in the report's words.
pub fn trim_words(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::BlockDevice => "discard of the whole device (BLKDISCARD)",
        TargetKind::Nbd => "trim of the whole export (NBD_CMD_TRIM)",
        TargetKind::Iscsi => "UNMAP of the whole LUN",
        TargetKind::File => "holes punched over the whole file (fallocate), a file iopath created",
        TargetKind::Nfs | TargetKind::Smb => "trim of the whole file",
    }
}

/// The trims of a purge of `size_bytes` (whole logical blocks of `logical_block_bytes`): one
/// sequential pass of [`PURGE_TRIM_BYTES`] trims, then one trim of the rest. `local`: the
/// sync engine (a discard or a punched hole on the worker's thread, on every kernel); else
/// the target's protocol engine.
pub fn purge_tests(size_bytes: u64, logical_block_bytes: u32, local: bool) -> Vec<TestPlan> {
    let whole = size_bytes / PURGE_TRIM_BYTES * PURGE_TRIM_BYTES;
    let block = u64::from(logical_block_bytes.max(512));
    let rest = (size_bytes - whole) / block * block;
    let trims = |offset: u64, bytes: u64, size: u64, name: &str| {
        let workload = Workload {
            access: AccessSpec {
                lines: vec![AccessLine {
                    trim_percent: 100,
                    ..AccessLine::new(size, 100, 0, 0)
                }],
            },
            queue_depth: 1,
            workers: 1,
            region_offset_bytes: offset,
            region_size_bytes: Some(bytes),
            length: RunLength::Bytes {
                bytes,
                time_limit_ns: None,
            },
            ramp_ns: 0,
            engine: if local {
                EngineKind::Sync
            } else {
                base_workload().engine
            },
            ..base_workload()
        };
        TestPlan::single(name, workload, vec![0])
    };
    let mut tests = Vec::new();
    if whole > 0 {
        tests.push(trims(
            0,
            whole,
            PURGE_TRIM_BYTES,
            "purge: trim of the whole target",
        ));
    }
    if rest > 0 {
        tests.push(trims(
            whole,
            rest,
            rest,
            "purge: trim of the target's last bytes",
        ));
    }
    tests
}

/// Decides, before any I/O, how each test's purge goes on `target` (found as `info`): the
/// trims when `method` asks for them and the target can drop data (prepared as the runner
/// prepares a trim job, under `options`' write policy), else why not. Errors are the plan's
/// other refusals.
pub fn plan_purge(
    method: PurgeMethod,
    target: &TargetSpec,
    info: &TargetInfo,
    options: &RunOptions,
) -> Result<PurgePlan, RunError> {
    let skip = |why: String| Ok(PurgePlan::Skip { method: why });
    if method != PurgeMethod::Discard {
        return skip(format!("none (--purge none): {USED_STATE}"));
    }
    if info.kind == TargetKind::File && !info.created_by_iopath {
        return skip(format!(
            "none: holes are punched only in a file iopath created, and this one carries no \
             mark of it; {USED_STATE}"
        ));
    }
    let local = matches!(info.kind, TargetKind::File | TargetKind::BlockDevice);
    let tests = purge_tests(info.size_bytes, info.logical_block_size_bytes, local);
    let bytes = tests
        .iter()
        .filter_map(|test| match test.jobs[0].workload.length {
            RunLength::Bytes { bytes, .. } => Some(bytes),
            _ => None,
        })
        .sum();
    if tests.is_empty() {
        return skip(format!(
            "none: the target is smaller than a block; {USED_STATE}"
        ));
    }
    let whole = Plan {
        targets: vec![target.clone()],
        tests: tests.clone(),
    };
    match prepare(whole, options.clone(), false) {
        Ok(_) => Ok(PurgePlan::Trim {
            tests,
            bytes,
            method: trim_words(info.kind).to_string(),
        }),
        Err(RunError::Plan(PlanError::CannotTrim { reason, .. })) => skip(format!(
            "none: it cannot be trimmed ({reason}); {USED_STATE}"
        )),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trims_cover_the_target_once_in_whole_logical_blocks() {
        let covered = |tests: &[TestPlan]| -> Vec<(u64, u64, u64)> {
            tests
                .iter()
                .map(|test| {
                    let workload = &test.jobs[0].workload;
                    (
                        workload.region_offset_bytes,
                        workload.region_size_bytes.unwrap(),
                        workload.access.lines[0].size_bytes,
                    )
                })
                .collect()
        };
        assert_eq!(
            covered(&purge_tests(48 << 20, 512, true)),
            [(0, 48 << 20, 16 << 20)]
        );
        assert_eq!(
            covered(&purge_tests((16 << 20) + 4096 + 100, 4096, false)),
            [(0, 16 << 20, 16 << 20), (16 << 20, 4096, 4096)]
        );
        assert_eq!(
            covered(&purge_tests(8 << 20, 512, true)),
            [(0, 8 << 20, 8 << 20)]
        );
        for test in purge_tests(40 << 20, 512, true) {
            let workload = &test.jobs[0].workload;
            assert_eq!(workload.engine, EngineKind::Sync);
            assert!(workload.trims() && !workload.writes());
            assert_eq!(workload.access.lines[0].trim_percent, 100);
        }
    }
}
