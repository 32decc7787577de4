//! Saved results of real runs, read as any saved run is: the fixed inputs of the exporter and
//! comparison tests (tests/fixtures/README.md says how each was made).
//!
//! - `small`: one random read/write test, one job (4 KiB, QD 4, 2 s) on a file;
//! - `sweep`: random 4 KiB reads swept over queue depths 1 and 8 (io_uring);
//! - `sweep-sync`: the same sweep with the sync engine;
//! - `mixed`: a mixed random test, then a test of two jobs (a reader and a writer);
//! - `network`: sequential reads from an NBD server over a declared 1GbE link (a path of
//!   hops and a link-bound verdict).

use iopath::report::json::read_json;
use iopath::result::RunResult;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Every fixture's name.
pub const NAMES: [&str; 5] = ["small", "sweep", "sweep-sync", "mixed", "network"];

/// The folder of the fixtures.
pub fn directory() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results")
}

/// The fixture `name` (one of [`NAMES`]), read and checked like any saved run.
pub fn result(name: &str) -> RunResult {
    let path = directory().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    read_json(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The `mixed` fixture, read once per test binary.
pub fn mixed() -> &'static RunResult {
    static MIXED: OnceLock<RunResult> = OnceLock::new();
    MIXED.get_or_init(|| result("mixed"))
}

/// `mixed` as if run from three clients: ranks 0 and 1 on `node1`, rank 2 on `node2`, each with
/// `mixed`'s own figures, and the merged tests three times its counts (a stand-in for the
/// merge, which has tests of its own).
pub fn clustered() -> RunResult {
    use iopath::result::{ClusterResult, RankResult};
    let mut result = mixed().clone();
    let ranks = [(0, "node1", 0), (1, "node1", 1), (2, "node2", 0)]
        .into_iter()
        .map(|(rank, host, local_rank)| RankResult {
            rank,
            host: host.to_string(),
            local_rank,
            clock_offset_ns: 1_000 * i64::from(rank),
            clock_uncertainty_ns: 500,
            sync_poll_ns: 0,
            sync_polls: 0,
            lost: None,
            host_info: Some(result.host.clone()),
            targets: result.targets.clone(),
            tests: result.tests.clone(),
        })
        .collect();
    for test in &mut result.tests {
        test.total.io_count *= 3;
        test.total.iops *= 3.0;
    }
    result.cluster = Some(ClusterResult {
        launcher: "Open MPI v4.1.4".into(),
        size: 3,
        ranks,
        lost_ranks: Vec::new(),
        verdicts: Vec::new(),
        hosts: Vec::new(),
        gather_ns: 0,
        merge_ns: 0,
    });
    result
}
