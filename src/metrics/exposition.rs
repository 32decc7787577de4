//! The OpenMetrics text of a [`MetricsState`].
//!
//! Families (every sample of a test carries `test` and `sweep`, those of a job on a target
//! also `job`, `target` and `direction`):
//!
//! - `iopath_ios_total`, `iopath_bytes_total` — counters of completed I/Os and their bytes
//!   since the test started (its ramp included);
//! - `iopath_latency_seconds` — a histogram of their latencies, with a bucket at every power
//!   of two nanoseconds from 2^10 ns (≈ 1 µs) to 2^34 ns (≈ 17 s), exact at each bound;
//! - `iopath_tests_planned`, `iopath_tests_started`, `iopath_test_elapsed_seconds` — gauges
//!   of the suite's progress; `iopath_test_info` names the test running now;
//! - `iopath_verdict_info` — each analysed test's verdict and limiting hop;
//! - `iopath_verify_blocks_checked_total`, `iopath_verify_mismatches_total` — counters of the
//!   blocks data verification checked and found bad, per job and target that verifies.
//!
//! ```
//! use iopath::metrics::{MetricsState, render};
//! let mut state = MetricsState { tests_planned: 2, ..MetricsState::default() };
//! state.test_starting("randread 4k", &[]);
//! let text = render(&state);
//! assert!(text.contains("iopath_test_info{test=\"randread 4k\",sweep=\"\"} 1"));
//! assert!(text.ends_with("# EOF\n"));
//! ```

use super::state::MetricsState;
use crate::run::progress::{LiveDirection, LiveVerify};
use crate::stats::live::count_below;
use crate::text::escape::{escape_controls, needs_escape};
use std::fmt::Write as _;

/// Content type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Powers of two (ns) that bound the latency buckets.
const BUCKET_POWERS: std::ops::RangeInclusive<u32> = 10..=34;

/// A counter family: its name, its help, and its value in a direction's figures.
type Counter = (&'static str, &'static str, fn(&LiveDirection) -> u64);

/// A label value as the exposition writes it: `\`, `"` and line feeds escaped as the format
/// says (`\\`, `\"`, `\n`), and every other character [`escape_controls`] makes visible
/// written as it shows it (`\u{1b}`, `\t`), its backslash escaped, so a scraper stores that
/// visible text and no control character reaches the exposition or what is read from it.
fn label(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    let mut visible = String::new();
    for c in value.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            c if needs_escape(c) => {
                visible.clear();
                visible.push(c);
                escaped.push_str(&escape_controls(&visible).replace('\\', "\\\\"));
            }
            c => escaped.push(c),
        }
    }
    escaped
}

/// One family's header.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# TYPE {name} {kind}\n# HELP {name} {help}");
}

/// Every direction with I/O of every job and target of every test, with its labels.
fn series(state: &MetricsState) -> Vec<(String, &LiveDirection)> {
    let mut all = Vec::new();
    for test in &state.tests {
        for group in &test.groups {
            for (direction, figures) in group.directions() {
                if figures.totals.io_count == 0 {
                    continue;
                }
                let labels = format!(
                    "test=\"{}\",sweep=\"{}\",job=\"{}\",target=\"{}\",direction=\"{}\"",
                    label(&test.name),
                    label(&test.sweep),
                    label(&group.job),
                    label(&group.target),
                    direction.name()
                );
                all.push((labels, figures));
            }
        }
    }
    all
}

/// The exposition of `state`.
pub fn render(state: &MetricsState) -> String {
    let mut out = String::new();
    let all = series(state);
    let counters: [Counter; 2] = [
        (
            "iopath_ios",
            "Completed I/Os since the test started (ramp included).",
            |figures| figures.totals.io_count,
        ),
        (
            "iopath_bytes",
            "Bytes of completed I/Os since the test started (ramp included).",
            |figures| figures.totals.bytes,
        ),
    ];
    for (name, help, value) in counters {
        family(&mut out, name, "counter", help);
        for (labels, figures) in &all {
            let _ = writeln!(out, "{name}_total{{{labels}}} {}", value(figures));
        }
    }
    family(
        &mut out,
        "iopath_latency_seconds",
        "histogram",
        "Latency of completed I/Os since the test started (ramp included).",
    );
    for (labels, figures) in &all {
        let buckets = &figures.latency_buckets;
        for power in BUCKET_POWERS {
            let bound = (1u64 << power) as f64 / 1e9;
            let _ = writeln!(
                out,
                "iopath_latency_seconds_bucket{{{labels},le=\"{bound}\"}} {}",
                count_below(buckets, power)
            );
        }
        let count: u64 = buckets.iter().sum();
        let _ = writeln!(
            out,
            "iopath_latency_seconds_bucket{{{labels},le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(out, "iopath_latency_seconds_count{{{labels}}} {count}");
        let _ = writeln!(
            out,
            "iopath_latency_seconds_sum{{{labels}}} {}",
            figures.totals.latency_sum_ns as f64 / 1e9
        );
    }
    let verifying: Vec<(String, LiveVerify)> = state
        .tests
        .iter()
        .flat_map(|test| test.groups.iter().map(move |group| (test, group)))
        .filter_map(|(test, group)| {
            let found = group.verify?;
            let labels = format!(
                "test=\"{}\",sweep=\"{}\",job=\"{}\",target=\"{}\"",
                label(&test.name),
                label(&test.sweep),
                label(&group.job),
                label(&group.target)
            );
            Some((labels, found))
        })
        .collect();
    if !verifying.is_empty() {
        family(
            &mut out,
            "iopath_verify_blocks_checked",
            "counter",
            "Blocks data verification has checked since the test started.",
        );
        for (labels, found) in &verifying {
            let _ = writeln!(
                out,
                "iopath_verify_blocks_checked_total{{{labels}}} {}",
                found.blocks_checked
            );
        }
        family(
            &mut out,
            "iopath_verify_mismatches",
            "counter",
            "Bad blocks data verification has found since the test started.",
        );
        for (labels, found) in &verifying {
            let _ = writeln!(
                out,
                "iopath_verify_mismatches_total{{{labels}}} {}",
                found.mismatch_count
            );
        }
    }
    family(
        &mut out,
        "iopath_tests_planned",
        "gauge",
        "Tests the run plans.",
    );
    let _ = writeln!(out, "iopath_tests_planned {}", state.tests_planned);
    family(
        &mut out,
        "iopath_tests_started",
        "gauge",
        "Tests started so far.",
    );
    let _ = writeln!(out, "iopath_tests_started {}", state.tests.len());
    family(
        &mut out,
        "iopath_test",
        "info",
        "The test running now and its sweep point.",
    );
    if let Some(test) = state.tests.last().filter(|_| state.running) {
        let _ = writeln!(
            out,
            "iopath_test_info{{test=\"{}\",sweep=\"{}\"}} 1",
            label(&test.name),
            label(&test.sweep)
        );
        family(
            &mut out,
            "iopath_test_elapsed_seconds",
            "gauge",
            "Time since the test running now started (ramp included).",
        );
        let _ = writeln!(out, "iopath_test_elapsed_seconds {}", state.elapsed_seconds);
    }
    family(
        &mut out,
        "iopath_verdict",
        "info",
        "What limits each analysed test, and the hop that does.",
    );
    for test in &state.tests {
        if let Some((verdict, hop)) = &test.verdict {
            let _ = writeln!(
                out,
                "iopath_verdict_info{{test=\"{}\",sweep=\"{}\",verdict=\"{}\",limiting_hop=\"{}\"}} 1",
                label(&test.name),
                label(&test.sweep),
                label(verdict),
                label(hop.as_deref().unwrap_or(""))
            );
        }
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::progress::{DirectionTotals, LiveDirection, LiveGroup, LiveVerify};
    use crate::stats::live::{LIVE_BUCKET_COUNT, live_bucket_index};

    #[test]
    fn counters_histograms_and_verdicts_are_written_with_escaped_labels() {
        let mut buckets = vec![0u64; LIVE_BUCKET_COUNT];
        buckets[live_bucket_index(1500)] = 3; // below 2^11 ns
        buckets[live_bucket_index(5000)] = 1; // below 2^13 ns
        let read = LiveDirection {
            totals: DirectionTotals {
                bytes: 16384,
                io_count: 4,
                latency_sum_ns: 9500,
            },
            latency_buckets: buckets,
            ..LiveDirection::default()
        };
        let mut state = MetricsState {
            tests_planned: 1,
            ..MetricsState::default()
        };
        state.test_starting("a \"quoted\" test", &[]);
        state.tests[0].groups = vec![LiveGroup {
            job: "job\\1".into(),
            target: "/dev/x\ny".into(),
            read,
            write: LiveDirection::default(),
            trim: LiveDirection::default(),
            verify: Some(LiveVerify {
                blocks_checked: 12,
                mismatch_count: 1,
                first_mismatch: None,
            }),
        }];
        state.test_finished();
        state.verdict("a \"quoted\" test", "link-bound", Some("eth1"));
        let text = render(&state);
        let labels =
            r#"test="a \"quoted\" test",sweep="",job="job\\1",target="/dev/x\ny",direction="read""#;
        assert!(
            text.contains(&format!("iopath_ios_total{{{labels}}} 4\n")),
            "{text}"
        );
        assert!(text.contains(&format!("iopath_bytes_total{{{labels}}} 16384\n")));
        let job = r#"test="a \"quoted\" test",sweep="",job="job\\1",target="/dev/x\ny""#;
        assert!(text.contains(&format!("iopath_verify_blocks_checked_total{{{job}}} 12\n")));
        assert!(text.contains(&format!("iopath_verify_mismatches_total{{{job}}} 1\n")));
        assert!(text.contains(&format!(
            "iopath_latency_seconds_bucket{{{labels},le=\"0.000001024\"}} 0\n"
        )));
        assert!(text.contains(&format!(
            "iopath_latency_seconds_bucket{{{labels},le=\"0.000002048\"}} 3\n"
        )));
        assert!(text.contains(&format!(
            "iopath_latency_seconds_bucket{{{labels},le=\"0.000008192\"}} 4\n"
        )));
        assert!(text.contains(&format!(
            "iopath_latency_seconds_bucket{{{labels},le=\"+Inf\"}} 4\n"
        )));
        assert!(text.contains(&format!(
            "iopath_latency_seconds_sum{{{labels}}} 0.0000095\n"
        )));
        assert!(
            !text.contains("direction=\"write\""),
            "no series for a direction without I/O"
        );
        assert!(!text.contains("iopath_test_info{"), "no test runs now");
        assert!(text.contains(r#"iopath_verdict_info{test="a \"quoted\" test",sweep="",verdict="link-bound",limiting_hop="eth1"} 1"#));
    }

    #[test]
    fn control_characters_in_label_values_are_written_as_visible_escapes() {
        let mut state = MetricsState::default();
        state.test_starting("a\u{1b}[2J\tb\rc\u{7f}\u{9b}\u{202e}\\d\ne", &[]);
        state.verdict(
            "a\u{1b}[2J\tb\rc\u{7f}\u{9b}\u{202e}\\d\ne",
            "link-bound",
            Some("eth\u{7}1"),
        );
        let text = render(&state);
        let test = r#"test="a\\u{1b}[2J\\tb\\rc\\u{7f}\\u{9b}\\u{202e}\\d\ne""#;
        assert!(
            text.contains(&format!("iopath_test_info{{{test},sweep=\"\"}} 1\n")),
            "{text}"
        );
        assert!(text.contains(r#"limiting_hop="eth\\u{7}1""#), "{text}");
        // Nothing of what `escape_controls` makes visible is left, line feeds between lines
        // only.
        assert!(
            !text.chars().any(|c| c != '\n' && needs_escape(c)),
            "{text:?}"
        );
        assert_eq!(text.lines().count(), text.matches('\n').count());
    }
}
