//! `iopath pts` runs in the local history: listed by `iopath history`, drawn again by
//! `iopath report @last`, refused by `iopath compare` with a message that says what they are,
//! and left out with `--no-history`; an interrupted run and its resumption kept as one, with
//! its `--label`.

use super::common::{Nbdkit, brief_saturation, disk_tempdir};
use crate::support::process::{interrupt, run_watching_stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// `iopath ARGS` in `dir` with its history at `history`, not started.
fn command(dir: &Path, history: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_iopath"));
    command
        .current_dir(dir)
        .env("IOPATH_HISTORY", history)
        .args(args);
    command
}

/// `iopath ARGS` in `dir` with its history at `history`.
fn with_history(dir: &Path, history: &Path, args: &[&str]) -> Output {
    command(dir, history, args).output().expect("iopath runs")
}

/// `iopath report REFERENCE -o again.html` in `dir`, which must succeed: the page.
fn drawn_again(dir: &Path, history: &Path, reference: &str) -> String {
    let drawn = with_history(dir, history, &["report", reference, "-o", "again.html"]);
    assert_eq!(drawn.status.code(), Some(0), "{}", text(&drawn.stderr));
    std::fs::read_to_string(dir.join("again.html")).unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An nbdkit memory export of 16 MiB, a directory on disk to run in and a history file in it.
struct Setup {
    _server_dir: tempfile::TempDir,
    server: Nbdkit,
    dir: tempfile::TempDir,
    history: PathBuf,
}

/// The [`Setup`] of a test, or `None` when nbdkit is missing (the test is skipped).
fn setup() -> Option<Setup> {
    setup_serving(&["memory", "16M"])
}

/// The [`Setup`] of a test whose server is `nbdkit SERVER`, or `None` when nbdkit is missing.
fn setup_serving(server: &[&str]) -> Option<Setup> {
    crate::support::devices::required_tool("nbdkit", "nbdkit")?;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Nbdkit::start(server_dir.path(), server);
    let dir = disk_tempdir();
    let history = dir.path().join("history.sqlite");
    Some(Setup {
        _server_dir: server_dir,
        server,
        dir,
        history,
    })
}

#[test]
fn pts_runs_are_kept_in_the_history_and_drawn_again_from_it() {
    let Some(set_up) = setup() else {
        return;
    };
    let (dir, history, url) = (&set_up.dir, &set_up.history, set_up.server.url());
    let pts = |extra: &[&str]| {
        let mut args = brief_saturation(&url);
        args.extend(["--allow-destructive", "--output-dir", "out"]);
        args.extend_from_slice(extra);
        let output = with_history(dir.path(), history, &args);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    };
    pts(&[]);
    pts(&["--no-history"]);
    let listed = with_history(dir.path(), history, &["history"]);
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

    let html = drawn_again(dir.path(), history, "@last");
    for needle in [
        "SNIA PTS (Enterprise)",
        "class=\"pts-saturation\"",
        "data-kind=\"pts-saturation-written\"",
    ] {
        assert!(html.contains(needle), "{needle} missing from the report");
    }

    let compared = with_history(dir.path(), history, &["compare", "@last", "@last"]);
    assert_eq!(compared.status.code(), Some(2));
    let stderr = text(&compared.stderr);
    assert!(stderr.contains("is an `iopath pts` run"), "{stderr}");
}

/// `iopath pts` of the IOPS test alone at 4 KiB on `url`, rounds of 100 ms (at most 5), its
/// state and report in `out`, with `more` arguments, interrupted `after` the IOPS test's
/// second round starts: the exit status and what it wrote on stderr.
fn interrupted_in_round_two(
    set_up: &Setup,
    more: &[&str],
    after: std::time::Duration,
) -> (std::process::ExitStatus, String) {
    let url = set_up.server.url();
    let mut args = vec![
        "pts",
        url.as_str(),
        "--allow-destructive",
        "--tests",
        "iops",
        "--block-sizes",
        "4k",
        "--round",
        "100ms",
        "--max-rounds",
        "5",
        "--capacity-pct",
        "25",
        "--output-dir",
        "out",
    ];
    args.extend_from_slice(more);
    let mut command = command(set_up.dir.path(), &set_up.history, &args);
    run_watching_stderr(&mut command, |line, child| {
        if line == "pts: IOPS: round 2" {
            std::thread::sleep(after);
            interrupt(child);
        }
    })
}

/// A run interrupted in the IOPS test's second round is kept partial; its resumption replaces
/// it: one PTS run in the history, finished, with the label the first part was given, which
/// names it (`--label`, `@label:NAME`) and titles its report.
#[test]
fn a_resumed_pts_run_is_kept_once_with_its_label() {
    let Some(set_up) = setup() else {
        return;
    };
    let (dir, history, url) = (&set_up.dir, &set_up.history, set_up.server.url());
    let (status, stderr) =
        interrupted_in_round_two(&set_up, &["--label", "fw 2.1"], Duration::ZERO);
    assert_eq!(status.code(), Some(130), "{stderr}");
    let listed = |args: &[&str]| {
        let output = with_history(dir.path(), history, args);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    let table = listed(&["history"]);
    assert_eq!(table.matches("PTS Enterprise: IOPS").count(), 1, "{table}");
    assert!(table.contains("fw 2.1 (partial)"), "{table}");

    let resumed = with_history(
        dir.path(),
        history,
        &["pts", &url, "--allow-destructive", "--resume", "out"],
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    let table = listed(&["history"]);
    assert_eq!(table.matches("PTS Enterprise: IOPS").count(), 1, "{table}");
    assert!(
        table.contains("fw 2.1") && !table.contains("(partial)"),
        "{table}"
    );
    let by_label = listed(&["history", "--label", "fw 2.1"]);
    assert_eq!(
        by_label.matches("PTS Enterprise: IOPS").count(),
        1,
        "{by_label}"
    );

    let again = drawn_again(dir.path(), history, "@label:fw 2.1");
    let first = std::fs::read_to_string(dir.path().join("out/pts.html")).unwrap();
    for html in [again, first] {
        assert!(
            html.contains("<title>SNIA PTS (Enterprise) — fw 2.1 — nbd"),
            "the label in the title"
        );
    }
    // The label belongs to the run: a resumption keeps it and takes no other.
    let relabelled = with_history(
        dir.path(),
        history,
        &["pts", &url, "--resume", "out", "--label", "other"],
    );
    assert_eq!(relabelled.status.code(), Some(2));
}

#[test]
fn timing_an_interrupt_while_a_round_connects_ends_the_run_as_interrupted() {
    // Each element of a round is checked (a probe connection) and then run on a connection
    // of its own; this server takes 300 ms over each open. Interrupted 450 ms after a round
    // starts, the run meets the engine of its first element still connecting.
    let Some(set_up) = setup_serving(&["--filter=delay", "memory", "16M", "delay-open=300ms"])
    else {
        return;
    };
    let (status, stderr) = interrupted_in_round_two(&set_up, &[], Duration::from_millis(450));
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    let listed = with_history(set_up.dir.path(), &set_up.history, &["history"]);
    let table = text(&listed.stdout);
    assert!(table.contains("(partial)"), "{table}");
}
