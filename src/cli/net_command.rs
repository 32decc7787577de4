//! `iopath net`: raw TCP throughput between two hosts, like iperf3, saved as a RunResult so it
//! can sit beside storage results. `--listen` serves tests; otherwise runs one against a server.
//! Both ends take the shared secret from `--secret-file` or `IOPATH_NET_SECRET`.

use super::exit::{self, Failed, Usage};
use super::outputs::{check_output, write_output};
use clap::{Args, ValueEnum};
use iopath::net::client::{ClientConfig, LinkRun, TestDirection, run_client};
use iopath::net::secret::{SECRET_ENV, Secret};
use iopath::net::server::{NetServer, ServerConfig, ServerEvent, ServerLimits, SessionSummary};
use iopath::net::{DEFAULT_PORT, NetError, parse_endpoint};
use iopath::report::json::write_json;
use iopath::report::link::write_link_text;
use iopath::text::url_password::masked_arguments;
use iopath::units::parse_duration_ns;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

Shared secret: give both ends the same secret with --secret-file FILE (a regular file of 16 to
4096 bytes that only its owner can read: chmod 600) or in IOPATH_NET_SECRET. Each end proves it
knows the secret (HMAC-SHA256 over fresh nonces and the test's parameters) without sending it;
a client with a secret refuses a server that does not prove it back. Without a secret the server
listens only on loopback, unless --insecure-any-address.

The server gives each connection 5 s in all to say what it is and what test it wants, handles
up to 64 such connections at once and 8 from one address (more from it are closed at once; when
all 64 are taken, the oldest of the busiest address is cut, so a peer without the secret cannot
keep a client out), runs at most --max-sessions tests at once, and ends a test whose stream
moves no byte for --stall-timeout (a client that never reads).

Examples:
  head -c 32 /dev/urandom | base64 > net.key && chmod 600 net.key
  iopath net --listen --secret-file net.key   serve tests on every address, port 5280
  iopath net 192.0.2.10 --secret-file net.key --duration 10s
  iopath net --listen                         serve tests on 127.0.0.1:5280 only (no secret)
  iopath net 127.0.0.1 --streams 4 --direction both --json link.json

Exit status: 0 done, 1 the connection or the test failed (refused, wrong secret), 2 bad input,
130 interrupted.")]
pub struct NetArgs {
    /// The server to test against, ADDR[:PORT] (port 5280 when absent).
    #[arg(
        value_name = "ADDR[:PORT]",
        required_unless_present = "listen",
        conflicts_with = "listen"
    )]
    pub server: Option<String>,
    /// Serve tests on [ADDR][:PORT] instead of running one. Without ADDR: every address
    /// (0.0.0.0) with a secret, 127.0.0.1 without; without PORT: 5280.
    #[arg(long, value_name = "[ADDR][:PORT]", num_args = 0..=1, default_missing_value = "")]
    pub listen: Option<String>,
    /// With --listen: exit after the first accepted test.
    #[arg(long, requires = "listen")]
    pub once: bool,
    /// Read the shared secret from FILE (owner-only permissions; overrides IOPATH_NET_SECRET).
    #[arg(long, value_name = "FILE")]
    pub secret_file: Option<PathBuf>,
    /// With --listen: allow an address other than loopback without a secret. Anyone who can
    /// reach it can then make this host send and receive at full speed.
    #[arg(long, requires = "listen")]
    pub insecure_any_address: bool,
    /// With --listen: most TCP connections per direction a test may ask for.
    #[arg(long, value_name = "N", default_value_t = 16, requires = "listen")]
    pub max_streams: u32,
    /// With --listen: longest test a client may ask for.
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = duration_arg, requires = "listen")]
    pub max_duration: u64,
    /// With --listen: most tests running at once (tests at once share the link).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "listen")]
    pub max_sessions: u32,
    /// With --listen: end a test when one of its streams moves no byte for this long (a
    /// client that never reads); raise it for very slow, lossy links.
    #[arg(long, value_name = "TIME", default_value = "5s", value_parser = duration_arg, requires = "listen")]
    pub stall_timeout: u64,
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

fn duration_arg(text: &str) -> Result<u64, Usage> {
    let ns = parse_duration_ns(text).map_err(|error| Usage(error.to_string()))?;
    if ns == 0 {
        return Err(Usage("must be above 0".to_string()));
    }
    Ok(ns)
}

/// Runs `iopath net` and returns the exit status.
pub fn run(args: &NetArgs) -> i32 {
    let secret = match secret(args) {
        Ok(secret) => secret,
        Err(error) => return exit::fail(&error),
    };
    match (&args.listen, &args.server) {
        (Some(listen), _) => serve(listen, secret, args),
        (None, Some(server)) => client(server, secret, args),
        (None, None) => exit::fail(&Usage(
            "give a server ADDR[:PORT], or --listen [ADDR][:PORT]".into(),
        )),
    }
}

/// The secret of `--secret-file`, else of `IOPATH_NET_SECRET`, else none.
fn secret(args: &NetArgs) -> Result<Option<Secret>, Usage> {
    if let Some(path) = &args.secret_file {
        return Secret::from_file(path)
            .map(Some)
            .map_err(|error| Usage(format!("--secret-file {error}")));
    }
    match std::env::var_os(SECRET_ENV) {
        Some(value) => Secret::from_bytes(value.as_bytes(), SECRET_ENV)
            .map(Some)
            .map_err(|error| Usage(error.to_string())),
        None => Ok(None),
    }
}

/// `--listen [ADDR][:PORT]`: without ADDR every address when there is a secret, loopback when
/// there is none.
fn listen_address(text: &str, has_secret: bool) -> Result<SocketAddr, NetError> {
    let host = if has_secret {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    };
    let text = text.trim();
    if text.is_empty() {
        return Ok(SocketAddr::new(host, DEFAULT_PORT));
    }
    if let Some(port) = text.strip_prefix(':') {
        let port = port.parse::<u16>().map_err(|_| NetError::BadAddress {
            input: text.to_string(),
            reason: "the port must be a number from 0 to 65535".to_string(),
        })?;
        return Ok(SocketAddr::new(host, port));
    }
    parse_endpoint(text, DEFAULT_PORT)
}

fn serve(listen: &str, secret: Option<Secret>, args: &NetArgs) -> i32 {
    let address = match listen_address(listen, secret.is_some()) {
        Ok(address) => address,
        Err(error) => return exit::fail(&error),
    };
    let limits = ServerLimits {
        max_streams: args.max_streams,
        max_duration_ns: args.max_duration,
        max_sessions: args.max_sessions,
        stall_timeout: Duration::from_nanos(args.stall_timeout),
        ..ServerLimits::default()
    };
    let authenticated = secret.is_some();
    let config = ServerConfig {
        secret,
        limits,
        any_address_without_secret: args.insecure_any_address,
    };
    let server = match NetServer::bind(address, config) {
        Ok(server) => server,
        Err(error) => return exit::fail(&error),
    };
    let stop = match super::forced_stop::install_plain() {
        Ok(stop) => stop,
        Err(error) => {
            return exit::fail(&Failed(format!(
                "cannot install the Ctrl-C handler: {error}"
            )));
        }
    };
    println!("listening on {}", server.local_addr());
    let who = if authenticated {
        "clients must prove the shared secret"
    } else if server.local_addr().ip().to_canonical().is_loopback() {
        "no secret: any program on this host can run tests"
    } else {
        "no secret (--insecure-any-address): anyone who reaches this address can run tests"
    };
    println!(
        "{who}; a test may use up to {} stream(s) per direction for up to {:.1} s; {} test(s) \
         at once",
        limits.max_streams,
        limits.max_duration_ns as f64 / 1e9,
        limits.max_sessions
    );
    let _ = std::io::stdout().flush();
    let mut show = |event: &ServerEvent| {
        println!("{}", describe_event(event));
        let _ = std::io::stdout().flush();
    };
    match server.serve(args.once, stop.flag(), &mut show) {
        Ok(_) if stop.is_raised() => exit::INTERRUPTED,
        Ok(outcome) if args.once && outcome.failed > 0 => exit::RUN_FAILED,
        Ok(_) => exit::SUCCESS,
        Err(error) => exit::fail(&error),
    }
}

/// One line of the server's log (peer text in events is escaped by the library).
fn describe_event(event: &ServerEvent) -> String {
    match event {
        ServerEvent::Session(session) => describe_session(session),
        ServerEvent::Refused { client, reason } => format!("refused {client}: {reason}"),
        ServerEvent::Suppressed { refusals } => {
            format!("{refusals} more refusal(s) in the last 10 s, not shown one by one")
        }
        ServerEvent::Dropped {
            per_address,
            cut,
            full,
            limits: (max_handshakes, max_per_address),
        } => {
            let mut parts = Vec::new();
            if *per_address > 0 {
                parts.push(format!(
                    "closed {per_address} connection(s) at once: their address already had \
                     {max_per_address} handshakes under way"
                ));
            }
            if *cut > 0 {
                parts.push(format!(
                    "cut {cut} handshake(s), the oldest of the busiest address, to make room: \
                     all {max_handshakes} places were taken"
                ));
            }
            if *full > 0 {
                parts.push(format!(
                    "closed {full} connection(s) at once: all {max_handshakes} places were \
                     taken by accepted tests' data connections"
                ));
            }
            format!("in the last 10 s: {}", parts.join("; "))
        }
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

fn client(server: &str, secret: Option<Secret>, args: &NetArgs) -> i32 {
    let address = match parse_endpoint(server, DEFAULT_PORT) {
        Ok(address) => address,
        Err(error) => return exit::fail(&error),
    };
    let config = ClientConfig {
        streams: args.streams,
        duration_ns: args.duration,
        direction: match args.direction {
            DirectionArg::Send => TestDirection::Send,
            DirectionArg::Receive => TestDirection::Receive,
            DirectionArg::Both => TestDirection::Both,
        },
        secret,
        ..ClientConfig::new(address)
    };
    if let Err(error) = config.validate() {
        return exit::fail(&error);
    }
    let json_on_stdout = args.json.as_deref() == Some(Path::new("-"));
    let json_file = match args.json.as_deref() {
        Some(path) if path != Path::new("-") => match check_output("--json", path) {
            Ok(file) => Some(file),
            Err(error) => return exit::fail(&error),
        },
        _ => None,
    };
    let stop = match super::forced_stop::install_plain() {
        Ok(stop) => stop,
        Err(error) => {
            return exit::fail(&Failed(format!(
                "cannot install the Ctrl-C handler: {error}"
            )));
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
        let end_s = point.start_ns.saturating_add(point.duration_ns) as f64 / 1e9;
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
    let run: LinkRun = match run_client(&config, stop.flag(), &mut show_interval) {
        Ok(run) => run,
        Err(error) => return exit::fail(&error),
    };
    let interrupted = run.interrupted;
    let result = run.into_run_result(masked_arguments(std::env::args()), args.label.clone());
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
            .map_err(|error| Failed(format!("writing the JSON result: {error}")))
    } else if let Some(file) = &json_file {
        write_output("--json", file, |out| write_json(&result, out))
    } else {
        Ok(())
    };
    if let Err(error) = json_written {
        return exit::fail(&error);
    }
    if interrupted {
        exit::INTERRUPTED
    } else {
        exit::SUCCESS
    }
}
