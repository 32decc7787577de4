//! One worker: owns its engine, slots, planner and recorders, and issues I/O until its time or
//! its bytes are done.
//!
//! The loop fills the queue (one clock read before each batch of submissions, and one after
//! the buffer of a write was filled or scrambled, so that this CPU work is not counted as
//! latency), flushes, reaps at least one completion (one clock read after each reap), and
//! records every completion that ends inside the measurement window. Nothing in the loop
//! allocates or locks: slots, buffers, the completion array and the recorders are sized before
//! the clock starts.

use super::pacer::JobPacer;
use super::progress::WorkerProgress;
use crate::engine::buffer_fill::BufferFiller;
use crate::engine::{Completion, Engine, IoRequest};
use crate::host::clock::{Clock, Ticks};
use crate::host::cpu::thread_cpu_ns;
use crate::result::{Direction, IoErrorRecord, StopReason};
use crate::stats::recorder::DirectionRecorder;
use crate::workload::planner::{IoPlanner, PlannedIo};
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// block), all measured.
    Bytes {
        /// This worker's share, bytes.
        bytes: u64,
        /// Stop earlier when this time has passed, ns.
        time_limit_ns: Option<u64>,
    },
}

/// Everything a worker needs besides its engine.
pub struct WorkerPlan {
    /// Path of the target, for error messages.
    pub target_path: String,
    /// Offsets, sizes and directions.
    pub planner: IoPlanner,
    /// I/Os in flight.
    pub queue_depth: u32,
    /// Time or bytes.
    pub length: WorkerLength,
    /// fdatasync at the end, inside the measured time.
    pub fsync_at_end: bool,
    /// Keep going after an I/O error.
    pub continue_on_error: bool,
    /// Length of a series interval, ns.
    pub interval_ns: u64,
    /// Record every issued I/O (tests and `--trace-io`).
    pub trace: bool,
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
}

/// What a worker measured.
pub struct WorkerOutcome {
    /// Reads.
    pub read: DirectionRecorder,
    /// Writes.
    pub write: DirectionRecorder,
    /// First errors with offsets.
    pub errors: Vec<IoErrorRecord>,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// End of its measured window, ns after the measurement started.
    pub window_end_ns: u64,
    /// Time of the final fdatasync, ns.
    pub fsync_ns: u64,
    /// CPU time of the thread inside the window, ns.
    pub thread_cpu_ns: u64,
    /// Issued I/Os, when tracing.
    pub trace: Vec<TracedIo>,
    /// A failure of the engine as a whole (not of one I/O).
    pub engine_failure: Option<String>,
}

impl WorkerOutcome {
    /// The outcome of a worker stopped for `stop_reason` before it issued any I/O.
    pub fn not_started(stop_reason: StopReason, interval_ns: u64) -> Self {
        let mut read = DirectionRecorder::new(interval_ns, 0);
        let mut write = DirectionRecorder::new(interval_ns, 0);
        read.finish();
        write.finish();
        WorkerOutcome {
            read,
            write,
            errors: Vec::new(),
            stop_reason,
            window_end_ns: 0,
            fsync_ns: 0,
            thread_cpu_ns: 0,
            trace: Vec::new(),
            engine_failure: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct SlotState {
    offset: u64,
    length: u32,
    direction: Option<Direction>,
    submitted: Ticks,
}

fn describe_errno(errno: i64) -> String {
    let error = std::io::Error::from_raw_os_error(errno as i32);
    error.to_string()
}

/// Runs one worker from `start` (a reading of `clock` shared by every worker of the test).
pub fn run_worker<E: Engine>(
    engine: &mut E,
    mut plan: WorkerPlan,
    links: WorkerLinks<'_>,
    clock: &Clock,
    start: Ticks,
) -> WorkerOutcome {
    let queue_depth = plan.queue_depth.max(1) as usize;
    let (ramp_ns, duration_ns, byte_budget) = match plan.length {
        WorkerLength::Time {
            ramp_ns,
            duration_ns,
        } => (ramp_ns, Some(duration_ns), None),
        WorkerLength::Bytes {
            bytes,
            time_limit_ns,
        } => (0, time_limit_ns, Some(bytes)),
    };
    let planned_intervals = duration_ns.map_or(64, |d| d.div_ceil(plan.interval_ns) as usize);
    let mut read = DirectionRecorder::new(plan.interval_ns, planned_intervals);
    let mut write = DirectionRecorder::new(plan.interval_ns, planned_intervals);
    let mut errors = Vec::with_capacity(KEPT_ERRORS_PER_WORKER);
    let mut trace = Vec::with_capacity(if plan.trace { 1 << 16 } else { 0 });
    let mut slots = vec![SlotState::default(); queue_depth];
    let mut free_slots: Vec<u32> = (0..queue_depth as u32).rev().collect();
    let mut completions = vec![Completion::default(); queue_depth];

    let begin = start + clock.ticks_for_nanos(plan.start_delay_ns);
    let measure_start = begin + clock.ticks_for_nanos(ramp_ns);
    let measure_end = duration_ns.map(|d| measure_start + clock.ticks_for_nanos(d));
    let mut in_flight = 0usize;
    let mut issued_bytes = 0u64;
    let mut issued_ios = 0u64;
    let mut completed_bytes = 0u64;
    let mut completed_ios = 0u64;
    let mut completed_latency_ns = 0u64;
    let mut writes_since_sync = 0u32;
    let mut sync_pending = false;
    let mut not_before: Ticks = 0;
    // The next I/O, drawn and given its place by the pacer, waiting for its time.
    let mut paced: Option<(PlannedIo, u64)> = None;
    let mut stop_reason = StopReason::Completed;
    let mut stopping = false;
    let mut time_ended = false;
    let mut stopped_at: Option<Ticks> = None;
    let mut finished_at: Option<Ticks> = None;
    let mut last_completion = measure_start;
    let mut cpu_at_measure_start = None;
    let mut engine_failure: Option<String> = None;
    // The engine gave up on requests in flight because the run was stopping: the run's own
    // reason stands, and the engine's message is only a note.
    let mut engine_stopped = false;
    // Every worker of the test begins at the same instant (after its own start delay), unless
    // the test is stopped first.
    let mut now = clock.now();
    if plan.start_delay_ns > 0 {
        pause(clock, clock.nanos_between(now, begin), &links);
        now = clock.now();
    }
    while now < begin && !links.wait_is_over() {
        std::hint::spin_loop();
        now = clock.now();
    }
    if ramp_ns == 0 {
        cpu_at_measure_start = Some(thread_cpu_ns());
    }
    let budget_done = |bytes: u64, ios: u64| {
        byte_budget.is_some_and(|budget| bytes >= budget)
            || plan.io_limit.is_some_and(|limit| ios >= limit)
    };

    loop {
        if !stopping {
            let errored = links.error_stop.load(Ordering::Relaxed);
            if errored || links.stop.load(Ordering::Relaxed) {
                stopping = true;
                stop_reason = if errored {
                    StopReason::Error
                } else {
                    StopReason::Interrupted
                };
                stopped_at = Some(now);
            }
        }
        if !stopping && measure_end.is_some_and(|end| now >= end) {
            stopping = true;
            time_ended = true;
        }
        if !stopping && links.finish.load(Ordering::Relaxed) {
            stopping = true;
            finished_at = Some(now);
        }
        if !stopping && budget_done(issued_bytes, issued_ios) {
            stopping = true;
        }

        // A periodic fdatasync waits for the writes before it, then runs alone.
        if sync_pending && in_flight == 0 {
            sync_pending = false;
            if let Err(error) = engine.sync_data() {
                engine_failure = Some(error.to_string());
            }
        }

        // Fill the queue.
        let mut pacing_wait_ns = 0u64;
        if !stopping && !sync_pending && in_flight < queue_depth && engine_failure.is_none() {
            let batch_time = clock.now();
            let since_start = clock.nanos_between(begin, batch_time);
            let mut queued = 0usize;
            while in_flight < queue_depth {
                if budget_done(issued_bytes, issued_ios) {
                    break;
                }
                if batch_time < not_before {
                    pacing_wait_ns = clock.nanos_between(batch_time, not_before);
                    break;
                }
                let (io, due_ns) = match (paced.take(), links.pacer) {
                    (Some(waiting), _) => waiting,
                    (None, Some(pacer)) => {
                        let io = plan.planner.next_io();
                        (io, pacer.claim(u64::from(io.length)))
                    }
                    (None, None) => (plan.planner.next_io(), 0),
                };
                if due_ns > since_start {
                    pacing_wait_ns = due_ns - since_start;
                    paced = Some((io, due_ns));
                    break;
                }
                let slot = free_slots.pop().expect("a free slot below the queue depth");
                let mut filled = false;
                if io.direction == Direction::Write {
                    let read_into = slots[slot as usize].direction == Some(Direction::Read);
                    let buffer = &mut engine.buffer_mut(slot as usize)[..io.length as usize];
                    filled = plan.data.prepare_write(buffer, io.offset, read_into);
                    if plan.stamp_writes {
                        stamp_block(buffer, io.offset);
                    }
                }
                // Requests handed to the device one by one get their own submission time, and
                // so does a write whose buffer was just filled (the fill is not its latency).
                let submitted = if filled || (plan.submit_batch == 1 && queued > 0) {
                    clock.now()
                } else {
                    batch_time
                };
                slots[slot as usize] = SlotState {
                    offset: io.offset,
                    length: io.length,
                    direction: Some(io.direction),
                    submitted,
                };
                if plan.trace {
                    trace.push(TracedIo {
                        direction: io.direction,
                        offset: io.offset,
                        length: io.length,
                    });
                }
                if let Err(error) = engine.submit(IoRequest {
                    slot,
                    direction: io.direction,
                    offset: io.offset,
                    length: io.length,
                }) {
                    engine_stopped = error.is_stop();
                    engine_failure = Some(error.to_string());
                    free_slots.push(slot);
                    break;
                }
                in_flight += 1;
                issued_bytes += io.length as u64;
                issued_ios += 1;
                queued += 1;
                if plan.submit_batch > 0
                    && queued.is_multiple_of(plan.submit_batch)
                    && in_flight < queue_depth
                    && let Err(error) = engine.flush()
                {
                    engine_stopped = error.is_stop();
                    engine_failure = Some(error.to_string());
                    break;
                }
                if io.pause_after_ns > 0 {
                    not_before = submitted + clock.ticks_for_nanos(io.pause_after_ns);
                }
                if io.direction == Direction::Write
                    && let Some(every) = plan.fsync_every_writes
                {
                    writes_since_sync += 1;
                    if writes_since_sync >= every {
                        writes_since_sync = 0;
                        sync_pending = true;
                        break;
                    }
                }
            }
            if let Err(error) = engine.flush()
                && engine_failure.is_none()
            {
                engine_stopped = error.is_stop();
                engine_failure = Some(error.to_string());
            }
        }
        if engine_failure.is_some() && !stopping {
            stopping = true;
            stopped_at = Some(clock.now());
            stop_reason = if engine_stopped {
                run_stop_reason(&links)
            } else {
                links.error_stop.store(true, Ordering::Relaxed);
                StopReason::Error
            };
        }

        if in_flight == 0 {
            if stopping || budget_done(issued_bytes, issued_ios) {
                break;
            }
            if pacing_wait_ns > 0 {
                let until_end = measure_end
                    .map_or(u64::MAX, |end| clock.nanos_between(clock.now(), end).max(1));
                pause(clock, pacing_wait_ns.min(until_end), &links);
            }
            now = clock.now();
            continue;
        }

        let reaped = match engine.reap(1, &mut completions) {
            Ok(reaped) => reaped,
            Err(error) => {
                if !error.is_stop() {
                    stop_reason = StopReason::Error;
                    links.error_stop.store(true, Ordering::Relaxed);
                } else if !stopping {
                    stop_reason = run_stop_reason(&links);
                }
                engine_failure = Some(error.to_string());
                stopped_at.get_or_insert(clock.now());
                break;
            }
        };
        now = clock.now();
        if cpu_at_measure_start.is_none() && now >= measure_start {
            cpu_at_measure_start = Some(thread_cpu_ns());
        }
        let counted = now >= measure_start
            && (plan.fsync_at_end || measure_end.is_none_or(|end| now <= end))
            && finished_at.is_none_or(|at| plan.fsync_at_end || now <= at)
            && stopped_at.is_none();
        let elapsed_ns = clock.nanos_between(measure_start, now);
        for completion in &completions[..reaped] {
            let slot = slots[completion.slot as usize];
            free_slots.push(completion.slot);
            in_flight -= 1;
            let direction = slot.direction.unwrap_or(Direction::Read);
            let recorder = match direction {
                Direction::Read => &mut read,
                Direction::Write => &mut write,
            };
            if completion.result != slot.length as i64 {
                recorder.error_count += 1;
                if errors.len() < KEPT_ERRORS_PER_WORKER {
                    errors.push(IoErrorRecord {
                        target: plan.target_path.clone(),
                        direction,
                        offset: slot.offset,
                        length: slot.length,
                        error: if completion.result < 0 {
                            describe_errno(-completion.result)
                        } else {
                            format!(
                                "short transfer: {} of {} bytes",
                                completion.result, slot.length
                            )
                        },
                    });
                }
                if !plan.continue_on_error && !stopping {
                    stopping = true;
                    stop_reason = StopReason::Error;
                    stopped_at = Some(now);
                    links.error_stop.store(true, Ordering::Relaxed);
                }
                continue;
            }
            completed_bytes += slot.length as u64;
            completed_ios += 1;
            let latency_ns = clock.nanos_between(slot.submitted, now);
            completed_latency_ns += latency_ns;
            if counted {
                recorder.record(elapsed_ns, latency_ns, slot.length as u64);
                last_completion = now;
            }
        }
        links
            .progress
            .publish(completed_bytes, completed_ios, completed_latency_ns);
    }

    let mut fsync_ns = 0;
    let mut window_end = match (stopped_at, finished_at, measure_end) {
        (Some(stopped), _, _) => stopped,
        (None, Some(finished), _) if !plan.fsync_at_end => finished,
        (None, None, Some(end)) if time_ended && !plan.fsync_at_end => end,
        _ => last_completion,
    };
    if plan.fsync_at_end && engine_failure.is_none() && stop_reason == StopReason::Completed {
        let before = clock.now();
        if let Err(error) = engine.sync_data() {
            engine_failure = Some(error.to_string());
            stop_reason = StopReason::Error;
        }
        let after = clock.now();
        fsync_ns = clock.nanos_between(before, after);
        window_end = after;
    }
    let thread_cpu_ns = cpu_at_measure_start.map_or(0, |at_start| thread_cpu_ns() - at_start);
    read.finish();
    write.finish();
    WorkerOutcome {
        read,
        write,
        errors,
        stop_reason,
        window_end_ns: match (duration_ns, time_ended, stopped_at, fsync_ns) {
            // A run that went its whole time measured exactly that time.
            (Some(duration_ns), true, None, 0) if finished_at.is_none() => duration_ns,
            _ => clock.nanos_between(measure_start, window_end),
        },
        fsync_ns,
        thread_cpu_ns,
        trace,
        engine_failure,
    }
}

/// Why the run is stopping, as a worker that sees the stop flag reports it: another worker's
/// error, or an interrupt.
fn run_stop_reason(links: &WorkerLinks<'_>) -> StopReason {
    if links.error_stop.load(Ordering::Relaxed) {
        StopReason::Error
    } else {
        StopReason::Interrupted
    }
}

/// Longest sleep of a waiting worker between two looks at its stop flags, ns.
const PAUSE_SLICE_NS: u64 = 10_000_000;

/// Waits about `nanos` (a start delay, a rate cap, a think time), or less when the wait is
/// over ([`WorkerLinks::wait_is_over`]): sleeps in slices of at most 10 ms for long waits,
/// spins for the last stretch.
fn pause(clock: &Clock, nanos: u64, links: &WorkerLinks<'_>) {
    let start = clock.now();
    loop {
        let elapsed = clock.nanos_between(start, clock.now());
        if elapsed >= nanos || links.wait_is_over() {
            return;
        }
        let remaining = nanos - elapsed;
        if remaining > 200_000 {
            let slice = (remaining - 100_000).min(PAUSE_SLICE_NS);
            std::thread::sleep(std::time::Duration::from_nanos(slice));
        } else {
            std::hint::spin_loop();
        }
    }
}
