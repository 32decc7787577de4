//! Finding the file an `nfs://HOST[:PORT]/PATH/FILE?version=4.1` URL names over NFSv4.1: a
//! client and session of its own ([`Nfs4Client`]), PUTROOTFH and LOOKUP for each directory of
//! the path (in the server's pseudo file system: no MOUNT), GETATTR for the directory's
//! transfer sizes and space, LOOKUP and GETATTR for the file, ACCESS for whether this user may
//! write.

use super::file::{NfsFile, NfsTargetError, failed};
use super::nfs3::{Attributes, FileType, NfsError, TransferLimits};
use super::nfs4::{self, Attributes4, Nfs4Client};
use super::rpc::Credentials;
use crate::targets::network_target::NfsUrl;
use std::time::Duration;

/// Slots the probe's session asks for: more than any queue depth, so the server's answer is
/// the most it grants a session.
pub const PROBE_SLOTS: u32 = 1024;
/// Bytes of a COMPOUND besides the data of its READ or WRITE (RPC header, SEQUENCE, PUTFH,
/// the operation's arguments or result).
pub const COMPOUND_OVERHEAD_BYTES: u32 = 1024;
/// The largest message the probe's and setup sessions ask for (servers grant less).
const ASKED_MESSAGE_BYTES: u32 = (4 << 20) + COMPOUND_OVERHEAD_BYTES;

/// A client and session with `url`'s server as this process, asking for `slots` slots and
/// messages of `message_bytes`, within `timeout` for each connection and reply.
pub(super) fn client(
    url: &NfsUrl,
    timeout: Duration,
    slots: u32,
    message_bytes: u32,
) -> Result<Nfs4Client, NfsTargetError> {
    Nfs4Client::open(
        &url.server.host,
        url.server.port,
        timeout,
        Credentials::of_process(),
        slots,
        message_bytes,
    )
    .map_err(|error| failed(url, "NFSv4.1", error))
}

/// A setup client of `url`'s server (one slot, the largest messages it grants).
pub(super) fn setup_client(url: &NfsUrl, timeout: Duration) -> Result<Nfs4Client, NfsTargetError> {
    client(url, timeout, 1, ASKED_MESSAGE_BYTES)
}

/// The directories of `url`'s path and the file's name.
pub(super) fn components(url: &NfsUrl) -> (Vec<&str>, &str) {
    let mut parts: Vec<&str> = url.path.split('/').filter(|p| !p.is_empty()).collect();
    let name = parts.pop().unwrap_or("");
    (parts, name)
}

/// The file's handle and attributes, or `None` when it is missing.
pub(super) fn look_up_file(
    client: &mut Nfs4Client,
    url: &NfsUrl,
) -> Result<Option<(Vec<u8>, Attributes4)>, NfsError> {
    let (mut parts, name) = components(url);
    parts.push(name);
    match client.lookup(&parts) {
        Ok(handle) => {
            let attributes = client.attributes(&handle, &url.path)?;
            Ok(Some((handle, attributes)))
        }
        Err(NfsError::Status4 {
            status: nfs4::NOENT,
            ref subject,
            ..
        }) if *subject == url.path => Ok(None),
        Err(error) => Err(error),
    }
}

/// Finds the file `url` names (see the module documentation), within `timeout` for each
/// connection and reply; also the slots the server grants a session at most.
pub fn find(url: &NfsUrl, timeout: Duration) -> Result<NfsFile, NfsTargetError> {
    let mut client = client(url, timeout, PROBE_SLOTS, ASKED_MESSAGE_BYTES)?;
    let facts = client.facts().clone();
    let (directories, name) = components(url);
    let directory_path = format!("/{}", directories.join("/"));
    let directory = client.lookup(&directories).map_err(|error| {
        let missing = matches!(
            error,
            NfsError::Status4 {
                status: nfs4::NOENT,
                ..
            }
        );
        let mut refused = failed(url, "the directory", error);
        if missing {
            refused.problem.push_str(
                " (NFSv4.1 paths start at the server's pseudo root: the path is not there, or \
                 its export is not visible to this client)",
            );
        }
        refused
    })?;
    let space = client
        .attributes(&directory, &directory_path)
        .map_err(|error| failed(url, "GETATTR", error))?;
    if space.file_type != 2 {
        return Err(NfsTargetError {
            url: url.to_string(),
            problem: format!("{directory_path} is not a directory"),
            unreachable: false,
        });
    }
    let existing =
        look_up_file(&mut client, url).map_err(|error| failed(url, "the file", error))?;
    if let Some((_, attributes)) = &existing
        && attributes.file_type != nfs4::REGULAR
    {
        return Err(NfsTargetError {
            url: url.to_string(),
            problem: "not a regular file".into(),
            unreachable: false,
        });
    }
    let checked = existing.as_ref().map_or(&directory, |(handle, _)| handle);
    let granted = client
        .access(checked, super::nfs3::ACCESS_WRITE, &url.path)
        .map_err(|error| failed(url, "ACCESS", error))?;
    let session_read = facts
        .max_response_bytes
        .saturating_sub(COMPOUND_OVERHEAD_BYTES);
    let session_write = facts
        .max_request_bytes
        .saturating_sub(COMPOUND_OVERHEAD_BYTES);
    let clamp = |attribute: u64, session: u32| -> u32 {
        let attribute = if attribute == 0 {
            u64::from(session)
        } else {
            attribute
        };
        attribute.min(u64::from(session)) as u32
    };
    let read_max_bytes = clamp(space.max_read_bytes, session_read);
    let write_max_bytes = clamp(space.max_write_bytes, session_write);
    if read_max_bytes == 0 || write_max_bytes == 0 {
        return Err(NfsTargetError {
            url: url.to_string(),
            problem: format!(
                "the session's messages ({} bytes) are too small for any READ or WRITE",
                facts.max_request_bytes.min(facts.max_response_bytes)
            ),
            unreachable: false,
        });
    }
    Ok(NfsFile {
        export: directory_path,
        directory_handle: directory,
        name: name.to_string(),
        existing: existing.map(|(handle, attributes)| {
            (
                handle,
                Attributes {
                    file_type: FileType::Regular,
                    mode: 0,
                    size_bytes: attributes.size_bytes,
                    used_bytes: 0,
                    modified: (0, 0),
                    changed: (0, 0),
                },
            )
        }),
        limits: TransferLimits {
            read_max_bytes,
            read_preferred_bytes: read_max_bytes,
            write_max_bytes,
            write_preferred_bytes: write_max_bytes,
        },
        read_only: granted & super::nfs3::ACCESS_WRITE == 0,
        session_slots: Some(facts.slots),
    })
}

/// Creates the missing file `file` names (OPEN GUARDED4, then CLOSE) and returns its handle.
pub fn create_file(
    url: &NfsUrl,
    file: &NfsFile,
    timeout: Duration,
) -> Result<Vec<u8>, NfsTargetError> {
    let mut client = setup_client(url, timeout)?;
    let (handle, stateid) = client
        .create(&file.directory_handle, &file.name, &url.path)
        .map_err(|error| failed(url, "creating the test file", error))?;
    client
        .close(&handle, stateid, &url.path)
        .map_err(|error| failed(url, "CLOSE", error))?;
    Ok(handle)
}

/// Removes the file `file` names.
pub fn remove_file(url: &NfsUrl, file: &NfsFile, timeout: Duration) -> Result<(), NfsTargetError> {
    setup_client(url, timeout)?
        .remove(&file.directory_handle, &file.name, &url.path)
        .map_err(|error| failed(url, "removing the test file", error))
}

/// The size the server reports for the file `handle` now.
pub fn file_size(url: &NfsUrl, handle: &[u8], timeout: Duration) -> Result<u64, NfsTargetError> {
    setup_client(url, timeout)?
        .attributes(handle, &url.path)
        .map(|attributes| attributes.size_bytes)
        .map_err(|error| failed(url, "GETATTR", error))
}
