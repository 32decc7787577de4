//! The history database's schema, as a list of migrations. `PRAGMA user_version` holds how
//! many of them a database has had; opening one runs the rest, in one transaction taken with
//! a write lock (`BEGIN IMMEDIATE`), so two processes opening a new database at once migrate
//! it once. A database with a higher version was written by a newer iopath and is refused.

use super::HistoryError;
use rusqlite::{Connection, TransactionBehavior};

/// Every migration, oldest first: the database's `user_version` is how many have run.
/// Append only; never edit one that has shipped.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs with their indexed figures, their targets and tests.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at TEXT NOT NULL,
        started_epoch_seconds INTEGER NOT NULL,
        label TEXT,
        host TEXT NOT NULL,
        targets TEXT NOT NULL,
        tests TEXT NOT NULL,
        test_count INTEGER NOT NULL,
        best_bytes_per_second REAL NOT NULL,
        best_iops REAL NOT NULL,
        verdicts TEXT NOT NULL,
        partial INTEGER NOT NULL,
        iopath_version TEXT NOT NULL,
        result_json TEXT NOT NULL
    );
    CREATE INDEX runs_by_time ON runs (started_epoch_seconds);
    CREATE INDEX runs_by_label ON runs (label);
    CREATE TABLE run_targets (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        path TEXT NOT NULL
    );
    CREATE INDEX run_targets_by_path ON run_targets (path);
    CREATE TABLE run_tests (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        bytes_per_second REAL NOT NULL,
        iops REAL NOT NULL,
        mean_latency_ns REAL NOT NULL,
        p99_latency_ns INTEGER NOT NULL,
        verdict TEXT
    );
    CREATE INDEX run_tests_by_name ON run_tests (name);",
    // 2: what a run holds: an `iopath run` result (`run`) or an `iopath pts` one (`pts`).
    "ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'run';",
];

/// The schema version this iopath writes: the number of migrations.
pub fn current_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// Brings the database to [`current_version`], or refuses one from a newer iopath.
pub fn migrate(connection: &mut Connection) -> Result<(), HistoryError> {
    let known = current_version();
    if read_version(connection)? == known {
        return Ok(());
    }
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Read again under the write lock: another process may have migrated meanwhile.
    let found = read_version(&transaction)?;
    if found > known {
        return Err(HistoryError::Newer { found, known });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        transaction.execute_batch(migration)?;
        transaction.pragma_update(None, "user_version", index as u32 + 1)?;
    }
    transaction.commit()?;
    Ok(())
}

/// Checks that a reader that never migrates can read a database of `version`: the current
/// one. An empty database (version 0) has no runs yet; a newer one is refused.
pub fn check_readable(version: u32) -> Result<(), HistoryError> {
    let known = current_version();
    match version {
        0 => Err(HistoryError::Missing),
        found if found > known => Err(HistoryError::Newer { found, known }),
        found if found < known => Err(HistoryError::Older { found, known }),
        _ => Ok(()),
    }
}

/// The database's `user_version`.
pub fn read_version(connection: &Connection) -> Result<u32, HistoryError> {
    Ok(connection.pragma_query_value(None, "user_version", |row| row.get(0))?)
}
