//! What the server's threads share: its limits, the events it reports, the registry of
//! sessions waiting for their data connections, the handshakes under way
//! (`net/handshakes.rs`) and the slots that count sessions in progress (released when
//! dropped).

use super::NetError;
use super::handshakes::HandshakeTable;
use super::protocol::{DataHeader, MAX_DURATION_NS, MAX_STREAMS};
use super::secret::Secret;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a server allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    /// Most data connections per direction of one test (1 to [`MAX_STREAMS`]).
    pub max_streams: u32,
    /// Longest measured window of one test, ns (at most [`MAX_DURATION_NS`]).
    pub max_duration_ns: u64,
    /// Most tests running at once.
    pub max_sessions: u32,
    /// Most connections in their handshake at once; when all places are taken, a new
    /// connection cuts the oldest handshake of the address holding the most.
    pub max_handshakes: u32,
    /// Most connections of one peer address in their handshake at once (more are closed at
    /// once), except the data connections of that address's accepted test.
    pub max_handshakes_per_address: u32,
    /// Time a connection has, as a whole, to say what it is and (a control connection) to
    /// send its parameters.
    pub handshake_timeout: Duration,
    /// Time a data stream may move no byte inside the window before its session ends.
    pub stall_timeout: Duration,
}

impl Default for ServerLimits {
    /// 16 streams, 60 s, one test at a time, 64 handshakes of 5 s (8 per peer address),
    /// streams stalled after 5 s.
    fn default() -> Self {
        ServerLimits {
            max_streams: 16,
            max_duration_ns: 60_000_000_000,
            max_sessions: 1,
            max_handshakes: 64,
            max_handshakes_per_address: 8,
            handshake_timeout: Duration::from_secs(5),
            stall_timeout: Duration::from_secs(5),
        }
    }
}

/// How a server runs.
#[derive(Clone, Debug, Default)]
pub struct ServerConfig {
    /// The shared secret every client must prove (none: no authentication, loopback only
    /// unless `any_address_without_secret`).
    pub secret: Option<Secret>,
    /// What it allows.
    pub limits: ServerLimits,
    /// Listen on an address other than loopback without a secret.
    pub any_address_without_secret: bool,
}

impl ServerConfig {
    /// Checks the limits and that `address` may be listened on with this configuration.
    pub fn validate(&self, address: SocketAddr, listen_flag: &str) -> Result<(), NetError> {
        let limits = &self.limits;
        if limits.max_streams == 0 || limits.max_streams > MAX_STREAMS {
            return Err(NetError::Input(format!(
                "--max-streams {}: must be from 1 to {MAX_STREAMS}",
                limits.max_streams
            )));
        }
        if limits.max_duration_ns == 0 || limits.max_duration_ns > MAX_DURATION_NS {
            return Err(NetError::Input(
                "--max-duration must be above 0 and at most 1 hour".to_string(),
            ));
        }
        if limits.max_sessions == 0 || limits.max_sessions > 64 {
            return Err(NetError::Input(format!(
                "--max-sessions {}: must be from 1 to 64",
                limits.max_sessions
            )));
        }
        if limits.stall_timeout.is_zero() || limits.stall_timeout > Duration::from_secs(3600) {
            return Err(NetError::Input(
                "--stall-timeout must be above 0 and at most 1 hour".to_string(),
            ));
        }
        if limits.max_handshakes == 0
            || limits.max_handshakes_per_address == 0
            || limits.handshake_timeout.is_zero()
        {
            return Err(NetError::Input(
                "the handshake limits must be above 0".to_string(),
            ));
        }
        if self.secret.is_none()
            && !self.any_address_without_secret
            && !address.ip().to_canonical().is_loopback()
        {
            return Err(NetError::Input(format!(
                "{listen_flag} {address}: without a shared secret the server listens only on \
                 a loopback address (127.0.0.1, ::1), since anyone who reaches it could load \
                 this host's network. Give a secret (--secret-file FILE or IOPATH_NET_SECRET, \
                 the same on the client), listen on 127.0.0.1, or add --insecure-any-address \
                 on a network you trust"
            )));
        }
        Ok(())
    }
}

/// What one session was, for the server's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSummary {
    /// The client.
    pub client: SocketAddr,
    /// Data connections per direction.
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

/// Something for the server's log. Text from a peer in it is escaped already.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerEvent {
    /// An accepted test ended.
    Session(SessionSummary),
    /// A connection was refused or failed before a test was accepted.
    Refused {
        /// The peer.
        client: SocketAddr,
        /// Why.
        reason: String,
    },
    /// More refusals than are shown one by one came in the last period.
    Suppressed {
        /// Refusals not shown.
        refusals: u64,
    },
    /// Connections closed at once, or cut in their handshake, to keep places for others
    /// (counted over the last period).
    Dropped {
        /// Closed at once: their address had `max_handshakes_per_address` under way.
        per_address: u64,
        /// Handshakes cut, the oldest of the address holding the most, to make room when all
        /// `max_handshakes` places were taken.
        cut: u64,
        /// Closed at once: all places were taken by the data connections of accepted tests.
        full: u64,
        /// The limits: `max_handshakes`, `max_handshakes_per_address`.
        limits: (u32, u32),
    },
}

/// Sessions served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeOutcome {
    /// Tests that were accepted.
    pub sessions: u64,
    /// Of those, the ones that failed.
    pub failed: u64,
}

/// A data connection handed to its session.
pub(super) type DataConnection = (DataHeader, TcpStream);

/// What every connection thread shares.
pub(super) struct Shared {
    pub(super) config: ServerConfig,
    /// Set when the server stops: every thread ends soon after.
    pub(super) stop: Arc<AtomicBool>,
    /// Connections in their handshake.
    pub(super) handshakes: Arc<Mutex<HandshakeTable>>,
    /// Tests in progress.
    pub(super) sessions: AtomicU32,
    /// Sessions waiting for their data connections, by session number, with their client's
    /// address.
    pub(super) registry: Mutex<HashMap<u64, (IpAddr, Sender<DataConnection>)>>,
    /// Where events for the log go.
    pub(super) events: Sender<ServerEvent>,
}

impl Shared {
    pub(super) fn report(&self, event: ServerEvent) {
        let _ = self.events.send(event);
    }

    /// The addresses of the clients whose accepted tests wait for their data connections.
    pub(super) fn waiting_addresses(&self) -> Vec<IpAddr> {
        let registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        registry.values().map(|(client, _)| *client).collect()
    }

    /// Takes a session place, or says how many run.
    pub(super) fn take_session(self: &Arc<Self>) -> Result<SessionSlot, u32> {
        let max = self.config.limits.max_sessions;
        self.sessions
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |running| {
                (running < max).then_some(running + 1)
            })
            .map(|_| SessionSlot(Arc::clone(self)))
    }

    /// Registers a new session of `client` under a fresh random number; its data
    /// connections arrive on the registration until it is dropped.
    pub(super) fn register(self: &Arc<Self>, client: IpAddr) -> std::io::Result<Registration> {
        let (sender, receiver) = channel();
        let mut registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let session = super::auth::random_session()?;
            if session != 0 && !registry.contains_key(&session) {
                registry.insert(session, (client, sender));
                return Ok(Registration {
                    shared: Arc::clone(self),
                    session,
                    data: receiver,
                });
            }
        }
    }
}

/// A session's number and where its data connections arrive; unregistered when dropped.
pub(super) struct Registration {
    shared: Arc<Shared>,
    /// The session number.
    pub(super) session: u64,
    /// Its data connections.
    pub(super) data: Receiver<DataConnection>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut registry = self
            .shared
            .registry
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        registry.remove(&self.session);
    }
}

/// A place among the running sessions, given back when dropped.
pub(super) struct SessionSlot(pub(super) Arc<Shared>);

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.0.sessions.fetch_sub(1, Ordering::SeqCst);
    }
}
