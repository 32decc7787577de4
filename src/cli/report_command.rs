//! `iopath report RESULT.json… -o report.html`: the HTML report of one or more saved runs (with
//! their comparison when there are several).

use super::compare_command::{CostArgs, load_runs};
use super::exit::{self, Failed, Usage};
use super::history_command::Resolver;
use super::outputs::{check_output, write_output};
use clap::Args;
use iopath::gate::replace::OutputFile;
use iopath::history::StoredResult;
use iopath::history::reference::Reference;
use iopath::report::html::pts::write_pts_html;
use iopath::report::html::write_html;
use iopath::report::model::Report;
use iopath::result::pts::PtsResult;
use std::io::Write;
use std::path::PathBuf;

/// Flags of `iopath report`.
#[derive(Debug, Args)]
#[command(after_help = "\
The report is one HTML file with everything inline (no script, nothing fetched when opened;
its Content-Security-Policy forbids both):
summary with verdicts, comparison and cost (several results), sweep curves, MB/s and IOPS over
time, latency distribution and percentiles, the storage path with each hop's utilisation, host
and workload details, and trust notes. It prints on A4.

Examples:
  iopath report run.json -o report.html
  iopath report @last -o last.html        (the newest run of the history; an `iopath pts` run
                                          gets its PTS report)
  iopath report fc=fc.json iscsi=iscsi.json -o fc-vs-iscsi.html --cost fc=1200,iscsi=2400")]
pub struct ReportArgs {
    /// Saved results (`iopath run --json FILE`) or runs of the history (@last, @-N,
    /// @label:NAME, @ID), each optionally NAME=FILE or NAME=@….
    #[arg(value_name = "RESULT.json|@RUN", required = true)]
    pub results: Vec<String>,
    /// Where to write the report (`-` for standard output). An existing file is replaced only
    /// once the report is complete.
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
    /// Title of the page (default: the labels of the runs).
    #[arg(long)]
    pub title: Option<String>,
    /// Prices, ports, target bandwidth and baseline for the comparison.
    #[command(flatten)]
    pub cost: CostArgs,
}

/// Writes the report; returns the exit status (2 for unreadable files or bad flags, 1 when
/// the report cannot be written).
pub fn run(args: &ReportArgs) -> i32 {
    let output = if args.output.as_os_str() == "-" {
        None
    } else {
        match check_output("--output", &args.output) {
            Ok(output) => Some(output),
            Err(error) => return exit::fail(&error),
        }
    };
    let options = match args.cost.options() {
        Ok(options) => options,
        Err(error) => return exit::fail(&error),
    };
    if let [only] = args.results.as_slice()
        && Reference::is_reference(only)
    {
        match Resolver::default().load_any(only) {
            Ok(StoredResult::Pts(pts)) => return write_pts(&pts, output.as_ref()),
            Ok(StoredResult::Run(_)) => {}
            Err(error) => return exit::fail(&error),
        }
    }
    let loaded = match load_runs(&args.results) {
        Ok(loaded) => loaded,
        Err(error) => return exit::fail(error.as_ref()),
    };
    let runs = loaded.labeled();
    if runs.len() < 2 && (options.cost.is_some() || options.baseline.is_some()) {
        return exit::fail(&Usage(
            "--cost, --ports, --target-bandwidth and --baseline need two results or more".into(),
        ));
    }
    let report = match Report::of_runs(&runs, &options, args.title.clone()) {
        Ok(report) => report,
        Err(error) => return exit::fail(&error),
    };
    let written = match &output {
        None => {
            let mut out = std::io::stdout().lock();
            write_html(&report, &mut out)
                .and_then(|()| out.flush())
                .map_err(|error| Failed(format!("writing to stdout: {error}")))
        }
        Some(output) => write_output("--output", output, |out| write_html(&report, out)),
    };
    match written {
        Ok(()) => exit::SUCCESS,
        Err(error) => exit::fail(&error),
    }
}

/// Writes the PTS report of a run of `iopath pts` kept in the history (standard output when
/// `output` is `None`).
fn write_pts(result: &PtsResult, output: Option<&OutputFile>) -> i32 {
    let written = match output {
        None => {
            let mut out = std::io::stdout().lock();
            write_pts_html(result, &mut out)
                .and_then(|()| out.flush())
                .map_err(|error| Failed(format!("writing to stdout: {error}")))
        }
        Some(output) => write_output("--output", output, |out| write_pts_html(result, out)),
    };
    match written {
        Ok(()) => exit::SUCCESS,
        Err(error) => exit::fail(&error),
    }
}
