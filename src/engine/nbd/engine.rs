//! [`NbdEngine`]: the [`Engine`] seam over one or more NBD connections.
//!
//! - [`Engine::submit`] checks the request, encodes its header into its connection's queue and
//!   marks the slot in flight; the handle on the wire is the slot number.
//! - [`Engine::flush`] sends every queued request, one gathered `sendmsg` per connection
//!   (write payloads straight from the slot buffers). When a send buffer fills it waits in
//!   `poll` for room *and* reads replies meanwhile, so a server blocked on answering never
//!   deadlocks with a client blocked on asking.
//! - [`Engine::reap`] hands out parsed completions; when too few are ready it reads: with one
//!   connection by one blocking `recvmsg` (no `poll` first), with several by `poll` and then
//!   non-blocking reads of the ready ones. `reap(0, ..)` never waits.
//! - [`Engine::sync_data`] sends `NBD_CMD_FLUSH` and waits for its reply.
//!
//! Nothing in these four allocates (errors aside): headers, iovecs, staging buffers, the ready
//! queue and the `poll` set are sized to the queue depth when the engine opens.
//!
//! **Waiting is bounded.** Each blocking wait lasts at most [`WAIT_SLICE`]. A wait that is not
//! over after its first slice reads the clock: the server must make progress (complete a reply,
//! or take a batch of requests) at least once per reply timeout (`--net-timeout`), however it
//! spreads its bytes out, and once the run's stop signal is raised, every request in flight
//! must be answered within [`STOP_GRACE`]. A wait that ends at once reads no clock.
//!
//! A failed request is a completion with a negative errno. A connection that fails as a whole
//! (the server closed it or reset it, sent something that breaks the protocol, or made no
//! progress for the reply timeout) fails the call with an [`EngineError`] naming what was being
//! done, and every later call fails too: the engine is finished. Requests abandoned at a stop
//! end it with [`EngineError::Stopped`].

use super::export_volume::export_volume;
use crate::engine::buffer::BufferPool;
use crate::engine::volume::{STOP_GRACE, VolumeChange};
use crate::engine::{
    Capabilities, Completion, Direction, Engine, EngineError, EngineOptions, IoRequest, StopSignal,
};
use crate::targets::network_target::{NbdTransport, NetworkTarget};
use crate::units::format_wait;
use nbd_client::socket::{self, later};
use nbd_client::wire::{self, Request};
use nbd_client::{
    Connection, DeadlineStream, Export, FlushState, HandshakeError, ServerAddress, Slots, Socket,
    Stall, WAIT_SLICE, Watch,
};
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Name of this engine on the command line and in errors.
pub const ENGINE_NAME: &str = "nbd";

/// Highest queue depth one engine accepts.
pub const MAX_QUEUE_DEPTH: u32 = 65536;

/// Longest wait, when the engine is dropped with requests in flight, for their replies before
/// disconnecting anyway.
const DROP_DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// The NBD engine; see the module documentation.
pub struct NbdEngine {
    connections: Vec<Connection>,
    slots: Slots<BufferPool>,
    /// Connection the next request goes to (round robin).
    next_connection: usize,
    capabilities: Capabilities,
    export: Export,
    /// Command flags of every write (FUA for write-through).
    write_flags: u16,
    /// Requests submitted and not reaped.
    outstanding: usize,
    /// Why the engine cannot go on, once something failed for good.
    failure: Option<String>,
    /// Longest time without progress while waiting on the server.
    reply_timeout: Duration,
    /// The run's stop signal.
    stop: StopSignal,
    /// When requests in flight are abandoned, once the stop signal was seen.
    stop_deadline: Option<Instant>,
    /// Where the server is, for messages.
    server: String,
    /// The `poll` set, one entry per connection (descriptor -1 while not waited on).
    poll_set: Vec<libc::pollfd>,
    connection_note: Option<String>,
}

/// An [`EngineError::Setup`] of this engine.
fn setup_error(kind: io::ErrorKind, message: String) -> EngineError {
    EngineError::Setup {
        engine: ENGINE_NAME,
        source: io::Error::new(kind, message),
    }
}

/// An [`EngineError::Operation`] of this engine.
fn operation_error(operation: &'static str, source: io::Error) -> EngineError {
    EngineError::Operation {
        engine: ENGINE_NAME,
        operation,
        source,
    }
}

/// A misuse of [`Engine::submit`] (or a request the export cannot take), as an error.
fn invalid_submit(kind: io::ErrorKind, message: String) -> EngineError {
    operation_error("submit", io::Error::new(kind, message))
}

/// The transport and export name of an NBD target.
fn nbd_parts(target: &NetworkTarget) -> Result<(&NbdTransport, &str), EngineError> {
    match target {
        NetworkTarget::Nbd { transport, export } => Ok((transport, export)),
        other => Err(setup_error(
            io::ErrorKind::InvalidInput,
            format!("{other} is not an NBD target"),
        )),
    }
}

/// Connects to the server at `transport` and negotiates `export`, all within `timeout` (or
/// until `stop` is raised); returns the socket in the transmission phase, its receive timeout
/// set to [`WAIT_SLICE`].
fn connect_export(
    address: &ServerAddress,
    export: &str,
    timeout: Duration,
    stop: &StopSignal,
) -> Result<(Socket, Export), EngineError> {
    let server = address.to_string();
    let started = Instant::now();
    let mut socket = Socket::connect(address, later(started, timeout)).map_err(|error| {
        let reason = if error.kind() == io::ErrorKind::TimedOut {
            format!("no answer within {}", format_wait(timeout))
        } else {
            error.to_string()
        };
        setup_error(
            error.kind(),
            format!("cannot connect to {server}: {reason}"),
        )
    })?;
    let negotiated = DeadlineStream::new(&mut socket, started, timeout, stop.flag())
        .map_err(|error| setup_error(error.kind(), format!("{server}: {error}")))
        .and_then(|mut stream| {
            nbd_client::negotiate(&mut stream, export).map_err(|error| match error {
                HandshakeError::Stopped { .. } => EngineError::Stopped {
                    engine: ENGINE_NAME,
                    server: server.clone(),
                    unanswered: 0,
                },
                HandshakeError::TlsRequired { export } => setup_error(
                    io::ErrorKind::Unsupported,
                    format!(
                        "{server}: the server requires TLS for export '{export}', which iopath does not support"
                    ),
                ),
                error => setup_error(error.kind(), format!("{server}: {error}")),
            })
        })?;
    Ok((socket, negotiated))
}

/// Where `transport` says the server is, as the NBD client takes it.
fn server_address(transport: &NbdTransport) -> ServerAddress {
    match transport {
        NbdTransport::Tcp(address) => ServerAddress::Tcp {
            host: address.host.clone(),
            port: address.port,
        },
        NbdTransport::Unix(path) => ServerAddress::Unix(path.clone()),
    }
}

/// Why a wait of the engine ended without what it waited for.
#[derive(Debug)]
enum Trouble {
    /// The connection failed, the server broke the protocol or it stalled ([`Stall`]).
    Io(io::Error),
    /// The run is stopping, and the grace for requests in flight has passed.
    Stopped,
}

impl From<io::Error> for Trouble {
    fn from(error: io::Error) -> Self {
        Trouble::Io(error)
    }
}

/// How the export a later connection found differs from the one the first found.
fn export_changes(first: &Export, found: &Export) -> Vec<VolumeChange> {
    let mut changes = export_volume(found).changes_from(&export_volume(first));
    if changes.is_empty() && found.flags != first.flags {
        changes.push(VolumeChange {
            what: "transmission flags",
            probed: format!("{:#x}", first.flags.0),
            found: format!("{:#x}", found.flags.0),
        });
    }
    changes
}

impl NbdEngine {
    /// Connects to `target` with `options.connections` connections (one when the server does
    /// not announce multi-connection consistency; see [`NbdEngine::connection_note`]) and
    /// `options.queue_depth` slots of `options.buffer_size` bytes. Each connection gets
    /// `options.net_timeout` to connect and finish its handshake; each must find the export
    /// the first found, and the first the one in `options.expected_volume` when given.
    ///
    /// Fails when the server cannot be reached, has no such export or breaks the handshake,
    /// when the queue depth is 0 or above [`MAX_QUEUE_DEPTH`], when write-through is asked
    /// but the server does not support FUA, and when a connection finds another export
    /// ([`EngineError::VolumeChanged`]). Errors name the server and the export.
    pub fn open(target: &NetworkTarget, options: &EngineOptions) -> Result<Self, EngineError> {
        let queue_depth = options.queue_depth;
        if queue_depth == 0 || queue_depth > MAX_QUEUE_DEPTH {
            return Err(setup_error(
                io::ErrorKind::InvalidInput,
                format!("queue depth {queue_depth} is outside 1..={MAX_QUEUE_DEPTH}"),
            ));
        }
        let (transport, export_name) = nbd_parts(target)?;
        let address = server_address(transport);
        let server = address.to_string();
        let timeout = options.net_timeout.max(Duration::from_millis(1));
        let (first, export) = connect_export(&address, export_name, timeout, &options.stop)?;
        let wanted = options.connections.max(1);
        let mut connection_note = None;
        let count = if wanted > 1 && !export.flags.multi_conn() {
            connection_note = Some(format!(
                "the server does not announce NBD_FLAG_CAN_MULTI_CONN; using 1 connection instead of {wanted}"
            ));
            1
        } else if wanted > queue_depth {
            connection_note = Some(format!(
                "{wanted} connections asked, but only {queue_depth} requests are ever in flight; using {queue_depth}"
            ));
            queue_depth
        } else {
            wanted
        };
        let connection = |socket, index: u32| {
            Connection::new(socket, index as u16, server.clone(), queue_depth as usize)
        };
        // From here on a failure drops the engine, which disconnects politely.
        let mut engine = NbdEngine {
            connections: vec![connection(first, 0)],
            slots: Slots::new(BufferPool::new(queue_depth as usize, options.buffer_size)),
            next_connection: 0,
            capabilities: Capabilities {
                max_queue_depth: queue_depth,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
                separates_submission: true,
            },
            export,
            write_flags: if options.write_through {
                wire::CMD_FLAG_FUA
            } else {
                0
            },
            outstanding: 0,
            failure: None,
            reply_timeout: timeout,
            stop: options.stop.clone(),
            stop_deadline: None,
            server: server.clone(),
            poll_set: Vec::with_capacity(count as usize),
            connection_note,
        };
        if let Some(expected) = &options.expected_volume {
            engine.check_volume(1, export_volume(&export).changes_from(expected))?;
        }
        if options.write_through && !export.flags.fua() {
            return Err(setup_error(
                io::ErrorKind::Unsupported,
                format!(
                    "{server}: write-through (FUA on every write) was asked, but the server does not support FUA"
                ),
            ));
        }
        for index in 1..count {
            let (socket, other) = connect_export(&address, export_name, timeout, &options.stop)?;
            engine.connections.push(connection(socket, index));
            engine.check_volume(index as usize + 1, export_changes(&export, &other))?;
        }
        for connection in &engine.connections {
            engine.poll_set.push(libc::pollfd {
                fd: connection.socket().as_raw_fd(),
                events: 0,
                revents: 0,
            });
        }
        Ok(engine)
    }

    /// Refuses connection `connection` (1 = the first) when it found `changes`.
    fn check_volume(
        &self,
        connection: usize,
        changes: Vec<VolumeChange>,
    ) -> Result<(), EngineError> {
        if changes.is_empty() {
            return Ok(());
        }
        Err(EngineError::VolumeChanged {
            engine: ENGINE_NAME,
            server: self.server.clone(),
            connection,
            changes,
        })
    }

    /// What the handshake learnt about the export.
    pub fn export(&self) -> &Export {
        &self.export
    }

    /// Number of connections in use.
    pub fn connection_count(&self) -> usize {
        self.connections.len()
    }

    /// Why fewer connections are in use than were asked for, if so.
    pub fn connection_note(&self) -> Option<&str> {
        self.connection_note.as_deref()
    }

    /// Fails with the earlier failure, if any.
    #[inline]
    fn check_usable(&self, operation: &'static str) -> Result<(), EngineError> {
        match &self.failure {
            None => Ok(()),
            Some(failure) => Err(operation_error(
                operation,
                io::Error::new(
                    io::ErrorKind::NotConnected,
                    format!("the engine failed earlier: {failure}"),
                ),
            )),
        }
    }

    /// Records `trouble` as the end of this engine and returns it as an error of `operation`.
    #[cold]
    fn fail(&mut self, operation: &'static str, trouble: Trouble) -> EngineError {
        match trouble {
            Trouble::Io(error) => {
                self.failure = Some(format!("{operation}: {error}"));
                operation_error(operation, error)
            }
            Trouble::Stopped => {
                let unanswered = self.in_flight();
                self.failure = Some(format!(
                    "the run stopped with {unanswered} requests unanswered"
                ));
                EngineError::Stopped {
                    engine: ENGINE_NAME,
                    server: self.server.clone(),
                    unanswered,
                }
            }
        }
    }

    /// Requests submitted and not answered yet.
    fn in_flight(&self) -> usize {
        self.outstanding - self.slots.ready()
    }

    /// Replies completed and batches of requests sent so far, over every connection: the
    /// server's progress.
    fn progress(&self) -> u64 {
        self.connections.iter().map(Connection::progress).sum()
    }

    /// Reads replies once on every connection that has requests in flight: with `wait`, for at
    /// most [`WAIT_SLICE`] (one blocking `recvmsg` with one connection; `poll` and
    /// non-blocking reads with several); without, one non-blocking read each.
    fn receive(&mut self, wait: bool) -> io::Result<()> {
        if !wait || self.connections.len() == 1 {
            for connection in &mut self.connections {
                if connection.in_flight() > 0 {
                    connection.receive(&mut self.slots, wait)?;
                }
            }
            return Ok(());
        }
        for (entry, connection) in self.poll_set.iter_mut().zip(&self.connections) {
            let interested = connection.in_flight() > 0;
            // A negative descriptor is skipped (hang-ups included).
            entry.fd = if interested {
                connection.socket().as_raw_fd()
            } else {
                -1
            };
            entry.events = libc::POLLIN;
            entry.revents = 0;
        }
        if socket::poll(&mut self.poll_set, WAIT_SLICE)? == 0 {
            return Ok(());
        }
        for (entry, connection) in self.poll_set.iter().zip(&mut self.connections) {
            if entry.revents != 0 {
                connection.receive(&mut self.slots, false)?;
            }
        }
        Ok(())
    }

    /// Reads replies until `done(self)`: fails when the server makes no progress for the reply
    /// timeout, or when the run is stopping and the stop grace has passed.
    fn wait_until(&mut self, done: impl Fn(&NbdEngine) -> bool) -> Result<(), Trouble> {
        let mut watch = Watch::new();
        while !done(self) {
            self.receive(true)?;
            if done(self) {
                break;
            }
            self.check_wait(&mut watch, false)?;
        }
        Ok(())
    }

    /// After a slice of waiting that did not finish the wait: the server's stall (reply
    /// timeout without progress) or the end of the stop grace.
    fn check_wait(&mut self, watch: &mut Watch, sending: bool) -> Result<(), Trouble> {
        let now = Instant::now();
        if watch.expired(now, self.progress(), self.reply_timeout) {
            let stall = if sending {
                Stall::NotTaking {
                    server: self.server.clone(),
                    timeout: self.reply_timeout,
                    in_flight: self.in_flight(),
                }
            } else {
                Stall::NoReply {
                    server: self.server.clone(),
                    timeout: self.reply_timeout,
                    in_flight: self.in_flight(),
                    part_way: self.connections.iter().any(Connection::reply_in_progress),
                }
            };
            return Err(Trouble::Io(stall.into_io()));
        }
        if self.stop.is_raised() {
            let grace = STOP_GRACE.min(self.reply_timeout);
            let until = *self.stop_deadline.get_or_insert_with(|| later(now, grace));
            if now >= until {
                return Err(Trouble::Stopped);
            }
        }
        Ok(())
    }

    /// Sends everything queued on every connection, reading replies while a send buffer is
    /// full.
    fn send_all(&mut self) -> Result<(), Trouble> {
        let mut watch = Watch::new();
        loop {
            let mut blocked = false;
            for connection in &mut self.connections {
                if connection.has_unsent() && !connection.send(&self.slots)? {
                    blocked = true;
                }
            }
            if !blocked {
                return Ok(());
            }
            for (entry, connection) in self.poll_set.iter_mut().zip(&self.connections) {
                entry.events = 0;
                if connection.has_unsent() {
                    entry.events |= libc::POLLOUT;
                }
                if connection.in_flight() > 0 {
                    entry.events |= libc::POLLIN;
                }
                entry.fd = if entry.events != 0 {
                    connection.socket().as_raw_fd()
                } else {
                    -1
                };
                entry.revents = 0;
            }
            socket::poll(&mut self.poll_set, WAIT_SLICE)?;
            for (entry, connection) in self.poll_set.iter().zip(&mut self.connections) {
                if entry.revents & !libc::POLLOUT != 0 && connection.in_flight() > 0 {
                    connection.receive(&mut self.slots, false)?;
                }
            }
            self.check_wait(&mut watch, true)?;
        }
    }

    /// Whether the server answered a request with `ESHUTDOWN` (it must not get more).
    fn shutting_down(&self) -> bool {
        self.connections
            .iter()
            .any(|connection| connection.shutting_down)
    }

    /// Checks `request` against the slots and the export.
    #[inline]
    fn check_request(&self, request: &IoRequest) -> Result<(), EngineError> {
        if request.file != 0 {
            return Err(invalid_submit(
                io::ErrorKind::InvalidInput,
                format!(
                    "file {}: an NBD engine holds one export (file 0)",
                    request.file
                ),
            ));
        }
        let slot = request.slot as usize;
        match self.slots.is_free(slot) {
            None => {
                return Err(invalid_submit(
                    io::ErrorKind::InvalidInput,
                    format!("slot {slot} is not below the queue depth"),
                ));
            }
            Some(false) => {
                return Err(invalid_submit(
                    io::ErrorKind::InvalidInput,
                    format!("slot {slot} is already in flight"),
                ));
            }
            Some(true) => {}
        }
        if request.length as usize > self.slots.buffer_size() {
            return Err(invalid_submit(
                io::ErrorKind::InvalidInput,
                format!(
                    "length {} exceeds the slot's buffer of {} bytes",
                    request.length,
                    self.slots.buffer_size()
                ),
            ));
        }
        if request.direction.modifies() && self.export.flags.read_only() {
            return Err(invalid_submit(
                io::ErrorKind::PermissionDenied,
                "the export is read-only (the server refuses writes and trims)".to_string(),
            ));
        }
        if request.direction == Direction::Trim && !self.export.flags.trim() {
            return Err(invalid_submit(
                io::ErrorKind::Unsupported,
                "the server does not accept trims (it does not advertise NBD_FLAG_SEND_TRIM)"
                    .to_string(),
            ));
        }
        if let Some(sizes) = self.export.block_sizes {
            let minimum = u64::from(sizes.minimum);
            if !request.offset.is_multiple_of(minimum)
                || !u64::from(request.length).is_multiple_of(minimum)
                || request.length > sizes.maximum
            {
                return Err(invalid_submit(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} bytes at offset {} break the export's block size constraints (multiples of {} bytes, at most {})",
                        request.length, request.offset, sizes.minimum, sizes.maximum
                    ),
                ));
            }
        }
        if self.shutting_down() {
            return Err(invalid_submit(
                io::ErrorKind::ConnectionAborted,
                "the server is shutting down (it answered ESHUTDOWN)".to_string(),
            ));
        }
        Ok(())
    }

    /// Best effort at a polite end: waits a little for requests in flight, then sends
    /// `NBD_CMD_DISC` on every connection and closes the sending side.
    fn disconnect(&mut self) {
        if self.failure.is_some() {
            return;
        }
        if self.in_flight() > 0 {
            self.reply_timeout = self.reply_timeout.min(DROP_DRAIN_TIMEOUT);
            let drained = self
                .send_all()
                .and_then(|()| self.wait_until(|engine| engine.in_flight() == 0));
            if drained.is_err() {
                return;
            }
        }
        for connection in &mut self.connections {
            connection.queue_disconnect();
            let _ = connection.send(&self.slots);
            connection.socket().shutdown_write();
        }
    }
}

impl Engine for NbdEngine {
    fn name(&self) -> &'static str {
        ENGINE_NAME
    }

    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// # Panics
    ///
    /// When `slot` is not below the queue depth, or its request has not been reaped yet.
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(
            self.slots.is_free(slot) == Some(true),
            "nbd: buffer of slot {slot} requested while its request is in flight"
        );
        self.slots.buffer_mut(slot)
    }

    /// Queues the request on the next connection (round robin); it is sent at the next
    /// [`Engine::flush`] (or a [`Engine::reap`] that has to wait). A slot out of range or in
    /// flight, a length beyond the buffer, a write to a read-only export and a request that
    /// breaks the export's block size constraints are errors.
    #[inline]
    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        self.check_usable("submit")?;
        self.check_request(&request)?;
        let connection_index = self.next_connection;
        self.next_connection = (connection_index + 1) % self.connections.len();
        let (command, flags) = match request.direction {
            Direction::Read => (wire::CMD_READ, 0),
            Direction::Write => (wire::CMD_WRITE, self.write_flags),
            Direction::Trim => (wire::CMD_TRIM, 0),
        };
        self.slots.begin(
            request.slot as usize,
            connection_index as u16,
            command,
            request.length,
        );
        self.connections[connection_index].queue(
            request.slot,
            &Request {
                flags,
                command,
                handle: u64::from(request.slot),
                offset: request.offset,
                length: request.length,
            },
        );
        self.outstanding += 1;
        Ok(())
    }

    /// Sends every queued request: one gathered `sendmsg` per connection unless a send buffer
    /// fills (then replies are read while waiting for room).
    #[inline]
    fn flush(&mut self) -> Result<(), EngineError> {
        self.check_usable("send requests")?;
        self.send_all()
            .map_err(|trouble| self.fail("send requests", trouble))
    }

    /// Returns parsed completions; reads from the connections only when fewer than
    /// `min_completions` are ready (sending anything still queued first). Never waits for more
    /// than are outstanding, so `reap(n, ..)` with nothing in flight returns 0 at once.
    /// `reap(0, ..)` reads whatever has arrived without waiting.
    #[inline]
    fn reap(
        &mut self,
        min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        self.check_usable("receive replies")?;
        let wanted = min_completions.min(self.outstanding).min(completions.len());
        if self.slots.ready() < wanted {
            if self.connections.iter().any(Connection::has_unsent) {
                self.send_all()
                    .map_err(|trouble| self.fail("send requests", trouble))?;
            }
            self.wait_until(|engine| engine.slots.ready() >= wanted)
                .map_err(|trouble| self.fail("receive replies", trouble))?;
        } else if wanted == 0 && self.in_flight() > 0 {
            self.receive(false)
                .map_err(|error| self.fail("receive replies", Trouble::Io(error)))?;
        }
        let reaped = self.slots.take_ready(completions, |done| Completion {
            slot: done.slot,
            result: done.result,
        });
        self.outstanding -= reaped;
        Ok(reaped)
    }

    /// `NBD_CMD_FLUSH` on the first connection, waiting for its reply (with multi-connection
    /// consistency it covers every connection). Only legal with nothing in flight
    /// (`ResourceBusy` otherwise); `Unsupported` when the server does not support flush; a
    /// failed flush is an error carrying the server's errno.
    fn sync_data(&mut self) -> Result<(), EngineError> {
        self.check_usable("flush")?;
        if self.outstanding > 0 {
            return Err(operation_error(
                "flush",
                io::Error::new(
                    io::ErrorKind::ResourceBusy,
                    "requests are still in flight; reap them first",
                ),
            ));
        }
        if !self.export.flags.flush() {
            return Err(operation_error(
                "flush",
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    "the server does not support NBD_CMD_FLUSH",
                ),
            ));
        }
        self.connections[0].queue_flush();
        let flushed = self.send_all().and_then(|()| {
            self.wait_until(|engine| engine.connections[0].flush != FlushState::Waiting)
        });
        if let Err(trouble) = flushed {
            return Err(self.fail("flush", trouble));
        }
        match std::mem::replace(&mut self.connections[0].flush, FlushState::Idle) {
            FlushState::Done(0) => Ok(()),
            FlushState::Done(error) => Err(operation_error(
                "flush",
                io::Error::from_raw_os_error(wire::errno_of(error)),
            )),
            state => Err(self.fail(
                "flush",
                Trouble::Io(io::Error::other(format!(
                    "the flush ended in state {state:?}"
                ))),
            )),
        }
    }
}

impl Drop for NbdEngine {
    fn drop(&mut self) {
        self.disconnect();
    }
}
