//! One connection in the transmission phase: the requests queued for it, sent as one gathered
//! `sendmsg`, and the replies read from it, parsed as they arrive.
//!
//! **Sending.** A request's 28-byte header is encoded at submit time into a header area sized
//! for the queue depth, in submission order. [`Connection::send`] gathers the whole queue into
//! one `sendmsg`: runs of consecutive headers go as one piece, and each write's payload goes
//! straight from its slot buffer (never copied). A full send buffer ends the call early; the
//! caller then reads replies (so the server can go on answering) and sends the rest.
//!
//! **Receiving.** Reply headers are read into a staging buffer, many per `recvmsg` when small
//! replies arrive together; a read's payload is copied out of the staging buffer only for the
//! part that arrived with the header, and the rest is received straight into the slot buffer
//! (with the staging buffer as the second piece of the same `recvmsg`, to catch the next
//! header). After a large read reply only one header's worth is staged at a time, so large
//! payloads land in their buffers without a copy.
//!
//! A reply that breaks the protocol (bad magic, a handle naming no request in flight) is an
//! `InvalidData` error: the connection cannot be trusted any more.

use crate::slots::{SlotBuffers, Slots};
use crate::socket::Socket;
use crate::wire::{self, Reply, Request};
use std::io::{self, IoSliceMut};

/// Bytes of the staging buffer for reply headers and small payloads.
const STAGING_BYTES: usize = 256 * 1024;

/// A read reply of at least this many bytes switches staging to one header at a time, so the
/// payloads that follow are received without a copy.
const LARGE_PAYLOAD_BYTES: u32 = 16 * 1024;

/// Handle of the flush request (slot handles are below the queue depth).
pub const FLUSH_HANDLE: u64 = u64::MAX;
/// Handle of the disconnect request (which gets no reply).
const DISCONNECT_HANDLE: u64 = u64::MAX - 1;

/// The flush request's progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushState {
    /// No flush outstanding.
    Idle,
    /// Sent (or queued), no reply yet.
    Waiting,
    /// Replied with this NBD error value (0: success).
    Done(u32),
}

/// A read reply whose payload is partly received.
#[derive(Clone, Copy, Debug)]
struct Payload {
    slot: u32,
    received: usize,
    length: usize,
}

/// One queued request: its slot and, for a write, its payload length (0 for anything else).
#[derive(Clone, Copy, Debug)]
struct Queued {
    slot: u32,
    payload: u32,
}

/// The gathered pieces of one send.
///
/// The iovecs point into the connection's header area and into slot buffers. They are built
/// and used within one [`Connection::send`] call (and the calls that finish a partial send),
/// while the connection is exclusively borrowed and the slots are borrowed; slot buffers stay
/// where they are ([`SlotBuffers`]' contract).
struct Iovecs(Vec<libc::iovec>);

// SAFETY: the raw pointers in the iovecs are only dereferenced by the kernel during a `sendmsg`
// made through `&mut` access to the connection (which owns the header area) with the slots
// borrowed; moving both to another thread moves that memory's owners too.
unsafe impl Send for Iovecs {}

/// One connection in the transmission phase, for requests carried by the slots of a
/// [`Slots`] (shared by all connections of one client).
pub struct Connection {
    socket: Socket,
    /// Index among the client's connections (as recorded in each slot).
    index: u16,
    /// Where the server is, for messages.
    server: String,
    /// Encoded request headers in queue order.
    headers: Box<[u8]>,
    /// Requests queued and not yet completely sent.
    queue: Vec<Queued>,
    /// Pieces of the queued requests not yet sent; built by `send`.
    iovecs: Iovecs,
    /// Queued requests already gathered into `iovecs`.
    gathered: usize,
    /// First piece of `iovecs` not completely sent.
    next_iovec: usize,
    staging: Box<[u8]>,
    staged_start: usize,
    staged_end: usize,
    payload: Option<Payload>,
    large_payloads: bool,
    /// Requests (including a flush) sent or queued here and not answered.
    in_flight: u32,
    /// Replies completed plus queues sent completely: the server's progress.
    progress: u64,
    /// The flush request's progress.
    pub flush: FlushState,
    /// The server answered a request with `ESHUTDOWN`.
    pub shutting_down: bool,
}

impl Connection {
    /// A connection over `socket` (already in the transmission phase), number `index` among
    /// the client's, for up to `queue_depth` requests; `server` names the server in messages.
    pub fn new(socket: Socket, index: u16, server: String, queue_depth: usize) -> Self {
        // Room for every slot plus a flush and a disconnect.
        let entries = queue_depth + 2;
        Connection {
            socket,
            index,
            server,
            headers: vec![0; entries * wire::REQUEST_BYTES].into_boxed_slice(),
            queue: Vec::with_capacity(entries),
            iovecs: Iovecs(Vec::with_capacity(2 * entries)),
            gathered: 0,
            next_iovec: 0,
            staging: vec![0; STAGING_BYTES].into_boxed_slice(),
            staged_start: 0,
            staged_end: 0,
            payload: None,
            large_payloads: false,
            in_flight: 0,
            progress: 0,
            flush: FlushState::Idle,
            shutting_down: false,
        }
    }

    /// The socket.
    pub fn socket(&self) -> &Socket {
        &self.socket
    }

    /// Requests sent or queued here and not answered.
    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Replies completed and queues sent completely so far.
    #[inline]
    pub fn progress(&self) -> u64 {
        self.progress
    }

    /// Whether part of a reply has arrived and the rest has not.
    pub fn reply_in_progress(&self) -> bool {
        self.payload.is_some() || self.staged_end > self.staged_start
    }

    /// Whether requests wait to be sent.
    #[inline]
    pub fn has_unsent(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Queues `request` (carried by `slot`, which [`Slots::begin`] marked in flight on this
    /// connection; a write's payload is that slot's buffer). Sent at the next
    /// [`Connection::send`].
    #[inline]
    pub fn queue(&mut self, slot: u32, request: &Request) {
        let at = self.queue.len() * wire::REQUEST_BYTES;
        self.headers[at..at + wire::REQUEST_BYTES].copy_from_slice(&request.encode());
        let payload = if request.command == wire::CMD_WRITE {
            request.length
        } else {
            0
        };
        self.queue.push(Queued { slot, payload });
        if request.command != wire::CMD_DISC {
            self.in_flight += 1;
        }
    }

    /// Queues a flush request.
    pub fn queue_flush(&mut self) {
        self.queue(
            0,
            &Request {
                flags: 0,
                command: wire::CMD_FLUSH,
                handle: FLUSH_HANDLE,
                offset: 0,
                length: 0,
            },
        );
        self.flush = FlushState::Waiting;
    }

    /// Queues the disconnect request.
    pub fn queue_disconnect(&mut self) {
        self.queue(
            0,
            &Request {
                flags: 0,
                command: wire::CMD_DISC,
                handle: DISCONNECT_HANDLE,
                offset: 0,
                length: 0,
            },
        );
    }

    /// Adds the pieces of queued requests not gathered yet to the iovecs.
    fn gather<B: SlotBuffers>(&mut self, slots: &Slots<B>) {
        let headers = self.headers.as_ptr();
        let mut run_start = self.gathered * wire::REQUEST_BYTES;
        let piece = |start: usize, end: usize| libc::iovec {
            // SAFETY: start..end lies inside the header area (at most queue capacity entries).
            iov_base: unsafe { headers.add(start) } as *mut libc::c_void,
            iov_len: end - start,
        };
        for (index, queued) in self.queue.iter().enumerate().skip(self.gathered) {
            if queued.payload > 0 {
                let header_end = (index + 1) * wire::REQUEST_BYTES;
                self.iovecs.0.push(piece(run_start, header_end));
                // Slicing checks that the payload fits its buffer (a panic, never a read past it).
                let payload = &slots.buffer(queued.slot as usize)[..queued.payload as usize];
                self.iovecs.0.push(libc::iovec {
                    iov_base: payload.as_ptr().cast_mut().cast(),
                    iov_len: payload.len(),
                });
                run_start = header_end;
            }
        }
        let end = self.queue.len() * wire::REQUEST_BYTES;
        if run_start < end {
            self.iovecs.0.push(piece(run_start, end));
        }
        self.gathered = self.queue.len();
    }

    /// Sends queued requests; returns `true` when all are sent, `false` when the send buffer
    /// filled first (call again once the socket is writable, with the same `slots`).
    ///
    /// # Panics
    ///
    /// When a queued write names a slot that `slots` lacks, or is longer than its buffer.
    pub fn send<B: SlotBuffers>(&mut self, slots: &Slots<B>) -> io::Result<bool> {
        if self.gathered < self.queue.len() {
            self.gather(slots);
        }
        while self.next_iovec < self.iovecs.0.len() {
            // SAFETY: every iovec from `next_iovec` on describes unsent bytes of the header area
            // (owned by this connection, borrowed exclusively) or of a queued write's slot
            // buffer (its length checked by the caller to fit; the buffer stays in place by
            // `SlotBuffers`' contract, and the slot is in flight, so nothing writes it before
            // the request is sent).
            let sent = match unsafe { self.socket.send_vectored(&self.iovecs.0[self.next_iovec..]) }
            {
                // Nothing taken from a non-empty send: treat it as a full buffer.
                Ok(0) => return Ok(false),
                Ok(sent) => sent,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(error) => return Err(self.sending_failed(error)),
            };
            self.advance(sent);
        }
        self.queue.clear();
        self.iovecs.0.clear();
        self.gathered = 0;
        self.next_iovec = 0;
        self.progress += 1;
        Ok(true)
    }

    /// Marks `sent` bytes from the first unsent piece on as sent.
    fn advance(&mut self, mut sent: usize) {
        while sent > 0 {
            let piece = &mut self.iovecs.0[self.next_iovec];
            if sent >= piece.iov_len {
                sent -= piece.iov_len;
                self.next_iovec += 1;
            } else {
                // SAFETY: the new start stays inside the same piece.
                piece.iov_base = unsafe { piece.iov_base.cast::<u8>().add(sent) }.cast();
                piece.iov_len -= sent;
                sent = 0;
            }
        }
    }

    /// Reads replies once: with `wait`, blocks until data arrives or the socket's receive
    /// timeout (one wait slice) passes; without, returns at once. `Ok(false)` when nothing
    /// arrived. Every complete reply received is parsed (its completion lands in `slots`).
    /// A reply whose handle names no request in flight on this connection, or that breaks
    /// the protocol otherwise, is an `InvalidData` error.
    ///
    /// # Panics
    ///
    /// When a read in flight is longer than its slot's buffer (the caller checks lengths
    /// before [`Slots::begin`]).
    pub fn receive<B: SlotBuffers>(
        &mut self,
        slots: &mut Slots<B>,
        wait: bool,
    ) -> io::Result<bool> {
        if self.staged_start > 0 {
            // Only a partial header can be left over: move it to the front.
            self.staging
                .copy_within(self.staged_start..self.staged_end, 0);
            self.staged_end -= self.staged_start;
            self.staged_start = 0;
        }
        // What is staged is less than one header, so neither window is empty (an empty
        // receive would look like the end of the stream).
        let window_end = if self.large_payloads {
            wire::REPLY_BYTES
        } else {
            self.staging.len()
        };
        let staging = &mut self.staging[self.staged_end..window_end];
        let received = match self.payload {
            Some(payload) => {
                let buffer =
                    &mut slots.buffer_mut(payload.slot as usize)[payload.received..payload.length];
                self.socket.receive_vectored(
                    &mut [IoSliceMut::new(buffer), IoSliceMut::new(staging)],
                    wait,
                )
            }
            None => self
                .socket
                .receive_vectored(&mut [IoSliceMut::new(staging)], wait),
        };
        let mut received = match received {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the server ({}) closed the connection with {} requests in flight",
                        self.server, self.in_flight
                    ),
                ));
            }
            Ok(received) => received,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(error) => return Err(self.receiving_failed(error)),
        };
        if let Some(payload) = &mut self.payload {
            let taken = received.min(payload.length - payload.received);
            payload.received += taken;
            received -= taken;
            if payload.received == payload.length {
                let done = *payload;
                self.payload = None;
                self.finish(slots, done.slot, done.length as i64);
            }
        }
        self.staged_end += received;
        self.parse(slots)?;
        Ok(true)
    }

    /// Completes `slot` with `result`.
    #[inline]
    fn finish<B: SlotBuffers>(&mut self, slots: &mut Slots<B>, slot: u32, result: i64) {
        self.in_flight -= 1;
        self.progress += 1;
        slots.complete(slot, result);
    }

    /// Parses every complete reply in the staging buffer, copying staged payload bytes into
    /// their slot buffers.
    fn parse<B: SlotBuffers>(&mut self, slots: &mut Slots<B>) -> io::Result<()> {
        loop {
            if let Some(payload) = &mut self.payload {
                let staged = self.staged_end - self.staged_start;
                let taken = staged.min(payload.length - payload.received);
                let slot = payload.slot as usize;
                let range = payload.received..payload.received + taken;
                payload.received += taken;
                let done = *payload;
                slots.buffer_mut(slot)[range]
                    .copy_from_slice(&self.staging[self.staged_start..self.staged_start + taken]);
                self.staged_start += taken;
                if done.received < done.length {
                    break;
                }
                self.payload = None;
                self.finish(slots, done.slot, done.length as i64);
                continue;
            }
            if self.staged_end - self.staged_start < wire::REPLY_BYTES {
                break;
            }
            let header = &self.staging[self.staged_start..self.staged_start + wire::REPLY_BYTES];
            let reply = Reply::decode(header).map_err(|message| self.protocol_error(message))?;
            self.staged_start += wire::REPLY_BYTES;
            self.dispatch(slots, reply)?;
        }
        if self.staged_start == self.staged_end {
            self.staged_start = 0;
            self.staged_end = 0;
        }
        Ok(())
    }

    /// Acts on one reply header.
    #[inline]
    fn dispatch<B: SlotBuffers>(&mut self, slots: &mut Slots<B>, reply: Reply) -> io::Result<()> {
        if reply.error == wire::ERROR_SHUTDOWN {
            self.shutting_down = true;
        }
        if reply.handle == FLUSH_HANDLE && self.flush == FlushState::Waiting {
            self.in_flight -= 1;
            self.progress += 1;
            self.flush = FlushState::Done(reply.error);
            return Ok(());
        }
        let answered = slots
            .answer(reply.handle, self.index)
            .map_err(|message| self.protocol_error(message))?;
        if reply.error != 0 {
            let errno = wire::errno_of(reply.error);
            self.finish(slots, answered.slot, -i64::from(errno));
        } else if answered.command == wire::CMD_READ && answered.length > 0 {
            self.large_payloads = answered.length >= LARGE_PAYLOAD_BYTES;
            self.payload = Some(Payload {
                slot: answered.slot,
                received: 0,
                length: answered.length as usize,
            });
        } else {
            self.finish(slots, answered.slot, i64::from(answered.length));
        }
        Ok(())
    }

    /// An `InvalidData` error for a reply that breaks the protocol.
    fn protocol_error(&self, message: String) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "protocol error from the server ({}): {message}",
                self.server
            ),
        )
    }

    /// `error` of a send, with the server named.
    fn sending_failed(&self, error: io::Error) -> io::Error {
        io::Error::new(
            error.kind(),
            format!(
                "sending to the server ({}) with {} requests in flight: {error}",
                self.server, self.in_flight
            ),
        )
    }

    /// `error` of a receive, with the server named.
    fn receiving_failed(&self, error: io::Error) -> io::Error {
        io::Error::new(
            error.kind(),
            format!(
                "receiving from the server ({}) with {} requests in flight: {error}",
                self.server, self.in_flight
            ),
        )
    }
}
