//! The log files a job asks for (fio's `write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log` and the options that shape them: `log_avg_msec`, `log_window_value`,
//! `log_offset`, `log_prio`, `log_issue_time`, `log_hist_msec`, `log_hist_coarseness`,
//! `per_job_logs`, `log_unix_epoch`). The runner records what they need; the files are written after the run
//! in fio's layout (HOWTO, "Log File Formats").

use serde::{Deserialize, Serialize};

/// What a windowed latency log holds for each window (fio's `log_window_value`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowValue {
    /// The mean of the window (fio's `avg`, the default).
    #[default]
    Average,
    /// The largest value of the window (`max`).
    Maximum,
    /// Both, the mean first (`both`): one more column.
    Both,
}

/// The log files of one job and their layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogOptions {
    /// `write_bw_log`: prefix of `PREFIX_bw.N.log`.
    pub bandwidth: Option<String>,
    /// `write_lat_log`: prefix of `PREFIX_lat.N.log`, `PREFIX_clat.N.log`, `PREFIX_slat.N.log`.
    pub latency: Option<String>,
    /// `write_iops_log`: prefix of `PREFIX_iops.N.log`.
    pub iops: Option<String>,
    /// `write_hist_log`: prefix of `PREFIX_clat_hist.N.log`.
    pub histogram: Option<String>,
    /// `log_avg_msec`: length of a window, ms; 0 logs every I/O.
    pub average_ms: u64,
    /// `log_hist_msec`: length of a histogram window, ms; 0: no histogram lines.
    pub histogram_ms: u64,
    /// `log_hist_coarseness` (0–6): each step halves the histogram's columns.
    pub histogram_coarseness: u8,
    /// `log_window_value` / `log_max_value`.
    pub window_value: WindowValue,
    /// `log_offset`: an offset column.
    pub offset: bool,
    /// `log_prio`: the priority column as `0x` and four hexadecimal digits.
    pub priority: bool,
    /// `log_issue_time`: an issue-time column (ns) in the clat and slat logs.
    pub issue_time: bool,
    /// `per_job_logs` (default true): the job's number in each file name.
    pub per_job: bool,
    /// `log_unix_epoch` / `log_alternate_epoch`: times in milliseconds since the Unix epoch
    /// (the wall clock) instead of since the start of the measurement.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unix_epoch: bool,
    /// `write_iolog`: the file that records the job's I/Os as a fio version 3 I/O log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iolog: Option<String>,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            bandwidth: None,
            latency: None,
            iops: None,
            histogram: None,
            average_ms: 0,
            histogram_ms: 0,
            histogram_coarseness: 0,
            window_value: WindowValue::Average,
            offset: false,
            priority: false,
            issue_time: false,
            per_job: true,
            unix_epoch: false,
            iolog: None,
        }
    }
}

impl LogOptions {
    /// Whether any log file is asked for.
    pub fn any(&self) -> bool {
        self.bandwidth.is_some()
            || self.latency.is_some()
            || self.iops.is_some()
            || self.histogram.is_some()
    }

    /// Whether every I/O is logged (no `log_avg_msec`) for a bandwidth, latency or IOPS log.
    pub fn per_io(&self) -> bool {
        self.average_ms == 0
            && (self.bandwidth.is_some() || self.latency.is_some() || self.iops.is_some())
    }
}
