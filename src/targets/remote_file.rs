//! A file on a remote file server — an NFS export, an SMB share — used as a test target
//! through iopath's own protocol client, without a mount: the one seam through which a run
//! learns whether the file exists, checks the free space, creates and fills a test file, and
//! removes it afterwards, whatever the protocol.
//!
//! A protocol implements [`RemoteFileServer`] (eight small calls, each a round trip or two);
//! everything else is here and shared:
//!
//! - [`check_room`]: a file to create must fit the server's free space (both figures named);
//! - [`create_test_file`]: an exclusive create (a file that appeared meanwhile is an error,
//!   never overwritten), filled with incompressible data as local test files are, made
//!   durable; the [`RemoteTestFile`] it returns removes the file when dropped or
//!   [`RemoteTestFile::remove`]d, and so does [`remove_registered`] on a forced exit (a second
//!   Ctrl-C). A fill cut short by the stop flag or an error removes what it made.
//!
//! Only a file this process created is ever removed: a [`RemoteTestFile`] exists only for a
//! file [`RemoteFileServer::create_exclusive`] made, and each protocol removes it only when the
//! server proves that the name still leads to that file, by a check its caches cannot fool
//! (NFS: `nfs::claim`; SMB: through the handle that created it); otherwise the file under the
//! name is left in place and the error says why ([`LeftInPlace`]).
//!
//! ```no_run
//! use iopath::targets::remote_file::{RemoteFileServer, check_room, create_test_file};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let url = iopath::targets::network_target::NfsUrl::parse("nfs://127.0.0.1/export/test")?;
//! let mut server = iopath::engine::nfs::NfsRemoteFile::find(&url, std::time::Duration::from_secs(30))?;
//! if server.existing_size()?.is_none() {
//!     check_room(&mut server, 64 << 20)?;
//!     let stop = std::sync::atomic::AtomicBool::new(false);
//!     let file = create_test_file(Box::new(server), 64 << 20, 42, &stop)?.expect("not stopped");
//!     // … the run …
//!     file.remove()?;
//! }
//! # Ok(())
//! # }
//! ```

use crate::fill::fill_random_bytes;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// One file on a remote file server, named when the value was made (by URL), reached by the
/// protocol's own client. Calls wait at most the network timeout the value was made with.
pub trait RemoteFileServer: Send + std::fmt::Debug {
    /// The target as the user named it (a URL without credentials), for messages.
    fn target(&self) -> String;
    /// The file's size now, or `None` when it does not exist.
    fn existing_size(&mut self) -> Result<Option<u64>, RemoteFileError>;
    /// Bytes this user may still write on the share or export (NFS FSSTAT `abytes`, SMB
    /// `FileFsFullSizeInformation`).
    fn available_bytes(&mut self) -> Result<u64, RemoteFileError>;
    /// Creates the missing file, failing when it exists (NFS `GUARDED`, SMB `FILE_CREATE`).
    fn create_exclusive(&mut self) -> Result<(), RemoteFileError>;
    /// The largest single write the server takes, bytes.
    fn largest_write_bytes(&self) -> usize;
    /// Writes all of `data` at `offset` of the created file.
    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<(), RemoteFileError>;
    /// Makes what was written durable (NFS COMMIT, SMB FLUSH).
    fn make_durable(&mut self) -> Result<(), RemoteFileError>;
    /// Removes the file — only when the server proves that the name still leads to the file
    /// [`RemoteFileServer::create_exclusive`] made; anything else is left in place and the
    /// error says what was found ([`LeftInPlace`]).
    fn remove(&mut self) -> Result<(), RemoteFileError>;
}

/// What went wrong with a remote file: `TARGET: PROBLEM`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{target}: {problem}")]
pub struct RemoteFileError {
    /// The target as the user named it.
    pub target: String,
    /// What went wrong, in words.
    pub problem: String,
}

/// Why a test file was not removed: what iopath found instead, and left in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeftInPlace {
    /// The test file no longer exists on the server (removed by someone else).
    Gone,
    /// The test file is no longer under its name (moved away on the server).
    Moved,
    /// Another file is under the test file's name.
    Taken,
    /// The server's answers cannot prove that the name still leads to the test file.
    Unproven,
}

impl LeftInPlace {
    /// What happened, in words.
    pub fn problem(self) -> &'static str {
        match self {
            LeftInPlace::Gone => {
                "the test file no longer exists on the server (removed by someone else); \
                 whatever is under its name was left in place"
            }
            LeftInPlace::Moved => {
                "the test file is no longer under its name (moved away on the server); it was \
                 left in place where it is"
            }
            LeftInPlace::Taken => {
                "another file is under the test file's name (the test file was moved or \
                 replaced on the server); that file is not iopath's and was left in place"
            }
            LeftInPlace::Unproven => {
                "the server's answers cannot prove that the name still leads to the test file \
                 iopath created; it was left in place"
            }
        }
    }

    /// The error of a removal of `target` that left this in place.
    pub fn error(self, target: String) -> RemoteFileError {
        RemoteFileError {
            target,
            problem: self.problem().into(),
        }
    }
}

/// Largest write while filling a test file (less when the server takes less).
const FILL_CHUNK_BYTES: usize = 1 << 20;

/// Refuses a test file of `size_bytes` that the server has no room for, naming both figures.
pub fn check_room(
    server: &mut dyn RemoteFileServer,
    size_bytes: u64,
) -> Result<(), RemoteFileError> {
    let available = server.available_bytes()?;
    if available < size_bytes {
        return Err(RemoteFileError {
            target: server.target(),
            problem: format!(
                "not enough free space for the test file: {} ({size_bytes} bytes) needed, {} \
                 ({available} bytes) available on the server",
                crate::units::format_bytes(size_bytes),
                crate::units::format_bytes(available),
            ),
        });
    }
    Ok(())
}

#[derive(Debug)]
struct Entry {
    server: Box<dyn RemoteFileServer>,
    removed: bool,
}

type Shared = Arc<Mutex<Entry>>;

/// Test files to remove on a forced exit.
static REGISTERED: Mutex<Vec<Shared>> = Mutex::new(Vec::new());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Entry {
    /// Removes the file once.
    fn remove(&mut self) -> Result<(), RemoteFileError> {
        if std::mem::replace(&mut self.removed, true) {
            return Ok(());
        }
        self.server.remove()
    }
}

/// A test file iopath created on a remote server: removed when dropped (errors ignored),
/// by [`RemoteTestFile::remove`] (errors returned), or by [`remove_registered`].
#[derive(Debug)]
pub struct RemoteTestFile {
    entry: Shared,
    target: String,
}

impl RemoteTestFile {
    /// The target as the user named it.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Removes the file now.
    pub fn remove(self) -> Result<(), RemoteFileError> {
        let result = lock(&self.entry).remove();
        lock(&REGISTERED).retain(|entry| !Arc::ptr_eq(entry, &self.entry));
        result
    }
}

impl Drop for RemoteTestFile {
    fn drop(&mut self) {
        let _ = lock(&self.entry).remove();
        lock(&REGISTERED).retain(|entry| !Arc::ptr_eq(entry, &self.entry));
    }
}

/// Removes every remote test file not removed yet (a forced exit); each failure names its
/// file.
pub fn remove_registered() -> Vec<RemoteFileError> {
    let entries = std::mem::take(&mut *lock(&REGISTERED));
    entries
        .iter()
        .filter_map(|entry| lock(entry).remove().err())
        .collect()
}

/// Creates the missing file of `server` (exclusively), fills it with `size_bytes` of
/// incompressible data from `seed` and makes it durable. `Ok(None)` when `stop` was set
/// before it was done (what was made is removed, as on an error).
pub fn create_test_file(
    mut server: Box<dyn RemoteFileServer>,
    size_bytes: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Option<RemoteTestFile>, RemoteFileError> {
    server.create_exclusive()?;
    let target = server.target();
    let chunk_bytes = FILL_CHUNK_BYTES.min(server.largest_write_bytes().max(4096));
    let entry = Arc::new(Mutex::new(Entry {
        server,
        removed: false,
    }));
    lock(&REGISTERED).push(Arc::clone(&entry));
    // From here on, dropping `file` removes what was made.
    let file = RemoteTestFile { entry, target };
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut chunk = vec![0u8; chunk_bytes.min(size_bytes.max(1) as usize)];
    let mut written = 0u64;
    while written < size_bytes {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let length = ((size_bytes - written) as usize).min(chunk.len());
        fill_random_bytes(&mut rng, &mut chunk[..length]);
        lock(&file.entry)
            .server
            .write_at(written, &chunk[..length])?;
        written += length as u64;
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    lock(&file.entry).server.make_durable()?;
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server kept in memory, to check the seam's own logic (the NFS client is tested
    /// against nfs-ganesha in tests/protocols/nas.rs).
    #[derive(Debug, Default)]
    struct Memory {
        file: Option<Vec<u8>>,
        available: u64,
        fail_write_at: Option<u64>,
        log: Arc<Mutex<Vec<&'static str>>>,
    }

    impl RemoteFileServer for Memory {
        fn target(&self) -> String {
            "memory://test".into()
        }
        fn existing_size(&mut self) -> Result<Option<u64>, RemoteFileError> {
            Ok(self.file.as_ref().map(|data| data.len() as u64))
        }
        fn available_bytes(&mut self) -> Result<u64, RemoteFileError> {
            Ok(self.available)
        }
        fn create_exclusive(&mut self) -> Result<(), RemoteFileError> {
            if self.file.is_some() {
                return Err(RemoteFileError {
                    target: self.target(),
                    problem: "exists".into(),
                });
            }
            self.file = Some(Vec::new());
            lock(&self.log).push("create");
            Ok(())
        }
        fn largest_write_bytes(&self) -> usize {
            64 * 1024
        }
        fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<(), RemoteFileError> {
            if self.fail_write_at == Some(offset) {
                return Err(RemoteFileError {
                    target: self.target(),
                    problem: "no space left".into(),
                });
            }
            let file = self.file.as_mut().expect("created");
            assert_eq!(file.len() as u64, offset);
            file.extend_from_slice(data);
            Ok(())
        }
        fn make_durable(&mut self) -> Result<(), RemoteFileError> {
            lock(&self.log).push("durable");
            Ok(())
        }
        fn remove(&mut self) -> Result<(), RemoteFileError> {
            self.file = None;
            lock(&self.log).push("remove");
            Ok(())
        }
    }

    #[test]
    fn room_is_checked_with_both_figures() {
        let mut server = Memory {
            available: 1 << 20,
            ..Memory::default()
        };
        assert!(check_room(&mut server, 1 << 20).is_ok());
        let error = check_room(&mut server, 2 << 20).unwrap_err().to_string();
        assert!(
            error.starts_with("memory://test: ")
                && error.contains("2097152 bytes")
                && error.contains("1048576 bytes"),
            "{error}"
        );
    }

    #[test]
    fn a_created_file_is_filled_incompressibly_and_removed_once() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let server = Memory {
            log: Arc::clone(&log),
            ..Memory::default()
        };
        let stop = AtomicBool::new(false);
        let file = create_test_file(Box::new(server), 200_000, 7, &stop)
            .unwrap()
            .unwrap();
        assert_eq!(
            lock(&file.entry).server.existing_size().unwrap(),
            Some(200_000)
        );
        let entry = Arc::clone(&file.entry);
        assert!(lock(&REGISTERED).iter().any(|e| Arc::ptr_eq(e, &entry)));
        file.remove().unwrap();
        assert!(!lock(&REGISTERED).iter().any(|e| Arc::ptr_eq(e, &entry)));
        assert_eq!(*lock(&log), ["create", "durable", "remove"]);
    }

    #[test]
    fn a_stopped_or_failed_fill_removes_what_it_made() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = AtomicBool::new(true);
        let server = Memory {
            log: Arc::clone(&log),
            ..Memory::default()
        };
        assert!(
            create_test_file(Box::new(server), 1 << 20, 7, &stop)
                .unwrap()
                .is_none()
        );
        let failing = Memory {
            log: Arc::clone(&log),
            fail_write_at: Some(64 * 1024),
            ..Memory::default()
        };
        let error =
            create_test_file(Box::new(failing), 1 << 20, 7, &AtomicBool::new(false)).unwrap_err();
        assert_eq!(error.problem, "no space left");
        assert_eq!(*lock(&log), ["create", "remove", "create", "remove"]);
    }

    #[test]
    fn an_existing_file_is_never_created_over_nor_removed() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let server = Memory {
            file: Some(vec![1; 10]),
            log: Arc::clone(&log),
            ..Memory::default()
        };
        assert!(create_test_file(Box::new(server), 10, 7, &AtomicBool::new(false)).is_err());
        assert!(lock(&log).is_empty());
    }
}
