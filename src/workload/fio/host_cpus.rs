//! The CPUs a job may be placed on: those this process may run on (its affinity) and the CPUs
//! of each NUMA node (`/sys/devices/system/node/nodeN/cpulist`), for `cpus_allowed` and
//! `numa_cpu_nodes`.

use std::path::Path;

/// Most bytes read from one `cpulist` file.
const MAX_LIST_BYTES: u64 = 64 * 1024;

/// Most CPUs the affinity mask is read for.
const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// The CPUs this process may run on, or `None` when the kernel does not say.
pub fn allowed_cpus() -> Option<Vec<u32>> {
    // SAFETY: cpu_set_t is plain bits, valid when zeroed; sched_getaffinity writes at most
    // size_of::<cpu_set_t>() bytes into it, and CPU_ISSET reads within it for cpu < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(
            (0..MAX_CPUS)
                .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
                .map(|cpu| cpu as u32)
                .collect(),
        )
    }
}

/// Each NUMA node under `root` (`/sys/devices/system/node`) with its CPUs, by node number;
/// empty when there is none to read.
pub fn numa_nodes(root: impl AsRef<Path>) -> Vec<(u32, Vec<u32>)> {
    let Ok(entries) = std::fs::read_dir(root.as_ref()) else {
        return Vec::new();
    };
    let mut nodes: Vec<(u32, Vec<u32>)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let node = name.to_str()?.strip_prefix("node")?.parse::<u32>().ok()?;
            let text = read_bounded(&entry.path().join("cpulist"))?;
            Some((node, parse_cpu_list(&text)))
        })
        .collect();
    nodes.sort_by_key(|(node, _)| *node);
    nodes
}

fn read_bounded(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_LIST_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Reads the kernel's list format (`0-3,8,10-11`); malformed parts are left out.
pub fn parse_cpu_list(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|part| !part.is_empty()) {
        let bounds = match part.split_once('-') {
            Some((low, high)) => (low.parse::<u32>(), high.parse::<u32>()),
            None => (part.parse::<u32>(), part.parse::<u32>()),
        };
        if let (Ok(low), Ok(high)) = bounds
            && low <= high
            && (high as usize) < MAX_CPUS
        {
            cpus.extend(low..=high);
        }
    }
    cpus
}

/// Shows a CPU list compactly (`0-3,8`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut index = 0;
    while index < cpus.len() {
        let start = cpus[index];
        let mut end = start;
        while index + 1 < cpus.len() && cpus[index + 1] == end + 1 {
            index += 1;
            end += 1;
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        index += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_and_print() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("\n"), Vec::<u32>::new());
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    }

    #[test]
    fn this_machine_has_nodes_and_allowed_cpus() {
        let allowed = allowed_cpus().expect("sched_getaffinity answers");
        assert!(!allowed.is_empty());
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("node0")).unwrap();
        std::fs::create_dir_all(dir.path().join("node1")).unwrap();
        std::fs::write(dir.path().join("node0/cpulist"), "0-1\n").unwrap();
        std::fs::write(dir.path().join("node1/cpulist"), "2\n").unwrap();
        std::fs::write(dir.path().join("possible"), "0-1\n").unwrap();
        assert_eq!(numa_nodes(dir.path()), [(0, vec![0, 1]), (1, vec![2])]);
    }
}
