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
    let mut command = measured_server(binary);
    command.env("IOPATH_HISTORY", super::history::path());
    command
}

/// A server `program` whose pacing a test measures (nbdkit's delay filter, say) started at
/// [`MEASURE_NICE`] through `nice(1)` when the test runs as root, as it is otherwise. Beside a
/// CPU hog on each core a server at the default priority wakes late from its own pacing, and
/// the client measures that wait as the server's latency.
pub fn measured_server(program: &str) -> Command {
    if !super::devices::is_root() {
        return Command::new(program);
    }
    let mut command = Command::new("nice");
    command.args(["-n", MEASURE_NICE, program]);
    command
}

/// `binary` started in the real-time class (`chrt --fifo 1`) when the test runs as root, as
/// it is otherwise: for a run whose workers spin or pace to sub-millisecond precision (the
/// null engine's delays, `rate_iops`, flows). Beside a CPU hog on each core even
/// [`MEASURE_NICE`] lets a spinning worker be preempted for milliseconds (a 1 ms delay's p90
/// read 23 ms at nice -10, 1.0 ms in the real-time class). The kernel's real-time throttling
/// leaves the other processes 5 % of each core, so keep such runs to a few seconds.
/// `IOPATH_HISTORY` set as [`super::history::command`] sets it.
pub fn realtime_command(binary: &str) -> Command {
    let mut command = realtime_server(binary);
    command.env("IOPATH_HISTORY", super::history::path());
    command
}

/// A server `program` started in the real-time class (`chrt --fifo 1`) when the test runs as
/// root, as it is otherwise: for a server whose pacing a percentile of few samples measures
/// (nbdkit's delay filter under a latency target). Beside a CPU hog on each core, nbdkit at
/// [`MEASURE_NICE`] still woke late often enough to lift the 90th percentile of a window of
/// twenty reads by tens of milliseconds. Only for servers that mostly sleep.
pub fn realtime_server(program: &str) -> Command {
    if !super::devices::is_root() {
        return Command::new(program);
    }
    let mut command = Command::new("chrt");
    command.args(["--fifo", "1", program]);
    command
}
