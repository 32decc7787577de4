//! [`SmbRemoteFile`]: a file on an SMB share as a
//! [`RemoteFileServer`](crate::targets::remote_file::RemoteFileServer) (CREATE for its size,
//! `FileFsFullSizeInformation` for free space, CREATE `FILE_CREATE` — never replacing —,
//! WRITE and FLUSH to fill it, delete-on-close through the handle that created it to remove
//! it), and [`probe`], what a run learns about an `smb://` target before any I/O.

use super::target::{
    self, ATTRIBUTES_ACCESS, CREATE, DELETE_ACCESS, NON_DIRECTORY_FILE, OPEN, READ_ACCESS, SmbFile,
    SmbTargetError, WRITE_ACCESS, target_error,
};
use super::url::{SmbCredentials, SmbUrl, resolve_credentials};
use crate::engine::volume::NetworkVolumeInfo;
use crate::result::TransferSizes;
use crate::targets::network_target::SmbSecurity;
use crate::targets::remote_file::{LeftInPlace, RemoteFileError, RemoteFileServer, check_room};
use smb_client::wire::{self, HEADER_BYTES, command, status};
use smb_client::{SmbConnection, SmbError};
use std::time::Duration;

/// What the handle of a created test file may do: read, write, and delete it at the end.
const CREATED_ACCESS: u32 = READ_ACCESS | WRITE_ACCESS | DELETE_ACCESS;

/// A file on an SMB share, found by [`target::find`], with a connection to its server
/// (opened again once when a call finds it broken).
#[derive(Debug)]
pub struct SmbRemoteFile {
    url: SmbUrl,
    credentials: SmbCredentials,
    security: SmbSecurity,
    timeout: Duration,
    found: SmbFile,
    connection: Option<SmbConnection>,
    /// The id of the file this value created, open for writing.
    created: Option<[u8; 16]>,
    /// The server's number of that file, to know it again on a new connection.
    created_number: Option<u64>,
}

impl SmbRemoteFile {
    /// Finds the file `url` names (see [`target::find`]), waiting at most `timeout` for each
    /// connection and reply.
    pub fn find(
        url: &SmbUrl,
        credentials: &SmbCredentials,
        security: SmbSecurity,
        timeout: Duration,
    ) -> Result<Self, SmbTargetError> {
        let found = target::find(url, credentials, security, timeout)?;
        Ok(SmbRemoteFile {
            url: url.clone(),
            credentials: credentials.clone(),
            security,
            timeout,
            found,
            connection: None,
            created: None,
            created_number: None,
        })
    }

    /// What [`target::find`] found.
    pub fn file(&self) -> &SmbFile {
        &self.found
    }

    /// Runs `call` on the connection, opening it first when there is none, and once more on
    /// a fresh connection when it failed (the created file opened again for writing).
    fn with_connection<T>(
        &mut self,
        what: &str,
        mut call: impl FnMut(&mut SmbConnection, Option<[u8; 16]>) -> Result<T, SmbError>,
    ) -> Result<T, RemoteFileError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            if self.connection.is_none() {
                let mut connection =
                    target::connect(&self.url, &self.credentials, self.security, self.timeout)
                        .map_err(remote)?;
                if self.created.is_some() {
                    // The handle died with the old connection: the name is opened again, and
                    // must still lead to the file this value created.
                    let reopened = target::create(
                        &mut connection,
                        &self.url.smb_path(),
                        CREATED_ACCESS,
                        OPEN,
                        NON_DIRECTORY_FILE,
                    )
                    .map_err(|error| self.failed(what, error))?;
                    let number = target::file_number(&mut connection, &reopened.id)
                        .map_err(|error| self.failed(what, error))?;
                    if Some(number) != self.created_number {
                        let _ = target::close(&mut connection, &reopened.id);
                        self.created = None;
                        return Err(self.replaced(what));
                    }
                    self.created = Some(reopened.id);
                }
                self.connection = Some(connection);
            }
            let connection = self.connection.as_mut().expect("opened above");
            match call(connection, self.created) {
                Ok(value) => return Ok(value),
                Err(SmbError::Io(_)) if attempt == 1 => self.connection = None,
                Err(error) => return Err(self.failed(what, error)),
            }
        }
    }

    /// The test file's name leads to another file now: refused while doing `what`.
    fn replaced(&self, what: &str) -> RemoteFileError {
        RemoteFileError {
            target: self.url.to_string(),
            problem: format!("{what}: {}", LeftInPlace::Taken.problem()),
        }
    }

    fn failed(&self, what: &str, error: SmbError) -> RemoteFileError {
        remote(target_error(&self.url, &self.credentials, what, error))
    }
}

fn remote(error: SmbTargetError) -> RemoteFileError {
    RemoteFileError {
        target: error.url,
        problem: error.problem,
    }
}

impl RemoteFileServer for SmbRemoteFile {
    fn target(&self) -> String {
        self.url.to_string()
    }

    fn existing_size(&mut self) -> Result<Option<u64>, RemoteFileError> {
        let path = self.url.smb_path();
        self.with_connection("the file", |connection, _| {
            match target::create(connection, &path, READ_ACCESS, OPEN, NON_DIRECTORY_FILE) {
                Ok(file) => {
                    let _ = target::close(connection, &file.id);
                    Ok(Some(file.size_bytes))
                }
                Err(error) if error.status() == Some(status::OBJECT_NAME_NOT_FOUND) => Ok(None),
                Err(error) => Err(error),
            }
        })
    }

    fn available_bytes(&mut self) -> Result<u64, RemoteFileError> {
        self.with_connection("the share's free space", |connection, _| {
            target::share_space(connection).map(|(_, free)| free)
        })
    }

    fn create_exclusive(&mut self) -> Result<(), RemoteFileError> {
        let path = self.url.smb_path();
        let file = self.with_connection("creating the test file", |connection, _| {
            target::create(
                connection,
                &path,
                CREATED_ACCESS,
                CREATE,
                NON_DIRECTORY_FILE,
            )
        })?;
        self.created = Some(file.id);
        let number = self.with_connection("creating the test file", |connection, created| {
            target::file_number(connection, &created.expect("created above"))
        })?;
        self.created_number = Some(number);
        Ok(())
    }

    fn largest_write_bytes(&self) -> usize {
        self.found.session.max_write_bytes as usize
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<(), RemoteFileError> {
        self.with_connection("filling the test file", |connection, created| {
            let id =
                created.ok_or_else(|| SmbError::Protocol("the file was not created".into()))?;
            let mut body = vec![0u8; 48];
            body[0..2].copy_from_slice(&49u16.to_le_bytes());
            body[2..4].copy_from_slice(&((HEADER_BYTES + 48) as u16).to_le_bytes());
            body[4..8].copy_from_slice(&(data.len() as u32).to_le_bytes());
            body[8..16].copy_from_slice(&offset.to_le_bytes());
            body[16..32].copy_from_slice(&id);
            body.extend_from_slice(data);
            let reply = connection.call(command::WRITE, &body)?;
            let count = if reply.len() >= 8 {
                wire::u32_at(&reply, 4) as usize
            } else {
                0
            };
            if count != data.len() {
                return Err(SmbError::Protocol(format!(
                    "{} wrote {count} of {} bytes",
                    connection.server,
                    data.len()
                )));
            }
            Ok(())
        })
    }

    fn make_durable(&mut self) -> Result<(), RemoteFileError> {
        self.with_connection("flushing the test file", |connection, created| {
            let id =
                created.ok_or_else(|| SmbError::Protocol("the file was not created".into()))?;
            target::flush(connection, &id)
        })
    }

    /// Deletes the test file through the handle that created it (SMB deletes what a handle
    /// opened, not a name), once a fresh open of the name shows the same file number: the
    /// handle stays open meanwhile, so the server cannot give that number to another file.
    /// Another file under the name, or none, is left in place and the error says which.
    fn remove(&mut self) -> Result<(), RemoteFileError> {
        if self.created.is_none() {
            return Err(RemoteFileError {
                target: self.url.to_string(),
                problem: "removing the test file: iopath holds no file it created here".into(),
            });
        }
        let path = self.url.smb_path();
        let expected = self.created_number;
        let found = self.with_connection("removing the test file", |connection, created| {
            let id =
                created.ok_or_else(|| SmbError::Protocol("the test file is not open".into()))?;
            let under_name = match target::create(
                connection,
                &path,
                ATTRIBUTES_ACCESS,
                OPEN,
                NON_DIRECTORY_FILE,
            ) {
                Ok(fresh) => {
                    let number = target::file_number(connection, &fresh.id);
                    let _ = target::close(connection, &fresh.id);
                    Some(number?)
                }
                Err(error) if error.status() == Some(status::OBJECT_NAME_NOT_FOUND) => None,
                Err(error) => return Err(error),
            };
            let ours = under_name.is_some() && under_name == expected;
            if ours {
                target::delete_on_close(connection, &id)?;
            }
            target::close(connection, &id)?;
            Ok((under_name.is_some(), ours))
        });
        self.created = None;
        match found? {
            (_, true) => Ok(()),
            (true, false) => Err(LeftInPlace::Taken.error(self.url.to_string())),
            (false, _) => Err(LeftInPlace::Moved.error(self.url.to_string())),
        }
    }
}

/// The credentials for `url`: from `file` when one is given (`--smb-credentials`), else from
/// the environment (see [`resolve_credentials`]); an error names the target.
pub fn target_credentials(
    url: &SmbUrl,
    file: Option<&std::path::Path>,
) -> Result<SmbCredentials, SmbTargetError> {
    resolve_credentials(url, file, |name| std::env::var(name).ok()).map_err(|error| {
        SmbTargetError {
            url: url.to_string(),
            problem: error.0,
            unreachable: false,
        }
    })
}

/// What the probe of an `smb://` target found: the file as a network volume (its size, or
/// `create_size` when it is missing and to be created) and the server's largest READ and
/// WRITE. Refused, with the target named: an unreachable server, a wrong password, no such
/// share, a missing directory, access denied, a missing file without `create_size`, a missing
/// file on a share this user may not write, a file the share has no room for (both figures),
/// a directory.
pub fn probe(
    url: &SmbUrl,
    credentials: &SmbCredentials,
    security: SmbSecurity,
    create_size: Option<u64>,
    timeout: Duration,
) -> Result<NetworkVolumeInfo, SmbTargetError> {
    let refuse = |problem: String| SmbTargetError {
        url: url.to_string(),
        problem,
        unreachable: false,
    };
    let mut remote_file = SmbRemoteFile::find(url, credentials, security, timeout)?;
    let found = remote_file.file().clone();
    let size_bytes = match (found.existing_size_bytes, create_size) {
        (Some(size), _) => size,
        (None, None) => {
            return Err(refuse(
                "no such file on the share; give --size to create it as a test file (removed \
                 after the run)"
                    .into(),
            ));
        }
        (None, Some(_)) if found.read_only => {
            return Err(refuse(format!(
                "no such file, and share '{}' is read-only for user '{}'",
                url.share, credentials.user
            )));
        }
        (None, Some(size)) => {
            check_room(&mut remote_file, size).map_err(|error| refuse(error.problem))?;
            size
        }
    };
    let session = found.session;
    Ok(NetworkVolumeInfo {
        size_bytes,
        // SMB takes any byte offset and length.
        logical_block_size: 1,
        preferred_block_size: 4096,
        max_request_bytes: session.max_read_bytes.min(session.max_write_bytes),
        read_only: found.read_only,
        // FLUSH, and WRITE_THROUGH writes.
        flush: true,
        fua: true,
        trim: false,
        max_trim_bytes: 0,
        head: Vec::new(),
        to_create: found.existing_size_bytes.is_none(),
        transfer_sizes: Some(TransferSizes {
            read_bytes: session.max_read_bytes,
            write_bytes: session.max_write_bytes,
        }),
        file_session: Some(session.describe()),
        multichannel: session.multichannel,
        server_interfaces: found.interfaces.iter().map(|i| i.describe()).collect(),
        file_handle: None,
    })
}
