//! One row of the `runs` table and the targets beside it, as both kinds of run are kept:
//! an `iopath run` result (kind `run`, with its tests in `run_tests`) and an `iopath pts` one
//! (kind `pts`). The JSON is checked against the limit of a result file before anything is
//! written: a result that could not be read back is not kept.

use super::HistoryError;
use crate::gate::read::FileLimit;
use crate::host::time::parse_rfc3339;
use crate::result::TargetInfo;
use crate::result::target_groups::group;
use rusqlite::types::Value;
use rusqlite::{Transaction, params, params_from_iter};
use std::borrow::Cow;

/// The columns of one run.
pub(super) struct RunRow<'a> {
    /// `run` or `pts`.
    pub kind: &'static str,
    /// Start, RFC 3339 UTC.
    pub started_at: &'a str,
    /// `--label`.
    pub label: Option<&'a str>,
    /// Host name.
    pub host: &'a str,
    /// Target paths, a run of alike files as one entry ([`target_entries`]).
    pub targets: Vec<Cow<'a, str>>,
    /// Test names, as listed.
    pub tests: String,
    /// How many tests.
    pub test_count: usize,
    /// Best throughput, bytes per second.
    pub best_bytes_per_second: f64,
    /// Best IOPS.
    pub best_iops: f64,
    /// Verdicts, each once.
    pub verdicts: Vec<&'a str>,
    /// Cut short.
    pub partial: bool,
    /// Version of the iopath that ran it.
    pub iopath_version: &'a str,
    /// The whole result.
    pub json: String,
}

/// The targets of a run as the history lists and finds them: one entry per run of alike
/// files, as a saved result groups them ([`crate::result::target_groups`]) — a lone target's
/// path, or a run's first path and how many more files follow it (`/data/job.0.0 (+9999
/// more)`; `… more in DIRECTORY/` when the first path is not in their directory). A run of 100 000 files of one job keeps one
/// entry, not 100 000; its full list stays in the stored result.
pub(super) fn target_entries(targets: &[TargetInfo]) -> Vec<Cow<'_, str>> {
    let (stored, _) = group(targets, &[]);
    let mut start = 0;
    stored
        .iter()
        .map(|entry| {
            let first = targets[start].path.as_str();
            let Some(alike) = &entry.alike else {
                start += 1;
                return Cow::Borrowed(first);
            };
            let more = alike.files.len();
            start += 1 + more;
            // The files' directory, where the first path does not already say it.
            Cow::Owned(if first.starts_with(&alike.prefix) {
                format!("{first} (+{more} more)")
            } else {
                format!("{first} (+{more} more in {})", alike.prefix)
            })
        })
        .collect()
}

/// `result` as JSON, refused past [`FileLimit::RESULT_FILE`] (it could not be read back).
pub(super) fn checked_json(result: &impl serde::Serialize) -> Result<String, HistoryError> {
    let json = serde_json::to_string(result)?;
    let limit = FileLimit::RESULT_FILE;
    if json.len() as u64 > limit.max_bytes {
        return Err(HistoryError::TooLarge { id: 0, limit });
    }
    Ok(json)
}

impl RunRow<'_> {
    /// The columns a resumed run replaces ([`super::resumed_pts::replace`]) and an insert
    /// writes beside the run's identity (start, host, targets, kind): one list for both.
    pub(super) fn figures(&self) -> [(&'static str, Value); 8] {
        [
            ("label", self.label.map(str::to_owned).into()),
            ("tests", self.tests.clone().into()),
            ("test_count", (self.test_count as i64).into()),
            ("best_bytes_per_second", self.best_bytes_per_second.into()),
            ("best_iops", self.best_iops.into()),
            ("verdicts", self.verdicts.join(", ").into()),
            ("partial", i64::from(self.partial).into()),
            ("iopath_version", self.iopath_version.to_owned().into()),
        ]
    }
}

/// Inserts `row` and its targets; returns the run's number.
pub(super) fn insert(transaction: &Transaction<'_>, row: &RunRow<'_>) -> Result<i64, HistoryError> {
    let mut columns: Vec<(&str, Value)> = vec![
        ("started_at", row.started_at.to_owned().into()),
        (
            "started_epoch_seconds",
            (parse_rfc3339(row.started_at).unwrap_or(0) as i64).into(),
        ),
        ("host", row.host.to_owned().into()),
        ("targets", row.targets.join(", ").into()),
        ("result_json", row.json.clone().into()),
        ("kind", row.kind.to_owned().into()),
    ];
    columns.extend(row.figures());
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    let places: Vec<String> = (1..=columns.len()).map(|n| format!("?{n}")).collect();
    transaction.execute(
        &format!(
            "INSERT INTO runs ({}) VALUES ({})",
            names.join(", "),
            places.join(", ")
        ),
        params_from_iter(columns.into_iter().map(|(_, value)| value)),
    )?;
    let id = transaction.last_insert_rowid();
    for target in &row.targets {
        transaction.execute(
            "INSERT INTO run_targets (run_id, path) VALUES (?1, ?2)",
            params![id, target],
        )?;
    }
    Ok(id)
}
