//! CPU accounting: iopath's own user and system time, a thread's CPU time, and every core's
//! use from /proc/stat.

use super::sys;
use crate::result::CoreUsage;

pub use sys::{process_cpu_ns, thread_cpu_ns};

/// Cumulative per-core counters of /proc/stat, in clock ticks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreCounters {
    cpu: u32,
    total: u64,
    idle: u64,
    irq: u64,
    softirq: u64,
}

/// Reads every `cpuN` line of /proc/stat (empty when unreadable).
pub fn read_core_counters() -> Vec<CoreCounters> {
    let Ok(text) = std::fs::read_to_string("/proc/stat") else {
        return Vec::new();
    };
    parse_proc_stat(&text)
}

/// Parses the `cpuN` lines of a /proc/stat text.
pub fn parse_proc_stat(text: &str) -> Vec<CoreCounters> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu = fields.next()?.strip_prefix("cpu")?.parse::<u32>().ok()?;
            let values: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal guest guest_nice
            if values.len() < 7 {
                return None;
            }
            Some(CoreCounters {
                cpu,
                total: values.iter().take(8).sum(),
                idle: values[3] + values[4],
                irq: values[5],
                softirq: values[6],
            })
        })
        .collect()
}

/// Per-core use between two readings, converted to ns.
pub fn core_usage_between(before: &[CoreCounters], after: &[CoreCounters]) -> Vec<CoreUsage> {
    let ticks_per_second = sys::clock_ticks_per_second();
    let ns = |ticks: u64| ticks * 1_000_000_000 / ticks_per_second;
    after
        .iter()
        .filter_map(|late| {
            let early = before.iter().find(|c| c.cpu == late.cpu)?;
            let total = late.total.saturating_sub(early.total);
            let idle = late.idle.saturating_sub(early.idle);
            Some(CoreUsage {
                cpu: late.cpu,
                total_ns: ns(total),
                busy_ns: ns(total.saturating_sub(idle)),
                irq_ns: ns(late.irq.saturating_sub(early.irq)),
                softirq_ns: ns(late.softirq.saturating_sub(early.softirq)),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_lines_are_read() {
        let text = "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 1 2 0 0 0\ncpu1 5 0 5 40 0 0 0 0 0 0\nintr 1\n";
        let counters = parse_proc_stat(text);
        assert_eq!(counters.len(), 2);
        assert_eq!(counters[0].total, 53);
        assert_eq!(counters[0].idle, 40);
        let later = parse_proc_stat("cpu0 15 0 5 40 0 1 2 0 0 0\n");
        let usage = core_usage_between(&counters, &later);
        assert_eq!(usage.len(), 1);
        assert_eq!(usage[0].busy_ns, usage[0].total_ns);
    }

    #[test]
    fn thread_time_advances_with_work() {
        let before = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_ns() > before);
    }
}
