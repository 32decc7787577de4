//! The iSCSI engine: iopath as its own iSCSI initiator, through libiscsi's asynchronous API,
//! with no kernel initiator, no `/dev/sdX` and no mount.
//!
//! libiscsi is loaded at run time ([`libiscsi_available`]): iopath builds and runs without it, and an
//! `iscsi://` target on a machine that lacks it fails before the run with a message naming
//! the package (`libiscsi7`). The parts:
//!
//! - `ffi`: the C types and constants of libiscsi 1.19 that are touched;
//! - `library`: `dlopen` of `libiscsi.so.7` and the table of functions;
//! - `session`: one logged-in session as an RAII type, its event loop, single commands;
//! - `status`: SCSI status and sense data as bytes, errnos and text;
//! - `task`: a finished single command (status, sense, data-in) as an RAII type;
//! - `probe`: what the volume is (size, block sizes, write protection, first bytes);
//! - `engine`: [`IscsiEngine`], the queue-depth engine.
//!
//! CHAP credentials come from the environment, never from the command line:
//! `IOPATH_ISCSI_USER` and `IOPATH_ISCSI_PASSWORD` (both or neither). The initiator presents
//! itself as [`DEFAULT_INITIATOR_IQN`] unless `IOPATH_ISCSI_INITIATOR` names another IQN
//! (targets with ACLs admit only known initiators).
//!
//! ```no_run
//! use iopath::engine::iscsi::{self, IscsiEngine};
//! use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
//! use iopath::result::Direction;
//! use iopath::targets::network_target::NetworkTarget;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let target = NetworkTarget::parse("iscsi://127.0.0.1:3260/iqn.2026-01.org.example:disk/1")?;
//! let volume = iscsi::probe(&target, std::time::Duration::from_secs(30))?;
//! let mut engine = IscsiEngine::open(&target, &EngineOptions::new(8, 4096))?;
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

mod probe;

pub use engine::{IscsiEngine, MAX_QUEUE_DEPTH};
pub use probe::probe;

use super::EngineError;
use crate::targets::network_target::NetworkTarget;
use iscsi_client::library;
use iscsi_client::session::{self, LoginParameters};
use std::io;
use std::time::Duration;

/// Name of this engine on the command line and in errors.
const ENGINE_NAME: &str = "iscsi";

/// Environment variable holding the CHAP user name.
pub const USER_VARIABLE: &str = "IOPATH_ISCSI_USER";
/// Environment variable holding the CHAP secret.
pub const PASSWORD_VARIABLE: &str = "IOPATH_ISCSI_PASSWORD";
/// Environment variable naming the initiator IQN to present.
pub const INITIATOR_VARIABLE: &str = "IOPATH_ISCSI_INITIATOR";
/// The initiator IQN presented when [`INITIATOR_VARIABLE`] is not set.
pub const DEFAULT_INITIATOR_IQN: &str = "iqn.2026-01.dev.iopath:initiator";

/// Checks that libiscsi can be loaded here (`libiscsi.so.7` with every function used).
pub fn libiscsi_available() -> Result<(), EngineError> {
    library::library().map(|_| ()).map_err(setup_message)
}

/// An [`EngineError::Setup`] of this engine.
fn setup_error(source: io::Error) -> EngineError {
    EngineError::Setup {
        engine: ENGINE_NAME,
        source,
    }
}

fn setup_message(message: String) -> EngineError {
    setup_error(io::Error::new(io::ErrorKind::NotFound, message))
}

/// An [`EngineError::Operation`] of this engine.
fn operation_error(operation: &'static str, source: io::Error) -> EngineError {
    EngineError::Operation {
        engine: ENGINE_NAME,
        operation,
        source,
    }
}

/// The CHAP credentials from the environment: both variables or neither.
fn chap_from_environment() -> Result<Option<(String, String)>, io::Error> {
    let read = |name: &str| match std::env::var(name) {
        Ok(value) if !value.is_empty() => Ok(Some(value)),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name} is not valid UTF-8"),
        )),
    };
    match (read(USER_VARIABLE)?, read(PASSWORD_VARIABLE)?) {
        (Some(user), Some(password)) => Ok(Some((user, password))),
        (None, None) => Ok(None),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CHAP needs both {USER_VARIABLE} and {PASSWORD_VARIABLE}"),
        )),
    }
}

/// Where and how to log in for `target`, credentials and initiator name from the environment.
fn login_parameters(target: &NetworkTarget) -> Result<LoginParameters, EngineError> {
    let NetworkTarget::Iscsi {
        portal,
        target_iqn,
        lun,
    } = target
    else {
        return Err(setup_error(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{target} is not an iSCSI target"),
        )));
    };
    let initiator_iqn = std::env::var(INITIATOR_VARIABLE)
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| DEFAULT_INITIATOR_IQN.to_string());
    Ok(LoginParameters {
        portal: portal.to_string(),
        target_iqn: target_iqn.clone(),
        lun: *lun,
        initiator_iqn,
        chap: chap_from_environment().map_err(setup_error)?,
    })
}

/// Connects one session for `target`, waiting at most `timeout` for the login and for each
/// command.
fn connect(target: &NetworkTarget, timeout: Duration) -> Result<session::Session, EngineError> {
    let library = library::library().map_err(setup_message)?;
    let login = login_parameters(target)?;
    log_in(library, &login, timeout)
}

/// Logs one session in; a login refused for want of CHAP says which variables give it.
fn log_in(
    library: &'static library::Library,
    login: &LoginParameters,
    timeout: Duration,
) -> Result<session::Session, EngineError> {
    session::Session::connect(library, login, timeout).map_err(|error| {
        // libiscsi's text for login status 0x0201 (and 0x0202, not authorized).
        let wants_chap = error.kind() == io::ErrorKind::PermissionDenied
            && login.chap.is_none()
            && (error.to_string().contains("Authentication")
                || error.to_string().contains("Authorization"));
        setup_error(if wants_chap {
            io::Error::new(
                error.kind(),
                format!(
                    "{error} (if the target wants CHAP, set {USER_VARIABLE} and \
                     {PASSWORD_VARIABLE})"
                ),
            )
        } else {
            error
        })
    })
}
