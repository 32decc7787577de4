//! The result of a multi-client run, put together on rank 0 from what every client reported,
//! one client at a time as their results come ([`Assembly`]): the merged tests
//! ([`merge`](crate::stats::merge)), and a [`ClusterResult`] that keeps each client's own
//! figures (in summary form unless asked for whole: [`RankDetail`]), each host's, the clock
//! offsets, and the clients that were lost.

use crate::result::{ClusterResult, HostResult, RankResult, RunResult, TestResult};
use crate::stats::merge::{drop_interval_buckets, merge_test};
use crate::stats::summary::{drop_series, summarise_host_test, summarise_test};

/// What rank 0 knows of one client at the end of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientReport {
    /// Its rank.
    pub rank: u32,
    /// Its host name.
    pub host: String,
    /// Its rank on its host.
    pub local_rank: u32,
    /// Its wall clock minus rank 0's, ns.
    pub clock_offset_ns: i64,
    /// The error bound of that offset, ns.
    pub clock_uncertainty_ns: u64,
    /// Its time in the rendezvous's polls while its tests ran, ns.
    pub sync_poll_ns: u64,
    /// How many polls that was.
    pub sync_polls: u64,
    /// Its result (`None`: it never reported).
    pub result: Option<RunResult>,
    /// Why it is counted as lost (`None`: it took part to the end).
    pub lost: Option<String>,
}

/// A client's result as it was sent (`sent`: the JSON of its [`RunResult`], or why it has
/// none), read; `None`, with the reason in `lost` (unless it holds one already), when there is
/// none or it cannot be read.
pub fn read_sent_result(
    sent: Option<Result<String, String>>,
    lost: &mut Option<String>,
) -> Option<RunResult> {
    match sent? {
        Ok(json) => match serde_json::from_str::<RunResult>(&json) {
            Ok(result) => Some(result),
            Err(error) => {
                lost.get_or_insert(format!("its result could not be read: {error}"));
                None
            }
        },
        Err(reason) => {
            lost.get_or_insert(format!("it failed: {reason}"));
            None
        }
    }
}

/// Names `rank` in every bad block `result` keeps, so that the merged run's first bad blocks
/// say which client found each.
fn name_rank_in_mismatches(result: &mut RunResult, rank: u32) {
    for test in &mut result.tests {
        let jobs = test.jobs.iter_mut().map(|job| &mut job.verification);
        for found in std::iter::once(&mut test.verification)
            .chain(jobs)
            .flatten()
        {
            for mismatch in &mut found.mismatches {
                mismatch.rank = Some(rank);
            }
        }
    }
}

/// What a saved multi-client result keeps of each client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RankDetail {
    /// Each client's tests in summary form ([`summarise_test`]) and each host's clients
    /// merged exactly: a few KB per client, whatever the run's length.
    #[default]
    Summaries,
    /// Each client's whole tests (histograms, series, jobs), as `--per-rank-series` asks.
    Whole,
}

/// Clients read before their tests are folded into the merged ones: a fold merges each
/// interval's histogram anew, so folding several clients at once saves that work, at the cost
/// of holding this many whole results. Eight spend about an eighth more on the merged
/// intervals than 64 did and hold an eighth of the memory (a simulated 1000-rank merge's
/// time is that of reading the results).
pub const MERGE_BATCH: usize = 8;

/// One host's clients merged so far.
struct HostFold {
    name: String,
    /// The lowest rank among them (hosts are listed in the order of their first rank).
    first_rank: u32,
    cpu_count: u32,
    tests: Vec<Option<TestResult>>,
}

/// Test by test, the tests of every one of `parts` folded into `merged` (exact: the merge of
/// a merge is the merge of every part, interval buckets included).
fn fold_tests(merged: &mut Vec<Option<TestResult>>, parts: &[&[TestResult]]) {
    let test_count = parts.iter().map(|tests| tests.len()).max().unwrap_or(0);
    if merged.len() < test_count {
        merged.resize(test_count, None);
    }
    for (index, so_far) in merged.iter_mut().enumerate() {
        let mut same: Vec<&TestResult> =
            parts.iter().filter_map(|tests| tests.get(index)).collect();
        if same.is_empty() {
            continue;
        }
        let before = so_far.take();
        if let Some(before) = &before {
            same.insert(0, before);
        }
        *so_far = merge_test(&same);
    }
}

/// What a host's merge needs of a test: its histograms and counts, not its series (a host is
/// saved in summary form).
fn for_host(tests: &[TestResult]) -> Vec<TestResult> {
    tests
        .iter()
        .map(|test| {
            let mut test = test.clone();
            drop_series(&mut test);
            test
        })
        .collect()
}

/// The run of every client, put together as the clients come, in any order: their tests are
/// folded into the merged tests and into their hosts' [`MERGE_BATCH`] clients at a time, and
/// only what the saved result keeps of each ([`RankDetail`]) stays. Rank 0 so holds at most
/// that many whole results at once, beside the merged tests, one merge per host and the
/// clients' summaries: its memory grows by a summary per client, not by a whole result.
///
/// The clients, their hosts and their warnings are saved in rank order whatever the order
/// they came in. A merged test keeps the first I/O errors and bad blocks of the clients in
/// the order they were folded (rank 0 first when it is added first, as rank 0 does), and its
/// own fields (names, settings) from the first client folded.
pub struct Assembly {
    detail: RankDetail,
    /// The whole tests of the clients taken in since the last fold, with their hosts.
    pending: Vec<(String, Vec<TestResult>)>,
    merged: Vec<Option<TestResult>>,
    hosts: Vec<HostFold>,
    ranks: Vec<RankResult>,
    /// Each with the rank it is about.
    warnings: Vec<(u32, String)>,
    partial: bool,
}

impl Assembly {
    /// An assembly keeping `detail` of each client.
    pub fn new(detail: RankDetail) -> Self {
        Assembly {
            detail,
            pending: Vec::new(),
            merged: Vec::new(),
            hosts: Vec::new(),
            ranks: Vec::new(),
            warnings: Vec::new(),
            partial: false,
        }
    }

    /// Takes in one client (in any order; see [`Assembly`] for what the order changes).
    pub fn add(&mut self, client: ClientReport) {
        let ClientReport {
            rank,
            host,
            local_rank,
            clock_offset_ns,
            clock_uncertainty_ns,
            sync_poll_ns,
            sync_polls,
            mut result,
            lost,
        } = client;
        self.partial |= lost.is_some() || result.as_ref().is_none_or(|result| result.partial);
        if let Some(reason) = &lost {
            self.warnings.push((
                rank,
                format!(
                    "rank {rank} on {host} was lost: {reason}; its figures are not in the merged results"
                ),
            ));
        }
        if let Some(result) = &mut result {
            name_rank_in_mismatches(result, rank);
            if lost.is_none() {
                self.fold(rank, &host, result);
            }
            if rank != 0 {
                for warning in &result.warnings {
                    let warning = format!("rank {rank} on {host}: {warning}");
                    if !self.warnings.iter().any(|(_, kept)| *kept == warning) {
                        self.warnings.push((rank, warning));
                    }
                }
            }
        }
        let (host_info, targets, mut tests) = match result {
            Some(result) => (Some(result.host), result.targets, result.tests),
            None => (None, Vec::new(), Vec::new()),
        };
        for test in &mut tests {
            drop_interval_buckets(test);
            if self.detail == RankDetail::Summaries {
                summarise_test(test);
            }
        }
        self.ranks.push(RankResult {
            rank,
            host,
            local_rank,
            clock_offset_ns,
            clock_uncertainty_ns,
            sync_poll_ns,
            sync_polls,
            lost,
            host_info,
            targets,
            tests,
        });
    }

    /// Takes in the tests of a client that took part to the end; every [`MERGE_BATCH`]
    /// clients, folds them into the merged tests and their hosts'.
    fn fold(&mut self, rank: u32, host: &str, result: &RunResult) {
        if self.detail == RankDetail::Summaries {
            match self.hosts.iter_mut().find(|fold| fold.name == host) {
                Some(fold) => fold.first_rank = fold.first_rank.min(rank),
                None => self.hosts.push(HostFold {
                    name: host.to_string(),
                    first_rank: rank,
                    cpu_count: result.host.cpu_count,
                    tests: Vec::new(),
                }),
            }
        }
        self.pending.push((host.to_string(), result.tests.clone()));
        if self.pending.len() >= MERGE_BATCH {
            self.fold_pending();
        }
    }

    /// Folds the clients taken in since the last fold.
    fn fold_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let parts: Vec<&[TestResult]> = pending.iter().map(|(_, tests)| tests.as_slice()).collect();
        fold_tests(&mut self.merged, &parts);
        for fold in &mut self.hosts {
            let on_host: Vec<Vec<TestResult>> = pending
                .iter()
                .filter(|(host, _)| *host == fold.name)
                .map(|(_, tests)| for_host(tests))
                .collect();
            let Some(first) = on_host.first() else {
                continue;
            };
            let parts: Vec<&[TestResult]> = on_host.iter().map(Vec::as_slice).collect();
            fold_tests(&mut fold.tests, &parts);
            // The cores are the host's, the same for each of its clients (the merge keeps none).
            for (merged, own) in fold.tests.iter_mut().zip(first) {
                if let Some(merged) = merged {
                    merged.cpu.cores = own.cpu.cores.clone();
                }
            }
        }
    }

    /// The run of every client: rank 0's run (`own`: command line, host, targets, start
    /// time) with the merged tests, and the clients listed in [`RunResult::cluster`]. The run
    /// is partial when any client's is or any was lost.
    pub fn finish(mut self, own: RunResult, launcher: String) -> RunResult {
        self.fold_pending();
        let Assembly {
            merged,
            mut hosts,
            mut ranks,
            warnings: mut client_warnings,
            partial,
            ..
        } = self;
        // Saved in rank order, whatever the order the clients came in (stable: a rank's own
        // warnings keep theirs).
        ranks.sort_by_key(|rank| rank.rank);
        hosts.sort_by_key(|fold| fold.first_rank);
        client_warnings.sort_by_key(|(rank, _)| *rank);
        let client_warnings = client_warnings.into_iter().map(|(_, warning)| warning);
        // The CPUs of every host once, however many of its clients took part.
        let mut host_cpus: Vec<(&str, u32)> = Vec::new();
        for rank in ranks.iter().filter(|rank| rank.lost.is_none()) {
            if let Some(info) = &rank.host_info
                && !host_cpus.iter().any(|(host, _)| *host == info.hostname)
            {
                host_cpus.push((&info.hostname, info.cpu_count));
            }
        }
        let cpu_count = host_cpus.iter().map(|(_, cpus)| cpus).sum();
        let tests: Vec<TestResult> = merged
            .into_iter()
            .flatten()
            .map(|mut test| {
                test.cpu.cpu_count = cpu_count;
                // The intervals were merged bucket by bucket; the buckets are saved nowhere.
                drop_interval_buckets(&mut test);
                test
            })
            .collect();
        let hosts = hosts
            .into_iter()
            .map(|fold| HostResult {
                tests: fold
                    .tests
                    .into_iter()
                    .flatten()
                    .map(|mut test| {
                        // The cores and CPUs are the host's, the same for each of its clients.
                        test.cpu.cpu_count = fold.cpu_count;
                        summarise_host_test(&mut test);
                        test
                    })
                    .collect(),
                name: fold.name,
            })
            .collect();
        let mut warnings = own.warnings.clone();
        warnings.extend(client_warnings);
        let lost_ranks = ranks
            .iter()
            .filter(|rank| rank.lost.is_some())
            .map(|rank| rank.rank)
            .collect();
        RunResult {
            partial: own.partial || partial,
            tests,
            warnings,
            // Rank 0's own analysis is of its own figures: the merged run is analysed afresh.
            paths: Vec::new(),
            cluster: Some(ClusterResult {
                launcher,
                size: ranks.len() as u32,
                ranks,
                lost_ranks,
                verdicts: Vec::new(),
                hosts,
                // Timed by the transport that gathered the clients.
                gather_ns: 0,
                merge_ns: 0,
            }),
            ..own
        }
    }
}

/// The run of every client ([`Assembly`] of `clients` in their order, keeping `detail` of
/// each).
pub fn assemble(
    own: RunResult,
    clients: Vec<ClientReport>,
    launcher: String,
    detail: RankDetail,
) -> RunResult {
    let mut assembly = Assembly::new(detail);
    for client in clients {
        assembly.add(client);
    }
    assembly.finish(own, launcher)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::fixtures::mixed;

    fn client(rank: u32, result: Option<RunResult>, lost: Option<&str>) -> ClientReport {
        ClientReport {
            rank,
            host: format!("host{rank}"),
            local_rank: 0,
            clock_offset_ns: 0,
            clock_uncertainty_ns: 0,
            sync_poll_ns: 0,
            sync_polls: 0,
            result,
            lost: lost.map(str::to_string),
        }
    }

    #[test]
    fn counts_add_up_and_a_lost_rank_is_named_and_left_out() {
        let own = mixed().clone();
        let clients = vec![
            client(0, Some(own.clone()), None),
            client(1, Some(own.clone()), None),
            client(2, None, Some("no word from it for 3 s")),
        ];
        let merged = assemble(own.clone(), clients, "MPI".into(), RankDetail::Whole);
        assert!(merged.partial);
        assert_eq!(merged.tests.len(), own.tests.len());
        for (test, alone) in merged.tests.iter().zip(&own.tests) {
            assert_eq!(test.total.io_count, 2 * alone.total.io_count);
            assert_eq!(test.read.bytes, 2 * alone.read.bytes);
            assert_eq!(test.total.histogram.count, 2 * alone.total.histogram.count);
            assert!(test.analysis.is_none());
        }
        let cluster = merged.cluster.unwrap();
        assert_eq!(cluster.lost_ranks, [2]);
        assert_eq!(cluster.size, 3);
        assert!(
            merged
                .warnings
                .iter()
                .any(|w| w.contains("rank 2 on host2 was lost"))
        );
        assert_eq!(hosts_of(&cluster), ["host0", "host1", "host2"]);
        let one_host = crate::stats::merge::host_tests(&cluster, "host1");
        assert_eq!(one_host[0].total.io_count, own.tests[0].total.io_count);
    }

    #[test]
    fn by_default_ranks_keep_summaries_and_hosts_their_exact_merge() {
        let own = mixed().clone();
        let clients = |own: &RunResult| {
            [(0, "node1"), (1, "node1"), (2, "node2")]
                .map(|(rank, host)| ClientReport {
                    host: host.into(),
                    ..client(rank, Some(own.clone()), None)
                })
                .into()
        };
        let whole = assemble(own.clone(), clients(&own), "MPI".into(), RankDetail::Whole);
        let summaries = assemble(
            own.clone(),
            clients(&own),
            "MPI".into(),
            RankDetail::default(),
        );
        assert_eq!(summaries.tests, whole.tests);
        let (whole, summaries) = (whole.cluster.unwrap(), summaries.cluster.unwrap());
        assert!(whole.hosts.is_empty());
        assert_eq!(summaries.hosts.len(), 2);
        for host in ["node1", "node2"] {
            let mut expected = crate::stats::merge::host_tests(&whole, host);
            expected.iter_mut().for_each(summarise_host_test);
            assert_eq!(crate::stats::merge::host_tests(&summaries, host), expected);
        }
        for (rank, whole_rank) in summaries.ranks.iter().zip(&whole.ranks) {
            for (test, whole_test) in rank.tests.iter().zip(&whole_rank.tests) {
                assert!(test.jobs.is_empty() && test.total.series.is_empty());
                assert!(test.total.histogram.buckets.is_empty());
                assert_eq!(test.total.latency, whole_test.total.latency);
                assert_eq!(test.total.io_count, whole_test.total.io_count);
            }
        }
    }

    #[test]
    fn clients_taken_in_as_they_come_are_saved_in_rank_order() {
        let own = mixed().clone();
        let mut warned = own.clone();
        warned.warnings = vec!["a warning of its own".into()];
        let report = |rank: u32, host: &str, result: &RunResult| ClientReport {
            host: host.into(),
            ..client(rank, Some(result.clone()), None)
        };
        let mut in_order = Assembly::new(RankDetail::Summaries);
        let mut as_they_came = Assembly::new(RankDetail::Summaries);
        let clients = [
            report(0, "node1", &own),
            report(1, "node2", &warned),
            report(2, "node1", &own),
            client(3, None, Some("no word from it for 3 s")),
            report(4, "node3", &warned),
        ];
        for client in clients.clone() {
            in_order.add(client);
        }
        for index in [0, 4, 3, 2, 1] {
            as_they_came.add(clients[index].clone());
        }
        let (in_order, as_they_came) = (
            in_order.finish(own.clone(), "MPI".into()),
            as_they_came.finish(own.clone(), "MPI".into()),
        );
        assert_eq!(as_they_came, in_order);
        let cluster = as_they_came.cluster.as_ref().unwrap();
        let ranks: Vec<u32> = cluster.ranks.iter().map(|rank| rank.rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3, 4]);
        let hosts: Vec<&str> = cluster
            .hosts
            .iter()
            .map(|host| host.name.as_str())
            .collect();
        assert_eq!(hosts, ["node1", "node2", "node3"]);
        let warnings: Vec<&String> = as_they_came
            .warnings
            .iter()
            .filter(|warning| warning.starts_with("rank "))
            .collect();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].starts_with("rank 1 on node2: a warning"));
        assert!(warnings[1].starts_with("rank 3 on host3 was lost"));
        assert!(warnings[2].starts_with("rank 4 on node3: a warning"));
    }

    fn hosts_of(cluster: &ClusterResult) -> Vec<&str> {
        crate::stats::merge::hosts(cluster)
    }
}
