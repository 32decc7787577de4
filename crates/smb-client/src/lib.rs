//! An SMB2/3 client core over TCP, with no mount, no kernel client and no Samba library:
//! SMB 2.1, 3.0, 3.0.2 and 3.1.1; NTLMv2; signing with HMAC-SHA256, AES-128-CMAC or
//! AES-128-GMAC; encryption with AES-128-CCM on 3.0 and 3.0.2, and with AES-128-GCM,
//! AES-128-CCM, AES-256-GCM or AES-256-CCM on 3.1.1. Blocking, one thread per connection.
//!
//! The parts:
//!
//! - [`wire`]: the SMB2 header, command codes, NT status codes and little-endian helpers;
//! - [`crypto`]: SP 800-108 key derivation, the 3.1.1 preauthentication hash, signing
//!   ([`crypto::Signer`]) and encryption ([`crypto::Sealer`], with this crate's own AES-CCM);
//! - [`connection`]: [`SmbConnection`] — over a TCP stream the caller connected, NEGOTIATE, SESSION_SETUP with NTLMv2, TREE_CONNECT,
//!   then one request at a time ([`SmbConnection::call`]); further connections bound to the
//!   session as channels (multichannel, [`SmbConnection::bind`]); the framing helpers
//!   ([`connection::finish_frame`], [`connection::open_frame`]) a caller needs to pipeline
//!   READ and WRITE on the connection's socket itself;
//! - [`Credentials`] (who logs in; `Debug` hides the password) and [`ShareAddress`] (the
//!   server and share).
//!
//! Errors are [`SmbError`]s whose messages name the server; every message received is
//! bounded ([`connection::MAX_SETUP_MESSAGE_BYTES`]) and every wait has the connection's
//! timeout. The signing and encryption code is checked against published known-answer
//! vectors in its unit tests (`cargo test -p smb-client`).
//!
//! ```no_run
//! use smb_client::wire::{self, command};
//! use smb_client::{Credentials, ShareAddress, SmbConnection, SmbSecurity};
//! use std::net::{TcpStream, ToSocketAddrs};
//! use std::time::Duration;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let share = ShareAddress { host: "127.0.0.1".into(), port: 445, share: "data".into() };
//! let credentials = Credentials {
//!     user: "alice".into(),
//!     password: std::env::var("SMB_PASSWORD")?,
//!     domain: String::new(),
//! };
//! let security = SmbSecurity { sign: true, encrypt: false };
//! let timeout = Duration::from_secs(10);
//! let address = (share.host.as_str(), share.port).to_socket_addrs()?.next().ok_or("no address")?;
//! let stream = TcpStream::connect_timeout(&address, timeout)?;
//! let mut connection = SmbConnection::open(stream, &share, &credentials, security, timeout)?;
//! println!("{}", connection.facts.describe()); // e.g. "SMB 3.1.1, signed (AES-128-GMAC)"
//! // QUERY_INFO of the share's file system size (FileFsFullSizeInformation) would go here:
//! // build the body, then `connection.call(command::QUERY_INFO, &body)?`.
//! let _ = (wire::HEADER_BYTES, &mut connection);
//! # Ok(())
//! # }
//! ```
//!
//! Without a server, the pieces work alone — here a signature made and checked:
//!
//! ```
//! use smb_client::crypto::Signer;
//! let signer = Signer::new(true, &[7; 16]); // SMB 3.x: AES-128-CMAC
//! let mut message = vec![0u8; 64 + 8];
//! message[..4].copy_from_slice(&smb_client::wire::PROTOCOL_ID);
//! signer.sign(&mut message);
//! assert!(signer.verify(&mut message));
//! message[70] ^= 1;
//! assert!(!signer.verify(&mut message));
//! ```

#![deny(missing_docs)]

mod ccm;
pub mod connection;
mod credentials;
pub mod crypto;
mod ntlm;
mod share;
pub mod wire;

pub use connection::{SmbConnection, SmbError, SmbSecurity, SmbSessionFacts};
pub use credentials::Credentials;
pub use share::{SMB_PORT, ShareAddress};
