//! One test on the server: the control handshake (challenge, parameters, proofs, limits), the
//! data connections, the measured window and the report to the client.

use super::SETUP_TIMEOUT;
use super::auth::{Nonce, server_proof, verify_client};
use super::deadline::DeadlineStream;
use super::handshakes::HandshakeSlot;
use super::protocol::{
    ControlMessage, MAX_INTERVALS, MIN_INTERVAL_NS, PROTOCOL_VERSION, StreamRole, parameter_bytes,
    read_in_background, read_message, write_message,
};
use super::server_state::{
    Registration, ServerEvent, ServerLimits, SessionSlot, SessionSummary, Shared,
};
use super::transfer::{DataPlane, WindowSampler};
use std::io::BufReader;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// A test's parameters.
#[derive(Clone, Copy, Debug)]
pub(super) struct Parameters {
    pub(super) streams: u32,
    pub(super) duration_ns: u64,
    pub(super) interval_ns: u64,
    pub(super) client_sends: bool,
    pub(super) server_sends: bool,
}

/// An accepted test: its parameters, its number and data connections, its place.
struct Accepted {
    parameters: Parameters,
    registration: Registration,
    _slot: SessionSlot,
}

/// Serves one control connection whose magic has been read: refused tests are reported as
/// [`ServerEvent::Refused`], accepted ones as [`ServerEvent::Session`] when they end.
pub(super) fn serve_control(
    mut control: TcpStream,
    reader: DeadlineStream,
    client: SocketAddr,
    shared: &Arc<Shared>,
    handshake_slot: HandshakeSlot,
) {
    let mut reader = BufReader::new(reader);
    let accepted = match accept(&mut control, &mut reader, client, shared) {
        Ok(accepted) => accepted,
        Err(reason) => {
            let _ = control.shutdown(Shutdown::Both);
            if !shared.stop.load(Ordering::Relaxed) && !handshake_slot.was_cut() {
                shared.report(ServerEvent::Refused { client, reason });
            }
            return;
        }
    };
    drop(handshake_slot);
    let parameters = accepted.parameters;
    let mut summary = SessionSummary {
        client,
        streams: parameters.streams,
        client_sends: parameters.client_sends,
        server_sends: parameters.server_sends,
        received: None,
        error: None,
    };
    if let Err(error) = run(&mut control, reader, shared, accepted, &mut summary) {
        let _ = write_message(
            &mut control,
            &ControlMessage::Abort {
                reason: error.clone(),
            },
        );
        summary.error = Some(error);
    }
    let _ = control.shutdown(Shutdown::Both);
    shared.report(ServerEvent::Session(summary));
}

/// The handshake: challenge, parameters and proof, limits, a place; `Err` is the reason of a
/// refusal (already sent to the client when it could be).
fn accept(
    control: &mut TcpStream,
    reader: &mut BufReader<DeadlineStream>,
    client: SocketAddr,
    shared: &Arc<Shared>,
) -> Result<Accepted, String> {
    let io = |context: &str| {
        let context = context.to_string();
        move |error: std::io::Error| format!("{context}: {error}")
    };
    control
        .set_nodelay(true)
        .map_err(io("control connection"))?;
    let server_nonce = Nonce::random().map_err(io("random source"))?;
    let secret = shared.config.secret.as_ref();
    let challenge = ControlMessage::Challenge {
        version: PROTOCOL_VERSION,
        nonce: server_nonce.to_hex(),
        secret_required: secret.is_some(),
    };
    write_message(control, &challenge).map_err(io("sending the challenge"))?;
    let hello = read_message(reader)
        .map_err(io("reading the test parameters"))?
        .ok_or("the client closed the connection before its parameters")?;
    let mut refuse = |reason: String| {
        let _ = write_message(
            control,
            &ControlMessage::Refused {
                reason: reason.clone(),
            },
        );
        reason
    };
    let (parameters, client_nonce) =
        check_hello(hello, &server_nonce, shared).map_err(&mut refuse)?;
    let slot = shared.take_session().map_err(|running| {
        refuse(format!(
            "busy: {running} test(s) already running, the most this server runs at once"
        ))
    })?;
    let registration = shared.register(client.ip()).map_err(io("random source"))?;
    let proof = secret.map(|secret| {
        server_proof(
            secret,
            &server_nonce,
            &client_nonce,
            &bytes_of(&parameters),
            registration.session,
        )
    });
    let welcome = ControlMessage::Welcome {
        session: registration.session,
        proof,
    };
    write_message(control, &welcome).map_err(io("answering the client"))?;
    Ok(Accepted {
        parameters,
        registration,
        _slot: slot,
    })
}

fn bytes_of(parameters: &Parameters) -> [u8; 22] {
    parameter_bytes(
        parameters.streams,
        parameters.duration_ns,
        parameters.interval_ns,
        parameters.client_sends,
        parameters.server_sends,
    )
}

/// Checks a hello: version, proof, then the server's limits.
fn check_hello(
    message: ControlMessage,
    server_nonce: &Nonce,
    shared: &Shared,
) -> Result<(Parameters, Nonce), String> {
    let ControlMessage::Hello {
        version,
        streams,
        duration_ns,
        interval_ns,
        client_sends,
        server_sends,
        nonce,
        proof,
    } = message
    else {
        return Err(format!(
            "expected the test parameters, got a '{}' message",
            message.name()
        ));
    };
    if version != PROTOCOL_VERSION {
        return Err(format!(
            "protocol version {version}: this server speaks version {PROTOCOL_VERSION}"
        ));
    }
    let client_nonce = Nonce::from_hex(&nonce).ok_or("malformed client nonce")?;
    let parameters = Parameters {
        streams,
        duration_ns,
        interval_ns,
        client_sends,
        server_sends,
    };
    if let Some(secret) = &shared.config.secret {
        let Some(proof) = proof else {
            return Err(
                "this server needs the shared secret: give the client the same \
                        --secret-file or IOPATH_NET_SECRET as the server"
                    .to_string(),
            );
        };
        if !verify_client(
            secret,
            server_nonce,
            &client_nonce,
            &bytes_of(&parameters),
            &proof,
        ) {
            return Err(
                "wrong secret: the client's proof does not match this server's \
                        secret"
                    .to_string(),
            );
        }
    }
    check_limits(&parameters, &shared.config.limits)?;
    Ok((parameters, client_nonce))
}

/// Checks parameters against what the server allows.
pub(super) fn check_limits(parameters: &Parameters, limits: &ServerLimits) -> Result<(), String> {
    let streams = parameters.streams;
    if streams == 0 || streams > limits.max_streams {
        return Err(format!(
            "{streams} streams: this server allows 1 to {} (its --max-streams)",
            limits.max_streams
        ));
    }
    if parameters.duration_ns == 0 || parameters.duration_ns > limits.max_duration_ns {
        return Err(format!(
            "a {:.1} s test: this server allows at most {:.1} s (its --max-duration)",
            parameters.duration_ns as f64 / 1e9,
            limits.max_duration_ns as f64 / 1e9
        ));
    }
    if parameters.interval_ns < MIN_INTERVAL_NS
        || parameters.duration_ns / parameters.interval_ns > MAX_INTERVALS
    {
        return Err(format!(
            "intervals must be at least 10 ms, and at most {MAX_INTERVALS} in a test"
        ));
    }
    if !parameters.client_sends && !parameters.server_sends {
        return Err("no direction to test".to_string());
    }
    Ok(())
}

/// An accepted test, from the data connections to the final count.
fn run(
    control: &mut TcpStream,
    mut reader: BufReader<DeadlineStream>,
    shared: &Shared,
    accepted: Accepted,
    summary: &mut SessionSummary,
) -> Result<(), String> {
    let io = |context: &str| {
        let context = context.to_string();
        move |error: std::io::Error| format!("{context}: {error}")
    };
    let parameters = accepted.parameters;
    let limits = shared.config.limits;
    let (receive, send) = gather(&accepted.registration, parameters, shared)?;
    drop(accepted.registration);
    write_message(control, &ControlMessage::Ready).map_err(io("answering the client"))?;
    reader
        .get_mut()
        .set_deadline(Some(Instant::now() + SETUP_TIMEOUT));
    match read_message(&mut reader).map_err(io("waiting for the start"))? {
        Some(ControlMessage::Start) => {}
        Some(other) => {
            return Err(format!(
                "expected the start, got a '{}' message",
                other.name()
            ));
        }
        None => return Err("the client left before the start".to_string()),
    }
    let started = Instant::now();
    reader.get_mut().set_deadline(None);
    let (messages, control_reader) =
        read_in_background(reader).map_err(io("starting the control thread"))?;
    let duration = Duration::from_nanos(parameters.duration_ns);
    let plane = DataPlane::start(
        send,
        receive,
        started + duration + SETUP_TIMEOUT,
        limits.stall_timeout,
    )
    .map_err(io("starting the data threads"))?;

    let mut window = parameters
        .client_sends
        .then(|| WindowSampler::new(parameters.duration_ns, parameters.interval_ns));
    let mut finished = false;
    let give_up = started + duration + SETUP_TIMEOUT;
    let mut failure = None;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            failure = Some("the server was stopped".to_string());
            break;
        }
        if let Some(stall) = plane.stalled() {
            failure = Some(stall);
            break;
        }
        let elapsed_ns = started.elapsed().as_nanos() as u64;
        if let Some(sampler) = window.as_mut().filter(|w| !w.is_closed())
            && elapsed_ns >= sampler.next_due_ns()
        {
            let point = sampler.sample(elapsed_ns, plane.received_bytes(), false);
            let closed = sampler.is_closed();
            let sent = report_interval(control, sampler, &point, &plane, closed);
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
                    let _ = report_interval(control, sampler, &point, &plane, true);
                    finished = true;
                }
                break;
            }
            Ok(Ok(Some(other))) => {
                failure = Some(format!("unexpected '{}' message", other.name()));
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
    if let Some(reason) = &failure {
        // Said before the data connections close, so that the client knows why they did.
        let _ = write_message(
            control,
            &ControlMessage::Abort {
                reason: reason.clone(),
            },
        );
    }
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

/// Waits for the data connections of a session: (client-sends, server-sends) streams, each
/// in stream order. Connections with a stream number out of range or already taken are
/// closed.
fn gather(
    registration: &Registration,
    parameters: Parameters,
    shared: &Shared,
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
        if shared.stop.load(Ordering::Relaxed) {
            return Err("the server was stopped".to_string());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "{} of the data connections did not arrive within {} s",
                missing(&receive, &send),
                SETUP_TIMEOUT.as_secs()
            ));
        }
        let (header, connection) = match registration
            .data
            .recv_timeout(left.min(Duration::from_millis(200)))
        {
            Ok(arrived) => arrived,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => {
                return Err("the session was unregistered".to_string());
            }
        };
        let slots = match header.role {
            StreamRole::ClientSends => &mut receive,
            StreamRole::ServerSends => &mut send,
        };
        if let Some(slot @ None) = slots.get_mut(header.stream as usize) {
            *slot = Some(connection);
        }
    }
    let take = |streams: Vec<Option<TcpStream>>| streams.into_iter().flatten().collect();
    Ok((take(receive), take(send)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::server::ServerLimits;

    #[test]
    fn limits_are_checked() {
        let limits = ServerLimits::default();
        let parameters = |streams, duration_ns, interval_ns| Parameters {
            streams,
            duration_ns,
            interval_ns,
            client_sends: true,
            server_sends: false,
        };
        let second = 1_000_000_000;
        assert!(check_limits(&parameters(1, second, second), &limits).is_ok());
        assert!(check_limits(&parameters(16, 60 * second, second), &limits).is_ok());
        let error = check_limits(&parameters(17, second, second), &limits).unwrap_err();
        assert!(error.contains("--max-streams"), "{error}");
        let error = check_limits(&parameters(1, 61 * second, second), &limits).unwrap_err();
        assert!(error.contains("--max-duration"), "{error}");
        assert!(check_limits(&parameters(0, second, second), &limits).is_err());
        assert!(check_limits(&parameters(1, second, 1_000_000), &limits).is_err());
        let neither = Parameters {
            client_sends: false,
            ..parameters(1, second, second)
        };
        assert!(check_limits(&neither, &limits).is_err());
    }
}
