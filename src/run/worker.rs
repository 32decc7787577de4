//! One worker: owns its engine, slots, planner and recorders, and issues I/O until its time or
//! its bytes are done.
//!
//! The loop fills the queue (one clock read before each batch of submissions), flushes, reaps
//! at least one completion (one clock read after each reap), and records every completion that
//! ends inside the measurement window. Nothing in the loop allocates or locks: slots, the
//! completion array and the recorders are sized before the clock starts.

use super::progress::WorkerProgress;
use crate::engine::{Completion, Engine, IoRequest};
use crate::host::clock::{Clock, Ticks};
use crate::host::cpu::thread_cpu_ns;
use crate::result::{Direction, IoErrorRecord, StopReason};
use crate::stats::recorder::DirectionRecorder;
use crate::workload::planner::IoPlanner;
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
    /// This worker's throughput cap, bytes/s.
    pub rate_bytes_per_second: Option<u64>,
    /// This worker's IOPS cap.
    pub rate_iops: Option<f64>,
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

/// What is shared between workers and the coordinator: the stop flag and the progress cells.
pub struct WorkerLinks<'a> {
    /// Set by Ctrl-C, by a worker that hit an error, or by the coordinator.
    pub stop: &'a AtomicBool,
    /// Set by this worker when an error stopped it.
    pub error_stop: &'a AtomicBool,
    /// This worker's live totals.
    pub progress: &'a WorkerProgress,
    /// Set by the coordinator when the test has reached steady state: end the window now, as
    /// if its time were up.
    pub finish: &'a AtomicBool,
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
    let mut stop_reason = StopReason::Completed;
    let mut stopping = false;
    let mut time_ended = false;
    let mut stopped_at: Option<Ticks> = None;
    let mut finished_at: Option<Ticks> = None;
    let mut last_completion = measure_start;
    let mut cpu_at_measure_start = None;
    let mut engine_failure: Option<String> = None;
    // Every worker of the test begins at the same instant (after its own start delay).
    let mut now = clock.now();
    if plan.start_delay_ns > 0 {
        wait_for(clock, clock.nanos_between(now, begin));
        now = clock.now();
    }
    while now < begin {
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
        if !stopping && links.stop.load(Ordering::Relaxed) {
            stopping = true;
            stop_reason = if links.error_stop.load(Ordering::Relaxed) {
                StopReason::Error
            } else {
                StopReason::Interrupted
            };
            stopped_at = Some(now);
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
                // Requests handed to the device one by one get their own submission time.
                let submitted = if plan.submit_batch == 1 && queued > 0 {
                    clock.now()
                } else {
                    batch_time
                };
                if budget_done(issued_bytes, issued_ios) {
                    break;
                }
                if batch_time < not_before {
                    pacing_wait_ns = clock.nanos_between(batch_time, not_before);
                    break;
                }
                if let Some(due_ns) = pacing_due_ns(&plan, issued_bytes, issued_ios)
                    && due_ns > since_start
                {
                    pacing_wait_ns = due_ns - since_start;
                    break;
                }
                let io = plan.planner.next_io();
                let slot = free_slots.pop().expect("a free slot below the queue depth");
                if plan.stamp_writes && io.direction == Direction::Write {
                    stamp_block(engine.buffer_mut(slot as usize), io.offset);
                }
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
            if let Err(error) = engine.flush() {
                engine_failure.get_or_insert(error.to_string());
            }
        }
        if engine_failure.is_some() && !stopping {
            stopping = true;
            stop_reason = StopReason::Error;
            stopped_at = Some(clock.now());
            links.error_stop.store(true, Ordering::Relaxed);
            links.stop.store(true, Ordering::Relaxed);
        }

        if in_flight == 0 {
            if stopping || budget_done(issued_bytes, issued_ios) {
                break;
            }
            if pacing_wait_ns > 0 {
                let until_end = measure_end
                    .map_or(u64::MAX, |end| clock.nanos_between(clock.now(), end).max(1));
                wait_for(clock, pacing_wait_ns.min(until_end));
            }
            now = clock.now();
            continue;
        }

        let reaped = match engine.reap(1, &mut completions) {
            Ok(reaped) => reaped,
            Err(error) => {
                engine_failure = Some(error.to_string());
                stop_reason = StopReason::Error;
                links.error_stop.store(true, Ordering::Relaxed);
                links.stop.store(true, Ordering::Relaxed);
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
                    links.stop.store(true, Ordering::Relaxed);
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

/// When the next I/O may be issued under the worker's rate caps, ns after the start.
#[inline]
fn pacing_due_ns(plan: &WorkerPlan, issued_bytes: u64, issued_ios: u64) -> Option<u64> {
    let by_bytes = plan
        .rate_bytes_per_second
        .map(|rate| (issued_bytes as u128 * 1_000_000_000 / rate.max(1) as u128) as u64);
    let by_ios = plan
        .rate_iops
        .map(|rate| (issued_ios as f64 * 1e9 / rate.max(1e-9)) as u64);
    match (by_bytes, by_ios) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).max(b.unwrap_or(0))),
    }
}

/// Waits about `nanos`: sleeps for long waits, spins for the last stretch.
fn wait_for(clock: &Clock, nanos: u64) {
    let start = clock.now();
    if nanos > 200_000 {
        std::thread::sleep(std::time::Duration::from_nanos(nanos - 100_000));
    }
    while clock.nanos_between(start, clock.now()) < nanos {
        std::hint::spin_loop();
    }
}
