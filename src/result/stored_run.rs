//! The RunResult as saved: every field as it is in memory, except `targets` and `paths`,
//! whose alike targets are saved once ([`target_groups`](super::target_groups)). Writing
//! borrows the result (nothing is copied); reading expands the targets and paths again.
//!
//! ```
//! use iopath::result::{RunResult, SCHEMA_VERSION};
//! let text = r#"{"schema_version": 1, "iopath_version": "0.1.0", "command_line": [],
//!     "started_at": "2026-12-05T09:00:00Z", "label": null, "partial": false,
//!     "host": {"hostname": "h", "kernel": "6.18", "cpu_model": "c", "cpu_count": 2,
//!              "memory_bytes": 1},
//!     "targets": [], "tests": [], "warnings": []}"#;
//! let result: RunResult = serde_json::from_str(text).unwrap();
//! assert_eq!(result.schema_version, SCHEMA_VERSION);
//! let saved = serde_json::to_value(&result).unwrap();
//! assert_eq!(saved["schema_version"], SCHEMA_VERSION);
//! ```

use super::cluster::ClusterResult;
use super::host::HostInfo;
use super::link::LinkTestResult;
use super::path::StoragePath;
use super::run::{RunResult, SCHEMA_VERSION};
use super::target_groups::{StoredTarget, expand, group};
use super::test::TestResult;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;

/// The saved shape of a [`RunResult`] (see its fields for what each one holds).
#[derive(Serialize, Deserialize)]
struct StoredRun<'a> {
    schema_version: u32,
    iopath_version: Cow<'a, str>,
    command_line: Cow<'a, [String]>,
    started_at: Cow<'a, str>,
    #[serde(default)]
    label: Cow<'a, Option<String>>,
    partial: bool,
    host: Cow<'a, HostInfo>,
    targets: Vec<StoredTarget<'a>>,
    tests: Cow<'a, [TestResult]>,
    warnings: Cow<'a, [String]>,
    #[serde(default)]
    link_tests: Cow<'a, [LinkTestResult]>,
    #[serde(default)]
    paths: Vec<Cow<'a, StoragePath>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cluster: Option<Cow<'a, ClusterResult>>,
}

impl Serialize for RunResult {
    /// Writes the result in this build's schema ([`SCHEMA_VERSION`]), whatever version it
    /// was read from.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (targets, paths) = group(&self.targets, &self.paths);
        StoredRun {
            schema_version: SCHEMA_VERSION,
            iopath_version: Cow::Borrowed(&self.iopath_version),
            command_line: Cow::Borrowed(&self.command_line),
            started_at: Cow::Borrowed(&self.started_at),
            label: Cow::Borrowed(&self.label),
            partial: self.partial,
            host: Cow::Borrowed(&self.host),
            targets,
            tests: Cow::Borrowed(&self.tests),
            warnings: Cow::Borrowed(&self.warnings),
            link_tests: Cow::Borrowed(&self.link_tests),
            paths,
            cluster: self.cluster.as_ref().map(Cow::Borrowed),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RunResult {
    /// Reads a result of any schema version this build knows (the version itself is checked
    /// by the reader of the file, [`read_json`](crate::report::json::read_json)), with every
    /// target and path expanded: in memory it is a result of this build's version.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = StoredRun::deserialize(deserializer)?;
        let (targets, paths) = expand(stored.targets, stored.paths).map_err(D::Error::custom)?;
        Ok(RunResult {
            schema_version: SCHEMA_VERSION,
            iopath_version: stored.iopath_version.into_owned(),
            command_line: stored.command_line.into_owned(),
            started_at: stored.started_at.into_owned(),
            label: stored.label.into_owned(),
            partial: stored.partial,
            host: stored.host.into_owned(),
            targets,
            tests: stored.tests.into_owned(),
            warnings: stored.warnings.into_owned(),
            link_tests: stored.link_tests.into_owned(),
            paths,
            cluster: stored.cluster.map(Cow::into_owned),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::report::json::{read_json, write_json};
    use crate::result::SCHEMA_VERSION;
    use crate::support::fixtures;

    #[test]
    fn results_of_schema_version_1_read_and_save_again_as_they_were() {
        for name in fixtures::NAMES {
            let text = std::fs::read_to_string(fixtures::directory().join(format!("{name}.json")))
                .unwrap();
            assert!(text.contains("\"schema_version\": 1,"), "{name}");
            let old = read_json(&text).unwrap();
            assert_eq!(old.schema_version, SCHEMA_VERSION, "{name}");
            let mut saved = Vec::new();
            write_json(&old, &mut saved).unwrap();
            let again = read_json(std::str::from_utf8(&saved).unwrap()).unwrap();
            assert_eq!(again, old, "{name}");
        }
    }
}
