//! A pipelined client core for the Network Block Device protocol (NBD, as specified in the
//! `nbd` project's `doc/proto.md`): blocking sockets, no kernel `nbd` device, no C library,
//! and as many requests in flight as there are slots.
//!
//! The parts:
//!
//! - [`wire`]: the magic numbers, option and reply codes, information types, transmission
//!   flags, block size constraints, and the 28-byte request and 16-byte simple reply headers
//!   (NBD errors as errnos);
//! - [`socket`]: [`Socket`] — TCP (`TCP_NODELAY`) or Unix-domain, connected to a
//!   [`ServerAddress`] by a deadline, with the gathering `sendmsg` (never blocking, never
//!   `SIGPIPE`), scattering `recvmsg` and [`socket::poll`] the transmission phase needs — and
//!   [`DeadlineStream`], one deadline and a stop flag over a whole exchange;
//! - [`handshake`]: [`negotiate`] — fixed newstyle negotiation with `NBD_OPT_GO` asking for
//!   `NBD_INFO_EXPORT` and `NBD_INFO_BLOCK_SIZE` (`NBD_OPT_EXPORT_NAME` only for servers
//!   without `NBD_OPT_GO`); simple replies only, so structured replies are never requested;
//!   TLS is refused ([`HandshakeError::TlsRequired`]); what it learns is an [`Export`];
//! - [`Slots`]: the slot buffers (any [`SlotBuffers`]), each slot's request and the
//!   [`Completion`]s parsed and not taken yet, shared by the connections of one client;
//! - [`Connection`]: one connection's queue of requests (sent as one gathered `sendmsg`,
//!   write payloads straight from the slot buffers) and its reply parser (large read payloads
//!   received straight into the slot buffers);
//! - [`sys`]: the system calls under a socket (`poll`, `sendmsg`, `recvmsg`), each checked and
//!   retried after signals;
//! - [`waiting`]: [`Watch`], the reply timeout restarted by each sign of progress, and
//!   [`Stall`], the error of a server that made none.
//!
//! **Handles are slots**: a request carries its slot number as its handle, so a reply finds
//! its slot without a lookup table, and a reply naming no request in flight on its connection
//! is a protocol error. **Bounded**: the handshake reads at most [`MAX_HANDSHAKE_BYTES`] in at
//! most [`MAX_OPTION_REPLIES`] replies; every blocking wait lasts at most [`WAIT_SLICE`]; text
//! from the server is shown with control characters escaped. Nothing panics on what a server
//! sends (the property tests feed every reader mutated bytes: `cargo test -p nbd-client`).
//! Errors are this crate's own ([`HandshakeError`], [`WaitEnded`], [`Stall`], and
//! `std::io::Error`s that name the server).
//!
//! Two reads in flight on one connection, against a server on `127.0.0.1:10809`:
//!
//! ```no_run
//! use nbd_client::{Completion, Connection, DeadlineStream, ServerAddress, Slots, Socket, negotiate, wire};
//! use std::sync::atomic::AtomicBool;
//! use std::time::{Duration, Instant};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = ServerAddress::Tcp { host: "127.0.0.1".into(), port: 10809 };
//! let started = Instant::now();
//! let timeout = Duration::from_secs(10);
//! let mut socket = Socket::connect(&server, started + timeout)?;
//! let stop = AtomicBool::new(false);
//! let export = negotiate(&mut DeadlineStream::new(&mut socket, started, timeout, &stop)?, "")?;
//! println!("{} bytes, read-only: {}", export.size_bytes, export.flags.read_only());
//!
//! let mut slots = Slots::new(vec![vec![0u8; 4096].into_boxed_slice(); 2]);
//! let mut connection = Connection::new(socket, 0, server.to_string(), 2);
//! for slot in 0..2u32 {
//!     slots.begin(slot as usize, 0, wire::CMD_READ, 4096);
//!     let offset = u64::from(slot) * 4096;
//!     let request = wire::Request { flags: 0, command: wire::CMD_READ, handle: u64::from(slot), offset, length: 4096 };
//!     connection.queue(slot, &request);
//! }
//! while !connection.send(&slots)? {}
//! while slots.ready() < 2 {
//!     connection.receive(&mut slots, true)?;
//! }
//! let mut done = [Completion::default(); 2];
//! assert_eq!(slots.take_ready(&mut done, |completion| completion), 2);
//! assert!(done.iter().all(|completion| completion.result == 4096));
//! println!("first bytes: {:02x?}", &slots.buffer(0)[..16]);
//! # Ok(())
//! # }
//! ```
//!
//! Without a server, the wire format works alone:
//!
//! ```
//! use nbd_client::wire::{self, Reply, Request};
//! // A 4 KiB read at offset 1 MiB, whose reply will carry handle 7.
//! let request = Request { flags: 0, command: wire::CMD_READ, handle: 7, offset: 1 << 20, length: 4096 };
//! let bytes = request.encode();
//! assert_eq!(wire::be_u32(&bytes[..4]), wire::REQUEST_MAGIC);
//! assert_eq!(wire::be_u64(&bytes[16..24]), 1 << 20);
//!
//! // The server's simple reply for that handle, with an error: EIO (5).
//! let mut reply = [0u8; wire::REPLY_BYTES];
//! reply[..4].copy_from_slice(&wire::SIMPLE_REPLY_MAGIC.to_be_bytes());
//! reply[4..8].copy_from_slice(&5u32.to_be_bytes());
//! reply[8..].copy_from_slice(&7u64.to_be_bytes());
//! let reply = Reply::decode(&reply).unwrap();
//! assert_eq!((reply.handle, wire::errno_of(reply.error)), (7, libc::EIO));
//! ```

#![deny(missing_docs)]

mod connection;
pub mod handshake;
#[cfg(any(test, feature = "scripted-server"))]
pub mod scripted;
mod slots;
pub mod socket;
pub mod sys;
pub mod waiting;
pub mod wire;

pub use connection::{Connection, FLUSH_HANDLE, FlushState};
pub use handshake::{
    Export, HandshakeError, MAX_HANDSHAKE_BYTES, MAX_INFO_BYTES, MAX_OPTION_REPLIES,
    MAX_OPTION_REPLY_BYTES, Negotiation, negotiate,
};
pub use slots::{Answered, Completion, SlotBuffers, Slots};
pub use socket::{DeadlineStream, ServerAddress, Socket, WAIT_SLICE, WaitEnded};
pub use waiting::{Stall, Watch};
