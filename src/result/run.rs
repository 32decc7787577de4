//! The run as a whole: schema version, who wrote it and when, the host, the targets, every
//! test, the link tests and the storage path of every target.

use super::cluster::ClusterResult;
use super::host::HostInfo;
use super::link::LinkTestResult;
use super::path::StoragePath;
use super::target::TargetInfo;
use super::test::TestResult;
use serde::{Deserialize, Serialize};

/// Version of this schema; raised on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One run of iopath: every test it ran and everything found about the host and targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// [`SCHEMA_VERSION`] of the writer.
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
    #[serde(default)]
    pub link_tests: Vec<LinkTestResult>,
    /// The storage path of every target, same order as [`RunResult::targets`] (filled by the
    /// analysis; empty when it did not run).
    #[serde(default)]
    pub paths: Vec<StoragePath>,
    /// The clients of a multi-client run (absent for a run from one process): the tests then
    /// hold every client's figures merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterResult>,
}
