//! What a machine is and has, as its `/proc` and `/sys` say: its description (name, kernel,
//! CPU model, CPUs online, memory), its NUMA nodes and their CPUs, the per-core counters of `/proc/stat` that CPU use is
//! measured from, and the room a plan is checked against (memory available, threads).
//!
//! Read through a [`HostView`] like the storage path, so that the figures the analysis and
//! the reports use come from the one reader of the machine, and a recorded machine answers
//! with its own. What needs a system call (resource limits, CPU time of this process) is
//! asked where it is used; nothing here does arithmetic on a run.
//!
//! ```
//! use iopath::discovery::HostView;
//! use iopath::discovery::resources::{describe, parse_cpu_list};
//! let root = std::env::temp_dir().join(format!("iopath-resources-doc-{}", std::process::id()));
//! std::fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
//! std::fs::create_dir_all(root.join("sys/devices/system/cpu")).unwrap();
//! std::fs::write(root.join("proc/sys/kernel/hostname"), "array-host\n").unwrap();
//! std::fs::write(root.join("proc/meminfo"), "MemTotal: 2048 kB\n").unwrap();
//! std::fs::write(root.join("sys/devices/system/cpu/online"), "0-3,8\n").unwrap();
//! let host = describe(&HostView::rooted(&root));
//! assert_eq!((host.hostname.as_str(), host.cpu_count, host.memory_bytes), ("array-host", 5, 2 << 20));
//! assert_eq!(parse_cpu_list("0-1"), Some(2));
//! std::fs::remove_dir_all(&root).unwrap();
//! ```

use super::HostView;
use super::host_view::TABLE_LIMIT_BYTES;
use crate::result::{CoreUsage, HostInfo};
use crate::text::escape::escape_controls;
use std::path::Path;

/// The machine's description: host name, kernel release, CPU model, CPUs online and memory
/// installed. A figure that cannot be read is empty (`unknown` for the CPU model, 1 CPU, 0
/// bytes).
pub fn describe(view: &HostView) -> HostInfo {
    let read = |path: &str| view.attribute(Path::new(path)).unwrap_or_default();
    let cpuinfo = cpuinfo(view);
    let cpu_model = cpuinfo
        .lines()
        .find(|line| line.starts_with("model name"))
        .and_then(|line| line.split_once(':'))
        .map(|(_, model)| escape_controls(model.trim()).into_owned())
        .filter(|model| !model.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu_model,
        cpu_count: online_cpus(view),
        memory_bytes: meminfo_bytes(view, "MemTotal:").unwrap_or(0),
    }
}

/// Logical CPUs online (`/sys/devices/system/cpu/online`, whatever this process's affinity),
/// or the processors of `/proc/cpuinfo`; at least 1.
pub fn online_cpus(view: &HostView) -> u32 {
    view.attribute(Path::new("/sys/devices/system/cpu/online"))
        .and_then(|list| parse_cpu_list(&list))
        .filter(|&count| count > 0)
        .unwrap_or_else(|| {
            let processors = cpuinfo(view)
                .lines()
                .filter(|line| line.starts_with("processor"))
                .count() as u32;
            processors.max(1)
        })
}

/// `/proc/cpuinfo`, keeping in a recording only the lines used (the model and one line per
/// processor).
fn cpuinfo(view: &HostView) -> String {
    let path = Path::new("/proc/cpuinfo");
    let text = view.read_text(path, TABLE_LIMIT_BYTES).unwrap_or_default();
    let used: String = text
        .lines()
        .filter(|line| line.starts_with("processor") || line.starts_with("model name"))
        .map(|line| format!("{line}\n"))
        .collect();
    view.narrow_recording(path, &used);
    text
}

/// How many CPUs a kernel CPU list names (`0-3,8,10-11` → 7); `None` when it is not one.
pub fn parse_cpu_list(list: &str) -> Option<u32> {
    let mut count = 0u32;
    for part in list.trim().split(',').filter(|part| !part.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (first.parse::<u32>().ok()?, last.parse::<u32>().ok()?),
            None => {
                let only = part.parse::<u32>().ok()?;
                (only, only)
            }
        };
        count = count.checked_add(last.checked_sub(first)?.checked_add(1)?)?;
    }
    Some(count)
}

/// The CPUs a kernel CPU list names (`0-3,8,10-11`), in order; malformed parts are left
/// out.
pub fn cpus_in_list(list: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|part| !part.is_empty()) {
        let bounds = match part.split_once('-') {
            Some((low, high)) => (low.parse::<u32>(), high.parse::<u32>()),
            None => (part.parse::<u32>(), part.parse::<u32>()),
        };
        if let (Ok(low), Ok(high)) = bounds
            && low <= high
            && high < MAX_LISTED_CPU
        {
            cpus.extend(low..=high);
        }
    }
    cpus
}

/// Highest CPU number (plus one) a list is read for: the kernel's `CONFIG_NR_CPUS` limit.
const MAX_LISTED_CPU: u32 = 8192;

/// Each NUMA node of the machine `view` shows, with its CPUs
/// (`/sys/devices/system/node/nodeN/cpulist`), by node number; empty when there is none.
pub fn numa_nodes(view: &HostView) -> Vec<(u32, Vec<u32>)> {
    let root = Path::new("/sys/devices/system/node");
    let mut nodes: Vec<(u32, Vec<u32>)> = view
        .read_dir_matching(root, "node")
        .into_iter()
        .filter_map(|name| {
            let node = name.strip_prefix("node")?.parse::<u32>().ok()?;
            let list = view.attribute(&root.join(&name).join("cpulist"))?;
            Some((node, cpus_in_list(&list)))
        })
        .collect();
    nodes.sort_by_key(|(node, _)| *node);
    nodes
}

/// A `/proc/meminfo` field in bytes (`MemAvailable:`) of the machine `view` shows. A
/// recording keeps only the lines asked for.
pub fn meminfo_bytes(view: &HostView, field: &str) -> Option<u64> {
    let path = Path::new("/proc/meminfo");
    let text = view.read_to_string(path)?;
    let line = text.lines().find(|line| line.starts_with(field))?;
    view.narrow_recording(path, &format!("{line}\n"));
    line.split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()?
        .checked_mul(1024)
}

/// Cumulative counters of one core, from `/proc/stat`, in clock ticks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreCounters {
    cpu: u32,
    total: u64,
    idle: u64,
    irq: u64,
    softirq: u64,
}

/// Every `cpuN` line of the machine's `/proc/stat` (empty when unreadable).
pub fn core_counters(view: &HostView) -> Vec<CoreCounters> {
    view.read_text(Path::new("/proc/stat"), TABLE_LIMIT_BYTES)
        .map(|text| parse_proc_stat(&text))
        .unwrap_or_default()
}

/// Parses the `cpuN` lines of a `/proc/stat` text.
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

/// Per-core use between two readings, in ns at `ticks_per_second` (`sysconf(_SC_CLK_TCK)`).
pub fn core_usage_between(
    before: &[CoreCounters],
    after: &[CoreCounters],
    ticks_per_second: u64,
) -> Vec<CoreUsage> {
    let ticks_per_second = ticks_per_second.max(1);
    let ns = |ticks: u64| ticks.saturating_mul(1_000_000_000) / ticks_per_second;
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

/// Bit of the capability that exempts from `RLIMIT_MEMLOCK` (`linux/capability.h`).
const CAP_IPC_LOCK: u32 = 14;

/// The room a plan is checked against, as the machine's `/proc` gives it; a figure that
/// cannot be read is `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Room {
    /// `MemAvailable`, bytes.
    pub memory_available_bytes: Option<u64>,
    /// Threads of this process (`Threads:` of `/proc/self/status`).
    pub own_threads: Option<u64>,
    /// Whether this process holds `CAP_IPC_LOCK` (`CapEff:` of `/proc/self/status`): no
    /// `RLIMIT_MEMLOCK` applies to it.
    pub ipc_lock: bool,
    /// Threads of the whole system (`/proc/loadavg`).
    pub threads_in_system: Option<u64>,
    /// `kernel.threads-max` and `kernel.pid_max`.
    pub system_thread_limits: [Option<u64>; 2],
}

/// The room on the machine `view` shows, for this process.
pub fn room(view: &HostView) -> Room {
    let status = view
        .read_to_string(Path::new("/proc/self/status"))
        .unwrap_or_default();
    Room {
        memory_available_bytes: meminfo_bytes(view, "MemAvailable:"),
        own_threads: status_field(&status, "Threads:"),
        ipc_lock: status_hex(&status, "CapEff:")
            .is_some_and(|capabilities| capabilities & (1 << CAP_IPC_LOCK) != 0),
        threads_in_system: view
            .read_to_string(Path::new("/proc/loadavg"))
            .and_then(|text| loadavg_threads(&text)),
        system_thread_limits: [
            view.number(Path::new("/proc/sys/kernel/threads-max")),
            view.number(Path::new("/proc/sys/kernel/pid_max")),
        ],
    }
}

/// The first number after `key` at the start of a line of `text` (`Threads:\t5`).
fn status_field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The hexadecimal number after `key` (`CapEff:\t000001ffffffffff`).
fn status_hex(text: &str, key: &str) -> Option<u64> {
    let value = text.lines().find_map(|line| line.strip_prefix(key))?;
    u64::from_str_radix(value.trim(), 16).ok()
}

/// Threads of the whole system, from `/proc/loadavg` (`0.10 0.20 0.30 1/345 6789`).
fn loadavg_threads(text: &str) -> Option<u64> {
    text.split_whitespace()
        .nth(3)?
        .split_once('/')?
        .1
        .parse()
        .ok()
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
        let usage = core_usage_between(&counters, &later, 100);
        assert_eq!(usage.len(), 1);
        assert_eq!(usage[0].busy_ns, usage[0].total_ns);
        assert_eq!(usage[0].total_ns, 100_000_000);
    }

    #[test]
    fn numa_nodes_list_their_cpus() {
        assert_eq!(cpus_in_list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(cpus_in_list("\n"), Vec::<u32>::new());
        let root = tempfile::tempdir().unwrap();
        let nodes = root.path().join("sys/devices/system/node");
        std::fs::create_dir_all(nodes.join("node0")).unwrap();
        std::fs::create_dir_all(nodes.join("node1")).unwrap();
        std::fs::write(nodes.join("node0/cpulist"), "0-1\n").unwrap();
        std::fs::write(nodes.join("node1/cpulist"), "2\n").unwrap();
        std::fs::write(nodes.join("possible"), "0-1\n").unwrap();
        let view = HostView::rooted(root.path());
        assert_eq!(numa_nodes(&view), [(0, vec![0, 1]), (1, vec![2])]);
    }

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), Some(7));
        assert_eq!(parse_cpu_list(""), Some(0));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("junk"), None);
    }

    #[test]
    fn proc_text_is_parsed() {
        let status = "Name:\tiopath\nThreads:\t7\nCapEff:\t000001fffeffffff\n";
        assert_eq!(status_field(status, "Threads:"), Some(7));
        assert_eq!(status_hex(status, "CapEff:"), Some(0x1fffeffffff));
        assert_eq!(loadavg_threads("0.20 0.18 0.12 1/80 11206\n"), Some(80));
        assert_eq!(loadavg_threads("junk"), None);
    }

    #[test]
    fn a_recorded_machine_describes_itself() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path();
        std::fs::create_dir_all(base.join("proc/sys/kernel")).unwrap();
        std::fs::create_dir_all(base.join("proc/self")).unwrap();
        std::fs::write(base.join("proc/sys/kernel/osrelease"), "6.1.0\n").unwrap();
        std::fs::write(base.join("proc/sys/kernel/threads-max"), "1000\n").unwrap();
        std::fs::write(
            base.join("proc/cpuinfo"),
            "processor\t: 0\nmodel name\t: Test CPU \x1b[2J\n\nprocessor\t: 1\nmodel name\t: Test CPU\n",
        )
        .unwrap();
        std::fs::write(
            base.join("proc/meminfo"),
            "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   22730528 kB\n",
        )
        .unwrap();
        std::fs::write(base.join("proc/self/status"), "Threads:\t3\nCapEff:\t0\n").unwrap();
        std::fs::write(base.join("proc/loadavg"), "0.20 0.18 0.12 1/80 11206\n").unwrap();
        let view = HostView::rooted(base);
        let host = describe(&view);
        assert_eq!(host.kernel, "6.1.0");
        assert_eq!(host.hostname, "");
        assert_eq!(host.cpu_model, "Test CPU \\u{1b}[2J");
        assert_eq!(host.cpu_count, 2, "no cpu/online: the processors listed");
        assert_eq!(host.memory_bytes, 24_000_000 * 1024);
        assert_eq!(
            room(&view),
            Room {
                memory_available_bytes: Some(22_730_528 * 1024),
                own_threads: Some(3),
                ipc_lock: false,
                threads_in_system: Some(80),
                system_thread_limits: [Some(1000), None],
            }
        );
        assert_eq!(meminfo_bytes(&view, "NoSuchField:"), None);
        assert!(core_counters(&view).is_empty());
        assert_eq!(online_cpus(&view), 2);
    }

    #[test]
    fn this_host_reads() {
        let view = HostView::live();
        let host = describe(&view);
        assert!(host.cpu_count >= 1 && host.memory_bytes > 0, "{host:?}");
        assert!(!host.kernel.is_empty());
        assert_eq!(online_cpus(&view), host.cpu_count);
        assert!(core_counters(&view).len() >= host.cpu_count as usize);
        let room = room(&view);
        assert!(room.memory_available_bytes.is_some_and(|bytes| bytes > 0));
        assert!(room.own_threads.is_some_and(|threads| threads >= 1));
        assert!(room.threads_in_system.is_some());
    }
}
