//! `iopath explain RESULT.json… [--root DIR | --here] [--target T…] [--link …] [--path …]`:
//! the analysis of saved runs — storage path, hops, verdict, trust notes — done again without
//! any I/O, with the run's own paths, on this host, or on a recorded machine.

use super::compare_command::load_runs;
use super::exit::{self, Failed, Flagged, Usage};
use super::links_command::print_lines;
use clap::Args;
use iopath::analysis::path::{inspect_for_path, inspect_recorded};
use iopath::analysis::{DeclaredPath, analyse_gathered, analyse_on, host_facts_of};
use iopath::discovery::Machine;
use iopath::report::alike::alike_line;
use iopath::report::json::write_pretty_json;
use iopath::report::model::Report;
use iopath::report::path::path_lines;
use iopath::report::text::write_text;
use iopath::result::target_groups::group;
use iopath::result::{RunResult, TargetInfo};
use iopath::text::escape::escape_controls;
use std::io::Write;
use std::path::PathBuf;

/// Flags of `iopath explain`.
#[derive(Debug, Args)]
#[command(after_help = "\
Nothing is measured: the figures are the saved run's, and only the analysis is done again —
with what this version of iopath knows, the links and hops declared here, and the paths the
run saw. --root DIR discovers the targets' paths on the machine recorded in DIR instead
(`iopath path --record`), --here on this host; --target names the device or file of that
machine that stands for each of the run's targets (one per target, or one for all), so that
a run measured in a lab can be explained on the machine it models.

Examples:
  iopath explain run.json                         (again, with the run's own paths)
  iopath explain @last --link 10gbe               (declare what the run could not see)
  iopath explain lab.json --root fc-host --target /dev/sdb
  iopath explain a.json b.json --here")]
pub struct ExplainArgs {
    /// Saved results (`iopath run --json FILE`) or runs of the history (@last, @-N,
    /// @label:NAME, @ID).
    #[arg(value_name = "RESULT.json|@RUN", required = true)]
    pub results: Vec<String>,
    /// Discover the paths on the machine recorded in DIR (`iopath path --record DIR …`).
    #[arg(long, value_name = "DIR", conflicts_with = "here")]
    pub root: Option<PathBuf>,
    /// Discover the paths on this host.
    #[arg(long)]
    pub here: bool,
    /// With --root or --here: the target of that machine that stands for the run's target (a
    /// block device, a file, a URL); one per target of the run, in order, or one for all.
    #[arg(long, value_name = "TARGET")]
    pub target: Vec<String>,
    /// The hops declared where discovery cannot see.
    #[command(flatten)]
    pub declared: super::declared_args::DeclaredArgs,
    /// Print the analysed result as JSON (one result only) instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Where the paths of the explained runs come from.
enum PathSource {
    /// The paths saved in each result.
    Saved,
    /// Discovered again on a machine (this host or a recorded one).
    Machine(Box<Machine>, String),
}

/// Explains every run; returns the exit status (2 for bad flags or unreadable results).
pub fn run(args: &ExplainArgs) -> i32 {
    let declared = match args.declared.declared() {
        Ok(declared) => declared,
        Err(error) => return exit::fail(&error),
    };
    if !args.target.is_empty() && args.root.is_none() && !args.here {
        return exit::fail(&Usage(
            "--target names a target of another machine: give --root DIR or --here with it".into(),
        ));
    }
    if args.json && args.results.len() > 1 {
        return exit::fail(&Usage("--json prints one result: give one".into()));
    }
    let source = match &args.root {
        Some(root) => match Machine::recorded(root) {
            Ok(machine) => PathSource::Machine(
                Box::new(machine),
                format!("the machine recorded in {}", root.display()),
            ),
            Err(error) => {
                return exit::fail(&Flagged {
                    flag: "--root",
                    error,
                });
            }
        },
        None if args.here => {
            PathSource::Machine(Box::new(Machine::this_host()), "this host".into())
        }
        None => PathSource::Saved,
    };
    let stand_ins = match &source {
        PathSource::Machine(machine, _) if !args.target.is_empty() => {
            match stand_ins(machine, &args.target) {
                Ok(stand_ins) => Some(stand_ins),
                Err(status) => return status,
            }
        }
        _ => None,
    };
    let mut loaded = match load_runs(&args.results) {
        Ok(loaded) => loaded,
        Err(error) => return exit::fail(error.as_ref()),
    };
    for (label, result) in loaded.labels.iter().zip(loaded.results.iter_mut()) {
        if let Some(stand_ins) = &stand_ins {
            let count = result.targets.len();
            if stand_ins.len() != 1 && stand_ins.len() != count {
                return exit::fail(&Usage(format!(
                    "{}: the run has {count} target(s) and --target names {}: give one per target, or one for all",
                    escape_controls(label),
                    stand_ins.len()
                )));
            }
            for (index, target) in result.targets.iter_mut().enumerate() {
                let stand_in = &stand_ins[index.min(stand_ins.len() - 1)];
                *target = TargetInfo {
                    created_by_iopath: target.created_by_iopath,
                    ..stand_in.clone()
                };
            }
        }
        let seen_on = explain(result, &declared, &source);
        if !args.json {
            let status = print_explained(label, result, &seen_on);
            if status != exit::SUCCESS {
                return status;
            }
        }
    }
    if args.json {
        let mut out = std::io::stdout().lock();
        if let Err(error) =
            write_pretty_json(&loaded.results[0], &mut out).and_then(|()| out.flush())
        {
            return exit::fail(&Failed(format!("writing to stdout: {error}")));
        }
    }
    exit::SUCCESS
}

/// The targets `names` of `machine`, inspected without I/O; the exit status of the first
/// that cannot be described.
fn stand_ins(machine: &Machine, names: &[String]) -> Result<Vec<TargetInfo>, i32> {
    names
        .iter()
        .map(|name| {
            let found = if machine.is_recorded() {
                inspect_recorded(machine, name)
            } else {
                inspect_for_path(name).map(|(info, _)| info)
            };
            found.map_err(|error| {
                exit::fail(&Flagged {
                    flag: "--target",
                    error,
                })
            })
        })
        .collect()
}

/// Analyses `result` again; says where its paths come from.
fn explain(result: &mut RunResult, declared: &DeclaredPath, source: &PathSource) -> String {
    match source {
        PathSource::Saved => {
            let facts = host_facts_of(result);
            analyse_gathered(result, declared, &facts, None);
            "with the paths the run saw".into()
        }
        PathSource::Machine(machine, name) => {
            result.paths.clear();
            let facts = machine.host_facts();
            analyse_on(result, declared, machine, &facts);
            format!("with the paths discovered on {name}")
        }
    }
}

/// Prints the explained run: its paths, then the table and the verdicts as `iopath run`
/// prints them.
fn print_explained(label: &str, result: &RunResult, seen_on: &str) -> i32 {
    let mut lines = vec![format!("{}: explained {seen_on}", escape_controls(label))];
    // Targets alike (the files of a job on one filesystem) share one path, shown once.
    let (entries, paths) = group(&result.targets, &result.paths);
    let entries = if paths.len() == entries.len() {
        entries
    } else {
        Vec::new()
    };
    for (entry, path) in entries.iter().zip(&paths) {
        lines.push(format!(
            "Storage path of {}:",
            escape_controls(&entry.first.path)
        ));
        if let Some(alike) = &entry.alike {
            let quote = |text: &str| escape_controls(text).into_owned();
            lines.push(format!(
                "  ({}: the same path but for the file)",
                alike_line(alike, entry.first.size_bytes, &quote)
            ));
        }
        lines.extend(path_lines(path).iter().map(|line| format!("  {line}")));
        if !path.notes.is_empty() {
            lines.push("Notes:".into());
            lines.extend(path.notes.iter().map(|note| format!("  {note}")));
        }
    }
    print_lines(&lines);
    let mut out = std::io::stdout().lock();
    match write_text(Report::of_run(result).run(), &mut out).and_then(|()| out.flush()) {
        Ok(()) => exit::SUCCESS,
        Err(error) => exit::fail(&Failed(format!("writing to stdout: {error}"))),
    }
}
