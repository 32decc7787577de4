//! The SMB engine: iopath as its own SMB2/3 client over TCP (SMB 2.1, 3.0, 3.0.2 and 3.1.1;
//! NTLMv2; signing with HMAC-SHA256, AES-128-CMAC or AES-128-GMAC; encryption with AES-128-CCM
//! on 3.0 and 3.0.2, and with AES-128-GCM, AES-128-CCM, AES-256-GCM or AES-256-CCM on 3.1.1),
//! with no mount, no kernel client and no Samba library in between.
//!
//! The protocol itself — the wire format, NTLMv2, key derivation, signing, encryption and
//! the logged-in [`SmbConnection`] — is the `smb-client` crate (`crates/smb-client`; its
//! [`wire`], [`crypto`] and [`connection`] modules are re-exported here). This adapter holds
//! what makes it an iopath engine:
//!
//! - `url`: [`SmbUrl`] to the crate's `ShareAddress`, and [`SmbCredentials`] from the
//!   environment or a credentials file ([`resolve_credentials`]), never from the command line;
//! - `target`: [`find`], [`create_file`], [`remove_file`], [`file_size`];
//! - `remote`: [`SmbRemoteFile`], the file as a remote test file, and [`probe`];
//! - `channel`: the connections of one engine (`--connections`): channels bound to one
//!   session where the server offers multichannel ([`SmbConnection::bind`]), else
//!   independent sessions ([`SmbChannels`]);
//! - `engine`: [`SmbEngine`], READ and WRITE pipelined to the queue depth with credits,
//!   spread over its connections round robin.
//!
//! Not wired to the command line yet: an `smb://` target is refused there ("not supported
//! yet") until test-file creation, the write-safety checks and the storage path are in place.
//!
//! ```no_run
//! use iopath::engine::smb::{self, SmbCredentials, SmbEngine, SmbSecurity, SmbUrl};
//! use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
//! use iopath::result::Direction;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let url = SmbUrl::parse("smb://alice@127.0.0.1/share/data")?;
//! let credentials = smb::resolve_credentials(&url, None, |name| std::env::var(name).ok())?;
//! let mut engine = SmbEngine::open(&url, &credentials, SmbSecurity::default(), &EngineOptions::new(8, 4096), false)?;
//! engine.submit(IoRequest { file: 0, slot: 0, direction: Direction::Read, offset: 0, length: 4096 })?;
//! engine.flush()?;
//! let mut done = [Completion::default(); 8];
//! assert_eq!(engine.reap(1, &mut done)?, 1);
//! # Ok(())
//! # }
//! ```

mod channel;
mod engine;
mod remote;
mod target;
mod url;

pub use crate::targets::network_target::SmbSecurity;
pub use channel::{CreditReport, MAX_CHANNELS, MESSAGE_OVERHEAD_BYTES, SmbChannels};
pub use engine::{MAX_QUEUE_DEPTH, SmbEngine};
pub use remote::{SmbRemoteFile, probe, target_credentials};
pub use smb_client::{SmbConnection, SmbError, SmbSessionFacts, connection, crypto, wire};
pub use target::{
    ServerInterface, SmbFile, SmbTargetError, create_file, file_size, find, remove_file,
};
pub use url::{
    CredentialsError, DOMAIN_VARIABLE, MAX_CREDENTIALS_FILE_BYTES, PASSWORD_VARIABLE, SMB_PORT,
    SmbCredentials, SmbUrl, USER_VARIABLE, resolve_credentials, share_address,
};
