//! The report of `iopath pts` as a reader sees it: the whole suite run on a file, scaled down
//! to seconds, and its `pts.html` loaded in a real headless Chromium. The specification's
//! plots must be there and drawn — a convergence plot per test, a measurement-window plot per
//! tracking variable with its average, ±10 % and ±20 % bands in their order and the
//! least-squares line, the IOPS surface as a heat table and as curves, write saturation by
//! data written — with the test conditions, nothing fetched and no console error. A
//! screenshot is left under target/ (`pts-report-screenshot.png`).
//!
//! Needs: `chromium` (Debian package; `$CHROMIUM` names another binary). Without it the test
//! is skipped, or fails under CI (tests/support); scripts/test installs it.

use crate::chromium;
use crate::support;
use serde_json::Value;
use std::path::Path;

/// What the page holds: its sections, its condition rows, the surface's cells and every
/// chart with the series the browser laid out (first and last point in screen pixels).
const PTS_PROBE: &str = r#"(() => {
  const drawn = group => {
    const line = group.querySelector('polyline');
    const points = line ? [...Array(line.points.numberOfItems).keys()].map(i => line.points.getItem(i)) : [];
    const box = group.getBBox();
    return {
      label: group.dataset.label,
      declaredPoints: Number(group.dataset.points),
      linePoints: points.length,
      lineLength: line ? line.getTotalLength() : 0,
      firstY: points.length ? points[0].y : null,
      lastY: points.length ? points[points.length - 1].y : null,
      width: box.width,
      height: box.height,
    };
  };
  return {
    sections: [...document.querySelectorAll('main > section')].map(section => section.id),
    conditions: [...document.querySelectorAll('table.conditions th')].map(th => th.textContent),
    scaled: document.querySelectorAll('ul.scaled li').length,
    surfaceCells: [...document.querySelectorAll('table.pts-surface td')]
      .filter(cell => getComputedStyle(cell).backgroundColor !== 'rgba(0, 0, 0, 0)').length,
    scripts: document.scripts.length,
    charts: [...document.querySelectorAll('figure.chart')].map(figure => {
      const box = figure.getBoundingClientRect();
      return {
        id: figure.id,
        kind: figure.dataset.kind,
        section: figure.closest('section').id,
        declaredSeries: Number(figure.dataset.series),
        width: box.width,
        height: box.height,
        series: [...figure.querySelectorAll('g.series')].map(drawn),
      };
    }),
  };
})()"#;

/// The suite on an 8 MiB file: rounds of 100 ms, at most 5, block sizes 4 KiB and 64 KiB (so
/// that the surface has two rows and each mix's curve a line), saturation for a second.
fn run_suite(directory: &Path) -> Value {
    std::fs::write(directory.join("target.dat"), vec![0x5a; 8 << 20]).unwrap();
    let output = support::history::command(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(directory)
        .args([
            "pts",
            "target.dat",
            "--allow-destructive",
            "--round",
            "100ms",
            "--max-rounds",
            "5",
            "--block-sizes",
            "4k,64k",
            "--saturation-time",
            "1s",
            "--output-dir",
            "out",
            "--no-history",
        ])
        .output()
        .expect("iopath runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(directory.join("out/pts.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn charts_of<'a>(page: &'a Value, kind: &str) -> Vec<&'a Value> {
    page["charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|chart| chart["kind"] == kind)
        .collect()
}

/// Every series is drawn with the points it declares; a series of two points or more is a
/// line of some length.
fn assert_drawn(chart: &Value) {
    let series = chart["series"].as_array().unwrap();
    assert!(!series.is_empty(), "{chart}");
    assert_eq!(chart["declaredSeries"], series.len(), "{chart}");
    assert!(chart["width"].as_f64().unwrap() > 200.0, "{chart}");
    assert!(chart["height"].as_f64().unwrap() > 100.0, "{chart}");
    for one in series {
        assert_eq!(one["linePoints"], one["declaredPoints"], "{chart}");
        if one["declaredPoints"].as_u64().unwrap() > 1 {
            assert!(one["lineLength"].as_f64().unwrap() > 1.0, "{one}");
        }
    }
}

/// A measurement-window plot: the window's five values, then the average, the bands and the
/// least-squares line, each band on its side of the average (screen y grows downwards).
fn assert_window(chart: &Value, variable: &str) {
    assert_drawn(chart);
    let series = chart["series"].as_array().unwrap();
    let labels: Vec<&str> = series
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            variable,
            "average",
            "+10 %",
            "−10 %",
            "+20 %",
            "−20 %",
            "least-squares line"
        ],
        "{chart}"
    );
    assert_eq!(series[0]["declaredPoints"], 5, "{chart}");
    let y = |index: usize| series[index]["firstY"].as_f64().unwrap();
    let (average, plus10, minus10, plus20, minus20) = (y(1), y(2), y(3), y(4), y(5));
    assert!(
        plus20 < plus10 && plus10 < average && average < minus10 && minus10 < minus20,
        "bands out of order: {chart}"
    );
    for band in &series[1..=5] {
        assert_eq!(band["firstY"], band["lastY"], "{chart}");
    }
}

#[test]
fn the_pts_report_draws_the_specifications_plots_in_chromium() {
    let Some(binary) = chromium::find() else {
        support::skip("chromium is not installed (apt-get install chromium, or set CHROMIUM)");
        return;
    };
    let directory = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let result = run_suite(directory.path());
    let report = directory.path().join("out/pts.html");
    let mut browser = chromium::Browser::start(&binary, 1280, 900);
    browser.open(&report);
    let page = browser.evaluate(PTS_PROBE);
    assert_eq!(page["scripts"], 0);
    assert_eq!(
        page["sections"],
        serde_json::json!(["conditions", "iops", "throughput", "latency", "saturation"])
    );
    let conditions = page["conditions"].to_string();
    for row in [
        "Target",
        "Capacity",
        "Active range",
        "Purge",
        "Preconditioning",
        "Outstanding I/O",
        "Rounds",
    ] {
        assert!(conditions.contains(row), "{row} missing: {conditions}");
    }
    assert!(page["scaled"].as_u64().unwrap() >= 3, "{page}");
    // 2 block sizes × 7 mixes, each shaded by its IOPS.
    assert_eq!(page["surfaceCells"], 14, "{page}");

    let convergence = charts_of(&page, "pts-convergence");
    let sections: Vec<&str> = convergence
        .iter()
        .map(|chart| chart["section"].as_str().unwrap())
        .collect();
    assert_eq!(sections, ["iops", "throughput", "latency", "saturation"]);
    for (chart, test) in convergence.iter().zip(result["tests"].as_array().unwrap()) {
        assert_drawn(chart);
        let rounds = test["rounds"].as_array().unwrap().len();
        for one in chart["series"].as_array().unwrap() {
            assert_eq!(one["declaredPoints"], rounds, "{chart}");
        }
    }
    // One window plot per tracking variable of each test with a rule: IOPS 1, throughput 4
    // (two block sizes, write and read), latency 1.
    let windows = charts_of(&page, "pts-window");
    let variables: Vec<(String, String)> = result["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|test| test["kind"] != "saturation")
        .flat_map(|test| {
            test["windows"].as_array().unwrap().iter().map(|window| {
                (
                    test["kind"].as_str().unwrap().to_string(),
                    window["variable"].as_str().unwrap().to_string(),
                )
            })
        })
        .collect();
    assert_eq!(variables.len(), 6, "{variables:?}");
    assert_eq!(windows.len(), variables.len());
    for (chart, (kind, variable)) in windows.iter().zip(&variables) {
        assert_eq!(chart["section"], kind.as_str());
        assert_window(chart, variable);
    }
    let surface = charts_of(&page, "pts-iops-surface");
    assert_eq!(surface.len(), 1);
    assert_drawn(surface[0]);
    assert_eq!(surface[0]["series"].as_array().unwrap().len(), 7);
    let written = charts_of(&page, "pts-saturation-written");
    assert_eq!(written.len(), 1);
    assert_drawn(written[0]);

    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let screenshot = browser.screenshot(1280, 2400);
    assert_eq!(&screenshot[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::write(target.join("pts-report-screenshot.png"), &screenshot).unwrap();
    let events = browser.close();
    assert!(events.errors.is_empty(), "{:#?}", events.errors);
    let document = format!("file://{}", report.canonicalize().unwrap().display());
    let others: Vec<&String> = events
        .requests
        .iter()
        .filter(|url| **url != document && *url != "about:blank")
        .collect();
    assert!(others.is_empty(), "the page fetched {others:?}");
}
