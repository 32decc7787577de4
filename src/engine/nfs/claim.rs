//! Removing a test file only when the server proves that its name still leads to the file
//! iopath created — by a proof the server's caches cannot fool.
//!
//! NFS removes by name (REMOVE names a directory and an entry), never by handle. A LOOKUP of
//! the name before the REMOVE is no proof: a server may answer it from a cache of directory
//! entries (nfs-ganesha does by default) that still holds the old handle after the file was
//! moved away on the server and another file put under its name; the REMOVE then reaches the
//! file system by name and deletes the other file. An exclusive create of the name (whose
//! verifier a server compares with the file under the name) is fooled the same way: nfs-ganesha
//! 4 looks the name up in the same cache first.
//!
//! What a cache cannot fake is what happens to the file itself, seen through its handle (a
//! handle reaches the file wherever it now is, and nfs-ganesha refreshes a file's attributes
//! after a RENAME): a rename changes the change time (`ctime`) of the file it moves, and of no
//! other. So [`remove_if_ours`]:
//!
//! 1. sets the test file's access and modification times to a fresh random [`mark`] **by its
//!    handle**, and reads its times back by handle: the modification time must show the mark
//!    (else the server answered from a cache that predates the SETATTR: no proof, the file is
//!    left); the change time read is the baseline;
//! 2. waits [`TICK_PAUSE`], so that the file system's clock (coarse: a kernel tick) has
//!    moved on;
//! 3. renames the name to a fresh name of its own in the same directory ([`aside_name`]);
//!    a name that is free (`NOENT`) means the test file was moved away: nothing is touched;
//! 4. reads the test file's times by handle again: a change time that moved proves the
//!    rename moved the test file, and the fresh name (which nobody else knows) is removed. A
//!    change time that did not move means another file was renamed: it is renamed back to its
//!    name at once, and left in place.
//!
//! Every answer a cache could give wrongly leads to leaving the file: attributes read from a
//! cache do not move, so a stale answer never proves anything. What remains is the moment
//! between two calls (milliseconds, one connection): a file swapped in exactly between the
//! rename and the second read, or a file put under the name exactly between the rename and
//! the rename back, is not detected. NFS offers no removal by handle and no rename that
//! refuses to replace, which would close them.

use crate::targets::remote_file::LeftInPlace;
use nfs_client::NfsError;
use std::time::Duration;

/// How long the proof waits between reading the baseline change time and the rename: more
/// than one kernel tick (1 to 10 ms), so that a rename's change time differs from the
/// baseline even where the file system's timestamps are coarse.
pub(super) const TICK_PAUSE: Duration = Duration::from_millis(25);

/// The calls the proof needs, on one session with the server (NFSv3 or NFSv4.1), in the
/// directory of the test file.
pub(super) trait NameCalls {
    /// Sets the access and modification times of the file `handle` to `seconds`.
    fn set_times(&mut self, handle: &[u8], seconds: u32) -> Result<(), NfsError>;
    /// The times of the file `handle`.
    fn times(&mut self, handle: &[u8]) -> Result<Times, NfsError>;
    /// Renames `from` to `to` in the directory.
    fn rename(&mut self, from: &str, to: &str) -> Result<(), NfsError>;
    /// Removes `name` from the directory.
    fn remove(&mut self, name: &str) -> Result<(), NfsError>;
}

/// A file's times as the server reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Times {
    /// The modification time's seconds.
    pub modified_seconds: i64,
    /// The change time: seconds and nanoseconds.
    pub changed: (i64, u32),
}

/// `NFS3ERR_NOENT` and `NFS4ERR_NOENT`.
const NOENT: u32 = 2;
/// `NFS3ERR_STALE` and `NFS4ERR_STALE`.
const STALE: u32 = 70;

/// Whether `error` is the server's status `wanted` (NFSv3 or NFSv4.1 alike).
fn is_status(error: &NfsError, wanted: &[u32]) -> bool {
    match error {
        NfsError::Status { status, .. } | NfsError::Status4 { status, .. } => {
            wanted.contains(status)
        }
        NfsError::Rpc(_) => false,
    }
}

/// A fresh mark: seconds after the epoch between 1970-07 and 2038, random.
pub(super) fn mark() -> u32 {
    fastrand::u32((1 << 24)..(1 << 31))
}

/// A fresh name for the test file while it is proved and removed (short, so that it fits any
/// directory; it says whose it is, should a broken connection leave it behind).
pub(super) fn aside_name() -> String {
    format!(
        ".iopath-removing-{}-{:016x}",
        std::process::id(),
        fastrand::u64(..)
    )
}

/// Removes `name` when the proof of the module documentation shows that it leads to the test
/// file `created`, renaming it to `aside` (from [`aside_name`]) for the proof: `Ok(None)`, or
/// what was left in place instead.
pub(super) fn remove_if_ours(
    calls: &mut impl NameCalls,
    created: &[u8],
    (name, aside): (&str, &str),
    pause: Duration,
) -> Result<Option<LeftInPlace>, NfsError> {
    let mark = mark();
    let before = match calls
        .set_times(created, mark)
        .and_then(|()| calls.times(created))
    {
        Ok(times) => times,
        Err(error) if is_status(&error, &[STALE, NOENT]) => return Ok(Some(LeftInPlace::Gone)),
        Err(error) => return Err(error),
    };
    if before.modified_seconds != i64::from(mark) {
        return Ok(Some(LeftInPlace::Unproven));
    }
    std::thread::sleep(pause);
    match calls.rename(name, aside) {
        Ok(()) => {}
        Err(error) if is_status(&error, &[NOENT]) => return Ok(Some(LeftInPlace::Moved)),
        Err(error) => return Err(error),
    }
    let moved = match calls.times(created) {
        Ok(after) => after.changed != before.changed,
        Err(error) if is_status(&error, &[STALE, NOENT]) => false,
        Err(error) => {
            let _ = calls.rename(aside, name);
            return Err(error);
        }
    };
    if moved {
        calls.remove(aside)?;
        Ok(None)
    } else {
        calls.rename(aside, name)?;
        Ok(Some(LeftInPlace::Taken))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A directory of names leading to files (ids), each file with its times; `cached`
    /// makes attribute reads answer from the first read of each file, as a cache would.
    #[derive(Default)]
    struct Directory {
        names: HashMap<String, u8>,
        times: HashMap<u8, Times>,
        cached: bool,
        seen: HashMap<u8, Times>,
        clock: i64,
        log: Vec<String>,
    }

    impl Directory {
        fn touch(&mut self, file: u8) {
            self.clock += 1;
            self.times.get_mut(&file).expect("a file").changed = (self.clock, 0);
        }
    }

    fn status(status: u32) -> NfsError {
        NfsError::Status {
            operation: "TEST",
            subject: String::new(),
            status,
        }
    }

    impl NameCalls for Directory {
        fn set_times(&mut self, handle: &[u8], seconds: u32) -> Result<(), NfsError> {
            let file = handle[0];
            let times = self.times.get_mut(&file).ok_or_else(|| status(STALE))?;
            times.modified_seconds = i64::from(seconds);
            self.touch(file);
            Ok(())
        }
        fn times(&mut self, handle: &[u8]) -> Result<Times, NfsError> {
            let real = *self.times.get(&handle[0]).ok_or_else(|| status(STALE))?;
            if self.cached {
                return Ok(*self.seen.entry(handle[0]).or_insert(real));
            }
            Ok(real)
        }
        fn rename(&mut self, from: &str, to: &str) -> Result<(), NfsError> {
            let file = self.names.remove(from).ok_or_else(|| status(NOENT))?;
            self.names.insert(to.into(), file);
            self.touch(file);
            self.log
                .push(format!("rename {from} -> {}", &to[..to.len().min(8)]));
            Ok(())
        }
        fn remove(&mut self, name: &str) -> Result<(), NfsError> {
            let file = self.names.remove(name).ok_or_else(|| status(NOENT))?;
            self.times.remove(&file);
            self.log
                .push(format!("remove {}", &name[..name.len().min(8)]));
            Ok(())
        }
    }

    /// [`remove_if_ours`] of the test file (1) under `test.bin`, without a pause.
    fn remove_test_file(directory: &mut Directory) -> Option<LeftInPlace> {
        remove_if_ours(directory, &[1], ("test.bin", &aside_name()), Duration::ZERO)
            .expect("no call fails")
    }

    /// The test file (1) under `test.bin`, and another file (2) elsewhere.
    fn directory() -> Directory {
        let mut directory = Directory::default();
        directory.names.insert("test.bin".into(), 1);
        directory.names.insert("other.bin".into(), 2);
        for file in [1, 2] {
            directory.times.insert(file, Times::default_for(file));
        }
        directory
    }

    impl Times {
        fn default_for(file: u8) -> Times {
            Times {
                modified_seconds: i64::from(file),
                changed: (0, 0),
            }
        }
    }

    #[test]
    fn the_test_file_under_its_name_is_removed() {
        let mut directory = directory();
        let done = remove_test_file(&mut directory);
        assert_eq!(done, None);
        assert!(!directory.times.contains_key(&1));
        assert_eq!(directory.names.keys().collect::<Vec<_>>(), ["other.bin"]);
    }

    #[test]
    fn another_file_under_the_name_is_renamed_back_and_kept() {
        let mut directory = directory();
        // The test file moved away, the other file put under its name.
        directory.names.clear();
        directory.names.insert("aside.bin".into(), 1);
        directory.names.insert("test.bin".into(), 2);
        let done = remove_test_file(&mut directory);
        assert_eq!(done, Some(LeftInPlace::Taken));
        assert_eq!(directory.names.get("test.bin"), Some(&2));
        assert_eq!(directory.names.get("aside.bin"), Some(&1));
        assert_eq!(directory.names.len(), 2);
        assert!(directory.log.iter().all(|line| !line.starts_with("remove")));
    }

    #[test]
    fn cached_attributes_prove_nothing_and_remove_nothing() {
        // Even with the test file under its name: attributes cached before the mark prove
        // nothing, and cached after it they do not move.
        let mut directory = directory();
        directory.cached = true;
        directory.times(&[1]).unwrap();
        let done = remove_test_file(&mut directory);
        assert_eq!(done, Some(LeftInPlace::Unproven));
        let mut directory = directory_with_cache();
        let done = remove_test_file(&mut directory);
        assert_eq!(done, Some(LeftInPlace::Taken));
        assert_eq!(directory.names.get("test.bin"), Some(&1));
        assert_eq!(directory.names.len(), 2);
    }

    /// A directory whose attribute reads are cached from the first one on.
    fn directory_with_cache() -> Directory {
        let mut directory = directory();
        directory.cached = true;
        directory
    }

    #[test]
    fn a_free_name_and_a_gone_file_touch_nothing() {
        let mut directory = directory();
        directory.names.remove("test.bin");
        let done = remove_test_file(&mut directory);
        assert_eq!(done, Some(LeftInPlace::Moved));
        let mut directory = directory_without_the_test_file();
        let done = remove_test_file(&mut directory);
        assert_eq!(done, Some(LeftInPlace::Gone));
        assert_eq!(directory.names.get("test.bin"), Some(&2));
        assert!(directory.log.is_empty());
    }

    /// The test file deleted, another file under its name.
    fn directory_without_the_test_file() -> Directory {
        let mut directory = directory();
        directory.times.remove(&1);
        directory.names.insert("test.bin".into(), 2);
        directory
    }

    #[test]
    fn fresh_names_and_marks() {
        let name = aside_name();
        assert!(
            name.starts_with(".iopath-removing-") && name.len() < 64,
            "{name}"
        );
        assert!((1 << 24..1 << 31).contains(&mark()));
    }
}
