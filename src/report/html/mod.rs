//! The HTML report (`iopath report RESULT.json… -o report.html`, `iopath run … --report
//! report.html`): one self-contained file — styles inline, charts drawn as inline SVG, no
//! script and nothing fetched when it is opened — readable on a laptop and printable.
//!
//! It shows, from the RunResults alone: the summary table with verdicts; when several results
//! are given, the comparison (the table of `iopath compare` and bars with ratios); sweep
//! curves (IOPS against the swept value, latency against IOPS) where sweeps ran; for every
//! test, MB/s and IOPS over time (the per-second series), the latency distribution (the
//! stored histogram) and percentiles, and each hop's utilisation; for a multi-client run, the
//! clients (the verdict across them, each host's and each rank's figures); the storage path
//! of every target; host and workload details; and every trust note. Results without analysis
//! (no `paths`, no `analysis`) render with those parts saying so.
//!
//! ```no_run
//! use iopath::report::html::write_html;
//! use iopath::report::json::read_json;
//! let result = read_json(&std::fs::read_to_string("out.json")?)?;
//! let mut file = std::fs::File::create("report.html")?;
//! write_html(std::slice::from_ref(&result), &mut file)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod escape;
pub mod svg;

mod clients;
mod comparison;
mod details;
mod page;
mod parts;
mod path;
mod server_chart;
mod summary;
mod sweeps;
mod test_detail;
mod verification;

use crate::compare::labels::labels_of;
use crate::compare::{CompareOptions, Comparison, LabeledRun, compare};
use crate::result::RunResult;
use std::io::{self, Write};

/// What one report shows.
#[derive(Clone, Debug)]
pub struct HtmlReport<'a> {
    /// Title of the page.
    pub title: String,
    /// The runs, with their labels, in the order given.
    pub runs: Vec<LabeledRun<'a>>,
    /// Their comparison (with cost, when asked for); `None` for a single run.
    pub comparison: Option<Comparison>,
}

impl<'a> HtmlReport<'a> {
    /// A report of `runs` with the default title and, for two or more runs, their comparison
    /// against the first.
    pub fn new(runs: Vec<LabeledRun<'a>>) -> Self {
        let comparison = if runs.len() >= 2 {
            compare(&runs, &CompareOptions::default()).ok()
        } else {
            None
        };
        HtmlReport {
            title: default_title(&runs),
            runs,
            comparison,
        }
    }
}

/// `iopath report: LABEL`, or `iopath: A vs B vs C`.
pub fn default_title(runs: &[LabeledRun<'_>]) -> String {
    match runs {
        [] => "iopath report".into(),
        [run] => format!("iopath report: {}", run.label),
        runs => format!(
            "iopath: {}",
            runs.iter()
                .map(|run| run.label)
                .collect::<Vec<_>>()
                .join(" vs ")
        ),
    }
}

/// Writes the report of `results`, labelled by their `--label` (else `run 1`, `run 2`…), with
/// their comparison when there are several.
pub fn write_html(results: &[RunResult], out: &mut dyn Write) -> io::Result<()> {
    let labels = labels_of(results);
    let runs = labels
        .iter()
        .zip(results)
        .map(|(label, result)| LabeledRun::new(label, result))
        .collect();
    write_report(&HtmlReport::new(runs), out)
}

/// Writes `report` as one HTML document.
pub fn write_report(report: &HtmlReport<'_>, out: &mut dyn Write) -> io::Result<()> {
    let mut sections = vec![summary::section(&report.runs)];
    if let Some(comparison) = &report.comparison {
        sections.push(comparison::section(comparison));
    }
    if let Some(section) = sweeps::section(&report.runs) {
        sections.push(section);
    }
    sections.push(test_detail::section(&report.runs));
    if let Some(section) = verification::section(&report.runs) {
        sections.push(section);
    }
    if let Some(section) = clients::section(&report.runs) {
        sections.push(section);
    }
    sections.push(path::section(&report.runs));
    sections.push(details::host_section(&report.runs));
    sections.push(details::trust_section(
        &report.runs,
        report.comparison.as_ref(),
    ));
    out.write_all(page::document(&report.title, &report.runs, &sections).as_bytes())
}

#[cfg(test)]
mod tests;
