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
//! use iopath::report::model::Report;
//! let result = read_json(&std::fs::read_to_string("out.json")?)?;
//! let mut file = std::fs::File::create("report.html")?;
//! write_html(&Report::of_run(&result), &mut file)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod escape;
pub mod pts;
pub mod svg;

mod clients;
mod comparison;
mod details;
mod page;
mod parts;
mod path;
mod rate_step_chart;
mod server_chart;
mod summary;
mod sweeps;
mod test_detail;
mod verification;

use crate::report::model::Report;
use std::io::{self, Write};

/// Writes `report` as one HTML document: every run of the model, and its comparison when
/// there is one.
pub fn write_html(report: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
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
