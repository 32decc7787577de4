//! The client side of a link test: asks a server for a test, opens the data connections, runs
//! its own senders and receivers, and gathers both ends' counts into
//! [`LinkTestResult`]s, one per direction.
//!
//! With a [`Secret`], the client proves it to the server and opens no data connection until the
//! server has proved it back; a server that does not ask for the secret is not trusted. Text
//! the server sends (refusals, errors) is escaped before it reaches an error or a warning, and
//! every count it sends is checked against the test's parameters.

use super::auth::{Nonce, client_proof, verify_server};
use super::deadline::DeadlineStream;
use super::protocol::{
    CONTROL_MAGIC, ControlMessage, DataHeader, MAX_INTERVALS, MIN_INTERVAL_NS, PROTOCOL_VERSION,
    StreamRole, parameter_bytes, read_in_background, read_message, write_message,
};
use super::secret::Secret;
use super::text::escape;
use super::transfer::{CpuWindow, DataPlane, PlaneOutcome, Window, WindowSampler};
use super::{NetError, SETUP_TIMEOUT};
use crate::result::{
    CpuResult, IntervalPoint, LinkDirection, LinkTestResult, RunResult, SCHEMA_VERSION,
};
use std::io::{BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Which way a test moves bytes, as seen from the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestDirection {
    /// Client to server.
    Send,
    /// Server to client.
    Receive,
    /// Both at once, each direction on its own connections.
    Both,
}

impl TestDirection {
    fn client_sends(self) -> bool {
        matches!(self, TestDirection::Send | TestDirection::Both)
    }

    fn server_sends(self) -> bool {
        matches!(self, TestDirection::Receive | TestDirection::Both)
    }
}

/// What the client asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// The server.
    pub server: SocketAddr,
    /// Data connections per direction (1 to [`MAX_STREAMS`](super::protocol::MAX_STREAMS)).
    pub streams: u32,
    /// Length of the measured window, ns.
    pub duration_ns: u64,
    /// Which way.
    pub direction: TestDirection,
    /// Length of one interval of the series, ns.
    pub interval_ns: u64,
    /// The shared secret of the server (none: the server must not ask for one).
    pub secret: Option<Secret>,
}

impl ClientConfig {
    /// One stream, 10 s, client to server, one-second intervals, no secret.
    pub fn new(server: SocketAddr) -> Self {
        ClientConfig {
            server,
            streams: 1,
            duration_ns: 10_000_000_000,
            direction: TestDirection::Send,
            interval_ns: 1_000_000_000,
            secret: None,
        }
    }

    fn parameter_bytes(&self) -> [u8; 22] {
        parameter_bytes(
            self.streams,
            self.duration_ns,
            self.interval_ns,
            self.direction.client_sends(),
            self.direction.server_sends(),
        )
    }

    /// Most intervals the server may report: the window's, plus one for an early stop.
    fn max_intervals(&self) -> usize {
        self.duration_ns.div_ceil(self.interval_ns) as usize + 1
    }

    /// Checks the ranges before anything is sent.
    pub fn validate(&self) -> Result<(), NetError> {
        use super::protocol::{MAX_DURATION_NS, MAX_STREAMS};
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return Err(NetError::Input(format!(
                "--streams {}: must be from 1 to {MAX_STREAMS}",
                self.streams
            )));
        }
        if self.duration_ns == 0 || self.duration_ns > MAX_DURATION_NS {
            return Err(NetError::Input(
                "--duration must be above 0 and at most 1 hour".to_string(),
            ));
        }
        if self.interval_ns < MIN_INTERVAL_NS || self.duration_ns / self.interval_ns > MAX_INTERVALS
        {
            return Err(NetError::Input(format!(
                "the series interval must be at least 10 ms, and at most {MAX_INTERVALS} in \
                 a test"
            )));
        }
        Ok(())
    }
}

/// What a client run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkRun {
    /// When the test started, RFC 3339 UTC.
    pub started_at: String,
    /// One result per direction measured (send first).
    pub tests: Vec<LinkTestResult>,
    /// The run was stopped early (the results cover the time until then).
    pub interrupted: bool,
}

impl LinkRun {
    /// The run as a [`RunResult`]: no storage tests, no targets, its link tests.
    pub fn into_run_result(self, command_line: Vec<String>, label: Option<String>) -> RunResult {
        let mut warnings = Vec::new();
        if self.interrupted {
            warnings
                .push("stopped before the end: the figures cover the time until then".to_string());
        }
        RunResult {
            schema_version: SCHEMA_VERSION,
            iopath_version: env!("CARGO_PKG_VERSION").to_string(),
            command_line,
            started_at: self.started_at,
            label,
            partial: self.interrupted,
            host: crate::discovery::resources::describe(&crate::discovery::HostView::live()),
            targets: Vec::new(),
            tests: Vec::new(),
            warnings,
            link_tests: self.tests,
            paths: Vec::new(),
            cluster: None,
        }
    }
}

/// The server's count of what the client sent.
struct ServerCount {
    measured_ns: u64,
    bytes: u64,
    stream_bytes: Vec<u64>,
    errors: Vec<String>,
}

/// Runs one test against `config.server`. `stop` ends it early (Ctrl-C); `on_interval` sees
/// every closed interval of either direction as it arrives.
pub fn run_client(
    config: &ClientConfig,
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(LinkDirection, &IntervalPoint),
) -> Result<LinkRun, NetError> {
    config.validate()?;
    let started_at = crate::host::time::now_rfc3339();
    let address = config.server;
    let io = |context: &'static str| NetError::io(address, context);
    let protocol = |message: String| NetError::Protocol { address, message };

    let mut control = TcpStream::connect_timeout(&address, SETUP_TIMEOUT)
        .map_err(|source| NetError::Connect { address, source })?;
    control
        .set_nodelay(true)
        .map_err(io("control connection"))?;
    control
        .set_write_timeout(Some(SETUP_TIMEOUT))
        .map_err(io("control connection"))?;
    let reading = control.try_clone().map_err(io("control connection"))?;
    let deadline = Instant::now() + SETUP_TIMEOUT;
    let mut reader = BufReader::new(DeadlineStream::new(reading, Some(deadline), None));
    control
        .write_all(&CONTROL_MAGIC)
        .map_err(io("greeting the server"))?;
    let session = handshake(config, &mut control, &mut reader)?;

    let mut send_streams = Vec::new();
    let mut receive_streams = Vec::new();
    for (role, wanted, streams) in [
        (
            StreamRole::ClientSends,
            config.direction.client_sends(),
            &mut send_streams,
        ),
        (
            StreamRole::ServerSends,
            config.direction.server_sends(),
            &mut receive_streams,
        ),
    ] {
        if !wanted {
            continue;
        }
        for stream in 0..config.streams {
            let mut data = TcpStream::connect_timeout(&address, SETUP_TIMEOUT)
                .map_err(|source| NetError::Connect { address, source })?;
            data.set_write_timeout(Some(SETUP_TIMEOUT))
                .map_err(io("opening a data connection"))?;
            let header = DataHeader {
                session,
                stream,
                role,
            };
            data.write_all(&header.encode())
                .map_err(io("opening a data connection"))?;
            streams.push(data);
        }
    }
    // The server waits up to SETUP_TIMEOUT for the data connections, then answers.
    reader.get_mut().set_deadline(Some(
        Instant::now() + SETUP_TIMEOUT + Duration::from_secs(2),
    ));
    match read_message(&mut reader).map_err(io("waiting for the data connections"))? {
        Some(ControlMessage::Ready) => {}
        Some(ControlMessage::Refused { reason } | ControlMessage::Abort { reason }) => {
            return Err(NetError::Refused {
                address,
                reason: escape(&reason),
            });
        }
        Some(other) => return Err(protocol(unexpected(&other))),
        None => return Err(protocol("closed the connection before the test".into())),
    }

    reader.get_mut().set_deadline(None);
    let (messages, control_reader) =
        read_in_background(reader).map_err(io("starting the control thread"))?;

    // Senders stop by themselves well after the window should have ended.
    let hard_deadline = Instant::now() + Duration::from_nanos(config.duration_ns) + SETUP_TIMEOUT;
    let plane = DataPlane::start(send_streams, receive_streams, hard_deadline, SETUP_TIMEOUT)
        .map_err(io("starting the data threads"))?;
    let cpu_window = CpuWindow::open();
    write_message(&mut control, &ControlMessage::Start).map_err(io("starting the test"))?;
    let started = Instant::now();

    let measured = measure(
        config,
        &plane,
        &messages,
        started,
        stop,
        &mut control,
        on_interval,
    );
    plane.end_window();
    let mut cpu = cpu_window.close();
    let _ = write_message(&mut control, &ControlMessage::Stop);
    let plane_outcome = plane.finish(Duration::from_secs(2));
    let _ = control.shutdown(Shutdown::Both);
    let _ = control_reader.join();
    let measured = measured?;
    cpu.busiest_thread_ns = plane_outcome.busiest_thread_ns;
    Ok(LinkRun {
        started_at,
        tests: results(
            config,
            measured.sent,
            measured.received,
            cpu,
            &plane_outcome,
        ),
        interrupted: measured.interrupted,
    })
}

/// "unexpected 'NAME' message", naming only the type of what the server sent.
fn unexpected(message: &ControlMessage) -> String {
    format!("unexpected '{}' message", message.name())
}

/// The control handshake: the server's challenge, the parameters with the client's proof, and
/// the server's answer with its own proof. Returns the session number.
fn handshake(
    config: &ClientConfig,
    control: &mut TcpStream,
    reader: &mut BufReader<DeadlineStream>,
) -> Result<u64, NetError> {
    let address = config.server;
    let io = |context: &'static str| NetError::io(address, context);
    let protocol = |message: String| NetError::Protocol { address, message };
    let authentication = |message: &str| NetError::Authentication {
        address,
        message: message.to_string(),
    };
    let (server_nonce, secret_required) =
        match read_message(reader).map_err(io("waiting for the server"))? {
            Some(ControlMessage::Challenge {
                version,
                nonce,
                secret_required,
            }) => {
                if version != PROTOCOL_VERSION {
                    return Err(protocol(format!(
                        "the server speaks protocol version {version}, this client \
                         {PROTOCOL_VERSION}: use the same iopath version on both ends"
                    )));
                }
                let nonce = Nonce::from_hex(&nonce)
                    .ok_or_else(|| protocol("malformed server nonce".to_string()))?;
                (nonce, secret_required)
            }
            Some(ControlMessage::Refused { reason }) => {
                return Err(NetError::Refused {
                    address,
                    reason: escape(&reason),
                });
            }
            Some(other) => return Err(protocol(unexpected(&other))),
            None => {
                return Err(protocol(
                    "closed the connection without an answer (not an iopath net server of \
                     this version?)"
                        .into(),
                ));
            }
        };
    if config.secret.is_some() && !secret_required {
        return Err(authentication(
            "a secret was given but the server does not ask for one, so it cannot prove it \
             is the server you meant; nothing was sent (give no secret for a server run \
             without one)",
        ));
    }
    let client_nonce = Nonce::random().map_err(io("random source"))?;
    let parameters = config.parameter_bytes();
    let proof = config
        .secret
        .as_ref()
        .map(|secret| client_proof(secret, &server_nonce, &client_nonce, &parameters));
    let hello = ControlMessage::Hello {
        version: PROTOCOL_VERSION,
        streams: config.streams,
        duration_ns: config.duration_ns,
        interval_ns: config.interval_ns,
        client_sends: config.direction.client_sends(),
        server_sends: config.direction.server_sends(),
        nonce: client_nonce.to_hex(),
        proof,
    };
    write_message(control, &hello).map_err(io("sending the test parameters"))?;
    let (session, proof) = match read_message(reader).map_err(io("waiting for the server"))? {
        Some(ControlMessage::Welcome { session, proof }) => (session, proof),
        Some(ControlMessage::Refused { reason }) => {
            return Err(NetError::Refused {
                address,
                reason: escape(&reason),
            });
        }
        Some(other) => return Err(protocol(unexpected(&other))),
        None => return Err(protocol("closed the connection without an answer".into())),
    };
    if let Some(secret) = &config.secret {
        let proved = proof.is_some_and(|proof| {
            verify_server(
                secret,
                &server_nonce,
                &client_nonce,
                &parameters,
                session,
                &proof,
            )
        });
        if !proved {
            return Err(authentication(
                "the server could not prove it knows the secret: it is not the server you \
                 meant; nothing was sent",
            ));
        }
    }
    Ok(session)
}

struct Measured {
    /// The server's count of the send direction (when the client sent).
    sent: Option<(ServerCount, Vec<IntervalPoint>)>,
    /// The client's own window of the receive direction, and its per-stream bytes.
    received: Option<(Window, Vec<u64>)>,
    interrupted: bool,
}

/// Drives the windows: samples the client's own receivers, collects the server's intervals
/// and final count, and ends early on `stop`.
fn measure(
    config: &ClientConfig,
    plane: &DataPlane,
    messages: &Receiver<std::io::Result<Option<ControlMessage>>>,
    started: Instant,
    stop: &AtomicBool,
    control: &mut TcpStream,
    on_interval: &mut dyn FnMut(LinkDirection, &IntervalPoint),
) -> Result<Measured, NetError> {
    let address = config.server;
    let protocol = |message: String| NetError::Protocol { address, message };
    let mut own = config
        .direction
        .server_sends()
        .then(|| WindowSampler::new(config.duration_ns, config.interval_ns));
    let mut own_stream_bytes = Vec::new();
    let mut server_points = Vec::new();
    let mut server_count: Option<ServerCount> = None;
    let mut interrupted = false;
    let mut give_up = started + Duration::from_nanos(config.duration_ns) + SETUP_TIMEOUT;
    loop {
        let elapsed_ns = started.elapsed().as_nanos() as u64;
        if !interrupted && stop.load(Ordering::Relaxed) {
            interrupted = true;
            if let Some(window) = own.as_mut().filter(|w| !w.is_closed()) {
                let point = window.sample(elapsed_ns, plane.received_bytes(), true);
                own_stream_bytes = plane.stream_bytes();
                on_interval(LinkDirection::Receive, &point);
            }
            // The server closes its window early on Stop and still reports it.
            let _ = write_message(control, &ControlMessage::Stop);
            give_up = give_up.min(Instant::now() + Duration::from_secs(5));
        }
        if let Some(window) = own.as_mut().filter(|w| !w.is_closed())
            && elapsed_ns >= window.next_due_ns()
        {
            let total = plane.received_bytes();
            let point = window.sample(elapsed_ns, total, false);
            if window.is_closed() {
                own_stream_bytes = plane.stream_bytes();
            }
            on_interval(LinkDirection::Receive, &point);
            continue;
        }
        let own_done = own.as_ref().is_none_or(WindowSampler::is_closed);
        let server_done = !config.direction.client_sends() || server_count.is_some();
        if own_done && server_done {
            break;
        }
        let now = Instant::now();
        if now >= give_up {
            return Err(protocol(
                "the server did not report its count in time".to_string(),
            ));
        }
        let mut wait = Duration::from_millis(50);
        if let Some(window) = own.as_ref().filter(|w| !w.is_closed()) {
            let due = Duration::from_nanos(window.next_due_ns().saturating_sub(elapsed_ns));
            wait = wait.min(due);
        }
        match messages.recv_timeout(wait) {
            Ok(Ok(Some(ControlMessage::Interval { .. }))) if !config.direction.client_sends() => {
                return Err(protocol(
                    "the server reported intervals of a direction it does not receive".into(),
                ));
            }
            Ok(Ok(Some(ControlMessage::Interval { .. })))
                if server_points.len() >= config.max_intervals() =>
            {
                return Err(protocol(format!(
                    "the server reported more than the {} intervals of the test",
                    config.max_intervals()
                )));
            }
            Ok(Ok(Some(ControlMessage::Interval {
                start_ns,
                duration_ns,
                bytes,
                ..
            }))) => {
                let point = IntervalPoint {
                    start_ns,
                    duration_ns,
                    bytes,
                    io_count: 0,
                    mean_latency_ns: 0,
                    p99_latency_ns: 0,
                    latency_buckets: Vec::new(),
                };
                on_interval(LinkDirection::Send, &point);
                server_points.push(point);
            }
            Ok(Ok(Some(ControlMessage::Finished {
                measured_ns,
                bytes,
                stream_bytes,
                errors,
            }))) => {
                if stream_bytes.len() != config.streams as usize
                    || errors.len() > config.streams as usize
                {
                    return Err(protocol(format!(
                        "the server counted {} streams with {} errors, for a test of {} \
                         streams",
                        stream_bytes.len(),
                        errors.len(),
                        config.streams
                    )));
                }
                server_count = Some(ServerCount {
                    measured_ns,
                    bytes,
                    stream_bytes,
                    errors: errors.iter().map(|error| escape(error)).collect(),
                });
            }
            Ok(Ok(Some(ControlMessage::Refused { reason }))) => {
                return Err(NetError::Refused {
                    address,
                    reason: escape(&reason),
                });
            }
            Ok(Ok(Some(ControlMessage::Abort { reason }))) => {
                return Err(protocol(format!(
                    "the server ended the test: {}",
                    escape(&reason)
                )));
            }
            Ok(Ok(Some(other))) => {
                return Err(protocol(unexpected(&other)));
            }
            Ok(Ok(None)) | Err(RecvTimeoutError::Disconnected) => {
                return Err(protocol(
                    "the server closed the control connection during the test".to_string(),
                ));
            }
            Ok(Err(error)) => {
                return Err(NetError::Io {
                    address,
                    context: "control connection",
                    source: error,
                });
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
    Ok(Measured {
        sent: server_count.map(|count| (count, server_points)),
        received: own.map(|window| (window.window(), own_stream_bytes)),
        interrupted,
    })
}

fn idle_stream_warnings(stream_bytes: &[u64]) -> Vec<String> {
    stream_bytes
        .iter()
        .enumerate()
        .filter(|(_, bytes)| **bytes == 0)
        .map(|(index, _)| format!("stream {index} moved no bytes"))
        .collect()
}

fn results(
    config: &ClientConfig,
    sent: Option<(ServerCount, Vec<IntervalPoint>)>,
    received: Option<(Window, Vec<u64>)>,
    cpu: CpuResult,
    plane: &PlaneOutcome,
) -> Vec<LinkTestResult> {
    let result = |direction: LinkDirection,
                  measured_ns: u64,
                  bytes: u64,
                  series: Vec<IntervalPoint>,
                  mut warnings: Vec<String>| {
        if measured_ns < 1_000_000_000 {
            warnings.push(format!(
                "measured for only {:.2} s: too short for a steady TCP rate",
                measured_ns as f64 / 1e9
            ));
        }
        LinkTestResult {
            name: format!("net {direction}"),
            peer: config.server.to_string(),
            direction,
            streams: config.streams,
            measured_ns,
            bytes,
            bytes_per_second: if measured_ns == 0 {
                0.0
            } else {
                bytes as f64 * 1e9 / measured_ns as f64
            },
            series,
            cpu: cpu.clone(),
            warnings,
        }
    };
    let mut tests = Vec::new();
    if let Some((count, series)) = sent {
        let mut warnings = idle_stream_warnings(&count.stream_bytes);
        warnings.extend(plane.sender_errors.iter().map(|e| format!("client {e}")));
        warnings.extend(count.errors.iter().map(|e| format!("server {e}")));
        tests.push(result(
            LinkDirection::Send,
            count.measured_ns,
            count.bytes,
            series,
            warnings,
        ));
    }
    if let Some((window, stream_bytes)) = received {
        let mut warnings = idle_stream_warnings(&stream_bytes);
        warnings.extend(plane.receiver_errors.iter().map(|e| format!("client {e}")));
        tests.push(result(
            LinkDirection::Receive,
            window.measured_ns,
            window.bytes,
            window.series,
            warnings,
        ));
    }
    tests
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_durations_are_checked() {
        let address: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let mut config = ClientConfig::new(address);
        assert!(config.validate().is_ok());
        config.streams = 0;
        assert!(config.validate().unwrap_err().is_bad_input());
        config.streams = 1;
        config.duration_ns = 0;
        assert!(config.validate().unwrap_err().is_bad_input());
    }

    #[test]
    fn a_closed_port_names_the_address() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let config = ClientConfig::new(address);
        let error = run_client(&config, &AtomicBool::new(false), &mut |_, _| {}).unwrap_err();
        assert!(matches!(error, NetError::Connect { .. }), "{error}");
        assert!(error.to_string().contains(&address.to_string()), "{error}");
    }
}
