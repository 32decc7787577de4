//! The verdict of a run from several clients (a multi-client run, docs/multi-host.md), in this
//! order: a hop they all share (`--shared`: the server's link, the array) at
//! [`HOP_FULL_PERCENT`] or more with every client's traffic added; the clients' CPUs (every
//! client's own verdict is host-CPU-bound: add clients); each client's own link (every client
//! is link-bound on a hop of its own). Beside it, the client, if any, far behind the others
//! ([`STRAGGLER_SHARE`] of their median).
//!
//! It reads each client's own analysis (every client analyses its own figures against its own
//! path before sending them) and the merged figures; it then makes the merged test's analysis
//! speak of the whole: a hop of one client's path is not compared with every client's traffic.

use super::declared::DeclaredPath;
use crate::result::{
    ClusterLimit, ClusterResult, ClusterVerdict, HopUtilisation, RankResult, RunResult, Straggler,
    TestAnalysis, TestResult, TrustKind, Verdict,
};
use std::collections::BTreeMap;

/// A hop at least this busy is the limit, percent.
pub const HOP_FULL_PERCENT: f64 = 85.0;
/// A client below this share of the others' median I/O rate is a straggler.
pub const STRAGGLER_SHARE: f64 = 0.75;

/// Adds the verdict of every test across the clients to `result.cluster`, and makes each
/// merged test's analysis (already made by the single-client analysis) speak of every client:
/// the hops of one client's path are left out, the `shared` hops carry every client's traffic,
/// and the verdict is the one across the clients when that one is decided.
pub fn analyse_clients(result: &mut RunResult, declared: &DeclaredPath) {
    let Some(cluster) = result.cluster.as_mut() else {
        return;
    };
    let shared: Vec<&str> = declared
        .hops
        .iter()
        .filter(|hop| hop.shared)
        .map(|hop| hop.name.as_str())
        .collect();
    cluster.verdicts = result
        .tests
        .iter()
        .enumerate()
        .map(|(index, test)| verdict_of(cluster, index, test, &shared))
        .collect();
    for (index, test) in result.tests.iter_mut().enumerate() {
        let (Some(analysis), Some(verdict)) = (test.analysis.as_mut(), cluster.verdicts.get(index))
        else {
            continue;
        };
        speak_for_every_client(analysis, &shared_hops(cluster, index, &shared), verdict);
    }
}

/// The clients that took part to the end, with their own figures of test `index`.
fn clients_of(cluster: &ClusterResult, index: usize) -> Vec<(&RankResult, &TestResult)> {
    cluster
        .ranks
        .iter()
        .filter(|rank| rank.lost.is_none())
        .filter_map(|rank| Some((rank, rank.tests.get(index)?)))
        .collect()
}

/// Each shared hop of test `index` with every client's traffic through it added up.
fn shared_hops(cluster: &ClusterResult, index: usize, shared: &[&str]) -> Vec<HopUtilisation> {
    let mut hops: BTreeMap<String, HopUtilisation> = BTreeMap::new();
    for (_, test) in clients_of(cluster, index) {
        let Some(analysis) = &test.analysis else {
            continue;
        };
        for hop in analysis
            .hops
            .iter()
            .filter(|hop| hop.declared && shared.contains(&hop.hop_name.as_str()))
        {
            let entry = hops
                .entry(hop.hop_key.clone())
                .or_insert_with(|| HopUtilisation {
                    inbound_bytes_per_second: 0.0,
                    outbound_bytes_per_second: 0.0,
                    protocol_overhead_bytes_per_second: 0.0,
                    iops: 0.0,
                    ..hop.clone()
                });
            entry.inbound_bytes_per_second += hop.inbound_bytes_per_second;
            entry.outbound_bytes_per_second += hop.outbound_bytes_per_second;
            entry.protocol_overhead_bytes_per_second += hop.protocol_overhead_bytes_per_second;
            entry.iops += hop.iops;
        }
    }
    hops.into_values()
        .map(|mut hop| {
            let busier = hop
                .inbound_bytes_per_second
                .max(hop.outbound_bytes_per_second);
            hop.utilisation_percent = if hop.capacity_bytes_per_second > 0 {
                busier / hop.capacity_bytes_per_second as f64 * 100.0
            } else {
                0.0
            };
            hop
        })
        .collect()
}

/// The busiest core of each host in test `index` (every process on it), percent.
fn busiest_cores(clients: &[(&RankResult, &TestResult)]) -> BTreeMap<String, f64> {
    let mut hosts: BTreeMap<String, f64> = BTreeMap::new();
    for (rank, test) in clients {
        let busiest = test.analysis.as_ref().map_or_else(
            || test.cpu.busiest_core_percent(),
            |a| a.cpu.busiest_core_percent,
        );
        let entry = hosts.entry(rank.host.clone()).or_default();
        *entry = entry.max(busiest);
    }
    hosts
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// The slowest client, when it is below [`STRAGGLER_SHARE`] of the others' median.
fn straggler(clients: &[(&RankResult, &TestResult)]) -> Option<Straggler> {
    if clients.len() < 2 {
        return None;
    }
    let (slowest, (rank, test)) = clients
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.1.total.iops.total_cmp(&b.1.1.total.iops))?;
    let others = clients
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != slowest)
        .map(|(_, (_, test))| test.total.iops)
        .collect();
    let others_median_iops = median(others);
    (test.total.iops < STRAGGLER_SHARE * others_median_iops).then(|| Straggler {
        rank: rank.rank,
        host: rank.host.clone(),
        iops: test.total.iops,
        others_median_iops,
    })
}

fn mb(bytes_per_second: f64) -> String {
    format!("{:.1} MB/s", bytes_per_second / 1e6)
}

fn verdict_of(
    cluster: &ClusterResult,
    index: usize,
    merged: &TestResult,
    shared: &[&str],
) -> ClusterVerdict {
    let clients = clients_of(cluster, index);
    let straggler = straggler(&clients);
    let (limit, evidence) = limit_of(cluster, index, merged, shared, &clients);
    let evidence = match &straggler {
        Some(slow) => format!(
            "{evidence}; straggler: rank {} on {} did {:.0} IOPS, {:.0} % below the others' median {:.0}",
            slow.rank,
            slow.host,
            slow.iops,
            (1.0 - slow.iops / slow.others_median_iops.max(f64::MIN_POSITIVE)) * 100.0,
            slow.others_median_iops
        ),
        None => evidence,
    };
    ClusterVerdict {
        test: merged.name.clone(),
        limit,
        evidence,
        straggler,
    }
}

fn limit_of(
    cluster: &ClusterResult,
    index: usize,
    merged: &TestResult,
    shared: &[&str],
    clients: &[(&RankResult, &TestResult)],
) -> (ClusterLimit, String) {
    if clients.is_empty() {
        return (
            ClusterLimit::Undecided,
            "no client finished this test".into(),
        );
    }
    if let Some(hop) = shared_hops(cluster, index, shared)
        .into_iter()
        .filter(|hop| hop.utilisation_percent >= HOP_FULL_PERCENT)
        .max_by(|a, b| a.utilisation_percent.total_cmp(&b.utilisation_percent))
    {
        return (
            ClusterLimit::SharedLink,
            format!(
                "the shared {} is the limit: every client together moves {} = {:.0} % of its {}",
                hop.hop_name,
                mb(hop
                    .inbound_bytes_per_second
                    .max(hop.outbound_bytes_per_second)),
                hop.utilisation_percent,
                mb(hop.capacity_bytes_per_second as f64)
            ),
        );
    }
    let cores = busiest_cores(clients);
    let cpu_bound = clients.iter().all(|(_, test)| {
        test.analysis
            .as_ref()
            .is_some_and(|analysis| analysis.verdict == Verdict::HostCpuBound)
    });
    if cpu_bound {
        let list: Vec<String> = cores
            .iter()
            .map(|(host, busy)| format!("{host} {busy:.0} %"))
            .collect();
        return (
            ClusterLimit::ClientBound,
            format!(
                "every client is CPU-bound (busiest core: {}): add clients",
                list.join(", ")
            ),
        );
    }
    // Each client at its own link (a hop that is not shared).
    let own_links: Vec<&HopUtilisation> = clients
        .iter()
        .filter_map(|(_, test)| {
            let analysis = test.analysis.as_ref()?;
            (analysis.verdict == Verdict::LinkBound)
                .then(|| {
                    analysis.hops.iter().find(|hop| {
                        Some(&hop.hop_key) == analysis.limiting_hop.as_ref()
                            && !(hop.declared && shared.contains(&hop.hop_name.as_str()))
                    })
                })
                .flatten()
        })
        .collect();
    if own_links.len() == clients.len() {
        let capacity: u64 = own_links
            .iter()
            .map(|hop| hop.capacity_bytes_per_second)
            .sum();
        let moved = merged.total.bytes_per_second;
        return (
            ClusterLimit::ClientLinks,
            format!(
                "each client's link is the limit: {} clients move {} = {:.0} % of their links' {} together",
                clients.len(),
                mb(moved),
                moved / capacity.max(1) as f64 * 100.0,
                mb(capacity as f64)
            ),
        );
    }
    let verdicts: Vec<String> = clients
        .iter()
        .map(|(rank, test)| {
            let verdict = test
                .analysis
                .as_ref()
                .map_or("not analysed", |a| a.verdict.name());
            format!("rank {} on {}: {verdict}", rank.rank, rank.host)
        })
        .collect();
    (
        ClusterLimit::Undecided,
        format!("no limit common to every client ({})", verdicts.join(", ")),
    )
}

/// Makes a merged test's analysis speak of every client (see [`analyse_clients`]).
fn speak_for_every_client(
    analysis: &mut TestAnalysis,
    shared: &[HopUtilisation],
    verdict: &ClusterVerdict,
) {
    analysis.hops = shared.to_vec();
    analysis
        .trust_notes
        .retain(|note| note.kind != TrustKind::AboveCapacity);
    let (merged_verdict, limiting_hop) = match verdict.limit {
        ClusterLimit::ClientBound => (Verdict::HostCpuBound, None),
        ClusterLimit::ClientLinks => (Verdict::LinkBound, None),
        ClusterLimit::SharedLink => (
            Verdict::LinkBound,
            shared
                .iter()
                .max_by(|a, b| a.utilisation_percent.total_cmp(&b.utilisation_percent))
                .map(|hop| hop.hop_key.clone()),
        ),
        ClusterLimit::Undecided => (Verdict::Inconclusive, None),
    };
    analysis.verdict = merged_verdict;
    analysis.limiting_hop = limiting_hop;
    analysis.evidence = verdict.evidence.clone();
    analysis.missing = if verdict.limit == ClusterLimit::Undecided {
        vec!["a limit common to every client".into()]
    } else {
        Vec::new()
    };
}
