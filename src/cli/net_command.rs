//! `iopath net`: raw TCP throughput between two hosts, like iperf3, saved as a RunResult so it
//! can sit beside storage results. `--listen` serves tests; otherwise runs one against a server.

use super::exit;
use clap::{Args, ValueEnum};
use iopath::net::client::{ClientConfig, LinkRun, TestDirection, run_client};
use iopath::net::server::{NetServer, SessionSummary};
use iopath::net::{DEFAULT_PORT, NetError, parse_endpoint};
use iopath::report::json::write_json;
use iopath::report::link::write_link_text;
use iopath::run::interrupt;
use iopath::units::parse_duration_ns;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Which way to move bytes, from the client's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DirectionArg {
    /// Client to server.
    Send,
    /// Server to client.
    Receive,
    /// Both at once, on separate connections.
    Both,
}

/// Flags of `iopath net`.
#[derive(Debug, Args)]
#[command(after_help = "\
Bytes are counted by the receiver: TCP payload, without headers. MB/s = 10^6 B/s and
Gbit/s = 10^9 bit/s, as link rates are quoted (a 1 Gbit/s Ethernet link carries about 117-119 MB/s
of TCP payload at MTU 1500).

Examples:
  iopath net --listen 0.0.0.0                 serve tests on port 5280 until stopped
  iopath net 192.0.2.10 --duration 10s        send to that server for 10 s
  iopath net 192.0.2.10:5280 --streams 4 --direction both --json link.json

Exit status: 0 done, 1 the connection or the test failed, 2 bad input, 130 interrupted.")]
pub struct NetArgs {
    /// The server to test against, ADDR[:PORT] (port 5280 when absent).
    #[arg(
        value_name = "ADDR[:PORT]",
        required_unless_present = "listen",
        conflicts_with = "listen"
    )]
    pub server: Option<String>,
    /// Serve tests on ADDR[:PORT] instead of running one (0.0.0.0: every address).
    #[arg(long, value_name = "ADDR[:PORT]")]
    pub listen: Option<String>,
    /// With --listen: exit after the first test session.
    #[arg(long, requires = "listen")]
    pub once: bool,
    /// TCP connections per direction.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "listen")]
    pub streams: u32,
    /// Length of the measured window (5, 500ms, 2m).
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = duration_arg, conflicts_with = "listen")]
    pub duration: u64,
    /// Which way the bytes go, seen from this client.
    #[arg(long, value_enum, default_value = "send", conflicts_with = "listen")]
    pub direction: DirectionArg,
    /// Write the RunResult as JSON to FILE ('-': stdout, every message on stderr).
    #[arg(long, value_name = "FILE", conflicts_with = "listen")]
    pub json: Option<PathBuf>,
    /// Label of this run in comparisons.
    #[arg(long, value_name = "TEXT", conflicts_with = "listen")]
    pub label: Option<String>,
}

fn duration_arg(text: &str) -> Result<u64, String> {
    let ns = parse_duration_ns(text).map_err(|error| error.to_string())?;
    if ns == 0 {
        return Err("must be above 0".to_string());
    }
    Ok(ns)
}

/// Runs `iopath net` and returns the exit status.
pub fn run(args: &NetArgs) -> i32 {
    match (&args.listen, &args.server) {
        (Some(listen), _) => serve(listen, args.once),
        (None, Some(server)) => client(server, args),
        (None, None) => {
            eprintln!("error: give a server ADDR[:PORT], or --listen ADDR[:PORT]");
            exit::BAD_INPUT
        }
    }
}

fn error_status(error: &NetError) -> i32 {
    eprintln!("error: {error}");
    if error.is_bad_input() {
        exit::BAD_INPUT
    } else {
        exit::RUN_FAILED
    }
}

fn serve(listen: &str, once: bool) -> i32 {
    let address = match parse_endpoint(listen, DEFAULT_PORT) {
        Ok(address) => address,
        Err(error) => return error_status(&error),
    };
    let server = match NetServer::bind(address) {
        Ok(server) => server,
        Err(error) => return error_status(&error),
    };
    let stop = match interrupt::install() {
        Ok(stop) => stop,
        Err(error) => {
            eprintln!("error: cannot install the Ctrl-C handler: {error}");
            return exit::RUN_FAILED;
        }
    };
    println!("listening on {}", server.local_addr());
    let _ = std::io::stdout().flush();
    let mut show = |session: &SessionSummary| {
        println!("{}", describe_session(session));
        let _ = std::io::stdout().flush();
    };
    match server.serve(once, &stop, &mut show) {
        Ok(_) if stop.load(Ordering::Relaxed) => exit::INTERRUPTED,
        Ok(outcome) if once && outcome.failed > 0 => exit::RUN_FAILED,
        Ok(_) => exit::SUCCESS,
        Err(error) => error_status(&error),
    }
}

fn describe_session(session: &SessionSummary) -> String {
    let direction = match (session.client_sends, session.server_sends) {
        (true, true) => "both",
        (true, false) => "send",
        (false, true) => "receive",
        (false, false) => "-",
    };
    let mut line = format!(
        "session from {}: {direction}, {} stream(s)",
        session.client, session.streams
    );
    if let Some((bytes, measured_ns)) = session.received
        && measured_ns > 0
    {
        let per_second = bytes as f64 * 1e9 / measured_ns as f64;
        line.push_str(&format!(
            ", received {:.1} MB/s ({:.3} Gbit/s) over {:.2} s",
            per_second / 1e6,
            per_second * 8.0 / 1e9,
            measured_ns as f64 / 1e9
        ));
    }
    if let Some(error) = &session.error {
        line.push_str(&format!(": failed: {error}"));
    }
    line
}

fn client(server: &str, args: &NetArgs) -> i32 {
    let address = match parse_endpoint(server, DEFAULT_PORT) {
        Ok(address) => address,
        Err(error) => return error_status(&error),
    };
    let config = ClientConfig {
        streams: args.streams,
        duration_ns: args.duration,
        direction: match args.direction {
            DirectionArg::Send => TestDirection::Send,
            DirectionArg::Receive => TestDirection::Receive,
            DirectionArg::Both => TestDirection::Both,
        },
        ..ClientConfig::new(address)
    };
    if let Err(error) = config.validate() {
        return error_status(&error);
    }
    let json_on_stdout = args.json.as_deref() == Some(Path::new("-"));
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
    let stop = match interrupt::install() {
        Ok(stop) => stop,
        Err(error) => {
            eprintln!("error: cannot install the Ctrl-C handler: {error}");
            return exit::RUN_FAILED;
        }
    };
    eprintln!(
        "link test to {address}: {}, {} stream(s), {:.1} s",
        match args.direction {
            DirectionArg::Send => "send",
            DirectionArg::Receive => "receive",
            DirectionArg::Both => "both directions",
        },
        config.streams,
        config.duration_ns as f64 / 1e9
    );
    let mut show_interval = |direction: iopath::result::LinkDirection,
                             point: &iopath::result::IntervalPoint| {
        let end_s = (point.start_ns + point.duration_ns) as f64 / 1e9;
        let per_second = if point.duration_ns == 0 {
            0.0
        } else {
            point.bytes as f64 * 1e9 / point.duration_ns as f64
        };
        eprintln!(
            "  {end_s:6.2} s  {direction:<7}  {:9.1} MB/s  {:7.3} Gbit/s",
            per_second / 1e6,
            per_second * 8.0 / 1e9
        );
    };
    let run: LinkRun = match run_client(&config, &stop, &mut show_interval) {
        Ok(run) => run,
        Err(error) => return error_status(&error),
    };
    let interrupted = run.interrupted;
    let result = run.into_run_result(std::env::args().collect(), args.label.clone());
    let table_written = if json_on_stdout {
        write_link_text(&result.link_tests, &mut std::io::stderr())
    } else {
        write_link_text(&result.link_tests, &mut std::io::stdout())
    };
    if let Err(error) = table_written {
        eprintln!("error: writing the table: {error}");
    }
    let json_written = if json_on_stdout {
        write_json(&result, &mut std::io::stdout().lock())
    } else if let Some(file) = json_file.as_mut() {
        write_json(&result, file)
    } else {
        Ok(())
    };
    if let Err(error) = json_written {
        eprintln!("error: writing the JSON result: {error}");
        return exit::RUN_FAILED;
    }
    if interrupted {
        exit::INTERRUPTED
    } else {
        exit::SUCCESS
    }
}
