//! `iopath pts` runs in the local history: listed by `iopath history`, drawn again by
//! `iopath report @last`, refused by `iopath compare` with a message that says what they are,
//! and left out with `--no-history`.

use super::common::{Nbdkit, brief_saturation, disk_tempdir};
use std::path::Path;
use std::process::Output;

/// `iopath ARGS` in `dir` with its history at `history`.
fn with_history(dir: &Path, history: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(dir)
        .env("IOPATH_HISTORY", history)
        .args(args)
        .output()
        .expect("iopath runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn pts_runs_are_kept_in_the_history_and_drawn_again_from_it() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let server_dir = tempfile::tempdir().unwrap();
    let server = Nbdkit::start(server_dir.path(), &["memory", "16M"]);
    let dir = disk_tempdir();
    let history = dir.path().join("history.sqlite");
    let url = server.url();
    let pts = |extra: &[&str]| {
        let mut args = brief_saturation(&url);
        args.extend(["--allow-destructive", "--output-dir", "out"]);
        args.extend_from_slice(extra);
        let output = with_history(dir.path(), &history, &args);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    };
    pts(&[]);
    pts(&["--no-history"]);
    let listed = with_history(dir.path(), &history, &["history"]);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
    let table = text(&listed.stdout);
    assert_eq!(
        table.matches("PTS Enterprise: Write Saturation").count(),
        1,
        "{table}"
    );
    assert!(
        table.contains("saturated") && table.contains("nbd"),
        "{table}"
    );

    let drawn = with_history(
        dir.path(),
        &history,
        &["report", "@last", "-o", "again.html"],
    );
    assert_eq!(drawn.status.code(), Some(0), "{}", text(&drawn.stderr));
    let html = std::fs::read_to_string(dir.path().join("again.html")).unwrap();
    for needle in [
        "SNIA PTS (Enterprise)",
        "class=\"pts-saturation\"",
        "data-kind=\"pts-saturation-written\"",
    ] {
        assert!(html.contains(needle), "{needle} missing from the report");
    }

    let compared = with_history(dir.path(), &history, &["compare", "@last", "@last"]);
    assert_eq!(compared.status.code(), Some(2));
    let stderr = text(&compared.stderr);
    assert!(stderr.contains("is an `iopath pts` run"), "{stderr}");
}
