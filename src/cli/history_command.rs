//! `iopath history`: the runs kept in the local history, newest first, with filters; and the
//! history's two other uses on the command line: recording each `iopath run` and `iopath pts`
//! (a failure is a warning, never the run's failure) and reading `@last`, `@-N`, `@label:NAME` and `@ID`
//! wherever a saved result is taken.

use super::exit::{self, Failed, Status, Usage};
use super::messages::for_terminal;
use clap::{Args, Subcommand};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};
use iopath::compare::comparison::FigureDirection;
use iopath::compare::{MetricValue, Outcome};
use iopath::history::reference::Reference;
use iopath::history::trend::{TrendPoint, trend_with_direction};
use iopath::history::{Filter, History, HistoryError, StoredResult, location, parse_since};
use iopath::result::RunResult;
use iopath::result::pts::PtsResult;
use iopath::text::shown;
use iopath::units::{format_count, format_iops, format_latency, format_rate};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Flags of `iopath history`.
#[derive(Debug, Args)]
#[command(after_help = "\
Every `iopath run` and `iopath pts` is kept (unless --no-history) in a local SQLite database
with its full result: $IOPATH_HISTORY, else $XDG_DATA_HOME/iopath/history.sqlite, else
~/.local/share/iopath/history.sqlite. It must be a regular file (or missing): a device, FIFO or
directory there, or a link to one, is refused by runs and readers alike (exit 2, nothing
written). Reading it (history, compare @…, report @…) opens it read-only and never changes it,
so a read-only copy works. Listed newest first: number, start (UTC), label, host, targets, tests,
the best rate and IOPS of its tests, and their verdicts.

Runs are named elsewhere by reference: @last (the newest), @-1 (the one before), @-N,
@label:NAME (the newest with that label), @ID (its number here).

Examples:
  iopath history
  iopath history --label fc --since 7d
  iopath history --target /dev/sdb --since 2026-11-30 --limit 0
  iopath compare @-1 @last
  iopath compare @label:fc @label:iscsi
  iopath report @last -o last.html
  iopath history trend 'randread 4k QD32'   (a test over time: same, better or worse)")]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    /// Which runs to list.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Instead of listing runs: one test's figures over time.
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
}

/// What `iopath history` does besides listing runs.
#[derive(Debug, Subcommand)]
pub enum HistoryAction {
    /// A test's MB/s, IOPS and latency over the runs that hold it, oldest first, each against
    /// the run before it: "same" where the 95 % confidence intervals overlap, "better" or
    /// "worse" where they do not.
    Trend(TrendArgs),
}

/// Flags of `iopath history trend`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  iopath history trend 'randread 4k QD32'
  iopath history trend 'randread 4k QD32' --label nightly --since 30d --fail-if-worse")]
pub struct TrendArgs {
    /// The test's name, as `iopath history` and the run's table show it.
    #[arg(value_name = "TEST")]
    pub test: String,
    /// Which runs to follow.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Exit with status 1 when the newest run is worse than the one before it in any figure
    /// (for CI).
    #[arg(long)]
    pub fail_if_worse: bool,
}

/// The filters of `iopath history` and `iopath history trend`.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Only runs with a target whose path contains this text.
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Only runs with this label (`iopath run --label`).
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Only runs started since a date (2026-11-30), a time (2026-11-30T08:00:00Z, UTC) or an
    /// age (30m, 12h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// At most this many runs, the newest (0: all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: u32,
}

impl FilterArgs {
    /// The library's filter; `--since` read against the clock.
    fn filter(&self) -> Result<Filter, AtHistory> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let since = self
            .since
            .as_deref()
            .map(|text| parse_since(text, now))
            .transpose()
            .map_err(at(Path::new("")))?;
        Ok(Filter {
            target: self.target.clone(),
            label: self.label.clone(),
            since_epoch_seconds: since,
            limit: (self.limit > 0).then_some(self.limit),
        })
    }
}

/// An error of the history at `path`: shown with the database's path where it is about the
/// database.
#[derive(Debug)]
pub struct AtHistory {
    /// The database.
    pub path: PathBuf,
    /// The error.
    pub error: HistoryError,
}

impl std::fmt::Display for AtHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.error {
            HistoryError::BadSince(_) => write!(f, "--since {}", self.error),
            HistoryError::BadReference(_)
            | HistoryError::NoSuchRun(_)
            | HistoryError::PtsRun { .. }
            | HistoryError::NoLocation => {
                write!(f, "{}", self.error)
            }
            _ => write!(f, "history {}: {}", self.path.display(), self.error),
        }
    }
}

impl Status for AtHistory {
    fn status(&self) -> i32 {
        match self.error {
            HistoryError::Sqlite(_) | HistoryError::Io(_) | HistoryError::Json(_) => {
                exit::RUN_FAILED
            }
            _ => exit::BAD_INPUT,
        }
    }
}

impl From<AtHistory> for Box<dyn Status> {
    fn from(error: AtHistory) -> Self {
        Box::new(error)
    }
}

/// Where the history is, from this process's environment.
fn history_path() -> Result<PathBuf, AtHistory> {
    location(|name| std::env::var_os(name)).map_err(|error| AtHistory {
        path: PathBuf::new(),
        error,
    })
}

fn at(path: &Path) -> impl Fn(HistoryError) -> AtHistory + '_ {
    move |error| AtHistory {
        path: path.to_path_buf(),
        error,
    }
}

/// Refuses, before any I/O, a history that names something other than a regular file (a
/// device, a FIFO, a directory, a link to one): a run would otherwise write into it at the
/// end. A history that cannot be placed at all is only warned about when the run ends.
pub fn check_history_location() -> Result<(), AtHistory> {
    let Ok(path) = history_path() else {
        return Ok(());
    };
    match History::check_location(&path) {
        Err(error @ HistoryError::NotAFile(_)) => Err(at(&path)(error)),
        _ => Ok(()),
    }
}

/// Keeps `result` in the history; a failure is printed as a warning and changes nothing else.
pub fn record_run(result: &RunResult) {
    keep(|history| history.record(result));
}

/// Keeps the result of `iopath pts` in the history, as [`record_run`] keeps a run's.
pub fn record_pts(result: &PtsResult) {
    keep(|history| history.record_pts(result));
}

fn keep(record: impl FnOnce(&mut History) -> Result<i64, HistoryError>) {
    let recorded = history_path().and_then(|path| {
        History::open_or_create(&path)
            .and_then(|mut history| record(&mut history))
            .map_err(at(&path))
    });
    if let Err(error) = recorded {
        eprintln!(
            "warning: the run was not kept in the history: {}",
            for_terminal(&error)
        );
    }
}

/// Reads the runs that history references (`@last`, `@-N`, `@label:NAME`, `@ID`) name, in
/// the order given; the history is opened once, and only when there is a reference.
#[derive(Default)]
pub struct Resolver {
    history: Option<(PathBuf, History)>,
}

impl Resolver {
    /// The run `reference` names, with the text of its history entry for labels (`@12`).
    pub fn load(&mut self, reference: &str) -> Result<(String, RunResult), AtHistory> {
        let (path, history, id) = self.find(reference)?;
        let result = history.load(id).map_err(at(path))?;
        Ok((format!("@{id}"), result))
    }

    /// The result `reference` names, an `iopath run` one or an `iopath pts` one.
    pub fn load_any(&mut self, reference: &str) -> Result<StoredResult, AtHistory> {
        let (path, history, id) = self.find(reference)?;
        history.load_any(id).map_err(at(path))
    }

    /// The open history, its path, and the number of the run `reference` names.
    fn find(&mut self, reference: &str) -> Result<(&Path, &History, i64), AtHistory> {
        let parsed = Reference::parse(reference).map_err(at(Path::new("")))?;
        if self.history.is_none() {
            let path = history_path()?;
            let history = History::open_existing(&path).map_err(at(&path))?;
            self.history = Some((path, history));
        }
        let Some((path, history)) = &self.history else {
            return Err(at(Path::new(""))(HistoryError::Missing));
        };
        let id = history.resolve(&parsed, reference).map_err(at(path))?;
        Ok((path.as_path(), history, id))
    }
}

/// Lists the runs, or shows a trend; returns the exit status.
pub fn run(args: &HistoryArgs) -> i32 {
    let done = match &args.action {
        None => list(&args.filter),
        Some(HistoryAction::Trend(trend)) => show_trend(trend),
    };
    match done {
        Ok(status) => status,
        Err(error) => exit::fail(error.as_ref()),
    }
}

/// The history, or `None` when no run has been kept yet (with its path).
fn open_for_reading() -> Result<(PathBuf, Option<History>), AtHistory> {
    let path = history_path()?;
    match History::open_existing(&path) {
        Err(HistoryError::Missing) => Ok((path, None)),
        opened => {
            let history = opened.map_err(at(&path))?;
            Ok((path, Some(history)))
        }
    }
}

fn list(args: &FilterArgs) -> Result<i32, Box<dyn Status>> {
    let filter = args.filter()?;
    let (path, history) = open_for_reading()?;
    let runs = match history {
        None => None,
        Some(history) => Some(history.list(&filter).map_err(at(&path))?),
    };
    let mut out = std::io::stdout().lock();
    let written = match runs {
        None => writeln!(
            out,
            "no run kept yet (the history will be {})",
            for_terminal(path.display())
        ),
        Some(runs) if runs.is_empty() => writeln!(out, "no run in the history matches"),
        Some(runs) => writeln!(out, "{}", runs_table(&runs)),
    };
    finish(written, exit::SUCCESS)
}

fn show_trend(args: &TrendArgs) -> Result<i32, Box<dyn Status>> {
    let filter = args.filter.filter()?;
    let (path, history) = open_for_reading()?;
    let (direction, points) = match &history {
        None => (FigureDirection::Total, Vec::new()),
        Some(history) => trend_with_direction(history, &args.test, &filter).map_err(at(&path))?,
    };
    if points.is_empty() {
        return Err(Box::new(Usage(format!(
            "no run in the history holds a test named \"{}\" (iopath history lists them)",
            args.test
        ))));
    }
    let worse = points
        .last()
        .and_then(|point| point.against_previous.as_ref())
        .is_some_and(|changes| {
            changes
                .metrics
                .iter()
                .any(|change| change.outcome == Outcome::Worse)
        });
    let mut out = std::io::stdout().lock();
    let written = writeln!(
        out,
        "{} ({}), oldest first; each run against the one before it",
        shown(&args.test),
        direction.name()
    )
    .and_then(|()| writeln!(out, "{}", trend_table(&points)));
    let status = if worse && args.fail_if_worse {
        eprintln!("the newest run is worse than the one before it");
        exit::RUN_FAILED
    } else {
        exit::SUCCESS
    };
    finish(written, status)
}

fn finish(written: std::io::Result<()>, status: i32) -> Result<i32, Box<dyn Status>> {
    let mut out = std::io::stdout().lock();
    match written.and_then(|()| out.flush()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Box::new(Failed(format!("writing to stdout: {error}"))))
        }
        _ => Ok(status),
    }
}

fn trend_table(points: &[TrendPoint]) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header([
            "#",
            "started (UTC)",
            "label",
            "MB/s",
            "IOPS",
            "mean",
            "p99",
            "verdict",
            "vs previous",
        ]);
    for point in points {
        let figures = &point.figures;
        let with_interval = |value: &MetricValue, shown: String| match value.half_width_percent() {
            Some(percent) => format!("{shown} ± {percent:.1} %"),
            None => shown,
        };
        let against = match &point.against_previous {
            None => String::new(),
            Some(changes) => changes
                .metrics
                .iter()
                .map(|change| format!("{} {}", change.metric.name(), change.outcome.name()))
                .collect::<Vec<_>>()
                .join(", "),
        };
        table.add_row([
            point.id.to_string(),
            shown_time(&point.started_at),
            shown(point.label.as_deref().unwrap_or("")).into_owned(),
            with_interval(
                &figures.bytes_per_second,
                format!("{:.1}", figures.bytes_per_second.value / 1e6),
            ),
            with_interval(&figures.iops, format_count(figures.iops.value)),
            with_interval(
                &figures.mean_latency_ns,
                format_latency(figures.mean_latency_ns.value),
            ),
            with_interval(
                &figures.p99_latency_ns,
                format_latency(figures.p99_latency_ns.value),
            ),
            figures.verdict.map_or("", |v| v.name()).to_string(),
            against,
        ]);
    }
    for column in 3..=6 {
        if let Some(column) = table.column_mut(column) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// `2026-12-01 17:51:38` from `2026-12-01T17:51:38Z` (as a cell shows text from the history:
/// shortened, control characters escaped).
fn shown_time(rfc3339: &str) -> String {
    shown(rfc3339).replacen('T', " ", 1).replace('Z', "")
}

fn runs_table(runs: &[iopath::history::RunSummary]) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header([
            "#",
            "started (UTC)",
            "label",
            "host",
            "targets",
            "tests",
            "best rate",
            "best IOPS",
            "verdict",
        ]);
    // Every text cell comes from the history's database: shortened, control characters
    // escaped, as compare's tables show text from results.
    let shown = |text: &str| shown(text).into_owned();
    for run in runs {
        let tests = if run.test_count == 1 || run.pts {
            shown(&run.tests)
        } else {
            format!("{} tests", run.test_count)
        };
        let started = shown_time(&run.started_at);
        let mut label = shown(run.label.as_deref().unwrap_or(""));
        if run.partial {
            label.push_str(" (partial)");
        }
        table.add_row([
            run.id.to_string(),
            started,
            label,
            shown(&run.host),
            shown(&run.targets),
            tests,
            format_rate(run.best_bytes_per_second),
            format_iops(run.best_iops),
            shown(&run.verdicts),
        ]);
    }
    for column in [6, 7] {
        if let Some(column) = table.column_mut(column) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}
