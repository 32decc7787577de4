//! The sync engine: one request at a time, its bytes moved by pread / pwrite, or (fio's
//! `mmap` and `splice` engines) through a shared mapping of each file or a pipe
//! ([`super::data_path`]); trims are `BLKDISCARD` on a block device and a punched hole in a
//! file (see [`super::trim`]).
//!
//! A queue depth above 1 is not silently ignored (as fio's psync does): the runner maps it onto
//! workers and says so, so this engine is only ever opened with one slot. It may hold several
//! files (a worker moving over a job's files); each request names its file. Opened with
//! [`SyncEngine::on_demand`], it opens (and, moving bytes through mappings, maps) each file at
//! its first request and keeps at most a bound of them open (fio's `openfiles`; see
//! [`super::files_on_demand`]).

use super::buffer::BufferPool;
use super::data_path::{DataPath, FileMapping, Pipe, negative_errno};
use super::files_on_demand::FilesOnDemand;
use super::trim::LocalTrim;
use super::{Completion, Engine, EngineError, EngineFile, IoRequest};
use crate::result::{Capabilities, Direction};
use std::os::unix::fs::FileExt;

/// See the module documentation.
pub struct SyncEngine {
    files: Vec<EngineFile>,
    /// Regular files opened as requests come to them, instead of `files` (which is then
    /// empty); trimmed by punching holes.
    on_demand: Option<FilesOnDemand>,
    /// How each file is trimmed (`None`: its kind could not be told; a trim fails).
    trims: Vec<Option<LocalTrim>>,
    buffers: BufferPool,
    capabilities: Capabilities,
    done: Option<Completion>,
    moves: Moves,
}

/// How the bytes move, with what each way needs.
enum Moves {
    /// pread / pwrite.
    Pread,
    /// One mapping per file, in the files' order (empty when the files are opened on demand:
    /// their mappings are then made and unmade with them).
    Mmap(Vec<FileMapping>),
    /// One pipe for every request.
    Splice(Pipe),
}

impl SyncEngine {
    /// A sync engine on `file` with one buffer of `buffer_size` bytes.
    pub fn new(file: EngineFile, buffer_size: usize) -> Self {
        Self::with_files(vec![file], buffer_size)
    }

    /// A sync engine on `files` (requests name their file by its index here) with one buffer
    /// of `buffer_size` bytes.
    pub fn with_files(files: Vec<EngineFile>, buffer_size: usize) -> Self {
        SyncEngine {
            moves: Moves::Pread,
            trims: files.iter().map(|file| LocalTrim::of(file).ok()).collect(),
            files,
            on_demand: None,
            buffers: BufferPool::new(1, buffer_size),
            capabilities: Capabilities {
                max_queue_depth: 1,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
                separates_submission: false,
            },
            done: None,
        }
    }

    /// A sync engine on `files` whose requests move their bytes by `path`: the files are
    /// mapped (each must not be empty) or a pipe is made first.
    pub fn with_data_path(
        files: Vec<EngineFile>,
        buffer_size: usize,
        path: DataPath,
    ) -> Result<Self, EngineError> {
        let setup = |source| EngineError::Setup {
            engine: "sync",
            source,
        };
        let moves = match path {
            DataPath::Pread => Moves::Pread,
            DataPath::Mmap => Moves::Mmap(
                files
                    .iter()
                    .map(FileMapping::new)
                    .collect::<Result<_, _>>()
                    .map_err(setup)?,
            ),
            DataPath::Splice => Moves::Splice(Pipe::new(buffer_size).map_err(setup)?),
        };
        Ok(SyncEngine {
            moves,
            ..Self::with_files(files, buffer_size)
        })
    }
}

impl SyncEngine {
    /// A sync engine moving bytes by `path` over the regular files of `files`, each opened
    /// at its first request (and mapped then, moving bytes through mappings), at most its
    /// bound of them open at once; one buffer of `buffer_size` bytes.
    pub fn on_demand(
        files: FilesOnDemand,
        buffer_size: usize,
        path: DataPath,
    ) -> Result<Self, EngineError> {
        let (moves, files) = match path {
            DataPath::Pread => (Moves::Pread, files),
            DataPath::Mmap => (Moves::Mmap(Vec::new()), files.mapping_each()),
            DataPath::Splice => {
                let pipe = Pipe::new(buffer_size).map_err(|source| EngineError::Setup {
                    engine: "sync",
                    source,
                })?;
                (Moves::Splice(pipe), files)
            }
        };
        Ok(SyncEngine {
            on_demand: Some(files),
            moves,
            ..Self::with_files(Vec::new(), buffer_size)
        })
    }

    /// Moves the bytes of `request` (a read or a write) through the mapping of its file,
    /// opened on demand: the completion's result.
    fn through_mapping_on_demand(
        on_demand: &mut FilesOnDemand,
        buffers: &mut BufferPool,
        request: &IoRequest,
    ) -> Result<i64, EngineError> {
        let length = request.length as usize;
        let mapping = on_demand
            .get_mapped(request.file)
            .map_err(|source| failed("open", source))?;
        Ok(match request.direction {
            Direction::Read => mapping.read(&mut buffers.slot_mut(0)[..length], request.offset),
            _ => mapping.write(&buffers.slot(0)[..length], request.offset),
        })
    }
}

/// An error of the engine's `operation`.
fn failed(operation: &'static str, source: std::io::Error) -> EngineError {
    EngineError::Operation {
        engine: "sync",
        operation,
        source,
    }
}

impl Engine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        self.buffers.slot_mut(slot)
    }

    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        assert!(
            self.done.is_none(),
            "sync engine holds one request at a time"
        );
        let length = request.length as usize;
        let (file, trim) = match &mut self.on_demand {
            Some(on_demand) => {
                if request.direction != Direction::Read {
                    on_demand.mark_written(request.file);
                }
                if on_demand.maps_files() && request.direction != Direction::Trim {
                    let result =
                        Self::through_mapping_on_demand(on_demand, &mut self.buffers, &request)?;
                    self.done = Some(Completion {
                        slot: request.slot,
                        result,
                    });
                    return Ok(());
                }
                let file = on_demand
                    .get(request.file)
                    .map_err(|source| failed("open", source))?;
                (file, Some(LocalTrim::PunchHole))
            }
            None => {
                let Some(file) = self.files.get(request.file as usize) else {
                    return Err(super::not_one_of_the_files("sync"));
                };
                (file, self.trims[request.file as usize])
            }
        };
        let offset = request.offset;
        let status = |outcome: std::io::Result<usize>| match outcome {
            Ok(bytes) => bytes as i64,
            Err(error) => negative_errno(&error),
        };
        let result = match (&mut self.moves, request.direction) {
            // Every data path trims the same way.
            (_, Direction::Trim) => status(match trim {
                Some(how) => how.trim(file, offset, length as u64).map(|()| length),
                None => Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
            }),
            (Moves::Pread, Direction::Read) => {
                status(file.read_at(&mut self.buffers.slot_mut(0)[..length], offset))
            }
            (Moves::Pread, Direction::Write) => {
                status(file.write_at(&self.buffers.slot(0)[..length], offset))
            }
            (Moves::Mmap(maps), Direction::Read) => {
                maps[request.file as usize].read(&mut self.buffers.slot_mut(0)[..length], offset)
            }
            (Moves::Mmap(maps), Direction::Write) => {
                maps[request.file as usize].write(&self.buffers.slot(0)[..length], offset)
            }
            (Moves::Splice(pipe), Direction::Read) => {
                pipe.read_file(file, &mut self.buffers.slot_mut(0)[..length], offset)
            }
            (Moves::Splice(pipe), Direction::Write) => {
                pipe.write_file(file, &self.buffers.slot(0)[..length], offset)
            }
        };
        self.done = Some(Completion {
            slot: request.slot,
            result,
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
        if let Moves::Mmap(maps) = &self.moves {
            let open_on_demand = self.on_demand.iter().flat_map(FilesOnDemand::open_mappings);
            for map in maps.iter().chain(open_on_demand) {
                map.sync().map_err(|source| EngineError::Operation {
                    engine: "sync",
                    operation: "msync",
                    source,
                })?;
            }
        }
        let open_on_demand = self.on_demand.iter().flat_map(FilesOnDemand::open_files);
        for file in self.files.iter().chain(open_on_demand) {
            file.sync_data()
                .map_err(|source| failed("fdatasync", source))?;
        }
        Ok(())
    }

    fn drop_cached_pages(&mut self, file: u32) -> std::io::Result<()> {
        let open = match &self.on_demand {
            Some(on_demand) => on_demand.opened(file),
            None => self.files.get(file as usize),
        };
        open.map_or(Ok(()), |open| {
            crate::targets::open::invalidate_cached_range(open, 0, 0)
        })
    }
}
