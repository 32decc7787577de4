//! Short runs judged honestly: two 2-second runs record their series every 250 ms, so that
//! `compare` tells two rates 4.8× apart (null engine, rate-limited) and never calls two
//! equal runs different.

use crate::common::{plain_in, run_with_json};
use serde_json::Value;
use std::path::Path;

/// A 2-second null-engine run of 64 KiB reads at `rate`, saved as `name`.
fn short_run(dir: &Path, name: &str, rate: &str) -> Value {
    let path = dir.join(name);
    run_with_json(
        dir,
        &path,
        &[
            "f.dat",
            "--engine",
            "null",
            "--size",
            "16m",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--rate",
            rate,
            "--duration",
            "2",
            "--ramp",
            "0.5",
            "--no-confirm",
        ],
    )
    .expect_status(0);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// `compare`'s outcome for the throughput of `run` against `baseline`.
fn throughput_outcome(dir: &Path, baseline: &str, run: &str) -> String {
    let compared = plain_in(dir, &["compare", baseline, run, "--json"]);
    compared.expect_status(0);
    let json: Value = serde_json::from_str(&compared.stdout).unwrap();
    json["tests"][0]["changes"][0]["metrics"]
        .as_array()
        .and_then(|metrics| metrics.iter().find(|m| m["metric"] == "throughput"))
        .and_then(|metric| metric["outcome"].as_str())
        .unwrap_or("missing")
        .to_string()
}

#[test]
fn two_second_runs_four_point_eight_times_apart_are_told_apart_and_equal_ones_never_are() {
    let dir = tempfile::tempdir().unwrap();
    let slow = short_run(dir.path(), "slow.json", "10m");
    short_run(dir.path(), "fast.json", "48m");
    short_run(dir.path(), "again.json", "10m");
    // A 2-second run is sampled every 250 ms: eight full intervals, not two.
    let series = slow["tests"][0]["read"]["series"].as_array().unwrap();
    let full = series
        .iter()
        .filter(|point| point["duration_ns"] == 250_000_000)
        .count();
    assert!(full >= 7, "{series:?}");
    let ci = &slow["tests"][0]["analysis"]["confidence"]["read"]["bytes_per_second"];
    assert_eq!(ci["interval_ns"], 250_000_000, "{ci}");

    assert_eq!(
        throughput_outcome(dir.path(), "slow.json", "fast.json"),
        "better"
    );
    assert_eq!(
        throughput_outcome(dir.path(), "fast.json", "slow.json"),
        "worse"
    );
    let same = throughput_outcome(dir.path(), "slow.json", "again.json");
    assert!(same == "same" || same == "too_short", "{same}");
}
