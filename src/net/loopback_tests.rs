//! Client and server together over loopback, in one process; and each against a scripted
//! peer that breaks the rules.

use super::NetError;
use super::auth::Nonce;
use super::client::{ClientConfig, TestDirection, run_client};
use super::protocol::{
    CONTROL_MAGIC, ControlMessage, PROTOCOL_VERSION, read_message, write_message,
};
use super::secret::Secret;
use super::server::{
    NetServer, ServeOutcome, ServerConfig, ServerEvent, ServerLimits, SessionSummary,
};
use crate::result::LinkDirection;
use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn secret(text: &str) -> Secret {
    Secret::from_bytes(text.as_bytes(), "test").unwrap()
}

/// The thread of a test server: its outcome and every event.
type Serving = std::thread::JoinHandle<(ServeOutcome, Vec<ServerEvent>)>;

/// A server on loopback, serving until the returned flag is set.
fn serve(config: ServerConfig, once: bool) -> (SocketAddr, Arc<AtomicBool>, Serving) {
    let server = NetServer::bind("127.0.0.1:0".parse().unwrap(), config).unwrap();
    let address = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = std::thread::spawn(move || {
        let mut events = Vec::new();
        let outcome = server
            .serve(once, &flag, &mut |event| events.push(event.clone()))
            .unwrap();
        (outcome, events)
    });
    (address, stop, handle)
}

fn sessions(events: &[ServerEvent]) -> Vec<&SessionSummary> {
    events
        .iter()
        .filter_map(|event| match event {
            ServerEvent::Session(summary) => Some(summary),
            _ => None,
        })
        .collect()
}

fn refusals(events: &[ServerEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            ServerEvent::Refused { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn both_directions_with_a_secret() {
    let key = secret("a secret both ends share");
    let config = ServerConfig {
        secret: Some(key.clone()),
        ..ServerConfig::default()
    };
    let (address, _stop, server) = serve(config, true);
    let config = ClientConfig {
        streams: 2,
        duration_ns: 1_200_000_000,
        direction: TestDirection::Both,
        interval_ns: 500_000_000,
        secret: Some(key),
        ..ClientConfig::new(address)
    };
    let mut intervals = Vec::new();
    let run = run_client(&config, &AtomicBool::new(false), &mut |direction, point| {
        intervals.push((direction, point.bytes))
    })
    .unwrap();
    let (outcome, events) = server.join().unwrap();
    assert_eq!(
        outcome,
        ServeOutcome {
            sessions: 1,
            failed: 0
        }
    );
    let summaries = sessions(&events);
    assert_eq!(summaries[0].error, None);
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
    }
    // What the server counted is what the client was told.
    assert_eq!(
        summaries[0].received.map(|(bytes, _)| bytes),
        Some(run.tests[0].bytes)
    );
    assert!(intervals.iter().any(|(d, _)| *d == LinkDirection::Send));
    assert!(intervals.iter().any(|(d, _)| *d == LinkDirection::Receive));
}

#[test]
fn a_stop_ends_the_test_early_with_what_was_measured() {
    let (address, _stop, server) = serve(ServerConfig::default(), true);
    let config = ClientConfig {
        duration_ns: 30_000_000_000,
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
    let (address, _stop, server) = serve(ServerConfig::default(), true);
    let config = ClientConfig {
        duration_ns: 1_500_000_000,
        ..ClientConfig::new(address)
    };
    std::thread::scope(|scope| {
        let first = scope.spawn(|| run_client(&config, &AtomicBool::new(false), &mut |_, _| {}));
        std::thread::sleep(Duration::from_millis(500));
        match run_client(&config, &AtomicBool::new(false), &mut |_, _| {}) {
            Err(NetError::Refused { reason, .. }) => assert!(reason.contains("busy"), "{reason}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(first.join().unwrap().is_ok());
    });
    let (_, events) = server.join().unwrap();
    assert!(refusals(&events).iter().any(|r| r.contains("busy")));
}

#[test]
fn no_or_a_wrong_secret_is_refused_on_both_sides() {
    let config = ServerConfig {
        secret: Some(secret("the server's own secret")),
        ..ServerConfig::default()
    };
    let (address, stop, server) = serve(config, true);
    let base = ClientConfig {
        duration_ns: 500_000_000,
        ..ClientConfig::new(address)
    };
    for (key, expected) in [
        (Some(secret("not the server's secret")), "wrong secret"),
        (None, "needs the shared secret"),
    ] {
        let config = ClientConfig {
            secret: key,
            ..base.clone()
        };
        match run_client(&config, &AtomicBool::new(false), &mut |_, _| {}) {
            Err(NetError::Refused { reason, .. }) => {
                assert!(reason.contains(expected), "{reason}")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    // Refusals do not end a server that serves once.
    std::thread::sleep(Duration::from_millis(200));
    assert!(!server.is_finished());
    stop.store(true, Ordering::Relaxed);
    let (outcome, events) = server.join().unwrap();
    assert_eq!(outcome.sessions, 0);
    let refused = refusals(&events);
    assert!(
        refused.iter().any(|r| r.contains("wrong secret")),
        "{refused:?}"
    );
    assert!(
        refused
            .iter()
            .any(|r| r.contains("needs the shared secret")),
        "{refused:?}"
    );
}

#[test]
fn a_client_with_a_secret_refuses_a_server_without_one() {
    let (address, stop, server) = serve(ServerConfig::default(), true);
    let config = ClientConfig {
        secret: Some(secret("a secret the server lacks")),
        ..ClientConfig::new(address)
    };
    let error = run_client(&config, &AtomicBool::new(false), &mut |_, _| {}).unwrap_err();
    assert!(matches!(error, NetError::Authentication { .. }), "{error}");
    assert!(error.to_string().contains("does not ask"), "{error}");
    stop.store(true, Ordering::Relaxed);
    assert_eq!(server.join().unwrap().0.sessions, 0);
}

/// A scripted server that answers the first control connection with `answer` (given the
/// client's hello), and counts the connections that come after it.
fn impostor(
    answer: impl FnOnce(&ControlMessage) -> ControlMessage + Send + 'static,
) -> (SocketAddr, std::thread::JoinHandle<u32>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        let (mut control, _) = listener.accept().unwrap();
        control
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut magic = [0u8; 8];
        control.read_exact(&mut magic).unwrap();
        assert_eq!(magic, CONTROL_MAGIC);
        let challenge = ControlMessage::Challenge {
            version: PROTOCOL_VERSION,
            nonce: Nonce::random().unwrap().to_hex(),
            secret_required: true,
        };
        write_message(&mut control, &challenge).unwrap();
        let mut reader = BufReader::new(control.try_clone().unwrap());
        let hello = read_message(&mut reader).unwrap().unwrap();
        write_message(&mut control, &answer(&hello)).unwrap();
        // Count data connections that arrive in the next half second.
        listener.set_nonblocking(true).unwrap();
        let until = Instant::now() + Duration::from_millis(500);
        let mut later = 0;
        while Instant::now() < until {
            if listener.accept().is_ok() {
                later += 1;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        later
    });
    (address, handle)
}

#[test]
fn a_server_that_cannot_prove_the_secret_gets_nothing() {
    for proof in [None, Some("00".repeat(32))] {
        let (address, impostor) = impostor(move |_| ControlMessage::Welcome { session: 9, proof });
        let config = ClientConfig {
            secret: Some(secret("the client's real secret")),
            duration_ns: 1_000_000_000,
            ..ClientConfig::new(address)
        };
        let error = run_client(&config, &AtomicBool::new(false), &mut |_, _| {}).unwrap_err();
        assert!(matches!(error, NetError::Authentication { .. }), "{error}");
        assert!(error.to_string().contains("could not prove"), "{error}");
        assert_eq!(impostor.join().unwrap(), 0, "data connections opened");
    }
}

#[test]
fn a_server_refusal_is_shown_escaped() {
    let (address, impostor) = impostor(|_| ControlMessage::Refused {
        reason: "\x1b[2Jgone\x07".to_string(),
    });
    let error = run_client(
        &ClientConfig::new(address),
        &AtomicBool::new(false),
        &mut |_, _| {},
    )
    .unwrap_err()
    .to_string();
    assert!(!error.chars().any(char::is_control), "{error:?}");
    assert!(error.contains("\\u{1b}[2Jgone\\u{7}"), "{error}");
    impostor.join().unwrap();
}

#[test]
fn idle_and_dripping_connections_do_not_keep_a_client_out() {
    let (address, stop, server) = serve(ServerConfig::default(), false);
    // From another address than the client's: one address gets 8 handshakes at most.
    let other = std::net::Ipv4Addr::new(127, 0, 0, 2);
    let idle: Vec<TcpStream> = (0..6)
        .map(|_| crate::support::peer::connect_from(other, address).unwrap())
        .collect();
    let drip_stop = Arc::new(AtomicBool::new(false));
    let dripping = {
        let stop = Arc::clone(&drip_stop);
        std::thread::spawn(move || {
            let mut stream = crate::support::peer::connect_from(other, address).unwrap();
            let mut sent = 0;
            for byte in CONTROL_MAGIC.iter().cycle() {
                if stop.load(Ordering::Relaxed) || stream.write_all(&[*byte]).is_err() {
                    break;
                }
                sent += 1;
                std::thread::sleep(Duration::from_millis(300));
            }
            sent
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let config = ClientConfig {
        duration_ns: 1_000_000_000,
        ..ClientConfig::new(address)
    };
    let run = run_client(&config, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    assert!(run.tests[0].bytes > 0);
    // The dripping connection is cut at the handshake deadline, whatever it sends.
    let sent = dripping.join().unwrap();
    assert!(sent < 30, "{sent} bytes dripped before the server closed");
    drip_stop.store(true, Ordering::Relaxed);
    drop(idle);
    stop.store(true, Ordering::Relaxed);
    let (outcome, events) = server.join().unwrap();
    assert_eq!(outcome.sessions, 1);
    assert!(
        refusals(&events).iter().any(|r| r.contains("no greeting")),
        "{events:?}"
    );
}

#[test]
fn a_client_gets_a_place_when_idle_peers_hold_them_all() {
    let limits = ServerLimits {
        max_handshakes: 4,
        ..ServerLimits::default()
    };
    let config = ServerConfig {
        secret: Some(secret("the secret of this server")),
        limits,
        ..ServerConfig::default()
    };
    let (address, stop, server) = serve(config, false);
    // Another address holds every place, sending nothing.
    let hostile = std::net::Ipv4Addr::new(127, 0, 0, 2);
    let mut idle: Vec<TcpStream> = (0..4)
        .map(|_| crate::support::peer::connect_from(hostile, address).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let config = ClientConfig {
        duration_ns: 500_000_000,
        secret: Some(secret("the secret of this server")),
        ..ClientConfig::new(address)
    };
    let run = run_client(&config, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    assert!(run.tests[0].bytes > 0);
    // The oldest idle handshake was cut to make room; the newest still waits.
    idle[0]
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    assert!(matches!(idle[0].read(&mut [0u8; 1]), Ok(0) | Err(_)));
    stop.store(true, Ordering::Relaxed);
    let (outcome, events) = server.join().unwrap();
    assert_eq!(outcome.sessions, 1);
    let cut: u64 = events
        .iter()
        .map(|event| match event {
            ServerEvent::Dropped { cut, .. } => *cut,
            _ => 0,
        })
        .sum();
    assert!(cut >= 1, "{events:?}");
    assert!(
        refusals(&events).is_empty(),
        "a cut is counted, not refused: {events:?}"
    );
}
