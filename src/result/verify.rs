//! Data verification: what a workload asked for (`--verify`, fio's `verify=` and its companion
//! options) and what the check found — blocks checked, blocks never written, and every block
//! that did not hold what was written there (the first [`KEPT_MISMATCHES`] with their offsets,
//! a count of all). The header every verified block carries is described in docs/verify.md.

use super::write_data::BufferPattern;
use super::{is_false, is_zero};
use serde::{Deserialize, Serialize};

/// Mismatches kept with their details per job and per test; later ones are only counted.
pub const KEPT_MISMATCHES: usize = 16;

/// How a verified block proves its contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyKind {
    /// CRC-32C (Castagnoli) of the block, in the header (fio's default).
    #[default]
    Crc32c,
    /// CRC-32 (IEEE) of the block.
    Crc32,
    /// MD5 of the block.
    Md5,
    /// SHA-256 of the block.
    Sha256,
    /// XXH3 (64 bits) of the block.
    Xxhash,
    /// The header alone (offset, length, run, generation), no checksum of the data.
    Meta,
    /// No header: every byte is the verify pattern (fio's `verify=pattern`).
    Pattern,
}

impl VerifyKind {
    /// Every kind, in the order help texts list them.
    pub const ALL: [VerifyKind; 7] = [
        VerifyKind::Crc32c,
        VerifyKind::Crc32,
        VerifyKind::Md5,
        VerifyKind::Sha256,
        VerifyKind::Xxhash,
        VerifyKind::Meta,
        VerifyKind::Pattern,
    ];

    /// The name used on the command line, in job files and in results.
    pub fn name(self) -> &'static str {
        match self {
            VerifyKind::Crc32c => "crc32c",
            VerifyKind::Crc32 => "crc32",
            VerifyKind::Md5 => "md5",
            VerifyKind::Sha256 => "sha256",
            VerifyKind::Xxhash => "xxhash",
            VerifyKind::Meta => "meta",
            VerifyKind::Pattern => "pattern",
        }
    }
}

/// What a workload asked of verification (absent from a workload that does not verify).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifySettings {
    /// How blocks prove their contents.
    pub kind: VerifyKind,
    /// Read back and check what was written once the workload ends (fio's `do_verify`, on by
    /// default). Reads of the workload itself are checked either way.
    #[serde(default = "yes")]
    pub after_writes: bool,
    /// Do not run the workload: only check the data an earlier run left (fio's `verify_only`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub only: bool,
    /// Stop the job at the first bad block (fio's `verify_fatal`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fatal: bool,
    /// Bytes each header covers (fio's `verify_interval`; `None`: the smallest block size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_bytes: Option<u64>,
    /// Where in each interval the header sits, bytes (fio's `verify_offset`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub header_offset_bytes: u64,
    /// Bytes after the header are this pattern, and are checked against it (fio's
    /// `verify_pattern`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<BufferPattern>,
    /// Read back and check the written blocks after every this many writes, while the
    /// workload runs (fio's `verify_backlog`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_writes: Option<u32>,
    /// Save which blocks were written, by which run, at the end (fio's `verify_state_save`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub state_save: bool,
    /// Check against the state an earlier run saved (fio's `verify_state_load`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub state_load: bool,
    /// Trim a share of the written blocks while the workload runs, and check them as trimmed
    /// (fio's `trim_percentage`, `trim_backlog`, `trim_backlog_batch`, `trim_verify_zero`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<VerifyTrim>,
}

/// Verified blocks trimmed after they were written (fio's `trim_percentage` with
/// `trim_backlog`): each completed write is picked with `percent` % odds; after every
/// `backlog_writes` writes the worker trims `batch` of the picked ones before it goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyTrim {
    /// Share of the completed writes picked for trimming, percent (1–100).
    pub percent: u8,
    /// Trim after every this many completed writes (fio's `trim_backlog`).
    pub backlog_writes: u32,
    /// Trims issued each time (fio's `trim_backlog_batch`; by default `backlog_writes`).
    pub batch: u32,
    /// A trimmed block must read back as zeroes (fio's `trim_verify_zero`, on by default);
    /// off: a trimmed block reads as never written, or is not checked when it still holds its
    /// old data.
    pub verify_zero: bool,
}

fn yes() -> bool {
    true
}

/// What a block held instead of what was written there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchKind {
    /// A block written by this run (or by the run whose state was loaded) reads without a
    /// header: the write never reached the medium (a lost write).
    NeverWritten,
    /// The header is damaged (its own check fails).
    BadHeader,
    /// The block carries another offset's header: a misdirected read or write.
    WrongOffset,
    /// The block carries an older write: another run's, or an earlier generation of this run
    /// (stale data, a lost overwrite).
    Stale,
    /// The header is right but the data does not match its checksum: flipped bits or a torn
    /// write.
    Checksum,
    /// Bytes differ from the verify pattern.
    Pattern,
    /// A block trimmed with `trim_verify_zero` reads back with a byte that is not zero.
    NotZeroAfterTrim,
}

impl MismatchKind {
    /// Every kind.
    pub const ALL: [MismatchKind; 7] = [
        MismatchKind::NeverWritten,
        MismatchKind::BadHeader,
        MismatchKind::WrongOffset,
        MismatchKind::Stale,
        MismatchKind::Checksum,
        MismatchKind::Pattern,
        MismatchKind::NotZeroAfterTrim,
    ];

    /// The name used in results and reports.
    pub fn name(self) -> &'static str {
        match self {
            MismatchKind::NeverWritten => "never_written",
            MismatchKind::BadHeader => "bad_header",
            MismatchKind::WrongOffset => "wrong_offset",
            MismatchKind::Stale => "stale",
            MismatchKind::Checksum => "checksum",
            MismatchKind::Pattern => "pattern",
            MismatchKind::NotZeroAfterTrim => "not_zero_after_trim",
        }
    }
}

/// One block that did not verify.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyMismatch {
    /// Target path or URL.
    pub target: String,
    /// Byte offset of the block (one header's interval).
    pub offset: u64,
    /// Bytes of the block.
    pub length: u32,
    /// What was wrong.
    pub kind: MismatchKind,
    /// What should have been there ("crc32c 0x1a2b3c4d", "offset 8192, run 5f3c…, write 17").
    pub expected: String,
    /// What was found.
    pub found: String,
    /// The run whose header the block carries (16 hex digits), when it has a readable one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_by_run: Option<String>,
    /// The client (MPI rank) whose check found it, in a run of several clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

/// What verification found in one job or test.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerificationResult {
    /// How blocks proved their contents.
    pub kind: VerifyKind,
    /// This run, as its headers name it (16 hex digits).
    pub run_id: String,
    /// Blocks (header intervals) read and checked.
    pub blocks_checked: u64,
    /// Bytes of those blocks.
    pub bytes_checked: u64,
    /// Blocks read that carry no header and were not known to be written (not an error).
    pub never_written_blocks: u64,
    /// Blocks read but not checked: a write to them was in flight, or the engine moves no data.
    pub skipped_blocks: u64,
    /// Of the blocks checked, those trimmed after they were written that had to read as zeroes
    /// (`trim_verify_zero`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trimmed_blocks_checked: u64,
    /// Every block that did not verify.
    pub mismatch_count: u64,
    /// The first [`KEPT_MISMATCHES`], in the order found.
    pub mismatches: Vec<VerifyMismatch>,
    /// Time of the read-back after the workload (not part of the measured time), ns.
    pub verify_ns: u64,
    /// Reads of the read-back after the workload (not in the job's measured reads; fio's JSON
    /// counts them as reads).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_back_ios: u64,
    /// Bytes those reads returned.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_back_bytes: u64,
}

impl VerificationResult {
    /// Adds `other`'s counts and as many of its mismatches as there is room for.
    pub fn absorb(&mut self, other: &VerificationResult) {
        self.blocks_checked += other.blocks_checked;
        self.bytes_checked += other.bytes_checked;
        self.never_written_blocks += other.never_written_blocks;
        self.skipped_blocks += other.skipped_blocks;
        self.trimmed_blocks_checked += other.trimmed_blocks_checked;
        self.mismatch_count += other.mismatch_count;
        let room = KEPT_MISMATCHES.saturating_sub(self.mismatches.len());
        self.mismatches
            .extend(other.mismatches.iter().take(room).cloned());
        self.verify_ns = self.verify_ns.max(other.verify_ns);
        self.read_back_ios += other.read_back_ios;
        self.read_back_bytes += other.read_back_bytes;
    }
}
