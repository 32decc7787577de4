//! Puts several runs side by side: `iopath compare before.json after.json`.
//!
//! - [`labels`]: the name of each run (`name=FILE`, the run's `--label`, or the file's name).
//! - [`matching`]: which tests of the runs are the same test (name and sweep point).
//! - [`significance`]: each figure with its 95 % confidence interval, and whether two runs
//!   differ by more than their noise.
//! - [`cost`]: price per GB/s and per 1,000 IOPS, and the ports a target bandwidth needs.
//! - [`comparison`]: the output, plain serde data that every compare exporter reads
//!   (`report::compare_text`, `report::compare_markdown`, `report::compare_json`, and the
//!   HTML report).
//!
//! The first run is the baseline unless another is named. For every test present in every
//! run, each run's MB/s, IOPS, mean and p99 latency are given with the ratio and difference
//! to the baseline; a change counts only when the two 95 % intervals do not overlap, so noise
//! is never reported as a win. Tests missing from some run are listed, not dropped. Runs of
//! one test each are compared whatever the tests' names, with what differs between them
//! (queue depth, block size, engine, target…) in the test's notes.
//!
//! ```
//! use iopath::compare::labels::split_run_argument;
//! assert_eq!(split_run_argument("fc=runs/a.json", |_| false), (Some("fc".into()), "runs/a.json".into()));
//! assert_eq!(split_run_argument("runs/a.json", |_| false), (None, "runs/a.json".into()));
//! ```
//!
//! ```no_run
//! use iopath::compare::{CompareOptions, LabeledRun, compare};
//! use iopath::report::json::read_json;
//! let a = read_json(&std::fs::read_to_string("a.json")?)?;
//! let b = read_json(&std::fs::read_to_string("b.json")?)?;
//! let runs = [LabeledRun::new("before", &a), LabeledRun::new("after", &b)];
//! let comparison = compare(&runs, &CompareOptions::default())?;
//! for test in &comparison.tests {
//!     println!("{}: {:?}", test.name, test.changes[0].metrics[0].outcome);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod comparison;
pub mod cost;
pub mod labels;
pub mod matching;
pub mod significance;

pub use comparison::{
    COMPARISON_VERSION, ComparedTest, Comparison, CostReport, Metric, MetricChange, MetricValue,
    Outcome, RunChanges, RunCost, RunInfo, TestFigures, UnmatchedTest,
};
pub use cost::CostInputs;
pub use labels::LabeledRun;

use crate::result::RunResult;

/// Why runs could not be compared.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// Nothing to compare.
    #[error("compare needs at least two results, {0} given")]
    TooFewRuns(usize),
    /// A label (baseline, price, ports) that no run has.
    #[error("{flag}: no run is labelled '{label}' (the runs are {known})")]
    UnknownLabel {
        /// The flag that named it.
        flag: &'static str,
        /// The label as given.
        label: String,
        /// The labels there are, comma-separated.
        known: String,
    },
    /// A malformed flag value.
    #[error("{flag}: {reason}")]
    BadValue {
        /// The flag.
        flag: &'static str,
        /// What is wrong, quoting the input.
        reason: String,
    },
}

/// What the comparison is asked for besides the runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompareOptions {
    /// Label of the run the others are measured against (the first run when `None`).
    pub baseline: Option<String>,
    /// Prices, ports and a target bandwidth, for cost and density.
    pub cost: Option<CostInputs>,
}

/// Compares `runs` (at least two). Never fails on what the results hold: tests that do not
/// match are listed in [`Comparison::unmatched`]; only options naming unknown labels fail.
pub fn compare(
    runs: &[LabeledRun<'_>],
    options: &CompareOptions,
) -> Result<Comparison, CompareError> {
    if runs.len() < 2 {
        return Err(CompareError::TooFewRuns(runs.len()));
    }
    let labels: Vec<&str> = runs.iter().map(|run| run.label).collect();
    let baseline = match &options.baseline {
        None => 0,
        Some(label) => labels::index_of(&labels, label, "--baseline")?,
    };
    let results: Vec<&RunResult> = runs.iter().map(|run| run.result).collect();
    let matched = matching::match_tests(&results);

    let mut tests = Vec::with_capacity(matched.matched.len());
    for set in &matched.matched {
        tests.push(significance::compare_test(set, &results, &labels, baseline));
    }
    let unmatched = matched
        .unmatched
        .iter()
        .map(|test| UnmatchedTest {
            name: test.key.display_name(),
            sweep: test.key.sweep.clone(),
            present_in: labels_at(&labels, &test.present_in),
            missing_from: labels_at(
                &labels,
                &(0..runs.len())
                    .filter(|index| !test.present_in.contains(index))
                    .collect::<Vec<_>>(),
            ),
        })
        .collect();

    let mut notes = Vec::new();
    for (index, run) in runs.iter().enumerate() {
        if run.result.partial {
            notes.push(format!(
                "{}: the run stopped early; its figures are partial",
                labels[index]
            ));
        }
    }
    if matched.paired_single_tests {
        notes.push(
            "each run holds one test, under another name: they are compared as one test".into(),
        );
    }
    if tests.is_empty() {
        notes.push("no test is present in every run: nothing to put side by side".into());
    }
    let cost = options
        .cost
        .as_ref()
        .map(|inputs| cost::cost_report(inputs, &labels, &results, &tests))
        .transpose()?;

    Ok(Comparison {
        comparison_version: COMPARISON_VERSION,
        runs: runs
            .iter()
            .map(|run| RunInfo::of(run.label, run.result))
            .collect(),
        baseline: labels[baseline].to_string(),
        tests,
        unmatched,
        cost,
        notes,
    })
}

fn labels_at(labels: &[&str], indexes: &[usize]) -> Vec<String> {
    indexes
        .iter()
        .map(|index| labels[*index].to_string())
        .collect()
}

#[cfg(test)]
mod tests;
