//! The state of one running worker and the steps of its loop: [`Worker::fill`] issues I/O up to
//! the queue depth under the pacer, think time and budget rules (one clock read per batch, and
//! one more after a write's buffer was filled, so that this CPU work is not its latency), [`Worker::reap_and_record`]
//! records what completed, and [`Worker::stop`] is the one way a worker stops early.

use super::super::flow::DEFAULT_FLOW_WAIT_NS;
use super::super::latency_search::{LatencySearch, SearchStep};
use super::super::progress::{DIRECTIONS, DirectionTotals, direction_index};
use super::io_log::IoLog;
use super::trace::IoTrace;
use super::verify::{ReadBack, VerifyRun};
use super::{
    KEPT_ERRORS_PER_WORKER, TracedIo, TrimmedRange, WorkerLength, WorkerLinks, WorkerOutcome,
    WorkerPlan, stamp_block,
};
use crate::engine::{Completion, Engine, EngineError, IoRequest};
use crate::host::clock::{Clock, Ticks};
use crate::host::cpu::{thread_cpu_ns, thread_cpu_wait_ns};
use crate::result::error_policy::{EILSEQ, EIO};
use crate::result::io_log::LoggedIo;
use crate::result::{Direction, ErrorCount, ErrorKind, ErrorScope, IoErrorRecord, StopReason};
use crate::stats::recorder::DirectionRecorder;
use crate::workload::planner::PlannedIo;
use std::sync::atomic::Ordering;

/// Room for series intervals when the run's length is not a time.
const UNTIMED_INTERVALS: usize = 64;

/// What a busy slot holds.
#[derive(Clone, Copy, Debug, Default)]
struct SlotState {
    file: u32,
    offset: u64,
    length: u32,
    direction: Option<Direction>,
    submitted: Ticks,
    /// When the flush that handed it to the kernel or device returned (0: not yet, or an
    /// engine that does not separate the two).
    handed_over: Ticks,
    /// In flight now.
    busy: bool,
}

/// The slots of the queue, sized to the queue depth before the start.
struct Queue {
    slots: Vec<SlotState>,
    free: Vec<u32>,
    completions: Vec<Completion>,
    /// Slots submitted since the last flush, whose hand-over time it gives (kept only for an
    /// engine that separates submission from completion).
    unflushed: Vec<u32>,
    in_flight: usize,
    depth: usize,
}

impl Queue {
    fn new(depth: usize) -> Self {
        Queue {
            slots: vec![SlotState::default(); depth],
            free: (0..depth as u32).rev().collect(),
            completions: vec![Completion::default(); depth],
            unflushed: Vec::with_capacity(depth),
            in_flight: 0,
            depth,
        }
    }

    fn has_room(&self) -> bool {
        self.in_flight < self.depth
    }
}

/// The latency-target search of a worker (fio's `latency_target`): its state, a step waiting
/// for the queue to drain, fresh recorders for the final window (made before the start, not in
/// the loop), and whether the measurement started over.
struct Search {
    search: LatencySearch,
    draining: Option<SearchStep>,
    spare: Option<(DirectionRecorder, DirectionRecorder, DirectionRecorder)>,
    restarted: bool,
}

/// When the worker measures, in clock ticks, and what bounds it.
struct Window {
    begin: Ticks,
    measure_start: Ticks,
    measure_end: Option<Ticks>,
    duration_ns: Option<u64>,
    byte_budget: Option<u64>,
    io_limit: Option<u64>,
}

/// Why a worker stops before its time, bytes or I/Os are done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StopCause {
    /// The run's stop flag, or another worker's error.
    Signal,
    /// One of this worker's I/Os failed (and errors do not let it go on).
    IoError,
    /// The engine failed as a whole.
    EngineFailure,
    /// The engine gave up on requests in flight because the run was stopping.
    EngineStopped,
}

/// How the worker's window is ending.
#[derive(Clone, Copy, Debug, Default)]
struct Ending {
    /// No new I/O is issued; in-flight ones are drained.
    stopping: bool,
    reason: Option<StopReason>,
    /// The measured time ran out.
    time_ended: bool,
    /// When a stop (a signal or an error) ended the window.
    stopped_at: Option<Ticks>,
    /// When the coordinator ended the window (steady state reached).
    finished_at: Option<Ticks>,
}

/// Totals of one worker, ramp included.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    issued_bytes: u64,
    issued_ios: u64,
    /// Completed reads, writes and trims (in [`DIRECTIONS`] order), published for the live
    /// views.
    completed: [DirectionTotals; 3],
}

/// One worker while it runs.
pub(super) struct Worker<'a, E: Engine> {
    engine: &'a mut E,
    plan: WorkerPlan,
    links: WorkerLinks<'a>,
    clock: &'a Clock,
    window: Window,
    queue: Queue,
    totals: Totals,
    read: DirectionRecorder,
    write: DirectionRecorder,
    trim: DirectionRecorder,
    errors: Vec<IoErrorRecord>,
    /// Errors by kind and errno.
    error_counts: Vec<ErrorCount>,
    trace: IoTrace,
    io_log: IoLog,
    writes_since_sync: u32,
    sync_pending: bool,
    /// No I/O before this tick (a think time or burst delay).
    not_before: Ticks,
    /// The next I/O, drawn and given its place by the pacer, waiting for its time.
    paced: Option<(PlannedIo, u64)>,
    ending: Ending,
    last_completion: Ticks,
    cpu_at_measure_start: Option<ThreadClocks>,
    engine_failure: Option<EngineError>,
    /// The latency-target search, when the job has one.
    search: Option<Search>,
    /// This worker's I/Os admitted by its flow so far.
    flow_own: u64,
    /// The last fill stopped because the worker was ahead of its share of the flow: its wait
    /// sleeps (fio's `flow_sleep`), giving the CPU to the workers behind.
    flow_held: bool,
    /// The latest clock reading of the loop.
    now: Ticks,
    /// Data verification, when the workload verifies.
    verify: Option<VerifyRun>,
    /// Why the read-back or the state file failed, if it did.
    verify_failure: Option<String>,
}

impl<'a, E: Engine> Worker<'a, E> {
    /// A worker whose test starts at `start`, with every buffer sized.
    pub(super) fn new(
        engine: &'a mut E,
        mut plan: WorkerPlan,
        links: WorkerLinks<'a>,
        clock: &'a Clock,
        start: Ticks,
    ) -> Self {
        let (ramp_ns, duration_ns, byte_budget) = match plan.length {
            WorkerLength::Time {
                ramp_ns,
                duration_ns,
            } => (ramp_ns, Some(duration_ns), None),
            WorkerLength::Bytes {
                bytes,
                time_limit_ns,
                ramp_ns,
            } => (ramp_ns, time_limit_ns, Some(bytes)),
        };
        let intervals = duration_ns.map_or(UNTIMED_INTERVALS, |d| {
            d.div_ceil(plan.interval_ns.max(1)) as usize
        });
        let split = engine.capabilities().separates_submission;
        let recorder = || {
            let recorder = DirectionRecorder::new(plan.interval_ns, intervals);
            if split {
                recorder.split_latency()
            } else {
                recorder
            }
        };
        let begin = start + clock.ticks_for_nanos(plan.start_delay_ns);
        let measure_start = begin + clock.ticks_for_nanos(ramp_ns);
        let search = plan.latency_target.map(|target| {
            let mut search = LatencySearch::new(target, plan.shape.queue_depth());
            search.start_window(ramp_ns);
            Search {
                search,
                draining: None,
                spare: Some((recorder(), recorder(), recorder())),
                restarted: false,
            }
        });
        let depth = plan.shape.queue_depth() as usize;
        let buffer_bytes = plan.shape.buffer_bytes();
        let verify = plan
            .verify
            .take()
            .map(|verify| VerifyRun::new(verify, depth, buffer_bytes));
        let trace_room = if plan.trace {
            IoTrace::room_for(plan.length, plan.io_limit, plan.planner.smallest_io_bytes())
        } else {
            0
        };
        Worker {
            read: recorder(),
            write: recorder(),
            trim: recorder(),
            errors: Vec::with_capacity(KEPT_ERRORS_PER_WORKER),
            error_counts: Vec::with_capacity(ErrorKind::ALL.len()),
            trace: IoTrace::with_room(trace_room),
            io_log: IoLog::new(plan.io_log),
            queue: Queue::new(plan.shape.queue_depth() as usize),
            window: Window {
                begin,
                measure_start,
                measure_end: duration_ns.map(|d| measure_start + clock.ticks_for_nanos(d)),
                duration_ns,
                byte_budget,
                io_limit: plan.io_limit,
            },
            totals: Totals::default(),
            writes_since_sync: 0,
            sync_pending: false,
            not_before: 0,
            paced: None,
            ending: Ending::default(),
            last_completion: measure_start,
            cpu_at_measure_start: None,
            engine_failure: None,
            search,
            flow_own: 0,
            flow_held: false,
            now: clock.now(),
            verify,
            verify_failure: None,
            engine,
            plan,
            links,
            clock,
        }
    }

    /// Waits for the common start (after this worker's own delay), unless the test is stopped
    /// first; starts the CPU count when there is no ramp.
    pub(super) fn wait_for_start(&mut self) {
        let begin = self.window.begin;
        if self.plan.start_delay_ns > 0 {
            pause(
                self.clock,
                self.clock.nanos_between(self.now, begin),
                &self.links,
            );
            self.now = self.clock.now();
        }
        while self.now < begin && !self.links.wait_is_over() {
            std::hint::spin_loop();
            self.now = self.clock.now();
        }
        if self.window.measure_start == begin {
            self.cpu_at_measure_start = Some(ThreadClocks::now());
        }
    }

    /// Whether the worker has issued its bytes or its I/Os.
    fn budget_done(&self) -> bool {
        self.window
            .byte_budget
            .is_some_and(|budget| self.totals.issued_bytes >= budget)
            || self
                .window
                .io_limit
                .is_some_and(|limit| self.totals.issued_ios >= limit)
    }

    /// Starts the end of the window when a stop flag is up, the time is over, the coordinator
    /// ended the test or the budget is issued: no new I/O from then on.
    pub(super) fn look_for_the_end(&mut self) {
        if self.ending.stopping {
            return;
        }
        let now = self.now;
        if self.links.error_stop.load(Ordering::Relaxed) || self.links.stop.load(Ordering::Relaxed)
        {
            self.stop(StopCause::Signal, now);
        } else if self.window.measure_end.is_some_and(|end| now >= end) {
            self.ending.stopping = true;
            self.ending.time_ended = true;
        } else if self.links.finish.load(Ordering::Relaxed) {
            self.ending.stopping = true;
            self.ending.finished_at = Some(now);
        } else if self.budget_done() && !self.backlog_ready() && !self.backlog_may_fill() {
            self.ending.stopping = true;
        }
    }

    /// Moves the latency-target search on once the queue has drained after it lowered the
    /// depth or found it: the next window starts (the final one with fresh figures).
    pub(super) fn step_the_search(&mut self) {
        let now = self.now;
        let Some(search) = &mut self.search else {
            return;
        };
        let Some(step) = search.draining else {
            return;
        };
        if self.queue.in_flight > 0 {
            return;
        }
        search.draining = None;
        if step == SearchStep::FinalRun
            && let Some((fresh_read, fresh_write, fresh_trim)) = search.spare.take()
        {
            self.read = fresh_read;
            self.write = fresh_write;
            self.trim = fresh_trim;
            self.window.measure_start = now;
            self.cpu_at_measure_start = Some(ThreadClocks::now());
            search.restarted = true;
        }
        search
            .search
            .start_window(self.clock.nanos_between(self.window.begin, now));
    }

    /// I/Os the queue may hold now: the queue depth, or the depth the latency-target search is
    /// at (1 during the ramp, 0 while it drains the queue for a new depth).
    fn depth_limit(&self) -> usize {
        match &self.search {
            None => self.queue.depth,
            Some(search) if search.draining.is_some() => 0,
            Some(_) if self.now < self.window.measure_start => 1,
            Some(search) => (search.search.depth() as usize).min(self.queue.depth),
        }
    }

    /// Runs a periodic fdatasync once the writes before it have completed (it runs alone).
    pub(super) fn sync_if_due(&mut self) {
        if self.sync_pending && self.queue.in_flight == 0 {
            self.sync_pending = false;
            if let Err(error) = self.engine.sync_data() {
                self.engine_failed(error);
            }
        }
    }

    /// Issues I/O until the queue is full, the budget is issued, a periodic fdatasync is due or
    /// the next I/O must wait (pacer, think time); returns that wait, ns (0: none).
    pub(super) fn fill(&mut self) -> u64 {
        let depth_limit = self.depth_limit();
        if self.ending.stopping
            || self.sync_pending
            || self.queue.in_flight >= depth_limit
            || self.engine_failure.is_some()
        {
            return 0;
        }
        // The first I/O of a new pass waits for the I/O in flight, then for the read-back of
        // the pass that ended (a time-based verifying job).
        if let Some(verify) = &mut self.verify
            && verify.pass_held()
        {
            if self.queue.in_flight > 0 {
                return 0;
            }
            verify.pass_drained();
        }
        let clock = self.clock;
        let batch_time = clock.now();
        let since_start = clock.nanos_between(self.window.begin, batch_time);
        let mut queued = 0usize;
        let mut wait_ns = 0;
        while self.queue.in_flight < depth_limit {
            if self.budget_done() && !self.backlog_ready() {
                break;
            }
            if batch_time < self.not_before {
                wait_ns = clock.nanos_between(batch_time, self.not_before);
                break;
            }
            if self.paced.is_none()
                && let Some(flow) = self.links.flow
                && !flow.admit(&mut self.flow_own, self.plan.flow_weight)
            {
                wait_ns = self.plan.flow_sleep_ns.max(DEFAULT_FLOW_WAIT_NS);
                self.flow_held = true;
                break;
            }
            // A read-back of the verify backlog goes first, then a trim of a picked written
            // block (fio's trim_backlog), both outside the pacer and the budget.
            let backlog_read = self.verify.as_mut().and_then(|verify| {
                verify
                    .backlog_read()
                    .or_else(|| self.paced.is_none().then(|| verify.trim_next()).flatten())
            });
            let (io, due_ns) = match backlog_read {
                Some(read) => (read, 0),
                None => self.next_io(),
            };
            if self.verify.as_ref().is_some_and(VerifyRun::pass_held) {
                // It began a new pass: held until the last one is read back.
                self.paced = Some((io, due_ns));
                break;
            }
            if due_ns > since_start {
                wait_ns = due_ns - since_start;
                self.paced = Some((io, due_ns));
                break;
            }
            if (self.plan.serialize_overlap && self.overlaps_in_flight(io, true))
                || (self.verify.is_some() && self.overlaps_in_flight(io, false))
            {
                // Issued once the I/O it overlaps has completed.
                self.paced = Some((io, due_ns));
                break;
            }
            // Requests handed to the device one by one get their own submission time.
            let own_time = self.plan.submit_batch == 1 && queued > 0;
            let submitted = match self.issue(io, batch_time, own_time, backlog_read.is_none()) {
                Ok(submitted) => submitted,
                Err(error) => {
                    self.engine_failed(error);
                    break;
                }
            };
            queued += 1;
            if self.plan.submit_batch > 0
                && queued.is_multiple_of(self.plan.submit_batch)
                && self.queue.has_room()
                && let Err(error) = self.flush()
            {
                self.engine_failed(error);
                break;
            }
            if io.pause_after_ns > 0 {
                self.not_before = submitted + clock.ticks_for_nanos(io.pause_after_ns);
            }
            if self.sync_due_after(io) {
                break;
            }
        }
        if let Err(error) = self.flush()
            && self.engine_failure.is_none()
        {
            self.engine_failed(error);
        }
        wait_ns
    }

    /// Hands the queued requests over ([`Engine::flush`]); for an engine that separates
    /// submission from completion, reads the clock once when the flush returned and gives that
    /// time to every request it handed over.
    fn flush(&mut self) -> Result<(), EngineError> {
        self.engine.flush()?;
        if !self.queue.unflushed.is_empty() {
            let handed_over = self.clock.now();
            for slot in self.queue.unflushed.drain(..) {
                self.queue.slots[slot as usize].handed_over = handed_over;
            }
        }
        Ok(())
    }

    /// The next I/O and the time it is due, ns after the start (0: now): the one waiting for
    /// the pacer, or a new one drawn from the planner.
    fn next_io(&mut self) -> (PlannedIo, u64) {
        match (self.paced.take(), self.links.pacer) {
            (Some(waiting), _) => waiting,
            (None, Some(pacer)) => {
                let io = self.planned_io();
                (io, pacer.claim(u64::from(io.length)))
            }
            (None, None) => (self.planned_io(), 0),
        }
    }

    /// The planner's next I/O; when it begins a new pass over a file whose cache is dropped
    /// each pass (fio's `invalidate=1` in a timed buffered job), the file's cached pages are
    /// dropped first, as fio does when its random map fills up or its offset wraps; and a
    /// time-based verifying job reads back the pass that ended before this I/O is issued.
    #[inline]
    fn planned_io(&mut self) -> PlannedIo {
        let io = self.plan.planner.next_io();
        if let Some(file) = self.plan.planner.pass_began() {
            if self.plan.invalidate_each_pass {
                // Advisory, as in fio: a refusal changes nothing but the cache.
                let _ = self.engine.drop_cached_pages(file);
            }
            if let Some(verify) = &mut self.verify {
                verify.pass_began();
            }
        }
        io
    }

    /// Places `io` in a free slot, readies a write's buffer, and submits it; returns its
    /// submission time: `batch_time`, or a clock reading of its own when `own_time` or when
    /// the buffer was just filled (the fill is not the write's latency).
    fn issue(
        &mut self,
        io: PlannedIo,
        batch_time: Ticks,
        own_time: bool,
        budgeted: bool,
    ) -> Result<Ticks, EngineError> {
        let slot = self
            .queue
            .free
            .pop()
            .expect("a free slot below the queue depth");
        let mut filled = false;
        if io.direction == Direction::Write {
            let read_into = self.queue.slots[slot as usize].direction == Some(Direction::Read);
            let buffer = &mut self.engine.buffer_mut(slot as usize)[..io.length as usize];
            if let Some(verify) = &mut self.verify {
                // Every verified write carries data of its own, as fio draws a new seed for
                // each: the buffer is filled anew as the plan says (fresh random bytes, or new
                // reducible chunks at the asked shares), so that no two writes of a block share
                // their payload. A verify pattern is written over every byte: nothing under it.
                if !verify.writes_pattern() {
                    self.plan.data.fill(buffer);
                }
                verify.stamp(buffer, io.file, io.offset);
                filled = true;
            } else {
                filled = self.plan.data.prepare_write(buffer, io.offset, read_into);
                if self.plan.stamp_writes {
                    stamp_block(buffer, io.offset);
                }
            }
        }
        let submitted = if filled || own_time {
            self.clock.now()
        } else {
            batch_time
        };
        self.queue.slots[slot as usize] = SlotState {
            file: io.file,
            offset: io.offset,
            length: io.length,
            direction: Some(io.direction),
            submitted,
            handed_over: 0,
            busy: true,
        };
        if self.plan.trace {
            self.trace.push(TracedIo {
                direction: io.direction,
                offset: io.offset,
                length: io.length,
                target: self
                    .plan
                    .target_indexes
                    .get(io.file as usize)
                    .copied()
                    .unwrap_or(0),
                in_flight: self.queue.in_flight as u32 + 1,
            });
        }
        let request = IoRequest {
            file: io.file,
            slot,
            direction: io.direction,
            offset: io.offset,
            length: io.length,
        };
        if let Err(error) = self.engine.submit(request) {
            self.queue.free.push(slot);
            return Err(error);
        }
        if self.read.split.is_some() {
            self.queue.unflushed.push(slot);
        }
        self.queue.in_flight += 1;
        if budgeted {
            self.totals.issued_bytes += u64::from(io.length);
            self.totals.issued_ios += 1;
        }
        Ok(submitted)
    }

    /// Whether `io` overlaps an I/O in flight — of any direction with `any_direction`, else
    /// only one of two of which one writes: what the read sees, or what the block ends up
    /// holding, could then be either write's (the device may complete them in any order). A
    /// verifying worker holds such an I/O until the other has completed, and with
    /// `serialize_overlap` (fio's) every worker holds any overlapping I/O.
    fn overlaps_in_flight(&self, io: PlannedIo, any_direction: bool) -> bool {
        let end = io.offset + u64::from(io.length);
        self.queue.slots.iter().any(|slot| {
            slot.busy
                && slot.file == io.file
                && slot.offset < end
                && io.offset < slot.offset + u64::from(slot.length)
                && (any_direction
                    || slot.direction.is_some_and(|d| d != Direction::Read)
                    || io.direction != Direction::Read)
        })
    }

    /// Whether writes in flight may still fill a verify backlog.
    fn backlog_may_fill(&self) -> bool {
        self.queue.in_flight > 0 && self.verify.as_ref().is_some_and(VerifyRun::has_backlog)
    }

    /// Whether a full verify backlog waits to be read back.
    fn backlog_ready(&self) -> bool {
        self.verify.as_ref().is_some_and(VerifyRun::backlog_ready)
    }

    /// Whether the workload is only a read-back (fio's `verify_only`).
    pub(super) fn verify_only(&self) -> bool {
        self.verify.as_ref().is_some_and(VerifyRun::only)
    }

    /// Counts a write towards the periodic fdatasync; true when one is now due.
    fn sync_due_after(&mut self, io: PlannedIo) -> bool {
        let Some(every) = self.plan.fsync_every_writes else {
            return false;
        };
        if io.direction != Direction::Write {
            return false;
        }
        self.writes_since_sync += 1;
        if self.writes_since_sync >= every {
            self.writes_since_sync = 0;
            self.sync_pending = true;
        }
        self.sync_pending
    }

    /// Whether no I/O is in flight.
    pub(super) fn idle(&self) -> bool {
        self.queue.in_flight == 0
    }

    /// Whether an idle worker is done: it is stopping or has issued its budget.
    pub(super) fn nothing_left(&self) -> bool {
        self.ending.stopping || (self.budget_done() && !self.backlog_ready())
    }

    /// Waits `wait_ns` for the pacer or a think time (no longer than the window lasts), then
    /// reads the clock.
    pub(super) fn wait(&mut self, wait_ns: u64) {
        if wait_ns > 0 {
            let clock = self.clock;
            let until_end = self
                .window
                .measure_end
                .map_or(u64::MAX, |end| clock.nanos_between(clock.now(), end).max(1));
            if std::mem::take(&mut self.flow_held) {
                rest(clock, wait_ns.min(until_end), &self.links);
            } else {
                pause(clock, wait_ns.min(until_end), &self.links);
            }
        }
        self.now = self.clock.now();
    }

    /// Reaps at least one completion and records each: latency and bytes of those that end
    /// inside the window, an error for a failed or short transfer (which stops the worker
    /// unless errors may go on). Publishes the totals for the live line.
    pub(super) fn reap_and_record(&mut self) -> Result<(), EngineError> {
        let reaped = self.engine.reap(1, &mut self.queue.completions)?;
        let now = self.clock.now();
        self.now = now;
        if self.cpu_at_measure_start.is_none() && now >= self.window.measure_start {
            self.cpu_at_measure_start = Some(ThreadClocks::now());
        }
        let at_end = self.plan.fsync_at_end;
        let counted = now >= self.window.measure_start
            && (at_end || self.window.measure_end.is_none_or(|end| now <= end))
            && (at_end || self.ending.finished_at.is_none_or(|at| now <= at))
            && self.ending.stopped_at.is_none();
        let elapsed_ns = self.clock.nanos_between(self.window.measure_start, now);
        for index in 0..reaped {
            let completion = self.queue.completions[index];
            self.record(completion, counted.then_some(elapsed_ns));
        }
        let progress = self.links.progress;
        for (direction, totals) in DIRECTIONS.into_iter().zip(self.totals.completed) {
            progress.direction(direction).publish(totals);
        }
        let since_begin = self.clock.nanos_between(self.window.begin, now);
        if let Some(search) = &mut self.search
            && search.draining.is_none()
            && !self.ending.stopping
            && now >= self.window.measure_start
        {
            match search.search.check(since_begin) {
                SearchStep::Continue => {}
                SearchStep::Done => self.ending.stopping = true,
                step => search.draining = Some(step),
            }
        }
        Ok(())
    }

    /// Frees the slot of `completion` and records it; `elapsed_ns` is its time in the window,
    /// `None` when it ended outside.
    fn record(&mut self, completion: Completion, elapsed_ns: Option<u64>) {
        let slot = self.queue.slots[completion.slot as usize];
        self.queue.slots[completion.slot as usize].busy = false;
        self.queue.free.push(completion.slot);
        self.queue.in_flight -= 1;
        let direction = slot.direction.unwrap_or(Direction::Read);
        let empty_read = direction == Direction::Read
            && completion.result == 0
            && self.plan.empty_reads_complete;
        if completion.result != i64::from(slot.length) && !empty_read {
            if let Some(verify) = &mut self.verify
                && direction != Direction::Read
            {
                verify.write_failed(slot.file, slot.offset, slot.length);
            }
            self.record_error(slot, direction, completion.result);
            return;
        }
        if direction == Direction::Write
            && let Some(verify) = &mut self.verify
        {
            verify.write_completed(slot.file, slot.offset, slot.length);
        }
        if direction == Direction::Read
            && !empty_read
            && let Some(verify) = &mut self.verify
        {
            let buffer =
                &mut self.engine.buffer_mut(completion.slot as usize)[..slot.length as usize];
            let target = self
                .plan
                .target_paths
                .get(slot.file as usize)
                .map_or("", String::as_str);
            let stop = verify.check_read(target, buffer, slot.file, slot.offset);
            self.links.progress.verify.publish(verify.live());
            if stop {
                self.stop(StopCause::IoError, self.now);
            }
        }
        if direction == Direction::Trim {
            self.trim_completed(TrimmedRange {
                file: slot.file,
                offset: slot.offset,
                length: slot.length,
            });
        }
        let latency_ns = self.clock.nanos_between(slot.submitted, self.now);
        let submission_ns = if slot.handed_over == 0 {
            0
        } else {
            self.clock
                .nanos_between(slot.submitted, slot.handed_over.min(self.now))
        };
        let bytes = if empty_read || self.plan.moves_no_bytes {
            0
        } else {
            u64::from(slot.length)
        };
        let completed = &mut self.totals.completed[direction_index(direction)];
        completed.bytes += bytes;
        completed.io_count += 1;
        completed.latency_sum_ns += latency_ns;
        self.links
            .progress
            .direction(direction)
            .count_latency(latency_ns);
        if let Some(search) = &mut self.search
            && search.draining.is_none()
            && self.now >= self.window.measure_start
        {
            match search.search.completed(latency_ns) {
                SearchStep::Continue => {}
                SearchStep::Done => self.ending.stopping = true,
                step => search.draining = Some(step),
            }
        }
        if let Some(elapsed_ns) = elapsed_ns {
            let recorder = match direction {
                Direction::Read => &mut self.read,
                Direction::Write => &mut self.write,
                Direction::Trim => &mut self.trim,
            };
            recorder.record(elapsed_ns, latency_ns, bytes);
            recorder.record_split(latency_ns, submission_ns);
            self.last_completion = self.now;
            if self.plan.io_log.is_some() {
                let clock = self.clock;
                self.io_log.record(LoggedIo {
                    completed_ns: elapsed_ns,
                    issued_ns: clock.nanos_between(self.window.measure_start, slot.submitted),
                    latency_ns,
                    submission_ns,
                    offset: slot.offset,
                    length: bytes as u32,
                    direction,
                    file: slot.file,
                });
            }
        }
    }

    /// The one place every trim that completed in full passes through, ramp included, before
    /// it is counted: from here on the target holds no data for `range` of the worker's file
    /// `range.file` (a block device or iSCSI LUN reads it back as zeroes where it documents
    /// so — `discard_zeroes_data`, LBPRZ —, a file with a punched hole as zeroes, an NBD export
    /// as the server defines). Data verification marks the range trimmed here, so that a later
    /// read of it is judged against "trimmed", not against the data written before; nothing
    /// else needs it, so it keeps nothing yet. A failed or short trim does not come here (it
    /// is an error of the trim direction, and the range's data is then unknown).
    #[inline]
    fn trim_completed(&mut self, range: TrimmedRange) {
        if let Some(verify) = &mut self.verify {
            verify.trimmed(range.file, range.offset, range.length);
        }
    }

    /// Counts a failed or short transfer (a short one is not retried and its bytes are not
    /// counted) through [`Worker::record_failure`].
    fn record_error(&mut self, slot: SlotState, direction: Direction, result: i64) {
        // As in fio, a failed trim is of the write kind.
        let kind = match direction {
            Direction::Read => ErrorKind::Read,
            Direction::Write | Direction::Trim => ErrorKind::Write,
        };
        let errno = if result < 0 { (-result) as i32 } else { 0 };
        self.record_failure(kind, errno, slot, direction, || {
            if result < 0 {
                std::io::Error::from_raw_os_error(errno).to_string()
            } else {
                format!("short transfer: {result} of {} bytes", slot.length)
            }
        });
    }

    /// The one place a failed I/O is counted and judged: counted by direction and by kind and
    /// errno (`errno` 0: a short transfer, judged as `EIO`), the first ones kept with their
    /// offsets and `describe`'s words, and the worker stopped unless the job's error policy
    /// lets it go on after this kind and errno. A verification mismatch (data read back that is
    /// not what was written) is reported here as [`ErrorKind::Verify`] with
    /// [`EILSEQ`](crate::result::error_policy::EILSEQ), so that
    /// `continue_on_error=verify` and `ignore_error=,,…` apply to it as in fio.
    fn record_failure(
        &mut self,
        kind: ErrorKind,
        errno: i32,
        slot: SlotState,
        direction: Direction,
        describe: impl FnOnce() -> String,
    ) {
        match direction {
            Direction::Read => self.read.error_count += 1,
            Direction::Write => self.write.error_count += 1,
            Direction::Trim => self.trim.error_count += 1,
        }
        if self.errors.len() < KEPT_ERRORS_PER_WORKER {
            self.errors.push(IoErrorRecord {
                target: self
                    .plan
                    .target_paths
                    .get(slot.file as usize)
                    .cloned()
                    .unwrap_or_default(),
                direction,
                offset: slot.offset,
                length: slot.length,
                error: describe(),
            });
        }
        let judged = if errno == 0 { EIO } else { errno };
        let continues =
            self.plan.continue_on_error || self.plan.error_policy.continues(kind, judged);
        count_errors(&mut self.error_counts, kind, errno, 1, u64::from(continues));
        if !continues {
            self.stop(StopCause::IoError, self.now);
        }
    }

    /// Records a failure of the engine as a whole and stops the worker for it. The first
    /// failure is kept, unless it only said the run was stopping and a real one follows.
    pub(super) fn engine_failed(&mut self, error: EngineError) {
        let cause = if error.is_stop() {
            StopCause::EngineStopped
        } else {
            StopCause::EngineFailure
        };
        if self
            .engine_failure
            .as_ref()
            .is_none_or(EngineError::is_stop)
        {
            self.engine_failure = Some(error);
        }
        self.stop(cause, self.clock.now());
    }

    /// The one way a worker stops early, at `at`: no new I/O from then on (the I/O in flight
    /// is drained), the window ends at `at`, and the reason is set. An error of this worker
    /// raises the test's error flag so that every other worker stops too. Once stopping, only
    /// a failure of the engine changes the reason (to an error).
    pub(super) fn stop(&mut self, cause: StopCause, at: Ticks) {
        let first = !self.ending.stopping;
        let error_of_mine = match cause {
            StopCause::IoError => first,
            StopCause::EngineFailure => true,
            StopCause::Signal | StopCause::EngineStopped => false,
        };
        if error_of_mine {
            self.ending.reason = Some(StopReason::Error);
            // An error of a job whose policy keeps it to its own scope stops this worker
            // only; the test's links end the others when the worker has ended.
            if cause == StopCause::EngineFailure
                || self.plan.error_policy.error_ends == ErrorScope::Everything
            {
                self.links.error_stop.store(true, Ordering::Relaxed);
            }
        } else if first {
            self.ending.reason = Some(self.links.run_stop_reason());
        }
        let engine_said = matches!(cause, StopCause::EngineFailure | StopCause::EngineStopped);
        if first || engine_said {
            self.ending.stopped_at.get_or_insert(at);
        }
        self.ending.stopping = true;
    }

    /// Ends the worker: the final fdatasync when asked and nothing failed, the window's end,
    /// the thread's CPU time, and the outcome.
    pub(super) fn finish(mut self) -> WorkerOutcome {
        let clock = self.clock;
        let ending = self.ending;
        let mut stop_reason = ending.reason.unwrap_or(StopReason::Completed);
        let mut fsync_ns = 0;
        let mut window_end = match (
            ending.stopped_at,
            ending.finished_at,
            self.window.measure_end,
        ) {
            (Some(stopped), _, _) => stopped,
            (None, Some(finished), _) if !self.plan.fsync_at_end => finished,
            (None, None, Some(end)) if ending.time_ended && !self.plan.fsync_at_end => end,
            _ => self.last_completion,
        };
        if self.plan.fsync_at_end
            && self.engine_failure.is_none()
            && stop_reason == StopReason::Completed
        {
            let before = clock.now();
            if let Err(error) = self.engine.sync_data() {
                self.engine_failure = Some(error);
                stop_reason = StopReason::Error;
            }
            let after = clock.now();
            fsync_ns = clock.nanos_between(before, after);
            window_end = after;
        }
        let (thread_cpu_ns, thread_cpu_wait_ns) = self
            .cpu_at_measure_start
            .map_or((0, 0), ThreadClocks::elapsed_since);
        let fatal = self.verify.as_ref().is_some_and(VerifyRun::fatal);
        let verification = self.verify.take().map(|verify| {
            let read_back = ReadBack {
                queue_depth: self.queue.depth,
                buffer_bytes: self.plan.shape.buffer_bytes(),
                targets: &self.plan.target_paths,
                stops: [self.links.stop, self.links.error_stop],
                clock,
                engine: &mut *self.engine,
                progress: &self.links.progress.verify,
            };
            let completed = stop_reason == StopReason::Completed;
            let (result, failure) = verify.finish(read_back, completed);
            // Every bad block is an error of the verify kind (EILSEQ, as fio has it), counted
            // with the job's other errors; all but a fatal first one were gone on after.
            if result.mismatch_count > 0 {
                let stopped = u64::from(stop_reason == StopReason::Error && fatal);
                count_errors(
                    &mut self.error_counts,
                    ErrorKind::Verify,
                    EILSEQ,
                    result.mismatch_count,
                    result.mismatch_count - stopped,
                );
            }
            if failure.is_some() {
                stop_reason = StopReason::Error;
                self.verify_failure = failure;
            }
            result
        });
        self.read.finish();
        self.write.finish();
        self.trim.finish();
        let restarted = self.search.as_ref().is_some_and(|search| search.restarted);
        let window_end_ns = match (self.window.duration_ns, ending, fsync_ns) {
            // A run that went its whole time measured exactly that time.
            (
                Some(duration_ns),
                Ending {
                    time_ended: true,
                    stopped_at: None,
                    finished_at: None,
                    ..
                },
                0,
            ) if !restarted => duration_ns,
            _ => clock.nanos_between(self.window.measure_start, window_end),
        };
        let (trace, trace_overflow_ios) = self.trace.into_parts();
        let mut io_log = self.io_log.into_records();
        if self.plan.io_log.is_some() {
            io_log.files = self.plan.target_paths.clone();
            io_log.epoch_unix_ms =
                wall_clock_ms_at(clock.nanos_between(self.window.measure_start, clock.now()));
        }
        WorkerOutcome {
            read: self.read,
            write: self.write,
            trim: self.trim,
            errors: self.errors,
            error_counts: self.error_counts,
            stop_reason,
            window_end_ns,
            fsync_ns,
            thread_cpu_ns,
            thread_cpu_wait_ns,
            trace,
            trace_overflow_ios,
            io_log,
            engine_failure: self.engine_failure,
            verification,
            verify_failure: self.verify_failure,
            latency_depth: self
                .search
                .map(|search| (search.search.depth(), search.search.met())),
        }
    }
}

impl WorkerLinks<'_> {
    /// Why the run is stopping, as a worker that sees the stop flag reports it: another
    /// worker's error, or an interrupt.
    fn run_stop_reason(&self) -> StopReason {
        if self.error_stop.load(Ordering::Relaxed) {
            StopReason::Error
        } else {
            StopReason::Interrupted
        }
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

/// Sleeps `nanos` without spinning (in slices, until the wait is over): a worker ahead of its
/// flow gives its CPU to those behind it, as fio's `usleep(flow_sleep)` does. Spinning here
/// starved the workers behind whenever there were more workers than free cores.
fn rest(clock: &Clock, nanos: u64, links: &WorkerLinks<'_>) {
    let start = clock.now();
    loop {
        let elapsed = clock.nanos_between(start, clock.now());
        if elapsed >= nanos || links.wait_is_over() {
            return;
        }
        let slice = (nanos - elapsed).min(PAUSE_SLICE_NS);
        std::thread::sleep(std::time::Duration::from_nanos(slice));
    }
}

/// Adds `count` errors of `kind` and `errno` to `counts`, `continued` of them gone on after.
fn count_errors(
    counts: &mut Vec<ErrorCount>,
    kind: ErrorKind,
    errno: i32,
    count: u64,
    continued: u64,
) {
    let index = match counts
        .iter()
        .position(|entry| entry.kind == kind && entry.errno == errno)
    {
        Some(index) => index,
        None => {
            counts.push(ErrorCount {
                kind,
                errno,
                name: errno_name(errno),
                count: 0,
                continued: 0,
            });
            counts.len() - 1
        }
    };
    counts[index].count += count;
    counts[index].continued += continued;
}

/// The name of `errno` (`ENOSPC`), `short` for 0 (a short transfer), else `E<number>`.
fn errno_name(errno: i32) -> String {
    if errno == 0 {
        return "short".to_string();
    }
    crate::input::fio::error_values::errno_name(errno)
        .map_or_else(|| format!("E{errno}"), str::to_string)
}

/// The calling thread's CPU time and its time waiting for a CPU, ns, at one instant.
#[derive(Clone, Copy, Debug)]
struct ThreadClocks {
    cpu_ns: u64,
    cpu_wait_ns: u64,
}

impl ThreadClocks {
    fn now() -> Self {
        ThreadClocks {
            cpu_ns: thread_cpu_ns(),
            cpu_wait_ns: thread_cpu_wait_ns(),
        }
    }

    /// CPU time and time waiting for a CPU since `earlier`, ns.
    fn elapsed_since(earlier: ThreadClocks) -> (u64, u64) {
        let now = ThreadClocks::now();
        (
            now.cpu_ns.saturating_sub(earlier.cpu_ns),
            now.cpu_wait_ns.saturating_sub(earlier.cpu_wait_ns),
        )
    }
}

/// The wall clock, ms since the Unix epoch, `ago_ns` before now (0 before the epoch).
fn wall_clock_ms_at(ago_ns: u64) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    (now.saturating_sub(u128::from(ago_ns)) / 1_000_000) as u64
}
