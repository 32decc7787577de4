//! The MPI transport of a multi-client run (built with the `mpi` feature): every rank is one
//! client; rank 0 sends the plan, measures each rank's clock offset, starts every test at one
//! instant, watches the others' heartbeats, and gathers their results.
//!
//! No collective operation is used after start-up: a rank that dies or hangs would leave the
//! others waiting in it for ever. Every exchange is a non-blocking point-to-point message
//! between rank 0 and one rank, waited for with a deadline; a rank silent for
//! [`LOST_AFTER`] while a test runs is lost, and the others stop within that time (the rule,
//! and how it holds on a host where ranks outnumber cores: [`super::silence`]).

use super::assemble::{Assembly, ClientReport, RankDetail, read_sent_result};
use super::backoff::Backoff;
use super::launcher;
pub use super::silence::LOST_AFTER;
use super::silence::{Gathering, ProgressClock};
use super::templates::ClientIdentity;
use crate::host::clock::{Clock, Ticks};
use crate::result::RunResult;
use crate::run::rendezvous::Rendezvous;
use crate::workload::TestPlan;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Longest wait for every rank to open its targets, to be ready for a test's start, and (the
/// other ranks) for rank 0's last word once their results are sent.
pub const ARRIVAL_TIMEOUT: Duration = Duration::from_secs(300);
/// Once rank 0's run has ended, longest wait for the next of the other ranks' results: the
/// wait lasts as long as results keep coming ([`Gathering`]).
pub const RESULT_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest wait for the others' results when the run was stopped by a signal (a signal from
/// the launcher is followed by SIGKILL about a second later).
pub const INTERRUPTED_RESULT_TIMEOUT: Duration = Duration::from_millis(600);
/// Longest wait for the next of the others' results when rank 0 stopped the run because a
/// rank fell silent, before any signal: nobody is about to kill them, and on a loaded host a
/// rank may take more than a second to end its test and send its result.
pub const STOPPED_RESULT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often, at most, a running test asks MPI for news (stops, heartbeats).
const POLL_EVERY: Duration = Duration::from_millis(50);
/// How often a rank sends its heartbeat while a test runs.
const BEAT_EVERY: Duration = Duration::from_millis(500);
/// A rank heard from this lately is alive enough to be told at once that the run stops, when
/// the stop is not a signal's (a rank that died then was silent for longer: 3 s for a lost one).
const FRESH: Duration = Duration::from_millis(600);
/// How far after rank 0's stop, beyond the clock offset's error, a heartbeat must have been
/// sent to prove its rank alive after the stop, ns.
const ALIVE_MARGIN_NS: i64 = 20_000_000;
/// Round trips measured per rank for its clock offset (the fastest is kept).
const CLOCK_ROUNDS: usize = 8;
/// How far ahead of the instant rank 0 picks the start lies, beyond the slowest round trip.
const START_MARGIN_NS: i64 = 20_000_000;
/// How long a rank that ends cleanly reads the messages still coming before MPI is finalised.
const DRAIN_FOR: Duration = Duration::from_millis(100);
/// The one MPI tag iopath's messages use.
const TAG: i32 = 0x10_9a;

/// Why a multi-client run cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// MPI could not be started.
    #[error("MPI could not be initialised")]
    Init,
    /// Rank 0 called the run off before any I/O (its message was printed by rank 0).
    #[error("rank 0 called the run off: {message}")]
    CalledOff {
        /// Exit status rank 0 chose.
        status: i32,
        /// Why.
        message: String,
    },
    /// Ranks failed before any I/O (their hosts and messages).
    #[error("{}", .failures.iter().map(|(rank, host, message)| format!("rank {rank} on {host}: {message}")).collect::<Vec<_>>().join("\n"))]
    RanksFailed {
        /// Whether every failure is the user's input (exit 2).
        bad_input: bool,
        /// (rank, host, message) of each.
        failures: Vec<(u32, String, String)>,
    },
    /// A rank did not answer in time.
    #[error("rank {rank} did not answer within {:.0} s while {what}", waited.as_secs_f64())]
    Silent {
        /// The rank.
        rank: u32,
        /// What was waited for.
        what: &'static str,
        /// How long.
        waited: Duration,
    },
    /// A message could not be read.
    #[error("a message from rank {rank} could not be read: {reason}")]
    Garbled {
        /// The sender.
        rank: u32,
        /// Why.
        reason: String,
    },
}

/// Time a rank spent in the rendezvous's polls while its tests ran (messages in and out).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct SyncCost {
    poll_ns: u64,
    polls: u64,
}

/// How a rank's part of the run ends.
#[derive(Debug)]
pub enum Finished {
    /// Rank 0: the run of every client, merged.
    Merged(Box<RunResult>),
    /// Another rank: exit with this status (rank 0's word).
    Exit(i32),
}

/// What the ranks tell each other.
#[derive(Debug, Serialize, Deserialize)]
enum Message {
    /// 0 → k: the plan every rank runs.
    Plan(Vec<TestPlan>),
    /// 0 → k: stop before any I/O, with this exit status.
    CallOff { status: i32, message: String },
    /// k → 0: targets opened (or why not).
    Ready {
        host: String,
        local_rank: u32,
        failure: Option<(bool, String)>,
    },
    /// 0 → k: a clock probe sent at rank 0's wall time (ns).
    Ping(i64),
    /// k → 0: the probe's time and the rank's wall time on receipt.
    Pong(i64, i64),
    /// 0 → k: every rank is ready; go on.
    Go,
    /// k → 0: ready to start test `index`.
    Arrived(u32),
    /// 0 → k: start test `index` at this wall time of the receiving rank (ns).
    Start { index: u32, at_ns: i64 },
    /// k → 0: alive at its wall time `sent_ns`, with its totals so far in the running test.
    Beat {
        sent_ns: i64,
        bytes: u64,
        io_count: u64,
    },
    /// Either way: stop the run now (why).
    Stop(String),
    /// k → 0: the rank's result (JSON of its RunResult), or why it has none, and the time it
    /// spent meeting the others while its tests ran.
    Result {
        result: Result<String, String>,
        sync: SyncCost,
    },
    /// 0 → k: the run is over; exit with this status (and whether a rank was lost).
    Done(i32, bool),
}

/// This process's wall clock, ns since the epoch.
fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as i64)
}

/// What rank 0 keeps of each other rank.
#[derive(Debug, Default)]
struct Peer {
    host: String,
    local_rank: u32,
    offset_ns: i64,
    uncertainty_ns: u64,
    last_heard: Option<Instant>,
    /// Rank 0's [`ProgressClock`] when it was last heard from.
    heard_progress: Option<Duration>,
    arrived: Option<u32>,
    /// Its result as sent, until rank 0 folds it into the merged run (at once while rank 0
    /// gathers the results; kept until then when it came earlier).
    result: Option<Result<String, String>>,
    /// It sent its result (kept once `result` is taken).
    reported: bool,
    /// It was taken into the merged run (its result, or that it was lost).
    folded: bool,
    /// Its time in the rendezvous's polls.
    sync: SyncCost,
    lost: Option<String>,
    /// The run was stopped and this rank has not been told yet (it is told when next heard).
    stop_owed: bool,
}

/// A send not yet known to be complete, with the buffer it reads.
struct PendingSend {
    request: Request<'static, [u8], StaticScope>,
    /// The buffer, leaked for the send, freed once the send is complete; `None` for a
    /// buffer several sends share (the plan, sent once to every rank), which lives for the
    /// process.
    free_when_done: Option<&'static [u8]>,
}

/// One rank of a multi-client run over MPI.
pub struct MpiSession {
    universe: Option<mpi::environment::Universe>,
    world: SimpleCommunicator,
    identity: ClientIdentity,
    launcher: String,
    /// Sends not yet known to be complete.
    sending: Vec<PendingSend>,
    /// Rank 0: every rank's state (index = rank; its own entry unused).
    peers: Vec<Peer>,
    /// Rank k: messages from rank 0 not yet consumed.
    inbox: Vec<Message>,
    /// Why the run was stopped from outside (a lost rank, a stop elsewhere).
    stopped: Option<String>,
    /// Rank 0: its wall time when it stopped the run, ns.
    stopped_at_ns: i64,
    /// Rank 0 stopped the run because a rank fell silent, before any signal or other stop:
    /// nobody is about to kill the ranks left, so their results are waited for longer.
    stopped_for_silence: bool,
    /// Tests started so far.
    tests_started: u32,
    last_beat: Option<Instant>,
    /// Rank 0: the largest round trip of the clock probes, ns.
    slowest_round_trip_ns: i64,
    /// Rank 0: the results were gathered (the others wait for its last word).
    gathered: bool,
    /// Rank k: rank 0's last word came, and no rank was lost (MPI can be finalised).
    clean_end: bool,
    /// This rank's time in the rendezvous's polls.
    sync: SyncCost,
    /// When the rendezvous last asked MPI for news while a test ran.
    last_poll: Option<Instant>,
    /// Rank 0: its time as far as it got to watch the others (silence is measured on it).
    progress: ProgressClock,
    /// Rank 0, while it gathers the results: the merged run so far, each result folded in
    /// as it comes (so that rank 0 holds a summary per rank, not every rank's result).
    assembly: Option<Assembly>,
    /// Rank 0: time spent folding results into `assembly`, ns.
    folding_ns: u64,
}

impl MpiSession {
    /// Starts MPI and finds who this rank is (its host, its rank on that host). Collective:
    /// every rank calls it at start-up.
    pub fn start() -> Result<Self, ClusterError> {
        let (universe, _) =
            mpi::initialize_with_threading(mpi::Threading::Funneled).ok_or(ClusterError::Init)?;
        let world = universe.world();
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "unknown".into());
        let identity = ClientIdentity {
            rank: world.rank() as u32,
            size: world.size() as u32,
            // Not asked of MPI: a collective operation would connect every rank to every
            // other, and a rank that died would then break ranks that never talk to it.
            local_rank: launcher::local_rank().unwrap_or(0),
            host,
        };
        let launcher = mpi::environment::library_version()
            .map(|version| launcher::library_name(&version))
            .unwrap_or_else(|_| "MPI".into());
        let peers = (0..identity.size).map(|_| Peer::default()).collect();
        Ok(MpiSession {
            universe: Some(universe),
            world,
            identity,
            launcher,
            sending: Vec::new(),
            peers,
            inbox: Vec::new(),
            stopped: None,
            stopped_at_ns: 0,
            stopped_for_silence: false,
            tests_started: 0,
            last_beat: None,
            slowest_round_trip_ns: 0,
            gathered: false,
            clean_end: false,
            sync: SyncCost::default(),
            last_poll: None,
            progress: ProgressClock::new(Instant::now()),
            assembly: None,
            folding_ns: 0,
        })
    }

    /// Who this rank is.
    pub fn identity(&self) -> &ClientIdentity {
        &self.identity
    }

    /// Whether this is rank 0, the one that prints and writes the outputs.
    pub fn is_root(&self) -> bool {
        self.identity.rank == 0
    }

    /// Why the run was stopped from outside, if it was.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    fn send(&mut self, to: u32, message: &Message) {
        let bytes: &'static [u8] = match serde_json::to_vec(message) {
            Ok(bytes) => Box::leak(bytes.into_boxed_slice()),
            Err(_) => return,
        };
        self.send_bytes(to, bytes, true);
    }

    /// Sends `message` to each of `ranks`, serialised once into one buffer they share (kept
    /// for the process: one, not one per rank).
    fn send_to_each(&mut self, ranks: std::ops::Range<u32>, message: &Message) {
        let bytes: &'static [u8] = match serde_json::to_vec(message) {
            Ok(bytes) => Box::leak(bytes.into_boxed_slice()),
            Err(_) => return,
        };
        for rank in ranks {
            self.send_bytes(rank, bytes, false);
        }
    }

    /// Starts sending `bytes` (leaked for it) to `to`; `owned`: the buffer is this send's
    /// alone and is freed when the send is complete.
    fn send_bytes(&mut self, to: u32, bytes: &'static [u8], owned: bool) {
        let request = self
            .world
            .process_at_rank(to as i32)
            .immediate_send_with_tag(StaticScope, bytes, TAG);
        self.sending.push(PendingSend {
            request,
            free_when_done: owned.then_some(bytes),
        });
        self.progress_sends();
    }

    /// Completes the sends that are done, freeing their own buffers; the others stay pending.
    fn progress_sends(&mut self) {
        let pending = std::mem::take(&mut self.sending);
        for PendingSend {
            request,
            free_when_done,
        } in pending
        {
            match request.test() {
                Ok(_) => {
                    if let Some(bytes) = free_when_done {
                        let bytes = std::ptr::from_ref(bytes).cast_mut();
                        // SAFETY: `bytes` came from `Box::leak` in `send` and only this send
                        // read it; the send is complete, so MPI reads it no more and nothing
                        // else refers to it.
                        drop(unsafe { Box::from_raw(bytes) });
                    }
                }
                Err(request) => self.sending.push(PendingSend {
                    request,
                    free_when_done,
                }),
            }
        }
    }

    /// Every message waiting, with its sender.
    fn receive_all(&mut self) -> Result<Vec<(u32, Message)>, ClusterError> {
        self.progress_sends();
        let mut received = Vec::new();
        while let Some(message) = self.receive_one()? {
            received.push(message);
        }
        Ok(received)
    }

    /// The next message waiting, with its sender.
    fn receive_one(&mut self) -> Result<Option<(u32, Message)>, ClusterError> {
        let Some(probed) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(TAG)
        else {
            return Ok(None);
        };
        let (bytes, status): (Vec<u8>, _) = probed.matched_receive_vec();
        let rank = status.source_rank() as u32;
        let message = serde_json::from_slice(&bytes).map_err(|error| ClusterError::Garbled {
            rank,
            reason: error.to_string(),
        })?;
        Ok(Some((rank, message)))
    }

    /// Rank 0, while it gathers the results: folds rank `rank` (not 0) into the merged run,
    /// its result read from its message and dropped, or as lost.
    fn fold_rank(&mut self, rank: u32) {
        let Some(assembly) = &mut self.assembly else {
            return;
        };
        let peer = &mut self.peers[rank as usize];
        if peer.folded {
            return;
        }
        let folding = Instant::now();
        peer.folded = true;
        let mut lost = peer.lost.clone();
        let result = read_sent_result(peer.result.take(), &mut lost);
        assembly.add(ClientReport {
            rank,
            host: peer.host.clone(),
            local_rank: peer.local_rank,
            clock_offset_ns: peer.offset_ns,
            clock_uncertainty_ns: peer.uncertainty_ns,
            sync_poll_ns: peer.sync.poll_ns,
            sync_polls: peer.sync.polls,
            result,
            lost,
        });
        self.folding_ns += folding.elapsed().as_nanos() as u64;
    }

    /// Rank 0: folds the result rank `rank` just sent, when the results are being gathered
    /// (before, it waits in its message).
    fn fold_result(&mut self, rank: u32) {
        if rank != 0 {
            self.fold_rank(rank);
        }
    }

    /// Rank 0: takes in what the others sent (heartbeats, arrivals, results, stops); how many
    /// messages came.
    fn pump_root(&mut self) -> Result<usize, ClusterError> {
        self.progress_sends();
        let mut count = 0;
        let progress = self.progress.look(Instant::now());
        // One message at a time: a result is folded and dropped before the next is read.
        while let Some((rank, message)) = self.receive_one()? {
            count += 1;
            let now = Instant::now();
            let peer = &mut self.peers[rank as usize];
            peer.last_heard = Some(now);
            peer.heard_progress = Some(progress);
            if let Message::Beat { sent_ns, .. } = message
                && peer.stop_owed
                && peer.lost.is_none()
                && sent_ns - peer.offset_ns
                    > self.stopped_at_ns + peer.uncertainty_ns as i64 + ALIVE_MARGIN_NS
            {
                // It was alive after the stop: it can be told.
                peer.stop_owed = false;
                if let Some(reason) = self.stopped.clone() {
                    self.send(rank, &Message::Stop(reason));
                }
            }
            let peer = &mut self.peers[rank as usize];
            match message {
                Message::Arrived(index) => peer.arrived = Some(index),
                Message::Result { result, sync } => {
                    peer.result = Some(result);
                    peer.sync = sync;
                    peer.reported = true;
                    self.fold_result(rank);
                }
                Message::Stop(reason) => {
                    let reason = format!("rank {rank} on {} stopped: {reason}", peer.host);
                    self.stop_everyone(&reason, true);
                }
                // Heartbeats only say the rank is alive; late clock answers are not needed.
                _ => {}
            }
        }
        Ok(count)
    }

    /// Rank k: takes in what rank 0 sent, answering clock probes at once; how many messages
    /// came.
    fn pump_rank(&mut self) -> Result<usize, ClusterError> {
        self.beat(0, 0);
        let received = self.receive_all()?;
        let count = received.len();
        for (_, message) in received {
            match message {
                Message::Ping(sent) => self.send(0, &Message::Pong(sent, wall_ns())),
                Message::Stop(reason) => {
                    self.stopped.get_or_insert(reason);
                }
                other => self.inbox.push(other),
            }
        }
        Ok(count)
    }

    /// Rank 0: stops every rank still running (once). A rank that died may not be sent
    /// anything: Open MPI connects anew to send, and a connection that fails aborts the sender
    /// (its `ob1` layer calls `ompi_rte_abort` whatever the communicator's error handler),
    /// which would lose the partial result. So a rank is told when a heartbeat it sent after
    /// the stop comes (its clock offset accounted for); with `at_once`, a rank heard from
    /// within [`FRESH`] is told at once — not when a signal stopped the run: the launcher
    /// signals the ranks within milliseconds of a death, when the dead rank may still seem
    /// fresh (and signals every rank, so every rank stops on its own anyway).
    fn stop_everyone(&mut self, reason: &str, at_once: bool) {
        if self.stopped.is_some() {
            return;
        }
        self.stopped = Some(reason.to_string());
        self.stopped_at_ns = wall_ns();
        for rank in 1..self.identity.size {
            let peer = &mut self.peers[rank as usize];
            if peer.lost.is_some() {
                continue;
            }
            if at_once && peer.last_heard.is_none_or(|heard| heard.elapsed() <= FRESH) {
                self.send(rank, &Message::Stop(reason.to_string()));
            } else {
                peer.stop_owed = true;
            }
        }
    }

    /// Rank k: waits for a message from rank 0 that `pick` takes, pumping meanwhile.
    fn wait_for<T>(
        &mut self,
        what: &'static str,
        timeout: Duration,
        mut pick: impl FnMut(&Message) -> Option<T>,
    ) -> Result<T, ClusterError> {
        let deadline = Instant::now() + timeout;
        let mut backoff = Backoff::new();
        loop {
            let heard = self.pump_rank()? > 0;
            if let Some(position) = self.inbox.iter().position(|m| pick(m).is_some()) {
                let message = self.inbox.remove(position);
                if let Some(found) = pick(&message) {
                    return Ok(found);
                }
            }
            if let Some(position) = self
                .inbox
                .iter()
                .position(|m| matches!(m, Message::CallOff { .. }))
                && let Message::CallOff { status, message } = self.inbox.remove(position)
            {
                // Every rank is there, and ends now: MPI ends cleanly.
                self.clean_end = true;
                return Err(ClusterError::CalledOff { status, message });
            }
            if Instant::now() >= deadline {
                return Err(ClusterError::Silent {
                    rank: 0,
                    what,
                    waited: timeout,
                });
            }
            backoff.wait(heard);
        }
    }

    /// The plan every rank runs: rank 0 sends its own (`Ok`) or calls the run off (`Err`:
    /// the exit status and message, which rank 0 prints); the others receive rank 0's.
    pub fn share_plan(
        &mut self,
        own: Result<Vec<TestPlan>, (i32, String)>,
    ) -> Result<Vec<TestPlan>, ClusterError> {
        if self.is_root() {
            match own {
                Ok(tests) => {
                    self.send_to_each(1..self.identity.size, &Message::Plan(tests.clone()));
                    Ok(tests)
                }
                Err((status, message)) => {
                    self.call_off(status, &message);
                    Err(ClusterError::CalledOff { status, message })
                }
            }
        } else {
            self.wait_for(
                "sending the plan",
                ARRIVAL_TIMEOUT,
                |message| match message {
                    Message::Plan(tests) => Some(tests.clone()),
                    _ => None,
                },
            )
        }
    }

    /// Rank 0: tells every rank to exit with `status` before any I/O.
    pub fn call_off(&mut self, status: i32, message: &str) {
        for rank in 1..self.identity.size {
            self.send(
                rank,
                &Message::CallOff {
                    status,
                    message: message.to_string(),
                },
            );
        }
        self.flush(Duration::from_secs(2));
    }

    /// Every rank says whether it opened its targets (`failure`: whether it is bad input, and
    /// the message). Rank 0 gathers them, measures each rank's clock offset and lets every rank
    /// go on, or calls the run off naming each failed rank's host; the others wait for its word.
    pub fn agree_ready(&mut self, failure: Option<(bool, String)>) -> Result<(), ClusterError> {
        if !self.is_root() {
            let ready = Message::Ready {
                host: self.identity.host.clone(),
                local_rank: self.identity.local_rank,
                failure,
            };
            self.send(0, &ready);
            return self.wait_for("checking every target", ARRIVAL_TIMEOUT, |message| {
                matches!(message, Message::Go).then_some(())
            });
        }
        let mut failures = Vec::new();
        if let Some((bad_input, message)) = failure {
            failures.push((bad_input, 0, self.identity.host.clone(), message));
        }
        self.peers[0].host = self.identity.host.clone();
        self.peers[0].local_rank = self.identity.local_rank;
        let mut ready = vec![false; self.identity.size as usize];
        ready[0] = true;
        let deadline = Instant::now() + ARRIVAL_TIMEOUT;
        let mut backoff = Backoff::new();
        while ready.iter().any(|r| !r) {
            self.progress_sends();
            let received = self.receive_all()?;
            let heard = !received.is_empty();
            for (rank, message) in received {
                if let Message::Ready {
                    host,
                    local_rank,
                    failure,
                } = message
                {
                    ready[rank as usize] = true;
                    if let Some((bad_input, message)) = failure {
                        failures.push((bad_input, rank, host.clone(), message));
                    }
                    let peer = &mut self.peers[rank as usize];
                    peer.host = host;
                    peer.local_rank = local_rank;
                }
            }
            if Instant::now() >= deadline {
                let rank = ready.iter().position(|r| !r).unwrap_or(0) as u32;
                let error = ClusterError::Silent {
                    rank,
                    what: "checking its targets",
                    waited: ARRIVAL_TIMEOUT,
                };
                self.call_off(1, &error.to_string());
                return Err(error);
            }
            backoff.wait(heard);
        }
        if !failures.is_empty() {
            failures.sort_by_key(|(_, rank, _, _)| *rank);
            let error = ClusterError::RanksFailed {
                bad_input: failures.iter().all(|(bad, ..)| *bad),
                failures: failures
                    .into_iter()
                    .map(|(_, rank, host, message)| (rank, host, message))
                    .collect(),
            };
            let status = if matches!(
                &error,
                ClusterError::RanksFailed {
                    bad_input: true,
                    ..
                }
            ) {
                2
            } else {
                1
            };
            self.call_off(status, &error.to_string());
            return Err(error);
        }
        for rank in 1..self.identity.size {
            self.measure_clock(rank)?;
        }
        for rank in 1..self.identity.size {
            self.send(rank, &Message::Go);
        }
        Ok(())
    }

    /// Rank 0: the offset of `rank`'s wall clock from its own, from the fastest of
    /// [`CLOCK_ROUNDS`] round trips (Cristian's method: the rank read its clock half-way).
    fn measure_clock(&mut self, rank: u32) -> Result<(), ClusterError> {
        let mut best: Option<(i64, i64)> = None;
        for _ in 0..CLOCK_ROUNDS {
            let sent = wall_ns();
            self.send(rank, &Message::Ping(sent));
            let deadline = Instant::now() + Duration::from_secs(5);
            let theirs = loop {
                self.progress_sends();
                let answer =
                    self.receive_all()?
                        .into_iter()
                        .find_map(|(from, message)| match message {
                            Message::Pong(probe, theirs) if from == rank && probe == sent => {
                                Some(theirs)
                            }
                            _ => None,
                        });
                if let Some(theirs) = answer {
                    break theirs;
                }
                if Instant::now() >= deadline {
                    return Err(ClusterError::Silent {
                        rank,
                        what: "measuring its clock",
                        waited: Duration::from_secs(5),
                    });
                }
            };
            let received = wall_ns();
            let round_trip = received - sent;
            let offset = theirs - (sent + received) / 2;
            if best.is_none_or(|(trip, _)| round_trip < trip) {
                best = Some((round_trip, offset));
            }
        }
        if let Some((round_trip, offset)) = best {
            let peer = &mut self.peers[rank as usize];
            peer.offset_ns = offset;
            peer.uncertainty_ns = (round_trip / 2).max(0) as u64;
            self.slowest_round_trip_ns = self.slowest_round_trip_ns.max(round_trip);
        }
        Ok(())
    }

    /// The local instant (a reading of `clock`) of this process's wall time `at_ns`.
    fn local_instant(clock: &Clock, at_ns: i64) -> Ticks {
        let now = clock.now();
        let ahead = at_ns - wall_ns();
        now + clock.ticks_for_nanos(ahead.max(0) as u64)
    }

    fn start_root(&mut self, clock: &Clock) -> Result<Ticks, String> {
        let index = self.tests_started;
        let deadline = Instant::now() + ARRIVAL_TIMEOUT;
        let mut backoff = Backoff::new();
        loop {
            let heard = self.pump_root().map_err(|e| e.to_string())? > 0;
            if let Some(reason) = &self.stopped {
                return Err(reason.clone());
            }
            let waiting = (1..self.identity.size).find(|&rank| {
                let peer = &self.peers[rank as usize];
                peer.lost.is_none() && peer.arrived != Some(index)
            });
            let Some(rank) = waiting else { break };
            if let Some(Err(reason)) = &self.peers[rank as usize].result {
                let reason = format!(
                    "rank {rank} on {} failed: {reason}",
                    self.peers[rank as usize].host
                );
                self.stop_everyone(&reason, true);
                return Err(reason);
            }
            if Instant::now() >= deadline {
                let reason = format!(
                    "rank {rank} on {} was not ready within {} s",
                    self.peers[rank as usize].host,
                    ARRIVAL_TIMEOUT.as_secs()
                );
                self.stop_everyone(&reason, true);
                return Err(reason);
            }
            backoff.wait(heard);
        }
        // A rank waiting for the start looks at most a pause of the back-off apart.
        let at_ns = wall_ns()
            + START_MARGIN_NS
            + self.slowest_round_trip_ns
            + Backoff::LONGEST.as_nanos() as i64;
        for rank in 1..self.identity.size {
            let offset = self.peers[rank as usize].offset_ns;
            self.send(
                rank,
                &Message::Start {
                    index,
                    at_ns: at_ns + offset,
                },
            );
            self.peers[rank as usize].last_heard = Some(Instant::now());
            self.peers[rank as usize].heard_progress = Some(self.progress.reading());
        }
        Ok(Self::local_instant(clock, at_ns))
    }

    fn start_rank(&mut self, clock: &Clock) -> Result<Ticks, String> {
        let index = self.tests_started;
        self.send(0, &Message::Arrived(index));
        let deadline = Instant::now() + ARRIVAL_TIMEOUT;
        let mut backoff = Backoff::new();
        loop {
            let heard = self.pump_rank().map_err(|e| e.to_string())? > 0;
            if let Some(reason) = &self.stopped {
                return Err(reason.clone());
            }
            let start = self.inbox.iter().position(
                |message| matches!(message, Message::Start { index: i, .. } if *i == index),
            );
            if let Some(position) = start
                && let Message::Start { at_ns, .. } = self.inbox.remove(position)
            {
                return Ok(Self::local_instant(clock, at_ns));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "rank 0 did not start the test within {} s",
                    ARRIVAL_TIMEOUT.as_secs()
                ));
            }
            backoff.wait(heard);
        }
    }

    /// Rank 0: the ranks silent for longer than [`LOST_AFTER`] become lost, and stop the run.
    fn check_silence(&mut self) {
        self.check_silence_after(LOST_AFTER);
    }

    /// Rank 0: the ranks silent for longer than `silence` on its [`ProgressClock`] become
    /// lost, and stop the run.
    fn check_silence_after(&mut self, silence: Duration) {
        let now = self.progress.look(Instant::now());
        for rank in 1..self.identity.size {
            let peer = &self.peers[rank as usize];
            if peer.lost.is_some() || peer.reported {
                continue;
            }
            if peer
                .heard_progress
                .is_some_and(|heard| now.saturating_sub(heard) > silence)
            {
                let reason = format!(
                    "no word from it for {:.1} s (it died or hangs)",
                    silence.as_secs_f64()
                );
                let host = peer.host.clone();
                self.peers[rank as usize].lost = Some(reason.clone());
                self.stopped_for_silence |= self.stopped.is_none();
                self.stop_everyone(&format!("rank {rank} on {host} was lost: {reason}"), true);
            }
        }
    }

    /// Ends this rank's part. Rank k sends its result (`own`: the run, or why there is none),
    /// says why it stopped when it did so on its own, and returns the exit status rank 0
    /// chose. Rank 0 gathers every rank's result (waiting while they keep coming, at most
    /// [`RESULT_TIMEOUT`] for the next; a rank that has not reported by then is lost) and
    /// returns the merged run,
    /// keeping `detail` of each rank; it reads and merges one rank's result at a time.
    pub fn finish(
        &mut self,
        own: Result<RunResult, String>,
        interrupted: bool,
        detail: RankDetail,
    ) -> Result<Finished, ClusterError> {
        if !self.is_root() {
            if interrupted && self.stopped.is_none() {
                self.send(0, &Message::Stop("interrupted".into()));
            }
            let json = own.and_then(|run| serde_json::to_string(&run).map_err(|e| e.to_string()));
            let sync = self.sync;
            self.send(0, &Message::Result { result: json, sync });
            let status =
                // Rank 0 gathers as long as results keep coming, then merges and writes.
                self.wait_for("gathering the results", ARRIVAL_TIMEOUT, |m| match m {
                    Message::Done(status, lost) => Some((*status, *lost)),
                    _ => None,
                })?;
            let (status, lost) = status;
            self.clean_end = !lost;
            return Ok(Finished::Exit(status));
        }
        let own = match own {
            Ok(run) => run,
            Err(reason) => {
                self.stop_everyone(&format!("rank 0 failed: {reason}"), true);
                return Err(ClusterError::RanksFailed {
                    bad_input: false,
                    failures: vec![(0, self.identity.host.clone(), reason)],
                });
            }
        };
        if interrupted {
            self.stop_everyone("rank 0 was interrupted", false);
        }
        self.gathered = true;
        let gather_began = Instant::now();
        // Rank 0 first (the merged tests take their names and first errors from it), then
        // the results that came before rank 0's run ended, then each as it comes.
        let mut assembly = Assembly::new(detail);
        assembly.add(ClientReport {
            rank: 0,
            host: self.identity.host.clone(),
            local_rank: self.identity.local_rank,
            clock_offset_ns: self.peers[0].offset_ns,
            clock_uncertainty_ns: self.peers[0].uncertainty_ns,
            sync_poll_ns: self.sync.poll_ns,
            sync_polls: self.sync.polls,
            result: Some(own.clone()),
            lost: None,
        });
        self.assembly = Some(assembly);
        self.folding_ns = 0;
        for rank in 1..self.identity.size {
            if self.peers[rank as usize].reported {
                self.fold_rank(rank);
            }
        }
        // Interrupted (Ctrl-C on mpirun signals every rank, and kills them a moment later),
        // the others' results come at once or not at all, and a rank silent for a second is
        // the dead one. Otherwise the others are alive and finishing their tests, which they
        // do without a heartbeat (merging, analysing, serialising: on a crowded host as long
        // as rank 0 took): they are waited for as long as results keep coming.
        let (wait, silence) = if self.stopped_for_silence {
            (STOPPED_RESULT_TIMEOUT, None)
        } else if interrupted || self.stopped.is_some() {
            (INTERRUPTED_RESULT_TIMEOUT, Some(BEAT_EVERY * 2))
        } else {
            (RESULT_TIMEOUT, None)
        };
        let mut gathering = Gathering::new(Instant::now(), wait);
        let mut backoff = Backoff::new();
        let mut reported = self.peers.iter().filter(|peer| peer.reported).count();
        loop {
            let heard = self.pump_root()? > 0;
            let now_reported = self.peers.iter().filter(|peer| peer.reported).count();
            if now_reported > reported && silence.is_none() {
                gathering.result_came(Instant::now());
            }
            reported = now_reported;
            if let Some(silence) = silence {
                self.check_silence_after(silence);
            }
            let missing = (1..self.identity.size).find(|&rank| {
                let peer = &self.peers[rank as usize];
                peer.lost.is_none() && !peer.reported
            });
            let Some(rank) = missing else { break };
            if gathering.over(Instant::now()) {
                self.peers[rank as usize].lost = Some(format!(
                    "its result did not come: no result came for {:.1} s",
                    gathering.wait().as_secs_f64()
                ));
            }
            backoff.wait(heard);
        }
        // Folding the results as they came is merge time, not waiting.
        let folded_ns = self.folding_ns;
        let gather_ns = (gather_began.elapsed().as_nanos() as u64).saturating_sub(folded_ns);
        let merge_began = Instant::now();
        // The ranks that sent nothing: lost.
        for rank in 1..self.identity.size {
            self.fold_rank(rank);
        }
        let assembly = self.assembly.take().expect("made above");
        let mut merged = assembly.finish(own, self.launcher.clone());
        if let Some(cluster) = &mut merged.cluster {
            cluster.gather_ns = gather_ns;
            cluster.merge_ns = folded_ns + merge_began.elapsed().as_nanos() as u64;
        }
        Ok(Finished::Merged(Box::new(merged)))
    }

    /// Rank 0: tells every rank still there to exit with `status`.
    pub fn done(&mut self, status: i32) {
        if !self.gathered {
            return;
        }
        for rank in 1..self.identity.size {
            // Every rank that reported waits for this word.
            if self.peers[rank as usize].lost.is_none() && self.peers[rank as usize].reported {
                let lost = self.lost_any();
                self.send(rank, &Message::Done(status, lost));
            }
        }
        self.flush(Duration::from_secs(2));
    }

    /// Waits up to `timeout` for the pending sends.
    fn flush(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.sending.is_empty() && Instant::now() < deadline {
            self.progress_sends();
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Whether any rank was lost (MPI cannot then be finalised: it would wait for it).
    pub fn lost_any(&self) -> bool {
        self.peers.iter().any(|peer| peer.lost.is_some())
    }

    /// Ends MPI: finalised when every rank is there and every send completed; otherwise left
    /// as it is (finalising would wait for the lost rank), and rank 0 then aborts the MPI job
    /// with status 1, so that the launcher ends every rank left and exits. A rank called off
    /// before any I/O also finalises.
    pub fn end(mut self) {
        self.flush(Duration::from_secs(2));
        let clean = self.sending.is_empty()
            && if self.is_root() {
                !self.lost_any()
            } else {
                self.clean_end
            };
        let universe = self.universe.take();
        // Pending requests must not be dropped (MPI may still write their status).
        std::mem::forget(std::mem::take(&mut self.sending));
        if clean {
            // Heartbeats sent before rank 0's last word are read, not left to the MPI library
            // to warn about at the end (MPICH's UCX layer does).
            let deadline = Instant::now() + DRAIN_FOR;
            while Instant::now() < deadline {
                let _ = self.receive_all();
                std::thread::sleep(Duration::from_millis(1));
            }
            drop(universe);
        } else if self.is_root() && self.lost_any() {
            // The result is written; the launcher ends every rank left (a lost one may hang)
            // and exits with rank 0's status for a lost rank.
            self.world.abort(1);
        } else {
            std::mem::forget(universe);
        }
    }
}

impl MpiSession {
    /// Rank k: a heartbeat to rank 0 when the last is [`BEAT_EVERY`] old (only once the first
    /// test has started: rank 0 listens for them from then on).
    fn beat(&mut self, bytes: u64, io_count: u64) {
        if self.is_root() || self.tests_started == 0 {
            return;
        }
        if self
            .last_beat
            .is_none_or(|beat| beat.elapsed() >= BEAT_EVERY)
        {
            self.last_beat = Some(Instant::now());
            let beat = Message::Beat {
                sent_ns: wall_ns(),
                bytes,
                io_count,
            };
            self.send(0, &beat);
        }
    }
}

impl Rendezvous for MpiSession {
    fn start_together(&mut self, clock: &Clock) -> Result<Ticks, String> {
        let started = if self.is_root() {
            self.start_root(clock)
        } else {
            self.start_rank(clock)
        };
        self.tests_started += 1;
        // The first heartbeat goes at the test's first poll: rank 0 hears at once that the
        // start came.
        self.last_beat = None;
        started
    }

    fn poll(&mut self, elapsed_ns: u64, bytes: u64, io_count: u64) -> Option<String> {
        // The coordinator wakes every few milliseconds; MPI is asked far less often (each
        // call may yield the core when ranks outnumber cores).
        if self
            .last_poll
            .is_some_and(|last| last.elapsed() < POLL_EVERY)
        {
            return self.stopped.clone();
        }
        let began = Instant::now();
        self.last_poll = Some(began);
        let answer = self.poll_inner(elapsed_ns, bytes, io_count);
        self.sync.poll_ns += began.elapsed().as_nanos() as u64;
        self.sync.polls += 1;
        answer
    }

    fn keeps_interval_buckets(&self) -> bool {
        // Rank 0 merges every rank's intervals bucket by bucket (an exact cluster p99 per
        // second); the buckets go no further than the merge.
        true
    }
}

impl MpiSession {
    fn poll_inner(&mut self, _elapsed_ns: u64, bytes: u64, io_count: u64) -> Option<String> {
        if self.is_root() {
            if self.pump_root().is_err() {
                return Some("a message could not be read".into());
            }
            self.check_silence();
        } else {
            self.beat(bytes, io_count);
            if self.pump_rank().is_err() {
                return Some("a message could not be read".into());
            }
        }
        self.stopped.clone()
    }
}
