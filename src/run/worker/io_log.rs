//! What one worker keeps for a job's log files (fio's `write_bw_log`, `write_lat_log`,
//! `write_iops_log`): every completed I/O, or sums per window of `log_avg_msec`. Room is
//! reserved before the clock starts and never grown; what does not fit is counted.

use super::WorkerLength;
use super::trace::IoTrace;
use crate::result::Direction;
use crate::result::io_log::{IoLogRecords, LogWindow, LoggedIo};
use crate::result::log_options::LogOptions;

/// How a worker records for its job's logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoLogPlan {
    /// Every completed I/O, up to `room` of them.
    PerIo {
        /// I/Os kept at most.
        room: usize,
    },
    /// Sums per window.
    Windows {
        /// Length of a window, ns.
        window_ns: u64,
        /// Windows kept at most.
        room: usize,
    },
}

/// Most windows a worker keeps when its run is not bounded by time.
pub const UNTIMED_LOG_WINDOWS: usize = 1 << 16;

/// What a worker of a job asking for `logs` keeps, with room for every I/O it can issue (bounded
/// as the `--trace-io` trace is) or for every window of its run (`None`: the job asks for no
/// bandwidth, latency or IOPS log).
pub fn plan_for(
    logs: Option<&LogOptions>,
    length: WorkerLength,
    io_limit: Option<u64>,
    smallest_io_bytes: u64,
) -> Option<IoLogPlan> {
    let logs = logs?;
    if !(logs.bandwidth.is_some()
        || logs.latency.is_some()
        || logs.iops.is_some()
        || logs.iolog.is_some())
    {
        return None;
    }
    if logs.per_io() || logs.iolog.is_some() {
        let room = IoTrace::room_for(length, io_limit, smallest_io_bytes);
        return Some(IoLogPlan::PerIo { room });
    }
    let window_ns = logs.average_ms * 1_000_000;
    let duration_ns = match length {
        WorkerLength::Time { duration_ns, .. } => Some(duration_ns),
        WorkerLength::Bytes { time_limit_ns, .. } => time_limit_ns,
    };
    let room = duration_ns.map_or(UNTIMED_LOG_WINDOWS, |duration| {
        (duration / window_ns + 2).min(UNTIMED_LOG_WINDOWS as u64) as usize
    });
    Some(IoLogPlan::Windows { window_ns, room })
}

/// A worker's records for its job's logs, in room reserved up front.
#[derive(Debug, Default)]
pub struct IoLog {
    records: IoLogRecords,
    room: usize,
}

impl IoLog {
    /// Room reserved for `plan` (`None`: nothing is kept).
    pub fn new(plan: Option<IoLogPlan>) -> Self {
        match plan {
            None => IoLog::default(),
            Some(IoLogPlan::PerIo { room }) => IoLog {
                records: IoLogRecords {
                    ios: Vec::with_capacity(room),
                    ..IoLogRecords::default()
                },
                room,
            },
            Some(IoLogPlan::Windows { window_ns, room }) => IoLog {
                records: IoLogRecords {
                    windows: vec![[LogWindow::default(); 3]; room],
                    window_ns,
                    ..IoLogRecords::default()
                },
                room,
            },
        }
    }

    /// Keeps `io` (or adds it to its window), or counts it when there is no room.
    #[inline]
    pub fn record(&mut self, io: LoggedIo) {
        if self.room == 0 {
            return;
        }
        let records = &mut self.records;
        if records.window_ns == 0 {
            if records.ios.len() < self.room {
                records.ios.push(io);
            } else {
                records.overflow_ios += 1;
            }
            return;
        }
        let index = (io.completed_ns / records.window_ns) as usize;
        let Some(window) = records.windows.get_mut(index) else {
            records.overflow_ios += 1;
            return;
        };
        let figures = &mut window[direction_index(io.direction)];
        figures.io_count += 1;
        figures.bytes += u64::from(io.length);
        figures.latency.add(io.latency_ns);
        figures.completion.add(io.latency_ns - io.submission_ns);
        figures.submission.add(io.submission_ns);
    }

    /// What was kept, with the windows up to the last one with a completion.
    pub fn into_records(self) -> IoLogRecords {
        let mut records = self.records;
        let used = records
            .windows
            .iter()
            .rposition(|window| window.iter().any(|figures| figures.io_count > 0))
            .map_or(0, |last| last + 1);
        records.windows.truncate(used);
        records
    }
}

/// Index of `direction` in a window: read, write, trim (fio's order).
fn direction_index(direction: Direction) -> usize {
    match direction {
        Direction::Read => 0,
        Direction::Write => 1,
        Direction::Trim => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(completed_ns: u64, direction: Direction) -> LoggedIo {
        LoggedIo {
            completed_ns,
            issued_ns: completed_ns.saturating_sub(50),
            latency_ns: 100,
            submission_ns: 30,
            offset: 0,
            length: 4096,
            direction,
            file: 0,
        }
    }

    #[test]
    fn per_io_room_is_never_grown() {
        let mut log = IoLog::new(Some(IoLogPlan::PerIo { room: 2 }));
        let capacity = log.records.ios.capacity();
        for at in 0..5 {
            log.record(io(at, Direction::Read));
        }
        assert_eq!(log.records.ios.capacity(), capacity);
        let records = log.into_records();
        assert_eq!(records.ios.len(), 2);
        assert_eq!(records.overflow_ios, 3);
    }

    #[test]
    fn windows_sum_by_direction() {
        let mut log = IoLog::new(Some(IoLogPlan::Windows {
            window_ns: 1000,
            room: 3,
        }));
        log.record(io(10, Direction::Read));
        log.record(io(999, Direction::Read));
        log.record(io(1500, Direction::Write));
        log.record(io(5000, Direction::Write));
        let log = log.into_records();
        assert_eq!(log.windows.len(), 2);
        assert_eq!(log.windows[0][0].io_count, 2);
        assert_eq!(log.windows[0][0].completion.sum_ns, 140);
        assert_eq!(log.windows[0][0].submission.max_ns, 30);
        assert_eq!(log.windows[1][1].bytes, 4096);
        assert_eq!(log.overflow_ios, 1);
    }

    #[test]
    fn no_plan_keeps_nothing() {
        let mut log = IoLog::new(None);
        log.record(io(1, Direction::Read));
        let log = log.into_records();
        assert!(log.ios.is_empty() && log.windows.is_empty() && log.overflow_ios == 0);
    }
}
