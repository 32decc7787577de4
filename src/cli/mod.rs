//! The command line: flags and subcommands declared once (help comes from the declarations),
//! and the one place that chooses output streams and exit codes.

pub mod compare_command;
pub mod completions_command;
pub mod dashboard;
pub mod declared_args;
pub mod exit;
pub mod explain_command;
pub mod failure;
pub mod forced_stop;
pub mod history_command;
pub mod job_command;
pub mod limit_args;
pub mod links_command;
pub mod live;
pub mod man_command;
pub mod messages;
pub mod net_command;
pub mod outputs;
pub mod path_command;
pub mod presets_command;
pub mod pts_command;
pub mod report_command;
pub mod run_args;
pub mod run_command;
pub mod server_metrics;
pub mod stale_files;
pub mod team;

use clap::{Parser, Subcommand};

const EXAMPLES: &str = "\
Examples:
  iopath run                              default suite on a temporary file here (about a minute)
  iopath run /dev/sdb --rw randread --bs 4k --qd 32
  iopath run test.dat --size 4g --rw randrw --read-pct 70 --bs 8k --qd 16 --workers 4
  iopath run /mnt/array/f --rw write --bs 1m --bytes 8g --fsync-at-end     (like dd conv=fdatasync)
  iopath run --json result.json           save the full RunResult
  iopath run --job fileserver.fio         run an fio job file (iopath job convert: as TOML)
  iopath run --preset file-server --qd heavy
  iopath run nbd://array:10809/lun0 --rw randread --qd 32 --link 10gbe
  iopath compare a.json b.json            side by side; iopath report a.json b.json -o r.html
  iopath pts /dev/sdb --allow-destructive --output-dir pts-sdb    SNIA PTS tests, HTML report
  iopath history                          every run kept; iopath compare @-1 @last
  iopath completions bash                 tab completion (also zsh, fish); iopath man: the manual

Exit status: 0 done, 1 stopped by an I/O or engine error, 2 bad input (nothing was written),
130 interrupted (the partial result is still printed and saved).

Every run is kept in a local history (iopath history --help says where; --no-history: not this
one; IOPATH_HISTORY moves it).";

/// iopath: measure a storage path and say what limits it.
#[derive(Debug, Parser)]
#[command(name = "iopath", version, about, after_help = EXAMPLES, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the default suite, or one workload against one or more targets.
    Run(Box<run_args::RunArgs>),
    /// List the presets (`iopath run --preset NAME`) and what each reproduces.
    Presets,
    /// Convert a job file (fio's or iopath's TOML) to TOML, or check it without any I/O.
    Job(job_command::JobArgs),
    /// List the link and bus catalog: what each hop can carry, and how that is derived.
    Links(links_command::LinksArgs),
    /// Show the storage path of a target: every hop from the file to the wire.
    Path(path_command::PathArgs),
    /// Compare saved runs side by side: ratios, and "same" where the confidence intervals overlap.
    Compare(compare_command::CompareArgs),
    /// Write one self-contained HTML report of saved runs.
    Report(report_command::ReportArgs),
    /// Explain saved runs again, without I/O: path, hops, verdict and trust notes, on the
    /// run's own paths, this host, or a recorded machine.
    Explain(explain_command::ExplainArgs),
    /// Run the SNIA Solid State Storage Performance Test Specification's tests (IOPS,
    /// throughput, latency, write saturation): purge, precondition, rounds until steady state.
    Pts(Box<pts_command::PtsArgs>),
    /// List the runs kept in the local history (@last, @-1, @label:NAME name them elsewhere).
    History(history_command::HistoryArgs),
    /// Measure raw TCP throughput to or from another host (like iperf3), or serve such tests.
    Net(net_command::NetArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell).
    Completions(completions_command::CompletionsArgs),
    /// Print the manual page, or write a page per subcommand into a directory.
    Man(man_command::ManArgs),
}
