//! A raised priority for what a timing-sensitive test measures. Such a test runs alone under
//! nextest, but other work on the machine (another build, a CPU hog on every core) still takes
//! the cores at the same priority, and a worker that wakes late shows that wait as latency or
//! a lower rate. Started at [`MEASURE_NICE`], the process under test wins every core it wakes
//! on: what it measures is its own timing again, not the scheduler's share.

use std::process::Command;

/// Niceness of a process a test measures: above the default (0) of everything else.
pub const MEASURE_NICE: &str = "-10";

/// `binary` started at [`MEASURE_NICE`] through `nice(1)` when the test runs as root (only
/// root may raise a priority), as it is otherwise; `IOPATH_HISTORY` set as
/// [`super::history::command`] sets it.
pub fn measured_command(binary: &str) -> Command {
    if !super::devices::is_root() {
        return super::history::command(binary);
    }
    let mut command = Command::new("nice");
    command.env("IOPATH_HISTORY", super::history::path());
    command.args(["-n", MEASURE_NICE, binary]);
    command
}

/// `binary` started in the real-time class (`chrt --fifo 1`) when the test runs as root, as
/// it is otherwise: for a run whose workers spin or pace to sub-millisecond precision (the
/// null engine's delays, `rate_iops`, flows). Beside a CPU hog on each core even
/// [`MEASURE_NICE`] lets a spinning worker be preempted for milliseconds (a 1 ms delay's p90
/// read 23 ms at nice -10, 1.0 ms in the real-time class). The kernel's real-time throttling
/// leaves the other processes 5 % of each core, so keep such runs to a few seconds.
pub fn realtime_command(binary: &str) -> Command {
    if !super::devices::is_root() {
        return super::history::command(binary);
    }
    let mut command = Command::new("chrt");
    command.env("IOPATH_HISTORY", super::history::path());
    command.args(["--fifo", "1", binary]);
    command
}
