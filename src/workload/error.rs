//! What can be wrong with a workload on its own, before any target is looked at: a value an
//! option does not take, a compound value (an access line, a distribution, a sweep, a
//! steady-state criterion, a buffer pattern) with a wrong part, options that do not go
//! together, a plan larger than its limits.
//!
//! Every variant keeps the text the user typed, so that the message can quote it; the command
//! line refuses all of them with exit status 2, before any I/O.
//!
//! ```
//! use iopath::workload::WorkloadError;
//! use iopath::input::option_values::percent;
//! let error = percent("120").unwrap_err();
//! assert!(matches!(error, WorkloadError::Value { ref text, .. } if text == "120"));
//! assert_eq!(error.to_string(), "'120' is not a percentage from 0 to 100");
//! ```

use crate::engine::UnknownEngine;
use crate::units::{UnitError, format_size};

/// A workload, or a value of one, that cannot be used. See the [module](self) documentation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// A size or a time that does not read.
    #[error(transparent)]
    Unit(#[from] UnitError),
    /// A value its option does not take: shown as `'TEXT' EXPECTED`.
    #[error("'{text}' {expected}")]
    Value {
        /// The value as typed.
        text: String,
        /// What the option takes (or why this value is refused).
        expected: String,
    },
    /// A part of a compound value that is wrong: shown as `'TEXT': PROBLEM`.
    #[error("'{text}': {problem}")]
    Part {
        /// The value, or the part of it, as typed.
        text: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A parameter out of its range, shown as `SETTING: PROBLEM` (`zipf:0: the exponent …`).
    #[error("{setting}: {problem}")]
    Parameter {
        /// The setting with its parameter.
        setting: String,
        /// What the parameter must be.
        problem: String,
    },
    /// A name none of those known (a pattern, a distribution, a preset).
    #[error("unknown {kind} '{name}' ({choices})")]
    Unknown {
        /// What was named.
        kind: &'static str,
        /// The name as typed.
        name: String,
        /// The names there are.
        choices: String,
    },
    /// An engine name none of those known.
    #[error(transparent)]
    Engine(#[from] UnknownEngine),
    /// A block size of a mix that is 0 or too large.
    #[error("block size '{text}' {problem}")]
    BlockSize {
        /// The size as typed.
        text: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The shares of a block-size mix do not add up to 100.
    #[error("the shares in '{text}' add up to {}", shares_total(*total))]
    Shares {
        /// The mix as typed.
        text: String,
        /// What the shares add up to (`None`: more than 100 with shares still to assign).
        total: Option<u32>,
    },
    /// An access specification without a line.
    #[error("the access specification has no line")]
    SpecWithoutLines,
    /// An access specification whose lines all have a share of 0.
    #[error("every line of the access specification has a share of 0")]
    SpecWithoutShares,
    /// A value of a sweep outside what its axis takes.
    #[error("{axis} value '{text}' must lie between 1 and {limit}")]
    SweepValue {
        /// The axis (`qd`, `bs`, `workers`).
        axis: &'static str,
        /// The value as typed.
        text: String,
        /// The largest value.
        limit: u64,
    },
    /// Sweeps whose combinations give too many tests.
    #[error("the sweeps give more than {limit} tests")]
    TooManySweepTests {
        /// Most tests the sweeps may give.
        limit: usize,
    },
    /// One axis swept twice.
    #[error("{axis} is swept twice")]
    SweptTwice {
        /// The axis.
        axis: &'static str,
    },
    /// A buffer pattern without a byte.
    #[error("a buffer pattern needs at least one byte")]
    EmptyPattern,
    /// A piece of a buffer pattern that does not read: shown as `PIECE: PROBLEM`.
    #[error("{piece}: {problem}")]
    PatternPiece {
        /// The piece, shortened.
        piece: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A pattern file that cannot be read.
    #[error("pattern file '{name}': {reason}")]
    PatternFile {
        /// The file's name, control characters escaped.
        name: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// A pattern file without a byte.
    #[error("pattern file '{name}' is empty")]
    EmptyPatternFile {
        /// The file's name, control characters escaped.
        name: String,
    },
    /// Data settings that contradict each other.
    #[error(transparent)]
    Data(#[from] DataConflict),
    /// `--ramp` with `--bytes`.
    #[error("--ramp cannot be combined with --bytes: a byte count measures every byte (like dd)")]
    RampWithBytes,
    /// `--bytes` that is not a whole number of blocks.
    #[error(
        "--bytes {} is not a whole number of {block_bytes}-byte blocks",
        format_size(*bytes)
    )]
    BytesNotWholeBlocks {
        /// The byte count.
        bytes: u64,
        /// The one block size.
        block_bytes: u64,
    },
    /// A flag that shapes written data, on a workload that writes nothing.
    #[error(
        "{flag} shapes the data written, and this workload writes nothing (it only reads or trims)"
    )]
    DataFlagOnReads {
        /// The flag.
        flag: &'static str,
    },
    /// `--sync` on a workload that writes nothing.
    #[error(
        "--sync only affects writes, and this workload writes nothing (it only reads or trims)"
    )]
    SyncOnReads,
    /// A time limit on a test that runs for a time, not a byte count.
    #[error(
        "time-limit limits a byte count: give bytes too (a time-based test already runs for its \
         duration)"
    )]
    TimeLimitWithoutBytes,
    /// More jobs than the limit.
    #[error("more than {limit} jobs (the limit; raise it with --max-jobs)")]
    TooManyJobs {
        /// The limit.
        limit: usize,
    },
    /// More worker threads at once than the limit.
    #[error(
        "{count} worker threads at once, more than {limit} (the limit); lower --workers, or \
         --qd on the sync engine (numjobs, iodepth in a job file), or raise --max-threads"
    )]
    TooManyThreads {
        /// Threads the test would start.
        count: u64,
        /// The limit.
        limit: u64,
    },
}

/// Data settings that contradict each other (`--compress-pct`, `--dedupe-pct` … and their
/// fio keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DataConflict {
    /// 100 % compression with dedupe: fio then writes incompressible data, not what was asked.
    #[error(
        "100% compression (--compress-pct 100, buffer_compress_percentage=100) with duplicate \
         buffers (--dedupe-pct, dedupe_percentage): fio would write incompressible data here; \
         give a compression below 100, or zeros (--zero-buffers) without dedupe"
    )]
    FullCompressionWithDedupe,
    /// Dedupe and its working set add up to more than 100 % (the working set is new buffers).
    #[error(
        "{dedupe_percent}% duplicates (--dedupe-pct, dedupe_percentage) and a \
         {working_set_percent}% working set (--dedupe-working-set-pct, \
         dedupe_working_set_percentage) add up to more than 100%: the working set itself is \
         written as new buffers"
    )]
    WorkingSetTooLarge {
        /// The dedupe share.
        dedupe_percent: u8,
        /// The working set share.
        working_set_percent: u8,
    },
}

fn shares_total(total: Option<u32>) -> String {
    match total {
        Some(total) => format!("{total} %, not 100 %"),
        None => "more than 100 %".to_string(),
    }
}

impl WorkloadError {
    /// A value its option does not take.
    pub fn value(text: &str, expected: impl Into<String>) -> Self {
        WorkloadError::Value {
            text: text.to_string(),
            expected: expected.into(),
        }
    }

    /// A wrong part of a compound value.
    pub fn part(text: &str, problem: impl Into<String>) -> Self {
        WorkloadError::Part {
            text: text.to_string(),
            problem: problem.into(),
        }
    }

    /// A parameter out of its range.
    pub fn parameter(setting: impl Into<String>, problem: impl Into<String>) -> Self {
        WorkloadError::Parameter {
            setting: setting.into(),
            problem: problem.into(),
        }
    }
}
