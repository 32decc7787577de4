//! Test files left by a run killed with SIGKILL: later runs name them with the command that
//! removes them, and remove them only with --remove-stale (never a file of a live process or a
//! file of another name).

use crate::common::*;
use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A run on a temporary test file of 8 MiB, for `duration` seconds.
fn run_args(duration: &str) -> Vec<&str> {
    vec![
        "run",
        "--size",
        "8m",
        "--rw",
        "read",
        "--bs",
        "4k",
        "--ramp",
        "0",
        "--duration",
        duration,
    ]
}

#[test]
fn a_test_file_left_by_sigkill_is_named_and_removed_only_when_asked() {
    let dir = disk_tempdir();
    let mut victim = iopath()
        .current_dir(dir.path())
        .args(run_args("60"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let left = format!(".iopath-test-{}.tmp", victim.id());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.path().join(&left).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    victim.kill().unwrap(); // SIGKILL: no chance to clean up
    victim.wait().unwrap();
    assert!(dir.path().join(&left).exists(), "no test file appeared");
    // Files that are not stale: one of a live process (this one), one of another name.
    let live = format!(".iopath-test-{}.tmp", std::process::id());
    fs::write(dir.path().join(&live), b"a live run's").unwrap();
    fs::write(dir.path().join(".iopath-test-x.tmp"), b"someone's").unwrap();

    let quick = run_args("0.2");
    let run = plain_in(dir.path(), &quick);
    run.expect_status(0);
    let notes: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.contains("killed iopath runs"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", run.stderr);
    assert!(
        notes[0].starts_with("note: 1 test file left"),
        "{}",
        notes[0]
    );
    assert!(
        notes[0].contains(&format!("rm -- ./{left}")),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("--remove-stale"), "{}", notes[0]);
    assert!(!run.stderr.contains(&live), "{}", run.stderr);
    assert!(
        dir.path().join(&left).exists(),
        "removed without being asked"
    );

    let run = plain_in(dir.path(), &[&quick[..], &["--remove-stale"]].concat());
    run.expect_status(0);
    assert!(
        run.stderr.contains(&format!("removed ./{left}")),
        "{}",
        run.stderr
    );
    let mut kept = vec![".iopath-test-x.tmp".to_string(), live];
    kept.sort();
    assert_eq!(list_dir(dir.path()), kept, "{}", run.stderr);
    let run = plain_in(dir.path(), &quick);
    assert!(!run.stderr.contains("killed iopath runs"), "{}", run.stderr);
}
