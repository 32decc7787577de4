//! `iopath compare A.json B.json [C.json…]`: several saved runs side by side, as a terminal
//! table, Markdown (`--md`) or JSON (`--json`), with cost and density when prices or ports
//! are given.

use super::exit::{self, Failed, Status, Usage};
use super::history_command::Resolver;
use clap::Args;
use iopath::compare::labels::{split_run_argument, unique_labels};
use iopath::compare::{CompareError, CompareOptions, CostInputs, LabeledRun};
use iopath::gate::read::{FileLimit, read_text};
use iopath::history::reference::Reference;
use iopath::report::compare_json::write_compare_json;
use iopath::report::compare_markdown::write_compare_markdown;
use iopath::report::compare_text::write_compare_text;
use iopath::report::json::read_json;
use iopath::report::model::Report;
use iopath::result::RunResult;
use iopath::text::escape::escape_controls;
use std::io::Write;
use std::path::Path;

/// Prices, ports and a target bandwidth: flags shared by `iopath compare` and `iopath report`.
#[derive(Debug, Default, Args)]
pub struct CostArgs {
    /// Price of each run's configuration, any currency: LABEL=PRICE,… (gives the price per
    /// GB/s and per 1,000 IOPS). May repeat.
    #[arg(long, value_name = "LABEL=PRICE,…")]
    pub cost: Vec<String>,
    /// Ports (links, HBA or NIC ports) of each run's configuration: LABEL=PORTS,… (gives the
    /// bandwidth per port). May repeat.
    #[arg(long, value_name = "LABEL=PORTS,…")]
    pub ports: Vec<String>,
    /// Bandwidth to reach, such as 10GB/s or 40Gb/s: how many ports and configurations each
    /// run would need (assumes they add up linearly).
    #[arg(long, value_name = "RATE")]
    pub target_bandwidth: Option<String>,
    /// Label of the run the others are measured against (default: the first).
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,
}

impl CostArgs {
    /// The comparison options these flags ask for.
    pub fn options(&self) -> Result<CompareOptions, CompareError> {
        let cost =
            CostInputs::from_flags(&self.cost, &self.ports, self.target_bandwidth.as_deref())?;
        Ok(CompareOptions {
            baseline: self.baseline.clone(),
            cost,
        })
    }
}

/// Flags of `iopath compare`.
#[derive(Debug, Args)]
#[command(after_help = "\
Tests match by name and sweep point; tests missing from a run are listed, not dropped. Runs of
one test each are compared whatever the tests' names, with a note naming what differs (block
size, queue depth, engine, target…). For every test in all runs: MB/s, IOPS, mean and p99 latency side by side, the ratio and the difference to
the baseline, and \"same\" where the 95 % confidence intervals overlap, \"better\" or \"worse\"
only where they do not.

Labels come from NAME=FILE, else from the run's --label, else from the file name (@ID for a
run of the history).

Examples:
  iopath compare before.json after.json
  iopath compare @-1 @last                (the last two runs kept in the history)
  iopath compare @label:fc @label:iscsi   (the newest run of each label)
  iopath compare fc=fc.json iscsi=iscsi.json --md
  iopath compare fc=fc.json iscsi=iscsi.json --cost fc=1200,iscsi=2400 --ports fc=2,iscsi=1 \\
      --target-bandwidth 10GB/s")]
pub struct CompareArgs {
    /// Saved results (`iopath run --json FILE`) or runs of the history (@last, @-N,
    /// @label:NAME, @ID), each optionally NAME=FILE or NAME=@….
    #[arg(value_name = "RESULT.json|@RUN", num_args = 2.., required = true)]
    pub results: Vec<String>,
    /// Print Markdown instead of the table.
    #[arg(long, conflicts_with = "json")]
    pub md: bool,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// Prices, ports, target bandwidth and baseline.
    #[command(flatten)]
    pub cost: CostArgs,
}

/// Saved runs read from command-line arguments, with their labels.
pub struct LoadedRuns {
    /// Unique labels, same order as `results`.
    pub labels: Vec<String>,
    /// The runs.
    pub results: Vec<RunResult>,
}

impl LoadedRuns {
    /// The runs with their labels, for the library.
    pub fn labeled(&self) -> Vec<LabeledRun<'_>> {
        self.labels
            .iter()
            .zip(&self.results)
            .map(|(label, result)| LabeledRun::new(label, result))
            .collect()
    }
}

/// Reads every `FILE`, history reference (`@last`, `@-N`, `@label:NAME`, `@ID`) or
/// `NAME=` either of `arguments` (a file is a regular file of at most
/// [`FileLimit::RESULT_FILE`], and so is a run read back from the history); errors name the
/// file or the reference.
pub fn load_runs(arguments: &[String]) -> Result<LoadedRuns, Box<dyn Status>> {
    let mut entries = Vec::with_capacity(arguments.len());
    let mut results = Vec::with_capacity(arguments.len());
    let mut history = Resolver::default();
    for argument in arguments {
        let (label, source) = split_run_argument(argument, |path| {
            !Reference::is_reference(path) && Path::new(path).is_file()
        });
        let (source, result) = if Reference::is_reference(&source) {
            history.load(&source)?
        } else {
            let result = read_result_file(&source)?;
            (source, result)
        };
        entries.push((label, result.label.clone(), source));
        results.push(result);
    }
    Ok(LoadedRuns {
        labels: unique_labels(&entries),
        results,
    })
}

/// Reads the saved result `file`; errors name it.
fn read_result_file(file: &str) -> Result<RunResult, Usage> {
    let shown = escape_controls(file);
    let text = read_text(Path::new(file), FileLimit::RESULT_FILE)
        .map_err(|error| Usage(format!("{shown}: {error}")))?;
    read_json(&text).map_err(|error| Usage(format!("{shown}: {error}")))
}

/// Prints the comparison; returns the exit status (2 for unreadable files or bad flags).
pub fn run(args: &CompareArgs) -> i32 {
    let options = match args.cost.options() {
        Ok(options) => options,
        Err(error) => return exit::fail(&error),
    };
    let runs = match load_runs(&args.results) {
        Ok(runs) => runs,
        Err(error) => return exit::fail(error.as_ref()),
    };
    let report = match Report::of_runs(&runs.labeled(), &options, None) {
        Ok(report) => report,
        Err(error) => return exit::fail(&error),
    };
    let Some(comparison) = &report.comparison else {
        return exit::fail(&CompareError::TooFewRuns(report.runs.len()));
    };
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        write_compare_json(comparison, &mut out)
    } else if args.md {
        write_compare_markdown(comparison, &mut out)
    } else {
        write_compare_text(comparison, &mut out)
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => exit::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => exit::SUCCESS,
        Err(error) => exit::fail(&Failed(format!("writing to stdout: {error}"))),
    }
}
