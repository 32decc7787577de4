//! The exact output of every exporter on the saved runs of tests/fixtures, against the
//! snapshots in tests/formats/snapshots (insta): the terminal table, fio JSON, Iometer CSV,
//! Markdown, the HTML report's summary, path, trust and comparison sections, and compare in text,
//! Markdown and JSON. iopath's own JSON must give back the saved file byte for byte.
//!
//! A difference fails the test and, outside CI, leaves the new output beside the snapshot
//! (`.snap.new`) for review: `cargo insta review`, or `INSTA_UPDATE=always cargo test --test
//! formats exporter_snapshots::` to accept every change. Under CI nothing is written.

use crate::support;

use iopath::compare::{CompareOptions, Comparison, LabeledRun, compare};
use iopath::report::compare_json::write_compare_json;
use iopath::report::compare_markdown::write_compare_markdown;
use iopath::report::compare_text::write_compare_text;
use iopath::report::csv::write_iometer_csv;
use iopath::report::fio_json::write_fio_json;
use iopath::report::html::write_html;
use iopath::report::json::write_json;
use iopath::report::markdown::write_markdown;
use iopath::report::model::Report;
use iopath::report::text::write_text;
use iopath::result::RunResult;
use support::fixtures::{NAMES, result};

/// What `write` makes of its input, as text.
fn written(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    write(&mut out).unwrap();
    String::from_utf8(out).expect("UTF-8")
}

/// The `<section id="ID">` of `html`, whole; `None` when the page has none.
fn section(html: &str, id: &str) -> Option<String> {
    let start = html.find(&format!("<section id=\"{id}\">"))?;
    let length = html[start..].find("</section>")? + "</section>".len();
    Some(html[start..start + length].to_string())
}

#[test]
fn json_gives_back_the_saved_file() {
    for name in NAMES {
        let saved =
            std::fs::read_to_string(support::fixtures::directory().join(format!("{name}.json")))
                .unwrap();
        // The fixtures were saved in schema version 1: of one target each, they differ from
        // what version 2 writes only in that number.
        let saved = saved.replacen(
            "\"schema_version\": 1,",
            &format!("\"schema_version\": {},", iopath::result::SCHEMA_VERSION),
            1,
        );
        let again = written(|out| write_json(&result(name), out));
        assert!(
            again == saved,
            "{name}: the JSON written differs from the file read"
        );
    }
}

#[test]
fn terminal_tables() {
    for name in NAMES {
        let text = written(|out| write_text(Report::of_run(&result(name)).run(), out));
        insta::assert_snapshot!(format!("text-{name}"), text);
    }
}

#[test]
fn fio_json() {
    for name in NAMES {
        let text = written(|out| write_fio_json(Report::of_run(&result(name)).run(), false, out));
        insta::assert_snapshot!(format!("fio-json-{name}"), text);
    }
}

#[test]
fn iometer_csv() {
    for name in NAMES {
        let text = written(|out| write_iometer_csv(Report::of_run(&result(name)).run(), out));
        insta::assert_snapshot!(format!("csv-{name}"), text);
    }
}

#[test]
fn markdown() {
    for name in NAMES {
        let text = written(|out| write_markdown(Report::of_run(&result(name)).run(), out));
        insta::assert_snapshot!(format!("markdown-{name}"), text);
    }
}

#[test]
fn html_sections_of_one_run() {
    for name in NAMES {
        let run = result(name);
        let report = Report::of_runs(
            &[LabeledRun::new(name, &run)],
            &CompareOptions::default(),
            None,
        )
        .unwrap();
        let html = written(|out| write_html(&report, out));
        for id in ["summary", "path", "trust"] {
            let part = section(&html, id).unwrap_or_else(|| panic!("{name}: no {id} section"));
            insta::assert_snapshot!(format!("html-{id}-{name}"), part);
        }
    }
}

/// The saved sweep (io_uring) beside the same sweep with the sync engine.
fn engines_compared(io_uring: &RunResult, sync: &RunResult) -> Comparison {
    compare(
        &[
            LabeledRun::new("io_uring", io_uring),
            LabeledRun::new("sync", sync),
        ],
        &CompareOptions::default(),
    )
    .unwrap()
}

#[test]
fn compare_formats() {
    let (io_uring, sync) = (result("sweep"), result("sweep-sync"));
    let comparison = engines_compared(&io_uring, &sync);
    assert_eq!(comparison.tests.len(), 2, "{:?}", comparison.unmatched);
    insta::assert_snapshot!(
        "compare-text",
        written(|out| write_compare_text(&comparison, out))
    );
    insta::assert_snapshot!(
        "compare-markdown",
        written(|out| write_compare_markdown(&comparison, out))
    );
    insta::assert_snapshot!(
        "compare-json",
        written(|out| write_compare_json(&comparison, out))
    );
    let report = Report::of_runs(
        &[
            LabeledRun::new("io_uring", &io_uring),
            LabeledRun::new("sync", &sync),
        ],
        &CompareOptions::default(),
        None,
    )
    .unwrap();
    let html = written(|out| write_html(&report, out));
    insta::assert_snapshot!(
        "html-comparison",
        section(&html, "comparison").expect("a comparison section")
    );
}
