//! A resumed `iopath pts` run is one run: its interruption kept a partial row (same start,
//! host and target, `partial` set), and the resumed run replaces that row's figures and
//! result in place. The row keeps its number, so `@ID` of the interrupted run names the
//! whole run, and it keeps its place in the list (by start); its targets are the same and
//! stay as they are.

use super::HistoryError;
use super::run_row::RunRow;
use crate::result::pts::PtsResult;
use rusqlite::types::Value;
use rusqlite::{Transaction, params, params_from_iter};

/// The number of the partial row that `result`'s interruption left, if there is one: a
/// `pts` row marked partial with the same start and host whose result tested the same
/// target.
pub(super) fn interrupted_row(
    transaction: &Transaction<'_>,
    result: &PtsResult,
) -> Result<Option<i64>, HistoryError> {
    let mut statement = transaction.prepare(
        "SELECT id, result_json FROM runs
         WHERE kind = 'pts' AND partial = 1 AND started_at = ?1 AND host = ?2
         ORDER BY id DESC",
    )?;
    let mut rows = statement.query(params![result.started_at, result.conditions.host])?;
    while let Some(row) = rows.next()? {
        let json: String = row.get(1)?;
        let same_target = serde_json::from_str::<PtsResult>(&json)
            .is_ok_and(|kept| kept.conditions.target.path == result.conditions.target.path);
        if same_target {
            return Ok(Some(row.get(0)?));
        }
    }
    Ok(None)
}

/// Replaces the figures and the result of row `id` by those of `row`.
pub(super) fn replace(
    transaction: &Transaction<'_>,
    id: i64,
    row: &RunRow<'_>,
) -> Result<(), HistoryError> {
    let mut columns: Vec<(&str, Value)> = vec![("id", id.into())];
    columns.extend(row.figures());
    columns.push(("result_json", row.json.clone().into()));
    let assignments: Vec<String> = columns
        .iter()
        .enumerate()
        .skip(1)
        .map(|(index, (name, _))| format!("{name} = ?{}", index + 1))
        .collect();
    let changed = transaction.execute(
        &format!(
            "UPDATE runs SET {} WHERE id = ?1 AND kind = 'pts'",
            assignments.join(", ")
        ),
        params_from_iter(columns.into_iter().map(|(_, value)| value)),
    )?;
    if changed == 1 {
        Ok(())
    } else {
        Err(HistoryError::NoSuchRun(format!("@{id}")))
    }
}
