//! Explains every result: the storage path of each target, what each hop can carry, and what
//! limits each test.
//!
//! - [`links`]: the catalog of links and buses (FC, Ethernet, InfiniBand, SAS, SATA, USB, PCI,
//!   PCI-X, PCIe, RoCE) with the derivation of each payload rate; [`protocols`]: the per-I/O
//!   headers of iSCSI, NBD, SMB, NFS, NVMe/TCP, FCP, SSP and ATA.
//! - [`path`]: a target's path as hops with capacities, built from what
//!   [`crate::discovery`] gathered (block stack, transport, bus, network);
//!   [`declared`]: the hops the user declares where nothing can be seen (`--link`, `--path`);
//!   [`shared_paths`]: the paths of a run's many targets, what files on one filesystem share
//!   built once.
//! - [`verdict`]: utilisation of each hop, the CPU and the queue, and one classification with
//!   its evidence; [`trust`]: trust notes and confidence intervals; [`written_data`]: what
//!   data that compresses or repeats means for them; [`clients`]: the verdict of a run from
//!   several clients (client-bound, each client's link, a shared link, a straggler);
//!   [`rate_step`], [`burst_bucket`], [`write_cliff`], [`bucket_or_cliff`]: a rate that
//!   stepped down, as a burst bucket or a write cache that filled (pure functions of a
//!   per-interval series).
//!
//! Everything here is a pure function of the RunResult, the facts discovery gathered and the
//! [`HostFacts`]; only [`analyse`] and [`analyse_on`] ask [`crate::discovery`] to gather
//! them. Nothing here prints or fails; what cannot be seen becomes a note or an inconclusive
//! verdict that says what is missing.
//!
//! ```
//! use iopath::analysis::declared::DeclaredPath;
//! use iopath::analysis::links::find;
//! let declared = DeclaredPath::from_flags(&["1gbe".into()], &[]).unwrap();
//! assert_eq!(declared.hops[0].capacity.payload_bytes_per_second,
//!            find("1gbe").unwrap().payload_bytes_per_second());
//! ```

pub mod analyser;
pub mod bucket_or_cliff;
pub mod burst_bucket;
pub mod clients;
pub mod confirmation;
pub mod declared;
pub mod hidden_queue;
pub mod links;
pub mod path;
pub mod protocols;
pub mod rate_step;
pub mod sample_interval;
pub mod series_shape;
pub mod server;
pub mod shared_paths;
pub mod short_run;
pub mod small_io;
pub mod student_t;
pub mod trust;
pub mod verdict;
pub mod write_cliff;
pub mod written_data;

mod block;
mod bus;
#[cfg(test)]
mod machine_tests;
mod network;
#[cfg(test)]
mod server_tests;
#[cfg(test)]
mod test_results;
#[cfg(test)]
mod test_support;
mod transport;

pub use crate::discovery::HostFacts;
pub use analyser::Analyser;
pub use declared::DeclaredPath;

use crate::discovery::Machine;
use crate::discovery::facts::PathFacts;
use crate::result::{RunResult, StoragePath, TargetInfo};

/// Fills `result.paths` (one per target, same order) and every test's `analysis`, with the
/// hops in `declared` added to every path. Paths already in the result (a result read back
/// from JSON) are kept, not discovered again on this host; their declared hops are replaced
/// when `declared` is not empty.
pub fn analyse(result: &mut RunResult, declared: &DeclaredPath) {
    let machine = Machine::this_host();
    analyse_on(result, declared, &machine, &machine.host_facts());
}

/// [`analyse`] with the host facts given (tests, or a caller that has them already); paths
/// are discovered on this host when missing.
pub fn analyse_with(result: &mut RunResult, declared: &DeclaredPath, facts: &HostFacts) {
    analyse_on(result, declared, &Machine::this_host(), facts);
}

/// The most files of one run whose first blocks the analysis reads (to note a head of
/// zeros, [`crate::result::StoragePath::first_blocks_all_zero`]); a run of more files is
/// described from each file's `statx` alone, as it runs without opening each one.
pub const FILE_HEADS_READ_AT_MOST: usize = 64;

/// [`analyse`] on `machine`: its paths are gathered there when the result has none; the first
/// blocks of its files are read when it has at most [`FILE_HEADS_READ_AT_MOST`] of them.
pub fn analyse_on(
    result: &mut RunResult,
    declared: &DeclaredPath,
    machine: &Machine,
    facts: &HostFacts,
) {
    if result.paths.len() != result.targets.len() {
        // Files on one filesystem and volumes of one server are walked once, and the hops
        // below the files built once, not per target; no target's facts outlive its path.
        let mut shared = shared_paths::SharedPaths::new(machine, facts);
        let files = result
            .targets
            .iter()
            .filter(|target| target.kind == crate::result::TargetKind::File)
            .count();
        if files > FILE_HEADS_READ_AT_MOST {
            shared = shared.skipping_file_heads();
        }
        if changed_no_file(result) {
            shared = shared.trusting_looks_before_the_run();
        }
        result.paths = result
            .targets
            .iter()
            .map(|target| shared.path_of(target))
            .collect();
        analyse_built(result, declared, facts, true);
    } else {
        analyse_built(result, declared, facts, false);
    }
}

/// Whether no test of `result` could have changed a file that was there before the run: no
/// job writes or trims, none wrote anything, no engine creates or removes files, and no
/// target is a file iopath created (it may be filled before the tests and removed after).
/// Then each file's look before the run still describes it.
fn changed_no_file(result: &RunResult) -> bool {
    use std::str::FromStr;
    let jobs_read_only = result.tests.iter().all(|test| {
        test.write.io_count == 0
            && test.trim.io_count == 0
            && test.jobs.iter().all(|job| {
                !job.workload.access.modifies()
                    && crate::result::EngineKind::from_str(&job.engine.name)
                        .is_ok_and(|kind| !kind.is_file_operation())
            })
    });
    jobs_read_only
        && result
            .targets
            .iter()
            .all(|target| !target.created_by_iopath && target.created_content.is_none())
}

/// The analysis as a pure function: `gathered` holds the facts of every target's path when
/// the result has no paths yet (`None` keeps the result's own).
pub fn analyse_gathered(
    result: &mut RunResult,
    declared: &DeclaredPath,
    facts: &HostFacts,
    gathered: Option<&[PathFacts]>,
) {
    if let Some(gathered) = gathered {
        result.paths = result
            .targets
            .iter()
            .zip(gathered)
            .map(|(target, facts_of_path)| path::build(target, facts_of_path, facts))
            .collect();
    }
    analyse_built(result, declared, facts, gathered.is_some());
}

/// The analysis of `result` once its paths are there (`built`: they were just built, so
/// the declared hops go on them even when `declared` is empty).
fn analyse_built(result: &mut RunResult, declared: &DeclaredPath, facts: &HostFacts, built: bool) {
    if built || !declared.is_empty() {
        let routes = declared::routes(&result.paths);
        for ((path, target), route) in result.paths.iter_mut().zip(&result.targets).zip(&routes) {
            let protocol = path::storage_protocol(target, path);
            declared::apply(path, declared, protocol.as_deref(), route.as_ref());
        }
    }
    let (targets, paths) = (&result.targets, &result.paths);
    for test in &mut result.tests {
        // A confirming experiment was measured, not derived: analysing again keeps it.
        let confirmation = test.analysis.take().and_then(|old| old.confirmation);
        let mut analysis = verdict::analyse_test(test, targets, paths, facts);
        analysis.confirmation = confirmation;
        server::judge(&mut analysis, test);
        test.analysis = Some(analysis);
    }
    // A run from several clients: the verdict across them (nothing for one client).
    clients::analyse_clients(result, declared);
}

/// What the host a saved result was measured on knew of itself, read back from the result:
/// the memory available when it was analysed, and its memory copy bandwidth (the capacity of
/// its page cache hop). An analysis run again from the result uses these, not this host's.
pub fn host_facts_of(result: &RunResult) -> HostFacts {
    let memory_available_bytes = result
        .tests
        .iter()
        .find_map(|test| test.analysis.as_ref()?.memory_available_bytes);
    let memory_copy_bytes_per_second = result
        .paths
        .iter()
        .flat_map(|path| &path.hops)
        .filter(|hop| {
            matches!(
                hop.kind,
                crate::result::HopKind::PageCache | crate::result::HopKind::Memory
            )
        })
        .find_map(|hop| Some(hop.capacity.as_ref()?.payload_bytes_per_second));
    HostFacts {
        memory_copy_bytes_per_second,
        memory_available_bytes,
        // The run's write-back settings are in its page cache hop's description.
        dirty_limits: None,
    }
}

/// The path of one target with `declared` hops added: what `iopath path TARGET` shows.
pub fn describe_path(
    target: &TargetInfo,
    declared: &DeclaredPath,
    facts: &HostFacts,
) -> StoragePath {
    describe_path_on(target, declared, facts, &Machine::this_host())
}

/// [`describe_path`] on `machine` (this host, a recorded one, or one being recorded).
pub fn describe_path_on(
    target: &TargetInfo,
    declared: &DeclaredPath,
    facts: &HostFacts,
    machine: &Machine,
) -> StoragePath {
    let mut path = path::discover_on(target, facts, machine);
    let protocol = path::storage_protocol(target, &path);
    declared::apply(&mut path, declared, protocol.as_deref(), None);
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StopSignal;
    use crate::report::json::{read_json, write_json};
    use crate::report::text::write_text;
    use crate::result::{HopKind, HopOrigin, RunLength};
    use crate::run::{RunObserver, RunOptions, execute, prepare};
    use crate::targets::TargetSpec;
    use crate::workload::suite::base_workload;
    use crate::workload::{BlockSizeMix, Plan, TestPlan};

    struct Quiet;
    impl RunObserver for Quiet {}

    #[test]
    fn a_real_run_is_analysed_printed_and_saved() {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        let directory = if base.is_dir() {
            tempfile::tempdir_in(base).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let mut workload = base_workload();
        workload.set_simple(&BlockSizeMix::single(4096), 100, 100, 4096);
        workload.engine = crate::result::EngineKind::Sync;
        workload.ramp_ns = 0;
        workload.length = RunLength::Time {
            duration_ns: 2_000_000_000,
        };
        let plan = Plan {
            targets: vec![TargetSpec::Path {
                path: directory.path().join("f.dat"),
                create_size: Some(16 << 20),
            }],
            tests: vec![TestPlan::single("RND4K Q1", workload, vec![0])],
        };
        let prepared = prepare(plan, RunOptions::default(), false).unwrap();
        let mut result = execute(prepared, &StopSignal::new(), &mut Quiet)
            .unwrap()
            .result;
        let declared = DeclaredPath::from_flags(&["1gbe".into()], &[]).unwrap();
        analyse_with(&mut result, &declared, &test_support::facts());

        assert_eq!(result.paths.len(), 1);
        let path = &result.paths[0];
        assert_eq!(path.hops[0].kind, HopKind::File);
        assert_eq!(path.hops.last().unwrap().origin, HopOrigin::Declared);
        let analysis = result.tests[0].analysis.as_ref().expect("analysed");
        assert!(!analysis.evidence.is_empty());
        assert_eq!(analysis.queue.configured_outstanding, 1);
        assert!(analysis.hops.iter().any(|hop| hop.hop_key == "declared:0"));
        assert!(analysis.confidence.read.bytes_per_second.is_some());

        let mut text = Vec::new();
        write_text(
            crate::report::model::Report::of_run(&result).run(),
            &mut text,
        )
        .unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("verdict"), "{text}");
        assert!(text.contains(" ± "), "{text}");
        let line = format!("RND4K Q1: {} — ", analysis.verdict.name());
        assert!(text.contains(&line), "{text}");

        let mut json = Vec::new();
        write_json(&result, &mut json).unwrap();
        let back = read_json(std::str::from_utf8(&json).unwrap()).unwrap();
        assert_eq!(back.paths, result.paths);
        let saved = back.tests[0].analysis.as_ref().expect("saved");
        assert_eq!(saved.verdict, analysis.verdict);
        assert_eq!(saved.evidence, analysis.evidence);
        assert_eq!(saved.trust_notes, analysis.trust_notes);
        assert_eq!(saved.hops.len(), analysis.hops.len());

        // Analysing a saved result again keeps its paths and swaps the declared hops.
        let mut again = back.clone();
        let other = DeclaredPath::from_flags(&["10gbe".into()], &[]).unwrap();
        analyse_with(&mut again, &other, &test_support::facts());
        assert_eq!(again.paths[0].hops.last().unwrap().name, "10GbE");
        assert_eq!(again.paths[0].hops.len(), back.paths[0].hops.len());
    }
}
