//! The `iopath` binary: wiring only. Parse → plan → run → report → exit status.

mod cli;

use clap::Parser;
use cli::{Cli, Command};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Under an MPI launcher every rank parses the same flags: one says what is wrong.
        Err(error) if iopath::cluster::launcher::rank().is_some_and(|rank| rank != 0) => {
            std::process::exit(error.exit_code())
        }
        Err(error) => error.exit(),
    };
    let status = match &cli.command {
        Command::Run(args) => cli::run_command::run(args),
        Command::Presets => cli::presets_command::run(),
        Command::Net(args) => cli::net_command::run(args),
        Command::Job(args) => cli::job_command::run(args),
        Command::Links(args) => cli::links_command::run(args),
        Command::Path(args) => cli::path_command::run(args),
        Command::Compare(args) => cli::compare_command::run(args),
        Command::Report(args) => cli::report_command::run(args),
        Command::Explain(args) => cli::explain_command::run(args),
        Command::History(args) => cli::history_command::run(args),
        Command::Pts(args) => cli::pts_command::run_pts(args),
        Command::Completions(args) => cli::completions_command::run(args),
        Command::Man(args) => cli::man_command::run(args),
    };
    std::process::exit(status);
}
