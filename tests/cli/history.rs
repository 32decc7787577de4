//! The run history through the binary: runs kept and listed, named by reference in compare
//! and report, a test's trend, several processes writing at once, and databases that are damaged or from a
//! newer iopath (reported, left as they are, and never failing a run). Every test keeps its
//! own database in a temporary directory (IOPATH_HISTORY).

use crate::common::*;
use iopath::history::{Filter, History};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory and the history database in it.
struct Scratch {
    dir: tempfile::TempDir,
    history: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("history/h.sqlite");
        Scratch { dir, history }
    }

    /// The binary in the scratch directory, keeping its runs in the scratch history.
    fn command(&self) -> Command {
        let mut command = iopath();
        command
            .current_dir(self.dir.path())
            .env("IOPATH_HISTORY", &self.history);
        command
    }

    fn iopath(&self, args: &[&str]) -> RunOutput {
        let output: Output = self.command().args(args).output().expect("iopath runs");
        into_run_output(output, None)
    }

    /// A short null-engine run with `extra` flags.
    fn run(&self, extra: &[&str]) -> RunOutput {
        self.run_for("0.2", extra)
    }

    /// A null-engine run of `duration` with `extra` flags.
    fn run_for(&self, duration: &str, extra: &[&str]) -> RunOutput {
        let mut args = null_run("randread", duration);
        args.extend_from_slice(extra);
        self.iopath(&args)
    }

    fn kept(&self) -> usize {
        History::open_existing(&self.history)
            .unwrap()
            .list(&Filter::default())
            .unwrap()
            .len()
    }
}

/// The arguments of a null-engine run of `rw` over a 1 MiB t.dat for `duration`, no ramp.
pub fn null_run<'a>(rw: &'a str, duration: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "t.dat",
        "--size",
        "1m",
        "--engine",
        "null",
        "--rw",
        rw,
        "--ramp",
        "0",
        "--duration",
        duration,
    ]
}

#[test]
fn runs_are_kept_listed_and_named_by_reference() {
    let scratch = Scratch::new();
    let listed = scratch.iopath(&["history"]);
    listed.expect_status(0);
    assert!(
        listed.stdout.contains("no run kept yet"),
        "{}",
        listed.stdout
    );
    assert!(!scratch.history.exists());

    scratch
        .run(&["--label", "fc", "--qd", "1"])
        .expect_status(0);
    scratch
        .run(&["--label", "iscsi", "--qd", "8"])
        .expect_status(0);
    scratch.run(&["--no-history"]).expect_status(0);
    assert_eq!(scratch.kept(), 2);

    let listed = scratch.iopath(&["history"]);
    listed.expect_status(0);
    let fc_row = listed.stdout.find("fc").expect("fc listed");
    let iscsi_row = listed.stdout.find("iscsi").expect("iscsi listed");
    assert!(iscsi_row < fc_row, "newest first:\n{}", listed.stdout);
    assert!(
        listed.stdout.contains("randread 4k QD8"),
        "{}",
        listed.stdout
    );
    let only_fc = scratch.iopath(&["history", "--label", "fc", "--since", "1d"]);
    only_fc.expect_status(0);
    assert!(only_fc.stdout.contains("QD1") && !only_fc.stdout.contains("iscsi"));
    let elsewhere = scratch.iopath(&["history", "--target", "/no/such/target"]);
    assert!(elsewhere.stdout.contains("no run in the history matches"));

    let compared = scratch.iopath(&["compare", "@label:fc", "@label:iscsi", "--json"]);
    compared.expect_status(0);
    let json: serde_json::Value = serde_json::from_str(&compared.stdout).unwrap();
    let text = json.to_string();
    assert!(
        text.contains("\"fc\"") && text.contains("\"iscsi\""),
        "{text}"
    );
    let last_two = scratch.iopath(&["compare", "before=@-1", "after=@last"]);
    last_two.expect_status(0);
    assert!(
        last_two.stdout.contains("after/before"),
        "{}",
        last_two.stdout
    );

    scratch
        .iopath(&["report", "@last", "-o", "r.html"])
        .expect_status(0);
    let html = std::fs::read_to_string(scratch.dir.path().join("r.html")).unwrap();
    assert!(html.contains("iscsi"));
}

#[test]
fn references_that_name_nothing_are_bad_input() {
    let scratch = Scratch::new();
    let missing = scratch.iopath(&["compare", "@last", "@-1"]);
    missing.expect_status(2);
    assert!(
        missing.stderr.contains("no history yet"),
        "{}",
        missing.stderr
    );
    scratch.run(&[]).expect_status(0);
    for (reference, message) in [
        ("@-1", "@-1: no such run in the history"),
        ("@label:nfs", "@label:nfs: no such run"),
        ("@yesterday", "not a history reference"),
    ] {
        let refused = scratch.iopath(&["compare", "@last", reference]);
        refused.expect_status(2);
        assert!(refused.stderr.contains(message), "{}", refused.stderr);
    }
    let since = scratch.iopath(&["history", "--since", "soon"]);
    since.expect_status(2);
    assert!(since.stderr.contains("--since soon"), "{}", since.stderr);
}

#[test]
fn runs_finishing_at_once_are_all_kept() {
    let scratch = Scratch::new();
    let mut children = Vec::new();
    for index in 0..8 {
        let child = scratch
            .command()
            .args(null_run("read", "0.3"))
            .arg("--label")
            .arg(format!("together{index}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        children.push(child);
    }
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert!(
            !stderr.contains("warning: the run was not kept"),
            "{stderr}"
        );
    }
    assert_eq!(scratch.kept(), 8);
}

#[test]
fn a_damaged_history_is_reported_left_alone_and_never_fails_a_run() {
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.history.parent().unwrap()).unwrap();
    let garbage = vec![b'x'; 4096];
    std::fs::write(&scratch.history, &garbage).unwrap();
    let run = scratch.run(&[]);
    run.expect_status(0);
    assert!(
        run.stderr
            .contains("warning: the run was not kept in the history")
            && run.stderr.contains("damaged"),
        "{}",
        run.stderr
    );
    let listed = scratch.iopath(&["history"]);
    listed.expect_status(2);
    assert!(
        listed.stderr.contains("left untouched"),
        "{}",
        listed.stderr
    );
    assert_eq!(std::fs::read(&scratch.history).unwrap(), garbage);
}

#[test]
fn a_history_from_a_newer_iopath_is_refused_and_kept() {
    let scratch = Scratch::new();
    scratch.run(&[]).expect_status(0);
    set_version(&scratch.history, 99);
    let run = scratch.run(&[]);
    run.expect_status(0);
    assert!(run.stderr.contains("newer iopath"), "{}", run.stderr);
    let listed = scratch.iopath(&["history"]);
    listed.expect_status(2);
    assert!(
        listed.stderr.contains("history schema version 99"),
        "{}",
        listed.stderr
    );
    set_version(&scratch.history, iopath::history::schema::current_version());
    assert_eq!(scratch.kept(), 1);
}

#[test]
fn a_history_in_a_place_that_cannot_be_written_is_a_warning() {
    let scratch = Scratch::new();
    std::fs::write(scratch.dir.path().join("file"), b"").unwrap();
    let output = iopath()
        .current_dir(scratch.dir.path())
        .env("IOPATH_HISTORY", scratch.dir.path().join("file/h.sqlite"))
        .args([
            "run",
            "t.dat",
            "--size",
            "1m",
            "--engine",
            "null",
            "--duration",
            "0.2",
            "--ramp",
            "0",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("not kept in the history"), "{stderr}");
}

fn set_version(path: &Path, version: u32) {
    rusqlite::Connection::open(path)
        .unwrap()
        .pragma_update(None, "user_version", version)
        .unwrap();
}

#[test]
fn a_trend_says_worse_when_a_run_falls_beyond_noise() {
    let scratch = Scratch::new();
    let trend_of = |extra: &[&str]| {
        let mut args = vec!["history", "trend", "randread 4k QD1"];
        args.extend_from_slice(extra);
        scratch.iopath(&args)
    };
    let none = trend_of(&[]);
    none.expect_status(2);
    assert!(
        none.stderr
            .contains("no run in the history holds a test named")
    );
    // Twenty full intervals each, so that every figure has a narrow interval even on a busy
    // machine; the second run waits 1 ms per I/O on the null engine: far slower than the first.
    let samples = ["--interval", "100ms"];
    scratch.run_for("2", &samples).expect_status(0);
    scratch
        .run_for("2", &[&samples[..], &["--null-delay", "1ms"]].concat())
        .expect_status(0);
    let shown = trend_of(&[]);
    shown.expect_status(0);
    assert!(shown.stdout.contains("IOPS worse"), "{}", shown.stdout);
    let checked = trend_of(&["--fail-if-worse"]);
    checked.expect_status(1);
    assert!(
        checked.stderr.contains("worse than the one before"),
        "{}",
        checked.stderr
    );
    let only_the_first = trend_of(&["--limit", "1", "--fail-if-worse"]);
    only_the_first.expect_status(0);
}

/// Text a history holds (put there by a result, or by anyone who can write the database)
/// reaches the terminal escaped and shortened, in the list and in a trend: no raw escape
/// sequence, no 10,000-character cell.
#[test]
fn history_text_reaches_the_terminal_escaped_and_shortened() {
    let scratch = Scratch::new();
    scratch.run(&[]).expect_status(0);
    let hostile = |what: &str| format!("{what}\u{1b}]0;owned\u{7}\u{1b}[2J{}", "x".repeat(10_000));
    let connection = rusqlite::Connection::open(&scratch.history).unwrap();
    connection
        .execute(
            "UPDATE runs SET label = ?1, host = ?2, targets = ?3, verdicts = ?4,
                started_at = ?5",
            [
                hostile("label"),
                hostile("host"),
                hostile("target"),
                hostile("verdict"),
                hostile("2026-12-01T00:00:00Z"),
            ],
        )
        .unwrap();
    drop(connection);
    let listed = scratch.iopath(&["history"]);
    listed.expect_status(0);
    let trend = scratch.iopath(&["history", "trend", "randread 4k QD1"]);
    trend.expect_status(0);
    for (what, output) in [("history", &listed.stdout), ("trend", &trend.stdout)] {
        assert!(
            !output.contains('\u{1b}') && !output.contains('\u{7}'),
            "{what}: {output}"
        );
        assert!(output.contains("\\u{1b}]0;owned"), "{what}: {output}");
        let longest = output.lines().map(|line| line.chars().count()).max();
        assert!(
            longest < Some(2_000),
            "{what}: a line of {longest:?} characters"
        );
    }
    for column in ["label", "host", "target", "verdict"] {
        assert!(
            listed.stdout.contains(&format!("{column}\\u{{1b}}")),
            "{column}"
        );
    }
}
