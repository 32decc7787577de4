//! The worker loop driven by a scripted engine: an [`Engine`] that completes requests in a
//! chosen order, fails a chosen I/O, or transfers less than asked. The trace of issued I/O is
//! the oracle for what must have been recorded.

use super::*;
use crate::engine::{Completion, IoRequest};
use crate::fill::FillPlan;
use crate::result::{Capabilities, EngineKind};
use crate::workload::BlockSizeMix;
use crate::workload::planner::IoPlanner;
use crate::workload::suite::base_workload;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// What happens to one I/O (numbered from 0 in submission order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Transfers all its bytes.
    Done,
    /// Fails with this errno.
    Fails(i32),
    /// Transfers only this many bytes.
    Short(u32),
}

/// An engine that follows a script, and remembers what it was asked.
struct ScriptedEngine<'a> {
    capabilities: Capabilities,
    buffers: Vec<Vec<u8>>,
    /// Submitted, not yet flushed: (number, request).
    queued: Vec<(u64, IoRequest)>,
    /// Flushed, not yet reaped.
    flushed: Vec<(u64, IoRequest)>,
    submitted: u64,
    /// Complete the newest flushed request first.
    newest_first: bool,
    /// The one I/O whose fate is not [`Fate::Done`].
    special: Option<(u64, Fate)>,
    /// Raise this flag once this many I/Os have been submitted.
    raise_after: Option<(u64, &'a AtomicBool)>,
    /// Numbers of the reaped I/Os, in completion order.
    completed: Vec<u64>,
    /// Keep a copy of every write's bytes, in submission order.
    keep_writes: bool,
    /// The bytes of each write, when kept.
    written: Vec<Vec<u8>>,
    /// Count the requests submitted while an overlapping one is in flight.
    count_overlaps: bool,
    /// Those requests.
    overlaps: usize,
    /// How long each flush that hands something over takes.
    flush_pause: Duration,
}

impl<'a> ScriptedEngine<'a> {
    fn new(queue_depth: usize) -> Self {
        ScriptedEngine {
            capabilities: Capabilities::default(),
            buffers: vec![vec![0; 64 << 10]; queue_depth],
            queued: Vec::new(),
            flushed: Vec::new(),
            submitted: 0,
            newest_first: false,
            special: None,
            raise_after: None,
            completed: Vec::new(),
            keep_writes: false,
            written: Vec::new(),
            count_overlaps: false,
            overlaps: 0,
            flush_pause: Duration::ZERO,
        }
    }
}

impl Engine for ScriptedEngine<'_> {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        &mut self.buffers[slot]
    }
    fn submit(&mut self, request: IoRequest) -> Result<(), EngineError> {
        let busy = self.queued.iter().chain(&self.flushed);
        assert!(
            busy.clone().all(|(_, r)| r.slot != request.slot),
            "slot reused while busy"
        );
        if self.count_overlaps {
            self.overlaps += usize::from(overlaps_in_flight(self, &request) > 0);
        }
        if self.keep_writes && request.direction == Direction::Write {
            let bytes = &self.buffers[request.slot as usize][..request.length as usize];
            self.written.push(bytes.to_vec());
        }
        self.queued.push((self.submitted, request));
        self.submitted += 1;
        if let Some((after, flag)) = self.raise_after
            && self.submitted >= after
        {
            flag.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), EngineError> {
        if !self.queued.is_empty() {
            std::thread::sleep(self.flush_pause);
        }
        self.flushed.append(&mut self.queued);
        Ok(())
    }
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, EngineError> {
        assert!(
            self.flushed.len() >= min,
            "asked to wait for I/O never flushed"
        );
        let count = self.flushed.len().min(out.len());
        if self.newest_first {
            self.flushed.reverse();
        }
        let special = self.special;
        for (place, (number, request)) in out.iter_mut().zip(self.flushed.drain(..count)) {
            let fate = match special {
                Some((at, fate)) if at == number => fate,
                _ => Fate::Done,
            };
            let result = match fate {
                Fate::Done => i64::from(request.length),
                Fate::Fails(errno) => -i64::from(errno),
                Fate::Short(bytes) => i64::from(bytes),
            };
            *place = Completion {
                slot: request.slot,
                result,
            };
            self.completed.push(number);
        }
        if self.newest_first {
            self.flushed.reverse();
        }
        Ok(count)
    }
    fn sync_data(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}

/// A plan of random I/O over 64 MiB with `sizes` and `read_percent`, traced.
fn plan(sizes: &str, read_percent: u8, queue_depth: u32, length: WorkerLength) -> WorkerPlan {
    let mut workload = base_workload();
    workload.set_simple(
        &BlockSizeMix::parse(sizes).unwrap(),
        read_percent,
        100,
        4096,
    );
    WorkerPlan {
        shape: TestShape::new(EngineKind::Null, 1, queue_depth, 4096),
        verify: None,
        empty_reads_complete: false,
        moves_no_bytes: false,
        serialize_overlap: false,
        target_paths: vec!["scripted".to_string()],
        target_indexes: vec![0],
        planner: FileSetPlanner::single(IoPlanner::new(&workload, 0, 64 << 20, 0, 1)),
        length,
        fsync_at_end: false,
        continue_on_error: false,
        error_policy: Default::default(),
        invalidate_each_pass: false,
        interval_ns: 1_000_000_000,
        trace: true,
        io_log: None,
        stamp_writes: false,
        data: BufferFiller::new(FillPlan::default(), 1),
        start_delay_ns: 0,
        io_limit: None,
        fsync_every_writes: None,
        submit_batch: 0,
        latency_target: None,
        flow_weight: 0,
        flow_sleep_ns: 0,
    }
}

fn bytes(bytes: u64) -> WorkerLength {
    WorkerLength::Bytes {
        bytes,
        time_limit_ns: None,
        ramp_ns: 0,
    }
}

/// The stop flags of one worker's test.
#[derive(Default)]
struct Flags {
    stop: AtomicBool,
    error_stop: AtomicBool,
    finish: AtomicBool,
    progress: WorkerProgress,
}

impl Flags {
    fn links(&self) -> WorkerLinks<'_> {
        WorkerLinks {
            stop: &self.stop,
            error_stop: &self.error_stop,
            progress: &self.progress,
            finish: &self.finish,
            pacer: None,
            flow: None,
        }
    }
}

fn run(engine: &mut ScriptedEngine<'_>, plan: WorkerPlan, flags: &Flags) -> WorkerOutcome {
    let clock = Clock::new();
    let start = clock.now();
    run_worker(engine, plan, flags.links(), &clock, start)
}

/// Sum of the traced lengths of one direction.
fn traced_bytes(trace: &[TracedIo], direction: Direction) -> u64 {
    trace
        .iter()
        .filter(|io| io.direction == direction)
        .map(|io| u64::from(io.length))
        .sum()
}

#[test]
fn completions_out_of_order_are_recorded_by_their_slots() {
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(8);
    engine.newest_first = true;
    let outcome = run(
        &mut engine,
        plan("512/20,4k/50,64k/30", 50, 8, bytes(4 << 20)),
        &flags,
    );
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert!(outcome.errors.is_empty());
    let in_order: Vec<u64> = (0..engine.submitted).collect();
    assert_ne!(engine.completed, in_order, "the engine did reorder");
    let mut sorted = engine.completed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, in_order, "every I/O completed once");
    // Every byte recorded under the direction and length of the slot it was issued in.
    let trace = &outcome.trace;
    assert_eq!(trace.len() as u64, engine.submitted);
    assert_eq!(outcome.read.bytes, traced_bytes(trace, Direction::Read));
    assert_eq!(outcome.write.bytes, traced_bytes(trace, Direction::Write));
    assert!(outcome.read.bytes > 0 && outcome.write.bytes > 0);
    assert!(outcome.read.bytes + outcome.write.bytes >= 4 << 20);
    let reads = trace.iter().filter(|io| io.direction == Direction::Read);
    assert_eq!(outcome.read.io_count, reads.count() as u64);
    assert_eq!(outcome.read.histogram.count(), outcome.read.io_count);
    assert_eq!(outcome.trace_overflow_ios, 0);
    assert!(engine.flushed.is_empty() && engine.queued.is_empty());
}

#[test]
fn the_io_log_keeps_every_completion_as_recorded() {
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(8);
    engine.newest_first = true;
    let mut plan = plan("4k/50,64k/50", 50, 8, bytes(2 << 20));
    plan.io_log = Some(super::io_log::IoLogPlan::PerIo { room: 1 << 12 });
    let outcome = run(&mut engine, plan, &flags);
    let log = &outcome.io_log;
    assert_eq!(log.ios.len() as u64, engine.submitted);
    assert_eq!(log.overflow_ios, 0);
    let logged = |direction| {
        log.ios
            .iter()
            .filter(|io| io.direction == direction)
            .map(|io| u64::from(io.length))
            .sum::<u64>()
    };
    assert_eq!(logged(Direction::Read), outcome.read.bytes);
    assert_eq!(logged(Direction::Write), outcome.write.bytes);
    let latency_sum: u64 = log
        .ios
        .iter()
        .filter(|io| io.direction == Direction::Read)
        .map(|io| io.latency_ns)
        .sum();
    assert_eq!(u128::from(latency_sum), outcome.read.histogram.sum());
    assert!(
        log.ios
            .windows(2)
            .all(|w| w[0].completed_ns <= w[1].completed_ns)
    );
    assert!(log.ios.iter().all(|io| io.issued_ns <= io.completed_ns));
}

/// The worker of the I/O-log test over an engine whose flushes take 2 ms, which does or does
/// not `separate` submission from completion.
fn run_with_slow_flushes(separate: bool) -> WorkerOutcome {
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(4);
    engine.capabilities.separates_submission = separate;
    engine.flush_pause = Duration::from_millis(2);
    let mut plan = plan("4k", 100, 4, bytes(64 << 10));
    plan.io_log = Some(super::io_log::IoLogPlan::PerIo { room: 1 << 10 });
    run(&mut engine, plan, &flags)
}

#[test]
fn the_submission_latency_is_the_time_to_the_end_of_the_flush() {
    let outcome = run_with_slow_flushes(true);
    let split = outcome.read.split.as_ref().expect("a split recorder");
    let count = outcome.read.io_count;
    assert_eq!(count, 16);
    assert_eq!(split.submission.count(), count);
    assert_eq!(split.completion.count(), count);
    // Each I/O waited for its flush: at least 2 ms of submission latency each.
    assert!(
        split.submission.min() >= 2_000_000,
        "{}",
        split.submission.min()
    );
    assert_eq!(
        split.submission.sum() + split.completion.sum(),
        outcome.read.histogram.sum()
    );
    let logged = &outcome.io_log.ios;
    assert_eq!(logged.len() as u64, count);
    assert!(logged.iter().all(|io| io.submission_ns >= 2_000_000));
    assert!(logged.iter().all(|io| io.submission_ns <= io.latency_ns));
}

#[test]
fn an_engine_that_does_not_separate_submission_records_no_split() {
    let outcome = run_with_slow_flushes(false);
    assert!(outcome.read.split.is_none());
    assert_eq!(outcome.read.io_count, 16);
    assert!(outcome.io_log.ios.iter().all(|io| io.submission_ns == 0));
}

#[test]
fn an_error_at_one_io_stops_the_worker_after_draining() {
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(4);
    engine.special = Some((10, Fate::Fails(libc::EIO)));
    let outcome = run(&mut engine, plan("4k", 100, 4, bytes(1 << 30)), &flags);
    assert_eq!(outcome.stop_reason, StopReason::Error);
    assert!(
        flags.error_stop.load(Ordering::Relaxed),
        "the other workers are told"
    );
    assert_eq!(outcome.read.error_count, 1);
    let [error] = outcome.errors.as_slice() else {
        panic!("{:?}", outcome.errors)
    };
    assert_eq!(error.offset, outcome.trace[10].offset);
    assert_eq!(
        error.error,
        std::io::Error::from_raw_os_error(libc::EIO).to_string()
    );
    // Nothing issued after the refill that held the failed I/O, and nothing left in flight.
    assert!(engine.submitted <= 10 + 4, "{}", engine.submitted);
    assert!(engine.flushed.is_empty() && engine.queued.is_empty());
    assert_eq!(engine.completed.len() as u64, engine.submitted);
    assert_eq!(
        outcome.read.io_count + outcome.read.error_count,
        engine.submitted
    );
}

#[test]
fn a_short_transfer_is_an_error_of_its_io_and_not_retried() {
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(4);
    engine.special = Some((5, Fate::Short(100)));
    let outcome = run(&mut engine, plan("4k", 0, 4, bytes(1 << 30)), &flags);
    assert_eq!(outcome.stop_reason, StopReason::Error);
    assert_eq!(outcome.write.error_count, 1);
    assert_eq!(outcome.errors[0].error, "short transfer: 100 of 4096 bytes");
    assert_eq!(outcome.errors[0].offset, outcome.trace[5].offset);
    let traced_offsets = outcome
        .trace
        .iter()
        .filter(|io| io.offset == outcome.trace[5].offset);
    assert_eq!(
        traced_offsets.count(),
        1,
        "the short I/O is not issued again"
    );

    // With errors allowed to go on, the worker finishes its bytes; the short I/O's bytes are
    // not counted as transferred.
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(4);
    engine.special = Some((5, Fate::Short(100)));
    let mut going_on = plan("4k", 0, 4, bytes(64 * 4096));
    going_on.continue_on_error = true;
    let outcome = run(&mut engine, going_on, &flags);
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert!(!flags.error_stop.load(Ordering::Relaxed));
    assert_eq!(engine.submitted, 64);
    assert_eq!(outcome.write.error_count, 1);
    assert_eq!(outcome.write.io_count, 63);
    assert_eq!(outcome.write.bytes, 63 * 4096);
}

#[test]
fn the_stop_flag_ends_the_worker_promptly_as_interrupted() {
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(4);
    engine.raise_after = Some((100, &flags.stop));
    let long = WorkerLength::Time {
        ramp_ns: 0,
        duration_ns: 600_000_000_000,
    };
    let outcome = run(&mut engine, plan("4k", 100, 4, long), &flags);
    assert_eq!(outcome.stop_reason, StopReason::Interrupted);
    assert!(!flags.error_stop.load(Ordering::Relaxed));
    assert!(engine.submitted <= 100 + 4, "{}", engine.submitted);
    assert!(engine.flushed.is_empty() && engine.queued.is_empty());
    assert!(outcome.window_end_ns < 600_000_000_000);
}

#[test]
fn the_stop_flag_cuts_a_think_time_short() {
    let flags = Flags::default();
    let first_submitted = AtomicBool::new(false);
    let mut engine = ScriptedEngine::new(1);
    engine.raise_after = Some((1, &first_submitted));
    let mut workload = base_workload();
    workload.think_time_ns = 600_000_000_000;
    let mut thinking = plan("4k", 100, 1, bytes(1 << 30));
    thinking.planner = FileSetPlanner::single(IoPlanner::new(&workload, 0, 64 << 20, 0, 1));
    let began = Instant::now();
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            // Stop only once the worker is in its think time (after the first I/O), however
            // late a busy machine starts it; bounded so that a broken worker cannot hang here.
            let waiting = Instant::now();
            while !first_submitted.load(Ordering::Relaxed)
                && waiting.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(50));
            flags.stop.store(true, Ordering::Relaxed);
        });
        run(&mut engine, thinking, &flags)
    });
    assert_eq!(outcome.stop_reason, StopReason::Interrupted);
    assert_eq!(
        engine.submitted, 1,
        "the think time held the second I/O back"
    );
    assert!(
        began.elapsed() < Duration::from_secs(60),
        "far less than the think time"
    );
}

#[test]
fn an_io_limit_bounds_the_trace_room_and_nothing_overflows() {
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(4);
    let mut limited = plan("4k", 100, 4, bytes(1 << 30));
    limited.io_limit = Some(10);
    let outcome = run(&mut engine, limited, &flags);
    assert_eq!(engine.submitted, 10);
    assert_eq!(outcome.trace.len(), 10);
    assert_eq!(outcome.trace.capacity(), 10, "room reserved once, exactly");
    assert_eq!(outcome.trace_overflow_ios, 0);
}

#[test]
fn every_verified_write_carries_fresh_data() {
    use crate::result::VerifyKind;
    use crate::verify::header::BlockFormat;
    use crate::verify::ledger::Ledger;
    use crate::verify::log::VerifyPolicy;
    let flags = Flags::default();
    let mut engine = ScriptedEngine::new(2);
    engine.keep_writes = true;
    let mut verifying = plan("4k", 0, 2, bytes(64 * 4096));
    verifying.verify = Some(WorkerVerify {
        format: BlockFormat::new(VerifyKind::Crc32c, 4096, 0, None),
        run_id: 5,
        ledger: Ledger::new(4096, &[(0, 64 << 20)]).unwrap(),
        ledger_run: 5,
        after_writes: false,
        time_based: false,
        only: false,
        policy: VerifyPolicy::default(),
        state_save: None,
        targets: Vec::new(),
        checks_data: true,
        backlog_writes: None,
        trim: None,
        trim_seed: 0,
    });
    let outcome = run(&mut engine, verifying, &flags);
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(engine.written.len(), 64);
    // Past the 80-byte header, two writes from the same two slots agree only by chance (about
    // one byte in 256); a buffer merely scrambled would keep most of its bytes.
    for pair in engine.written.windows(3) {
        let (first, third) = (&pair[0][80..], &pair[2][80..]);
        let same = first.iter().zip(third).filter(|(a, b)| a == b).count();
        assert!(
            same * 50 < first.len(),
            "{same} of {} bytes repeat",
            first.len()
        );
    }
}

/// Pairs of requests in flight together (submitted, not yet reaped) that overlap.
fn overlaps_in_flight(engine: &ScriptedEngine<'_>, request: &IoRequest) -> usize {
    let end = request.offset + u64::from(request.length);
    engine
        .queued
        .iter()
        .chain(&engine.flushed)
        .filter(|(_, busy)| {
            busy.offset < end && request.offset < busy.offset + u64::from(busy.length)
        })
        .count()
}

#[test]
fn serialize_overlap_keeps_overlapping_ios_out_of_flight_together() {
    // Random 4k-16k reads and writes over 64 KiB at depth 8: overlaps are frequent.
    let plan_over_small_region = |serialize_overlap| {
        let mut workload = base_workload();
        workload.set_simple(&BlockSizeMix::parse("4k/50,16k/50").unwrap(), 50, 100, 4096);
        WorkerPlan {
            planner: FileSetPlanner::single(IoPlanner::new(&workload, 0, 64 << 10, 0, 1)),
            serialize_overlap,
            ..plan("4k", 50, 8, bytes(4 << 20))
        }
    };
    for serialize_overlap in [false, true] {
        let flags = Flags::default();
        let mut engine = ScriptedEngine::new(8);
        engine.count_overlaps = true;
        let outcome = run(
            &mut engine,
            plan_over_small_region(serialize_overlap),
            &flags,
        );
        assert_eq!(outcome.stop_reason, StopReason::Completed);
        if serialize_overlap {
            assert_eq!(engine.overlaps, 0, "an overlapping I/O was issued");
        } else {
            assert!(engine.overlaps > 100, "only {} overlaps", engine.overlaps);
        }
    }
}
