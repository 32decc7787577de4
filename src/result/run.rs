//! The run as a whole: schema version, who wrote it and when, the host, the targets, every
//! test, the link tests and the storage path of every target.

use super::cluster::ClusterResult;
use super::host::HostInfo;
use super::link::LinkTestResult;
use super::path::StoragePath;
use super::target::TargetInfo;
use super::test::TestResult;

/// Version of this schema; raised on any incompatible change. Version 2 saves alike
/// targets once ([`target_groups`](super::target_groups)) and runs of a job's target indexes
/// as one entry ([`index_runs`](super::index_runs)); version 1 results read as before.
pub const SCHEMA_VERSION: u32 = 2;

/// One run of iopath: every test it ran and everything found about the host and targets.
///
/// In memory it holds every target and every path; saved, alike targets are written once
/// (its `Serialize` and `Deserialize` are in [`stored_run`](super::stored_run)).
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// [`SCHEMA_VERSION`]: a result read from a file of an older version is converted as it
    /// is read, and saved again in this version.
    pub schema_version: u32,
    /// Version of iopath that wrote it.
    pub iopath_version: String,
    /// The command line, argument by argument.
    pub command_line: Vec<String>,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// A label for comparisons (`--label`).
    pub label: Option<String>,
    /// The run was cut short (Ctrl-C or an error); what was measured is kept.
    pub partial: bool,
    /// The machine that ran it.
    pub host: HostInfo,
    /// Every target, as found before the run.
    pub targets: Vec<TargetInfo>,
    /// Every test, in the order run.
    pub tests: Vec<TestResult>,
    /// Run-level warnings (skipped tests, a stop before the end); each test keeps its own
    /// warnings (fallbacks, mappings) in [`TestResult::warnings`].
    pub warnings: Vec<String>,
    /// Link tests (`iopath net`): raw TCP throughput, one entry per direction measured.
    pub link_tests: Vec<LinkTestResult>,
    /// The storage path of every target, same order as [`RunResult::targets`] (filled by the
    /// analysis; empty when it did not run).
    pub paths: Vec<StoragePath>,
    /// The clients of a multi-client run (absent for a run from one process): the tests then
    /// hold every client's figures merged.
    pub cluster: Option<ClusterResult>,
}
