//! The file-operation engines of small-file and metadata benchmarks (fio's `filecreate`,
//! `filestat`, `filedelete`, `dircreate`, `dirstat` and `dirdelete`): each request is one
//! operation on the file or directory it names — create, look up, remove — and moves no data.
//!
//! The request's offset and length are not used: the runner gives each file one request per
//! pass (its region is one block), so a pass over N files is N operations. A request
//! completes with its whole length when the operation succeeds, so that the worker counts it
//! as a whole I/O (the runner counts no bytes for these engines), or with the negative errno.
//! Each operation is one system call, made inside [`Engine::submit`], so the worker's clock
//! around the submission is the operation's latency (for `filecreate`: the `open` with
//! `O_CREAT` and the `close` of the new descriptor).
//!
//! Which paths may be removed is decided before the run (only those iopath created, or that
//! carry its ownership mark): the engine itself does what it is told.
//!
//! ```
//! use iopath::engine::{Completion, Engine, IoRequest};
//! use iopath::engine::file_operations::{FileOperation, FileOperationEngine};
//! use iopath::result::{Direction, StatCall};
//! let dir = std::env::temp_dir().join(format!("iopath-file-ops-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("a");
//! let mut engine =
//!     FileOperationEngine::new(FileOperation::CreateFile, StatCall::Stat, &[path.clone()], 4096)
//!         .unwrap();
//! engine.submit(IoRequest { file: 0, slot: 0, direction: Direction::Write, offset: 0, length: 4096 }).unwrap();
//! let mut done = [Completion::default(); 1];
//! assert_eq!(engine.reap(1, &mut done).unwrap(), 1);
//! assert_eq!(done[0].result, 4096);
//! assert!(path.is_file());
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use super::buffer::BufferPool;
use super::{Completion, Engine, EngineError, IoRequest};
use crate::result::{Capabilities, EngineKind, StatCall};
use crate::targets::test_file::mark_as_created;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// What each request does to its file or directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOperation {
    /// `open(O_CREAT | O_RDWR, 0600)` and `close` (fio's `filecreate`).
    CreateFile,
    /// A look-up of the file (fio's `filestat`).
    StatFile,
    /// `unlink` (fio's `filedelete`).
    DeleteFile,
    /// `mkdir(0700)` (fio's `dircreate`).
    CreateDirectory,
    /// A look-up of the directory (fio's `dirstat`).
    StatDirectory,
    /// `rmdir` (fio's `dirdelete`).
    DeleteDirectory,
}

impl FileOperation {
    /// The operation of a file-operation engine, `None` for an engine that moves data.
    pub fn of(kind: EngineKind) -> Option<FileOperation> {
        Some(match kind {
            EngineKind::FileCreate => FileOperation::CreateFile,
            EngineKind::FileStat => FileOperation::StatFile,
            EngineKind::FileDelete => FileOperation::DeleteFile,
            EngineKind::DirCreate => FileOperation::CreateDirectory,
            EngineKind::DirStat => FileOperation::StatDirectory,
            EngineKind::DirDelete => FileOperation::DeleteDirectory,
            _ => return None,
        })
    }

    /// Whether the paths are directories (else regular files).
    pub fn on_directories(self) -> bool {
        matches!(
            self,
            FileOperation::CreateDirectory
                | FileOperation::StatDirectory
                | FileOperation::DeleteDirectory
        )
    }

    /// Whether the operation removes its path.
    pub fn removes(self) -> bool {
        matches!(
            self,
            FileOperation::DeleteFile | FileOperation::DeleteDirectory
        )
    }

    /// Whether the operation makes its path (which must then not be made before the run).
    pub fn creates(self) -> bool {
        matches!(
            self,
            FileOperation::CreateFile | FileOperation::CreateDirectory
        )
    }

    /// The engine's name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FileOperation::CreateFile => "filecreate",
            FileOperation::StatFile => "filestat",
            FileOperation::DeleteFile => "filedelete",
            FileOperation::CreateDirectory => "dircreate",
            FileOperation::StatDirectory => "dirstat",
            FileOperation::DeleteDirectory => "dirdelete",
        }
    }
}

/// See the module documentation.
pub struct FileOperationEngine {
    operation: FileOperation,
    stat_call: StatCall,
    paths: Vec<CString>,
    capabilities: Capabilities,
    done: Option<Completion>,
    /// `filecreate`: which files this engine made (marked as iopath's when it is dropped).
    created: Vec<bool>,
    /// The one slot's buffer: no data moves, but the runner fills write buffers as for any
    /// engine.
    buffers: BufferPool,
}

impl FileOperationEngine {
    /// An engine doing `operation` (look-ups with `stat_call`) on `paths`, which requests
    /// name by their index here, with one buffer of `buffer_size` bytes; fails on a path with
    /// a NUL byte.
    pub fn new(
        operation: FileOperation,
        stat_call: StatCall,
        paths: &[PathBuf],
        buffer_size: usize,
    ) -> Result<Self, EngineError> {
        let paths = paths
            .iter()
            .map(|path| CString::new(path.as_os_str().as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| EngineError::Setup {
                engine: operation.name(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, error),
            })?;
        let tracked = if operation == FileOperation::CreateFile {
            paths.len()
        } else {
            0
        };
        Ok(FileOperationEngine {
            operation,
            stat_call,
            paths,
            capabilities: Capabilities {
                max_queue_depth: 1,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
                separates_submission: false,
            },
            done: None,
            created: vec![false; tracked],
            buffers: BufferPool::new(1, buffer_size),
        })
    }

    /// Performs the operation on file `index`: 0, or the negative errno.
    fn perform(&mut self, index: usize) -> i64 {
        let path = self.paths[index].as_ptr();
        let mut created = false;
        // SAFETY: `path` points to a NUL-terminated string owned by `self.paths`, alive for
        // the whole block; each out-parameter is a zeroed local of the type its call writes
        // (all-zero is a valid value of these plain C structs), and no pointer is kept after
        // its call returns.
        let status = unsafe {
            match self.operation {
                FileOperation::CreateFile => {
                    // O_EXCL first, to know which files this run made (an existing file is
                    // then opened as fio opens it, without O_EXCL and never truncated).
                    let mut descriptor = libc::open(
                        path,
                        libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                        0o600 as libc::c_uint,
                    );
                    let made = descriptor >= 0;
                    if !made && std::io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST)
                    {
                        descriptor = libc::open(path, libc::O_RDWR | libc::O_CLOEXEC);
                    }
                    if descriptor >= 0 {
                        libc::close(descriptor);
                        created = made;
                        0
                    } else {
                        -1
                    }
                }
                FileOperation::StatFile | FileOperation::StatDirectory => match self.stat_call {
                    StatCall::Stat => {
                        let mut found: libc::stat = std::mem::zeroed();
                        libc::stat(path, &mut found)
                    }
                    StatCall::Lstat => {
                        let mut found: libc::stat = std::mem::zeroed();
                        libc::lstat(path, &mut found)
                    }
                    StatCall::Statx => {
                        let mut found: libc::statx = std::mem::zeroed();
                        libc::statx(
                            libc::AT_FDCWD,
                            path,
                            0,
                            libc::STATX_BASIC_STATS | libc::STATX_BTIME,
                            &mut found,
                        )
                    }
                },
                FileOperation::DeleteFile => libc::unlink(path),
                FileOperation::CreateDirectory => libc::mkdir(path, 0o700),
                FileOperation::DeleteDirectory => libc::rmdir(path),
            }
        };
        if created {
            self.created[index] = true;
        }
        if status == 0 {
            0
        } else {
            -i64::from(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            )
        }
    }
}

impl Drop for FileOperationEngine {
    /// Marks each file `filecreate` made as iopath's, so that a later `filedelete` may remove
    /// it; a file that cannot be marked stays unmarked, and a later `filedelete` refuses it.
    /// Four calls per file (open, fstat, fsetxattr, close): the runner drops these engines
    /// once every worker of the test has ended, outside any measured time.
    fn drop(&mut self) {
        for (path, _) in self
            .paths
            .iter()
            .zip(&self.created)
            .filter(|(_, made)| **made)
        {
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.as_bytes()));
            if let Ok(file) = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open(path)
                && file
                    .metadata()
                    .is_ok_and(|found| found.is_file() && found.len() == 0)
            {
                let _ = mark_as_created(&file);
            }
        }
    }
}

impl Engine for FileOperationEngine {
    fn name(&self) -> &'static str {
        self.operation.name()
    }

    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        self.buffers.slot_mut(slot)
    }

    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        if request.file as usize >= self.paths.len() {
            return Err(super::not_one_of_the_files(self.operation.name()));
        }
        let status = self.perform(request.file as usize);
        self.done = Some(Completion {
            slot: request.slot,
            result: if status == 0 {
                i64::from(request.length)
            } else {
                status
            },
        });
        Ok(())
    }

    fn flush(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn reap(
        &mut self,
        _min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        Ok(super::hand_over_one(&mut self.done, completions))
    }

    fn sync_data(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Direction;

    fn run(engine: &mut FileOperationEngine, file: u32) -> i64 {
        engine
            .submit(IoRequest {
                slot: 0,
                file,
                direction: Direction::Read,
                offset: 0,
                length: 4096,
            })
            .unwrap();
        let mut done = [Completion::default(); 1];
        assert_eq!(engine.reap(1, &mut done).unwrap(), 1);
        done[0].result
    }

    fn paths(dir: &std::path::Path, count: usize) -> Vec<PathBuf> {
        (0..count).map(|n| dir.join(format!("f.{n}"))).collect()
    }

    #[test]
    fn files_are_created_looked_up_and_deleted_one_per_request() {
        let dir = tempfile::tempdir().unwrap();
        let files = paths(dir.path(), 5);
        for (operation, call) in [
            (FileOperation::CreateFile, StatCall::Stat),
            (FileOperation::StatFile, StatCall::Stat),
            (FileOperation::StatFile, StatCall::Lstat),
            (FileOperation::StatFile, StatCall::Statx),
            (FileOperation::DeleteFile, StatCall::Stat),
        ] {
            let mut engine = FileOperationEngine::new(operation, call, &files, 4096).unwrap();
            for file in 0..5 {
                assert_eq!(
                    run(&mut engine, file),
                    4096,
                    "{operation:?} {call:?} {file}"
                );
            }
            let present = files.iter().filter(|path| path.is_file()).count();
            let expected = if operation == FileOperation::DeleteFile {
                0
            } else {
                5
            };
            assert_eq!(present, expected, "{operation:?}");
        }
    }

    #[test]
    fn directories_are_created_looked_up_and_removed_one_per_request() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = paths(dir.path(), 3);
        for operation in [
            FileOperation::CreateDirectory,
            FileOperation::StatDirectory,
            FileOperation::DeleteDirectory,
        ] {
            let mut engine =
                FileOperationEngine::new(operation, StatCall::Stat, &dirs, 4096).unwrap();
            for file in 0..3 {
                assert_eq!(run(&mut engine, file), 4096, "{operation:?} {file}");
            }
            let present = dirs.iter().filter(|path| path.is_dir()).count();
            assert_eq!(
                present,
                if operation.removes() { 0 } else { 3 },
                "{operation:?}"
            );
        }
    }

    #[test]
    fn a_failed_operation_completes_with_its_errno() {
        let dir = tempfile::tempdir().unwrap();
        let missing = paths(dir.path(), 1);
        let mut stat =
            FileOperationEngine::new(FileOperation::StatFile, StatCall::Stat, &missing, 1).unwrap();
        assert_eq!(run(&mut stat, 0), -i64::from(libc::ENOENT));
        let mut remove =
            FileOperationEngine::new(FileOperation::DeleteDirectory, StatCall::Stat, &missing, 1)
                .unwrap();
        assert_eq!(run(&mut remove, 0), -i64::from(libc::ENOENT));
        let mut make = FileOperationEngine::new(
            FileOperation::CreateDirectory,
            StatCall::Stat,
            &[dir.path().to_path_buf()],
            1,
        )
        .unwrap();
        assert_eq!(run(&mut make, 0), -i64::from(libc::EEXIST));
        assert!(
            stat.submit(IoRequest {
                slot: 0,
                file: 7,
                direction: Direction::Read,
                offset: 0,
                length: 1,
            })
            .is_err()
        );
    }
}
