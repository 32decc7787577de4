//! The replay options of a job as read from its file (fio's `read_iolog`, `write_iolog` and
//! `replay_*`); [`super::replay`] turns them into a trace, [`super::replay_options`] reads them.

use super::location::Set;

/// The replay options of one job.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplaySettings {
    /// `read_iolog`: the log to replay.
    pub log: Option<Set<String>>,
    /// `replay_no_stall`: issue without the log's waits.
    pub no_stall: bool,
    /// `replay_time_scale`, percent (100: the log's own pace).
    pub time_scale_percent: u64,
    /// `replay_redirect`: the one target every I/O goes to.
    pub redirect: Option<Set<String>>,
    /// `replay_align`, bytes (0: offsets as logged).
    pub align_bytes: u64,
    /// `replay_scale`: offsets divided by it (1: as logged).
    pub scale: u64,
    /// `replay_skip`: read, write, trim, sync.
    pub skip: [bool; 4],
    /// `write_iolog`: where to record what the job issued.
    pub record: Option<Set<String>>,
    /// `merge_blktrace_file`: where the merge of the captures `read_iolog` lists goes.
    pub merge_file: Option<Set<String>>,
    /// `merge_blktrace_scalars`: each capture's time scale, percent.
    pub merge_scalars: Option<Set<Vec<u64>>>,
    /// `merge_blktrace_iters`: passes over each capture.
    pub merge_iterations: Option<Set<Vec<u64>>>,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        ReplaySettings {
            log: None,
            no_stall: false,
            time_scale_percent: 100,
            redirect: None,
            align_bytes: 0,
            scale: 1,
            skip: [false; 4],
            record: None,
            merge_file: None,
            merge_scalars: None,
            merge_iterations: None,
        }
    }
}
