//! A test's figures over the runs of the history (`iopath history trend TEST`), each run
//! against the one before it: "same" where tight 95 % confidence intervals overlap, "better" or
//! "worse" only where they do not (the rule of `iopath compare`, [`crate::compare::significance`]).
//!
//! ```
//! use iopath::history::{Filter, History, trend::trend};
//! let dir = tempfile::tempdir().unwrap();
//! let history = History::open_or_create(&dir.path().join("h.sqlite")).unwrap();
//! assert!(trend(&history, "randread 4k QD32", &Filter::default()).unwrap().is_empty());
//! ```

use super::{Filter, History, HistoryError};
use crate::compare::comparison::FigureDirection;
use crate::compare::significance::{changes, figure_direction, test_figures};
use crate::compare::{RunChanges, TestFigures};
use crate::result::TestResult;

/// One run of the trend.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendPoint {
    /// The run's number.
    pub id: i64,
    /// Its start, RFC 3339 UTC.
    pub started_at: String,
    /// Its `--label`.
    pub label: Option<String>,
    /// The test's figures in that run (labelled `@ID`).
    pub figures: TestFigures,
    /// Against the run before it in the trend (`None` for the first).
    pub against_previous: Option<RunChanges>,
}

/// The trend of the test named `test` over the runs `filter` selects, oldest first (the
/// newest `filter.limit` of them), with the direction its figures are of.
pub fn trend(
    history: &History,
    test: &str,
    filter: &Filter,
) -> Result<Vec<TrendPoint>, HistoryError> {
    Ok(trend_with_direction(history, test, filter)?.1)
}

/// [`trend`], with the direction of the figures (reads, writes, or both when any run mixed
/// them).
pub fn trend_with_direction(
    history: &History,
    test: &str,
    filter: &Filter,
) -> Result<(FigureDirection, Vec<TrendPoint>), HistoryError> {
    let mut runs = Vec::new();
    for summary in history.runs_with_test(test, filter)? {
        let result = history.load(summary.id)?;
        if let Some(found) = result.tests.into_iter().find(|t| t.name == test) {
            runs.push((summary, found));
        }
    }
    let tests: Vec<&TestResult> = runs.iter().map(|(_, test)| test).collect();
    let direction = figure_direction(&tests);
    let mut points: Vec<TrendPoint> = Vec::with_capacity(runs.len());
    for (summary, found) in &runs {
        let figures = test_figures(&format!("@{}", summary.id), found, direction);
        let against_previous = points
            .last()
            .map(|previous| changes(&previous.figures, &figures));
        points.push(TrendPoint {
            id: summary.id,
            started_at: summary.started_at.clone(),
            label: summary.label.clone(),
            figures,
            against_previous,
        });
    }
    Ok((direction, points))
}
