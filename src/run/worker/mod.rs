//! One worker: owns its engine, slots, planner and recorders, and issues I/O until its time or
//! its bytes are done.
//!
//! The loop ([`run_worker`]) is a small state machine over `state::Worker`: look for the end
//! (a stop flag, the time, the budget), run a periodic fdatasync when one is due, fill the queue
//! (one clock read before each batch of submissions, and one after the buffer of a write was
//! filled or scrambled, so that this CPU work is not counted as latency), reap at least one
//! completion (one clock read after each reap) and record every completion that ends inside
//! the measurement window. Every way of stopping goes through one method, with its reason.
//! A latency-target search ([`super::latency_search`]) bounds the depth the fill goes to, and
//! lets the queue drain before each new depth.
//! Nothing in the loop locks, and nothing allocates per I/O: slots, buffers, the completion
//! array, the histograms and the I/O trace are sized before the clock starts, and a trace that
//! outgrows its room counts what it could not keep instead of growing. The per-interval series
//! append once per interval into room reserved for the planned intervals (at most
//! [`MAX_POINTS`](crate::stats::series::MAX_POINTS): a longer run merges neighbouring points
//! into points of 2, 4, … intervals, so that a 24-hour run holds no more than an hour-long
//! one); only a run longer than planned (a byte count past 64 intervals, completions after the
//! planned end with `--fsync-at-end`) or an interval with an unusually wide latency spread
//! grows them, once per interval, up to that bound.

pub mod io_log;
mod state;
#[cfg(test)]
mod tests;
mod trace;
mod verify;

use super::flow::FlowGroup;
use super::pacer::JobPacer;
use super::progress::WorkerProgress;
use super::shape::TestShape;
use crate::engine::{Engine, EngineError};
use crate::fill::BufferFiller;
use crate::host::clock::{Clock, Ticks};
use crate::result::{
    Direction, ErrorCount, ErrorPolicy, IoErrorRecord, LatencyTarget, StopReason,
    VerificationResult,
};
use crate::stats::recorder::DirectionRecorder;
use crate::workload::file_set::FileSetPlanner;
use state::Worker;
use std::sync::atomic::{AtomicBool, Ordering};
pub use verify::WorkerVerify;

/// Errors kept with their offsets per worker; later ones are only counted.
pub const KEPT_ERRORS_PER_WORKER: usize = 16;

/// How long a worker runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerLength {
    /// Measure for `duration_ns` after `ramp_ns`.
    Time {
        /// Ramp, ns.
        ramp_ns: u64,
        /// Measured time, ns.
        duration_ns: u64,
    },
    /// Issue exactly this many bytes (whole I/Os; a size mix may pass it by less than one
    /// block), all measured but those of the ramp.
    Bytes {
        /// This worker's share, bytes.
        bytes: u64,
        /// Stop earlier when this time has passed after the ramp, ns.
        time_limit_ns: Option<u64>,
        /// Ramp, ns: its I/O counts towards the bytes, not in the results (fio's `ramp_time`
        /// in a job that runs to a byte count).
        ramp_ns: u64,
    },
}

/// Everything a worker needs besides its engine.
pub struct WorkerPlan {
    /// Paths of the worker's files (its targets), for error messages; requests name them by
    /// their index here.
    pub target_paths: Vec<String>,
    /// Index of each of the worker's files in the run's target list (for the trace).
    pub target_indexes: Vec<u32>,
    /// Files, offsets, sizes and directions.
    pub planner: FileSetPlanner,
    /// The job's shape: the queue depth (I/Os in flight, the engine's slots) and the largest
    /// block (each slot's buffer), as the engine was opened with.
    pub shape: TestShape,
    /// Time or bytes.
    pub length: WorkerLength,
    /// fdatasync at the end, inside the measured time.
    pub fsync_at_end: bool,
    /// Keep going after every I/O error.
    pub continue_on_error: bool,
    /// Which errors the worker goes on after, and what an error that stops it ends.
    pub error_policy: ErrorPolicy,
    /// Drop a file's cached pages (through the engine's own descriptor) each time a pass
    /// over it ends (a timed buffered fio job's `invalidate=1`).
    pub invalidate_each_pass: bool,
    /// Length of a series interval, ns.
    pub interval_ns: u64,
    /// Record every issued I/O (tests and `--trace-io`).
    pub trace: bool,
    /// What to keep for the job's log files (fio's `write_*_log`).
    pub io_log: Option<io_log::IoLogPlan>,
    /// Stamp every written block with its offset (see [`stamp_block`]).
    pub stamp_writes: bool,
    /// Fills or scrambles write buffers before each write.
    pub data: BufferFiller,
    /// Wait this long after the common start before issuing, ns.
    pub start_delay_ns: u64,
    /// Most I/Os to issue.
    pub io_limit: Option<u64>,
    /// fdatasync after every this many writes.
    pub fsync_every_writes: Option<u32>,
    /// Hand queued requests to the device after every this many (0: once per refill). 1 is
    /// fio's default (`iodepth_batch_submit=1`): each request starts as soon as it is queued.
    pub submit_batch: usize,
    /// Search for the deepest queue (up to the shape's queue depth) that meets this latency
    /// target.
    pub latency_target: Option<LatencyTarget>,
    /// This worker's weight in its flow ([`WorkerLinks::flow`]).
    pub flow_weight: u64,
    /// How long the worker waits when it is ahead of its share of the flow, ns (0: a short
    /// slice).
    pub flow_sleep_ns: u64,
    /// Data verification, when the workload verifies.
    pub verify: Option<WorkerVerify>,
    /// A read that gets no data (at or past the end of a file that `create_on_open` created
    /// and the job's writes extend) completes as a read of no bytes, not as an error: what fio's
    /// libaio and io_uring engines do (io_u.c, `io_completed`: a full residual with no error).
    /// Without it such a read is a short read, judged as `EIO` (fio's sync engines: backend.c,
    /// `io_queue_event`, "full resid").
    pub empty_reads_complete: bool,
    /// Each I/O is one file operation (`filecreate`, …): it completes whole and counts no
    /// bytes.
    pub moves_no_bytes: bool,
    /// Hold an I/O that overlaps one in flight until that one has completed (fio's
    /// `serialize_overlap`).
    pub serialize_overlap: bool,
}

/// Marker following the offset in a stamped block.
pub const STAMP_MARKER: &[u8; 8] = b"iopathST";

/// Writes the block's own offset (little-endian) and [`STAMP_MARKER`] into its first 16 bytes,
/// so a read-back can prove where each block landed.
#[inline]
pub fn stamp_block(buffer: &mut [u8], offset: u64) {
    if buffer.len() >= 16 {
        buffer[..8].copy_from_slice(&offset.to_le_bytes());
        buffer[8..16].copy_from_slice(STAMP_MARKER);
    }
}

/// What is shared between workers and the coordinator: the stop flags and the progress cells.
pub struct WorkerLinks<'a> {
    /// The run's stop request (a signal); workers only read it.
    pub stop: &'a AtomicBool,
    /// Set by a worker of the test whose error stops the test; every worker stops on it.
    pub error_stop: &'a AtomicBool,
    /// This worker's live totals.
    pub progress: &'a WorkerProgress,
    /// Set by the coordinator when the test has reached steady state: end the window now, as
    /// if its time were up.
    pub finish: &'a AtomicBool,
    /// The rate caps of the worker's job, shared by all its workers (`None`: uncapped).
    pub pacer: Option<&'a JobPacer>,
    /// The flow the worker's job is in (fio's `flow`), if any.
    pub flow: Option<&'a FlowGroup>,
}

impl WorkerLinks<'_> {
    /// Whether the worker should end what it is waiting for: a stop, an error elsewhere, or
    /// the end of the test.
    fn wait_is_over(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.error_stop.load(Ordering::Relaxed)
            || self.finish.load(Ordering::Relaxed)
    }
}

/// One issued I/O, when tracing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TracedIo {
    /// Direction.
    pub direction: Direction,
    /// Byte offset.
    pub offset: u64,
    /// Length.
    pub length: u32,
    /// Index of its file in the run's target list.
    pub target: u32,
    /// The worker's I/Os in flight once it was issued, itself included.
    pub in_flight: u32,
}

/// A range of a worker's file its target no longer holds data for: one trim that completed in
/// full. Every such trim passes through one method of the worker, the place where data
/// verification learns which blocks were trimmed (see `state::Worker::trim_completed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrimmedRange {
    /// Which of the worker's files ([`WorkerPlan::target_paths`]).
    pub file: u32,
    /// Byte offset in that file.
    pub offset: u64,
    /// Length, bytes.
    pub length: u32,
}

/// What a worker measured.
pub struct WorkerOutcome {
    /// Reads.
    pub read: DirectionRecorder,
    /// Writes.
    pub write: DirectionRecorder,
    /// Trims (discards).
    pub trim: DirectionRecorder,
    /// First errors with offsets.
    pub errors: Vec<IoErrorRecord>,
    /// Errors by kind and errno.
    pub error_counts: Vec<ErrorCount>,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// End of its measured window, ns after the measurement started.
    pub window_end_ns: u64,
    /// Time of the final fdatasync, ns.
    pub fsync_ns: u64,
    /// CPU time of the thread inside the window, ns.
    pub thread_cpu_ns: u64,
    /// Time the thread spent runnable but waiting for a CPU inside the window, ns.
    pub thread_cpu_wait_ns: u64,
    /// Issued I/Os, when tracing (at most the room reserved before the start).
    pub trace: Vec<TracedIo>,
    /// Issued I/Os the trace had no room for.
    pub trace_overflow_ios: u64,
    /// What it kept for its job's log files.
    pub io_log: crate::result::io_log::IoLogRecords,
    /// A failure of the engine as a whole (not of one I/O).
    pub engine_failure: Option<EngineError>,
    /// The depth the latency-target search ended at, and whether the target held there.
    pub latency_depth: Option<(u32, bool)>,
    /// What data verification found (when the workload verifies).
    pub verification: Option<VerificationResult>,
    /// Why the read-back or the verify state file failed, if it did.
    pub verify_failure: Option<String>,
}

impl WorkerOutcome {
    /// The outcome of a worker stopped for `stop_reason` before it issued any I/O.
    pub fn not_started(stop_reason: StopReason, interval_ns: u64) -> Self {
        let mut read = DirectionRecorder::new(interval_ns, 0);
        let mut write = DirectionRecorder::new(interval_ns, 0);
        let mut trim = DirectionRecorder::new(interval_ns, 0);
        read.finish();
        write.finish();
        trim.finish();
        WorkerOutcome {
            read,
            write,
            trim,
            errors: Vec::new(),
            error_counts: Vec::new(),
            stop_reason,
            window_end_ns: 0,
            fsync_ns: 0,
            thread_cpu_ns: 0,
            thread_cpu_wait_ns: 0,
            trace: Vec::new(),
            trace_overflow_ios: 0,
            io_log: Default::default(),
            engine_failure: None,
            latency_depth: None,
            verification: None,
            verify_failure: None,
        }
    }
}

/// Runs one worker from `start` (a reading of `clock` shared by every worker of the test).
pub fn run_worker<E: Engine>(
    engine: &mut E,
    plan: WorkerPlan,
    links: WorkerLinks<'_>,
    clock: &Clock,
    start: Ticks,
) -> WorkerOutcome {
    let mut worker = Worker::new(engine, plan, links, clock, start);
    worker.wait_for_start();
    if worker.verify_only() {
        return worker.finish();
    }
    loop {
        worker.look_for_the_end();
        worker.step_the_search();
        worker.sync_if_due();
        let pacing_wait_ns = worker.fill();
        if worker.idle() {
            if worker.nothing_left() {
                break;
            }
            worker.wait(pacing_wait_ns);
            continue;
        }
        if let Err(error) = worker.reap_and_record() {
            worker.engine_failed(error);
            break;
        }
    }
    worker.finish()
}
