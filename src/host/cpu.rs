//! CPU accounting: iopath's own user and system time, a thread's CPU time, and snapshots of
//! both with every core's counters (read by [`crate::discovery::resources`]) to measure the
//! CPU a window of time used.

use super::sys;
use crate::discovery::HostView;
use crate::discovery::disk_counters::{DiskCounters, disk_counters, usage_between};
use crate::discovery::processes::{ProcessTicks, busiest_between, process_ticks};
use crate::discovery::resources::{CoreCounters, core_counters, core_usage_between, online_cpus};
use crate::result::{CpuResult, ProcessUsage};
use std::collections::BTreeMap;

/// How many of the other processes that used the most CPU a window keeps.
pub const OTHER_PROCESSES_KEPT: usize = 3;
/// How many block devices a window keeps, the busiest by requests first.
pub const BLOCK_DEVICES_KEPT: usize = 16;

pub use sys::{process_cpu_ns, thread_cpu_ns, thread_cpu_wait_ns};

/// Logical CPUs online on this host (not limited by this process's affinity).
pub fn host_cpu_count() -> u32 {
    online_cpus(&HostView::live())
}

/// This process's CPU time and every core's counters at one instant.
#[derive(Clone, Debug)]
pub struct CpuSnapshot {
    user_ns: u64,
    system_ns: u64,
    cores: Vec<CoreCounters>,
    processes: Vec<ProcessTicks>,
    disks: BTreeMap<String, DiskCounters>,
}

impl CpuSnapshot {
    /// Reads both now.
    pub fn now() -> Self {
        let (user_ns, system_ns) = process_cpu_ns();
        CpuSnapshot {
            user_ns,
            system_ns,
            cores: core_counters(&HostView::live()),
            processes: Vec::new(),
            disks: BTreeMap::new(),
        }
    }

    /// [`CpuSnapshot::now`] with the CPU time of every process of the host, so that a window
    /// between two such snapshots names the other processes that used the most (a few
    /// thousand small reads of /proc: where a measured window starts and ends, never per I/O
    /// nor per live refresh), and every block device's request counters, so that the window
    /// also says what each device did.
    pub fn with_processes() -> Self {
        CpuSnapshot {
            processes: process_ticks(&HostView::live()),
            disks: disk_counters(&HostView::live()),
            ..CpuSnapshot::now()
        }
    }

    /// The CPU used from `earlier` to this snapshot, `wall_ns` apart (`busiest_thread_ns` is
    /// left for the caller to fill in).
    pub fn used_since(&self, earlier: &CpuSnapshot, wall_ns: u64) -> CpuResult {
        CpuResult {
            wall_ns,
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            system_ns: self.system_ns.saturating_sub(earlier.system_ns),
            cpu_count: host_cpu_count(),
            busiest_thread_ns: 0,
            busiest_thread_cpu_wait_ns: 0,
            cores: core_usage_between(&earlier.cores, &self.cores, sys::clock_ticks_per_second()),
            other_processes: busiest_between(
                &earlier.processes,
                &self.processes,
                std::process::id(),
                OTHER_PROCESSES_KEPT,
            )
            .into_iter()
            .map(|(process, ticks)| ProcessUsage {
                pid: process.pid,
                name: process.name,
                cpu_ns: ticks.saturating_mul(1_000_000_000) / sys::clock_ticks_per_second().max(1),
            })
            .collect(),
            block_devices: usage_between(&earlier.disks, &self.disks, BLOCK_DEVICES_KEPT),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_covers_every_core() {
        let start = CpuSnapshot::now();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let used = CpuSnapshot::now().used_since(&start, 1);
        assert_eq!(used.cores.len(), used.cpu_count as usize);
        assert!(used.user_ns + used.system_ns > 0, "{used:?}");
    }
}
