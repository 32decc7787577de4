//! The server side of a link test: listens, and gives every connection a thread of its own for
//! its handshake, so that idle or slow connections cannot keep a real client out.
//!
//! Limits, all in [`ServerLimits`]: at most `max_handshakes` connections may be in their
//! handshake at once, at most `max_handshakes_per_address` of them from one peer address (more
//! from it are closed at once, and counted); when all places are taken, a new connection cuts
//! the oldest handshake of the address holding the most (`net/handshakes.rs`), so a peer
//! without the secret cannot keep a real client out. Each handshake has one deadline as a
//! whole (`handshake_timeout`), however slowly the bytes come. At most
//! `max_sessions` tests run at once (a client past that is told the server is busy), each of
//! at most `max_streams` streams per direction and `max_duration_ns`. A stream that moves
//! nothing for `stall_timeout` ends its session. Without a [`Secret`](super::secret::Secret) the server listens only
//! on a loopback address unless told otherwise; with one, every client must prove it knows the
//! secret ([`super::auth`]) and the server proves it back.

use super::NetError;
use super::deadline::DeadlineStream;
use super::handshakes::{Admission, HandshakeSlot, HandshakeTable};
use super::protocol::{
    ConnectionKind, ControlMessage, DATA_HEADER_BYTES, DataHeader, PROTOCOL_VERSION, read_magic,
    write_message,
};
use super::server_state::Shared;
pub use super::server_state::{
    ServeOutcome, ServerConfig, ServerEvent, ServerLimits, SessionSummary,
};
use super::session;
use std::collections::HashMap;
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often an idle server looks for connections and for its stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(20);
/// Refusals shown one by one in each [`REPORT_PERIOD`]; the rest are counted.
const REFUSALS_SHOWN: u64 = 20;
/// The period of [`ServerEvent::Suppressed`] and [`ServerEvent::Dropped`] reports.
const REPORT_PERIOD: Duration = Duration::from_secs(10);

/// A listening `iopath net` server.
pub struct NetServer {
    listener: TcpListener,
    address: SocketAddr,
    shared: Arc<Shared>,
    events: Receiver<ServerEvent>,
}

impl NetServer {
    /// Listens on `address` (port 0: any free port, see [`NetServer::local_addr`]) after
    /// [`ServerConfig::validate`].
    pub fn bind(address: SocketAddr, config: ServerConfig) -> Result<NetServer, NetError> {
        config.validate(address, "--listen")?;
        let listen_error = |source| NetError::Listen { address, source };
        let listener = TcpListener::bind(address).map_err(listen_error)?;
        listener.set_nonblocking(true).map_err(listen_error)?;
        let address = listener.local_addr().map_err(listen_error)?;
        let (sender, events) = channel();
        let shared = Arc::new(Shared {
            config,
            stop: Arc::new(AtomicBool::new(false)),
            handshakes: Arc::new(Mutex::new(HandshakeTable::default())),
            sessions: AtomicU32::new(0),
            registry: Mutex::new(HashMap::new()),
            events: sender,
        });
        Ok(NetServer {
            listener,
            address,
            shared,
            events,
        })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Serves until `stop` is set, or after the first accepted test when `once` (refused
    /// connections do not end it). Events are shown to `on_event` on this thread, with
    /// refusals past 20 in 10 s counted instead of shown. Returns once every connection
    /// thread has ended.
    pub fn serve(
        &self,
        once: bool,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&ServerEvent),
    ) -> Result<ServeOutcome, NetError> {
        let mut outcome = ServeOutcome::default();
        let mut log = EventLog::new();
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let mut done = false;
        let mut failure = None;
        while !done && !stop.load(Ordering::Relaxed) {
            while let Ok(event) = self.events.try_recv() {
                done |= count(&event, once, &mut outcome);
                log.show(event, on_event);
            }
            log.cut += self.take_cut();
            log.flush_due(self.limits(), on_event);
            threads.retain(|thread| !thread.is_finished());
            if done {
                break;
            }
            match self.listener.accept() {
                Ok((connection, peer)) => match self.start_handshake(connection, peer) {
                    Started::Thread(thread) => threads.push(thread),
                    Started::Closed(Admission::PerAddress) => log.per_address += 1,
                    Started::Closed(_) => log.full += 1,
                },
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(ACCEPT_POLL);
                }
                Err(error) if is_transient_accept_error(&error) => {}
                Err(source) => {
                    failure = Some(NetError::Listen {
                        address: self.address,
                        source,
                    });
                    break;
                }
            }
        }
        self.shared.stop.store(true, Ordering::SeqCst);
        for thread in threads {
            let _ = thread.join();
        }
        while let Ok(event) = self.events.try_recv() {
            count(&event, once, &mut outcome);
            log.show(event, on_event);
        }
        log.cut += self.take_cut();
        log.flush(self.limits(), on_event);
        failure.map_or(Ok(outcome), Err)
    }

    /// `max_handshakes` and `max_handshakes_per_address`.
    fn limits(&self) -> (u32, u32) {
        let limits = &self.shared.config.limits;
        (limits.max_handshakes, limits.max_handshakes_per_address)
    }

    fn take_cut(&self) -> u64 {
        let mut table = self
            .shared
            .handshakes
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        table.take_cut()
    }

    /// Gives a new connection a place among the handshakes ([`HandshakeTable::admit`]) and a
    /// thread; when it gets neither, it is closed (dropped) here.
    fn start_handshake(&self, connection: TcpStream, peer: SocketAddr) -> Started {
        let exempt = self.shared.waiting_addresses();
        let admission = HandshakeTable::admit(
            &self.shared.handshakes,
            &connection,
            peer.ip(),
            self.limits(),
            &exempt,
        );
        let slot = match admission {
            Ok(Admission::Admitted(slot)) => slot,
            Ok(closed) => return Started::Closed(closed),
            Err(_) => return Started::Closed(Admission::Full),
        };
        let shared = Arc::clone(&self.shared);
        std::thread::Builder::new()
            .name("net-connection".into())
            .spawn(move || handshake(connection, peer, &shared, slot))
            .map_or(Started::Closed(Admission::Full), Started::Thread)
    }
}

/// What became of an accepted connection.
enum Started {
    /// Its handshake runs on this thread.
    Thread(JoinHandle<()>),
    /// It was closed at once.
    Closed(Admission),
}

/// Counts a session event; true when it ends a `once` server.
fn count(event: &ServerEvent, once: bool, outcome: &mut ServeOutcome) -> bool {
    let ServerEvent::Session(summary) = event else {
        return false;
    };
    outcome.sessions += 1;
    if summary.error.is_some() {
        outcome.failed += 1;
    }
    once
}

/// Shows events, counting refusals and dropped connections past what a period shows.
struct EventLog {
    period_start: Instant,
    refusals_shown: u64,
    suppressed: u64,
    per_address: u64,
    cut: u64,
    full: u64,
}

impl EventLog {
    fn new() -> Self {
        EventLog {
            period_start: Instant::now(),
            refusals_shown: 0,
            suppressed: 0,
            per_address: 0,
            cut: 0,
            full: 0,
        }
    }

    fn show(&mut self, event: ServerEvent, on_event: &mut dyn FnMut(&ServerEvent)) {
        if matches!(event, ServerEvent::Refused { .. }) {
            if self.refusals_shown >= REFUSALS_SHOWN {
                self.suppressed += 1;
                return;
            }
            self.refusals_shown += 1;
        }
        on_event(&event);
    }

    fn flush_due(&mut self, limits: (u32, u32), on_event: &mut dyn FnMut(&ServerEvent)) {
        if self.period_start.elapsed() >= REPORT_PERIOD {
            self.flush(limits, on_event);
        }
    }

    fn flush(&mut self, limits: (u32, u32), on_event: &mut dyn FnMut(&ServerEvent)) {
        if self.suppressed > 0 {
            on_event(&ServerEvent::Suppressed {
                refusals: self.suppressed,
            });
        }
        if self.per_address + self.cut + self.full > 0 {
            on_event(&ServerEvent::Dropped {
                per_address: self.per_address,
                cut: self.cut,
                full: self.full,
                limits,
            });
        }
        *self = EventLog::new();
    }
}

/// One connection: what it is, within the handshake deadline, then its job.
fn handshake(connection: TcpStream, peer: SocketAddr, shared: &Arc<Shared>, slot: HandshakeSlot) {
    let limits = shared.config.limits;
    let deadline = Instant::now() + limits.handshake_timeout;
    let refused = |reason: String| {
        if !slot.was_cut() {
            shared.report(ServerEvent::Refused {
                client: peer,
                reason,
            })
        }
    };
    let prepared = connection
        .set_nonblocking(false)
        .and_then(|()| connection.set_write_timeout(Some(limits.stall_timeout)))
        .and_then(|()| connection.try_clone());
    let reading = match prepared {
        Ok(clone) => clone,
        Err(error) => return refused(format!("connection: {error}")),
    };
    let mut reader = DeadlineStream::new(reading, Some(deadline), Some(Arc::clone(&shared.stop)));
    match read_magic(&mut reader) {
        Ok(ConnectionKind::Control) => {
            session::serve_control(connection, reader, peer, shared, slot);
        }
        Ok(ConnectionKind::Data) => {
            let mut rest = [0u8; DATA_HEADER_BYTES - 8];
            let header = reader
                .read_exact(&mut rest)
                .map_err(|error| error.to_string())
                .and_then(|()| DataHeader::decode_after_magic(&rest));
            match header {
                Ok(header) => hand_over(shared, header, connection),
                Err(reason) => refused(format!("data connection: {reason}")),
            }
        }
        Ok(ConnectionKind::ControlV1) => {
            let mut connection = connection;
            let reason = format!(
                "protocol version 1: this server speaks version {PROTOCOL_VERSION}; use the \
                 same iopath version on both ends"
            );
            let _ = write_message(
                &mut connection,
                &ControlMessage::Refused {
                    reason: reason.clone(),
                },
            );
            refused(reason);
        }
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionAborted => {}
        Err(error) if error.kind() == std::io::ErrorKind::TimedOut => refused(format!(
            "no greeting within {:.1} s",
            limits.handshake_timeout.as_secs_f64()
        )),
        Err(error) => refused(format!("not an iopath net connection: {error}")),
    }
}

/// Gives a data connection to its session; drops it when no session of that number waits.
fn hand_over(shared: &Shared, header: DataHeader, connection: TcpStream) {
    let registry = shared.registry.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, sender)) = registry.get(&header.session) {
        let _ = sender.send((header, connection));
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
