//! [`NfsError`]: why an NFS call failed, for NFSv3 and NFSv4.1 alike.

use crate::rpc::RpcError;
use crate::status::{nfs3_text, nfs4_text};
use crate::xdr::XdrError;

/// Why a call of an NFSv3 session or an NFSv4.1 client failed.
#[derive(Debug, thiserror::Error)]
pub enum NfsError {
    /// The RPC failed (connection, refusal, malformed reply).
    #[error("{0}")]
    Rpc(#[from] RpcError),
    /// The server answered with a status other than OK.
    #[error("{operation} {subject}: {}", nfs3_text(*status))]
    Status {
        /// The procedure, in words.
        operation: &'static str,
        /// What it was about (a path).
        subject: String,
        /// The NFS or MOUNT status.
        status: u32,
    },
    /// An NFSv4.1 operation answered with a status other than OK.
    #[error("{operation}{}: {}", spaced(subject), nfs4_text(*status))]
    Status4 {
        /// The operation, in words.
        operation: &'static str,
        /// What it was about (a path).
        subject: String,
        /// The NFSv4 status.
        status: u32,
    },
}

/// ` SUBJECT`, or nothing for an empty subject.
fn spaced(subject: &str) -> String {
    if subject.is_empty() {
        String::new()
    } else {
        format!(" {subject}")
    }
}

impl From<XdrError> for NfsError {
    fn from(error: XdrError) -> Self {
        NfsError::Rpc(RpcError::Malformed(error))
    }
}
