//! The NBD engine: iopath as its own pipelined NBD client, with no kernel `nbd` device and no
//! library in between.
//!
//! The protocol is the `nbd-client` crate (crates/nbd-client, usable without iopath): the wire
//! format, the socket and its `sendmsg` / `recvmsg` / `poll` calls, the fixed newstyle
//! handshake (`NBD_OPT_GO` asking for `NBD_INFO_EXPORT` and `NBD_INFO_BLOCK_SIZE`; simple
//! replies only), the slots shared by a client's connections, one connection's queue and
//! reply parser, and the reply timeout. What is iopath's is here:
//!
//! - `engine`: [`NbdEngine`], the [`crate::engine::Engine`] over one or more of the crate's
//!   connections: requests checked against the export, round robin, waits bounded by the run's
//!   stop signal and `--net-timeout`, and the crate's errors turned into
//!   [`crate::engine::EngineError`]s that name the server and iopath's flags;
//! - `slot_memory`: the engine's aligned buffer pool as the crate's slot memory;
//! - `export_volume`: the export the handshake found as a network volume;
//! - `probe`: [`probe()`], the short look at an export before the run.
//!
//! Design decisions:
//!
//! - **Handles are slots.** Up to the queue depth requests are in flight, each carrying its
//!   slot number as the NBD handle, so a reply finds its slot without a lookup table.
//! - **Several connections** (`EngineOptions::connections`) spread requests round robin, but
//!   only when the server announces `NBD_FLAG_CAN_MULTI_CONN` (its caches are shared, so a
//!   flush or FUA write on one connection covers the others). Without it the engine uses one
//!   connection and says why in [`NbdEngine::connection_note`].
//! - **Flush** ([`crate::engine::Engine::sync_data`]) is `NBD_CMD_FLUSH` on the first
//!   connection, legal only with nothing in flight; with multi-connection consistency that
//!   covers every connection. A server without flush makes it an `Unsupported` error.
//! - **Write-through** (`EngineOptions::write_through`) sets FUA on every write; opening fails
//!   when the server does not support FUA.
//! - **Read-only exports** are refused writes at submit with a clear error, before anything is
//!   sent ([`probe()`] reports `read_only` so a run can refuse earlier).
//! - **Block size constraints**, once announced, are obeyed: a request that breaks them is a
//!   submit error instead of being sent.
//! - **Every connection checks the export** against the first connection's, and the first
//!   against what the probe found (`EngineOptions::expected_volume`): size, block size
//!   constraints, read-only, flush, FUA and trim. A server that changes the export between
//!   connections is refused before any request goes to it.
//! - **Bounded by time and size.** Connecting and the whole handshake share one deadline
//!   (`EngineOptions::net_timeout`, [`crate::engine::volume::DEFAULT_NET_TIMEOUT`] by
//!   default), however slowly the server drips its bytes; the server's option replies are
//!   bounded in number and length ([`MAX_OPTION_REPLIES`], [`MAX_OPTION_REPLY_BYTES`],
//!   [`MAX_INFO_BYTES`], [`MAX_HANDSHAKE_BYTES`]). In the transmission phase the server must
//!   complete a reply (or take a batch of requests) at least once per timeout, and after the
//!   run's stop signal (`EngineOptions::stop`) requests in flight get
//!   [`crate::engine::volume::STOP_GRACE`] before they are abandoned.
//! - **Failures.** A failed request is a completion with a negative errno (`EIO`, `ENOSPC`,
//!   `EINVAL`, `EPERM` …). A dead connection (end of stream, reset, protocol violation, a
//!   server that made no progress for the timeout) fails `flush` / `reap` with an
//!   [`crate::engine::EngineError`] naming the operation; nothing panics on what a server sends.
//! - **Dropping** the engine waits briefly for requests in flight, then sends `NBD_CMD_DISC`.
//!
//! ```no_run
//! use iopath::engine::nbd::{self, NbdEngine};
//! use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
//! use iopath::result::Direction;
//! use iopath::targets::network_target::NetworkTarget;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let target = NetworkTarget::parse("nbd+unix:///?socket=/tmp/nbd.sock")?;
//! let volume = nbd::probe(&target, std::time::Duration::from_secs(30))?;
//! let mut engine = NbdEngine::open(&target, &EngineOptions::new(8, 4096))?;
//! engine.submit(IoRequest { file: 0, slot: 0, direction: Direction::Read, offset: 0, length: 4096 })?;
//! engine.flush()?;
//! let mut done = [Completion::default(); 8];
//! assert_eq!(engine.reap(1, &mut done)?, 1);
//! assert_eq!(done[0], Completion { slot: 0, result: 4096 });
//! assert_eq!(&engine.buffer_mut(0)[..16], &volume.head[..16]);
//! # Ok(())
//! # }
//! ```

mod engine;
#[cfg(test)]
mod engine_tests;
mod export_volume;
mod probe;
mod slot_memory;

pub use engine::{MAX_QUEUE_DEPTH, NbdEngine};
pub use export_volume::export_volume;
pub use nbd_client::wire::{BlockSizes, TransmissionFlags};
pub use nbd_client::{
    Export, HandshakeError, MAX_HANDSHAKE_BYTES, MAX_INFO_BYTES, MAX_OPTION_REPLIES,
    MAX_OPTION_REPLY_BYTES, Negotiation, Stall, WAIT_SLICE, WaitEnded,
};
pub use probe::{HEAD_BYTES, probe};
