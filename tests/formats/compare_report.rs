//! `iopath compare` and the HTML report on real runs of the binary: the comparison of two runs
//! of the same sweep and a null-engine mixed run, every compare format, and the report loaded
//! in a real headless Chromium (no console error, nothing fetched, every chart drawn with the
//! series and points the RunResults call for, a screenshot and a PDF under target/).
//!
//! Needs: `chromium` (Debian package; `$CHROMIUM` names another binary). Without it the
//! browser test is skipped, or fails under CI (tests/support); scripts/test installs it.

use crate::chromium;
use crate::support;

use iopath::analysis::{DeclaredPath, analyse};
use iopath::compare::comparison::FigureDirection;
use iopath::compare::{
    CompareOptions, Comparison, CostInputs, LabeledRun, Metric, Outcome, compare,
};
use iopath::report::compare_json::write_compare_json;
use iopath::report::compare_markdown::write_compare_markdown;
use iopath::report::compare_text::write_compare_text;
use iopath::report::html::write_html;
use iopath::report::json::read_json;
use iopath::report::model::{Report, RunReport};
use iopath::result::RunResult;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The saved runs, in a directory kept for the whole test binary.
struct Runs {
    directory: tempfile::TempDir,
    before: RunResult,
    after: RunResult,
    mixed: RunResult,
}

fn iopath(directory: &Path, args: &[&str]) -> Output {
    support::history::command(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(directory)
        .args(args)
        .output()
        .expect("iopath runs")
}

fn describe(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Two runs of `randread 4k --sweep qd=1,8` (3 s each point, so each has intervals) labelled
/// before and after, and one null-engine randrw run labelled null.
fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let directory = tempfile::Builder::new()
            .prefix("compare-report-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let sweep = |label: &str| {
            let file = format!("{label}.json");
            let output = iopath(
                directory.path(),
                &[
                    "run",
                    "f.dat",
                    "--size",
                    "32m",
                    "--rw",
                    "randread",
                    "--bs",
                    "4k",
                    "--sweep",
                    "qd=1,8",
                    "--duration",
                    "3",
                    "--ramp",
                    "0.2",
                    "--json",
                    &file,
                    "--label",
                    label,
                ],
            );
            assert!(output.status.success(), "{}", describe(&output));
            load(&directory.path().join(file))
        };
        let before = sweep("before");
        let after = sweep("after");
        let output = iopath(
            directory.path(),
            &[
                "run",
                "g.dat",
                "--size",
                "16m",
                "--engine",
                "null",
                "--rw",
                "randrw",
                "--bs",
                "4k",
                "--qd",
                "4",
                "--duration",
                "2",
                "--ramp",
                "0",
                "--json",
                "null.json",
                "--label",
                "null",
            ],
        );
        assert!(output.status.success(), "{}", describe(&output));
        let mixed = load(&directory.path().join("null.json"));
        Runs {
            directory,
            before,
            after,
            mixed,
        }
    })
}

fn load(path: &Path) -> RunResult {
    read_json(&std::fs::read_to_string(path).unwrap()).expect("a RunResult")
}

/// The 95 % half-width of the mean of `samples`, computed here from a t table. Samples of
/// intervals shorter than a second are correlated: as docs/verdict.md says for short runs, the
/// interval then counts the effective samples of an AR(1) series, `n (1 − r₁) / (1 + r₁)` for a
/// positive lag-1 autocorrelation `r₁` (between 2 and `n`), with `⌊n_eff⌋ − 1` degrees of freedom.
fn half_width(samples: &[f64], fine: bool) -> Option<f64> {
    // Student's t, 0.975 quantile, for 1 to 15 degrees of freedom.
    const T: [f64; 15] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314,
    ];
    let n = samples.len();
    if n < 2 {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let squares = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
    let deviation = (squares / (n - 1) as f64).sqrt();
    if !fine {
        return Some(T[n - 2] * deviation / (n as f64).sqrt());
    }
    let lagged: f64 = samples
        .windows(2)
        .map(|pair| (pair[0] - mean) * (pair[1] - mean))
        .sum();
    let r = if n >= 3 && squares > 0.0 {
        (lagged / squares).max(0.0)
    } else {
        0.0
    };
    let effective = (n as f64 * (1.0 - r) / (1.0 + r)).clamp(2.0, n as f64);
    let degrees = (effective.floor() as usize).saturating_sub(1).max(1);
    Some(T[degrees - 1] * deviation / effective.sqrt())
}

#[test]
fn two_runs_of_one_sweep_match_point_by_point() {
    let runs = runs();
    let comparison = compare(
        &[
            LabeledRun::new("before", &runs.before),
            LabeledRun::new("after", &runs.after),
        ],
        &CompareOptions::default(),
    )
    .unwrap();
    assert_eq!(comparison.tests.len(), 2);
    assert!(comparison.unmatched.is_empty());
    for (index, test) in comparison.tests.iter().enumerate() {
        let (before, after) = (&runs.before.tests[index], &runs.after.tests[index]);
        assert_eq!(test.name, before.name);
        assert_eq!(test.sweep, before.sweep);
        assert_eq!(test.direction, FigureDirection::Read);
        assert_eq!(
            test.figures[0].bytes_per_second.value,
            before.read.bytes_per_second
        );
        assert_eq!(test.figures[1].iops.value, after.read.iops);
        assert_eq!(
            test.figures[1].p99_latency_ns.value,
            after.read.latency.percentile("99") as f64
        );
        // The outcome follows from intervals computed here, independently.
        let interval = |result: &iopath::result::TestResult| {
            let full = result
                .read
                .series
                .iter()
                .map(|p| p.duration_ns)
                .max()
                .unwrap();
            let rates: Vec<f64> = result
                .read
                .series
                .iter()
                .filter(|p| p.duration_ns == full)
                .map(|p| p.bytes as f64 / (full as f64 / 1e9))
                .collect();
            half_width(&rates, full < 1_000_000_000)
        };
        let change = test.changes[0].metric(Metric::Throughput).unwrap();
        let difference = after.read.bytes_per_second - before.read.bytes_per_second;
        assert!((change.difference - difference).abs() < 1e-6);
        match (interval(before), interval(after)) {
            (Some(a), Some(b)) => {
                // Overlapping intervals are "same" only when both are within ±10 % of
                // their figures; wider ones cannot tell (src/compare/significance.rs).
                let tight = a <= 0.10 * before.read.bytes_per_second
                    && b <= 0.10 * after.read.bytes_per_second;
                let expected = if difference.abs() <= a + b && tight {
                    Outcome::Same
                } else if difference.abs() <= a + b {
                    Outcome::TooShort
                } else if difference > 0.0 {
                    Outcome::Better
                } else {
                    Outcome::Worse
                };
                assert_eq!(
                    change.outcome, expected,
                    "{}: {a} {b} {difference}",
                    test.name
                );
            }
            _ => assert_eq!(change.outcome, Outcome::Unknown),
        }
    }
    // A run with other tests matches nothing, and every test is listed.
    let comparison = compare(
        &[
            LabeledRun::new("before", &runs.before),
            LabeledRun::new("null", &runs.mixed),
        ],
        &CompareOptions::default(),
    )
    .unwrap();
    assert!(comparison.tests.is_empty());
    assert_eq!(comparison.unmatched.len(), 3);
    assert_eq!(comparison.unmatched[2].present_in, ["null"]);
    assert_eq!(comparison.unmatched[0].missing_from, ["null"]);
}

fn cost_comparison() -> Comparison {
    let runs = runs();
    let cost = CostInputs::from_flags(
        &["before=1200,after=2400".into()],
        &["before=2".into(), "after=1".into()],
        Some("10GB/s"),
    )
    .unwrap();
    compare(
        &[
            LabeledRun::new("before", &runs.before),
            LabeledRun::new("after", &runs.after),
        ],
        &CompareOptions {
            baseline: None,
            cost,
        },
    )
    .unwrap()
}

#[test]
fn every_compare_format_carries_every_test() {
    let comparison = cost_comparison();
    let names: Vec<&str> = comparison.tests.iter().map(|t| t.name.as_str()).collect();

    let mut text = Vec::new();
    write_compare_text(&comparison, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    for needle in names
        .iter()
        .copied()
        .chain(["after/before", "ports for 10.00 GB/s"])
    {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }

    let mut markdown = Vec::new();
    write_compare_markdown(&comparison, &mut markdown).unwrap();
    let markdown = String::from_utf8(markdown).unwrap();
    let rows = markdown
        .lines()
        .filter(|line| line.starts_with("| ") && line.contains(" | ") && !line.starts_with("| run"))
        .count();
    // Header, four metrics per test (and the verdicts when analysed), and one row per run
    // in the cost table.
    let verdicts = comparison
        .tests
        .iter()
        .any(|test| test.figures.iter().any(|figures| figures.verdict.is_some()));
    let per_test = 4 + usize::from(verdicts);
    assert_eq!(rows, 1 + per_test * names.len() + 2, "{markdown}");

    let mut json = Vec::new();
    write_compare_json(&comparison, &mut json).unwrap();
    let value: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(value["comparison_version"], 1);
    assert_eq!(value["tests"].as_array().unwrap().len(), names.len());
    assert_eq!(value["cost"]["runs"][0]["ports"], 2);
    let back: Comparison = serde_json::from_slice(&json).unwrap();
    assert_eq!(back.runs, comparison.runs);
}

/// Where the report, its screenshot and its PDF go: the target directory.
fn target_directory() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Counts the page reports for every chart: what each figure says it holds and what is
/// really in its SVG, with the size the browser laid each out at.
const PROBE: &str = r#"(() => {
  const charts = [...document.querySelectorAll('figure.chart')].map(figure => {
    const box = figure.getBoundingClientRect();
    const section = figure.closest('section.test');
    return {
      id: figure.id,
      kind: figure.dataset.kind,
      run: section ? Number(section.dataset.run) : null,
      testIndex: section ? Number(section.dataset.testIndex) : null,
      declaredSeries: Number(figure.dataset.series),
      width: box.width,
      height: box.height,
      series: [...figure.querySelectorAll('g.series')].map(group => {
        const line = group.querySelector('polyline');
        const bars = [...group.querySelectorAll('rect.bar')];
        const bounds = group.getBBox();
        return {
          label: group.dataset.label,
          declaredPoints: Number(group.dataset.points),
          count: group.dataset.count === undefined ? null : Number(group.dataset.count),
          linePoints: line ? line.points.numberOfItems : null,
          lineLength: line ? line.getTotalLength() : null,
          bars: bars.length,
          barsDrawn: bars.filter(bar => bar.getBBox().width > 0 && bar.getBBox().height > 0).length,
          width: bounds.width,
          height: bounds.height,
        };
      }),
    };
  });
  const policy = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
  const swatches = [...document.querySelectorAll('i.swatch[style]')];
  const rgb = style => {
    const hex = /#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(style);
    return hex && `rgb(${parseInt(hex[1], 16)}, ${parseInt(hex[2], 16)}, ${parseInt(hex[3], 16)})`;
  };
  return {
    title: document.title,
    policy: policy ? policy.content : null,
    policyFirst: policy !== null && policy === document.head.firstElementChild.nextElementSibling,
    styleSheetApplied: getComputedStyle(document.querySelector('main')).maxWidth === '1180px',
    styledSwatches: swatches.length,
    styledSwatchesDrawn: swatches
      .filter(swatch => getComputedStyle(swatch).borderTopColor === rgb(swatch.getAttribute('style')))
      .length,
    sections: [...document.querySelectorAll('main > section')].map(section => section.id),
    scripts: document.scripts.length,
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    charts,
  };
})()"#;

/// What the probe found for the chart of `kind` in test `test_index` of run `run`.
fn chart<'a>(page: &'a Value, run: usize, test_index: usize, kind: &str) -> &'a Value {
    page["charts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|chart| {
            chart["run"] == run && chart["testIndex"] == test_index && chart["kind"] == kind
        })
        .unwrap_or_else(|| panic!("no {kind} chart for run {run} test {test_index}"))
}

fn chart_by_id<'a>(page: &'a Value, id: &str) -> &'a Value {
    page["charts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|chart| chart["id"] == id)
        .unwrap_or_else(|| panic!("no chart {id}"))
}

/// Every series of every chart is drawn: its points are those it declares and it covers
/// some area (or length) on the page.
fn assert_all_drawn(page: &Value) {
    for chart in page["charts"].as_array().unwrap() {
        let series = chart["series"].as_array().unwrap();
        assert_eq!(chart["declaredSeries"], series.len(), "{chart}");
        assert!(chart["width"].as_f64().unwrap() > 200.0, "{chart}");
        for one in series {
            let points = one["declaredPoints"].as_u64().unwrap();
            assert!(points > 0, "{chart}");
            if one["linePoints"].is_null() {
                assert_eq!(one["bars"], points, "{chart}");
                assert_eq!(one["barsDrawn"], points, "{chart}");
            } else {
                assert_eq!(one["linePoints"], points, "{chart}");
            }
            let area = one["width"].as_f64().unwrap() + one["height"].as_f64().unwrap();
            assert!(area > 0.0, "not drawn: {chart}");
        }
    }
}

/// The per-test charts of every test of `result` (run `run` of the page) hold its
/// directions, one point per second of its series, and every I/O of its histogram.
fn assert_test_charts(page: &Value, run: usize, result: &RunResult) {
    for (index, test) in result.tests.iter().enumerate() {
        let directions: Vec<(&str, &iopath::result::DirectionResult)> =
            [("read", &test.read), ("write", &test.write)]
                .into_iter()
                .filter(|(_, d)| d.io_count > 0)
                .collect();
        let stepped = test
            .analysis
            .as_ref()
            .is_some_and(|analysis| analysis.rate_step.is_some());
        for kind in ["throughput", "iops", "latency-distribution"] {
            let found = chart(page, run, index, kind);
            // A rate step the analysis found (a run on a busy machine can show one) is drawn
            // over the rate charts as one more series, its fitted levels.
            let (fitted, series): (Vec<&Value>, Vec<&Value>) =
                found["series"].as_array().unwrap().iter().partition(|one| {
                    one["label"]
                        .as_str()
                        .is_some_and(|l| l.ends_with("(fitted)"))
                });
            let expected_fitted = usize::from(stepped && kind != "latency-distribution");
            assert_eq!(fitted.len(), expected_fitted, "{kind} of {}", test.name);
            assert_eq!(series.len(), directions.len(), "{kind} of {}", test.name);
            for ((name, direction), drawn) in directions.iter().zip(series) {
                assert_eq!(drawn["label"], *name);
                if kind == "latency-distribution" {
                    assert_eq!(drawn["count"], direction.histogram.count, "{}", test.name);
                } else {
                    assert_eq!(
                        drawn["declaredPoints"],
                        direction.series.len(),
                        "{}",
                        test.name
                    );
                }
            }
        }
    }
}

#[test]
fn the_report_renders_in_chromium() {
    let Some(binary) = chromium::find() else {
        support::skip("chromium is not installed (apt-get install chromium, or set CHROMIUM)");
        return;
    };
    let runs = runs();
    let mut analysed = runs.before.clone();
    analyse(&mut analysed, &DeclaredPath::default());
    let report = Report {
        title: "iopath: before vs after".into(),
        runs: vec![
            RunReport::new("before".into(), &analysed),
            RunReport::new("after".into(), &runs.after),
        ],
        comparison: Some(cost_comparison()),
    };
    let target = target_directory();
    let compared = target.join("report.html");
    write_html(&report, &mut std::fs::File::create(&compared).unwrap()).unwrap();
    let single = runs.directory.path().join("null.html");
    let mixed = Report::of_runs(
        &[LabeledRun::new("null", &runs.mixed)],
        &CompareOptions::default(),
        None,
    )
    .unwrap();
    write_html(&mixed, &mut std::fs::File::create(&single).unwrap()).unwrap();

    let mut browser = chromium::Browser::start(&binary, 1280, 900);
    browser.open(&compared);
    let page = browser.evaluate(PROBE);
    assert_eq!(page["title"], "iopath: before vs after");
    assert_eq!(page["scripts"], 0);
    // The page declares its Content-Security-Policy before anything else, and renders under
    // it: the inline style sheet and the style attributes (legend colours) apply (a blocked style
    // would also be logged as an error, checked below).
    assert_eq!(
        page["policy"],
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
    );
    assert_eq!(page["policyFirst"], true);
    assert_eq!(page["styleSheetApplied"], true);
    assert!(page["styledSwatches"].as_u64().unwrap() > 0, "{page}");
    assert_eq!(page["styledSwatchesDrawn"], page["styledSwatches"]);
    assert!(
        page["overflow"].as_f64().unwrap() <= 0.0,
        "wider than the window: {}",
        page["overflow"]
    );
    assert_eq!(
        page["sections"],
        serde_json::json!([
            "summary",
            "comparison",
            "sweeps",
            "tests",
            "path",
            "host",
            "trust"
        ])
    );
    assert_all_drawn(&page);
    assert_test_charts(&page, 0, &analysed);
    assert_test_charts(&page, 1, &runs.after);
    // Sweep curves: one per run, a point per queue depth; latency has mean and p99 each.
    let rate = chart_by_id(&page, "sweep-qd-rate");
    assert_eq!(rate["series"].as_array().unwrap().len(), 2);
    assert!(
        rate["series"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["declaredPoints"] == 2)
    );
    let latency = chart_by_id(&page, "sweep-qd-latency");
    assert_eq!(latency["series"].as_array().unwrap().len(), 4);
    // Comparison bars: one series per run, a bar per compared test.
    for id in ["compare-throughput", "compare-iops"] {
        let bars = chart_by_id(&page, id);
        let series = bars["series"].as_array().unwrap();
        assert_eq!(series.len(), 2, "{id}");
        assert!(series.iter().all(|s| s["bars"] == 2), "{id}");
    }
    let screenshot = browser.screenshot(1280, 2200);
    assert_eq!(&screenshot[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::write(target.join("report-screenshot.png"), &screenshot).unwrap();
    let pdf = browser.print_to_pdf();
    assert!(pdf.starts_with(b"%PDF-"), "not a PDF");
    assert!(pdf.len() > 10_000, "{} bytes of PDF", pdf.len());
    std::fs::write(target.join("report.pdf"), &pdf).unwrap();

    browser.open(&single);
    let page = browser.evaluate(PROBE);
    assert_all_drawn(&page);
    assert_test_charts(&page, 0, &runs.mixed);
    assert_eq!(
        page["sections"],
        serde_json::json!(["summary", "tests", "path", "host", "trust"])
    );

    let events = browser.events();
    assert!(events.errors.is_empty(), "{:#?}", events.errors);
    let documents: Vec<String> = [&compared, &single]
        .iter()
        .map(|path| format!("file://{}", path.canonicalize().unwrap().display()))
        .collect();
    let others: Vec<&String> = events
        .requests
        .iter()
        .filter(|url| !documents.contains(url) && *url != "about:blank")
        .collect();
    assert!(others.is_empty(), "the page fetched {others:?}");
    assert_eq!(
        events
            .requests
            .iter()
            .filter(|url| documents.contains(url))
            .count(),
        2
    );

    // The policy is enforced: a script put into the page does not run, an image is not
    // loaded (not even from data:), and the browser says why.
    let blocked = browser.evaluate(
        r#"(() => {
          const script = document.createElement('script');
          script.textContent = 'window.ranInline = true';
          document.head.appendChild(script);
          const image = document.createElement('img');
          image.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
          document.body.appendChild(image);
          return window.ranInline === undefined;
        })()"#,
    );
    assert_eq!(blocked, true, "an inline script ran despite the policy");
    browser.call("Runtime.evaluate", serde_json::json!({"expression": "1"}));
    let events = browser.close();
    let (refusals, errors): (Vec<&String>, Vec<&String>) = events
        .errors
        .iter()
        .partition(|error| error.contains("Content Security Policy"));
    assert!(errors.is_empty(), "{errors:#?}");
    for refused in ["script", "image"] {
        assert!(
            refusals.iter().any(|refusal| refusal.contains(refused)),
            "{refused}: {refusals:#?}"
        );
    }
    println!(
        "report: {}; screenshot: {}",
        compared.display(),
        target.join("report-screenshot.png").display()
    );
}

/// Whether `iopath SUBCOMMAND --help` works (the subcommand is wired).
#[test]
fn the_compare_command_prints_every_format() {
    let runs = runs();
    let directory = runs.directory.path();
    let table = iopath(directory, &["compare", "before.json", "after.json"]);
    assert!(table.status.success(), "{}", describe(&table));
    let text = String::from_utf8_lossy(&table.stdout);
    for needle in [
        "Baseline: before",
        "after/before",
        &runs.before.tests[1].name,
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let named = iopath(
        directory,
        &["compare", "old=before.json", "new=after.json", "--md"],
    );
    assert!(named.status.success(), "{}", describe(&named));
    let markdown = String::from_utf8_lossy(&named.stdout);
    assert!(
        markdown.contains("| test |  | old | new | new/old |"),
        "{markdown}"
    );

    let json = iopath(
        directory,
        &[
            "compare",
            "before.json",
            "after.json",
            "null.json",
            "--json",
            "--cost",
            "before=1200,after=2400,null=1",
            "--ports",
            "before=2,after=1",
            "--target-bandwidth",
            "10GB/s",
        ],
    );
    assert!(json.status.success(), "{}", describe(&json));
    let comparison: Comparison = serde_json::from_slice(&json.stdout).unwrap();
    assert!(comparison.tests.is_empty());
    assert_eq!(comparison.unmatched.len(), 3);
    assert_eq!(comparison.cost.as_ref().unwrap().runs[0].ports, Some(2));

    for (args, needle) in [
        (vec!["compare", "before.json"], "2"),
        (
            vec!["compare", "before.json", "missing.json"],
            "missing.json",
        ),
        (
            vec!["compare", "before.json", "after.json", "--cost", "san=5"],
            "'san'",
        ),
        (
            vec![
                "compare",
                "before.json",
                "after.json",
                "--target-bandwidth",
                "fast",
            ],
            "fast",
        ),
    ] {
        let output = iopath(directory, &args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            describe(&output)
        );
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(needle),
            "{args:?}: {}",
            describe(&output)
        );
    }
}

#[test]
fn the_report_command_writes_one_file() {
    let runs = runs();
    let directory = runs.directory.path();
    let output = iopath(
        directory,
        &[
            "report",
            "before.json",
            "after.json",
            "-o",
            "cli.html",
            "--title",
            "Before & after",
            "--cost",
            "before=1,after=2",
        ],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let html = std::fs::read_to_string(directory.join("cli.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<title>Before &amp; after</title>"));
    assert!(html.contains(r#"<section id="comparison">"#));
    assert!(html.contains("Cost and density"));
    let stdout = iopath(directory, &["report", "null.json", "-o", "-"]);
    assert!(stdout.status.success(), "{}", describe(&stdout));
    assert!(String::from_utf8_lossy(&stdout.stdout).contains("<title>iopath report: null</title>"));
    let bad = iopath(
        directory,
        &["report", "null.json", "-o", "x.html", "--cost", "null=1"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", describe(&bad));

    let output = iopath(
        directory,
        &[
            "run",
            "h.dat",
            "--size",
            "8m",
            "--engine",
            "null",
            "--duration",
            "1",
            "--ramp",
            "0",
            "--report",
            "run.html",
        ],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let html = std::fs::read_to_string(directory.join("run.html")).unwrap();
    assert!(html.contains(r#"<section id="tests">"#));
}

/// `null.json` with `change` applied, saved as `name` in a directory of its own.
fn edited_run(directory: &Path, name: &str, change: impl FnOnce(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(runs().directory.path().join("null.json")).unwrap();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    change(&mut value);
    let path = directory.join(name);
    std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
    path
}

/// Whether `text` holds a raw ESC or a raw C1 control (CSI, OSC …).
fn has_raw_escape(text: &str) -> bool {
    text.chars()
        .any(|c| c == '\u{1b}' || ('\u{80}'..='\u{9f}').contains(&c))
}

#[test]
fn text_from_result_files_reaches_the_terminal_escaped() {
    let directory = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let evil_test = "randrw\u{1b}]0;owned\u{7}";
    let rename_test = |value: &mut Value| value["tests"][0]["name"] = evil_test.into();
    edited_run(directory.path(), "evil.json", |value| {
        value["label"] = "evil\u{1b}[2J\u{9b}31m".into();
        value["host"]["hostname"] = "host\u{1b}[1m".into();
        value["started_at"] = "2026\u{1b}[8m".into();
        value["partial"] = true.into();
        rename_test(value);
    });
    edited_run(directory.path(), "plain.json", |value| {
        value["label"] = "plain".into();
        rename_test(value);
        value["tests"][0]["jobs"][0]["engine"]["name"] = "null\u{1b}[5m".into();
    });
    let runs = ["evil.json", "plain.json"];
    for extra in [&[][..], &["--md"], &["--json"], &["--baseline", "none"]] {
        let output = iopath(directory.path(), &[&["compare"], &runs[..], extra].concat());
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!has_raw_escape(&printed), "{extra:?}: {printed:?}");
        assert!(printed.contains("evil"), "{extra:?}: {printed}");
        if extra.is_empty() || extra == ["--md"] {
            assert!(output.status.success(), "{}", describe(&output));
            // Shown as visible escapes (Markdown escapes the brackets too).
            let unbracketed = printed.replace('\\', "");
            assert!(unbracketed.contains("u{1b}[2J"), "{extra:?}: {printed}");
            assert!(
                unbracketed.contains("u{1b}]0;owned"),
                "{extra:?}: {printed}"
            );
        }
    }
    let report = iopath(
        directory.path(),
        &[&["report"], &runs[..], &["-o", "-"]].concat(),
    );
    assert!(report.status.success(), "{}", describe(&report));
    let html = String::from_utf8_lossy(&report.stdout);
    assert!(!has_raw_escape(&html), "{html:?}");
    assert!(html.contains("evil[2J"), "{html}");
}

#[test]
fn a_label_of_megabytes_is_compared_and_reported_shortened() {
    let directory = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let label = "L".repeat(5 << 20);
    edited_run(directory.path(), "big.json", |value| {
        value["label"] = label.clone().into();
    });
    edited_run(directory.path(), "small.json", |value| {
        value["label"] = "small".into();
    });
    let runs = ["big.json", "small.json"];
    for extra in [&[][..], &["--md"]] {
        let output = iopath(directory.path(), &[&["compare"], &runs[..], extra].concat());
        assert!(output.status.success(), "{}", describe(&output));
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.len() < 64 << 10, "{extra:?}: {} bytes", text.len());
        assert!(text.contains(&format!("{}…", "L".repeat(200))), "{extra:?}");
    }
    // The JSON keeps the label in full.
    let json = iopath(
        directory.path(),
        &[&["compare"], &runs[..], &["--json"]].concat(),
    );
    assert!(json.status.success(), "{}", describe(&json));
    let comparison: Comparison = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        comparison.runs[0].run_label.as_deref(),
        Some(label.as_str())
    );
    assert_eq!(comparison.runs[0].label.chars().count(), 201);
    let report = iopath(
        directory.path(),
        &[&["report"], &runs[..], &["-o", "big.html"]].concat(),
    );
    assert!(report.status.success(), "{}", describe(&report));
    let size = std::fs::metadata(directory.path().join("big.html"))
        .unwrap()
        .len();
    assert!(size < 1 << 20, "{size} bytes of HTML");
}
