//! `iopath compare` of two runs holding one test each: compared side by side whatever the
//! tests' names, with what differs between them named.

use crate::common::{plain_in, run_with_json};

#[test]
fn two_single_test_runs_are_compared_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let short = ["--engine", "null", "--duration", "1", "--ramp", "0"];
    let qd1 = dir.path().join("qd1.json");
    let qd32 = dir.path().join("qd32.json");
    run_with_json(
        dir.path(),
        &qd1,
        &[&short[..], &["--rw", "randread", "--bs", "4k", "--qd", "1"]].concat(),
    )
    .expect_status(0);
    run_with_json(
        dir.path(),
        &qd32,
        &[
            &short[..],
            &["--rw", "randread", "--bs", "8k", "--qd", "32"],
        ]
        .concat(),
    )
    .expect_status(0);

    let text = plain_in(dir.path(), &["compare", "qd1.json", "qd32.json"]);
    text.expect_status(0);
    assert!(
        !text.stdout.contains("nothing to put side by side"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("randread 4k QD1 vs randread 8k QD32"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("compared as one test"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("qd32: block size, queue depth differ: "),
        "{}",
        text.stdout
    );

    let json = plain_in(dir.path(), &["compare", "--json", "qd1.json", "qd32.json"]);
    json.expect_status(0);
    let comparison: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let tests = comparison["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "{}", json.stdout);
    assert_eq!(tests[0]["figures"].as_array().unwrap().len(), 2);
    assert!(comparison["unmatched"].as_array().unwrap().is_empty());

    // Runs of several tests still match by name: a test alone in one run is not paired.
    let same = plain_in(dir.path(), &["compare", "qd1.json", "qd1.json"]);
    same.expect_status(0);
    assert!(
        !same.stdout.contains("compared as one test"),
        "{}",
        same.stdout
    );
}
