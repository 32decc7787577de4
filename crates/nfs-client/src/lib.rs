//! An NFS client core over TCP, blocking, with no mount and no kernel client: XDR, ONC RPC
//! (record marking, AUTH_SYS), NFSv3 with MOUNT v3 and the portmapper, and NFSv4.1
//! (COMPOUNDs, EXCHANGE_ID, sessions and slots, opens and stateids).
//!
//! The parts:
//!
//! - [`xdr`]: XDR encoding ([`xdr::Encoder`]) and bounded decoding ([`xdr::Decoder`], which
//!   fails and never panics on short or oversized data);
//! - [`rpc`]: the call and reply headers, record marking, [`rpc::Credentials`] (AUTH_SYS of
//!   this process) and [`rpc::RpcConnection`], one blocking connection for calls one at a
//!   time; [`rpc::call_header`] and [`rpc::record_mark`] for a caller that pipelines on a
//!   socket of its own;
//! - [`nfs3`]: NFSv3, MOUNT v3 and portmapper procedures and attributes;
//!   [`nfs3::Nfs3Session`], calls one at a time (LOOKUP, GETATTR, FSSTAT, CREATE, WRITE,
//!   COMMIT, RENAME, REMOVE …);
//! - [`nfs4`]: NFSv4.1 COMPOUNDs and [`nfs4::Nfs4Client`] (a session from the server's pseudo
//!   root, no MOUNT);
//! - [`error`]: [`NfsError`], for both versions; [`status`]: NFS, MOUNT and NFSv4 status codes
//!   in words.
//!
//! Everything read from a server is bounded in size, and every wait by the connection's
//! timeout. Unit tests: `cargo test -p nfs-client` (no server needed).
//!
//! ```no_run
//! use nfs_client::nfs3::{self, MOUNT_PROGRAM, Nfs3Session, NFS_PORT};
//! use nfs_client::rpc::Credentials;
//! use std::time::Duration;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let timeout = Duration::from_secs(30);
//! let credentials = Credentials::of_process();
//! let mount_port = nfs3::portmap_lookup("127.0.0.1", MOUNT_PROGRAM, 3, timeout)?;
//! let root = nfs3::mount("127.0.0.1", mount_port, "/export", timeout, &credentials)?;
//! let mut session = Nfs3Session::open("127.0.0.1", NFS_PORT, timeout, credentials)?;
//! let space = session.fsstat(&root, "/export")?;
//! println!("{} bytes free", space.available_bytes);
//! # Ok(())
//! # }
//! ```
//!
//! Without a server, XDR round-trips:
//!
//! ```
//! use nfs_client::xdr::{Decoder, Encoder};
//! let mut encoder = Encoder::default();
//! encoder.u32(7).opaque(b"abc");
//! assert_eq!(encoder.bytes.len(), 4 + 4 + 4); // "abc" padded to four bytes
//! let mut decoder = Decoder::new(&encoder.bytes);
//! assert_eq!(decoder.u32("a number").unwrap(), 7);
//! assert_eq!(decoder.opaque(16, "a name").unwrap(), b"abc");
//! ```

#![deny(missing_docs)]

/// How this client names itself to servers: the open owner and client owner of NFSv4.1, and the
/// AUTH_SYS machine name when the host has none.
pub const CLIENT_NAME: &str = "nfs-client";

pub mod error;
pub mod nfs3;
pub mod nfs4;
pub mod rpc;
pub mod status;
pub mod xdr;

pub use error::NfsError;
