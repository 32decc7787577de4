//! `iopath run`: flags → plan → checks → run → table and JSON → exit status.

use super::dashboard::Dashboard;
use super::dashboard::state::PlannedTest;
use super::exit::{self, Failed};
use super::forced_stop::{self, RecordingObserver, Shared};
use super::history_command::record_run;
use super::live::{DASHBOARD_AFTER_NS, TerminalObserver, on_a_terminal, planned_tests};
use super::messages::for_terminal;
use super::outputs::{Outputs, write_output};
use super::run_args::RunArgs;
use super::stale_files::handle_stale_test_files;
use iopath::analysis::{DeclaredPath, analyse};
use iopath::engine::StopSignal;
use iopath::host::sys::in_terminal_foreground;
use iopath::metrics::{MetricsServer, SharedMetrics, parse_metrics_address};
use iopath::result::StopReason;
use iopath::run::{ExecutedRun, execute, execute_and_confirm, prepare};
use std::io::Write;

/// Runs `iopath run` and returns the exit status.
pub fn run(args: &RunArgs) -> i32 {
    let command_line: Vec<String> = std::env::args().collect();
    let request = match args.to_request(command_line) {
        Ok(request) => request,
        Err(error) => return exit::fail(&error),
    };
    for message in &request.messages {
        eprintln!("{}", for_terminal(message));
    }
    let declared = match DeclaredPath::from_flags(&args.link, &args.path)
        .and_then(|declared| declared.with_shared(&args.shared))
    {
        Ok(declared) => declared,
        Err(error) => return exit::fail(&error),
    };
    let outputs = match Outputs::open(args) {
        Ok(outputs) => outputs,
        Err(error) => return exit::fail(&error),
    };
    let machine_stdout = outputs.stdout_is_machine_readable();
    let metrics_address = match args
        .metrics
        .as_deref()
        .map(parse_metrics_address)
        .transpose()
    {
        Ok(address) => address,
        Err(error) => return exit::fail(&error),
    };
    let planned = planned_tests(&request.plan.tests);
    let shared = Shared::new(outputs);
    // From here on a signal stops the run, whatever it is doing.
    let stop = match forced_stop::install(shared.clone(), declared.clone()) {
        Ok(stop) => stop,
        Err(error) => {
            return exit::fail(&Failed(format!(
                "cannot install the Ctrl-C handler: {error}"
            )));
        }
    };
    let confirms = request.options.confirm.is_on();
    let prepared = match prepare(request.plan, request.options, request.is_default_suite) {
        Ok(prepared) => prepared,
        Err(error) => return exit::fail(&error),
    };
    for warning in prepared.warnings() {
        eprintln!("warning: {}", for_terminal(warning));
    }
    for (path, _, _) in prepared.files_not_created() {
        eprintln!(
            "note: the null engine does no I/O: no test file is created at {}",
            for_terminal(path.display())
        );
    }
    handle_stale_test_files(&prepared, args.remove_stale);
    // Listening starts before any I/O: an address that cannot be used is bad input.
    let metrics = match metrics_address {
        Some(address) => {
            let figures = SharedMetrics::default();
            figures.lock().tests_planned = planned.len();
            match MetricsServer::start(address, figures.clone()) {
                Ok(server) => {
                    eprintln!("metrics on http://{}/metrics", server.address());
                    Some((server, figures))
                }
                Err(error) => return exit::fail(&error),
            }
        }
        None => None,
    };
    let terminal = terminal_observer(args, machine_stdout, planned, &stop);
    let mut observer = RecordingObserver::new(
        terminal,
        shared.clone(),
        metrics.as_ref().map(|(_, figures)| figures.clone()),
        declared.clone(),
    );
    let executed = if confirms {
        execute_and_confirm(prepared, &stop, &mut observer, &declared)
    } else {
        execute(prepared, &stop, &mut observer)
    };
    // The terminal is given back before anything else is printed.
    observer.close();
    drop(metrics);
    let mut executed = match executed {
        Ok(executed) => executed,
        Err(error) => return exit::fail(&error),
    };
    // Held until the outputs are written: a second signal now waits for them.
    let mut so_far = shared.lock();
    let Some(outputs) = so_far.outputs.take() else {
        // A second signal is writing them and ends the process.
        return exit::INTERRUPTED;
    };
    if let Some(file) = outputs.trace_file()
        && let Err(error) = write_output("--trace-io", file, |out| write_trace(&executed, out))
    {
        eprintln!("error: {}", for_terminal(&error));
    }
    analyse(&mut executed.result, &declared);
    let result = &executed.result;
    let written = outputs.write(result);
    drop(so_far);
    if !args.no_history {
        record_run(result);
    }
    if let Err(errors) = written {
        return errors
            .iter()
            .map(|error| exit::fail(error))
            .max()
            .unwrap_or(exit::RUN_FAILED);
    }
    if executed.confirmations_left_out > 0 {
        let tested = result
            .tests
            .iter()
            .filter(|test| {
                test.analysis
                    .as_ref()
                    .is_some_and(|a| a.confirmation.is_some())
            })
            .count();
        eprintln!(
            "note: {} of {tested} verdicts not confirmed: their experiments would take the \
             default suite past twice the time its tests took; run again with --confirm to \
             confirm every verdict",
            executed.confirmations_left_out
        );
    }
    if let Some(failure) = &executed.failure {
        return exit::fail_after_io(failure);
    }
    let interrupted = executed.interrupted || stop.is_raised();
    if interrupted {
        eprintln!("{}", interruption_note(result.tests.len(), result.partial));
    }
    let stopped_by = |reason| result.tests.iter().any(|t| t.stop_reason == reason);
    if interrupted
        || stopped_by(StopReason::Interrupted)
        || (result.partial && !stopped_by(StopReason::Error))
    {
        exit::INTERRUPTED
    } else if stopped_by(StopReason::Error) || bad_blocks(result) {
        exit::RUN_FAILED
    } else {
        exit::SUCCESS
    }
}

/// Whether verification found a bad block in any test.
fn bad_blocks(result: &iopath::result::RunResult) -> bool {
    result.tests.iter().any(|test| {
        test.verification
            .as_ref()
            .is_some_and(|found| found.mismatch_count > 0)
    })
}

/// The live display: the dashboard when asked for (`--live`) or, unasked, on a terminal for a
/// run planned to take [`DASHBOARD_AFTER_NS`] or more; the plain line otherwise.
fn terminal_observer(
    args: &RunArgs,
    machine_stdout: bool,
    planned: Vec<PlannedTest>,
    stop: &StopSignal,
) -> TerminalObserver {
    let planned_ns: u64 = planned.iter().filter_map(|test| test.planned_ns).sum();
    let wanted = args.live || (!args.no_live && planned_ns >= DASHBOARD_AFTER_NS);
    if !wanted {
        return TerminalObserver::new(machine_stdout);
    }
    if machine_stdout || !on_a_terminal() {
        if args.live {
            eprintln!(
                "note: --live needs stdout and stderr on a terminal (and no JSON on stdout): \
                 showing no dashboard"
            );
        }
        return TerminalObserver::new(machine_stdout);
    }
    if !in_terminal_foreground() {
        if args.live {
            eprintln!(
                "note: --live: iopath runs in the background of its terminal: showing no dashboard"
            );
        }
        return TerminalObserver::new(machine_stdout);
    }
    match Dashboard::open(planned, stop.clone()) {
        Ok(dashboard) => TerminalObserver::with_dashboard(dashboard),
        Err(error) => {
            eprintln!(
                "note: the dashboard cannot use this terminal ({error}): showing the progress line"
            );
            TerminalObserver::new(machine_stdout)
        }
    }
}

/// What to say after a stop request, by how far the run got.
fn interruption_note(tests: usize, partial: bool) -> String {
    match (tests, partial) {
        (0, _) => "interrupted before any test ran".to_string(),
        (_, true) => format!("interrupted: {tests} test(s) kept, marked partial"),
        (_, false) => "interrupted after the last test had finished".to_string(),
    }
}

fn write_trace(executed: &ExecutedRun, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "test,worker,direction,offset,length,target,in_flight")?;
    for (test_index, workers) in executed.traces.iter().enumerate() {
        for (worker_index, ios) in workers.iter().enumerate() {
            for io in ios {
                let direction = io.direction.name();
                writeln!(
                    out,
                    "{test_index},{worker_index},{direction},{},{},{},{}",
                    io.offset, io.length, io.target, io.in_flight
                )?;
            }
        }
    }
    Ok(())
}
