//! `iopath run`: flags → plan → checks → run → table and JSON → exit status.

use super::exit;
use super::live::TerminalObserver;
use super::run_args::RunArgs;
use iopath::report::json::write_json;
use iopath::report::result::StopReason;
use iopath::report::text::write_text;
use iopath::run::{ExecutedRun, execute, interrupt, prepare};
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Runs `iopath run` and returns the exit status.
pub fn run(args: &RunArgs) -> i32 {
    let command_line: Vec<String> = std::env::args().collect();
    let request = match args.to_request(command_line) {
        Ok(request) => request,
        Err(message) => {
            eprintln!("error: {message}");
            return exit::BAD_INPUT;
        }
    };
    for message in &request.messages {
        eprintln!("{message}");
    }
    let json_on_stdout = args.json.as_deref() == Some(Path::new("-"));
    // Open the JSON file first: a bad path fails before any I/O.
    let mut json_file = match args.json.as_deref() {
        Some(path) if path != Path::new("-") => match File::create(path) {
            Ok(file) => Some(file),
            Err(error) => {
                eprintln!("error: --json {}: {error}", path.display());
                return exit::BAD_INPUT;
            }
        },
        _ => None,
    };
    let mut trace_file = match args.trace_io.as_deref() {
        Some(path) => match File::create(path) {
            Ok(file) => Some(file),
            Err(error) => {
                eprintln!("error: --trace-io {}: {error}", path.display());
                return exit::BAD_INPUT;
            }
        },
        None => None,
    };
    let prepared = match prepare(request.plan, request.options, request.is_default_suite) {
        Ok(prepared) => prepared,
        Err(error) => {
            eprintln!("error: {error}");
            return if error.is_bad_input() {
                exit::BAD_INPUT
            } else {
                exit::RUN_FAILED
            };
        }
    };
    for warning in prepared.warnings() {
        eprintln!("warning: {warning}");
    }
    let stop = match interrupt::install() {
        Ok(stop) => stop,
        Err(error) => {
            eprintln!("error: cannot install the Ctrl-C handler: {error}");
            return exit::RUN_FAILED;
        }
    };
    let mut observer = TerminalObserver::new(json_on_stdout);
    let executed = match execute(prepared, &stop, &mut observer) {
        Ok(executed) => executed,
        Err(error) => {
            eprintln!("error: {error}");
            return if error.is_bad_input() {
                exit::BAD_INPUT
            } else {
                exit::RUN_FAILED
            };
        }
    };
    if let Some(file) = trace_file.as_mut()
        && let Err(error) = write_trace(&executed, file)
    {
        eprintln!("error: --trace-io: {error}");
    }
    let result = &executed.result;
    let table_written = if json_on_stdout {
        write_text(result, &mut std::io::stderr())
    } else {
        write_text(result, &mut std::io::stdout())
    };
    if let Err(error) = table_written {
        eprintln!("error: writing the table: {error}");
    }
    let json_written = if json_on_stdout {
        write_json(result, &mut std::io::stdout().lock())
    } else if let Some(file) = json_file.as_mut() {
        write_json(result, file)
    } else {
        Ok(())
    };
    if let Err(error) = json_written {
        eprintln!("error: writing the JSON result: {error}");
        return exit::RUN_FAILED;
    }
    if let Some(failure) = &executed.failure {
        eprintln!("error: {failure}");
        return exit::RUN_FAILED;
    }
    let stopped_by = |reason| result.tests.iter().any(|t| t.stop_reason == reason);
    if stopped_by(StopReason::Interrupted) || (result.partial && !stopped_by(StopReason::Error)) {
        exit::INTERRUPTED
    } else if stopped_by(StopReason::Error) {
        exit::RUN_FAILED
    } else {
        exit::SUCCESS
    }
}

fn write_trace(executed: &ExecutedRun, file: &mut File) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(file);
    writeln!(out, "test,worker,direction,offset,length")?;
    for (test_index, workers) in executed.traces.iter().enumerate() {
        for (worker_index, ios) in workers.iter().enumerate() {
            for io in ios {
                let direction = match io.direction {
                    iopath::engine::Direction::Read => "read",
                    iopath::engine::Direction::Write => "write",
                };
                writeln!(
                    out,
                    "{test_index},{worker_index},{direction},{},{}",
                    io.offset, io.length
                )?;
            }
        }
    }
    out.flush()
}
