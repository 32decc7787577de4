//! Where a run's results go: every output is opened (or checked) before any I/O, so a bad path
//! fails in milliseconds; after the run each format is written by its exporter.

use super::run_args::{OutputFormat, RunArgs};
use iopath::report::csv::write_iometer_csv;
use iopath::report::fio_json::write_fio_json;
use iopath::report::fio_logs::write_fio_logs;
use iopath::report::html::write_html;
use iopath::report::json::write_json;
use iopath::report::markdown::write_markdown;
use iopath::report::text::write_text;
use iopath::result::RunResult;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The outputs of one run.
pub struct Outputs {
    json_file: Option<File>,
    csv_file: Option<File>,
    report_file: Option<File>,
    trace_file: Option<File>,
    logs_prefix: Option<PathBuf>,
    stdout_format: StdoutFormat,
    markdown: bool,
    created: Vec<PathBuf>,
}

/// What goes to stdout: the table (and everything readable) or one machine format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StdoutFormat {
    Table,
    RunResultJson,
    FioJson { plus: bool },
}

fn create(flag: &str, path: &Path) -> Result<File, String> {
    File::create(path).map_err(|error| format!("{flag} {}: {error}", path.display()))
}

impl Outputs {
    /// Opens every output file the flags name. Errors name the flag and the path.
    pub fn open(args: &RunArgs) -> Result<Outputs, String> {
        let json_to_stdout = args.json.as_deref() == Some(Path::new("-"));
        let stdout_format = match (json_to_stdout, args.output_format) {
            (true, Some(_)) => {
                return Err(
                    "--json - and --output-format both want stdout; write the RunResult to a file with --json FILE"
                        .into(),
                );
            }
            (true, None) => StdoutFormat::RunResultJson,
            (false, Some(OutputFormat::Json)) => StdoutFormat::FioJson { plus: false },
            (false, Some(OutputFormat::JsonPlus)) => StdoutFormat::FioJson { plus: true },
            (false, Some(OutputFormat::Normal)) | (false, None) => StdoutFormat::Table,
        };
        let json_file = match args.json.as_deref() {
            Some(path) if path != Path::new("-") => Some(create("--json", path)?),
            _ => None,
        };
        let csv_file = args
            .csv
            .as_deref()
            .map(|path| create("--csv", path))
            .transpose()?;
        let report_file = args
            .report
            .as_deref()
            .map(|path| create("--report", path))
            .transpose()?;
        let trace_file = args
            .trace_io
            .as_deref()
            .map(|path| create("--trace-io", path))
            .transpose()?;
        if let Some(prefix) = &args.write_logs {
            let directory = prefix
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !directory.is_dir() {
                return Err(format!(
                    "--write-logs {}: {} is not a directory",
                    prefix.display(),
                    directory.display()
                ));
            }
        }
        let created = [
            args.json.as_deref().filter(|p| *p != Path::new("-")),
            args.csv.as_deref(),
            args.report.as_deref(),
            args.trace_io.as_deref(),
        ]
        .into_iter()
        .flatten()
        .map(Path::to_path_buf)
        .collect();
        Ok(Outputs {
            json_file,
            csv_file,
            report_file,
            trace_file,
            logs_prefix: args.write_logs.clone(),
            stdout_format,
            markdown: args.md,
            created,
        })
    }

    /// Removes the (still empty) output files when the run ends before producing a result.
    pub fn discard(self) {
        for path in &self.created {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Whether stdout carries a machine format (then every message goes to stderr and there
    /// is no live line).
    pub fn stdout_is_machine_readable(&self) -> bool {
        self.stdout_format != StdoutFormat::Table
    }

    /// The trace file, when `--trace-io` was given.
    pub fn trace_file(&mut self) -> Option<&mut File> {
        self.trace_file.as_mut()
    }

    /// Writes every output of `result`; returns the first error, naming the output.
    pub fn write(&mut self, result: &RunResult) -> Result<(), String> {
        let human: &mut dyn Write = if self.stdout_is_machine_readable() {
            &mut std::io::stderr()
        } else {
            &mut std::io::stdout()
        };
        let written = if self.markdown {
            write_markdown(result, human)
        } else {
            write_text(result, human)
        };
        written.map_err(|error| format!("writing the summary: {error}"))?;
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        match self.stdout_format {
            StdoutFormat::Table => Ok(()),
            StdoutFormat::RunResultJson => write_json(result, &mut stdout),
            StdoutFormat::FioJson { plus } => write_fio_json(result, plus, &mut stdout),
        }
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("writing to stdout: {error}"))?;
        if let Some(file) = self.json_file.as_mut() {
            let mut out = std::io::BufWriter::new(file);
            write_json(result, &mut out)
                .and_then(|()| out.flush())
                .map_err(|error| format!("--json: {error}"))?;
        }
        if let Some(file) = self.csv_file.as_mut() {
            let mut out = std::io::BufWriter::new(file);
            write_iometer_csv(result, &mut out)
                .and_then(|()| out.flush())
                .map_err(|error| format!("--csv: {error}"))?;
        }
        if let Some(file) = self.report_file.as_mut() {
            let mut out = std::io::BufWriter::new(file);
            write_html(std::slice::from_ref(result), &mut out)
                .and_then(|()| out.flush())
                .map_err(|error| format!("--report: {error}"))?;
        }
        if let Some(prefix) = &self.logs_prefix {
            write_fio_logs(result, prefix).map_err(|error| format!("--write-logs: {error}"))?;
        }
        Ok(())
    }
}
