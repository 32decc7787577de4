//! One row of the `runs` table and the targets beside it, as both kinds of run are kept:
//! an `iopath run` result (kind `run`, with its tests in `run_tests`) and an `iopath pts` one
//! (kind `pts`). The JSON is checked against the limit of a result file before anything is
//! written: a result that could not be read back is not kept.

use super::HistoryError;
use crate::gate::read::FileLimit;
use crate::host::time::parse_rfc3339;
use crate::result::TargetInfo;
use crate::result::target_groups::group;
use rusqlite::{Transaction, params};
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

/// Inserts `row` and its targets; returns the run's number.
pub(super) fn insert(transaction: &Transaction<'_>, row: &RunRow<'_>) -> Result<i64, HistoryError> {
    transaction.execute(
        "INSERT INTO runs (started_at, started_epoch_seconds, label, host, targets, tests,
            test_count, best_bytes_per_second, best_iops, verdicts, partial, iopath_version,
            result_json, kind)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            row.started_at,
            parse_rfc3339(row.started_at).unwrap_or(0) as i64,
            row.label,
            row.host,
            row.targets.join(", "),
            row.tests,
            row.test_count as i64,
            row.best_bytes_per_second,
            row.best_iops,
            row.verdicts.join(", "),
            row.partial,
            row.iopath_version,
            row.json,
            row.kind,
        ],
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
