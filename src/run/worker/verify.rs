//! Verification inside a worker: stamping each write with its header, checking each read, and
//! the read-back of every written block once the workload ends (fio's `do_verify`), or in
//! place of the workload (`verify_only`).
//!
//! A time-based job reads back pass by pass, as fio does: when the planner begins a new pass,
//! the worker holds the I/O that began it, lets the I/O in flight complete, and hands out reads
//! of every block the pass that ended wrote ([`VerifyRun::backlog_read`], the hand-out of the
//! verify backlog) before it goes on. Those reads are the job's reads (its figures, latency and
//! live views). What the pass the time cuts short wrote is read back after the workload,
//! outside the measured time (fio leaves it unchecked), so that every block written is
//! checked.
//!
//! Reads of the workload are checked against the worker's [`Ledger`]: a block this worker
//! wrote must hold that write; a block it did not write must hold an intact header or none
//! (never written). The worker never has two overlapping I/Os in flight when one of them is a
//! write (it holds the second until the first completes), so every read has one answer. A
//! write that failed leaves its blocks unknown (counted as not checked).

use crate::engine::{Completion, Engine, EngineError, IoRequest};
use crate::host::clock::Clock;
use crate::result::{Direction, VerificationResult, VerifyTrim};
use crate::run::progress::{LiveVerify, VerifyProgress};
use crate::verify::header::{BlockFormat, Check, Expected};
use crate::verify::ledger::Ledger;
use crate::verify::log::{VerifyLog, VerifyPolicy};
use crate::verify::pass_blocks::{PassBlocks, PassRead};
use crate::verify::state::VerifyState;
use crate::verify::target_identity::TargetIdentity;
use crate::workload::planner::PlannedIo;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// A ledger entry whose write failed: its contents are unknown.
const UNKNOWN: u32 = u32::MAX;
/// A ledger entry of a trimmed block: it must read without a header (never written); a
/// target may also return the old block after a discard, which is then not checked.
const TRIMMED: u32 = u32::MAX - 1;

/// What a worker needs to verify, set up before the clock starts.
pub struct WorkerVerify {
    /// How blocks are stamped and checked.
    pub format: BlockFormat,
    /// This run's id, in every header it writes.
    pub run_id: u64,
    /// The blocks known to be written: empty, or loaded from an earlier run's state.
    pub ledger: Ledger,
    /// The run whose writes the ledger holds (this run, or the loaded state's).
    pub ledger_run: u64,
    /// Read back every written block once the workload ends.
    pub after_writes: bool,
    /// The job runs for a time (fio's `time_based`): with `after_writes` and no backlog, the
    /// writes of each pass are read back when the next pass begins, and none after the
    /// workload.
    pub time_based: bool,
    /// Run no workload: only read back (the ledger's blocks, or the whole region when it is
    /// empty).
    pub only: bool,
    /// Whether a bad block stops the worker.
    pub policy: VerifyPolicy,
    /// Save the ledger here at the end.
    pub state_save: Option<PathBuf>,
    /// The targets the ledger's regions lie on (recorded in a saved state).
    pub targets: Vec<TargetIdentity>,
    /// Whether the engine moves data (not the null engine): otherwise reads are not checked.
    pub checks_data: bool,
    /// Read back the blocks of every this many writes while the workload runs.
    pub backlog_writes: Option<u32>,
    /// Trim a share of the written blocks while the workload runs (fio's `trim_percentage`
    /// with `trim_backlog`).
    pub trim: Option<VerifyTrim>,
    /// Seed of the draw that picks the writes to trim.
    pub trim_seed: u64,
}

/// The writes waiting to be read back (fio's `verify_backlog`), room made before the start
/// for a batch and the writes that complete while it is read back (the queue depth).
struct Backlog {
    every: usize,
    written: std::collections::VecDeque<PlannedIo>,
    /// Reads of the current batch handed out.
    handed: usize,
}

/// Where the read-back of a pass is, in a time-based job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PassStage {
    /// The workload runs; its writes are marked.
    Writing,
    /// A new pass began: its first I/O waits until the I/O in flight has completed.
    Held,
    /// The reads of the pass that ended are handed out.
    Reading,
}

/// The read-back of each pass of a time-based job (fio's `do_verify` after each `do_io`).
struct PassReadBack {
    blocks: PassBlocks,
    stage: PassStage,
}

/// The written blocks picked for trimming (fio's trim list), room made before the start.
struct TrimPicks {
    settings: VerifyTrim,
    rng: fastrand::Rng,
    picked: std::collections::VecDeque<PlannedIo>,
    /// Writes completed since the last batch began.
    writes_since: u32,
    /// Trims of the current batch still to hand out.
    batch_left: u32,
}

impl TrimPicks {
    /// Most picks kept waiting: two batches and a queue of writes; a pick beyond is dropped
    /// (the block stays written), so that the list never grows on the I/O path.
    fn capacity(settings: VerifyTrim, queue_depth: usize) -> usize {
        2 * settings.batch.max(settings.backlog_writes).max(1) as usize + queue_depth
    }
}

/// Verification while a worker runs.
pub(super) struct VerifyRun {
    setup: WorkerVerify,
    log: VerifyLog,
    next_generation: u32,
    backlog: Option<Backlog>,
    trims: Option<TrimPicks>,
    pass: Option<PassReadBack>,
}

impl VerifyRun {
    /// Verification of a worker with `queue_depth` slots of `buffer_bytes` each.
    pub(super) fn new(setup: WorkerVerify, queue_depth: usize, buffer_bytes: usize) -> Self {
        let log = VerifyLog::new(setup.format.kind(), setup.run_id, setup.policy);
        let backlog = setup.backlog_writes.map(|every| Backlog {
            every: every.max(1) as usize,
            written: std::collections::VecDeque::with_capacity(every.max(1) as usize + queue_depth),
            handed: 0,
        });
        let trims = setup.trim.map(|settings| TrimPicks {
            settings,
            rng: fastrand::Rng::with_seed(setup.trim_seed),
            picked: std::collections::VecDeque::with_capacity(TrimPicks::capacity(
                settings,
                queue_depth,
            )),
            writes_since: 0,
            batch_left: 0,
        });
        let pass = (setup.time_based
            && setup.after_writes
            && !setup.only
            && setup.backlog_writes.is_none())
        .then(|| PassReadBack {
            blocks: PassBlocks::new(&setup.ledger, buffer_bytes),
            stage: PassStage::Writing,
        });
        VerifyRun {
            setup,
            log,
            next_generation: 1,
            backlog,
            trims,
            pass,
        }
    }

    /// Whether a bad block stops the worker.
    pub(super) fn fatal(&self) -> bool {
        self.setup.policy.stop_at_first
    }

    /// Whether the worker runs no workload.
    pub(super) fn only(&self) -> bool {
        self.setup.only
    }

    /// Whether stamping a write fills every byte of it (a verify pattern).
    pub(super) fn writes_pattern(&self) -> bool {
        self.setup.format.has_pattern()
    }

    /// Stamps a write of `buffer` at `offset` of `file` and records it; returns its
    /// generation.
    pub(super) fn stamp(&mut self, buffer: &mut [u8], file: u32, offset: u64) -> u32 {
        let generation = self.next_generation;
        self.next_generation = match generation.wrapping_add(1) {
            0 | UNKNOWN | TRIMMED => 1,
            next => next,
        };
        self.setup
            .format
            .stamp(buffer, offset, self.setup.run_id, u64::from(generation));
        self.setup.ledger_run = self.setup.run_id;
        self.setup
            .ledger
            .record(file, offset, buffer.len() as u64, generation);
        generation
    }

    /// A write completed: it waits in the backlog, when there is one, and is picked for
    /// trimming with the odds asked for (fio's `io_u_should_trim`, when the write is logged).
    pub(super) fn write_completed(&mut self, file: u32, offset: u64, length: u32) {
        let io = PlannedIo {
            direction: Direction::Read,
            offset,
            length,
            pause_after_ns: 0,
            file,
        };
        if let Some(backlog) = &mut self.backlog {
            backlog.written.push_back(io);
        }
        if let Some(pass) = &mut self.pass {
            pass.blocks
                .mark(&self.setup.ledger, file, offset, u64::from(length));
        }
        if let Some(trims) = &mut self.trims {
            trims.writes_since = trims.writes_since.saturating_add(1);
            let capacity = trims.picked.capacity();
            if trims.rng.u8(0..100) < trims.settings.percent && trims.picked.len() < capacity {
                trims.picked.push_back(PlannedIo {
                    direction: Direction::Trim,
                    ..io
                });
            }
        }
    }

    /// The next trim of a picked block: once `trim_backlog` writes have completed since the
    /// last batch, a batch of `trim_backlog_batch` picks is handed out, oldest first (fio's
    /// `check_get_trim`).
    pub(super) fn trim_next(&mut self) -> Option<PlannedIo> {
        let trims = self.trims.as_mut()?;
        if trims.picked.is_empty() {
            trims.batch_left = 0;
            return None;
        }
        if trims.batch_left == 0 {
            if trims.writes_since < trims.settings.backlog_writes.max(1) {
                return None;
            }
            trims.writes_since = 0;
            trims.batch_left = trims.settings.batch.max(1);
        }
        trims.batch_left -= 1;
        trims.picked.pop_front()
    }

    /// Whether writes are read back in batches while the workload runs.
    pub(super) fn has_backlog(&self) -> bool {
        self.backlog.is_some()
    }

    /// Whether the backlog holds its writes and waits to be read back, or the reads of a
    /// pass are being handed out.
    pub(super) fn backlog_ready(&self) -> bool {
        self.backlog.as_ref().is_some_and(|backlog| {
            !backlog.written.is_empty()
                && (backlog.handed > 0 || backlog.written.len() >= backlog.every)
        }) || self
            .pass
            .as_ref()
            .is_some_and(|pass| pass.stage == PassStage::Reading)
    }

    /// The planner began a new pass: when the pass that ended wrote blocks, its first I/O is
    /// to be held until the I/O in flight has completed, then those blocks read back.
    pub(super) fn pass_began(&mut self) {
        if let Some(pass) = &mut self.pass
            && pass.stage == PassStage::Writing
            && !pass.blocks.is_empty()
        {
            pass.stage = PassStage::Held;
        }
    }

    /// Whether the first I/O of a new pass is held for the read-back of the last one.
    pub(super) fn pass_held(&self) -> bool {
        self.pass
            .as_ref()
            .is_some_and(|pass| pass.stage == PassStage::Held)
    }

    /// No I/O is in flight any more: the reads of the pass that ended are handed out next.
    pub(super) fn pass_drained(&mut self) {
        if let Some(pass) = &mut self.pass
            && pass.stage == PassStage::Held
        {
            pass.blocks.rewind();
            pass.stage = PassStage::Reading;
        }
    }

    /// The next read of a pass's read-back, in offset order, or else of the backlog once it
    /// holds its writes; the backlog empties when the last one is handed out, and the pass's
    /// read-back ends with its last read.
    pub(super) fn backlog_read(&mut self) -> Option<PlannedIo> {
        if let Some(pass) = &mut self.pass
            && pass.stage == PassStage::Reading
        {
            let read = pass.blocks.next_read();
            if pass.blocks.is_empty() || read.is_none() {
                pass.stage = PassStage::Writing;
            }
            return read.map(|read| PlannedIo {
                direction: Direction::Read,
                offset: read.offset,
                length: read.length,
                pause_after_ns: 0,
                file: read.file,
            });
        }
        if !self.backlog_ready() {
            return None;
        }
        let backlog = self.backlog.as_mut()?;
        let read = backlog.written.pop_front()?;
        backlog.handed += 1;
        if backlog.handed == backlog.every {
            backlog.handed = 0;
        }
        Some(read)
    }

    /// A trim (discard) of these blocks completed.
    pub(super) fn trimmed(&mut self, file: u32, offset: u64, length: u32) {
        self.setup
            .ledger
            .record(file, offset, u64::from(length), TRIMMED);
    }

    /// A write failed, or two writes in flight shared these blocks: they hold unknown data.
    pub(super) fn write_failed(&mut self, file: u32, offset: u64, length: u32) {
        self.setup
            .ledger
            .record(file, offset, u64::from(length), UNKNOWN);
    }

    /// Checks a read of `buffer` at `offset` of `file` (`target` names it); true when the
    /// worker must stop.
    pub(super) fn check_read(
        &mut self,
        target: &str,
        buffer: &mut [u8],
        file: u32,
        offset: u64,
    ) -> bool {
        let interval = self.setup.format.interval();
        let blocks = buffer.len().div_ceil(interval) as u64;
        if !self.setup.checks_data {
            self.log.skipped(blocks);
            return false;
        }
        let mut stop = false;
        for (index, chunk) in buffer.chunks_mut(interval).enumerate() {
            let at = offset + (index * interval) as u64;
            let expected = match self.setup.ledger.generation(file, at) {
                Some(UNKNOWN) => {
                    self.log.skipped(1);
                    continue;
                }
                Some(TRIMMED) if self.setup.trim.is_some_and(|trim| trim.verify_zero) => {
                    stop |= self.log.checked_trimmed(target, at, chunk);
                    continue;
                }
                Some(TRIMMED) => {
                    match self.setup.format.check(chunk, at, Expected::Unknown) {
                        Check::NoHeader => {
                            self.log
                                .checked(target, at, chunk.len() as u32, Check::NoHeader);
                        }
                        _ => self.log.skipped(1),
                    }
                    continue;
                }
                Some(generation) => Expected::Written {
                    run_id: self.setup.ledger_run,
                    generation: u64::from(generation),
                },
                None => Expected::Unknown,
            };
            let check = self.setup.format.check(chunk, at, expected);
            stop |= self.log.checked(target, at, chunk.len() as u32, check);
        }
        stop
    }

    /// What the checks found so far, for the live views.
    pub(super) fn live(&self) -> LiveVerify {
        LiveVerify::of(self.log.so_far())
    }

    /// Bad blocks so far.
    pub(super) fn mismatch_count(&self) -> u64 {
        self.log.mismatch_count()
    }

    /// Reads back what the worker must check after (or instead of) its workload, saves the
    /// state when asked, and returns what every check found. `read_back` is false when the
    /// workload stopped early (an error, an interrupt): its blocks are then only saved.
    pub(super) fn finish<E: Engine>(
        mut self,
        mut read_back: ReadBack<'_, E>,
        run_pass: bool,
    ) -> (VerificationResult, Option<String>) {
        let clock = read_back.clock;
        let started = clock.now();
        let mut failure = None;
        // A time-based job read its passes back as it went; what the pass the time cut short
        // wrote is read back now, outside the measured time, so that every block written is
        // checked (fio leaves that pass unchecked).
        let wants_pass = self.setup.only || self.setup.after_writes;
        let stopped_at_first = self.setup.policy.stop_at_first && self.mismatch_count() > 0;
        if run_pass
            && wants_pass
            && !stopped_at_first
            && let Err(error) = read_back.run(&mut self)
        {
            failure = Some(error.to_string());
        }
        let verify_ns = clock.nanos_between(started, clock.now());
        if let Some(path) = self.setup.state_save.take()
            && !self.setup.only
            && let Err(error) = (VerifyState {
                run_id: self.setup.run_id,
                ledger: self.setup.ledger,
                targets: self.setup.targets,
            })
            .save(&path)
        {
            failure.get_or_insert(error.to_string());
        }
        (self.log.finish(verify_ns), failure)
    }
}

/// The read-back: the engine, its queue and buffers, and the worker's targets.
pub(super) struct ReadBack<'a, E: Engine> {
    /// The worker's engine.
    pub engine: &'a mut E,
    /// Slots.
    pub queue_depth: usize,
    /// Bytes of a slot's buffer.
    pub buffer_bytes: usize,
    /// The worker's target paths.
    pub targets: &'a [String],
    /// The run's stop flags: the read-back ends when one is raised.
    pub stops: [&'a AtomicBool; 2],
    /// The run's clock.
    pub clock: &'a Clock,
    /// Where the worker publishes its verification counts for the live views.
    pub progress: &'a VerifyProgress,
}

/// One read of the read-back: the same as a read of a pass's read-back.
type Pending = PassRead;

impl<E: Engine> ReadBack<'_, E> {
    /// The reads: runs of consecutive blocks to check (written ones, or every block of the
    /// regions when nothing is known), each at most a buffer long.
    fn reads(verify: &VerifyRun, buffer_bytes: usize) -> Vec<Pending> {
        let ledger = &verify.setup.ledger;
        let interval = ledger.interval;
        let per_read = (buffer_bytes as u64 / interval).max(1);
        let everything = ledger.written_blocks() == 0 && verify.setup.only;
        let mut reads = Vec::new();
        for (file, region) in ledger.regions.iter().enumerate() {
            let mut run: Option<(u64, u64)> = None;
            for (index, generation) in region.generations.iter().enumerate() {
                let wanted = everything || (*generation != 0 && *generation != UNKNOWN);
                let index = index as u64;
                run = match (run, wanted) {
                    (Some((first, count)), true) if first + count == index && count < per_read => {
                        Some((first, count + 1))
                    }
                    (previous, wanted) => {
                        if let Some((first, count)) = previous {
                            reads.push(Pending {
                                file: file as u32,
                                offset: region.start + first * interval,
                                length: (count * interval) as u32,
                            });
                        }
                        wanted.then_some((index, 1))
                    }
                };
            }
            if let Some((first, count)) = run {
                reads.push(Pending {
                    file: file as u32,
                    offset: region.start + first * interval,
                    length: (count * interval) as u32,
                });
            }
        }
        reads
    }

    fn stopped(&self) -> bool {
        self.stops.iter().any(|flag| flag.load(Ordering::Relaxed))
    }

    /// Reads every block to check, `queue_depth` at a time, and checks each.
    fn run(&mut self, verify: &mut VerifyRun) -> Result<(), EngineError> {
        let reads = match verify.pass.as_mut() {
            // A time-based job: the blocks of the pass the time cut short, the others having
            // been read back pass by pass.
            Some(pass) => {
                pass.blocks.rewind();
                std::iter::from_fn(|| pass.blocks.next_read()).collect()
            }
            None => Self::reads(verify, self.buffer_bytes),
        };
        let unknown: u64 = verify
            .setup
            .ledger
            .regions
            .iter()
            .map(|region| region.generations.iter().filter(|g| **g == UNKNOWN).count() as u64)
            .sum();
        verify.log.skipped(unknown);
        let depth = self.queue_depth.max(1);
        let mut slots = vec![Pending::default(); depth];
        let mut free: Vec<u32> = (0..depth as u32).rev().collect();
        let mut completions = vec![Completion::default(); depth];
        let mut next = 0;
        let mut in_flight = 0;
        let mut stop = false;
        while next < reads.len() || in_flight > 0 {
            while !stop && next < reads.len() && !self.stopped() {
                let Some(slot) = free.pop() else { break };
                let read = reads[next];
                next += 1;
                slots[slot as usize] = read;
                if let Err(error) = self.engine.submit(IoRequest {
                    slot,
                    file: read.file,
                    direction: Direction::Read,
                    offset: read.offset,
                    length: read.length,
                }) {
                    free.push(slot);
                    return Err(error);
                }
                in_flight += 1;
            }
            if in_flight == 0 {
                break;
            }
            self.engine.flush()?;
            let reaped = self.engine.reap(1, &mut completions)?;
            for completion in &completions[..reaped] {
                let read = slots[completion.slot as usize];
                free.push(completion.slot);
                in_flight -= 1;
                if let Ok(bytes @ 1..) = u64::try_from(completion.result) {
                    verify.log.read_back(bytes);
                }
                let target = self
                    .targets
                    .get(read.file as usize)
                    .map_or("", String::as_str);
                if stop || completion.result != i64::from(read.length) {
                    // After a fatal bad block the rest is not checked; a failed read is an I/O
                    // error, not a verdict on the data.
                    let blocks = u64::from(read.length).div_ceil(verify.setup.ledger.interval);
                    verify.log.skipped(blocks);
                    continue;
                }
                let buffer =
                    &mut self.engine.buffer_mut(completion.slot as usize)[..read.length as usize];
                stop |= verify.check_read(target, buffer, read.file, read.offset);
                self.progress.publish(verify.live());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{MismatchKind, VerifyKind};

    fn run(fatal: bool) -> VerifyRun {
        VerifyRun::new(
            WorkerVerify {
                format: BlockFormat::new(VerifyKind::Crc32c, 4096, 0, None),
                run_id: 77,
                ledger: Ledger::new(4096, &[(0, 64 * 4096)]).unwrap(),
                ledger_run: 77,
                after_writes: true,
                time_based: false,
                only: false,
                policy: VerifyPolicy {
                    stop_at_first: fatal,
                },
                state_save: None,
                targets: Vec::new(),
                checks_data: true,
                backlog_writes: None,
                trim: None,
                trim_seed: 0,
            },
            4,
            4096,
        )
    }

    #[test]
    fn reads_are_checked_against_the_last_write_and_skipped_when_unknown() {
        let mut verify = run(false);
        let mut first = vec![1u8; 8192];
        verify.stamp(&mut first, 0, 0);
        let mut second = vec![2u8; 4096];
        verify.stamp(&mut second, 0, 4096);
        // Block 1 now holds the second write: the first write's copy of it is stale.
        let mut stale = first.clone();
        assert!(!verify.check_read("t", &mut stale, 0, 0));
        let mut current = second.clone();
        assert!(!verify.check_read("t", &mut current, 0, 4096));
        // A failed write leaves its block unknown.
        verify.write_failed(0, 8192, 4096);
        let mut unknown = vec![0u8; 4096];
        assert!(!verify.check_read("t", &mut unknown, 0, 8192));
        // A block never written by this run, with no header: never written, not bad.
        let mut blank = vec![0u8; 4096];
        assert!(!verify.check_read("t", &mut blank, 0, 12288));
        let result = verify.log.finish(0);
        assert_eq!(result.mismatch_count, 1);
        assert_eq!(result.mismatches[0].offset, 4096);
        assert_eq!(result.mismatches[0].kind, MismatchKind::Stale);
        assert_eq!(result.skipped_blocks, 1);
        assert_eq!(result.never_written_blocks, 1);
        assert_eq!(result.blocks_checked, 2 + 1 + 1);
    }

    #[test]
    fn a_fatal_policy_stops_at_the_first_bad_block() {
        let mut verify = run(true);
        let mut block = vec![0u8; 4096];
        verify.stamp(&mut block, 0, 0);
        block[200] ^= 1;
        assert!(verify.check_read("t", &mut block, 0, 0));
    }
}
