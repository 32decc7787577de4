//! The NFS engine: iopath as its own NFSv3 and NFSv4.1 client over TCP (ONC RPC with record
//! marking, AUTH_SYS), with no mount, no kernel client and no library in between.
//!
//! The protocol itself is the `nfs-client` crate (`crates/nfs-client`; its [`xdr`], [`rpc`],
//! [`nfs3`] and [`nfs4`] modules are re-exported here): XDR, ONC RPC with a blocking
//! connection for the calls made before the run, NFSv3 and MOUNT v3 with [`Nfs3Session`],
//! NFSv4.1 COMPOUNDs and sessions with [`nfs4::Nfs4Client`] (`?version=4.1`), status codes
//! in words and [`nfs3::NfsError`] for both versions. This adapter holds what makes it an
//! iopath engine:
//!
//! - `target`: [`find`], which mounts the export of an [`NfsUrl`] and looks the file up
//!   (`target4` for NFSv4.1: from the server's pseudo root, no MOUNT); `file`: what it finds;
//! - `remote`: [`NfsRemoteFile`], the file as a
//!   [`RemoteFileServer`](crate::targets::remote_file::RemoteFileServer) (free space, test
//!   file creation, filling and removal), and [`probe`], what a run learns before any I/O;
//!   `claim`: the proof, which the server's caches cannot fool, that the test file's name
//!   still leads to the test file before it is removed;
//! - `engine`: [`NfsEngine`], READ and WRITE pipelined to the queue depth on one connection
//!   (NFSv4.1: one COMPOUND per I/O on a session and an open of the engine's own, slots to the
//!   queue depth, [`SlotReport`]).
//!
//! A run on `nfs://HOST[:PORT]/EXPORT/PATH/FILE` probes the file ([`probe`]), creates a
//! missing one with `--size` (and removes it afterwards), and opens one [`NfsEngine`] per
//! worker with [`NfsEngine::open_target`].
//!
//! ```no_run
//! use iopath::engine::nfs::{self, NfsEngine, NfsUrl};
//! use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
//! use iopath::result::Direction;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let url = NfsUrl::parse("nfs://127.0.0.1/export/data")?; // an existing file
//! let file = nfs::find(&url, std::time::Duration::from_secs(30))?;
//! let (handle, _attributes) = file.existing.expect("the file exists");
//! let mut engine = NfsEngine::open(&url, handle, &EngineOptions::new(8, 4096))?;
//! engine.submit(IoRequest { file: 0, slot: 0, direction: Direction::Read, offset: 0, length: 4096 })?;
//! engine.flush()?;
//! let mut done = [Completion::default(); 8];
//! assert_eq!(engine.reap(1, &mut done)?, 1);
//! # Ok(())
//! # }
//! ```

mod claim;
mod engine;
mod file;
mod remote;
mod target;
mod target4;

pub use nfs_client::{nfs3, nfs4, rpc, xdr};

pub use crate::targets::network_target::NfsUrl;
pub use engine::{MAX_QUEUE_DEPTH, NfsEngine, REPLY_OVERHEAD_BYTES, SlotReport};
pub use nfs3::Nfs3Session;
pub use remote::{NfsRemoteFile, probe};
pub use target::{NfsFile, NfsTargetError, create_file, file_size, find, remove_file};
