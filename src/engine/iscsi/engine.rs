//! [`IscsiEngine`]: reads and writes as SCSI READ(16) / WRITE(16) commands over one or more
//! iSCSI sessions, queue depth requests in flight.
//!
//! [`IscsiEngine::open`] does everything before the clock starts: it logs in
//! [`EngineOptions::connections`] sessions, reads the logical block size (READ CAPACITY),
//! allocates one aligned buffer per slot and one record per slot that libiscsi's completion
//! callback writes into, and a completion ring of queue-depth entries. Slot `s` always uses
//! session `s % connections`.
//!
//! - [`Engine::submit`] queues the command in libiscsi (`iscsi_read16_iov_task` /
//!   `iscsi_write16_iov_task`) with the slot's buffer as its only iovec, so data moves between
//!   the socket and the slot buffer without a copy in between. Writes carry FUA when
//!   [`EngineOptions::write_through`] is set.
//! - [`Engine::flush`] lets libiscsi write queued commands to the sockets.
//! - [`Engine::reap`] `poll`s the sockets and runs `iscsi_service` until enough commands have
//!   finished; the callback turns each into a [`Completion`] in the ring (bytes, or a negative
//!   errno for a CHECK CONDITION: see [`iscsi_client::status::io_outcome`]).
//! - [`Engine::sync_data`] sends SYNCHRONIZE CACHE(16) for the whole volume.
//!
//! iopath allocates nothing per I/O; libiscsi itself allocates a task and a PDU per command
//! (it has no interface to reuse them), which is part of what this engine measures.
//!
//! A lost connection (the target went away, a reset) cancels everything in flight; the engine
//! then fails with [`EngineError::Operation`] rather than reconnecting and replaying. A target
//! that stops answering fails commands after [`EngineOptions::net_timeout`] (libiscsi's
//! per-command timeout, whole seconds). A volume whose size or logical block size is not what
//! the probe found ([`EngineOptions::expected_volume`]) is refused at open.
//!
//! Memory safety rests on two rules. A slot's buffer and record are never touched by us, nor
//! freed, while libiscsi may use them (from submit until the callback), and every session —
//! whose destruction may still run callbacks — is dropped before the records, the ring and the
//! buffers.

use super::probe::read_capacity;
use super::{
    ENGINE_NAME, library, log_in, login_parameters, operation_error, setup_error, setup_message,
};
use crate::engine::buffer::BufferPool;
use crate::engine::{
    Capabilities, Completion, Direction, Engine, EngineError, EngineOptions, IoRequest,
};
use crate::targets::network_target::NetworkTarget;
use iscsi_client::ffi::{
    IscsiContext, SCSI_STATUS_CHECK_CONDITION, SCSI_STATUS_GOOD, ScsiIovec, ScsiTask, UnmapList,
};
use iscsi_client::library::Library;
use iscsi_client::session::{Session, poll_sessions};
use iscsi_client::status::{IoOutcome, io_outcome};
use libc::{c_int, c_void};
use std::io;
use std::ptr::NonNull;
use std::time::Duration;

/// Highest queue depth one engine accepts.
pub const MAX_QUEUE_DEPTH: u32 = 65536;

/// Longest single wait in [`Engine::reap`], ms; libiscsi checks its timeouts at least this
/// often.
const POLL_SLICE_MS: c_int = 1000;

/// How long SYNCHRONIZE CACHE may take.
const SYNC_TIMEOUT: Duration = Duration::from_secs(120);

/// Finished requests waiting for [`Engine::reap`]: a ring of queue-depth entries, which can
/// never overflow because every entry belongs to a slot that is busy until it is reaped.
struct CompletionRing {
    entries: Box<[Completion]>,
    head: usize,
    len: usize,
    /// The session (index) whose connection was lost, once one was.
    lost_session: Option<usize>,
    /// `scsi_free_scsi_task`, for the callback.
    free_task: unsafe extern "C" fn(*mut ScsiTask),
}

impl CompletionRing {
    fn push(&mut self, completion: Completion) {
        let capacity = self.entries.len();
        debug_assert!(self.len < capacity, "completion ring overflow");
        if self.len < capacity {
            self.entries[(self.head + self.len) % capacity] = completion;
            self.len += 1;
        }
    }

    fn pop(&mut self) -> Option<Completion> {
        if self.len == 0 {
            return None;
        }
        let completion = self.entries[self.head];
        self.head = (self.head + 1) % self.entries.len();
        self.len -= 1;
        Some(completion)
    }
}

/// What libiscsi knows about one slot's command: the `private_data` of its callback.
struct SlotRecord {
    /// Where the callback reports.
    ring: *mut CompletionRing,
    slot: u32,
    session: usize,
    expected_bytes: u32,
    /// The command moves no data of the slot (an UNMAP, whose few bytes of parameters are
    /// libiscsi's): GOOD means all of `expected_bytes`, whatever residual the target reports.
    no_data: bool,
    /// The slot's buffer as libiscsi's iovec; libiscsi keeps a pointer to it (and adjusts it
    /// while transferring) until the callback.
    iov: ScsiIovec,
}

/// The ring and the slot records, each in an allocation that does not move from open to drop;
/// libiscsi holds raw pointers into them. Only ever accessed through the raw pointers kept
/// here, in scopes that end before the next call into libiscsi.
struct CallbackTargets {
    ring: NonNull<CompletionRing>,
    records: NonNull<SlotRecord>,
    slots: usize,
}

impl CallbackTargets {
    fn new(
        slots: usize,
        connections: usize,
        free_task: unsafe extern "C" fn(*mut ScsiTask),
    ) -> Self {
        let ring = NonNull::from(Box::leak(Box::new(CompletionRing {
            entries: vec![Completion::default(); slots].into_boxed_slice(),
            head: 0,
            len: 0,
            lost_session: None,
            free_task,
        })));
        let records: Box<[SlotRecord]> = (0..slots)
            .map(|slot| SlotRecord {
                ring: ring.as_ptr(),
                slot: slot as u32,
                session: slot % connections,
                expected_bytes: 0,
                no_data: false,
                iov: ScsiIovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                },
            })
            .collect();
        let records = NonNull::from(Box::leak(records)).cast::<SlotRecord>();
        CallbackTargets {
            ring,
            records,
            slots,
        }
    }

    fn record(&self, slot: usize) -> *mut SlotRecord {
        assert!(slot < self.slots);
        // SAFETY: in bounds of the records allocation.
        unsafe { self.records.as_ptr().add(slot) }
    }

    /// The ring, for use between calls into libiscsi only.
    fn ring(&mut self) -> &mut CompletionRing {
        // SAFETY: no libiscsi call (and so no callback) runs while this borrow of `self`
        // lasts; the ring is alive until `self` is dropped.
        unsafe { self.ring.as_mut() }
    }
}

impl Drop for CallbackTargets {
    fn drop(&mut self) {
        // SAFETY: both were leaked from boxes of exactly these shapes in `new` and are freed
        // once; the engine drops every session (and so every use by libiscsi) first.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.records.as_ptr(),
                self.slots,
            )));
            drop(Box::from_raw(self.ring.as_ptr()));
        }
    }
}

/// libiscsi's callback for every READ(16) / WRITE(16): reports the outcome in the ring and
/// frees the task.
///
/// # Safety
///
/// `private_data` is the slot's [`SlotRecord`] and `command_data` its task (or null); libiscsi
/// calls this from inside a call on the engine's contexts, while the engine holds no reference
/// into the records or the ring.
unsafe extern "C" fn io_finished(
    _context: *mut IscsiContext,
    status: c_int,
    command_data: *mut c_void,
    private_data: *mut c_void,
) {
    let record = private_data.cast::<SlotRecord>();
    let task = command_data.cast::<ScsiTask>();
    // SAFETY: see the function's contract. The task's residual is read only for GOOD and its
    // sense only for CHECK CONDITION, where libiscsi has filled them in.
    unsafe {
        let residual = (status == SCSI_STATUS_GOOD && !task.is_null() && !(*record).no_data)
            .then(|| ((*task).residual_status, (*task).residual));
        let sense = (status == SCSI_STATUS_CHECK_CONDITION && !task.is_null())
            .then(|| ((*task).sense.key, (*task).sense.ascq));
        let outcome = io_outcome(status, (*record).expected_bytes, residual, sense);
        let ring = &mut *(*record).ring;
        if !task.is_null() {
            (ring.free_task)(task);
        }
        match outcome {
            IoOutcome::Finished(result) => ring.push(Completion {
                slot: (*record).slot,
                result,
            }),
            IoOutcome::SessionLost => {
                ring.lost_session.get_or_insert((*record).session);
            }
        }
    }
}

/// The iSCSI engine; see the module documentation.
pub struct IscsiEngine {
    /// Dropped first, explicitly, in `Drop`.
    sessions: Vec<Session>,
    library: &'static Library,
    targets: CallbackTargets,
    buffers: BufferPool,
    capabilities: Capabilities,
    block_size_bytes: u32,
    /// Size of the volume at open (READ CAPACITY), bytes.
    volume_size_bytes: u64,
    /// FUA bit of every WRITE(16).
    force_unit_access: c_int,
    /// Per slot: submitted and not yet reaped.
    busy: Vec<bool>,
    busy_count: usize,
    /// One per session, reused by every wait.
    pollfds: Vec<libc::pollfd>,
}

// SAFETY: the engine exclusively owns its sessions (each `Send`), its buffers and the
// allocations libiscsi's callbacks write into; callbacks run only inside calls made through
// `&mut self`, on whichever single thread owns the engine.
unsafe impl Send for IscsiEngine {}

impl IscsiEngine {
    /// Logs in `options.connections` sessions to `target` and sets up `options.queue_depth`
    /// slots of `options.buffer_size` bytes.
    pub fn open(target: &NetworkTarget, options: &EngineOptions) -> Result<Self, EngineError> {
        let queue_depth = options.queue_depth;
        if queue_depth == 0 || queue_depth > MAX_QUEUE_DEPTH {
            return Err(setup_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("queue depth {queue_depth} is outside 1..={MAX_QUEUE_DEPTH}"),
            )));
        }
        let library = library::library().map_err(setup_message)?;
        let login = login_parameters(target)?;
        let connections = options.connections.clamp(1, queue_depth) as usize;
        let mut sessions = Vec::with_capacity(connections);
        for _ in 0..connections {
            sessions.push(log_in(library, &login, options.net_timeout)?);
        }
        let capacity = read_capacity(&mut sessions[0]).map_err(setup_error)?;
        EngineError::unless_same_volume(
            ENGINE_NAME,
            || sessions[0].description().to_string(),
            options.expected_volume.as_ref(),
            |found| {
                found.size_bytes = capacity.size_bytes();
                found.logical_block_size = capacity.block_size_bytes;
            },
        )?;
        let slots = queue_depth as usize;
        Ok(IscsiEngine {
            sessions,
            library,
            targets: CallbackTargets::new(slots, connections, library.free_task),
            buffers: BufferPool::new(slots, options.buffer_size),
            capabilities: Capabilities {
                max_queue_depth: queue_depth,
                registered_buffers: false,
                registered_files: false,
                performs_io: true,
                separates_submission: false,
            },
            block_size_bytes: capacity.block_size_bytes,
            volume_size_bytes: capacity.size_bytes(),
            force_unit_access: c_int::from(options.write_through),
            busy: vec![false; slots],
            busy_count: 0,
            pollfds: vec![
                libc::pollfd {
                    fd: -1,
                    events: 0,
                    revents: 0,
                };
                connections
            ],
        })
    }

    /// The volume's logical block size: offsets and lengths must be multiples of it.
    pub fn block_size_bytes(&self) -> u32 {
        self.block_size_bytes
    }

    /// Size of the volume when the engine was opened, bytes.
    pub fn volume_size_bytes(&self) -> u64 {
        self.volume_size_bytes
    }

    /// Sessions in use.
    pub fn connections(&self) -> usize {
        self.sessions.len()
    }

    /// An error when a session has been lost.
    fn check_sessions(&mut self, operation: &'static str) -> Result<(), EngineError> {
        let lost = self.targets.ring().lost_session;
        let failed = lost.or_else(|| self.sessions.iter().position(|s| !s.is_usable()));
        match failed {
            None => Ok(()),
            Some(index) => {
                let session = &mut self.sessions[index];
                session.mark_failed();
                Err(operation_error(
                    operation,
                    io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        format!(
                            "the connection to {} was lost: {}",
                            session.description(),
                            session.last_error()
                        ),
                    ),
                ))
            }
        }
    }

    /// Moves finished requests from the ring into `completions` and frees their slots.
    fn drain(&mut self, completions: &mut [Completion]) -> usize {
        let mut written = 0;
        while written < completions.len() {
            let Some(completion) = self.targets.ring().pop() else {
                break;
            };
            let busy = &mut self.busy[completion.slot as usize];
            debug_assert!(*busy);
            if *busy {
                *busy = false;
                self.busy_count -= 1;
            }
            completions[written] = completion;
            written += 1;
        }
        written
    }

    /// Waits at most `timeout_ms` for the sockets and services them.
    fn wait(&mut self, timeout_ms: c_int) -> Result<(), EngineError> {
        poll_sessions(&mut self.sessions, &mut self.pollfds, timeout_ms)
            .map_err(|source| operation_error("reap", source))?;
        self.check_sessions("reap")
    }
}

/// A misuse of [`Engine::submit`], reported as an error.
fn invalid_submit(message: String) -> EngineError {
    operation_error(
        "submit",
        io::Error::new(io::ErrorKind::InvalidInput, message),
    )
}

impl Engine for IscsiEngine {
    fn name(&self) -> &'static str {
        ENGINE_NAME
    }

    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// # Panics
    ///
    /// When `slot` is not below the queue depth, or its request has not been reaped yet
    /// (libiscsi may be using that buffer).
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        assert!(
            !self.busy[slot],
            "iscsi: buffer of slot {slot} requested while its request is in flight"
        );
        self.buffers.slot_mut(slot)
    }

    /// Queues a READ(16) or WRITE(16) of the slot's buffer in libiscsi; it reaches the wire at
    /// the next [`Engine::flush`] or [`Engine::reap`]. Offsets and lengths must be multiples
    /// of the logical block size. As on a block device, a request that crosses the end of the
    /// volume transfers only up to the end, and one that starts at or past it completes at
    /// once: a read with 0 bytes, a write with `ENOSPC`.
    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        if request.file != 0 {
            return Err(invalid_submit(format!(
                "file {}: an iSCSI engine holds one LUN (file 0)",
                request.file
            )));
        }
        let slot = request.slot as usize;
        match self.busy.get(slot) {
            None => {
                return Err(invalid_submit(format!(
                    "slot {slot} is not below the queue depth"
                )));
            }
            Some(true) => return Err(invalid_submit(format!("slot {slot} is already in flight"))),
            Some(false) => {}
        }
        let block = u64::from(self.block_size_bytes);
        if request.length == 0
            || request.length as usize > self.buffers.slot_size()
            || !u64::from(request.length).is_multiple_of(block)
            || !request.offset.is_multiple_of(block)
        {
            return Err(invalid_submit(format!(
                "{} bytes at offset {}: lengths and offsets must be non-zero multiples of the volume's {block}-byte logical block, lengths at most {}",
                request.length,
                request.offset,
                self.buffers.slot_size()
            )));
        }
        self.check_sessions("submit")?;
        // Like a block device: nothing past the end, a short transfer across it.
        if request.offset >= self.volume_size_bytes {
            let result = match request.direction {
                Direction::Read => 0,
                Direction::Write | Direction::Trim => -i64::from(libc::ENOSPC),
            };
            self.targets.ring().push(Completion {
                slot: request.slot,
                result,
            });
            self.busy[slot] = true;
            self.busy_count += 1;
            return Ok(());
        }
        let length = request
            .length
            .min((self.volume_size_bytes - request.offset).min(u64::from(u32::MAX)) as u32);
        let record = self.targets.record(slot);
        let buffer = self.buffers.slot_ptr(slot);
        // SAFETY: the slot is not busy, so libiscsi holds no pointer to its record and no
        // callback runs meanwhile.
        let session_index = unsafe {
            (*record).expected_bytes = length;
            (*record).no_data = request.direction == Direction::Trim;
            (*record).iov = ScsiIovec {
                iov_base: buffer.cast(),
                iov_len: length as usize,
            };
            (*record).session
        };
        let session = &self.sessions[session_index];
        let (context, lun) = (session.context(), session.lun());
        let lba = request.offset / block;
        let block = block as c_int;
        let private_data = record.cast::<c_void>();
        // SAFETY: the context is live. The record (callback data and iovec) and the slot's
        // buffer stay valid and untouched by us until the callback reports the command —
        // the slot is busy until then, and sessions are dropped before records and buffers.
        let task = unsafe {
            let iov = &raw mut (*record).iov;
            match request.direction {
                Direction::Read => (self.library.read16_iov_task)(
                    context,
                    lun,
                    lba,
                    length,
                    block,
                    0,
                    0,
                    0,
                    0,
                    0,
                    io_finished,
                    private_data,
                    iov,
                    1,
                ),
                Direction::Trim => {
                    let mut range = UnmapList {
                        lba,
                        num: length / block as u32,
                    };
                    (self.library.unmap_task)(
                        context,
                        lun,
                        0,
                        0,
                        &raw mut range,
                        1,
                        io_finished,
                        private_data,
                    )
                }
                Direction::Write => (self.library.write16_iov_task)(
                    context,
                    lun,
                    lba,
                    std::ptr::null_mut(),
                    length,
                    block,
                    0,
                    0,
                    self.force_unit_access,
                    0,
                    0,
                    io_finished,
                    private_data,
                    iov,
                    1,
                ),
            }
        };
        if task.is_null() {
            let session = &self.sessions[session_index];
            return Err(operation_error(
                "submit",
                session.failure("cannot queue a command to"),
            ));
        }
        self.busy[slot] = true;
        self.busy_count += 1;
        Ok(())
    }

    /// Lets libiscsi write every queued command to its socket (as far as the socket takes
    /// them; the rest goes out while reaping).
    fn flush(&mut self) -> Result<(), EngineError> {
        for session in &mut self.sessions {
            if session.which_events() & c_int::from(libc::POLLOUT) != 0 {
                session
                    .service(c_int::from(libc::POLLOUT))
                    .map_err(|source| operation_error("flush", source))?;
            }
        }
        self.check_sessions("flush")
    }

    fn reap(
        &mut self,
        min_completions: usize,
        completions: &mut [Completion],
    ) -> Result<usize, EngineError> {
        let mut written = self.drain(completions);
        if min_completions == 0 {
            if written < completions.len() && self.busy_count > 0 {
                self.wait(0)?;
                written += self.drain(&mut completions[written..]);
            }
            return Ok(written);
        }
        // Never wait for more than is in flight or fits.
        let wanted = min_completions
            .min(completions.len())
            .min(written + self.busy_count);
        while written < wanted {
            self.wait(POLL_SLICE_MS)?;
            written += self.drain(&mut completions[written..]);
        }
        Ok(written)
    }

    /// SYNCHRONIZE CACHE(16) of the whole volume; nothing may be in flight.
    fn sync_data(&mut self) -> Result<(), EngineError> {
        if self.busy_count > 0 {
            return Err(operation_error(
                "sync_data",
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "requests are in flight; reap them first",
                ),
            ));
        }
        self.check_sessions("sync_data")?;
        self.sessions[0]
            .run(
                "SYNCHRONIZE CACHE(16)",
                SYNC_TIMEOUT,
                |library, context, lun, callback, private| {
                    // SAFETY: `context` is the session's live context; the callback and its
                    // private data are the session's own (see `Session::run`). LBA 0 and 0
                    // blocks: the whole volume.
                    unsafe {
                        (library.synchronizecache16_task)(
                            context, lun, 0, 0, 0, 0, callback, private,
                        )
                    }
                },
            )
            .and_then(|task| task.check("SYNCHRONIZE CACHE(16)"))
            .map(drop)
            .map_err(|source| operation_error("sync_data", source))
    }
}

impl Drop for IscsiEngine {
    fn drop(&mut self) {
        // Log out and destroy every context first: destroying one may still run callbacks
        // that write into the records and the ring, and libiscsi may still hold iovecs that
        // point into the buffers. Those are freed only afterwards, with the other fields.
        self.sessions.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn no_free(_task: *mut ScsiTask) {}

    #[test]
    fn callback_reports_into_the_ring() {
        let mut targets = CallbackTargets::new(3, 2, no_free);
        assert_eq!(targets.ring().pop(), None);
        for (slot, status) in [
            (2usize, SCSI_STATUS_GOOD),
            (0, iscsi_client::ffi::SCSI_STATUS_ERROR),
        ] {
            let record = targets.record(slot);
            // SAFETY: the record is alive and not used by libiscsi; a null task is allowed.
            unsafe {
                (*record).expected_bytes = 4096;
                io_finished(
                    std::ptr::null_mut(),
                    status,
                    std::ptr::null_mut(),
                    record.cast(),
                );
            }
        }
        assert_eq!(
            targets.ring().pop(),
            Some(Completion {
                slot: 2,
                result: 4096
            })
        );
        assert_eq!(
            targets.ring().pop(),
            Some(Completion {
                slot: 0,
                result: -i64::from(libc::EIO)
            })
        );
        assert_eq!(targets.ring().pop(), None);

        let record = targets.record(1);
        // SAFETY: as above.
        unsafe {
            io_finished(
                std::ptr::null_mut(),
                iscsi_client::ffi::SCSI_STATUS_CANCELLED,
                std::ptr::null_mut(),
                record.cast(),
            );
        }
        assert_eq!(targets.ring().lost_session, Some(1));
        assert_eq!(targets.ring().pop(), None);
    }
}
