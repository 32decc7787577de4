//! The run history: every `iopath run` and `iopath pts` kept in a local SQLite database, with
//! its full result (a RunResult or a PtsResult, as JSON, and which in `kind`) and indexed
//! columns to list and find runs by (time, label, host, targets, tests, headline figures,
//! verdicts).
//!
//! The database lives at `$IOPATH_HISTORY`, else `$XDG_DATA_HOME/iopath/history.sqlite`, else
//! `~/.local/share/iopath/history.sqlite` ([`location`]), opened through the gate
//! ([`crate::gate::database`]): only a regular file, never a device or a FIFO, directly or
//! through a link. It is in WAL mode with a busy timeout, and every write is one
//! `BEGIN IMMEDIATE` transaction, so runs that finish at once wait for each other and none is
//! lost. Readers (`iopath history`, `@last`) open it read-only and never migrate it. Its schema grows by migrations ([`schema`]); a
//! database from a newer iopath is refused, and one that is damaged is reported, never
//! replaced.
//!
//! ```
//! use iopath::history::{Filter, History};
//! let dir = tempfile::tempdir().unwrap();
//! let history = History::open_or_create(&dir.path().join("history.sqlite")).unwrap();
//! assert!(history.list(&Filter::default()).unwrap().is_empty());
//! ```

pub mod reference;
mod resumed_pts;
mod run_row;
pub mod schema;
pub mod trend;

use crate::gate::database::{
    DatabaseAccess, DatabasePathError, check_database_path, open_database,
};
use crate::gate::read::FileLimit;
use crate::host::time::{days_from_civil, parse_rfc3339};
use crate::report::json::read_json;
use crate::result::RunResult;
use crate::result::pts::{PTS_SCHEMA_VERSION, PtsResult};
use reference::Reference;
use run_row::RunRow;
use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one to finish before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the history could not be used. Messages do not name the database: the caller does.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Neither `IOPATH_HISTORY`, `XDG_DATA_HOME` nor `HOME` is set.
    #[error("no place for the history: set IOPATH_HISTORY (or XDG_DATA_HOME or HOME)")]
    NoLocation,
    /// No run has been recorded yet.
    #[error("no history yet: no run has been recorded")]
    Missing,
    /// Written by a newer iopath.
    #[error(
        "written by a newer iopath (history schema version {found}; this iopath knows up to \
         {known}): use that iopath, or move IOPATH_HISTORY elsewhere"
    )]
    Newer {
        /// The database's version.
        found: u32,
        /// The newest version this iopath knows.
        known: u32,
    },
    /// Not a database, or a damaged one. It is left as it is.
    #[error("damaged or not an SQLite database ({0}); it was left untouched: move it away")]
    Corrupt(String),
    /// Any other SQLite error.
    #[error("{0}")]
    Sqlite(rusqlite::Error),
    /// Creating its directory failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The path is not a regular file (a device, a FIFO, a directory, a link to one), or a
    /// journal beside it is not: nothing was opened or written.
    #[error("{0}")]
    NotAFile(DatabasePathError),
    /// Written by an older iopath: a run brings it up to date; reading never changes it.
    #[error(
        "written by an older iopath (history schema version {found}; this iopath reads \
         {known}): a run with this iopath brings it up to date"
    )]
    Older {
        /// The database's version.
        found: u32,
        /// The version this iopath reads.
        known: u32,
    },
    /// A reference that is not `@last`, `@-N`, `@label:NAME` or `@ID`.
    #[error("{0}: not a history reference (use @last, @-N, @label:NAME or @ID)")]
    BadReference(String),
    /// A reference that names no run.
    #[error("{0}: no such run in the history")]
    NoSuchRun(String),
    /// A result past the limit for a result file (stored, or about to be).
    #[error("{}its result is larger than {limit}", if *id > 0 { format!("run {id}: ") } else { String::new() })]
    TooLarge {
        /// The run (0 for one not stored).
        id: i64,
        /// The limit.
        limit: FileLimit,
    },
    /// A stored result that cannot be read back.
    #[error("run {id}: {error}")]
    Stored {
        /// The run.
        id: i64,
        /// Why.
        error: crate::report::json::ReadError,
    },
    /// A result that cannot be written as JSON.
    #[error("cannot store the result: {0}")]
    Json(#[from] serde_json::Error),
    /// A run of `iopath pts` named where an `iopath run` result is needed.
    #[error(
        "run {id} is an `iopath pts` run: `iopath report @{id} -o FILE` draws it (compare, \
         explain and trend take `iopath run` results)"
    )]
    PtsRun {
        /// The run.
        id: i64,
    },
    /// A stored PTS result that cannot be read back.
    #[error("run {id}: not a PTS result this iopath reads: {error}")]
    StoredPts {
        /// The run.
        id: i64,
        /// Why.
        error: String,
    },
    /// A `--since` that is not a date, a time or an age.
    #[error("{0}: not a date (2026-11-30), a time (2026-11-30T08:00:00Z) or an age (12h, 7d)")]
    BadSince(String),
}

impl From<rusqlite::Error> for HistoryError {
    fn from(error: rusqlite::Error) -> Self {
        match error.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                HistoryError::Corrupt(error.to_string())
            }
            _ => HistoryError::Sqlite(error),
        }
    }
}

impl From<DatabasePathError> for HistoryError {
    fn from(error: DatabasePathError) -> Self {
        match error {
            DatabasePathError::Missing => HistoryError::Missing,
            DatabasePathError::Io(error) => HistoryError::Io(error),
            DatabasePathError::Sqlite(error) => error.into(),
            refused => HistoryError::NotAFile(refused),
        }
    }
}

/// Where the history is kept, from the environment as `variable` reads it: `IOPATH_HISTORY`,
/// else `XDG_DATA_HOME/iopath/history.sqlite` (when absolute), else
/// `HOME/.local/share/iopath/history.sqlite`.
///
/// ```
/// use iopath::history::location;
/// let path = location(|name| (name == "HOME").then(|| "/home/u".into())).unwrap();
/// assert_eq!(path.to_str().unwrap(), "/home/u/.local/share/iopath/history.sqlite");
/// ```
pub fn location(variable: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, HistoryError> {
    let set = |name: &str| variable(name).filter(|value| !value.is_empty());
    if let Some(path) = set("IOPATH_HISTORY") {
        return Ok(PathBuf::from(path));
    }
    let data_home = set("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| set("HOME").map(|home| Path::new(&home).join(".local/share")))
        .ok_or(HistoryError::NoLocation)?;
    Ok(data_home.join("iopath").join("history.sqlite"))
}

/// One run as `iopath history` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Its number (`@ID`).
    pub id: i64,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// `--label`.
    pub label: Option<String>,
    /// Host name.
    pub host: String,
    /// Target paths, comma-separated.
    pub targets: String,
    /// Test names, comma-separated.
    pub tests: String,
    /// How many tests.
    pub test_count: u32,
    /// The highest throughput of its tests, bytes per second.
    pub best_bytes_per_second: f64,
    /// The highest IOPS of its tests.
    pub best_iops: f64,
    /// The verdicts of its tests, each once, comma-separated (empty when not analysed).
    pub verdicts: String,
    /// The run was cut short.
    pub partial: bool,
    /// An `iopath pts` run (its tests are the PTS tests; `tests` names them).
    pub pts: bool,
}

/// What one run of the history holds.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredResult {
    /// An `iopath run` result.
    Run(Box<RunResult>),
    /// An `iopath pts` result.
    Pts(Box<PtsResult>),
}

/// Which runs `iopath history` lists.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// Runs with a target whose path contains this.
    pub target: Option<String>,
    /// Runs with exactly this label.
    pub label: Option<String>,
    /// Runs started at or after this time, seconds since the epoch.
    pub since_epoch_seconds: Option<u64>,
    /// At most this many runs, the newest (all when `None`).
    pub limit: Option<u32>,
}

/// An open history database.
pub struct History {
    connection: Connection,
}

impl History {
    /// Opens the database at `path` to record runs, creating it (and its directory) when
    /// missing, and brings its schema up to date.
    pub fn open_or_create(path: &Path) -> Result<History, HistoryError> {
        Self::open_with(path, DatabaseAccess::ReadWriteCreate)
    }

    /// Opens the existing database at `path` read-only, to read runs
    /// ([`HistoryError::Missing`] when there is none): nothing is created, switched or
    /// migrated, so a copy on a read-only file system reads as well.
    pub fn open_existing(path: &Path) -> Result<History, HistoryError> {
        Self::open_with(path, DatabaseAccess::ReadOnly)
    }

    /// Checks, without opening or creating anything, that `path` can hold the history: a
    /// regular file (or a link to one) or missing, with no journal beside it that is anything
    /// else. A run checks this before any I/O.
    pub fn check_location(path: &Path) -> Result<(), HistoryError> {
        check_database_path(path, DatabaseAccess::ReadWriteCreate)?;
        Ok(())
    }

    /// Opens, and for a writer switches to WAL and migrates, again while another process
    /// holds the lock that needs: SQLite answers "database is locked" at once, without its
    /// busy handler, when two connections change the journal mode of a new database
    /// together. Bounded by [`BUSY_TIMEOUT`] as a whole.
    fn open_with(path: &Path, access: DatabaseAccess) -> Result<History, HistoryError> {
        let began = std::time::Instant::now();
        loop {
            match Self::open_once(path, access) {
                Err(HistoryError::Sqlite(rusqlite::Error::SqliteFailure(failure, _)))
                    if failure.code == rusqlite::ErrorCode::DatabaseBusy
                        && began.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    fn open_once(path: &Path, access: DatabaseAccess) -> Result<History, HistoryError> {
        let mut connection = open_database(path, access)?;
        connection.busy_timeout(BUSY_TIMEOUT)?;
        // The first read of the file: a damaged one or another kind of file fails here.
        let version = schema::read_version(&connection)?;
        match access {
            DatabaseAccess::ReadWriteCreate => {
                let _mode: String =
                    connection
                        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
                schema::migrate(&mut connection)?;
            }
            DatabaseAccess::ReadOnly => schema::check_readable(version)?,
        }
        Ok(History { connection })
    }

    /// Stores `result`; returns its number. A result whose JSON is larger than
    /// [`FileLimit::RESULT_FILE`] is refused: it could not be read back.
    pub fn record(&mut self, result: &RunResult) -> Result<i64, HistoryError> {
        let json = run_row::checked_json(result)?;
        let best = |figure: fn(&crate::result::TestResult) -> f64| {
            result.tests.iter().map(figure).fold(0.0, f64::max)
        };
        let mut verdicts: Vec<&str> = Vec::new();
        for test in &result.tests {
            if let Some(analysis) = &test.analysis
                && !verdicts.contains(&analysis.verdict.name())
            {
                verdicts.push(analysis.verdict.name());
            }
        }
        let tests: Vec<&str> = result.tests.iter().map(|t| t.name.as_str()).collect();
        let row = RunRow {
            kind: "run",
            started_at: &result.started_at,
            label: result.label.as_deref(),
            host: &result.host.hostname,
            targets: run_row::target_entries(&result.targets),
            tests: tests.join(", "),
            test_count: tests.len(),
            best_bytes_per_second: best(|t| t.total.bytes_per_second),
            best_iops: best(|t| t.total.iops),
            verdicts,
            partial: result.partial,
            iopath_version: &result.iopath_version,
            json,
        };
        self.insert(&row, |transaction, id| {
            for (position, test) in result.tests.iter().enumerate() {
                transaction.execute(
                    "INSERT INTO run_tests (run_id, position, name, bytes_per_second, iops,
                    mean_latency_ns, p99_latency_ns, verdict)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        id,
                        position as i64,
                        test.name,
                        test.total.bytes_per_second,
                        test.total.iops,
                        test.total.latency.mean_ns,
                        test.total.latency.percentile("99") as i64,
                        test.analysis.as_ref().map(|a| a.verdict.name()),
                    ],
                )?;
            }
            Ok(())
        })
    }

    /// Inserts `row` and its targets, and what `more` adds for the new run's number, in one
    /// transaction taken with the write lock; returns the number.
    fn insert(
        &mut self,
        row: &RunRow<'_>,
        more: impl FnOnce(&rusqlite::Transaction<'_>, i64) -> Result<(), HistoryError>,
    ) -> Result<i64, HistoryError> {
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let id = run_row::insert(&transaction, row)?;
        more(&transaction, id)?;
        transaction.commit()?;
        Ok(id)
    }

    /// Stores the result of an `iopath pts` run (kind `pts`): listed with its tests' names, the
    /// best MB/s and IOPS of any element, and each test's outcome (and rate step) as its
    /// verdicts; read back by [`History::load_any`]. Refused past [`FileLimit::RESULT_FILE`].
    /// A resumed run replaces the partial row its interruption left, and keeps its number
    /// (the `resumed_pts` module): it is kept once.
    pub fn record_pts(&mut self, result: &PtsResult) -> Result<i64, HistoryError> {
        let json = run_row::checked_json(result)?;
        let titles: Vec<&str> = result.tests.iter().map(|test| test.kind.title()).collect();
        let cells = || {
            result
                .tests
                .iter()
                .flat_map(|test| test.rounds.iter().flat_map(|round| round.cells.iter()))
        };
        let mut verdicts: Vec<&str> = Vec::new();
        for test in &result.tests {
            let step = test.rate_step.as_ref().map(|step| step.name());
            for word in std::iter::once(test.outcome.name()).chain(step) {
                if !verdicts.contains(&word) {
                    verdicts.push(word);
                }
            }
        }
        let row = RunRow {
            kind: "pts",
            started_at: &result.started_at,
            label: result.label.as_deref(),
            host: &result.conditions.host,
            targets: vec![result.conditions.target.path.as_str().into()],
            tests: format!(
                "PTS {}: {}",
                result.conditions.edition.name(),
                titles.join(", ")
            ),
            test_count: result.tests.len(),
            best_bytes_per_second: cells()
                .map(|cell| cell.read_bytes_per_second + cell.write_bytes_per_second)
                .fold(0.0, f64::max),
            best_iops: cells().map(|cell| cell.iops).fold(0.0, f64::max),
            verdicts,
            partial: !result.complete,
            iopath_version: &result.iopath_version,
            json,
        };
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let id = match resumed_pts::interrupted_row(&transaction, result)? {
            Some(id) => {
                resumed_pts::replace(&transaction, id, &row)?;
                id
            }
            None => run_row::insert(&transaction, &row)?,
        };
        transaction.commit()?;
        Ok(id)
    }

    /// The runs `filter` selects, newest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<RunSummary>, HistoryError> {
        self.select(filter, None)
    }

    /// The runs `filter` selects that hold a test named `test`, oldest first (the newest
    /// `filter.limit` of them).
    pub fn runs_with_test(
        &self,
        test: &str,
        filter: &Filter,
    ) -> Result<Vec<RunSummary>, HistoryError> {
        let mut runs = self.select(filter, Some(test))?;
        runs.reverse();
        Ok(runs)
    }

    fn select(&self, filter: &Filter, test: Option<&str>) -> Result<Vec<RunSummary>, HistoryError> {
        let mut statement = self.connection.prepare(
            "SELECT id, started_at, label, host, targets, tests, test_count,
                    best_bytes_per_second, best_iops, verdicts, partial, kind = 'pts'
             FROM runs
             WHERE (?1 IS NULL OR EXISTS (SELECT 1 FROM run_targets t
                                          WHERE t.run_id = runs.id AND instr(t.path, ?1) > 0))
               AND (?2 IS NULL OR label = ?2)
               AND (?3 IS NULL OR started_epoch_seconds >= ?3)
               AND (?5 IS NULL OR EXISTS (SELECT 1 FROM run_tests t
                                          WHERE t.run_id = runs.id AND t.name = ?5))
             ORDER BY id DESC
             LIMIT ?4",
        )?;
        let since = filter.since_epoch_seconds.map(|s| s as i64);
        let limit = filter.limit.map_or(-1, i64::from);
        let rows = statement.query_map(
            params![filter.target, filter.label, since, limit, test],
            |row| {
                Ok(RunSummary {
                    id: row.get(0)?,
                    started_at: row.get(1)?,
                    label: row.get(2)?,
                    host: row.get(3)?,
                    targets: row.get(4)?,
                    tests: row.get(5)?,
                    test_count: row.get(6)?,
                    best_bytes_per_second: row.get(7)?,
                    best_iops: row.get(8)?,
                    verdicts: row.get(9)?,
                    partial: row.get(10)?,
                    pts: row.get(11)?,
                })
            },
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The number of the run `reference` names (`argument` is the reference as given, for
    /// messages).
    pub fn resolve(&self, reference: &Reference, argument: &str) -> Result<i64, HistoryError> {
        let found: Option<i64> = match reference {
            Reference::Back(back) => self
                .connection
                .query_row(
                    "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1",
                    [i64::from(*back)],
                    |row| row.get(0),
                )
                .optional()?,
            Reference::Label(label) => self
                .connection
                .query_row(
                    "SELECT id FROM runs WHERE label = ?1 ORDER BY id DESC LIMIT 1",
                    [label],
                    |row| row.get(0),
                )
                .optional()?,
            Reference::Id(id) => self
                .connection
                .query_row("SELECT id FROM runs WHERE id = ?1", [id], |row| row.get(0))
                .optional()?,
        };
        found.ok_or_else(|| HistoryError::NoSuchRun(argument.to_string()))
    }

    /// The full result of run `id`, an `iopath run` one or an `iopath pts` one.
    pub fn load_any(&self, id: i64) -> Result<StoredResult, HistoryError> {
        if !self.is_pts(id)? {
            return Ok(StoredResult::Run(Box::new(self.load(id)?)));
        }
        let json = self.result_json(id)?;
        let result: PtsResult =
            serde_json::from_str(&json).map_err(|error| HistoryError::StoredPts {
                id,
                error: error.to_string(),
            })?;
        if result.schema_version != PTS_SCHEMA_VERSION {
            return Err(HistoryError::StoredPts {
                id,
                error: format!(
                    "schema version {}; this iopath reads {PTS_SCHEMA_VERSION}",
                    result.schema_version
                ),
            });
        }
        Ok(StoredResult::Pts(Box::new(result)))
    }

    /// Whether run `id` is an `iopath pts` run.
    fn is_pts(&self, id: i64) -> Result<bool, HistoryError> {
        let kind: Option<String> = self
            .connection
            .query_row("SELECT kind FROM runs WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()?;
        let kind = kind.ok_or_else(|| HistoryError::NoSuchRun(format!("@{id}")))?;
        Ok(kind == "pts")
    }

    /// The full result of run `id`, an `iopath run` one ([`HistoryError::PtsRun`] for a PTS
    /// run), refused past [`FileLimit::RESULT_FILE`] like a file.
    pub fn load(&self, id: i64) -> Result<RunResult, HistoryError> {
        if self.is_pts(id)? {
            return Err(HistoryError::PtsRun { id });
        }
        let json = self.result_json(id)?;
        read_json(&json).map_err(|error| HistoryError::Stored { id, error })
    }

    /// The stored JSON of run `id`, refused past [`FileLimit::RESULT_FILE`].
    fn result_json(&self, id: i64) -> Result<String, HistoryError> {
        let limit = FileLimit::RESULT_FILE;
        let length: Option<i64> = self
            .connection
            .query_row(
                "SELECT length(CAST(result_json AS BLOB)) FROM runs WHERE id = ?1",
                [id],
                |row| row.get(0),
            )
            .optional()?;
        let length = length.ok_or_else(|| HistoryError::NoSuchRun(format!("@{id}")))?;
        if length as u64 > limit.max_bytes {
            return Err(HistoryError::TooLarge { id, limit });
        }
        Ok(self.connection.query_row(
            "SELECT result_json FROM runs WHERE id = ?1",
            [id],
            |row| row.get(0),
        )?)
    }
}

/// Reads `--since`: a date (`2026-11-30`, midnight UTC), a time (`2026-11-30T08:00:00Z`) or an
/// age before `now_seconds` (`30m`, `12h`, `7d`, `2w`); seconds since the epoch.
///
/// ```
/// use iopath::history::parse_since;
/// assert_eq!(parse_since("1970-01-02", 0).unwrap(), 86_400);
/// assert_eq!(parse_since("2h", 10_000).unwrap(), 2_800);
/// assert!(parse_since("soon", 0).is_err());
/// ```
pub fn parse_since(text: &str, now_seconds: u64) -> Result<u64, HistoryError> {
    let bad = || HistoryError::BadSince(text.to_string());
    if let Some(seconds) = parse_rfc3339(text) {
        return Ok(seconds);
    }
    let mut date = text.split('-');
    if let (Some(year), Some(month), Some(day), None) =
        (date.next(), date.next(), date.next(), date.next())
    {
        let (year, month, day) = match (year.parse(), month.parse(), day.parse()) {
            (Ok(year), Ok(month @ 1..=12), Ok(day @ 1..=31)) => (year, month, day),
            _ => return Err(bad()),
        };
        return u64::try_from(days_from_civil(year, month, day) * 86_400).map_err(|_| bad());
    }
    let unit_at = text.len().checked_sub(1).ok_or_else(bad)?;
    let (count, unit) = text.split_at(unit_at);
    let unit_seconds = match unit {
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(bad()),
    };
    let count: u64 = count.parse().map_err(|_| bad())?;
    Ok(now_seconds.saturating_sub(count.saturating_mul(unit_seconds)))
}

#[cfg(test)]
mod pts_tests;
#[cfg(test)]
mod tests;
