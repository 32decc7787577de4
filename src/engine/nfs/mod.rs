//! The NFS engine: iopath as its own NFSv3 client over TCP (ONC RPC with record marking,
//! AUTH_SYS), with no mount, no kernel client and no library in between.
//!
//! The parts:
//!
//! - `xdr`: XDR encoding and bounded decoding;
//! - `rpc`: the ONC RPC call and reply headers, record marking, and a blocking connection
//!   for the calls made before the run;
//! - `nfs3`: NFSv3 and MOUNT v3 procedures, attributes and status codes, [`Nfs3Session`];
//! - `target`: [`NfsUrl`] and [`find`], which mounts the export and looks the file up;
//! - `engine`: [`NfsEngine`], READ and WRITE pipelined to the queue depth on one connection.
//!
//! Not wired to the command line yet: an `nfs://` target is refused there ("not supported
//! yet") until test-file creation, the write-safety checks and the storage path are in place.
//!
//! ```no_run
//! use iopath::engine::nfs::{self, NfsEngine, NfsUrl};
//! use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
//! use iopath::result::Direction;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let url = NfsUrl::parse("nfs://127.0.0.1/export/data")?;
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

mod engine;
pub mod nfs3;
pub mod rpc;
mod target;
pub mod xdr;

pub use engine::{MAX_QUEUE_DEPTH, NfsEngine, REPLY_OVERHEAD_BYTES};
pub use nfs3::Nfs3Session;
pub use target::{NfsFile, NfsTargetError, NfsUrl, create_file, file_size, find, remove_file};
