//! The processes of the host and the CPU time each has used, from `/proc/PID/stat`
//! (Documentation/filesystems/proc.rst: field 2 is the command name in parentheses, fields 14
//! and 15 the user and system time in clock ticks): two readings a window apart tell which
//! other processes took the cores while a test ran.

use super::HostView;
use std::path::Path;

/// Most processes read at one instant (a host with more shows the first ones in `/proc`'s order).
pub const MAX_PROCESSES: usize = 4096;
/// Most bytes read of one `stat` file (a command name is at most 64 bytes; the rest are numbers).
const STAT_LIMIT_BYTES: usize = 4096;

/// CPU time one process has used so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessTicks {
    /// Its process id.
    pub pid: u32,
    /// Its command name (`comm`), control characters escaped.
    pub name: String,
    /// User plus system time, clock ticks.
    pub ticks: u64,
}

/// Every process of the host now (at most [`MAX_PROCESSES`]), in `/proc`'s order.
pub fn process_ticks(view: &HostView) -> Vec<ProcessTicks> {
    let proc = Path::new("/proc");
    view.read_dir(proc)
        .into_iter()
        .filter(|entry| entry.bytes().all(|b| b.is_ascii_digit()))
        .take(MAX_PROCESSES)
        .filter_map(|entry| {
            let pid = entry.parse().ok()?;
            let text = view.read_text(&proc.join(&entry).join("stat"), STAT_LIMIT_BYTES)?;
            parse_stat(pid, &text)
        })
        .collect()
}

/// One `/proc/PID/stat` line: the name between the first `(` and the last `)` (a name may hold
/// parentheses and spaces), then the fields after it, of which utime and stime are the 12th
/// and 13th.
pub fn parse_stat(pid: u32, text: &str) -> Option<ProcessTicks> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?;
    let mut fields = text.get(close + 1..)?.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(ProcessTicks {
        pid,
        name: crate::text::escape::escape_controls(name).into_owned(),
        ticks: user.saturating_add(system),
    })
}

/// The `most` processes, other than `own_pid`, that used the most CPU between `earlier` and
/// `later`, with the ticks each used, busiest first (a process that started in between counts
/// from zero; one that ended is not seen).
pub fn busiest_between(
    earlier: &[ProcessTicks],
    later: &[ProcessTicks],
    own_pid: u32,
    most: usize,
) -> Vec<(ProcessTicks, u64)> {
    let mut used: Vec<(ProcessTicks, u64)> = later
        .iter()
        .filter(|process| process.pid != own_pid)
        .filter_map(|process| {
            let before = earlier
                .iter()
                .find(|old| old.pid == process.pid && old.name == process.name)
                .map_or(0, |old| old.ticks);
            let delta = process.ticks.saturating_sub(before);
            (delta > 0).then(|| (process.clone(), delta))
        })
        .collect();
    used.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.pid.cmp(&b.0.pid)));
    used.truncate(most);
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_its_name_and_cpu_time_even_with_parentheses_in_the_name() {
        let line = "4242 (my (odd) name) R 1 4242 4242 0 -1 4194304 100 0 0 0 250 75 0 0 20 0 1 0 100 1000 10 18446744073709551615";
        let process = parse_stat(4242, line).unwrap();
        assert_eq!(process.name, "my (odd) name");
        assert_eq!(process.ticks, 325);
        assert_eq!(parse_stat(1, "1 (init"), None);
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[test]
    fn the_busiest_others_are_ranked_and_iopath_left_out() {
        let at = |pid, name: &str, ticks| ProcessTicks {
            pid,
            name: name.into(),
            ticks,
        };
        let earlier = vec![at(1, "init", 10), at(2, "stress", 100), at(3, "iopath", 50)];
        let later = vec![
            at(1, "init", 11),
            at(2, "stress", 400),
            at(3, "iopath", 900),
            at(4, "fio", 120),
        ];
        let busiest = busiest_between(&earlier, &later, 3, 2);
        let names: Vec<(&str, u64)> = busiest.iter().map(|(p, t)| (p.name.as_str(), *t)).collect();
        assert_eq!(names, vec![("stress", 300), ("fio", 120)]);
    }

    #[test]
    fn this_host_lists_this_process() {
        let own = std::process::id();
        let processes = process_ticks(&HostView::live());
        assert!(
            processes.iter().any(|p| p.pid == own),
            "{} processes",
            processes.len()
        );
    }
}
