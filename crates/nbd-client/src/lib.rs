//! The Network Block Device protocol (NBD, as specified in the `nbd` project's
//! `doc/proto.md`): its wire format, with no I/O of its own, for a client that pipelines
//! requests over a socket it owns.
//!
//! [`wire`] holds the magic numbers of the greeting and of fixed newstyle negotiation
//! ("Handshake phase"), the option and reply codes (`NBD_OPT_GO`, `NBD_REP_INFO`, the
//! `NBD_REP_ERR_*` values with their names), the information types (`NBD_INFO_EXPORT`,
//! `NBD_INFO_BLOCK_SIZE`), the transmission flags ([`wire::TransmissionFlags`]), the block size
//! constraints ([`wire::BlockSizes`]), and the fixed-size headers of the transmission phase:
//! the 28-byte request ([`wire::Request`]) and the 16-byte simple reply ([`wire::Reply`]),
//! with NBD error values mapped to errnos. Every number on the wire is big-endian; headers are
//! read from buffers of their fixed size, and what a server sends is never a panic, only an
//! error that says what was wrong.
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
//!
//! The handshake and the pipelined connection over this format are iopath's NBD engine
//! (`src/engine/nbd/` in the iopath repository) for now.

#![deny(missing_docs)]

pub mod wire;
