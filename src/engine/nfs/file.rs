//! What finding the file of an `nfs://` URL yields ([`NfsFile`]) and why it can fail
//! ([`NfsTargetError`]), for NFSv3 and NFSv4.1 alike.

use super::nfs3::{Attributes, NfsError, TransferLimits};
use crate::targets::network_target::NfsUrl;

/// The file an `nfs://` URL names, as found on the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NfsFile {
    /// The export that holds it.
    pub export: String,
    /// The handle of the directory that holds it.
    pub directory_handle: Vec<u8>,
    /// Its name in that directory.
    pub name: String,
    /// Its handle and attributes, when it exists.
    pub existing: Option<(Vec<u8>, Attributes)>,
    /// Transfer sizes of its file system.
    pub limits: TransferLimits,
    /// Whether this user may not write it (or, when missing, create it).
    pub read_only: bool,
    /// NFSv4.1: the fore channel slots the server granted the probe's session (the most it
    /// grants one); `None` for NFSv3.
    pub session_slots: Option<u32>,
}

/// Why an `nfs://` target cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{url}: {problem}")]
pub struct NfsTargetError {
    /// The target.
    pub url: String,
    /// What went wrong.
    pub problem: String,
    /// The server could not be reached at all (connection refused, timed out).
    pub unreachable: bool,
}

pub(super) fn failed(url: &NfsUrl, what: &str, error: NfsError) -> NfsTargetError {
    let unreachable = matches!(&error, NfsError::Rpc(super::rpc::RpcError::Io(_)));
    NfsTargetError {
        url: url.to_string(),
        problem: format!("{what}: {error}"),
        unreachable,
    }
}
