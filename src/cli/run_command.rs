//! `iopath run`: flags → plan → checks → run → table and JSON → exit status.

use super::dashboard::Dashboard;
use super::dashboard::state::PlannedTest;
use super::exit::{self, Failed, Usage};
use super::forced_stop::{self, RecordingObserver, Shared};
use super::history_command::{check_history_location, record_run};
use super::live::{DASHBOARD_AFTER_NS, TerminalObserver, on_a_terminal, planned_tests};
use super::messages::for_terminal;
use super::outputs::{Outputs, write_output};
use super::run_args::RunArgs;
use super::server_metrics::{self, MarkedTests};
use super::stale_files::handle_stale_test_files;
use super::team::{Ended, Gathered, Team};
use iopath::analysis::{Analyser, DeclaredPath};
use iopath::engine::StopSignal;
use iopath::host::sys::in_terminal_foreground;
use iopath::metrics::{
    BearerToken, MetricsAddressError, MetricsServer, SharedMetrics, check_exposure,
    parse_metrics_address,
};
use iopath::observe::sampler::LiveScrape;
use iopath::report::fio_job_logs::write_job_logs;
use iopath::result::StopReason;
use iopath::run::confirm::ConfirmMode;
use iopath::run::{ExecutedRun, RunObserver, execute_and_confirm, execute_together, prepare};
use iopath::text::url_password::masked_arguments;
use iopath::workload::Plan;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::mpsc::Receiver;

/// Runs `iopath run` and returns the exit status (every rank of an MPI job runs it; rank 0
/// prints and writes for all).
pub fn run(args: &RunArgs) -> i32 {
    let mut team = match Team::join() {
        Ok(team) => team,
        Err(Ended(status)) => return status,
    };
    let status = run_in(&mut team, args);
    team.end(status);
    status
}

/// Nothing to observe (the ranks of an MPI job other than rank 0).
struct Quiet;

impl RunObserver for Quiet {}

/// What stops a client before any I/O.
type Refusal = Box<dyn exit::Status>;

fn run_in(team: &mut Team, args: &RunArgs) -> i32 {
    let command_line = masked_arguments(std::env::args());
    let request = team
        .localise(args)
        .map_err(|error| Box::new(error) as Refusal)
        .and_then(|args| {
            let request = args
                .to_request(command_line)
                .map_err(|error| Box::new(error) as Refusal)?;
            Ok((args, request))
        });
    // Rank 0's plan is every client's; another client's own problem is told at the check.
    let tests = match &request {
        Ok((_, request)) => Ok(request.plan.tests.clone()),
        Err(error) => Err(error.as_ref()),
    };
    let tests = match team.share_plan(tests) {
        Ok(tests) => tests,
        Err(Ended(status)) => return status,
    };
    let (args, mut request) = match request {
        Ok(found) => found,
        Err(error) => return refused(team, error.as_ref()),
    };
    request.plan.tests = tests;
    if let Some(problem) = targets_missing(&request.plan) {
        return refused(team, &Usage(problem));
    }
    if team.prints() {
        for message in &request.messages {
            eprintln!("{}", for_terminal(message));
        }
    }
    let declared = match DeclaredPath::from_flags(&args.link, &args.path)
        .and_then(|declared| declared.with_shared(&args.shared))
    {
        Ok(declared) => declared,
        Err(error) => return refused(team, &error),
    };
    let outputs = match Outputs::open(&args) {
        Ok(outputs) => outputs,
        Err(error) => return refused(team, &error),
    };
    if !args.no_history
        && let Err(error) = check_history_location()
    {
        return refused(team, &error);
    }
    let machine_stdout = outputs.stdout_is_machine_readable();
    // Only the client that prints (rank 0 of an MPI job) serves metrics, and reads the token
    // file, which the other hosts need not have; a refusal there ends every client.
    let endpoint = if team.prints() {
        metrics_endpoint(&args)
    } else {
        Ok(None)
    };
    let metrics_address = match endpoint {
        Ok(address) => address,
        Err(error) => return refused(team, &error),
    };
    // Only the client that prints reads the servers' counters; their URLs and credentials
    // are checked here, before any I/O.
    let server_sources = if team.prints() {
        server_metrics::sources(&args)
    } else {
        Ok(Vec::new())
    };
    let server_sources = match server_sources {
        Ok(sources) => sources,
        Err(error) => return refused(team, &error),
    };
    let planned = planned_tests(&request.plan.tests);
    let shared = Shared::new(outputs);
    // From here on a signal stops the run, whatever it is doing.
    let stop = match forced_stop::install(shared.clone(), declared.clone()) {
        Ok(stop) => stop,
        Err(error) => {
            return refused(
                team,
                &Failed(format!("cannot install the Ctrl-C handler: {error}")),
            );
        }
    };
    if team.is_cluster()
        && let Err(error) = iopath::run::interrupt::stop_on_continue(&stop)
    {
        return refused(
            team,
            &Failed(format!("cannot install the SIGCONT handler: {error}")),
        );
    }
    // A run from several clients tests no verdict unasked: its experiments would run from one.
    if team.is_cluster()
        && matches!(
            request.options.confirm,
            ConfirmMode::FallbackWithinTestTime { .. }
        )
    {
        request.options.confirm = ConfirmMode::Off;
    }
    let confirms = request.options.confirm.is_on();
    if confirms && team.is_cluster() {
        return refused(
            team,
            &Usage(
                "--confirm runs from one client only; leave it out of a multi-client run".into(),
            ),
        );
    }
    // Each server is scraped once now (one that cannot be is bad input), then once a second
    // until the run ends.
    let sampler = match server_metrics::start(&server_sources) {
        Ok(sampler) => sampler,
        Err(error) => return refused(team, &error),
    };
    let prepared = match prepare(request.plan, request.options, request.is_default_suite) {
        Ok(prepared) => prepared,
        Err(error) => return refused(team, &error),
    };
    // The merges a job file asks for are written (by the client that prints) once everything
    // was checked, before any I/O.
    if team.prints()
        && let Err(error) = write_merged_captures(&request.merged_captures)
    {
        return refused(team, &error);
    }
    // Listening starts before any I/O, on the client that prints (rank 0 of an MPI job): an
    // address that cannot be used is bad input.
    let metrics = match metrics_address {
        Some((address, token)) => {
            let figures = SharedMetrics::default();
            figures.lock().tests_planned = planned.len();
            match MetricsServer::start(address, token, figures.clone()) {
                Ok(server) => Some((server, figures)),
                Err(error) => return refused(team, &error),
            }
        }
        None => None,
    };
    if let Err(Ended(status)) = team.agree_ready(None) {
        return status;
    }
    if team.prints() {
        for warning in prepared.warnings() {
            eprintln!("warning: {}", for_terminal(warning));
        }
        for (path, _, _) in prepared.files_not_created() {
            eprintln!(
                "note: the null engine does no I/O: no test file is created at {}",
                for_terminal(path.display())
            );
        }
        if let Some((server, _)) = &metrics {
            let token = if args.metrics_token_file.is_some() {
                " (requests need the bearer token of --metrics-token-file)"
            } else {
                ""
            };
            eprintln!("metrics on http://{}/metrics{token}", server.address());
        }
    }
    handle_stale_test_files(&prepared, args.remove_stale);
    let mut recording = team.prints().then(|| {
        RecordingObserver::new(
            terminal_observer(
                &args,
                machine_stdout,
                planned,
                &stop,
                sampler
                    .as_ref()
                    .map(|sampler| sampler.watch(SCRAPES_QUEUED)),
            ),
            shared.clone(),
            metrics.as_ref().map(|(_, figures)| figures.clone()),
            declared.clone(),
        )
    });
    let mut quiet = Quiet;
    let observer: &mut dyn RunObserver = match recording.as_mut() {
        Some(recording) => recording,
        None => &mut quiet,
    };
    // Each result is analysed once: a client's own by the run that measured it (before its
    // confirming experiments, which read that analysis), a merged run once merged.
    // The servers' scrapes are cut into the tests' series when the tests have ended, before
    // that analysis (MarkedTests::tests_ended).
    let analyser = Analyser::this_host(declared.clone());
    let mut marked = MarkedTests::new(observer, sampler);
    let executed = if confirms {
        execute_and_confirm(prepared, &stop, &mut marked, &analyser)
    } else {
        execute_together(prepared, &stop, &mut marked, team.rendezvous(), &analyser)
    };
    drop(marked);
    // The terminal is given back before anything else is printed.
    if let Some(recording) = recording.as_mut() {
        recording.close();
    }
    drop(metrics);
    // Every client's own figures were analysed against its own path, for the verdict across
    // the clients; rank 0 analyses the merged run below.
    let mut executed = match team.gather(executed, stop.is_raised(), args.per_rank_series) {
        Ok(Gathered::Report(executed)) => *executed,
        Ok(Gathered::Exit(status)) | Err(Ended(status)) => return status,
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
    // Named first: under an MPI launcher's SIGTERM the process may not live past the analysis.
    let lost = team.lost(&executed);
    for line in &lost {
        eprintln!("error: {}", for_terminal(line));
    }
    if team.is_cluster() {
        if stop.is_raised()
            && let Err(error) = outputs.write_result_file_first(&executed.result)
        {
            eprintln!("error: {}", for_terminal(&error));
        }
        analyser.analyse(&mut executed.result);
    }
    let result = &executed.result;
    let mut written = outputs.write(result);
    if let Err(error) = write_requested_logs(&executed) {
        written = Err(written.err().into_iter().flatten().chain([error]).collect());
    }
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
             run past twice the time its tests took; run again with --confirm to confirm \
             every verdict",
            executed.confirmations_left_out
        );
    }
    if let Some(failure) = &executed.failure {
        return exit::fail_after_io(failure);
    }
    if !lost.is_empty() {
        return exit::RUN_FAILED;
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

/// Scrapes held for the dashboard when it falls behind (more are left out of it).
const SCRAPES_QUEUED: usize = 64;

/// The live display: the dashboard when asked for (`--live`) or, unasked, on a terminal for a
/// run planned to take [`DASHBOARD_AFTER_NS`] or more; the plain line otherwise. `scrapes`
/// brings the servers' counters to the dashboard (dropped, so that none are sent, without one).
fn terminal_observer(
    args: &RunArgs,
    machine_stdout: bool,
    planned: Vec<PlannedTest>,
    stop: &StopSignal,
    scrapes: Option<Receiver<LiveScrape>>,
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
    match Dashboard::open(planned, stop.clone(), scrapes) {
        Ok(dashboard) => TerminalObserver::with_dashboard(dashboard),
        Err(error) => {
            eprintln!(
                "note: the dashboard cannot use this terminal ({error}): showing the progress line"
            );
            TerminalObserver::new(machine_stdout)
        }
    }
}

/// This client cannot run (`error`): alone, it is printed; in an MPI job every client hears of
/// it at the check before any I/O, and rank 0 prints it with this client's rank and host.
/// `--metrics` and `--metrics-token-file`: where to listen and the token a request needs,
/// checked before any I/O (an address beyond loopback needs a token).
fn metrics_endpoint(
    args: &RunArgs,
) -> Result<Option<(SocketAddr, Option<BearerToken>)>, MetricsAddressError> {
    let Some(text) = args.metrics.as_deref() else {
        return Ok(None);
    };
    let address = parse_metrics_address(text)?;
    let token = args
        .metrics_token_file
        .as_deref()
        .map(BearerToken::from_file)
        .transpose()?;
    check_exposure(address, token.as_ref())?;
    Ok(Some((address, token)))
}

fn refused(team: &mut Team, error: &dyn exit::Status) -> i32 {
    match team.agree_ready(Some(error)) {
        Err(Ended(status)) => status,
        // Cannot happen: a failure is never agreed to.
        Ok(()) => error.status(),
    }
}

/// Whether the plan names targets this client does not have (rank 0's plan against fewer
/// targets of its own).
fn targets_missing(plan: &Plan) -> Option<String> {
    let needed = plan
        .tests
        .iter()
        .flat_map(|test| test.jobs.iter().flat_map(|job| job.targets.iter()))
        .max()
        .map_or(0, |index| index + 1);
    (needed > plan.targets.len()).then(|| {
        format!(
            "the plan of rank 0 uses {needed} targets; this client has {} (give every client as many)",
            plan.targets.len()
        )
    })
}

/// What to say after a stop request, by how far the run got.
fn interruption_note(tests: usize, partial: bool) -> String {
    match (tests, partial) {
        (0, _) => "interrupted before any test ran".to_string(),
        (_, true) => format!("interrupted: {tests} test(s) kept, marked partial"),
        (_, false) => "interrupted after the last test had finished".to_string(),
    }
}

/// Writes the merges of blktrace captures (`merge_blktrace_file`) where no file is.
fn write_merged_captures(
    merged: &[iopath::input::merged_capture::MergedCapture],
) -> Result<(), Failed> {
    for capture in merged {
        iopath::input::merged_capture::write_merged(capture).map_err(|error| {
            Failed(format!(
                "merge_blktrace_file: {}: {error}",
                for_terminal(capture.path.display())
            ))
        })?;
    }
    Ok(())
}

/// Writes the log files the job files ask for (`write_bw_log`, …), after `--write-logs`
/// (a job's own log wins where both name one file); warns when the logs' room ran out.
fn write_requested_logs(executed: &ExecutedRun) -> Result<(), Failed> {
    let written = write_job_logs(&executed.result, &executed.io_logs)
        .map_err(|error| Failed(format!("write_*_log: {error}")))?;
    iopath::report::fio_iolog::write_iologs(&executed.result, &executed.io_logs)
        .map_err(|error| Failed(format!("write_iolog: {error}")))?;
    if written.overflow_ios > 0 {
        eprintln!(
            "warning: {} completed I/Os are missing from the log files: the memory reserved for them was full (set log_avg_msec for long runs)",
            written.overflow_ios
        );
    }
    Ok(())
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
