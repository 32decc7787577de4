//! Small pieces shared by the sections: anchors, verdict badges and their confirmations,
//! utilisation bars, and the directions a test did.

use super::escape::{anchor, escape};
use crate::result::{DirectionResult, TestAnalysis, TestResult, Verdict};

/// The anchor of test `test` of run `run`.
pub fn test_anchor(run: usize, test: usize, name: &str) -> String {
    anchor(&[&format!("r{run}t{test}"), name])
}

/// A verdict as a coloured badge, its evidence as the hover text.
pub fn verdict_badge(verdict: Verdict, evidence: &str) -> String {
    format!(
        r#"<span class="verdict {name}" title="{}">{name}</span>"#,
        escape(evidence),
        name = verdict.name()
    )
}

/// The verdict's confirming experiment (`--confirm`) as a line of its own, or nothing.
pub fn confirmation_note(analysis: &TestAnalysis) -> String {
    analysis
        .confirmation
        .as_ref()
        .map_or(String::new(), |confirmation| {
            format!(
                r#"<br><span class="confirmation {}">{}</span>"#,
                confirmation.outcome.name(),
                escape(&crate::report::confirmation::confirmation_line(
                    confirmation
                ))
            )
        })
}

/// A utilisation bar: `percent` of the width filled, the figure written on it.
pub fn utilisation_bar(percent: f64) -> String {
    let class = if percent > 100.0 {
        "util over"
    } else if percent >= 85.0 {
        "util high"
    } else {
        "util"
    };
    format!(
        r#"<div class="{class}"><span style="width:{:.1}%"></span><b>{}</b></div>"#,
        percent.clamp(0.0, 100.0),
        crate::units::format_percent(percent)
    )
}

/// The directions of `test` that did any I/O, with their names: reads, writes, then trims.
pub fn directions(test: &TestResult) -> Vec<(&'static str, &DirectionResult)> {
    [
        ("read", &test.read),
        ("write", &test.write),
        ("trim", &test.trim),
    ]
    .into_iter()
    .filter(|(_, direction)| direction.io_count > 0)
    .collect()
}

/// A duration in seconds with one decimal (`3.0 s`).
pub fn seconds(ns: u64) -> String {
    format!("{:.1} s", ns as f64 / 1e9)
}

/// A table cell aligned for numbers.
pub fn num(text: &str) -> String {
    format!(r#"<td class="num">{}</td>"#, escape(text))
}

/// `text` escaped in a `<code>` element.
pub fn code(text: &str) -> String {
    format!("<code>{}</code>", super::escape::escape(text))
}
