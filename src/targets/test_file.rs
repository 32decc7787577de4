//! Test files iopath creates: sizing from free space, creation filled with incompressible data
//! (or only sized, for jobs that only write them), the ownership mark, and removal (also on
//! Ctrl-C).
//!
//! A file iopath created carries the extended attribute [`OWNERSHIP_XATTR`]; such a file may be
//! overwritten without `--allow-destructive`. On filesystems without user extended attributes
//! the mark cannot be recorded, and the file then counts as not created by iopath.
//!
//! Filling stops early when asked ([`create_test_file_unless_stopped`]): the partial file is
//! removed and the caller learns that creation was stopped, not failed.
//!
//! Files to remove on a forced exit are kept in a process-wide registry that a signal-handling
//! thread can drain with [`remove_registered_files`]; [`TestFileGuard`] registers its file and
//! removes it when dropped. Removal, by either, only ever deletes a file this process created
//! (same path, device and inode): a guard or registration made for a path that turned out to
//! exist already leaves that file alone.
//!
//! ```
//! use iopath::targets::test_file::{TestFileGuard, is_created_by_iopath};
//! let directory = std::env::temp_dir().join(format!("iopath-test-file-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&directory).unwrap();
//! let path = directory.join("iopath.test");
//! {
//!     let guard = TestFileGuard::create(&path, 1 << 20, 42).unwrap();
//!     assert_eq!(std::fs::metadata(guard.path()).unwrap().len(), 1 << 20);
//! }
//! assert!(!path.exists()); // removed when the guard was dropped
//! std::fs::remove_dir(&directory).unwrap();
//! ```

use super::{TargetError, sys};
use crate::fill::fill_random_bytes;
use crate::gate::created::{self, FileIdentity, NewFileAccess};
use crate::result::Preallocation;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Extended attribute marking a file as created by iopath (value `"1"`).
pub const OWNERSHIP_XATTR: &str = "user.iopath.test-file";

/// Largest default test file: 1 GiB.
pub const DEFAULT_TEST_FILE_BYTES: u64 = 1 << 30;

/// Smallest default test file: 64 MiB. Less than this measures caches, not storage.
pub const MINIMUM_DEFAULT_TEST_FILE_BYTES: u64 = 64 << 20;

/// Size of each write while filling a test file.
const FILL_CHUNK_BYTES: usize = 1 << 20;

/// While filling, written data is handed to the device in steps of this size, and at most two
/// steps are dirty in the page cache: the final fsync, which no signal can cut short, stays
/// short.
const WRITE_BACK_STEP_BYTES: u64 = 64 << 20;

const MIB: u64 = 1 << 20;

/// Start of the name of a temporary test file: `.iopath-test-PID.tmp`.
pub const TEMPORARY_PREFIX: &str = ".iopath-test-";

/// End of the name of a temporary test file.
pub const TEMPORARY_SUFFIX: &str = ".tmp";

/// The temporary test file this process uses in `directory`: `.iopath-test-PID.tmp`.
pub fn temporary_test_file_path(directory: &Path) -> PathBuf {
    directory.join(format!(
        "{TEMPORARY_PREFIX}{}{TEMPORARY_SUFFIX}",
        std::process::id()
    ))
}

/// The process id in the name of a temporary test file (`.iopath-test-PID.tmp`, PID in decimal
/// digits, 1 to 2^31 − 1); `None` for any other name.
pub fn temporary_test_file_pid(name: &OsStr) -> Option<i32> {
    let digits = name
        .to_str()?
        .strip_prefix(TEMPORARY_PREFIX)?
        .strip_suffix(TEMPORARY_SUFFIX)?;
    if digits.is_empty() || digits.len() > 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<i32>().ok().filter(|pid| *pid > 0)
}

/// A temporary test file left behind by a run that was killed (SIGKILL, a crash, a power
/// cut) before it could remove it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleTestFile {
    /// Where it is.
    pub path: PathBuf,
    /// The process that created it, which is gone.
    pub pid: i32,
    /// Its size.
    pub size_bytes: u64,
    /// Which file it was when found.
    identity: FileIdentity,
}

/// Temporary test files in `directory` whose process is gone: named `.iopath-test-PID.tmp`, a
/// regular file (not a link), and no process PID on this machine. Nothing is changed. A
/// directory that cannot be read gives none.
///
/// A run in another PID namespace (a container) sharing the directory has a PID this process
/// cannot see, so its test file looks stale here; see docs/safety.md.
pub fn find_stale_test_files(directory: &Path) -> Vec<StaleTestFile> {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return Vec::new();
    };
    let mut stale: Vec<StaleTestFile> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| stale_test_file(&entry.path()))
        .collect();
    stale.sort_by(|a, b| a.path.cmp(&b.path));
    stale
}

/// `path` as a stale test file, when it is one.
fn stale_test_file(path: &Path) -> Option<StaleTestFile> {
    let pid = temporary_test_file_pid(path.file_name()?)?;
    if pid as u32 == std::process::id() || sys::process_exists(pid) {
        return None;
    }
    let metadata = std::fs::symlink_metadata(path).ok()?;
    metadata.file_type().is_file().then(|| StaleTestFile {
        path: path.to_path_buf(),
        pid,
        size_bytes: metadata.len(),
        identity: FileIdentity::of(&metadata),
    })
}

/// Removes `file` when it still is the stale test file that was found: the same name, the
/// same regular file (device and inode), and its process still gone. Anything else is left
/// alone and reported as an error naming the path.
pub fn remove_stale_test_file(file: &StaleTestFile) -> Result<(), TargetError> {
    let left_alone = || TargetError::Unusable {
        path: file.path.clone(),
        reason: "changed since it was found stale; left alone".into(),
    };
    let unchanged = stale_test_file(&file.path)
        .is_some_and(|now| now.pid == file.pid && now.identity == file.identity);
    if !unchanged {
        return Err(left_alone());
    }
    match created::remove_if_identical(&file.path, file.identity) {
        Ok(true) => Ok(()),
        Ok(false) => Err(left_alone()),
        Err(source) => Err(TargetError::Io {
            path: file.path.clone(),
            operation: "remove the stale test file",
            source,
        }),
    }
}

/// Checks that a test file can be created in `directory`: it exists, is a directory and is
/// writable (not on a read-only filesystem). Every message names the directory.
pub fn check_test_file_directory(directory: &Path) -> Result<(), TargetError> {
    let metadata = std::fs::metadata(directory).map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => TargetError::Missing {
            path: directory.to_path_buf(),
        },
        _ => TargetError::Io {
            path: directory.to_path_buf(),
            operation: "inspect the directory for the test file",
            source: error,
        },
    })?;
    if !metadata.is_dir() {
        return Err(TargetError::Unusable {
            path: directory.to_path_buf(),
            reason: "is not a directory; the test file needs a directory to live in".to_string(),
        });
    }
    crate::gate::check_writable(directory).map_err(|error| TargetError::Unusable {
        path: directory.to_path_buf(),
        reason: format!(
            "directory is not writable, so no test file can be created there ({error})"
        ),
    })?;
    Ok(())
}

/// Default size of the temporary test file: 1 GiB where there is room, never more than a quarter
/// of the free space of `directory` (rounded down to MiB).
///
/// Fails when `directory` is missing, not a directory or not writable, and when a quarter of the
/// free space is below [`MINIMUM_DEFAULT_TEST_FILE_BYTES`]; every message names the directory.
pub fn default_test_file_size(directory: &Path) -> Result<u64, TargetError> {
    check_test_file_directory(directory)?;
    let free_bytes = sys::available_bytes(directory).map_err(|source| TargetError::Io {
        path: directory.to_path_buf(),
        operation: "statvfs",
        source,
    })?;
    let size_bytes = (free_bytes / 4).min(DEFAULT_TEST_FILE_BYTES) / MIB * MIB;
    if size_bytes < MINIMUM_DEFAULT_TEST_FILE_BYTES {
        return Err(TargetError::Unusable {
            path: directory.to_path_buf(),
            reason: format!(
                "only {} MiB free; a default test file (a quarter of the free space, at least {} \
                 MiB) needs {} MiB free; free some space or give the size explicitly",
                free_bytes / MIB,
                MINIMUM_DEFAULT_TEST_FILE_BYTES / MIB,
                4 * MINIMUM_DEFAULT_TEST_FILE_BYTES / MIB,
            ),
        });
    }
    Ok(size_bytes)
}

/// Checks that the files to be created (path and size each) fit in the free space of their
/// file systems, all of them together, before any is created: a run that would fill the disk
/// midway is refused up front, naming the directory, what is needed and what is free.
///
/// Files are grouped by the file system of their directory (its device number), so two test
/// files in one directory, or in two directories of one file system, are added up. A file
/// system that counts no blocks at all (ramfs) is not checked.
pub fn check_room_for(files: &[(&Path, u64)]) -> Result<(), TargetError> {
    use std::os::unix::fs::MetadataExt;
    let mut needs: Vec<(u64, &Path, u64, usize)> = Vec::new();
    for &(path, size) in files {
        let directory = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let device = std::fs::metadata(directory)
            .map_err(|source| TargetError::Io {
                path: directory.to_path_buf(),
                operation: "stat",
                source,
            })?
            .dev();
        match needs.iter_mut().find(|need| need.0 == device) {
            Some(need) => {
                need.2 = need.2.saturating_add(size);
                need.3 += 1;
            }
            None => needs.push((device, directory, size, 1)),
        }
    }
    for (_, directory, needed, count) in needs {
        let free_bytes =
            sys::counted_available_bytes(directory).map_err(|source| TargetError::Io {
                path: directory.to_path_buf(),
                operation: "statvfs",
                source,
            })?;
        // A filesystem that counts no blocks (ramfs) cannot say; the fill finds out.
        let Some(free_bytes) = free_bytes else {
            continue;
        };
        if needed > free_bytes {
            let files = if count == 1 {
                "a test file".to_string()
            } else {
                format!("{count} test files")
            };
            return Err(TargetError::Unusable {
                path: directory.to_path_buf(),
                reason: format!(
                    "{files} of {} in all would not fit: only {} are free; give a smaller \
                     --size (or free some space)",
                    crate::units::format_bytes(needed),
                    crate::units::format_bytes(free_bytes),
                ),
            });
        }
    }
    Ok(())
}

/// How the creation of a test file ended.
#[derive(Debug)]
pub enum Creation {
    /// The file is there, filled and synced; still open (write-only).
    Created(File),
    /// The stop flag was set while filling: the partial file was removed.
    Stopped,
}

/// Creates `path` (which must not exist) with `size_bytes` of incompressible data from `seed`,
/// marks it as created by iopath, and returns it still open (write-only), so that the caller
/// can go on with the very file created whatever happens to the path meanwhile.
///
/// The data is written in 1 MiB chunks, written back as it goes (at most 128 MiB dirty),
/// flushed with fsync, and dropped from the page cache, so a test does not start with the file
/// cached. If anything fails midway (no space left, an I/O error), the partial file is removed
/// and the error names `path`. While being filled the file is in the removal registry, so a
/// forced exit removes it too.
pub fn create_test_file(path: &Path, size_bytes: u64, seed: u64) -> Result<File, TargetError> {
    match create_test_file_unless_stopped(path, size_bytes, seed, &AtomicBool::new(false))? {
        Creation::Created(file) => Ok(file),
        Creation::Stopped => unreachable!("a stop flag nobody sets was set"),
    }
}

/// Creates `path` (which must not exist) without writing any data into it, sized as
/// `preallocation` says (fio's `fallocate=`; [`Preallocation::None`]: empty, as fio's
/// `create_on_open` makes it), marks it as created by iopath, and returns it still open
/// (write-only): the file of jobs whose writes put the data in. Where the file system cannot
/// preallocate, `Native` and `Keep` leave the file empty, as fio's do. On a failure (no space
/// left) the file is removed and the error names `path`.
pub fn create_sized_test_file(
    path: &Path,
    size_bytes: u64,
    preallocation: Preallocation,
) -> Result<File, TargetError> {
    let file = create_new(path)?;
    match size_and_mark(&file, size_bytes, preallocation) {
        Ok(()) => Ok(file),
        Err((operation, source)) => {
            drop(file);
            let _ = created::remove_created(path);
            Err(TargetError::Io {
                path: path.to_path_buf(),
                operation,
                source,
            })
        }
    }
}

/// Gives `file` its size as `preallocation` says and sets the ownership mark.
fn size_and_mark(
    file: &File,
    size_bytes: u64,
    preallocation: Preallocation,
) -> Result<(), (&'static str, io::Error)> {
    let sized = match preallocation {
        Preallocation::None => Ok(()),
        Preallocation::Native => sys::preallocate(file, size_bytes),
        Preallocation::Posix => sys::posix_preallocate(file, size_bytes),
        Preallocation::Keep => sys::preallocate_keeping_size(file, size_bytes),
        Preallocation::Truncate => file.set_len(size_bytes),
    };
    match sized {
        // As fio's `native` and `keep`: a file system that cannot preallocate leaves the
        // file as it is, and the writes extend it.
        Err(error)
            if matches!(preallocation, Preallocation::Native | Preallocation::Keep)
                && cannot_preallocate(&error) => {}
        Err(error) => return Err(("size the test file", error)),
        Ok(()) => {}
    }
    mark_as_created(file).map_err(|error| ("mark the test file as created by iopath", error))
}

/// Whether `error` says that the file system cannot preallocate (rather than that it is full
/// or failed).
fn cannot_preallocate(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL)
    )
}

/// Creates `path` like [`create_test_file`], looking at `stop` before every chunk: once it is
/// set, the partial file is removed and [`Creation::Stopped`] returned.
pub fn create_test_file_unless_stopped(
    path: &Path,
    size_bytes: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Creation, TargetError> {
    let creation = create_registered(path, size_bytes, seed, stop)?;
    unregister(path);
    Ok(creation)
}

/// Creates and fills `path` like [`create_test_file_unless_stopped`], leaving it in the
/// removal registry when created.
fn create_registered(
    path: &Path,
    size_bytes: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Creation, TargetError> {
    let file = create_new(path)?;
    register_for_removal(path);
    let outcome = fill_and_mark(&file, size_bytes, seed, stop);
    if matches!(outcome, Ok(true)) {
        return Ok(Creation::Created(file));
    }
    drop(file);
    let _ = created::remove_created(path);
    unregister(path);
    match outcome {
        Ok(_) => Ok(Creation::Stopped),
        Err((operation, source)) => Err(TargetError::Io {
            path: path.to_path_buf(),
            operation,
            source,
        }),
    }
}

/// Fills `file` with `size_bytes` of random data, syncs it and sets the ownership mark: `true`
/// when done, `false` when it stopped early (before the sync) because `stop` was set.
fn fill_and_mark(
    file: &File,
    size_bytes: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<bool, (&'static str, io::Error)> {
    // Reserving the space first fails fast on a full filesystem and keeps the file contiguous;
    // filesystems that cannot preallocate are filled all the same.
    if let Err(error) = sys::preallocate(file, size_bytes)
        && !cannot_preallocate(&error)
    {
        return Err(("reserve space for the test file", error));
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut chunk = vec![0u8; FILL_CHUNK_BYTES.min(size_bytes.max(1) as usize)];
    let mut writer = file;
    let mut written = 0u64;
    while written < size_bytes {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let length = ((size_bytes - written) as usize).min(chunk.len());
        fill_random_bytes(&mut rng, &mut chunk[..length]);
        writer
            .write_all(&chunk[..length])
            .map_err(|error| ("fill the test file", error))?;
        written += length as u64;
        if written.is_multiple_of(WRITE_BACK_STEP_BYTES) {
            let step = WRITE_BACK_STEP_BYTES;
            sys::write_back_range(file, written - step, step, false);
            if written >= 2 * step {
                sys::write_back_range(file, written - 2 * step, step, true);
            }
        }
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(false);
    }
    file.sync_all()
        .map_err(|error| ("sync the test file", error))?;
    sys::drop_cached_pages(file);
    match sys::set_xattr(file, OWNERSHIP_XATTR, b"1") {
        Ok(()) => Ok(true),
        // No user xattrs here: the ownership mark cannot be recorded.
        Err(error) if error.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(true),
        Err(error) => Err(("mark the test file as created by iopath", error)),
    }
}

/// Whether `path` carries iopath's ownership mark. False when the mark is absent, the
/// filesystem has no user extended attributes, or the path cannot be read.
pub fn is_created_by_iopath(path: &Path) -> bool {
    matches!(sys::get_xattr(path, OWNERSHIP_XATTR), Ok(Some(value)) if value == b"1")
}

/// Whether `path` carries iopath's ownership mark, reading it through the path: `Ok(false)`
/// when the mark is absent or the filesystem keeps no user extended attributes, an error when
/// the path cannot be read (gone, or no permission: a user attribute needs read permission).
pub(super) fn read_ownership_mark(path: &Path) -> std::io::Result<bool> {
    match sys::get_xattr(path, OWNERSHIP_XATTR) {
        Ok(value) => Ok(value.is_some_and(|value| value == b"1")),
        Err(error) if error.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(false),
        Err(error) => Err(error),
    }
}

/// Marks the open regular `file`, which iopath has just created empty, as created by iopath
/// (a file-operation engine's new files: `filedelete` may then remove them). Filesystems
/// without user extended attributes leave it unmarked.
pub fn mark_as_created(file: &File) -> io::Result<()> {
    match sys::set_xattr(file, OWNERSHIP_XATTR, b"1") {
        Err(error) if error.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(()),
        other => other,
    }
}

/// Whether the open `file` carries iopath's ownership mark (as [`is_created_by_iopath`]).
pub fn is_marked_as_created(file: &File) -> bool {
    matches!(sys::get_xattr_of(file, OWNERSHIP_XATTR), Ok(Some(value)) if value == b"1")
}

/// Creates `path` (which must not exist), write-only, close-on-exec, through the gate, which
/// records it as created by this process: the only kind of file removal deletes.
fn create_new(path: &Path) -> Result<File, TargetError> {
    created::create_new(path, 0o644, NewFileAccess::WriteOnly).map_err(|source| TargetError::Io {
        path: path.to_path_buf(),
        operation: "create the test file",
        source,
    })
}

/// The registry of files to remove on a forced exit.
fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    static REGISTRY: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        // A panic while holding the lock leaves the list intact: keep using it.
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Adds `path` to the files [`remove_registered_files`] removes (if this process created it).
pub fn register_for_removal(path: &Path) {
    registry().push(path.to_path_buf());
}

/// Takes `path` off the removal registry (one registration of it).
pub fn unregister(path: &Path) {
    let mut paths = registry();
    if let Some(index) = paths.iter().rposition(|registered| registered == path) {
        paths.remove(index);
    }
}

/// Removes every registered file this process created and empties the registry; meant for a
/// forced exit (a second Ctrl-C), from any thread. Never panics. Returns the files that could
/// not be removed (files already gone, and files this process did not create, are left without
/// an error).
pub fn remove_registered_files() -> Vec<TargetError> {
    let paths = std::mem::take(&mut *registry());
    paths
        .into_iter()
        .filter_map(|path| match created::remove_created(&path) {
            Ok(_) => None,
            Err(source) => Some(TargetError::Io {
                path,
                operation: "remove the test file",
                source,
            }),
        })
        .collect()
}

/// Removes a test file when dropped, unless [`TestFileGuard::keep`] was called; registered for
/// removal on a forced exit while it lives. Only a file this process created is ever removed,
/// so a guard may be set up before [`create_test_file`] runs: if creation fails because the
/// path exists, the existing file survives the guard.
#[derive(Debug)]
pub struct TestFileGuard {
    path: PathBuf,
    keep: bool,
}

impl TestFileGuard {
    /// Guards `path`, which this process created or is about to create with
    /// [`create_test_file`]: registers it for removal.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        register_for_removal(&path);
        TestFileGuard { path, keep: false }
    }

    /// Creates the test file like [`create_test_file`] and guards it.
    pub fn create(path: &Path, size_bytes: u64, seed: u64) -> Result<Self, TargetError> {
        drop(create_registered(
            path,
            size_bytes,
            seed,
            &AtomicBool::new(false),
        )?);
        Ok(TestFileGuard {
            path: path.to_path_buf(),
            keep: false,
        })
    }

    /// The guarded file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Leaves the file in place: it is no longer removed on drop or on a forced exit.
    pub fn keep(&mut self) {
        if !self.keep {
            self.keep = true;
            unregister(&self.path);
        }
    }
}

impl Drop for TestFileGuard {
    fn drop(&mut self) {
        if !self.keep {
            let _ = created::remove_created(&self.path);
            unregister(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::test_support::registry_test_lock;
    use std::collections::HashSet;

    use crate::support::devices::disk_tempdir as work_directory;

    fn is_registered(path: &Path) -> bool {
        registry().iter().any(|registered| registered == path)
    }

    #[test]
    fn created_file_is_full_sized_incompressible_and_marked() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let path = directory.path().join("iopath.test");
        let size = 3 * FILL_CHUNK_BYTES as u64 + 12_345;
        create_test_file(&path, size, 9).unwrap();
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len() as u64, size);
        assert!(data.iter().any(|byte| *byte != 0));
        let mut blocks = HashSet::new();
        for block in data.chunks_exact(4096) {
            assert!(blocks.insert(block), "a 4 KiB block repeats");
        }
        // Roughly uniform bytes: every value appears about size/256 times.
        let mut counts = [0u64; 256];
        for byte in &data {
            counts[*byte as usize] += 1;
        }
        let expected = size / 256;
        assert!(
            counts
                .iter()
                .all(|count| count.abs_diff(expected) < expected / 10)
        );
        assert!(!is_registered(&path));

        let filesystem = crate::targets::inspect(&path).unwrap().filesystem;
        if filesystem
            .as_deref()
            .is_some_and(|name| name.starts_with("ext"))
        {
            assert!(is_created_by_iopath(&path));
            assert!(crate::targets::inspect(&path).unwrap().created_by_iopath);
        } else {
            crate::support::skip(format_args!(
                "the temporary directory is on {filesystem:?}, not ext4: the xattr read-back is \
                 not asserted"
            ));
        }
    }

    #[test]
    fn same_seed_same_data() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let first = directory.path().join("a");
        let second = directory.path().join("b");
        create_test_file(&first, 100_000, 5).unwrap();
        create_test_file(&second, 100_000, 5).unwrap();
        assert_eq!(
            std::fs::read(&first).unwrap(),
            std::fs::read(&second).unwrap()
        );
    }

    #[test]
    fn a_plain_file_is_not_marked() {
        let directory = work_directory();
        let path = directory.path().join("plain");
        std::fs::write(&path, b"data").unwrap();
        assert!(!is_created_by_iopath(&path));
        assert!(!is_created_by_iopath(&directory.path().join("missing")));
    }

    #[test]
    fn an_existing_path_is_never_overwritten() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let path = directory.path().join("precious");
        std::fs::write(&path, b"keep me").unwrap();
        let error = create_test_file(&path, 4096, 1).unwrap_err();
        assert!(error.to_string().contains("precious"), "{error}");
        assert!(matches!(&error, TargetError::Io { source, .. }
            if source.kind() == io::ErrorKind::AlreadyExists));
        assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
        assert!(!is_registered(&path));
    }

    #[test]
    fn zero_sized_test_file() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let path = directory.path().join("empty");
        create_test_file(&path, 0, 1).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }

    #[test]
    fn files_larger_than_the_free_space_are_refused_together() {
        let directory = tempfile::tempdir().unwrap();
        let free = sys::available_bytes(directory.path()).unwrap();
        let one = directory.path().join("one");
        let two = directory.path().join("two");
        assert!(check_room_for(&[(&one, free / 4)]).is_ok());
        // Each fits alone; together they do not.
        let half_and_more = free / 2 + MIB;
        assert!(check_room_for(&[(&one, half_and_more)]).is_ok());
        let error = check_room_for(&[(&one, half_and_more), (&two, half_and_more)]).unwrap_err();
        let message = error.to_string();
        assert!(error.is_bad_input(), "{message}");
        assert!(message.contains("2 test files"), "{message}");
        assert!(message.contains("--size"), "{message}");
        assert!(!one.exists() && !two.exists());
    }

    #[test]
    fn a_full_filesystem_leaves_no_partial_file() {
        let _serial = registry_test_lock();
        // A real full filesystem: an 8 MiB ext4 on a loop device.
        let Some(loop_device) = crate::support::devices::LoopDevice::attach_zeroed(8) else {
            return;
        };
        if crate::targets::test_support::format_ext4(&loop_device).is_none() {
            return;
        }
        let mounted = crate::targets::test_support::Mounted::new(loop_device.path());
        let path = mounted.path().join("too-big");
        let error = create_test_file(&path, 64 << 20, 3).unwrap_err();
        assert!(error.to_string().contains("too-big"), "{error}");
        assert!(
            matches!(&error, TargetError::Io { source, .. }
            if source.raw_os_error() == Some(libc::ENOSPC)),
            "{error}"
        );
        assert!(!path.exists());
        assert!(!is_registered(&path));
    }

    #[test]
    fn a_stop_request_ends_the_fill_and_removes_the_partial_file() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let path = directory.path().join("stopped");
        let stop = AtomicBool::new(true);
        let creation = create_test_file_unless_stopped(&path, 8 << 20, 1, &stop).unwrap();
        assert!(matches!(creation, Creation::Stopped));
        assert!(!path.exists());
        assert!(!is_registered(&path));
        // Nothing to fill is still stopped: the run must not go on.
        let empty = directory.path().join("empty");
        let creation = create_test_file_unless_stopped(&empty, 0, 1, &stop).unwrap();
        assert!(matches!(creation, Creation::Stopped));
        assert!(!empty.exists());
    }

    #[test]
    fn guard_removes_unless_kept() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let path = directory.path().join("guarded");
        {
            let guard = TestFileGuard::create(&path, 8192, 2).unwrap();
            assert!(guard.path().exists());
            assert!(is_registered(&path));
        }
        assert!(!path.exists());
        assert!(!is_registered(&path));

        let kept = directory.path().join("kept");
        {
            let mut guard = TestFileGuard::create(&kept, 8192, 2).unwrap();
            guard.keep();
            assert!(!is_registered(&kept));
        }
        assert!(kept.exists());
    }

    #[test]
    fn registered_files_are_removed_on_a_forced_exit() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let first = directory.path().join("first");
        let second = directory.path().join("second");
        let theirs = directory.path().join("theirs");
        let mut guard = TestFileGuard::new(&first);
        create_test_file(&first, 4096, 1).unwrap();
        create_test_file(&second, 4096, 1).unwrap();
        std::fs::write(&theirs, b"not ours").unwrap();
        register_for_removal(&second);
        register_for_removal(&theirs);
        register_for_removal(&directory.path().join("already-gone"));
        // Another test may have registered files concurrently; only ours are checked.
        let failures = remove_registered_files();
        assert!(
            failures
                .iter()
                .all(|failure| !failure.to_string().contains("already-gone")),
            "{failures:?}"
        );
        assert!(!first.exists());
        assert!(!second.exists());
        assert_eq!(std::fs::read(&theirs).unwrap(), b"not ours");
        guard.keep();
        drop(guard);
        assert!(!is_registered(&first));
    }

    #[test]
    fn a_guard_set_up_before_a_failed_creation_spares_the_existing_file() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let path = directory.path().join("precious");
        std::fs::write(&path, b"keep me").unwrap();
        {
            let _guard = TestFileGuard::new(&path);
            create_test_file(&path, 4096, 1).unwrap_err();
            // A forced exit now must not delete it either.
            let _ = remove_registered_files();
            assert!(path.exists());
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
    }

    #[test]
    fn a_poisoned_registry_still_works() {
        let _serial = registry_test_lock();
        let directory = work_directory();
        let path = directory.path().join("poison");
        create_test_file(&path, 4096, 1).unwrap();
        let _ = std::thread::spawn(|| {
            let _lock = registry();
            panic!("poison the registry on purpose");
        })
        .join();
        register_for_removal(&path);
        let _ = remove_registered_files();
        assert!(!path.exists());
    }

    /// A process id that is certainly gone: a child that has exited and been reaped.
    fn a_gone_pid() -> i32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        child.wait().unwrap();
        pid
    }

    #[test]
    fn temporary_names_carry_the_process_id() {
        let path = temporary_test_file_path(Path::new("dir"));
        let pid = temporary_test_file_pid(path.file_name().unwrap());
        assert_eq!(pid, Some(std::process::id() as i32));
        for other in [
            ".iopath-test-.tmp",
            ".iopath-test-12.tmp.bak",
            ".iopath-test-+12.tmp",
            ".iopath-test-0.tmp",
            ".iopath-test-99999999999.tmp",
            "iopath-test-12.tmp",
            ".iopath-test-1a.tmp",
        ] {
            assert_eq!(temporary_test_file_pid(OsStr::new(other)), None, "{other}");
        }
    }

    #[test]
    fn only_files_of_gone_processes_are_stale_and_only_they_are_removed() {
        let directory = work_directory();
        let gone = a_gone_pid();
        let alive = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let name = |pid: i32| format!("{TEMPORARY_PREFIX}{pid}{TEMPORARY_SUFFIX}");
        let stale = directory.path().join(name(gone));
        std::fs::write(&stale, b"left by a killed run").unwrap();
        std::fs::write(directory.path().join(name(alive.id() as i32)), b"in use").unwrap();
        std::fs::write(
            directory.path().join(name(std::process::id() as i32)),
            b"ours",
        )
        .unwrap();
        std::fs::write(directory.path().join("iopath-test-1.tmp"), b"not ours").unwrap();
        std::fs::write(directory.path().join("data.tmp"), b"not ours").unwrap();
        // A link and a directory with the pattern's name are never taken for test files.
        let gone_too = a_gone_pid();
        std::os::unix::fs::symlink(
            directory.path().join("data.tmp"),
            directory.path().join(name(gone_too)),
        )
        .unwrap();
        let gone_again = a_gone_pid();
        std::fs::create_dir(directory.path().join(name(gone_again))).unwrap();

        let found = find_stale_test_files(directory.path());
        let mut alive = alive;
        let _ = alive.kill();
        let _ = alive.wait();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, stale);
        assert_eq!(found[0].pid, gone);
        assert_eq!(found[0].size_bytes, 20);
        // Made now, so that it has an inode of its own.
        let replacement = directory.path().join("replacement");
        std::fs::write(&replacement, b"someone else's").unwrap();
        let before = std::fs::read_dir(directory.path()).unwrap().count();
        remove_stale_test_file(&found[0]).unwrap();
        assert!(!stale.exists());
        assert_eq!(
            std::fs::read_dir(directory.path()).unwrap().count(),
            before - 1
        );
        // Replaced by another file since it was found: left alone.
        std::fs::rename(&replacement, &stale).unwrap();
        let error = remove_stale_test_file(&found[0]).unwrap_err();
        assert!(error.to_string().contains("left alone"), "{error}");
        assert_eq!(std::fs::read(&stale).unwrap(), b"someone else's");
        assert!(find_stale_test_files(&directory.path().join("missing")).is_empty());
    }

    #[test]
    fn default_size_is_a_quarter_of_free_space_capped_at_one_gib() {
        let directory = work_directory();
        let free = sys::available_bytes(directory.path()).unwrap();
        match default_test_file_size(directory.path()) {
            Ok(size) => {
                assert_eq!(size % MIB, 0);
                assert!(size <= DEFAULT_TEST_FILE_BYTES);
                assert!(size <= free / 4);
                assert!(size >= MINIMUM_DEFAULT_TEST_FILE_BYTES);
                if free / 4 >= DEFAULT_TEST_FILE_BYTES {
                    assert_eq!(size, DEFAULT_TEST_FILE_BYTES);
                }
            }
            Err(error) => assert!(free / 4 < MINIMUM_DEFAULT_TEST_FILE_BYTES, "{error}"),
        }
    }

    #[test]
    fn default_size_errors_name_the_directory() {
        let directory = work_directory();
        let missing = directory.path().join("missing");
        let error = default_test_file_size(&missing).unwrap_err();
        assert!(matches!(error, TargetError::Missing { .. }));
        assert!(error.to_string().contains("missing"));
        let file = directory.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let error = default_test_file_size(&file).unwrap_err();
        assert!(error.to_string().contains("a-file"), "{error}");
    }

    #[test]
    fn a_read_only_directory_gets_no_default_size() {
        let Some(mounted) = crate::targets::test_support::Mounted::read_only_tmpfs() else {
            return;
        };
        let error = default_test_file_size(mounted.path()).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains(&*mounted.path().to_string_lossy()),
            "{message}"
        );
        assert!(message.contains("not writable"), "{message}");
    }

    #[test]
    fn small_filesystems_get_no_default_size() {
        let Some(loop_device) = crate::support::devices::LoopDevice::attach_zeroed(64) else {
            return;
        };
        if crate::targets::test_support::format_ext4(&loop_device).is_none() {
            return;
        }
        let mounted = crate::targets::test_support::Mounted::new(loop_device.path());
        let error = default_test_file_size(mounted.path()).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("MiB free"), "{message}");
        assert!(
            message.contains(&mounted.path().to_string_lossy().into_owned()),
            "{message}"
        );
    }
}
