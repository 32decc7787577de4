//! The report of a saved real run (the `mixed` fixture of tests/fixtures), checked as
//! text: complete, self-contained, escaped, with every chart counted. The browser test in
//! tests/formats/compare_report.rs checks what Chromium draws.

use super::*;
use crate::analysis::{DeclaredPath, HostFacts, analyse_with};
use crate::compare::{CompareOptions, LabeledRun};
use crate::report::model::Report;
use crate::result::{RunResult, SweepAxis, SweepValue};
use crate::support::fixtures::mixed;

fn html_of(runs: &[LabeledRun<'_>]) -> String {
    let mut out = Vec::new();
    let report = Report::of_runs(runs, &CompareOptions::default(), None).unwrap();
    write_html(&report, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The opening tag of the element with `id`.
fn tag_with_id<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!(r#" id="{id}""#))
        .unwrap_or_else(|| panic!("no element {id}"));
    let start = html[..at].rfind('<').unwrap();
    let end = at + html[at..].find('>').unwrap();
    &html[start..=end]
}

/// The value of attribute `name` in `tag`.
fn attribute<'a>(tag: &'a str, name: &str) -> &'a str {
    let key = format!(r#" {name}=""#);
    let start = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    &tag[start..start + tag[start..].find('"').unwrap()]
}

/// The `data-points` of every series of the chart with `id`.
fn series_points(html: &str, id: &str) -> Vec<usize> {
    let start = html.find(&format!(r#" id="{id}""#)).unwrap();
    let end = start + html[start..].find("</figure>").unwrap();
    html[start..end]
        .match_indices(r#"<g class="series""#)
        .map(|(at, _)| {
            let tag = &html[start + at..start + at + html[start + at..].find('>').unwrap() + 1];
            attribute(tag, "data-points").parse().unwrap()
        })
        .collect()
}

#[test]
fn one_run_gives_a_complete_self_contained_page() {
    let result = mixed();
    let html = html_of(&[LabeledRun::new("only", result)]);
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(html.trim_end().ends_with("</html>"));
    assert!(html.contains("<title>iopath report: only</title>"));
    // The policy comes first in <head>, before anything it governs.
    let policy = format!(
        r#"<meta http-equiv="Content-Security-Policy" content="{}">"#,
        page::CONTENT_SECURITY_POLICY
    );
    let head = &html[..html.find("</head>").unwrap()];
    assert!(
        head.find(&policy).unwrap() < head.find("<style>").unwrap(),
        "{head}"
    );
    assert!(page::CONTENT_SECURITY_POLICY.starts_with("default-src 'none';"));
    assert!(!page::CONTENT_SECURITY_POLICY.contains("script"));
    for forbidden in [
        "<script", "http://", "https://", " src=", "<link", "@import", "url(",
    ] {
        assert!(!html.contains(forbidden), "{forbidden} in the page");
    }
    for section in ["summary", "tests", "path", "host", "trust"] {
        assert!(
            html.contains(&format!(r#"<section id="{section}">"#)),
            "{section}"
        );
    }
    assert!(!html.contains(r#"<section id="comparison">"#));
    assert!(!html.contains(r#"<section id="sweeps">"#));
    assert!(html.contains("not analysed"));

    for (index, test) in result.tests.iter().enumerate() {
        let anchor = parts::test_anchor(0, index, &test.name);
        let directions = parts::directions(test);
        for (kind, expected) in [
            ("throughput", test.read.series.len()),
            ("iops", test.read.series.len()),
        ] {
            let id = format!("{anchor}-{kind}");
            let tag = tag_with_id(&html, &id);
            assert_eq!(attribute(tag, "data-kind"), kind);
            assert_eq!(attribute(tag, "data-series"), directions.len().to_string());
            assert_eq!(series_points(&html, &id)[0], expected, "{id}");
        }
        let id = format!("{anchor}-latency");
        let start = html.find(&format!(r#" id="{id}""#)).unwrap();
        for (name, direction) in directions {
            let label = format!(r#"data-label="{name}""#);
            let at = start + html[start..].find(&label).unwrap();
            let tag = &html[at..at + html[at..].find('>').unwrap()];
            assert_eq!(
                attribute(tag, "data-count"),
                direction.histogram.count.to_string(),
                "{id} {name}"
            );
        }
    }
}

#[test]
fn the_distribution_bins_every_io_once() {
    let test = &mixed().tests[0];
    let (points, total) = test_detail::distribution(&test.read);
    assert_eq!(total, test.read.io_count);
    let shares: f64 = points.iter().map(|(_, share)| share).sum();
    assert!((shares - 100.0).abs() < 1e-6, "{shares}");
    assert!(points.windows(2).all(|pair| pair[0].0 < pair[1].0));
    let (min, max) = (
        test.read.latency.min_ns as f64,
        test.read.latency.max_ns as f64,
    );
    assert!(points[0].0 <= min * 1.2 && points.last().unwrap().0 >= max / 1.2);
}

/// The `mixed` fixture analysed with `--link 1gbe`.
fn analysed_mixed() -> RunResult {
    let mut result = mixed().clone();
    let declared = DeclaredPath::from_flags(&["1gbe".into()], &[]).unwrap();
    let facts = HostFacts {
        memory_copy_bytes_per_second: Some(10_000_000_000),
        memory_available_bytes: Some(1 << 34),
        dirty_limits: None,
    };
    analyse_with(&mut result, &declared, &facts);
    result
}

#[test]
fn an_analysed_run_shows_verdicts_and_its_path() {
    let result = analysed_mixed();
    let html = html_of(&[LabeledRun::new("analysed", &result)]);
    for test in &result.tests {
        let analysis = test.analysis.as_ref().unwrap();
        let badge = format!(r#"<span class="verdict {}""#, analysis.verdict.name());
        assert!(html.contains(&badge), "{badge}");
        for note in &analysis.trust_notes {
            assert!(
                html.contains(&escape::escape(&note.message)),
                "{}",
                note.message
            );
        }
    }
    assert!(!html.contains("not analysed"));
    let hops = result.paths[0].hops.len();
    assert!(html.contains(&format!(r#"<table class="path" data-hops="{hops}">"#)));
    assert!(html.contains("1GbE"));
    assert!(html.contains("(declared)"));
}

#[test]
fn several_runs_are_compared_with_bars() {
    let a = mixed().clone();
    let mut b = mixed().clone();
    b.label = Some("later".into());
    b.tests[1].name = "only in later".into();
    let html = html_of(&[LabeledRun::new("first", &a), LabeledRun::new("later", &b)]);
    assert!(html.contains("<title>iopath: first vs later</title>"));
    assert!(html.contains(r#"<section id="comparison">"#));
    for id in ["compare-throughput", "compare-iops"] {
        assert_eq!(attribute(tag_with_id(&html, id), "data-series"), "2");
        assert_eq!(series_points(&html, id), [1, 1]);
    }
    assert!(html.contains("<b>only in later</b>: in later; missing from first"));
    assert!(html.contains("<b>pair</b>: in first; missing from later"));
    // Both runs' tests get their own parts.
    assert!(html.contains(r#"id="r1t1-only-in-later""#));
}

#[test]
fn sweeps_draw_one_curve_per_run() {
    let mut result = mixed().clone();
    result.tests.truncate(1);
    let mut points = Vec::new();
    for depth in [1u64, 4, 16] {
        let mut test = result.tests[0].clone();
        test.name = format!("mixed QD{depth}");
        test.sweep = vec![SweepValue {
            axis: SweepAxis::Qd,
            value: depth,
        }];
        test.total.iops *= depth as f64;
        points.push(test);
    }
    result.tests = points;
    let other = result.clone();
    let html = html_of(&[LabeledRun::new("a", &result), LabeledRun::new("b", &other)]);
    assert!(html.contains(r#"<section id="sweeps">"#));
    assert_eq!(series_points(&html, "sweep-qd-rate"), [3, 3]);
    assert_eq!(series_points(&html, "sweep-qd-latency"), [3, 3, 3, 3]);
    assert!(html.contains(r#"data-label="a mean""#));
    assert!(html.contains(r#"data-label="b p99""#));
    assert_eq!(sweeps::base_name(&result.tests[2]), "mixed");
    let mut named = result.tests[2].clone();
    named.name = "mine qd=16".into();
    assert_eq!(sweeps::base_name(&named), "mine");
    // Matched by name and sweep point: three rows compared.
    assert_eq!(series_points(&html, "compare-iops"), [3, 3]);
}

#[test]
fn names_cannot_break_the_page() {
    let mut result = mixed().clone();
    result.tests[0].name = "<script>alert(1)</script> & \"q\"".into();
    result.host.hostname = "<b>host</b>".into();
    let html = html_of(&[LabeledRun::new("<i>label</i>", &result)]);
    assert!(!html.contains("<script"));
    assert!(!html.contains("<b>host</b>"));
    assert!(!html.contains("<i>label</i>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;"));
}

#[test]
fn write_html_labels_runs_itself() {
    let mut first = mixed().clone();
    first.label = None;
    let mut second = mixed().clone();
    second.label = Some("tuned".into());
    let mut out = Vec::new();
    write_html(&Report::of_results(&[first, second]), &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(
        html.contains("<title>iopath: run 1 vs tuned</title>"),
        "{}",
        &html[..400]
    );
}

#[test]
fn a_confirming_experiment_shows_in_the_html_markdown_and_text_reports() {
    use crate::analysis::confirmation::{ExperimentSetting, confirmation};
    use crate::result::{Experiment, Verdict};
    let mut result = analysed_mixed();
    // The experiment: the same test at twice the rate.
    let tested = result.tests[0].clone();
    let mut experiment = tested.clone();
    experiment.total.bytes_per_second *= 2.0;
    let setting = ExperimentSetting {
        experiment: Experiment::QueueDepth,
        before: 1,
        after: 2,
        ramp_ns: 0,
    };
    let found = confirmation(&tested, setting, &experiment, Verdict::QueueDepthBound);
    assert!(
        found.summary.starts_with("QD 2 gave +100 %"),
        "{}",
        found.summary
    );
    let line = crate::report::confirmation::confirmation_line(&found);
    result.tests[0].analysis.as_mut().unwrap().confirmation = Some(found.clone());

    let html = html_of(&[LabeledRun::new("confirmed", &result)]);
    let span = format!(r#"<span class="confirmation {}">"#, found.outcome.name());
    assert!(html.contains(&span), "{span}");
    assert!(html.contains(&escape::escape(&line)), "{line}");

    let mut markdown = Vec::new();
    crate::report::markdown::write_markdown(Report::of_run(&result).run(), &mut markdown).unwrap();
    let markdown = String::from_utf8(markdown).unwrap();
    assert!(markdown.contains("QD 2 gave +100 %"), "{markdown}");

    let mut text = Vec::new();
    crate::report::text::write_text(Report::of_run(&result).run(), &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(&format!("  {line}")), "{text}");

    // Saved and read back, the experiment is still there.
    let json = serde_json::to_string(&result).unwrap();
    let back: RunResult = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back.tests[0].analysis.as_ref().unwrap().confirmation,
        Some(found)
    );
}

#[test]
fn a_refuted_verdict_reads_as_refuted_in_the_text_table() {
    use crate::analysis::confirmation::{ExperimentSetting, confirmation};
    use crate::result::{ConfirmationOutcome, Experiment, Verdict};
    let mut result = analysed_mixed();
    result.tests[0].analysis.as_mut().unwrap().verdict = Verdict::QueueDepthBound;
    let tested = result.tests[0].clone();
    // Twice the queue depth, and nothing gained: not queue-depth-bound.
    let experiment = tested.clone();
    let setting = ExperimentSetting {
        experiment: Experiment::QueueDepth,
        before: 1,
        after: 2,
        ramp_ns: 0,
    };
    let found = confirmation(&tested, setting, &experiment, Verdict::DeviceBound);
    assert_eq!(
        found.outcome,
        ConfirmationOutcome::Refuted,
        "{}",
        found.summary
    );
    result.tests[0].analysis.as_mut().unwrap().confirmation = Some(found.clone());
    let cell = format!(
        "{}→{}",
        Verdict::QueueDepthBound.short_name(),
        found.derived_verdict.short_name()
    );
    let mut text = Vec::new();
    crate::report::text::write_text(Report::of_run(&result).run(), &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(&cell), "{cell}\n{text}");
    assert!(text.contains("a→b in the verdict column"), "{text}");
}

/// A test whose rate stepped down: its rate-over-time charts carry the fitted levels (a
/// dashed series of four points) and a marker where the bucket ran dry.
#[test]
fn a_burst_bucket_is_drawn_over_the_rate_charts() {
    let mut result = analysed_mixed();
    let analysis = result.tests[0].analysis.as_mut().unwrap();
    analysis.rate_step = Some(crate::result::RateStep::BurstBucket(
        crate::result::BurstBucket {
            burst_bytes_per_second: 80e6,
            baseline_bytes_per_second: 24e6,
            burst_iops: 76.0,
            baseline_iops: 23.0,
            burst_seconds: 1.5,
            bucket_bytes: 84e6,
            bucket_ios: 79.5,
            counted_in_ios: false,
            refill_per_second: None,
            refill_idle_seconds: None,
        },
    ));
    let html = html_of(&[LabeledRun::new("bucket", &result)]);
    let figure_at = html.find(r#"data-kind="throughput""#).unwrap();
    let tag_start = html[..figure_at].rfind('<').unwrap();
    let id = attribute(&html[tag_start..], "id").to_string();
    let points = series_points(&html, &id);
    assert_eq!(points.last(), Some(&4), "{points:?}");
    let chart = &html[figure_at..figure_at + html[figure_at..].find("</figure>").unwrap()];
    assert!(chart.contains("burst bucket (fitted)"), "{chart}");
    assert!(chart.contains(">bucket dry</text>"), "{chart}");
    // The next test's chart has no step.
    let next = &html[figure_at + 1..];
    let next_chart = &next[next.find(r#"data-kind="throughput""#).unwrap()..];
    let next_chart = &next_chart[..next_chart.find("</figure>").unwrap()];
    assert!(!next_chart.contains("(fitted)"));
}
