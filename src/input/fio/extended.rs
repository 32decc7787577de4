//! The fio options that reach past the basic pattern, in fio's own terms (stage one): shares of
//! the file (`offset=N%`, `size=N%`, `io_size=N%`, `offset_increment`), the offset modifier of
//! `rw` and `rw_sequencer`, CPU and NUMA placement, the arrival process, random start delays,
//! `exitall`, flows and the latency target ([`super::extended_values`] reads their values).
//! [`super::extended_mapping`] turns them into iopath's workload.

use super::location::Set;
use crate::result::EndOthers;

/// A size in bytes or a share of the file (fio's `N%`, a whole percentage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// Bytes.
    Bytes(u64),
    /// Percent of the file or device (1 to 100).
    Percent(u32),
}

/// What `rw`'s `:N` suffix asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Modifier {
    /// No suffix (or `:0` on a sequential pattern, `:1` on a random one).
    #[default]
    None,
    /// Sequential: this many bytes added to the end of each I/O (negative: backwards).
    Step(i64),
    /// Random: a new random offset every this many I/Os.
    Every(u32),
}

/// The options of this module for one job (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct ExtendedSettings {
    /// `offset=N%`.
    pub offset_percent: Option<Set<u32>>,
    /// `size=N%`.
    pub size_percent: Option<Set<u32>>,
    /// `io_size=N%`.
    pub io_size_percent: Option<Set<u32>>,
    /// `offset_increment`.
    pub offset_increment: Option<Set<Share>>,
    /// `offset_align` (0: the smallest block).
    pub offset_align: u64,
    /// `rw`'s `:N`, with the line of the `rw` that gave it.
    pub modifier: Option<Set<Modifier>>,
    /// `rw_sequencer=identical`.
    pub repeat_offset: bool,
    /// `random_generator=lfsr`.
    pub lfsr: Option<Set<()>>,
    /// `random_sequence_stride`.
    pub sequence_stride: bool,
    /// `cpus_allowed` / `cpumask`: the CPUs.
    pub cpus: Option<Set<Vec<u32>>>,
    /// `cpus_allowed_policy=split`.
    pub cpus_split: bool,
    /// `numa_cpu_nodes`: the nodes.
    pub numa_nodes: Option<Set<Vec<u32>>>,
    /// `numa_mem_policy`, as written.
    pub numa_mem_policy: Option<Set<String>>,
    /// `rate_process=poisson`.
    pub poisson: Option<Set<()>>,
    /// The upper end of `startdelay=A-B`, ns.
    pub start_delay_high_ns: Option<u64>,
    /// `exitall`.
    pub exitall: Option<Set<()>>,
    /// `exit_what` (default: the group).
    pub exit_what: EndOthers,
    /// `exitall_on_error`.
    pub exitall_on_error: Option<Set<()>>,
    /// `steadystate_check_interval`, ns.
    pub steady_interval: Option<Set<u64>>,
    /// `flow`: the weight.
    pub flow: Option<Set<u32>>,
    /// `flow_id`.
    pub flow_id: u32,
    /// `flow_sleep`, ns.
    pub flow_sleep_ns: u64,
    /// `latency_target`, ns.
    pub latency_target: Option<Set<u64>>,
    /// `latency_window`, ns.
    pub latency_window_ns: Option<u64>,
    /// `latency_percentile` (default 100).
    pub latency_percentile: f64,
    /// `latency_run`.
    pub latency_run: bool,
}

impl ExtendedSettings {
    /// Bytes a created file needs beyond `offset + size` so that the regions of `clones`
    /// clones fit (`offset_increment` in bytes).
    pub fn increment_extent(&self, clones: u32) -> u64 {
        match self.offset_increment.as_ref().map(|set| set.value) {
            Some(Share::Bytes(bytes)) => bytes.saturating_mul(u64::from(clones.max(1) - 1)),
            _ => 0,
        }
    }
}

impl Default for ExtendedSettings {
    fn default() -> Self {
        ExtendedSettings {
            offset_percent: None,
            size_percent: None,
            io_size_percent: None,
            offset_increment: None,
            offset_align: 0,
            modifier: None,
            repeat_offset: false,
            lfsr: None,
            sequence_stride: false,
            cpus: None,
            cpus_split: false,
            numa_nodes: None,
            numa_mem_policy: None,
            poisson: None,
            start_delay_high_ns: None,
            exitall: None,
            exit_what: EndOthers::Group,
            exitall_on_error: None,
            steady_interval: None,
            flow: None,
            flow_id: 0,
            flow_sleep_ns: 0,
            latency_target: None,
            latency_window_ns: None,
            latency_percentile: 100.0,
            latency_run: false,
        }
    }
}
