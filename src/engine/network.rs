//! The probe of a network volume before the run: the dispatch to the probe of a target's
//! protocol (what it finds is a [`NetworkVolumeInfo`]; how long it may wait, and what later
//! connections must find, are in [`super::volume`]); and, for a file on a file server, the
//! dispatch to its protocol's [`RemoteFileServer`] (`nfs://`, `smb://`).

use super::volume::NetworkVolumeInfo;
use super::{EngineError, iscsi, nbd, nfs, smb};
use crate::targets::network_target::NetworkTarget;
use crate::targets::remote_file::{RemoteFileError, RemoteFileServer};
use std::time::Duration;

/// The file `target` names on its file server (`nfs://`), found again, for creating, filling
/// and removing it as a test file; `None` for a target that is not a file on a file server.
pub fn remote_file(
    target: &NetworkTarget,
    timeout: Duration,
) -> Option<Result<Box<dyn RemoteFileServer>, RemoteFileError>> {
    match target {
        NetworkTarget::Nfs { url, .. } => Some(
            nfs::NfsRemoteFile::find(url, timeout)
                .map(|file| Box::new(file) as Box<dyn RemoteFileServer>)
                .map_err(|error| RemoteFileError {
                    target: error.url,
                    problem: error.problem,
                }),
        ),
        NetworkTarget::Smb {
            url,
            security,
            credentials_file,
            ..
        } => Some(
            smb::target_credentials(url, credentials_file.as_deref())
                .and_then(|credentials| {
                    smb::SmbRemoteFile::find(url, &credentials, *security, timeout)
                })
                .map(|file| Box::new(file) as Box<dyn RemoteFileServer>)
                .map_err(|error| RemoteFileError {
                    target: error.url,
                    problem: error.problem,
                }),
        ),
        NetworkTarget::Nbd { .. } | NetworkTarget::Iscsi { .. } => None,
    }
}

/// Connects to `target`, learns its geometry and reads its first bytes (for a file on a file
/// server: finds it, or checks that a missing one can be created), waiting at most
/// `timeout` on the server at each step (see [`super::volume::DEFAULT_NET_TIMEOUT`]).
pub fn probe(target: &NetworkTarget, timeout: Duration) -> Result<NetworkVolumeInfo, EngineError> {
    match target {
        NetworkTarget::Nbd { .. } => nbd::probe(target, timeout),
        NetworkTarget::Iscsi { .. } => iscsi::probe(target, timeout),
        NetworkTarget::Nfs { url, create_size } => {
            nfs::probe(url, *create_size, timeout).map_err(|error| EngineError::Setup {
                engine: "nfs",
                source: std::io::Error::other(error.problem),
            })
        }
        NetworkTarget::Smb {
            url,
            create_size,
            security,
            credentials_file,
        } => smb::target_credentials(url, credentials_file.as_deref())
            .and_then(|credentials| smb::probe(url, &credentials, *security, *create_size, timeout))
            .map_err(|error| EngineError::Setup {
                engine: "smb",
                source: std::io::Error::other(error.problem),
            }),
    }
}
