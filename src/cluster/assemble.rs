//! The result of a multi-client run, put together on rank 0 from what every client reported:
//! the merged tests ([`merge`](crate::stats::merge)), and a [`ClusterResult`] that keeps each
//! client's own figures, its clock offset, and the clients that were lost.

use crate::result::{ClusterResult, RankResult, RunResult, TestResult};
use crate::stats::merge::{drop_interval_buckets, merge_test};

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

/// The run of every client: rank 0's run (`own`: command line, host, targets, start time)
/// with the tests of every client that reported merged, and the clients listed in
/// [`RunResult::cluster`]. The run is partial when any client's is or any was lost.
pub fn assemble(own: RunResult, mut clients: Vec<ClientReport>, launcher: String) -> RunResult {
    for client in &mut clients {
        if let Some(result) = &mut client.result {
            name_rank_in_mismatches(result, client.rank);
        }
    }
    let reported: Vec<&RunResult> = clients
        .iter()
        .filter(|client| client.lost.is_none())
        .filter_map(|client| client.result.as_ref())
        .collect();
    let test_count = reported
        .iter()
        .map(|result| result.tests.len())
        .max()
        .unwrap_or(0);
    // The CPUs of every host once, however many of its clients took part.
    let mut host_cpus: Vec<(&str, u32)> = Vec::new();
    for result in &reported {
        if !host_cpus
            .iter()
            .any(|(host, _)| *host == result.host.hostname)
        {
            host_cpus.push((&result.host.hostname, result.host.cpu_count));
        }
    }
    let cpu_count = host_cpus.iter().map(|(_, cpus)| cpus).sum();
    let tests: Vec<TestResult> = (0..test_count)
        .filter_map(|index| {
            let parts: Vec<&TestResult> = reported
                .iter()
                .filter_map(|result| result.tests.get(index))
                .collect();
            let mut merged = merge_test(&parts)?;
            merged.cpu.cpu_count = cpu_count;
            // The intervals were merged bucket by bucket; the buckets are saved nowhere.
            drop_interval_buckets(&mut merged);
            Some(merged)
        })
        .collect();
    let mut warnings = own.warnings.clone();
    for client in &clients {
        if let Some(reason) = &client.lost {
            warnings.push(format!(
                "rank {} on {} was lost: {reason}; its figures are not in the merged results",
                client.rank, client.host
            ));
        }
        let Some(result) = client.result.as_ref().filter(|_| client.rank != 0) else {
            continue;
        };
        for warning in &result.warnings {
            let warning = format!("rank {} on {}: {warning}", client.rank, client.host);
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    let partial = clients.iter().any(|client| {
        client.lost.is_some() || client.result.as_ref().is_none_or(|result| result.partial)
    });
    let lost_ranks = clients
        .iter()
        .filter(|client| client.lost.is_some())
        .map(|client| client.rank)
        .collect();
    let size = clients.len() as u32;
    let ranks = clients
        .into_iter()
        .map(|client| {
            let (host_info, targets, mut tests) = match client.result {
                Some(result) => (Some(result.host), result.targets, result.tests),
                None => (None, Vec::new(), Vec::new()),
            };
            tests.iter_mut().for_each(drop_interval_buckets);
            RankResult {
                rank: client.rank,
                host: client.host,
                local_rank: client.local_rank,
                clock_offset_ns: client.clock_offset_ns,
                clock_uncertainty_ns: client.clock_uncertainty_ns,
                sync_poll_ns: client.sync_poll_ns,
                sync_polls: client.sync_polls,
                lost: client.lost,
                host_info,
                targets,
                tests,
            }
        })
        .collect();
    RunResult {
        partial: own.partial || partial,
        tests,
        warnings,
        // Rank 0's own analysis is of its own figures: the merged run is analysed afresh.
        paths: Vec::new(),
        cluster: Some(ClusterResult {
            launcher,
            size,
            ranks,
            lost_ranks,
            verdicts: Vec::new(),
        }),
        ..own
    }
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
        let merged = assemble(own.clone(), clients, "MPI".into());
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

    fn hosts_of(cluster: &ClusterResult) -> Vec<&str> {
        crate::stats::merge::hosts(cluster)
    }
}
