//! Finding the file an `nfs://HOST[:PORT]/EXPORT/PATH/FILE` URL ([`NfsUrl`]) names (NFSv3
//! here; `?version=4.1` in `super::target4`):
//! MOUNT for the export's root handle (the longest leading part of the path the server
//! exports), LOOKUP for each directory below it and for the file, GETATTR, ACCESS and FSINFO
//! for what the run needs to know.

use super::file::failed;
pub use super::file::{NfsFile, NfsTargetError};
use super::nfs3::{self, ACCESS_WRITE, FileType, Nfs3Session, NfsError};
use super::rpc::Credentials;
use crate::targets::network_target::{NfsUrl, NfsVersion};
use std::time::Duration;

/// A session with `url`'s server as this process, within `timeout` for each connection and
/// reply.
pub(super) fn session(url: &NfsUrl, timeout: Duration) -> Result<Nfs3Session, NfsTargetError> {
    Nfs3Session::open(
        &url.server.host,
        url.server.port,
        timeout,
        Credentials::of_process(),
    )
    .map_err(|error| failed(url, "NFS", error))
}

/// Finds the file `url` names (see the module documentation), within `timeout` for each
/// connection and reply.
pub fn find(url: &NfsUrl, timeout: Duration) -> Result<NfsFile, NfsTargetError> {
    if url.version == NfsVersion::V41 {
        return super::target4::find(url, timeout);
    }
    let credentials = Credentials::of_process();
    let host = url.server.host.as_str();
    let mount_port = match url.mount_port {
        Some(port) => port,
        None => match nfs3::portmap_lookup(host, nfs3::MOUNT_PROGRAM, 3, timeout) {
            Ok(port) if port > 0 => port,
            _ => url.server.port,
        },
    };
    let parts: Vec<&str> = url.path.split('/').filter(|p| !p.is_empty()).collect();
    let (directories, name) = parts.split_at(parts.len() - 1);
    // The longest leading part of the directories that the server exports.
    let mut mounted = None;
    let mut last_error = None;
    for length in (0..=directories.len()).rev() {
        let export = format!("/{}", directories[..length].join("/"));
        match nfs3::mount(host, mount_port, &export, timeout, &credentials) {
            Ok(handle) => {
                mounted = Some((export, handle, length));
                break;
            }
            Err(error @ NfsError::Rpc(_)) => {
                return Err(failed(url, &format!("MOUNT at port {mount_port}"), error));
            }
            Err(error) => {
                if last_error.is_none() {
                    last_error = Some(error);
                }
            }
        }
    }
    let Some((export, root, below)) = mounted else {
        let error = last_error.expect("at least one MOUNT was tried");
        return Err(failed(
            url,
            "no export of the server holds this path",
            error,
        ));
    };
    let mut session = Nfs3Session::open(host, url.server.port, timeout, credentials)
        .map_err(|error| failed(url, "NFS", error))?;
    let mut directory = root;
    let mut walked = export.clone();
    for part in &directories[below..] {
        walked = format!("{}/{part}", walked.trim_end_matches('/'));
        directory = session
            .lookup(&directory, part, &walked)
            .map_err(|error| failed(url, "the directory", error))?;
    }
    let name = name[0].to_string();
    let limits = session
        .fsinfo(&directory, &walked)
        .map_err(|error| failed(url, "FSINFO", error))?;
    let existing = match session.lookup(&directory, &name, &url.path) {
        Ok(handle) => {
            let attributes = session
                .getattr(&handle, &url.path)
                .map_err(|error| failed(url, "the file", error))?;
            if attributes.file_type != FileType::Regular {
                return Err(NfsTargetError {
                    url: url.to_string(),
                    problem: "not a regular file".into(),
                    unreachable: false,
                });
            }
            Some((handle, attributes))
        }
        Err(NfsError::Status { status: 2, .. }) => None,
        Err(error) => return Err(failed(url, "the file", error)),
    };
    let checked = existing.as_ref().map_or(&directory, |(handle, _)| handle);
    let granted = session
        .access(checked, ACCESS_WRITE, &url.path)
        .map_err(|error| failed(url, "ACCESS", error))?;
    Ok(NfsFile {
        export,
        directory_handle: directory,
        name,
        existing,
        limits,
        read_only: granted & ACCESS_WRITE == 0,
        session_slots: None,
    })
}

/// Creates the missing file `file` names (GUARDED: a file that appeared meanwhile is an
/// error, never overwritten) and returns its handle.
pub fn create_file(
    url: &NfsUrl,
    file: &NfsFile,
    timeout: Duration,
) -> Result<Vec<u8>, NfsTargetError> {
    if url.version == NfsVersion::V41 {
        return super::target4::create_file(url, file, timeout);
    }
    let mut session = session(url, timeout)?;
    session
        .create(&file.directory_handle, &file.name, &url.path)
        .map_err(|error| failed(url, "creating the test file", error))
}

/// Removes the file `file` names (a test file iopath created).
pub fn remove_file(url: &NfsUrl, file: &NfsFile, timeout: Duration) -> Result<(), NfsTargetError> {
    if url.version == NfsVersion::V41 {
        return super::target4::remove_file(url, file, timeout);
    }
    let mut session = session(url, timeout)?;
    session
        .remove(&file.directory_handle, &file.name, &url.path)
        .map_err(|error| failed(url, "removing the test file", error))
}

/// The size the server reports for the file `handle` now.
pub fn file_size(url: &NfsUrl, handle: &[u8], timeout: Duration) -> Result<u64, NfsTargetError> {
    if url.version == NfsVersion::V41 {
        return super::target4::file_size(url, handle, timeout);
    }
    let mut session = session(url, timeout)?;
    session
        .getattr(handle, &url.path)
        .map(|attributes| attributes.size_bytes)
        .map_err(|error| failed(url, "GETATTR", error))
}
