//! The report model: what every exporter reads, built once from the analysed results.
//!
//! A run is analysed once ([`crate::analysis::Analyser`]: paths, hops, verdicts, trust notes,
//! and the confirmations of `--confirm` stored in the same analysis). The model is then built
//! by one function per shape — [`Report::of_run`] for the outputs of `iopath run`,
//! [`Report::of_runs`] for `iopath report` and `iopath compare` — and holds everything
//! derived from the results that more than one exporter needs:
//!
//! - each run with its label and, for a run from several clients, each host's figures with
//!   its clients merged exactly ([`HostReport`]);
//! - each test's figures with their 95 % confidence intervals ([`TestFigureSet`]), in the
//!   direction that stands for the test and in each direction that did I/O;
//! - the comparison of several runs (with cost when asked), run once.
//!
//! The exporters (`text`, `markdown`, `csv`, `fio_json`, `html`, the `compare_*` writers) take
//! the model and only format: none of them merges hosts, compares runs or analyses
//! (`tests/structure/import_graph.rs` keeps it so).
//!
//! ```no_run
//! use iopath::report::json::read_json;
//! use iopath::report::model::Report;
//! use iopath::report::text::write_text;
//! let result = read_json(&std::fs::read_to_string("out.json")?)?;
//! let report = Report::of_run(&result);
//! write_text(report.run(), &mut std::io::stdout())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::compare::labels::labels_of;
use crate::compare::significance::{figure_direction, test_figures};
use crate::compare::{CompareError, CompareOptions, Comparison, LabeledRun, TestFigures, compare};
use crate::result::{ClusterResult, FigureDirection, RankResult, RunResult, TestResult};
use crate::stats::merge::{host_ranks, host_test, hosts};

/// One or more runs as the exporters show them.
#[derive(Clone, Debug)]
pub struct Report<'a> {
    /// Title of a page that shows them all (the HTML report).
    pub title: String,
    /// The runs, in the order given; never empty.
    pub runs: Vec<RunReport<'a>>,
    /// Their comparison (with cost, when asked for); `None` for a single run.
    pub comparison: Option<Comparison>,
}

/// One run: its label, the analysed result, and what is derived from it once.
#[derive(Clone, Debug)]
pub struct RunReport<'a> {
    /// The name the run goes by (its `--label`, else `run N`, or the name given on the
    /// command line).
    pub label: String,
    /// The result, analysed.
    pub result: &'a RunResult,
    /// For a run from several clients, each host in the order of its first rank, with its
    /// clients' figures merged; empty for a run from one client.
    pub hosts: Vec<HostReport<'a>>,
    /// Test by test, its figures with their confidence intervals.
    pub figures: Vec<TestFigureSet>,
}

/// One test's figures with their 95 % confidence intervals (the analysis's, else computed
/// from the per-second series).
#[derive(Clone, Debug)]
pub struct TestFigureSet {
    /// The direction whose figures stand for the test (reads, writes, trims, or all together
    /// for a mix).
    pub main: FigureDirection,
    /// The figures of `main`, then of each of read, write and trim (those that did no I/O
    /// show zeros).
    pub by_direction: Vec<(FigureDirection, TestFigures)>,
}

impl TestFigureSet {
    /// The figures of `test`.
    fn of(test: &TestResult) -> Self {
        let main = figure_direction(&[test]);
        let mut by_direction = vec![(main, test_figures("", test, main))];
        for direction in [
            FigureDirection::Read,
            FigureDirection::Write,
            FigureDirection::Trim,
        ] {
            if direction != main {
                by_direction.push((direction, test_figures("", test, direction)));
            }
        }
        TestFigureSet { main, by_direction }
    }

    /// The figures of `direction` (`None` only for [`FigureDirection::Total`] when it is not
    /// `main`).
    pub fn get(&self, direction: FigureDirection) -> Option<&TestFigures> {
        self.by_direction
            .iter()
            .find(|(own, _)| *own == direction)
            .map(|(_, figures)| figures)
    }
}

/// One host of a multi-client run.
#[derive(Clone, Debug)]
pub struct HostReport<'a> {
    /// The host's name.
    pub name: &'a str,
    /// Its clients that were not lost, in rank order.
    pub ranks: Vec<&'a RankResult>,
    /// Test by test (the run's indexes), its clients' figures merged with the host's own
    /// cores; `None` where none of its clients ran the test.
    pub tests: Vec<Option<TestResult>>,
}

impl HostReport<'_> {
    /// The host's merged figures of test `index`, when any of its clients ran it.
    pub fn test(&self, index: usize) -> Option<&TestResult> {
        self.tests.get(index).and_then(Option::as_ref)
    }

    /// The numbers of its ranks, comma-separated (`0, 2`).
    pub fn rank_list(&self) -> String {
        let ranks: Vec<String> = self
            .ranks
            .iter()
            .map(|rank| rank.rank.to_string())
            .collect();
        ranks.join(", ")
    }
}

impl<'a> RunReport<'a> {
    /// `result` under `label`, its hosts merged.
    pub fn new(label: String, result: &'a RunResult) -> Self {
        let hosts = result.cluster.as_ref().map_or_else(Vec::new, host_reports);
        let figures = result.tests.iter().map(TestFigureSet::of).collect();
        RunReport {
            label,
            result,
            hosts,
            figures,
        }
    }

    /// The run and its label, as the comparison takes them.
    pub fn labeled(&self) -> LabeledRun<'_> {
        LabeledRun::new(&self.label, self.result)
    }
}

/// Each host of `cluster` with its clients merged, test by test.
fn host_reports(cluster: &ClusterResult) -> Vec<HostReport<'_>> {
    hosts(cluster)
        .into_iter()
        .map(|name| {
            let ranks = host_ranks(cluster, name);
            let test_count = ranks.iter().map(|rank| rank.tests.len()).max().unwrap_or(0);
            let tests = (0..test_count)
                .map(|index| host_test(cluster, name, index))
                .collect();
            HostReport { name, ranks, tests }
        })
        .collect()
}

impl<'a> Report<'a> {
    /// The report of one run (the outputs of `iopath run`), labelled by its `--label` or
    /// `run 1`.
    pub fn of_run(result: &'a RunResult) -> Self {
        Self::of_results(std::slice::from_ref(result))
    }

    /// The report of `results`, labelled by their `--label` (else `run 1`, `run 2`…), with
    /// the default title and, for two or more, their comparison against the first.
    pub fn of_results(results: &'a [RunResult]) -> Self {
        let runs: Vec<RunReport<'a>> = labels_of(results)
            .into_iter()
            .zip(results)
            .map(|(label, result)| RunReport::new(label, result))
            .collect();
        let comparison = compared(&runs, &CompareOptions::default()).ok().flatten();
        Report {
            title: default_title(&runs),
            runs,
            comparison,
        }
    }

    /// The report of `runs` under their labels, compared (with `options`) when there are two
    /// or more; the title is `title`, else the default one. Fails only when `options` name a
    /// label no run has.
    pub fn of_runs(
        runs: &[LabeledRun<'a>],
        options: &CompareOptions,
        title: Option<String>,
    ) -> Result<Self, CompareError> {
        let runs: Vec<RunReport<'a>> = runs
            .iter()
            .map(|run| RunReport::new(run.label.to_string(), run.result))
            .collect();
        let comparison = compared(&runs, options)?;
        Ok(Report {
            title: title.unwrap_or_else(|| default_title(&runs)),
            runs,
            comparison,
        })
    }

    /// The first run: the only one of [`Report::of_run`].
    pub fn run(&self) -> &RunReport<'a> {
        &self.runs[0]
    }
}

/// The comparison of `runs` when there are two or more.
fn compared(
    runs: &[RunReport<'_>],
    options: &CompareOptions,
) -> Result<Option<Comparison>, CompareError> {
    if runs.len() < 2 {
        return Ok(None);
    }
    let labeled: Vec<LabeledRun<'_>> = runs.iter().map(RunReport::labeled).collect();
    compare(&labeled, options).map(Some)
}

/// `iopath report: LABEL`, or `iopath: A vs B vs C`.
pub fn default_title(runs: &[RunReport<'_>]) -> String {
    match runs {
        [] => "iopath report".into(),
        [run] => format!("iopath report: {}", run.label),
        runs => format!(
            "iopath: {}",
            runs.iter()
                .map(|run| run.label.as_str())
                .collect::<Vec<_>>()
                .join(" vs ")
        ),
    }
}
