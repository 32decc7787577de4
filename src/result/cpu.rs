//! CPU used while measuring: iopath's own time, its busiest thread and every core of the host.

use super::block_io::BlockDeviceUsage;
use serde::{Deserialize, Serialize};

/// CPU used while measuring.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuResult {
    /// Wall time the CPU figures cover, ns.
    pub wall_ns: u64,
    /// iopath's user time, ns.
    pub user_ns: u64,
    /// iopath's system time, ns.
    pub system_ns: u64,
    /// Logical CPUs of the host.
    pub cpu_count: u32,
    /// CPU time of iopath's busiest worker thread, ns.
    pub busiest_thread_ns: u64,
    /// The longest time one worker thread spent runnable but waiting for a CPU over the
    /// same wall time, ns (the scheduler's run-queue delay; 0 in results written before this
    /// field, or where the kernel does not keep it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub busiest_thread_cpu_wait_ns: u64,
    /// Every core of the host over the same wall time (all processes, from /proc/stat).
    pub cores: Vec<CoreUsage>,
    /// The other processes that used the most CPU over the same wall time, busiest first (at
    /// most three; empty in results written before this field, or when none used any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_processes: Vec<ProcessUsage>,
    /// What each block device of the host that completed I/O did over the same wall time,
    /// from its own counters (empty in results written before this field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_devices: Vec<BlockDeviceUsage>,
}

/// CPU one other process of the host used while iopath measured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessUsage {
    /// Its process id.
    pub pid: u32,
    /// Its command name, control characters escaped.
    pub name: String,
    /// User plus system time it used, ns.
    pub cpu_ns: u64,
}

/// Use of one core, from /proc/stat.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreUsage {
    /// CPU number.
    pub cpu: u32,
    /// All accounted time, ns.
    pub total_ns: u64,
    /// Time not idle and not waiting for I/O, ns.
    pub busy_ns: u64,
    /// Time serving hardware interrupts, ns.
    pub irq_ns: u64,
    /// Time serving software interrupts, ns.
    pub softirq_ns: u64,
}

impl CpuResult {
    /// iopath's user + system time as a percentage of the whole machine.
    pub fn process_percent_of_host(&self) -> f64 {
        if self.wall_ns == 0 || self.cpu_count == 0 {
            return 0.0;
        }
        (self.user_ns as f64 + self.system_ns as f64)
            / (self.wall_ns as f64 * self.cpu_count as f64)
            * 100.0
    }

    /// Busy share of the busiest core, percent (every process counted).
    pub fn busiest_core_percent(&self) -> f64 {
        self.cores
            .iter()
            .filter(|core| core.total_ns > 0)
            .map(|core| core.busy_ns as f64 / core.total_ns as f64 * 100.0)
            .fold(0.0, f64::max)
    }

    /// The longest time one worker waited for a CPU, as a percentage of the wall time.
    pub fn busiest_thread_cpu_wait_percent(&self) -> f64 {
        if self.wall_ns == 0 {
            return 0.0;
        }
        self.busiest_thread_cpu_wait_ns as f64 / self.wall_ns as f64 * 100.0
    }

    /// CPU time of the busiest worker thread as a percentage of one core.
    pub fn busiest_thread_percent(&self) -> f64 {
        if self.wall_ns == 0 {
            return 0.0;
        }
        self.busiest_thread_ns as f64 / self.wall_ns as f64 * 100.0
    }
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_shares_of_any_saved_times_are_finite() {
        let cpu = CpuResult {
            wall_ns: 1,
            user_ns: u64::MAX,
            system_ns: u64::MAX,
            cpu_count: 1,
            busiest_thread_ns: u64::MAX,
            busiest_thread_cpu_wait_ns: u64::MAX,
            cores: Vec::new(),
            other_processes: Vec::new(),
            block_devices: Vec::new(),
        };
        assert!(cpu.process_percent_of_host().is_finite());
        assert!(cpu.busiest_thread_percent().is_finite());
        assert!(cpu.busiest_thread_cpu_wait_percent().is_finite());
    }
}
