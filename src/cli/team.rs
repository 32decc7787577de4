//! The clients of `iopath run`: one process alone, or (built with the `mpi` feature and
//! started by `mpirun`/`srun`) every rank of an MPI job, rank 0 printing and writing for all.
//!
//! [`Team`] is the seam `run_command` goes through at each step where the clients meet: the
//! targets of this client, the plan every client runs, the check that every target opened,
//! the run itself, and the merged result.

use super::exit::{self, Status, Usage};
#[cfg(feature = "mpi")]
use super::messages::for_terminal;
use super::run_args::RunArgs;
use iopath::cluster::launcher;
use iopath::cluster::templates::{ClientIdentity, expand, targets_from_map};
use iopath::gate::read::{FileLimit, read_text};
use iopath::run::rendezvous::{Alone, Rendezvous};
use iopath::run::{ExecutedRun, RunError};
use iopath::workload::TestPlan;
use std::path::PathBuf;

/// The clients of this run.
pub enum Team {
    /// One process.
    Alone(ClientIdentity, Alone),
    /// Every rank of an MPI job.
    #[cfg(feature = "mpi")]
    Mpi(Box<iopath::cluster::mpi::MpiSession>),
}

/// How a step ended for this process when it must not go on: the exit status (the message, if
/// any, has been printed by the process that prints).
pub struct Ended(pub i32);

impl Team {
    /// The team this process belongs to: an MPI job when started by an MPI launcher (and
    /// built with the `mpi` feature), otherwise one process.
    pub fn join() -> Result<Team, Ended> {
        #[cfg(feature = "mpi")]
        if launcher::launched() {
            return match iopath::cluster::mpi::MpiSession::start() {
                Ok(session) => Ok(Team::Mpi(Box::new(session))),
                Err(error) => Err(Ended(exit::fail(&exit::Failed(error.to_string())))),
            };
        }
        #[cfg(not(feature = "mpi"))]
        if launcher::size().is_some_and(|size| size > 1) {
            // Every rank would run alone and print its own figures as if they were the run's.
            let message = Usage(
                "started by an MPI launcher with several ranks, but this iopath was built \
                 without MPI: build it with `cargo build --release --features mpi` \
                 (docs/multi-host.md)"
                    .into(),
            );
            return Err(Ended(if launcher::rank().unwrap_or(0) == 0 {
                exit::fail(&message)
            } else {
                exit::BAD_INPUT
            }));
        }
        let host = iopath::discovery::resources::describe(&iopath::discovery::HostView::live())
            .hostname
            .trim()
            .to_string();
        Ok(Team::Alone(ClientIdentity::alone(host), Alone))
    }

    /// Who this process is.
    pub fn identity(&self) -> &ClientIdentity {
        match self {
            Team::Alone(identity, _) => identity,
            #[cfg(feature = "mpi")]
            Team::Mpi(session) => session.identity(),
        }
    }

    /// Whether this process prints and writes the outputs (rank 0, or the only process).
    pub fn prints(&self) -> bool {
        self.identity().rank == 0
    }

    /// Whether this process runs with others.
    pub fn is_cluster(&self) -> bool {
        !matches!(self, Team::Alone(..))
    }

    /// `args` for this client: its targets (from the map file, or as given) with the
    /// templates expanded; the other clients write no outputs.
    pub fn localise(&self, args: &RunArgs) -> Result<RunArgs, Usage> {
        let client = self.identity();
        let mut local = args.clone();
        if let Some(map) = &args.target_map {
            let text = read_text(map, FileLimit::TARGET_MAP)
                .map_err(|error| Usage(format!("--target-map {}: {error}", map.display())))?;
            local.targets = targets_from_map(&text, client)
                .map_err(|error| Usage(format!("--target-map {}: {error}", map.display())))?
                .into_iter()
                .map(PathBuf::from)
                .collect();
        } else {
            local.targets = args
                .targets
                .iter()
                .map(|target| PathBuf::from(expand(&target.to_string_lossy(), client)))
                .collect();
        }
        if !self.prints() {
            local.json = None;
            local.csv = None;
            local.report = None;
            local.trace_io = None;
            local.write_logs = None;
            local.bandwidth_log = false;
            local.output_format = None;
            local.md = false;
            local.no_history = true;
        }
        Ok(local)
    }

    /// The plan every client runs: rank 0's (`own` there; on failure rank 0 prints it and the
    /// run is called off everywhere). Rank 0's tests replace every other client's own; a
    /// client's own problem (and the only process's) is told at [`Team::agree_ready`].
    pub fn share_plan(
        &mut self,
        own: Result<Vec<TestPlan>, &dyn Status>,
    ) -> Result<Vec<TestPlan>, Ended> {
        match self {
            // Its own problem is told once, at the check.
            Team::Alone(..) => Ok(own.unwrap_or_default()),
            #[cfg(feature = "mpi")]
            Team::Mpi(session) => {
                let printed = if session.is_root() {
                    own.map_err(|error| (exit::fail(error), error.to_string()))
                } else {
                    Ok(Vec::new())
                };
                session
                    .share_plan(printed)
                    .map_err(|error| Ended(mpi_status(&error)))
            }
        }
    }

    /// Every client has opened its targets (`failure`: this one could not; rank 0 prints every
    /// failure with its rank and host, and every client stops before any I/O).
    pub fn agree_ready(&mut self, failure: Option<&dyn Status>) -> Result<(), Ended> {
        match self {
            Team::Alone(..) => match failure {
                Some(error) => Err(Ended(exit::fail(error))),
                None => Ok(()),
            },
            #[cfg(feature = "mpi")]
            Team::Mpi(session) => {
                let failure =
                    failure.map(|error| (error.status() == exit::BAD_INPUT, error.to_string()));
                session.agree_ready(failure).map_err(|error| {
                    if session.is_root() {
                        for line in error.to_string().lines() {
                            eprintln!("error: {}", for_terminal(line));
                        }
                    }
                    Ended(mpi_status(&error))
                })
            }
        }
    }

    /// Where each test meets the other clients.
    pub fn rendezvous(&mut self) -> &mut dyn Rendezvous {
        match self {
            Team::Alone(_, alone) => alone,
            #[cfg(feature = "mpi")]
            Team::Mpi(session) => session.as_mut(),
        }
    }
}

/// The exit status an MPI step's failure ends this process with.
#[cfg(feature = "mpi")]
fn mpi_status(error: &iopath::cluster::mpi::ClusterError) -> i32 {
    use iopath::cluster::mpi::ClusterError;
    match error {
        ClusterError::CalledOff { status, .. } => *status,
        ClusterError::RanksFailed {
            bad_input: true, ..
        } => exit::BAD_INPUT,
        _ => exit::RUN_FAILED,
    }
}

/// What the run gave this process to report.
pub enum Gathered {
    /// Print and write this run (rank 0 with every client merged, or the only process).
    Report(Box<ExecutedRun>),
    /// Another rank: its result went to rank 0; exit with this status.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    Exit(i32),
}

impl Team {
    /// After the run: the other ranks send their results to rank 0, which merges them into its
    /// own (a rank that did not report is named in the result as lost). `Err`: the run of this
    /// process failed before any test ran (printed by the process that prints). With
    /// `per_rank_series`, the merged result keeps each rank's whole tests, not their
    /// summaries.
    pub fn gather(
        &mut self,
        executed: Result<ExecutedRun, RunError>,
        interrupted: bool,
        per_rank_series: bool,
    ) -> Result<Gathered, Ended> {
        // Alone, there is one rank's result: nothing to summarise.
        #[cfg(not(feature = "mpi"))]
        let _ = per_rank_series;
        match self {
            // Alone, an interruption is the run's own to report.
            Team::Alone(..) => match executed.map(|executed| (executed, interrupted)) {
                Ok((executed, _)) => Ok(Gathered::Report(Box::new(executed))),
                Err(error) => Err(Ended(exit::fail(&error))),
            },
            #[cfg(feature = "mpi")]
            Team::Mpi(session) => {
                use iopath::cluster::mpi::Finished;
                let (own, mut executed, status) = match executed {
                    Ok(executed) => (Ok(executed.result.clone()), Some(executed), None),
                    Err(error) => {
                        let status = if session.is_root() {
                            exit::fail(&error)
                        } else {
                            error.status()
                        };
                        (Err(error.to_string()), None, Some(status))
                    }
                };
                let detail = if per_rank_series {
                    iopath::cluster::assemble::RankDetail::Whole
                } else {
                    iopath::cluster::assemble::RankDetail::Summaries
                };
                match session.finish(own, interrupted, detail) {
                    Ok(Finished::Merged(merged)) => match (executed.take(), status) {
                        (Some(mut executed), None) => {
                            executed.result = *merged;
                            Ok(Gathered::Report(Box::new(executed)))
                        }
                        (_, status) => Err(Ended(status.unwrap_or(exit::RUN_FAILED))),
                    },
                    Ok(Finished::Exit(status)) => Ok(Gathered::Exit(status)),
                    Err(error) => {
                        if session.is_root() && status.is_none() {
                            eprintln!("error: {}", for_terminal(&error));
                        }
                        Err(Ended(status.unwrap_or(exit::RUN_FAILED)))
                    }
                }
            }
        }
    }

    /// The ranks lost during the run, with their hosts and why (rank 0 of an MPI job).
    pub fn lost(&self, executed: &ExecutedRun) -> Vec<String> {
        let Some(cluster) = &executed.result.cluster else {
            return Vec::new();
        };
        cluster
            .ranks
            .iter()
            .filter_map(|rank| {
                let reason = rank.lost.as_ref()?;
                Some(format!(
                    "rank {} on {} was lost: {reason}",
                    rank.rank, rank.host
                ))
            })
            .collect()
    }

    /// Ends this process's part: rank 0 tells the others the exit status, and MPI is ended.
    pub fn end(self, status: i32) {
        match (self, status) {
            (Team::Alone(..), _) => {}
            #[cfg(feature = "mpi")]
            (Team::Mpi(mut session), status) => {
                session.done(status);
                session.end();
            }
        }
    }
}
