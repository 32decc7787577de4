//! A run driven from several clients at once (`mpirun`/`srun` with the `mpi` feature): who
//! took part, each one's clock offset, and each one's own figures beside the merged ones.
//!
//! The tests of a [`RunResult`](super::RunResult) with a cluster hold the merged figures of
//! every client (exact sums of counts and bytes, histograms merged bucket by bucket). Each
//! [`RankResult`] keeps that client's own summary of every test (a few figures per
//! direction, no histogram, series or jobs: a result grows by a few KB per client), and each
//! [`HostResult`] the exact merge of its clients, summarised the same way. With
//! `--per-rank-series`, each rank keeps its whole tests as it measured them instead, and no
//! host is stored (a reader merges the ranks of each host: results written before the
//! summaries read the same way).

use super::host::HostInfo;
use super::target::TargetInfo;
use super::test::TestResult;
use serde::{Deserialize, Serialize};

/// Every client of a multi-client run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterResult {
    /// The launcher and MPI library (`Open MPI v4.1.4`).
    pub launcher: String,
    /// Clients launched (MPI ranks).
    pub size: u32,
    /// Every client, by rank (lost ones too, with what was known of them).
    pub ranks: Vec<RankResult>,
    /// Ranks that died or stopped answering; their figures are missing from the merged tests.
    pub lost_ranks: Vec<u32>,
    /// What limits each test across the clients, in the order of the tests (filled by the
    /// analysis; empty when it did not run).
    #[serde(default)]
    pub verdicts: Vec<ClusterVerdict>,
    /// Each host's clients merged exactly, test by test, in summary form, in the order of
    /// the hosts' first ranks. Empty with `--per-rank-series` (and in results written before
    /// the summaries): the ranks' whole tests are then merged host by host when read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostResult>,
    /// How long rank 0 waited, once its own tests had ended, for the last of the other
    /// ranks' results, ns, the time it spent reading and folding those that came meanwhile
    /// left out (0 in results written before it was kept).
    #[serde(default)]
    pub gather_ns: u64,
    /// How long rank 0 took to read every rank's result and merge them, ns: as each came,
    /// and at the end.
    #[serde(default)]
    pub merge_ns: u64,
}

/// One host of a multi-client run: every client on it that took part to the end, merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostResult {
    /// The host's name.
    pub name: String,
    /// Its clients' tests merged exactly (counts and bytes summed, latency summaries from
    /// their histograms added bucket by bucket, the host's CPUs and cores once), in the
    /// order of the run's tests and in summary form: no histogram buckets, series or jobs.
    pub tests: Vec<TestResult>,
}

/// What limits a test run from several clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterLimit {
    /// Every client's CPU is saturated: more clients would move more.
    ClientBound,
    /// Each client's own link is at its capacity: the clients' links add up to the result.
    ClientLinks,
    /// A hop every client shares (`--shared`: the server's link, the array) is at capacity.
    SharedLink,
    /// None of these holds, or too little is known.
    Undecided,
}

impl ClusterLimit {
    /// As written in reports (`client-bound`).
    pub fn name(self) -> &'static str {
        match self {
            ClusterLimit::ClientBound => "client-bound",
            ClusterLimit::ClientLinks => "client-links",
            ClusterLimit::SharedLink => "shared-link",
            ClusterLimit::Undecided => "undecided",
        }
    }
}

/// The verdict of one test across its clients.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterVerdict {
    /// The test's name.
    pub test: String,
    /// What limits it.
    pub limit: ClusterLimit,
    /// The evidence, one line (`each client's link is the limit: 3 × 1GbE, 351.2 MB/s …`).
    pub evidence: String,
    /// A client well behind the others, if one is.
    pub straggler: Option<Straggler>,
}

/// A client that moved much less than the others in a test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Straggler {
    /// Its rank.
    pub rank: u32,
    /// Its host.
    pub host: String,
    /// Its I/Os per second.
    pub iops: f64,
    /// The median of the other clients' I/Os per second.
    pub others_median_iops: f64,
}

/// One client (one MPI rank).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankResult {
    /// MPI rank.
    pub rank: u32,
    /// Host name it ran on.
    pub host: String,
    /// Rank among the ranks on its host.
    pub local_rank: u32,
    /// Its wall clock minus rank 0's, ns (measured by the fastest of several round trips).
    pub clock_offset_ns: i64,
    /// Half the round trip of that measurement, ns: the offset's error bound.
    pub clock_uncertainty_ns: u64,
    /// Time it spent meeting the others while its tests ran (heartbeats, messages from rank
    /// 0, checks for lost ranks), ns: the cost of running together.
    #[serde(default)]
    pub sync_poll_ns: u64,
    /// How many times it looked (every few milliseconds of a test).
    #[serde(default)]
    pub sync_polls: u64,
    /// Why it is missing from the merged figures (`None` while it took part to the end).
    pub lost: Option<String>,
    /// Its machine (absent when lost before it reported).
    pub host_info: Option<HostInfo>,
    /// Its targets, as it found them (saved with alike targets once:
    /// [`target_groups`](super::target_groups)).
    #[serde(with = "super::target_groups::without_paths")]
    pub targets: Vec<TargetInfo>,
    /// Its tests (empty when lost): in summary form by default (each direction's counts,
    /// rates, latency summary and errors, its CPU and analysis; no histogram buckets, series
    /// or jobs), whole as it measured them with `--per-rank-series`.
    pub tests: Vec<TestResult>,
}
