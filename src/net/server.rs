//! The server side of a link test: listens, serves one test session at a time (a client that
//! comes while one runs is told the server is busy), and counts what its clients send.

use super::protocol::{
    ConnectionKind, ControlMessage, DATA_HEADER_BYTES, DataHeader, MAX_DURATION_NS, MAX_STREAMS,
    PROTOCOL_VERSION, StreamRole, read_magic, read_message, write_message,
};
use super::transfer::{DataPlane, WindowSampler};
use super::{NetError, SETUP_TIMEOUT};
use std::io::{BufReader, Read};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How often an idle server looks for connections and for its stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(20);
/// How long a new connection may take to say what it is.
const MAGIC_TIMEOUT: Duration = Duration::from_secs(2);

/// A listening `iopath net` server.
pub struct NetServer {
    listener: TcpListener,
    address: SocketAddr,
}

/// What one session was, for the server's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSummary {
    /// The client.
    pub client: SocketAddr,
    /// Data connections per direction (0 when the session failed before the parameters).
    pub streams: u32,
    /// The client sent.
    pub client_sends: bool,
    /// The server sent.
    pub server_sends: bool,
    /// Bytes the server received in its window and the window's length, ns (when it
    /// received).
    pub received: Option<(u64, u64)>,
    /// Why the session failed, if it did.
    pub error: Option<String>,
}

/// Sessions served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeOutcome {
    /// Sessions that got as far as their parameters.
    pub sessions: u64,
    /// Of those, the ones that failed.
    pub failed: u64,
}

/// A session's parameters.
#[derive(Clone, Copy, Debug)]
struct Parameters {
    streams: u32,
    duration_ns: u64,
    interval_ns: u64,
    client_sends: bool,
    server_sends: bool,
}

fn parameters(message: ControlMessage) -> Result<Parameters, String> {
    let ControlMessage::Hello {
        version,
        streams,
        duration_ns,
        interval_ns,
        client_sends,
        server_sends,
    } = message
    else {
        return Err(format!("expected the test parameters, got {message:?}"));
    };
    if version != PROTOCOL_VERSION {
        return Err(format!(
            "protocol version {version}, this server speaks version {PROTOCOL_VERSION}"
        ));
    }
    if streams == 0 || streams > MAX_STREAMS {
        return Err(format!(
            "{streams} streams: must be from 1 to {MAX_STREAMS}"
        ));
    }
    if duration_ns == 0 || duration_ns > MAX_DURATION_NS {
        return Err("the duration must be above 0 and at most 1 hour".to_string());
    }
    if interval_ns < 10_000_000 {
        return Err("the interval must be at least 10 ms".to_string());
    }
    if !client_sends && !server_sends {
        return Err("no direction to test".to_string());
    }
    Ok(Parameters {
        streams,
        duration_ns,
        interval_ns,
        client_sends,
        server_sends,
    })
}

impl NetServer {
    /// Listens on `address` (port 0: any free port, see [`NetServer::local_addr`]).
    pub fn bind(address: SocketAddr) -> Result<NetServer, NetError> {
        let listen_error = |source| NetError::Listen { address, source };
        let listener = TcpListener::bind(address).map_err(listen_error)?;
        listener.set_nonblocking(true).map_err(listen_error)?;
        let address = listener.local_addr().map_err(listen_error)?;
        Ok(NetServer { listener, address })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Serves sessions until `stop` is set, or after the first one when `once`. Each session
    /// that ends is shown to `on_session`; a failed session does not stop the server.
    pub fn serve(
        &self,
        once: bool,
        stop: &AtomicBool,
        on_session: &mut dyn FnMut(&SessionSummary),
    ) -> Result<ServeOutcome, NetError> {
        let mut outcome = ServeOutcome::default();
        while !stop.load(Ordering::Relaxed) {
            let (connection, client) = match self.listener.accept() {
                Ok(accepted) => accepted,
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(ACCEPT_POLL);
                    continue;
                }
                Err(error) if is_transient_accept_error(&error) => continue,
                Err(source) => {
                    return Err(NetError::Listen {
                        address: self.address,
                        source,
                    });
                }
            };
            let Some(mut connection) = opened(connection, ConnectionKind::Control) else {
                // Not a control connection: a data connection of no session, or a stranger.
                continue;
            };
            let mut summary = SessionSummary {
                client,
                streams: 0,
                client_sends: false,
                server_sends: false,
                received: None,
                error: None,
            };
            if let Err(error) = self.session(&mut connection, stop, &mut summary) {
                summary.error = Some(error);
            }
            let _ = connection.shutdown(Shutdown::Both);
            if summary.streams == 0 && summary.error.is_some() && !once {
                // Nothing was agreed: not a session worth counting (a scanner, a bad client).
                on_session(&summary);
                continue;
            }
            outcome.sessions += 1;
            if summary.error.is_some() {
                outcome.failed += 1;
            }
            on_session(&summary);
            if once {
                break;
            }
        }
        Ok(outcome)
    }

    /// One session on an opened control connection.
    fn session(
        &self,
        control: &mut TcpStream,
        stop: &AtomicBool,
        summary: &mut SessionSummary,
    ) -> Result<(), String> {
        let io = |context: &str| {
            let context = context.to_string();
            move |error: std::io::Error| format!("{context}: {error}")
        };
        control
            .set_nodelay(true)
            .map_err(io("control connection"))?;
        control
            .set_read_timeout(Some(SETUP_TIMEOUT))
            .map_err(io("control connection"))?;
        let mut reader = BufReader::new(control.try_clone().map_err(io("control connection"))?);
        let hello = read_message(&mut reader)
            .map_err(io("reading the test parameters"))?
            .ok_or("the client closed the connection before its parameters")?;
        let parameters = match parameters(hello) {
            Ok(parameters) => parameters,
            Err(reason) => {
                let _ = write_message(
                    control,
                    &ControlMessage::Refused {
                        reason: reason.clone(),
                    },
                );
                return Err(format!("refused: {reason}"));
            }
        };
        summary.streams = parameters.streams;
        summary.client_sends = parameters.client_sends;
        summary.server_sends = parameters.server_sends;
        let session = fastrand::u64(1..);
        write_message(control, &ControlMessage::Welcome { session })
            .map_err(io("answering the client"))?;

        let (receive, send) = self.gather(session, parameters, stop)?;
        write_message(control, &ControlMessage::Ready).map_err(io("answering the client"))?;
        match read_message(&mut reader).map_err(io("waiting for the start"))? {
            Some(ControlMessage::Start) => {}
            Some(other) => return Err(format!("expected the start, got {other:?}")),
            None => return Err("the client left before the start".to_string()),
        }
        let started = Instant::now();
        control
            .set_read_timeout(None)
            .map_err(io("control connection"))?;
        let (sender, messages) = channel();
        let control_reader = std::thread::Builder::new()
            .name("net-control".into())
            .spawn(move || {
                loop {
                    let message = read_message(&mut reader);
                    let end = !matches!(message, Ok(Some(_)));
                    if sender.send(message).is_err() || end {
                        break;
                    }
                }
            })
            .map_err(io("starting the control thread"))?;
        let duration = Duration::from_nanos(parameters.duration_ns);
        let plane = DataPlane::start(send, receive, started + duration + SETUP_TIMEOUT)
            .map_err(io("starting the data threads"))?;

        let mut window = parameters
            .client_sends
            .then(|| WindowSampler::new(parameters.duration_ns, parameters.interval_ns));
        let mut finished = false;
        let give_up = started + duration + SETUP_TIMEOUT + Duration::from_secs(5);
        let mut failure = None;
        loop {
            self.refuse_waiting();
            if stop.load(Ordering::Relaxed) {
                failure = Some("the server was stopped".to_string());
                break;
            }
            let elapsed_ns = started.elapsed().as_nanos() as u64;
            if let Some(sampler) = window.as_mut().filter(|w| !w.is_closed())
                && elapsed_ns >= sampler.next_due_ns()
            {
                let point = sampler.sample(elapsed_ns, plane.received_bytes(), false);
                let closed = sampler.is_closed();
                let sent = self.report_interval(control, sampler, &point, &plane, closed);
                finished |= closed;
                if let Err(error) = sent {
                    failure = Some(format!("reporting to the client: {error}"));
                    break;
                }
                continue;
            }
            if Instant::now() >= give_up {
                failure = Some("the client did not end the test in time".to_string());
                break;
            }
            let mut wait = Duration::from_millis(50);
            if let Some(sampler) = window.as_ref().filter(|w| !w.is_closed()) {
                wait = wait.min(Duration::from_nanos(
                    sampler.next_due_ns().saturating_sub(elapsed_ns),
                ));
            }
            match messages.recv_timeout(wait) {
                Ok(Ok(Some(ControlMessage::Stop))) => {
                    if let Some(sampler) = window.as_mut().filter(|w| !w.is_closed()) {
                        // Stopped early: close the window now and still report it.
                        let elapsed_ns = started.elapsed().as_nanos() as u64;
                        let point = sampler.sample(elapsed_ns, plane.received_bytes(), true);
                        let _ = self.report_interval(control, sampler, &point, &plane, true);
                        finished = true;
                    }
                    break;
                }
                Ok(Ok(Some(other))) => {
                    failure = Some(format!("unexpected message {other:?}"));
                    break;
                }
                Ok(Ok(None)) | Err(RecvTimeoutError::Disconnected) => {
                    failure = Some("the client left during the test".to_string());
                    break;
                }
                Ok(Err(error)) => {
                    failure = Some(format!("control connection: {error}"));
                    break;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        plane.end_window();
        let outcome = plane.finish(Duration::from_secs(2));
        let _ = control.shutdown(Shutdown::Both);
        let _ = control_reader.join();
        if let Some(sampler) = window.as_ref().filter(|_| finished) {
            let measured = sampler.window();
            summary.received = Some((measured.bytes, measured.measured_ns));
        }
        if failure.is_none()
            && let Some(error) = outcome.sender_errors.first()
        {
            failure = Some(format!("sending: {error}"));
        }
        failure.map_or(Ok(()), Err)
    }

    /// Sends one interval, and the final count when `closed`.
    fn report_interval(
        &self,
        control: &mut TcpStream,
        sampler: &WindowSampler,
        point: &crate::result::IntervalPoint,
        plane: &DataPlane,
        closed: bool,
    ) -> std::io::Result<()> {
        let index = sampler.interval_count().saturating_sub(1) as u64;
        write_message(
            control,
            &ControlMessage::Interval {
                index,
                start_ns: point.start_ns,
                duration_ns: point.duration_ns,
                bytes: point.bytes,
            },
        )?;
        if closed {
            plane.end_window();
            let measured = sampler.window();
            write_message(
                control,
                &ControlMessage::Finished {
                    measured_ns: measured.measured_ns,
                    bytes: measured.bytes,
                    stream_bytes: plane.stream_bytes(),
                    errors: Vec::new(),
                },
            )?;
        }
        Ok(())
    }

    /// Accepts the data connections of `session`: (client-sends, server-sends) streams, each
    /// in stream order.
    fn gather(
        &self,
        session: u64,
        parameters: Parameters,
        stop: &AtomicBool,
    ) -> Result<(Vec<TcpStream>, Vec<TcpStream>), String> {
        let wanted = |yes: bool| if yes { parameters.streams as usize } else { 0 };
        let mut receive: Vec<Option<TcpStream>> =
            (0..wanted(parameters.client_sends)).map(|_| None).collect();
        let mut send: Vec<Option<TcpStream>> =
            (0..wanted(parameters.server_sends)).map(|_| None).collect();
        let deadline = Instant::now() + SETUP_TIMEOUT;
        let missing = |receive: &[Option<TcpStream>], send: &[Option<TcpStream>]| {
            receive.iter().chain(send).filter(|s| s.is_none()).count()
        };
        while missing(&receive, &send) > 0 {
            if stop.load(Ordering::Relaxed) {
                return Err("the server was stopped".to_string());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{} of the data connections did not arrive",
                    missing(&receive, &send)
                ));
            }
            let connection = match self.listener.accept() {
                Ok((connection, _)) => connection,
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
                Err(error) if is_transient_accept_error(&error) => continue,
                Err(error) => return Err(format!("accepting data connections: {error}")),
            };
            let Some(mut connection) = opened(connection, ConnectionKind::Data) else {
                continue;
            };
            let mut rest = [0u8; DATA_HEADER_BYTES - 8];
            let Ok(header) = connection
                .read_exact(&mut rest)
                .map_err(|e| e.to_string())
                .and_then(|()| DataHeader::decode_after_magic(&rest))
            else {
                continue;
            };
            let slots = match header.role {
                StreamRole::ClientSends => &mut receive,
                StreamRole::ServerSends => &mut send,
            };
            if header.session == session
                && let Some(slot @ None) = slots.get_mut(header.stream as usize)
            {
                *slot = Some(connection);
            }
        }
        let take = |streams: Vec<Option<TcpStream>>| streams.into_iter().flatten().collect();
        Ok((take(receive), take(send)))
    }

    /// Tells every client waiting in the backlog that a session is running.
    fn refuse_waiting(&self) {
        while let Ok((mut connection, _)) = self.listener.accept() {
            let _ = connection.set_nonblocking(false);
            let _ = connection.set_write_timeout(Some(Duration::from_millis(100)));
            let _ = write_message(
                &mut connection,
                &ControlMessage::Refused {
                    reason: "busy with another test".to_string(),
                },
            );
        }
    }
}

fn is_transient_accept_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::Interrupted
    )
}

/// Makes an accepted connection blocking, reads what it is, and keeps it when it is `kind`.
fn opened(connection: TcpStream, kind: ConnectionKind) -> Option<TcpStream> {
    connection.set_nonblocking(false).ok()?;
    connection.set_read_timeout(Some(MAGIC_TIMEOUT)).ok()?;
    let mut reader = &connection;
    match read_magic(&mut reader) {
        Ok(found) if found == kind => Some(connection),
        Ok(ConnectionKind::Control) => {
            let mut connection = connection;
            let _ = write_message(
                &mut connection,
                &ControlMessage::Refused {
                    reason: "busy with another test".to_string(),
                },
            );
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::client::{ClientConfig, TestDirection, run_client};
    use crate::result::LinkDirection;

    fn serve_once() -> (
        SocketAddr,
        std::thread::JoinHandle<(ServeOutcome, Vec<SessionSummary>)>,
    ) {
        let server = NetServer::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let address = server.local_addr();
        let handle = std::thread::spawn(move || {
            let mut sessions = Vec::new();
            let outcome = server
                .serve(true, &AtomicBool::new(false), &mut |s| {
                    sessions.push(s.clone())
                })
                .unwrap();
            (outcome, sessions)
        });
        (address, handle)
    }

    #[test]
    fn both_directions_over_loopback() {
        let (address, server) = serve_once();
        let config = ClientConfig {
            streams: 2,
            duration_ns: 1_200_000_000,
            direction: TestDirection::Both,
            interval_ns: 500_000_000,
            ..ClientConfig::new(address)
        };
        let mut intervals = Vec::new();
        let run = run_client(&config, &AtomicBool::new(false), &mut |direction, point| {
            intervals.push((direction, point.bytes))
        })
        .unwrap();
        let (outcome, sessions) = server.join().unwrap();
        assert_eq!(
            outcome,
            ServeOutcome {
                sessions: 1,
                failed: 0
            }
        );
        assert_eq!(sessions[0].error, None);
        assert_eq!(run.tests.len(), 2);
        assert!(!run.interrupted);
        for (test, direction) in run
            .tests
            .iter()
            .zip([LinkDirection::Send, LinkDirection::Receive])
        {
            assert_eq!(test.direction, direction);
            assert_eq!(test.streams, 2);
            assert!(test.bytes > 0, "{test:?}");
            assert!(test.warnings.is_empty(), "{:?}", test.warnings);
            assert!(
                (1_150_000_000..1_500_000_000).contains(&test.measured_ns),
                "{}",
                test.measured_ns
            );
            assert_eq!(test.series.len(), 3);
            assert_eq!(test.series.iter().map(|p| p.bytes).sum::<u64>(), test.bytes);
            assert!(test.cpu.wall_ns > 0);
        }
        // What the server counted is what the client was told.
        assert_eq!(
            sessions[0].received.map(|(bytes, _)| bytes),
            Some(run.tests[0].bytes)
        );
        assert!(intervals.iter().any(|(d, _)| *d == LinkDirection::Send));
        assert!(intervals.iter().any(|(d, _)| *d == LinkDirection::Receive));
    }

    #[test]
    fn a_stop_ends_the_test_early_with_what_was_measured() {
        let (address, server) = serve_once();
        let config = ClientConfig {
            duration_ns: 30_000_000_000,
            direction: TestDirection::Send,
            ..ClientConfig::new(address)
        };
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        let run = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(600));
                stop.store(true, Ordering::Relaxed);
            });
            run_client(&config, &stop, &mut |_, _| {}).unwrap()
        });
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(run.interrupted);
        assert!(run.tests[0].bytes > 0);
        assert!(run.tests[0].measured_ns < 2_000_000_000);
        let (outcome, _) = server.join().unwrap();
        assert_eq!(outcome.failed, 0);
    }

    #[test]
    fn a_second_client_is_told_the_server_is_busy() {
        let (address, server) = serve_once();
        let config = ClientConfig {
            duration_ns: 1_000_000_000,
            ..ClientConfig::new(address)
        };
        std::thread::scope(|scope| {
            let first =
                scope.spawn(|| run_client(&config, &AtomicBool::new(false), &mut |_, _| {}));
            std::thread::sleep(Duration::from_millis(400));
            let second = run_client(&config, &AtomicBool::new(false), &mut |_, _| {});
            match second {
                Err(NetError::Refused { reason, .. }) => {
                    assert!(reason.contains("busy"), "{reason}")
                }
                other => panic!("expected a refusal, got {other:?}"),
            }
            assert!(first.join().unwrap().is_ok());
        });
        server.join().unwrap();
    }

    #[test]
    fn bad_parameters_are_refused() {
        let hello = |streams, duration_ns| ControlMessage::Hello {
            version: PROTOCOL_VERSION,
            streams,
            duration_ns,
            interval_ns: 1_000_000_000,
            client_sends: true,
            server_sends: false,
        };
        assert!(parameters(hello(0, 1)).is_err());
        assert!(parameters(hello(MAX_STREAMS + 1, 1)).is_err());
        assert!(parameters(hello(1, MAX_DURATION_NS + 1)).is_err());
        assert!(parameters(hello(1, 1)).is_ok());
        assert!(parameters(ControlMessage::Start).is_err());
    }
}
