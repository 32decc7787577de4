//! What a run kept for its jobs' log files (fio's `write_bw_log`, `write_lat_log`,
//! `write_iops_log`): every completed I/O of a worker, or sums per window of `log_avg_msec`.
//! Plain data, handed from the runner to the log writer (not part of a saved result).

use super::Direction;

/// One completed I/O, as fio's per-I/O logs show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoggedIo {
    /// Completion, ns after the measurement started.
    pub completed_ns: u64,
    /// Hand-over to the engine (fio's issue time), ns after the measurement started.
    pub issued_ns: u64,
    /// Submission to completion, ns (fio's `lat`).
    pub latency_ns: u64,
    /// The part of it spent submitting, ns (fio's `slat`; `clat` is the rest).
    pub submission_ns: u64,
    /// Offset in its file, bytes.
    pub offset: u64,
    /// Bytes.
    pub length: u32,
    /// Read, write or trim.
    pub direction: Direction,
    /// Which of the worker's files ([`IoLogRecords::files`]).
    pub file: u32,
}

impl LoggedIo {
    /// fio's number for its direction: 0 read, 1 write, 2 trim.
    pub fn direction_number(&self) -> u8 {
        match self.direction {
            Direction::Read => 0,
            Direction::Write => 1,
            Direction::Trim => 2,
        }
    }
}

/// Sum and largest of one latency over a window, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencySums {
    /// Sum, ns.
    pub sum_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
}

impl LatencySums {
    /// Counts one value.
    #[inline]
    pub fn add(&mut self, value_ns: u64) {
        self.sum_ns += value_ns;
        self.max_ns = self.max_ns.max(value_ns);
    }
}

/// What completed in one direction in one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogWindow {
    /// I/Os completed.
    pub io_count: u64,
    /// Bytes completed.
    pub bytes: u64,
    /// Submission to completion (`lat`).
    pub latency: LatencySums,
    /// Hand-over to completion (`clat`).
    pub completion: LatencySums,
    /// Submission (`slat`).
    pub submission: LatencySums,
}

/// What one worker kept for its job's logs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IoLogRecords {
    /// Completed I/Os, in completion order (per-I/O logging).
    pub ios: Vec<LoggedIo>,
    /// Windows, each with reads, writes and trims in that order (windowed logging).
    pub windows: Vec<[LogWindow; 3]>,
    /// Length of a window, ns (0: per-I/O logging or none).
    pub window_ns: u64,
    /// Completions that found no room.
    pub overflow_ios: u64,
    /// The worker's files, by the index [`LoggedIo::file`] gives (the paths of its targets).
    pub files: Vec<String>,
    /// The wall clock at the start of the worker's measurement, ms since the Unix epoch (the
    /// time base of `log_unix_epoch`).
    pub epoch_unix_ms: u64,
}
