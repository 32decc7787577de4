//! The io_uring engine: one ring per engine, one submission queue entry per request, and the
//! request's slot carried in the entry's `user_data`.
//!
//! [`IoUringEngine::open`] sizes everything to the queue depth before the clock starts: the ring
//! (submission queue rounded up to a power of two, completion queue twice that, so at most
//! `queue_depth` requests in flight can never overflow it), one aligned buffer per slot, and a
//! busy flag per slot. [`Engine::submit`] only writes one entry into the shared submission queue,
//! [`Engine::flush`] hands what is queued to the kernel in one `io_uring_enter` (the worker
//! flushes after every request, so each starts as soon as it is queued, as with fio's default
//! `iodepth_batch_submit=1`), and
//! [`Engine::reap`] reads finished requests straight from the shared completion queue, entering
//! the kernel only when it has to wait. None of the three allocates.
//!
//! With [`EngineOptions::register`] the engine registers its buffers (so requests use
//! `READ_FIXED` / `WRITE_FIXED` and skip pinning pages per I/O) and its files (so requests skip
//! the file table lookup). [`IoUringEngine::open_files`] opens one ring on several files, each
//! request naming its file (a worker moving over a job's files). Either registration may be
//! refused — buffers need `RLIMIT_MEMLOCK` room
//! (`ENOMEM` for an ordinary user with a large pool), the kernel caps registered buffers at
//! 16384 — and then the engine falls back to plain `READ` / `WRITE` or the raw file descriptor.
//! [`Capabilities`] says what is really in effect, and
//! [`IoUringEngine::buffer_registration_error`] / [`IoUringEngine::file_registration_error`]
//! say why something is not.
//!
//! [`IoUringEngine::on_demand`] opens each regular file at its first request and keeps at most
//! a bound of them open (fio's `openfiles`; see [`super::files_on_demand`]). A file is held
//! open while a request on it is in flight; when a request names a file that cannot be opened
//! because every open file has requests in flight, submit waits in the kernel for a completion
//! first and keeps it (in a stash sized to the queue depth) for the next reap. Such files are
//! not registered: a registered file would stay open in the ring after its descriptor is
//! closed.
//!
//! A trim of a block device is the block layer's discard command (`IORING_OP_URING_CMD` with
//! [`BLOCK_URING_CMD_DISCARD`], Linux 6.12 or later; `EOPNOTSUPP` before), a trim of a file an
//! `IORING_OP_FALLOCATE` that punches a hole; both are queued like reads and writes, use no
//! buffer, and complete with the trim's length when they succeed (the kernel answers 0).
//!
//! Memory safety rests on one rule: a slot's buffer is never touched by us, nor freed, while the
//! kernel may still use it. A slot is busy from its submit to the completion that names it;
//! submitting a busy slot is an error, [`Engine::buffer_mut`] on a busy slot panics, and dropping
//! the engine first cancels and waits for everything in flight (leaking the buffers rather than
//! freeing them if the kernel does not give them back in time).
//!
//! ```
//! use iopath::engine::io_uring::{self, IoUringEngine};
//! use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
//! use iopath::result::Direction;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! if io_uring::probe().is_err() {
//!     return Ok(()); // no io_uring on this kernel (or it is disabled)
//! }
//! let options = EngineOptions::new(2, 4096);
//! let mut engine = IoUringEngine::open(tempfile::tempfile()?, &options)?;
//! engine.buffer_mut(1).fill(0xab);
//! engine.submit(IoRequest { file: 0, slot: 1, direction: Direction::Write, offset: 8192, length: 4096 })?;
//! engine.flush()?;
//! let mut done = [Completion::default(); 2];
//! assert_eq!(engine.reap(1, &mut done)?, 1);
//! assert_eq!(done[0], Completion { slot: 1, result: 4096 });
//! # Ok(())
//! # }
//! ```

use super::buffer::BufferPool;
use super::files_on_demand::FilesOnDemand;
use super::sys::PUNCH_HOLE_MODE;
use super::trim::LocalTrim;
use super::{Completion, Engine, EngineError, EngineFile, EngineOptions, IoRequest};
use crate::result::{Capabilities, Direction};
use io_uring::{IoUring, Probe, opcode, squeue, types};
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Name of this engine on the command line and in errors.
const ENGINE_NAME: &str = "io_uring";

/// The block layer's io_uring command that discards a byte range (`BLOCK_URING_CMD_DISCARD`,
/// `_IO(0x12, 0)` in `<linux/blkdev.h>`): the start in the entry's `addr`, the length in
/// `addr3` (the first 8 bytes of its command area).
pub const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

/// Highest queue depth one engine accepts: the kernel's limit on submission queue entries
/// (`IORING_MAX_ENTRIES`).
pub const MAX_QUEUE_DEPTH: u32 = 32768;

/// `user_data` of the cancel request issued when the engine is dropped; never a slot number,
/// because slots are `u32`.
const CANCEL_USER_DATA: u64 = u64::MAX;

/// How long dropping the engine waits for requests still in flight before it gives up and leaks
/// their buffers instead of freeing memory the kernel may still write.
const DROP_DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks that an io_uring can be created here and supports the `READ` and `WRITE` opcodes
/// (Linux 5.6 or later, io_uring not disabled by `kernel.io_uring_disabled` or a seccomp filter).
pub fn probe() -> Result<(), io::Error> {
    let ring = IoUring::new(2)?;
    check_opcodes(&ring)
}

/// Checks, changing nothing, that this kernel's io_uring can discard on the block device open
/// (for writing) as `file`: a discard command of 0 bytes is sent on a ring of one entry. A
/// kernel that knows the command refuses the empty range with `EINVAL`; one before Linux 6.12
/// (no io_uring command on block devices) answers `EOPNOTSUPP`, which is returned.
pub fn probe_block_discard(file: &EngineFile) -> Result<(), io::Error> {
    let mut ring = IoUring::new(1)?;
    let entry = opcode::UringCmd16::new(types::Fd(file.as_raw_fd()), BLOCK_URING_CMD_DISCARD)
        .addr(Some(0))
        .build();
    // SAFETY: the entry refers to no memory of ours; the descriptor outlives the ring, which is
    // dropped after the one completion was reaped.
    unsafe { ring.submission().push(&entry) }
        .map_err(|_| io::Error::other("the probe ring is full"))?;
    loop {
        match ring.submit_and_wait(1) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            outcome => outcome?,
        };
        break;
    }
    let result = ring
        .completion()
        .next()
        .map_or(-libc::EIO, |entry| entry.result());
    match -result {
        0 | libc::EINVAL => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// Checks that `ring` supports the opcodes this engine issues.
fn check_opcodes(ring: &IoUring) -> Result<(), io::Error> {
    let mut probe = Probe::new();
    ring.submitter().register_probe(&mut probe)?;
    if probe.is_supported(opcode::Read::CODE) && probe.is_supported(opcode::Write::CODE) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this kernel's io_uring lacks the READ/WRITE opcodes (Linux 5.6 or later is needed)",
        ))
    }
}

/// The io_uring engine; see the module documentation.
pub struct IoUringEngine {
    /// Declared first so that it is closed before the file it may have registered.
    ring: IoUring,
    /// Freed by hand in `Drop`, and only once nothing is in flight.
    buffers: ManuallyDrop<BufferPool>,
    /// The targets; kept open for the ring's lifetime (also when they are registered).
    files: Vec<EngineFile>,
    /// Regular files opened as requests come to them, instead of `files` (which is then
    /// empty); never registered.
    on_demand: Option<FilesOnDemand>,
    /// Per slot: the on-demand file its request in flight holds.
    slot_files: Vec<u32>,
    /// Completions reaped while submit waited for an on-demand file to be free, handed out
    /// by the next reap (room for the queue depth, allocated before the clock starts).
    stash: Vec<Completion>,
    /// How many entries of `stash` are waiting.
    stashed: usize,
    /// What is really in effect (registration may have been refused).
    capabilities: Capabilities,
    /// The `fd` field of the entries of each file: its raw descriptor, or its index among the
    /// registered files.
    target_fds: Vec<types::Fd>,
    /// `FIXED_FILE` when the files are registered, empty otherwise.
    target_flags: squeue::Flags,
    /// Every this-many-th submission carries `IOSQE_ASYNC` (0: none), as fio's `force_async`.
    force_async_every: u32,
    /// Submissions since the last one flagged `IOSQE_ASYNC`.
    since_async: u32,
    /// Per slot: submitted and not yet reaped.
    busy: Vec<bool>,
    /// Per slot: the length of the trim in flight there (0: not a trim), given back as its
    /// result when the kernel answers 0.
    trim_lengths: Vec<u32>,
    /// How each file is trimmed (`None`: its kind could not be told; a trim fails).
    trims: Vec<Option<LocalTrim>>,
    /// Number of busy slots.
    in_flight: u32,
    /// Why buffer registration was refused, when it was asked for.
    buffer_registration_error: Option<io::Error>,
    /// Why file registration was refused, when it was asked for.
    file_registration_error: Option<io::Error>,
}

impl IoUringEngine {
    /// Opens an io_uring engine on `file` with `options.queue_depth` slots of
    /// `options.buffer_size` bytes each, registering buffers and file when `options.register`
    /// asks for it and the kernel allows it.
    ///
    /// Fails when the queue depth is 0 or above [`MAX_QUEUE_DEPTH`], or when no ring with the
    /// needed opcodes can be created. A refused registration is not a failure (see
    /// [`Capabilities`]).
    pub fn open(file: EngineFile, options: &EngineOptions) -> Result<Self, EngineError> {
        Self::open_files(vec![file], options)
    }

    /// Opens an io_uring engine on `files` (at least one; requests name their file by its
    /// index here), as [`IoUringEngine::open`] does on one.
    pub fn open_files(
        files: Vec<EngineFile>,
        options: &EngineOptions,
    ) -> Result<Self, EngineError> {
        if files.is_empty() || files.len() > u32::MAX as usize {
            return Err(no_file());
        }
        Self::open_with(files, None, options)
    }

    /// Opens an io_uring engine on the regular files of `files`, each opened at its first
    /// request and at most its bound of them open at once (see the module documentation);
    /// buffers are registered when `options.register` asks for it, files never are.
    pub fn on_demand(files: FilesOnDemand, options: &EngineOptions) -> Result<Self, EngineError> {
        if files.count() == 0 || files.count() > u32::MAX as usize {
            return Err(no_file());
        }
        Self::open_with(Vec::new(), Some(files), options)
    }

    /// The engine on `files`, or on the files of `on_demand` when given.
    fn open_with(
        files: Vec<EngineFile>,
        on_demand: Option<FilesOnDemand>,
        options: &EngineOptions,
    ) -> Result<Self, EngineError> {
        let setup_error = |source| EngineError::Setup {
            engine: ENGINE_NAME,
            source,
        };
        let queue_depth = options.queue_depth;
        if queue_depth == 0 || queue_depth > MAX_QUEUE_DEPTH {
            return Err(setup_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("queue depth {queue_depth} is outside 1..={MAX_QUEUE_DEPTH}"),
            )));
        }
        let ring = IoUring::new(queue_depth.next_power_of_two()).map_err(setup_error)?;
        check_opcodes(&ring).map_err(setup_error)?;
        // The kernel makes the completion queue twice the submission queue; make sure of it.
        let params = ring.params();
        if params.sq_entries() < queue_depth || params.cq_entries() < queue_depth {
            return Err(setup_error(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the kernel gave a ring of {} submission / {} completion entries for queue depth {queue_depth}",
                    params.sq_entries(),
                    params.cq_entries()
                ),
            )));
        }

        let buffers = BufferPool::new(queue_depth as usize, options.buffer_size);
        let raw_fds: Vec<i32> = files.iter().map(|file| file.as_raw_fd()).collect();
        let (buffer_registration_error, file_registration_error) = if options.register {
            (
                register_buffers(&ring, &buffers).err(),
                match on_demand {
                    None => ring.submitter().register_files(&raw_fds).err(),
                    Some(_) => Some(io::Error::new(
                        io::ErrorKind::Unsupported,
                        "files opened on demand (openfiles) are not registered",
                    )),
                },
            )
        } else {
            (None, None)
        };
        let registered_buffers = options.register && buffer_registration_error.is_none();
        let registered_files = options.register && file_registration_error.is_none();
        let (target_fds, target_flags) = if registered_files {
            (
                // With FIXED_FILE the `fd` field is the index among the registered files.
                (0..raw_fds.len() as i32).map(types::Fd).collect(),
                squeue::Flags::FIXED_FILE,
            )
        } else {
            (
                raw_fds.iter().map(|&fd| types::Fd(fd)).collect(),
                squeue::Flags::empty(),
            )
        };

        let trims = files.iter().map(|file| LocalTrim::of(file).ok()).collect();
        let slots = queue_depth as usize;
        Ok(IoUringEngine {
            trims,
            ring,
            buffers: ManuallyDrop::new(buffers),
            files,
            on_demand,
            slot_files: vec![0; slots],
            stash: vec![Completion::default(); slots],
            stashed: 0,
            capabilities: Capabilities {
                max_queue_depth: queue_depth,
                registered_buffers,
                registered_files,
                performs_io: true,
                separates_submission: true,
            },
            target_fds,
            target_flags,
            force_async_every: options.force_async_every,
            since_async: 0,
            busy: vec![false; queue_depth as usize],
            trim_lengths: vec![0; queue_depth as usize],
            in_flight: 0,
            buffer_registration_error,
            file_registration_error,
        })
    }

    /// Why buffer registration was asked for but refused (for example `ENOMEM` under
    /// `RLIMIT_MEMLOCK`); `None` when the buffers are registered or registration was not asked
    /// for.
    pub fn buffer_registration_error(&self) -> Option<&io::Error> {
        self.buffer_registration_error.as_ref()
    }

    /// Why file registration was asked for but refused; `None` when the file is registered or
    /// registration was not asked for.
    pub fn file_registration_error(&self) -> Option<&io::Error> {
        self.file_registration_error.as_ref()
    }

    /// `ASYNC` for every `force_async_every`-th submission (counting this one), as fio's
    /// `force_async=N` sets `IOSQE_ASYNC` on every Nth; empty otherwise.
    #[inline]
    fn async_flag(&mut self) -> squeue::Flags {
        if self.force_async_every == 0 {
            return squeue::Flags::empty();
        }
        self.since_async += 1;
        if self.since_async < self.force_async_every {
            return squeue::Flags::empty();
        }
        self.since_async = 0;
        squeue::Flags::ASYNC
    }

    /// Number of entries in the submission queue that the kernel has not consumed yet.
    fn unsubmitted(&mut self) -> usize {
        self.ring.submission().len()
    }

    /// Submits every queued entry and waits until at least `want` completions are ready,
    /// retrying when a signal interrupts the wait. May return early (after a signal, or when the
    /// kernel stops submitting at a failed entry); callers loop.
    fn enter(&self, want: usize, operation: &'static str) -> Result<usize, EngineError> {
        loop {
            match self.ring.submit_and_wait(want) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                outcome => return outcome.map_err(|source| operation_error(operation, source)),
            }
        }
    }

    /// Moves ready completions into `completions` (as many as fit) and frees their slots;
    /// returns how many were written. Never enters the kernel.
    fn drain(&mut self, completions: &mut [Completion]) -> usize {
        let mut written = 0;
        let mut queue = self.ring.completion();
        while written < completions.len() {
            let Some(entry) = queue.next() else { break };
            let user_data = entry.user_data();
            if user_data == CANCEL_USER_DATA {
                continue;
            }
            let mut result = i64::from(entry.result());
            if let Some(busy) = self.busy.get_mut(user_data as usize)
                && *busy
            {
                *busy = false;
                self.in_flight -= 1;
                if let Some(files) = &mut self.on_demand {
                    files.release(self.slot_files[user_data as usize]);
                }
                let trim_length = std::mem::take(&mut self.trim_lengths[user_data as usize]);
                if trim_length > 0 && result == 0 {
                    result = i64::from(trim_length);
                }
            }
            completions[written] = Completion {
                slot: user_data as u32,
                result,
            };
            written += 1;
        }
        written
    }

    /// The `fd` field and trim of on-demand file `file` for a request, opening the file now
    /// when it is not open; when every open file has requests in flight and none may be
    /// opened, waits for completions first (kept for the next reap).
    fn on_demand_target(
        &mut self,
        file: u32,
        direction: Direction,
    ) -> Result<(types::Fd, Option<LocalTrim>), EngineError> {
        loop {
            let Some(files) = &mut self.on_demand else {
                return Err(super::not_one_of_the_files(ENGINE_NAME));
            };
            if files.can_open(file) || self.in_flight == 0 {
                if direction != Direction::Read {
                    files.mark_written(file);
                }
                let opened = files
                    .get(file)
                    .map_err(|source| operation_error("open", source))?;
                return Ok((types::Fd(opened.as_raw_fd()), Some(LocalTrim::PunchHole)));
            }
            self.enter(1, "wait for a file to be free")?;
            let mut stash = std::mem::take(&mut self.stash);
            self.stashed += self.drain(&mut stash[self.stashed..]);
            self.stash = stash;
        }
    }

    /// Moves stashed completions into `completions` (as many as fit); returns how many.
    fn take_stashed(&mut self, completions: &mut [Completion]) -> usize {
        let taken = self.stashed.min(completions.len());
        completions[..taken].copy_from_slice(&self.stash[..taken]);
        self.stash.copy_within(taken..self.stashed, 0);
        self.stashed -= taken;
        taken
    }

    /// Cancels what can be cancelled and waits (polling, at most [`DROP_DRAIN_TIMEOUT`]) until
    /// nothing is in flight; returns whether that was reached. Errors are ignored: this runs in
    /// `Drop`, and the caller leaks the buffers when it returns `false`.
    fn drain_before_close(&mut self) -> bool {
        // Requests waiting on a pipe or socket can be cancelled (Linux 5.19+); file and device
        // I/O already under way cannot, and finishes by itself.
        let cancel = opcode::AsyncCancel2::new(types::CancelBuilder::any())
            .build()
            .user_data(CANCEL_USER_DATA);
        // SAFETY: a cancel request refers to no memory of ours. A full queue only means no
        // cancel is sent.
        let _ = unsafe { self.ring.submission().push(&cancel) };
        let deadline = Instant::now() + DROP_DRAIN_TIMEOUT;
        let mut sink = [Completion::default(); 32];
        loop {
            let _ = self.ring.submit();
            while self.drain(&mut sink) > 0 {}
            if self.in_flight == 0 {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Registers one fixed buffer per slot of `buffers` with `ring` (buffer index = slot).
fn register_buffers(ring: &IoUring, buffers: &BufferPool) -> Result<(), io::Error> {
    let iovecs: Vec<libc::iovec> = (0..buffers.slots())
        .map(|slot| libc::iovec {
            iov_base: buffers.slot_ptr(slot).cast(),
            iov_len: buffers.slot_size(),
        })
        .collect();
    // SAFETY: every iovec describes exactly one slot of `buffers`. The engine owns the pool, whose
    // memory never moves, and frees it only in `Drop` after unregistering the buffers and with
    // nothing in flight; until then the memory stays valid.
    unsafe { ring.submitter().register_buffers(&iovecs) }
}

/// The error of an engine opened on no file.
fn no_file() -> EngineError {
    EngineError::Setup {
        engine: ENGINE_NAME,
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            "an engine needs at least one file",
        ),
    }
}

/// An [`EngineError::Operation`] of this engine.
fn operation_error(operation: &'static str, source: io::Error) -> EngineError {
    EngineError::Operation {
        engine: ENGINE_NAME,
        operation,
        source,
    }
}

/// A misuse of [`Engine::submit`], reported as an error.
fn invalid_submit(message: &'static str) -> EngineError {
    operation_error(
        "submit",
        io::Error::new(io::ErrorKind::InvalidInput, message),
    )
}

impl Engine for IoUringEngine {
    fn name(&self) -> &'static str {
        ENGINE_NAME
    }

    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// # Panics
    ///
    /// When `slot` is not below the queue depth, or its request is still in flight (the kernel
    /// may be writing into that buffer).
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(
            !self.busy[slot],
            "io_uring: buffer of slot {slot} requested while its request is in flight"
        );
        self.buffers.slot_mut(slot)
    }

    /// Writes one entry into the submission queue; the kernel sees it at the next
    /// [`Engine::flush`] (or a [`Engine::reap`] that waits). A slot out of range, a slot
    /// already in flight or a length beyond the buffer is an error, and so is a full submission
    /// queue (which cannot happen with at most `queue_depth` requests in flight).
    #[inline]
    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        let slot = request.slot as usize;
        match self.busy.get(slot) {
            None => return Err(invalid_submit("slot is not below the queue depth")),
            Some(true) => return Err(invalid_submit("slot is already in flight")),
            Some(false) => {}
        }
        if request.length as usize > self.buffers.slot_size() {
            return Err(invalid_submit("length exceeds the slot's buffer"));
        }
        let (target_fd, trim) = match self.target_fds.get(request.file as usize) {
            Some(&target_fd) => (target_fd, self.trims[request.file as usize]),
            None if self.on_demand.is_some() => {
                self.on_demand_target(request.file, request.direction)?
            }
            None => return Err(super::not_one_of_the_files(ENGINE_NAME)),
        };
        let buffer = self.buffers.slot_ptr(slot);
        // Slots are below MAX_QUEUE_DEPTH, so the buffer index fits in u16.
        let buffer_index = slot as u16;
        let entry = match (request.direction, self.capabilities.registered_buffers) {
            (Direction::Read, true) => {
                opcode::ReadFixed::new(target_fd, buffer, request.length, buffer_index)
                    .offset(request.offset)
                    .build()
            }
            (Direction::Read, false) => opcode::Read::new(target_fd, buffer, request.length)
                .offset(request.offset)
                .build(),
            (Direction::Write, true) => {
                opcode::WriteFixed::new(target_fd, buffer, request.length, buffer_index)
                    .offset(request.offset)
                    .build()
            }
            (Direction::Write, false) => opcode::Write::new(target_fd, buffer, request.length)
                .offset(request.offset)
                .build(),
            (Direction::Trim, _) => match trim {
                Some(LocalTrim::Discard) => {
                    let mut command = [0u8; 16];
                    command[..8].copy_from_slice(&u64::from(request.length).to_ne_bytes());
                    opcode::UringCmd16::new(target_fd, BLOCK_URING_CMD_DISCARD)
                        .addr(Some(request.offset))
                        .cmd(command)
                        .build()
                }
                Some(LocalTrim::PunchHole) => {
                    opcode::Fallocate::new(target_fd, u64::from(request.length))
                        .offset(request.offset)
                        .mode(PUNCH_HOLE_MODE)
                        .build()
                }
                None => return Err(invalid_submit("the kind of the file to trim is unknown")),
            },
        }
        .flags(self.target_flags | self.async_flag())
        .user_data(u64::from(request.slot));
        // SAFETY: the entry names `length` bytes of this slot's buffer (checked above to fit)
        // and, for fixed buffers, the registered buffer of the same slot. The slot is marked busy
        // below, so until its completion is reaped the buffer is neither handed out by
        // `buffer_mut` nor reused by another submit, and `Drop` waits for it (or leaks the
        // buffers) before freeing. The descriptor (raw or registered) belongs to one of
        // `self.files`, which outlives the ring, or to an on-demand file held open (below)
        // until this request's completion is reaped.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            return Err(operation_error(
                "submit",
                io::Error::new(io::ErrorKind::WouldBlock, "submission queue is full"),
            ));
        }
        self.busy[slot] = true;
        if let Some(files) = &mut self.on_demand {
            files.hold(request.file);
            self.slot_files[slot] = request.file;
        }
        self.trim_lengths[slot] = if request.direction == Direction::Trim {
            request.length
        } else {
            0
        };
        self.in_flight += 1;
        Ok(())
    }

    /// Hands every queued entry to the kernel, normally in one `io_uring_enter`.
    #[inline]
    fn flush(&mut self) -> Result<(), EngineError> {
        while self.unsubmitted() > 0 {
            // The kernel stops a batch at an entry it rejects (after posting that entry's
            // failed completion); go on with the rest, but never spin without progress.
            if self.enter(0, "submit")? == 0 {
                break;
            }
        }
        Ok(())
    }

    /// Returns ready completions; waits in the kernel (submitting anything still queued) only
    /// when fewer than `min_completions` are ready. Never waits for more than are in flight, so
    /// `reap(n, ..)` with nothing in flight returns 0 at once.
    #[inline]
    fn reap(
        &mut self,
        min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        let mut reaped = self.take_stashed(completions);
        let wanted = min_completions
            .min(reaped + self.in_flight as usize)
            .min(completions.len());
        loop {
            if reaped < wanted {
                let missing = wanted - reaped;
                if self.unsubmitted() > 0 || self.ring.completion().len() < missing {
                    self.enter(missing, "wait for completions")?;
                }
            }
            reaped += self.drain(&mut completions[reaped..]);
            if reaped >= wanted {
                return Ok(reaped);
            }
        }
    }

    /// `fdatasync` on the file. Only legal with nothing in flight (it would not cover requests
    /// still under way): with requests in flight it fails with `ResourceBusy` instead.
    fn sync_data(&mut self) -> Result<(), EngineError> {
        if self.in_flight > 0 {
            return Err(operation_error(
                "fdatasync",
                io::Error::new(
                    io::ErrorKind::ResourceBusy,
                    "requests are still in flight; reap them first",
                ),
            ));
        }
        let open_on_demand = self.on_demand.iter().flat_map(FilesOnDemand::open_files);
        for file in self.files.iter().chain(open_on_demand) {
            file.sync_data()
                .map_err(|source| operation_error("fdatasync", source))?;
        }
        Ok(())
    }

    fn drop_cached_pages(&mut self, file: u32) -> io::Result<()> {
        let open = match &self.on_demand {
            Some(on_demand) => on_demand.opened(file),
            None => self.files.get(file as usize),
        };
        open.map_or(Ok(()), |open| {
            crate::targets::open::invalidate_cached_range(open, 0, 0)
        })
    }
}

impl Drop for IoUringEngine {
    fn drop(&mut self) {
        if self.in_flight > 0 && !self.drain_before_close() {
            // The kernel may still write into the buffers: leak them rather than free memory it
            // uses.
            return;
        }
        if self.capabilities.registered_buffers {
            let _ = self.ring.submitter().unregister_buffers();
        }
        // SAFETY: nothing is in flight any more, so no request refers to the buffers; they are
        // dropped exactly once, here, and the field is not used afterwards.
        unsafe { ManuallyDrop::drop(&mut self.buffers) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::os::fd::OwnedFd;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    /// Whether io_uring works here; skips the calling test when it does not (see
    /// `crate::support::require`).
    fn io_uring_works() -> bool {
        match probe() {
            Ok(()) => true,
            Err(error) => {
                crate::support::skip(format_args!("io_uring is unavailable here ({error})"));
                false
            }
        }
    }

    #[test]
    fn trims_of_a_file_punch_holes_and_complete_with_their_length() {
        if !io_uring_works() {
            return;
        }
        use std::os::unix::fs::MetadataExt;
        let directory = tempfile::tempdir().unwrap();
        let (path, file) = crate::engine::trim::written_file(directory.path(), 64 << 10, 0x77);
        if crate::engine::trim::probe(&file, LocalTrim::PunchHole).is_err() {
            crate::support::skip("the file system of the temporary directory has no holes");
            return;
        }
        let before = file.metadata().unwrap().blocks();
        for register in [false, true] {
            let mut engine =
                IoUringEngine::open(file.try_clone().unwrap(), &options(4, register)).unwrap();
            for slot in 0..4u32 {
                engine
                    .submit(IoRequest {
                        file: 0,
                        slot,
                        direction: Direction::Trim,
                        offset: u64::from(slot) * 4096,
                        length: 4096,
                    })
                    .unwrap();
            }
            flush_and_expect_whole(&mut engine);
        }
        crate::engine::trim::assert_hole_at_start(&path, 64 << 10, before, 16 << 10, 0x77);
    }

    fn options(queue_depth: u32, register: bool) -> EngineOptions {
        EngineOptions {
            register,
            ..EngineOptions::new(queue_depth, 4096)
        }
    }

    /// Flushes `engine`, reaps its four requests in flight and checks that each moved 4096
    /// bytes.
    fn flush_and_expect_whole(engine: &mut IoUringEngine) {
        engine.flush().unwrap();
        let mut done = [Completion::default(); 4];
        let mut reaped = 0;
        while reaped < 4 {
            reaped += engine.reap(1, &mut done[reaped..]).unwrap();
        }
        assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
    }

    fn read_write_file() -> File {
        tempfile::tempfile().expect("temporary file")
    }

    /// The read end of a pipe as an engine file, and the write end.
    fn pipe_file() -> (File, std::io::PipeWriter) {
        let (reader, writer) = std::io::pipe().expect("pipe");
        (File::from(OwnedFd::from(reader)), writer)
    }

    #[test]
    fn probe_agrees_with_open() {
        let opened = IoUringEngine::open(read_write_file(), &options(4, false));
        assert_eq!(probe().is_ok(), opened.is_ok());
    }

    #[test]
    fn capabilities_report_registration() {
        if !io_uring_works() {
            return;
        }
        let plain = IoUringEngine::open(read_write_file(), &options(8, false)).unwrap();
        assert!(!plain.capabilities().registered_buffers);
        assert!(!plain.capabilities().registered_files);
        assert!(plain.buffer_registration_error().is_none());
        assert!(plain.file_registration_error().is_none());

        let registered = IoUringEngine::open(read_write_file(), &options(8, true)).unwrap();
        let capabilities = registered.capabilities();
        assert_eq!(capabilities.max_queue_depth, 8);
        assert!(capabilities.performs_io);
        assert_eq!(
            capabilities.registered_buffers,
            registered.buffer_registration_error().is_none()
        );
        assert_eq!(
            capabilities.registered_files,
            registered.file_registration_error().is_none()
        );
        if crate::host::sys::is_root() {
            assert!(capabilities.registered_buffers, "root may pin 32 KiB");
            assert!(capabilities.registered_files);
        }
    }

    #[test]
    fn force_async_flags_every_nth_submission_and_the_io_completes() {
        if !io_uring_works() {
            return;
        }
        let forced = EngineOptions {
            force_async_every: 3,
            ..options(4, false)
        };
        let mut engine = IoUringEngine::open(read_write_file(), &forced).unwrap();
        let flags: Vec<bool> = (0..7)
            .map(|_| engine.async_flag().contains(squeue::Flags::ASYNC))
            .collect();
        assert_eq!(flags, [false, false, true, false, false, true, false]);
        // Real requests, some of them IOSQE_ASYNC, complete whole.
        for round in 0..3u64 {
            for slot in 0..4u32 {
                engine.buffer_mut(slot as usize)[..4096].fill(slot as u8);
                engine
                    .submit(IoRequest {
                        file: 0,
                        slot,
                        direction: Direction::Write,
                        offset: (round * 4 + u64::from(slot)) * 4096,
                        length: 4096,
                    })
                    .unwrap();
            }
            flush_and_expect_whole(&mut engine);
        }
        let plain = IoUringEngine::open(read_write_file(), &options(1, false));
        assert!(plain.unwrap().async_flag().is_empty());
    }

    #[test]
    fn refused_buffer_registration_falls_back_to_plain_buffers() {
        if !io_uring_works() {
            return;
        }
        // The kernel registers at most 16384 buffers (IORING_MAX_REG_BUFFERS).
        let queue_depth = 16385;
        let mut engine =
            IoUringEngine::open(read_write_file(), &options(queue_depth, true)).unwrap();
        assert!(!engine.capabilities().registered_buffers);
        assert!(engine.buffer_registration_error().is_some());
        assert!(engine.capabilities().registered_files);

        let last = (queue_depth - 1) as usize;
        engine.buffer_mut(last)[..4096].fill(0x5a);
        let write = IoRequest {
            file: 0,
            slot: last as u32,
            direction: Direction::Write,
            offset: 4096,
            length: 4096,
        };
        engine.submit(write).unwrap();
        engine.flush().unwrap();
        let mut done = [Completion::default(); 4];
        assert_eq!(engine.reap(1, &mut done).unwrap(), 1);
        assert_eq!(
            done[0],
            Completion {
                slot: last as u32,
                result: 4096
            }
        );

        engine.buffer_mut(0).fill(0);
        let read = IoRequest {
            file: 0,
            slot: 0,
            direction: Direction::Read,
            ..write
        };
        engine.submit(read).unwrap();
        engine.flush().unwrap();
        assert_eq!(engine.reap(1, &mut done).unwrap(), 1);
        assert_eq!(
            done[0],
            Completion {
                slot: 0,
                result: 4096
            }
        );
        assert!(
            engine.buffer_mut(0)[..4096]
                .iter()
                .all(|byte| *byte == 0x5a)
        );
    }

    #[test]
    fn files_on_demand_stay_within_their_bound_and_wait_for_a_free_file() {
        if !io_uring_works() {
            return;
        }
        use std::os::unix::fs::FileExt;
        let directory = tempfile::tempdir().unwrap();
        let paths: Vec<_> = (0..6)
            .map(|n| {
                let path = directory.path().join(format!("f{n}"));
                std::fs::write(&path, [0u8; 4096]).unwrap();
                path
            })
            .collect();
        for register in [false, true] {
            let files = FilesOnDemand::new(6, 2, {
                let paths = paths.clone();
                Box::new(move |file| {
                    std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&paths[file as usize])
                })
            });
            let mut engine = IoUringEngine::on_demand(files, &options(4, register)).unwrap();
            assert!(!engine.capabilities().registered_files);
            assert_eq!(
                engine.file_registration_error().is_some(),
                register,
                "files opened on demand are never registered"
            );
            // Four writes in flight on four files, two open at most: the third and fourth
            // wait for earlier ones to complete, whose completions the next reap hands out.
            let mut done = [Completion::default(); 4];
            for round in 0..3u32 {
                for slot in 0..4u32 {
                    let file = (round * 4 + slot) % 6;
                    engine.buffer_mut(slot as usize).fill(file as u8 + 1);
                    engine
                        .submit(IoRequest {
                            file,
                            slot,
                            direction: Direction::Write,
                            offset: 0,
                            length: 4096,
                        })
                        .unwrap();
                    engine.flush().unwrap();
                    assert!(engine.on_demand.as_ref().unwrap().open_count() <= 2);
                }
                let mut reaped = 0;
                while reaped < 4 {
                    reaped += engine.reap(1, &mut done[reaped..]).unwrap();
                }
                let mut slots: Vec<u32> = done.iter().map(|c| c.slot).collect();
                slots.sort_unstable();
                assert_eq!(slots, [0, 1, 2, 3], "each request completes once");
                assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
            }
            assert_eq!(
                engine.reap(1, &mut done).unwrap(),
                0,
                "nothing is left over"
            );
            drop(engine);
            let mut byte = [0u8; 1];
            for (file, path) in paths.iter().enumerate() {
                std::fs::File::open(path)
                    .unwrap()
                    .read_exact_at(&mut byte, 0)
                    .unwrap();
                assert_eq!(byte[0], file as u8 + 1, "file {file}");
            }
        }
    }

    #[test]
    fn misuse_is_an_error_not_a_panic() {
        if !io_uring_works() {
            return;
        }
        let mut engine = IoUringEngine::open(read_write_file(), &options(2, true)).unwrap();
        let read = IoRequest {
            file: 0,
            slot: 0,
            direction: Direction::Read,
            offset: 0,
            length: 4096,
        };
        assert!(
            engine
                .submit(IoRequest {
                    file: 0,
                    slot: 2,
                    ..read
                })
                .is_err()
        );
        assert!(
            engine
                .submit(IoRequest {
                    file: 0,
                    length: 4097,
                    ..read
                })
                .is_err()
        );
        engine.submit(read).unwrap();
        assert!(engine.submit(read).is_err(), "slot 0 is in flight");
        assert!(engine.sync_data().is_err(), "a request is in flight");
        engine.flush().unwrap();
        let mut done = [Completion::default(); 2];
        assert_eq!(
            engine.reap(2, &mut done).unwrap(),
            1,
            "only one was in flight"
        );
        assert_eq!(done[0], Completion { slot: 0, result: 0 });
        engine.sync_data().unwrap();
    }

    #[test]
    fn failed_request_is_a_negative_result() {
        if !io_uring_works() {
            return;
        }
        // A read-only file: writes fail with EBADF in their completion.
        let path = tempfile::NamedTempFile::new().unwrap().into_temp_path();
        for register in [false, true] {
            let file = File::open(&path).unwrap();
            let mut engine = IoUringEngine::open(file, &options(1, register)).unwrap();
            let write = IoRequest {
                file: 0,
                slot: 0,
                direction: Direction::Write,
                offset: 0,
                length: 512,
            };
            engine.submit(write).unwrap();
            engine.flush().unwrap();
            let mut done = [Completion::default(); 1];
            assert_eq!(engine.reap(1, &mut done).unwrap(), 1);
            assert_eq!(
                done[0],
                Completion {
                    slot: 0,
                    result: -i64::from(libc::EBADF)
                }
            );
        }
    }

    static SIGNALS_HANDLED: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn count_signal(_signal: libc::c_int) {
        SIGNALS_HANDLED.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn interrupted_wait_is_retried() {
        if !io_uring_works() {
            return;
        }
        // SAFETY: installs a handler (without SA_RESTART, so the wait sees EINTR) that only
        // touches an atomic; no other test in this process uses SIGUSR1.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = count_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            assert_eq!(
                libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut()),
                0
            );
        }
        let (file, mut writer) = pipe_file();
        let mut engine = IoUringEngine::open(file, &options(1, false)).unwrap();
        let (thread_sender, thread_receiver) = mpsc::channel();
        let reaper = std::thread::spawn(move || {
            // SAFETY: pthread_self has no preconditions.
            thread_sender.send(unsafe { libc::pthread_self() }).unwrap();
            let read = IoRequest {
                file: 0,
                slot: 0,
                direction: Direction::Read,
                offset: 0,
                length: 16,
            };
            engine.submit(read).unwrap();
            engine.flush().unwrap();
            let mut done = [Completion::default(); 1];
            match engine.reap(1, &mut done) {
                // A failed reap leaves the read in flight, so its buffer may not be looked at.
                Err(error) => (Err(error.to_string()), done[0], Vec::new()),
                Ok(reaped) => (Ok(reaped), done[0], engine.buffer_mut(0)[..5].to_vec()),
            }
        });
        let reaper_thread = thread_receiver.recv().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        // SAFETY: the reaper thread is alive: it waits for the pipe, which is written below.
        let signalled = unsafe { libc::pthread_kill(reaper_thread, libc::SIGUSR1) };
        assert_eq!(signalled, 0);
        std::thread::sleep(Duration::from_millis(100));
        // Fails (EPIPE) only when the reaper has already given up and dropped the engine.
        let _ = std::io::Write::write_all(&mut writer, b"hello");
        let (reaped, completion, data) = reaper.join().unwrap();
        assert_eq!(reaped, Ok(1));
        assert_eq!(completion, Completion { slot: 0, result: 5 });
        assert_eq!(data, b"hello");
        assert!(SIGNALS_HANDLED.load(Ordering::SeqCst) >= 1);
    }

    #[test]
    fn drop_with_a_request_in_flight_cancels_it() {
        if !io_uring_works() {
            return;
        }
        let (file, _writer) = pipe_file();
        let mut engine = IoUringEngine::open(file, &options(2, true)).unwrap();
        let read = IoRequest {
            file: 0,
            slot: 1,
            direction: Direction::Read,
            offset: 0,
            length: 16,
        };
        engine.submit(read).unwrap();
        engine.flush().unwrap();
        let started = Instant::now();
        drop(engine);
        assert!(started.elapsed() < DROP_DRAIN_TIMEOUT);
    }
}
