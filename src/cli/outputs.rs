//! Where a run's results go: every output is checked before any I/O, so a bad path fails in
//! milliseconds; after the run each format is written by its exporter, through a temporary
//! file renamed into place ([`OutputFile`]), so a run that fails leaves every file as it was.

use super::exit::{Failed, Usage};
use super::run_args::{OutputFormat, RunArgs};
use iopath::gate::replace::{OutputFile, check_output_directory};
use iopath::report::csv::write_iometer_csv;
use iopath::report::fio_aggregate_logs::write_aggregate_logs;
use iopath::report::fio_json::write_fio_json;
use iopath::report::fio_logs::write_fio_logs;
use iopath::report::html::write_html;
use iopath::report::json::write_json;
use iopath::report::markdown::write_markdown;
use iopath::report::model::Report;
use iopath::report::text::write_text;
use iopath::result::RunResult;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The outputs of one run.
pub struct Outputs {
    json_file: Option<OutputFile>,
    csv_file: Option<OutputFile>,
    report_file: Option<OutputFile>,
    trace_file: Option<OutputFile>,
    logs_prefix: Option<PathBuf>,
    aggregate_logs: bool,
    stdout_format: StdoutFormat,
    markdown: bool,
}

/// What goes to stdout: the table (and everything readable) or one machine format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StdoutFormat {
    Table,
    RunResultJson,
    FioJson { plus: bool },
}

/// Checks the output file `path` of `flag`; the message names both.
pub fn check_output(flag: &str, path: &Path) -> Result<OutputFile, Usage> {
    OutputFile::check(path).map_err(|error| Usage(format!("{flag} {error}")))
}

/// Writes `output` of `flag` through `fill`; the message names the flag and the file.
pub fn write_output(
    flag: &str,
    output: &OutputFile,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Failed> {
    output
        .write(fill)
        .map_err(|error| Failed(format!("{flag} {error}")))
}

impl Outputs {
    /// Checks every output file the flags name, creating and changing nothing: files are
    /// written only once there is a result. Errors name the flag and the path.
    pub fn open(args: &RunArgs) -> Result<Outputs, Usage> {
        let json_to_stdout = args.json.as_deref() == Some(Path::new("-"));
        let stdout_format = match (json_to_stdout, args.output_format) {
            (true, Some(_)) => {
                return Err(Usage(
                    "--json - and --output-format both want stdout; write the RunResult to a file with --json FILE"
                        .into(),
                ));
            }
            (true, None) => StdoutFormat::RunResultJson,
            (false, Some(OutputFormat::Json)) => StdoutFormat::FioJson { plus: false },
            (false, Some(OutputFormat::JsonPlus)) => StdoutFormat::FioJson { plus: true },
            (false, Some(OutputFormat::Normal)) | (false, None) => StdoutFormat::Table,
        };
        let check = |flag: &str, path: Option<&Path>| path.map(|path| check_output(flag, path));
        let json_file = check(
            "--json",
            args.json.as_deref().filter(|path| *path != Path::new("-")),
        )
        .transpose()?;
        let csv_file = check("--csv", args.csv.as_deref()).transpose()?;
        let report_file = check("--report", args.report.as_deref()).transpose()?;
        let trace_file = check("--trace-io", args.trace_io.as_deref()).transpose()?;
        if let Some(prefix) = &args.write_logs {
            let directory = prefix
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            check_output_directory(directory)
                .map_err(|reason| Usage(format!("--write-logs {}: {reason}", prefix.display())))?;
        }
        Ok(Outputs {
            json_file,
            csv_file,
            report_file,
            trace_file,
            logs_prefix: args.write_logs.clone(),
            aggregate_logs: args.bandwidth_log,
            stdout_format,
            markdown: args.md,
        })
    }

    /// Whether stdout carries a machine format (then every message goes to stderr and there
    /// is no live line).
    pub fn stdout_is_machine_readable(&self) -> bool {
        self.stdout_format != StdoutFormat::Table
    }

    /// The trace file, when `--trace-io` was given.
    pub fn trace_file(&self) -> Option<&OutputFile> {
        self.trace_file.as_ref()
    }

    /// Writes only the `--json` file, if one was asked for: a stopped cluster run puts its
    /// partial result on disk before the analysis, which may take longer than an MPI launcher
    /// waits between its SIGTERM and its SIGKILL. [`Outputs::write`] replaces it afterwards.
    pub fn write_result_file_first(&self, result: &RunResult) -> Result<(), Failed> {
        match &self.json_file {
            Some(file) => write_output("--json", file, |out| write_json(result, out)),
            None => Ok(()),
        }
    }

    /// Writes every output of the analysed `result`, from its report model, built once here.
    /// A file that cannot be written does not keep the others from being written; the
    /// errors, each naming its output, come back together.
    pub fn write(&self, result: &RunResult) -> Result<(), Vec<Failed>> {
        let report = Report::of_run(result);
        let run = report.run();
        let human: &mut dyn Write = if self.stdout_is_machine_readable() {
            &mut std::io::stderr()
        } else {
            &mut std::io::stdout()
        };
        let written = if self.markdown {
            write_markdown(run, human)
        } else {
            write_text(run, human)
        };
        written.map_err(|error| vec![Failed(format!("writing the summary: {error}"))])?;
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        match self.stdout_format {
            StdoutFormat::Table => Ok(()),
            StdoutFormat::RunResultJson => write_json(result, &mut stdout),
            StdoutFormat::FioJson { plus } => write_fio_json(run, plus, &mut stdout),
        }
        .and_then(|()| stdout.flush())
        .map_err(|error| vec![Failed(format!("writing to stdout: {error}"))])?;
        let mut errors = Vec::new();
        if let Some(file) = &self.json_file {
            errors.push(write_output("--json", file, |out| write_json(result, out)));
        }
        if let Some(file) = &self.csv_file {
            errors.push(write_output("--csv", file, |out| {
                write_iometer_csv(run, out)
            }));
        }
        if let Some(file) = &self.report_file {
            errors.push(write_output("--report", file, |out| {
                write_html(&report, out)
            }));
        }
        if let Some(prefix) = &self.logs_prefix {
            let written = write_fio_logs(result, prefix);
            errors.push(
                written
                    .map(drop)
                    .map_err(|error| Failed(format!("--write-logs {error}"))),
            );
        }
        if self.aggregate_logs {
            let written = write_aggregate_logs(result, Path::new("."));
            errors.push(
                written
                    .map(drop)
                    .map_err(|error| Failed(format!("--bandwidth-log {error}"))),
            );
        }
        let errors: Vec<Failed> = errors.into_iter().filter_map(Result::err).collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}
