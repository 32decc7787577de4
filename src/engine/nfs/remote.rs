//! [`NfsRemoteFile`]: a file on an NFS export as a
//! [`RemoteFileServer`](crate::targets::remote_file::RemoteFileServer) (NFSv3: LOOKUP and
//! GETATTR for its size, FSSTAT for free space, CREATE `GUARDED`, WRITE `UNSTABLE` and COMMIT
//! to fill it; NFSv4.1: the same through COMPOUNDs, GETATTR `space_avail` for free space and
//! OPEN `GUARDED4` then CLOSE to create it; removal only of what the server proves is the test
//! file, see `super::claim`), and [`probe`], what a run learns about an `nfs://` target before
//! any I/O.

use super::claim::{NameCalls, TICK_PAUSE, Times, aside_name, remove_if_ours};
use super::file::{NfsFile, NfsTargetError, failed};
use super::nfs3::{Nfs3Session, NfsError, Stability};
use super::nfs4::{Nfs4Client, Stateid};
use super::rpc::RpcError;
use super::target::{find, session};
use super::target4;
use crate::engine::volume::NetworkVolumeInfo;
use crate::result::TransferSizes;
use crate::targets::network_target::{NfsUrl, NfsVersion};
use crate::targets::remote_file::{RemoteFileError, RemoteFileServer, check_room};
use std::time::Duration;

/// The session a [`NfsRemoteFile`] calls through: NFSv3, or an NFSv4.1 client.
#[derive(Debug)]
enum Session {
    V3(Nfs3Session),
    V41(Nfs4Client),
}

/// A file on an NFS export, found by [`find`], with a session to its server (opened again
/// once when a call finds it broken: the run between creating and removing a test file may
/// outlast the server's idle timeout or the NFSv4.1 lease).
#[derive(Debug)]
pub struct NfsRemoteFile {
    url: NfsUrl,
    file: NfsFile,
    handle: Option<Vec<u8>>,
    session: Option<Session>,
    timeout: Duration,
}

impl NfsRemoteFile {
    /// Finds the file `url` names (see [`find`]), waiting at most `timeout` for each
    /// connection and reply.
    pub fn find(url: &NfsUrl, timeout: Duration) -> Result<Self, NfsTargetError> {
        let file = find(url, timeout)?;
        Ok(NfsRemoteFile {
            url: url.clone(),
            handle: file.existing.as_ref().map(|(handle, _)| handle.clone()),
            file,
            session: None,
            timeout,
        })
    }

    /// What [`find`] found.
    pub fn file(&self) -> &NfsFile {
        &self.file
    }

    /// Runs `call` on the session, opening it first when there is none, and once more on a
    /// fresh session when the connection (or the NFSv4.1 session) failed.
    fn with_session<T>(
        &mut self,
        what: &str,
        mut call: impl FnMut(&mut Session, &NfsFile, Option<&[u8]>) -> Result<T, NfsError>,
    ) -> Result<T, RemoteFileError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            if self.session.is_none() {
                self.session = Some(match self.url.version {
                    NfsVersion::V3 => {
                        Session::V3(session(&self.url, self.timeout).map_err(remote)?)
                    }
                    NfsVersion::V41 => Session::V41(
                        target4::setup_client(&self.url, self.timeout).map_err(remote)?,
                    ),
                });
            }
            let session = self.session.as_mut().expect("opened above");
            match call(session, &self.file, self.handle.as_deref()) {
                Ok(value) => return Ok(value),
                Err(NfsError::Rpc(_)) if attempt == 1 => self.session = None,
                Err(error) => return Err(remote(failed(&self.url, what, error))),
            }
        }
    }

    fn created_handle(&self) -> Result<&[u8], RemoteFileError> {
        self.handle.as_deref().ok_or_else(|| RemoteFileError {
            target: self.url.to_string(),
            problem: "the file was not created".into(),
        })
    }
}

/// The calls of [`super::claim`] on a session, in the directory of `file`.
struct InDirectory<'a> {
    session: &'a mut Session,
    file: &'a NfsFile,
    subject: &'a str,
    /// Set by the first RENAME.
    renaming: &'a mut bool,
}

impl NameCalls for InDirectory<'_> {
    fn set_times(&mut self, handle: &[u8], seconds: u32) -> Result<(), NfsError> {
        match self.session {
            Session::V3(session) => session.set_times(handle, seconds, self.subject),
            Session::V41(client) => client.set_times(handle, seconds, self.subject),
        }
    }

    fn times(&mut self, handle: &[u8]) -> Result<Times, NfsError> {
        Ok(match self.session {
            Session::V3(session) => {
                let attributes = session.getattr(handle, self.subject)?;
                Times {
                    modified_seconds: i64::from(attributes.modified.0),
                    changed: (i64::from(attributes.changed.0), attributes.changed.1),
                }
            }
            Session::V41(client) => {
                let attributes = client.times(handle, self.subject)?;
                Times {
                    modified_seconds: attributes.modified.0,
                    changed: attributes.changed,
                }
            }
        })
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), NfsError> {
        *self.renaming = true;
        let directory = &self.file.directory_handle;
        match self.session {
            Session::V3(session) => session.rename(directory, from, to, self.subject),
            Session::V41(client) => client.rename(directory, from, to, self.subject),
        }
    }

    fn remove(&mut self, name: &str) -> Result<(), NfsError> {
        let directory = &self.file.directory_handle;
        match self.session {
            Session::V3(session) => session.remove(directory, name, self.subject),
            Session::V41(client) => client.remove(directory, name, self.subject),
        }
    }
}

fn remote(error: NfsTargetError) -> RemoteFileError {
    RemoteFileError {
        target: error.url,
        problem: error.problem,
    }
}

impl RemoteFileServer for NfsRemoteFile {
    fn target(&self) -> String {
        self.url.to_string()
    }

    fn existing_size(&mut self) -> Result<Option<u64>, RemoteFileError> {
        let url = self.url.clone();
        self.with_session("the file", |session, file, _| match session {
            Session::V3(session) => {
                match session.lookup(&file.directory_handle, &file.name, &url.path) {
                    Ok(handle) => session
                        .getattr(&handle, &url.path)
                        .map(|attributes| Some(attributes.size_bytes)),
                    Err(NfsError::Status { status: 2, .. }) => Ok(None),
                    Err(error) => Err(error),
                }
            }
            Session::V41(client) => target4::look_up_file(client, &url)
                .map(|found| found.map(|(_, attributes)| attributes.size_bytes)),
        })
    }

    fn available_bytes(&mut self) -> Result<u64, RemoteFileError> {
        let path = self.url.path.clone();
        self.with_session("the free space", |session, file, _| match session {
            Session::V3(session) => session
                .fsstat(&file.directory_handle, &path)
                .map(|space| space.available_bytes),
            Session::V41(client) => client
                .attributes(&file.directory_handle, &file.export)
                .map(|space| space.available_bytes),
        })
    }

    fn create_exclusive(&mut self) -> Result<(), RemoteFileError> {
        let path = self.url.path.clone();
        let handle =
            self.with_session("creating the test file", |session, file, _| match session {
                Session::V3(session) => session.create(&file.directory_handle, &file.name, &path),
                Session::V41(client) => {
                    let (handle, stateid) =
                        client.create(&file.directory_handle, &file.name, &path)?;
                    client.close(&handle, stateid, &path)?;
                    Ok(handle)
                }
            })?;
        self.handle = Some(handle);
        Ok(())
    }

    fn largest_write_bytes(&self) -> usize {
        self.file.limits.write_max_bytes as usize
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<(), RemoteFileError> {
        self.created_handle()?;
        let path = self.url.path.clone();
        self.with_session("filling the test file", |session, _, handle| {
            let handle = handle.expect("created");
            match session {
                Session::V3(session) => {
                    session.write(handle, offset, data, Stability::Unstable, &path)
                }
                // The anonymous stateid: the fill needs no open state to keep across a
                // fresh session.
                Session::V41(client) => {
                    client.write(handle, Stateid::ANONYMOUS, offset, data, &path)
                }
            }
        })
    }

    fn make_durable(&mut self) -> Result<(), RemoteFileError> {
        self.created_handle()?;
        let path = self.url.path.clone();
        self.with_session("committing the test file", |session, _, handle| {
            let handle = handle.expect("created");
            match session {
                Session::V3(session) => session.commit(handle, &path),
                Session::V41(client) => client.commit(handle, &path),
            }
        })
    }

    /// Removes the file by name once the server proves, by what happens to the file
    /// itself (see `engine/nfs/claim.rs`), that the name still leads to the file this value
    /// created: a file that took its place meanwhile is left in place, and an error says
    /// what was done instead.
    fn remove(&mut self) -> Result<(), RemoteFileError> {
        let subject = self.url.path.clone();
        let created = self.created_handle()?.to_vec();
        let aside = aside_name();
        // A fresh session may take over only before the first RENAME: after it, starting the
        // proof again could leave another file under the fresh name.
        let mut renaming = false;
        let removal = self.with_session("removing the test file", |session, file, _| {
            if renaming {
                return Err(RpcError::Refused(format!(
                    "the connection broke after the test file's name was renamed to {aside} for \
                     its removal; whatever is under either name was left in place"
                ))
                .into());
            }
            let mut calls = InDirectory {
                session,
                file,
                subject: &subject,
                renaming: &mut renaming,
            };
            remove_if_ours(&mut calls, &created, (&file.name, &aside), TICK_PAUSE)
        })?;
        match removal {
            None => Ok(()),
            Some(left) => Err(left.error(self.url.to_string())),
        }
    }
}

/// What the probe of an `nfs://` target found: the file as a network volume (its size, or
/// `create_size` when it is missing and to be created) and its transfer sizes. Refused, with
/// the target named: an unreachable server or MOUNT service, a path no export holds, a
/// missing directory, access denied, a missing file without `create_size`, a missing file
/// this user may not create (a read-only export), a file the server has no room for (both
/// figures), something other than a regular file.
pub fn probe(
    url: &NfsUrl,
    create_size: Option<u64>,
    timeout: Duration,
) -> Result<NetworkVolumeInfo, NfsTargetError> {
    let refuse = |problem: String| NfsTargetError {
        url: url.to_string(),
        problem,
        unreachable: false,
    };
    let mut remote_file = NfsRemoteFile::find(url, timeout)?;
    let file = remote_file.file().clone();
    let size_bytes = match (&file.existing, create_size) {
        (Some((_, attributes)), _) => attributes.size_bytes,
        (None, None) => {
            return Err(refuse(
                "no such file on the server; give --size to create it as a test file (removed \
                 after the run)"
                    .into(),
            ));
        }
        (None, Some(_)) if file.read_only => {
            return Err(refuse(format!(
                "no such file, and the server does not let this user create it in its directory \
                 (a read-only export, or no write permission on the directory of export {})",
                file.export
            )));
        }
        (None, Some(size)) => {
            check_room(&mut remote_file, size).map_err(|error| refuse(error.problem))?;
            size
        }
    };
    let limits = file.limits;
    Ok(NetworkVolumeInfo {
        size_bytes,
        // NFS takes any byte offset and length.
        logical_block_size: 1,
        preferred_block_size: limits.read_preferred_bytes.clamp(1, 4096),
        max_request_bytes: limits.read_max_bytes.min(limits.write_max_bytes),
        read_only: file.read_only,
        // COMMIT, and FILE_SYNC writes.
        flush: true,
        fua: true,
        trim: false,
        max_trim_bytes: 0,
        head: Vec::new(),
        to_create: file.existing.is_none(),
        transfer_sizes: Some(TransferSizes {
            read_bytes: limits.read_max_bytes,
            write_bytes: limits.write_max_bytes,
        }),
        file_session: file.session_slots.map(|slots| format!("slots {slots}")),
        multichannel: false,
        server_interfaces: Vec::new(),
        file_handle: file.existing.as_ref().map(|(handle, _)| handle.clone()),
    })
}
