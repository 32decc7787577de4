//! `iopath pts`: bad inputs refused before any I/O, the whole suite on an nbdkit memory
//! export in a test-sized budget, and a target whose rate the test raises every round never
//! reaching steady state.

use super::common::{Nbdkit, disk_tempdir, iopath, plain_in, write_foreign_file};
use crate::support::process::run_watching_stderr;
use crate::support::pts::{SUITE_IN_SECONDS, state};
use serde_json::Value;
use std::path::PathBuf;

/// `iopath pts URL` running the IOPS test alone on 2 % of the export: 4 KiB blocks, rounds of
/// 300 ms, at most `max_rounds` of them; the state file and the report go to `out`.
fn iops_test_alone<'a>(url: &'a str, max_rounds: &'a str) -> [&'a str; 15] {
    [
        "pts",
        url,
        "--allow-destructive",
        "--tests",
        "iops",
        "--block-sizes",
        "4k",
        "--round",
        "300ms",
        "--max-rounds",
        max_rounds,
        "--capacity-pct",
        "2",
        "--output-dir",
        "out",
    ]
}

/// An nbdkit memory export of 100 MiB behind the rate filter, whose rate the test changes
/// by rewriting the filter's rate file (replaced whole, so that the server never reads half
/// of it).
struct RatedExport {
    server: Nbdkit,
    rate_file: PathBuf,
    _directory: tempfile::TempDir,
}

impl RatedExport {
    /// Serves at `rate` (nbdkit's notation: `20M` bits a second), with `extra` filter
    /// parameters.
    fn start(rate: &str, extra: &[&str]) -> RatedExport {
        let directory = tempfile::tempdir().unwrap();
        let rate_file = directory.path().join("rate");
        let rate_argument = format!("rate-file={}", rate_file.display());
        let initial = format!("rate={rate}");
        write_rate(&rate_file, rate);
        RatedExport {
            server: Nbdkit::start(
                directory.path(),
                &[
                    &["--filter=rate", "memory", "100M", &initial, &rate_argument][..],
                    extra,
                ]
                .concat(),
            ),
            rate_file,
            _directory: directory,
        }
    }

    /// Runs the IOPS test alone against the export in `dir`, at most `max_rounds` rounds,
    /// calling `at_round` with each round's number as the round starts; returns the exit
    /// status and the standard error.
    fn run_iops_test(
        &self,
        dir: &std::path::Path,
        max_rounds: &str,
        mut at_round: impl FnMut(i32),
    ) -> (std::process::ExitStatus, String) {
        let url = self.server.url();
        run_watching_stderr(
            iopath()
                .current_dir(dir)
                .args(iops_test_alone(&url, max_rounds)),
            |line, _| {
                if let Some(number) = line
                    .strip_prefix("pts: IOPS: round ")
                    .and_then(|n| n.trim().parse::<i32>().ok())
                {
                    at_round(number);
                }
            },
        )
    }

    /// Sets the rate the server takes from its rate file.
    fn set_rate(&self, rate: &str) {
        write_rate(&self.rate_file, rate);
    }
}

/// Replaces `rate_file` whole with `rate`.
fn write_rate(rate_file: &std::path::Path, rate: &str) {
    let staging = rate_file.with_extension("new");
    std::fs::write(&staging, format!("{rate}\n")).unwrap();
    std::fs::rename(&staging, rate_file).unwrap();
}

/// A test's first tracking variable in each of its rounds, in round order.
fn first_tracked_of_each_round(test: &Value) -> Vec<f64> {
    test["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|round| round["tracked"][0].as_f64().unwrap())
        .collect()
}

#[test]
fn pts_bad_inputs_exit_2_and_leave_the_target_as_it_was() {
    let dir = disk_tempdir();
    let target = dir.path().join("target.dat");
    write_foreign_file(&target, 8 << 20);
    let before = std::fs::read(&target).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--tests", "iops,bogus"], "unknown test 'bogus'"),
        (&["--tests", "iops,iops"], "given twice"),
        (
            &["--purge", "secure-erase"],
            "issues no NVMe format or ATA security erase",
        ),
        (&["--purge", "sanitize"], "unknown purge method"),
        (&["--capacity-pct", "0"], "--capacity-pct"),
        (&["--capacity-pct", "101"], "--capacity-pct"),
        (&["--max-rounds", "4"], "--max-rounds"),
        (&["--max-rounds", "26"], "--max-rounds"),
        (
            &["--block-sizes", "4k,3k"],
            "not a block size of the specification",
        ),
        (&["--block-sizes", "8k,16k"], "must include 4k"),
        (&["--round", "10ms"], "at least 100ms"),
        (&["--round", "soon"], "--round"),
        (&["--capacity-pct", "5"], "less than 1 MiB"),
    ];
    for (flags, message) in cases {
        let mut args = vec![
            "pts",
            "target.dat",
            "--allow-destructive",
            "--output-dir",
            "out",
        ];
        args.extend_from_slice(flags);
        let output = plain_in(dir.path(), &args);
        assert_eq!(output.status, 2, "{flags:?}: {}", output.stderr);
        assert!(
            output.stderr.contains(message),
            "{flags:?}: expected '{message}' in: {}",
            output.stderr
        );
        assert!(
            std::fs::read(&target).unwrap() == before,
            "{flags:?} changed the target"
        );
        assert!(
            !dir.path().join("out").join("pts.json").exists(),
            "{flags:?} wrote a state file"
        );
    }
    // A file iopath did not create is written only with --allow-destructive; a state file
    // that is not there is no run to resume.
    let others: &[(&[&str], &str)] = &[
        (
            &["pts", "target.dat", "--output-dir", "out"],
            "--allow-destructive",
        ),
        (
            &[
                "pts",
                "target.dat",
                "--allow-destructive",
                "--resume",
                "nowhere",
            ],
            "--resume nowhere",
        ),
    ];
    for (args, message) in others {
        let output = plain_in(dir.path(), args);
        assert_eq!(output.status, 2, "{args:?}: {}", output.stderr);
        assert!(
            output.stderr.contains(message),
            "{args:?}: {}",
            output.stderr
        );
        assert!(std::fs::read(&target).unwrap() == before);
        assert!(!dir.path().join("out").join("pts.json").exists());
    }
    let missing = plain_in(
        dir.path(),
        &["pts", "missing.dat", "--allow-destructive", "--round", "1s"],
    );
    assert_eq!(missing.status, 2, "{}", missing.stderr);
    assert!(!dir.path().join("missing.dat").exists());
}

#[test]
fn pts_runs_every_test_on_an_nbd_memory_export_and_writes_the_report() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let server_dir = tempfile::tempdir().unwrap();
    let server = Nbdkit::start(server_dir.path(), &["memory", "16M"]);
    let dir = disk_tempdir();
    let url = server.url();
    let output = plain_in(
        dir.path(),
        &[&["pts", &url, "--allow-destructive"], &SUITE_IN_SECONDS[..]].concat(),
    );
    assert_eq!(output.status, 0, "{}", output.stderr);
    let out = dir.path().join("out");
    let result = state(&out);
    assert_eq!(result["complete"], true);
    let tests = result["tests"].as_array().unwrap();
    let kinds: Vec<&str> = tests.iter().map(|t| t["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["iops", "throughput", "latency", "saturation"]);
    for test in tests {
        let rounds = test["rounds"].as_array().unwrap();
        assert!(!rounds.is_empty(), "{}", test["kind"]);
        let outcome = test["outcome"].as_str().unwrap();
        if test["kind"] == "saturation" {
            assert_eq!(outcome, "saturated");
        } else {
            assert!(outcome == "steady" || outcome == "not_steady", "{outcome}");
            assert!(rounds.len() <= 5);
            assert!(rounds.len() >= 5 || outcome == "steady");
            assert!(test["preconditioned"] == true);
        }
    }
    // Write saturation stops at the first round that has written four times the active
    // range, or once its rounds have run for --saturation-time (1 s of 100 ms rounds).
    let written: Vec<u64> = tests[3]["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|round| round["cells"][0]["bytes"].as_u64().unwrap())
        .collect();
    let (total, last) = (written.iter().sum::<u64>(), *written.last().unwrap());
    let four_times = 4 * (16u64 << 20);
    assert!(
        (total - last < four_times && total >= four_times)
            || (total < four_times && written.len() == 10),
        "{written:?}"
    );
    // 7 mixes × one block size.
    assert_eq!(tests[0]["rounds"][0]["cells"].as_array().unwrap().len(), 7);
    // Latency: 0.5 and 8 KiB left out by --block-sizes: 3 mixes × 4 KiB.
    assert_eq!(tests[2]["rounds"][0]["cells"].as_array().unwrap().len(), 3);
    let conditions = &result["conditions"];
    assert_eq!(conditions["target"]["size_bytes"], 16 << 20);
    // nbdkit's memory plugin takes trims: each test starts from a trim of the whole export.
    assert_eq!(
        conditions["purge_method"],
        "trim of the whole export (NBD_CMD_TRIM)"
    );
    assert!(tests.iter().all(|test| test["purged"] == true), "{tests:?}");
    let scaled = conditions["scaled_down"].to_string();
    assert!(
        scaled.contains("100ms") && scaled.contains("4KiB only"),
        "{scaled}"
    );
    let html = std::fs::read_to_string(out.join("pts.html")).unwrap();
    for needle in [
        "data-kind=\"pts-convergence\"",
        "data-kind=\"pts-window\"",
        "data-kind=\"pts-iops-surface\"",
        "class=\"pts-surface\"",
        "class=\"pts-latency\"",
        "class=\"pts-throughput\"",
        "class=\"pts-saturation\"",
        "Scaled down from the specification",
        "from the PTS result (pts.json) alone",
    ] {
        assert!(html.contains(needle), "{needle} missing from the report");
    }
    for table in ["iops", "throughput", "latency", "saturation"] {
        let csv = std::fs::read_to_string(out.join(format!("pts-{table}.csv"))).unwrap();
        assert!(csv.starts_with("block_size,read_write_mix,"), "{csv}");
        assert!(out.join(format!("pts-{table}-rounds.csv")).exists());
    }
    // The test conditions as CSV too, with what was scaled down.
    let conditions = std::fs::read_to_string(out.join("pts-conditions.csv")).unwrap();
    assert!(conditions.starts_with("condition,value\n"), "{conditions}");
    for row in [
        "Purge,trim of the whole export (NBD_CMD_TRIM)\n",
        "Capacity,16777216 bytes (16m)\n",
        "Outstanding I/O,IOPS and saturation: QD 32 × 4 workers;",
        "Scaled down,each element of a round measured for 100ms",
    ] {
        assert!(conditions.contains(row), "{row} missing: {conditions}");
    }
    assert!(
        output
            .stdout
            .contains("Write Saturation: Write saturation ended")
    );
}

/// nbdkit's rate filter reads its rate from a file the test rewrites at the start of every
/// round, each time 1.6 times the last: the 4 KiB write IOPS climb round after round, and the
/// rule (slope within 10 %) never holds.
#[test]
fn timing_pts_a_rate_that_drifts_every_round_never_reaches_steady_state() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let export = RatedExport::start("20M", &[]);
    let dir = disk_tempdir();
    let (status, stderr) = export.run_iops_test(dir.path(), "5", |number| {
        let megabits = 20.0 * 1.6f64.powi(number - 1);
        export.set_rate(&format!("{}M", megabits.round() as u64));
    });
    assert_eq!(status.code(), Some(0), "{stderr}");
    let result = state(&dir.path().join("out"));
    let test = &result["tests"][0];
    assert_eq!(test["outcome"], "not_steady", "{stderr}");
    let tracked = first_tracked_of_each_round(test);
    assert_eq!(tracked.len(), 5);
    assert!(
        tracked[4] > 2.0 * tracked[0],
        "the rate did not rise: {tracked:?}"
    );
    assert_eq!(test["windows"][0]["slope_holds"], false, "{tracked:?}");
    let html = std::fs::read_to_string(dir.path().join("out/pts.html")).unwrap();
    assert!(html.contains("Steady state not reached after 5 rounds"));
}

/// The same export at a constant rate: the 4 KiB write IOPS settle, the rule holds, and the
/// test ends at the first window that does, before its most rounds. The filter's bucket holds
/// 10 ms of its rate (its default, two seconds, refills between rounds: a round that starts
/// after a longer pause, as on a busy machine, would run faster on the refill).
#[test]
fn timing_pts_a_constant_rate_reaches_steady_state_and_stops_there() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let server_dir = tempfile::tempdir().unwrap();
    let server = Nbdkit::start(
        server_dir.path(),
        &[
            "--filter=rate",
            "memory",
            "100M",
            "rate=20M",
            "burstiness=0.01",
        ],
    );
    let dir = disk_tempdir();
    let url = server.url();
    let output = plain_in(dir.path(), &iops_test_alone(&url, "12"));
    assert_eq!(output.status, 0, "{}", output.stderr);
    let result = state(&dir.path().join("out"));
    let test = &result["tests"][0];
    assert_eq!(test["outcome"], "steady", "{}", output.stderr);
    let rounds = test["rounds"].as_array().unwrap().len();
    assert!((5..12).contains(&rounds), "{rounds} rounds");
    let window = &test["windows"][0];
    assert_eq!(window["first_round"], rounds as u64 - 4);
    assert_eq!(window["excursion_holds"], true);
    assert_eq!(window["slope_holds"], true);
    assert!(test["steady_after_step"].is_null(), "{test}");
    assert!(output.stdout.contains("IOPS: Steady state reached"));
}

/// nbdkit's rate filter at 60 Mbit/s for three rounds, then at 20 Mbit/s (the test rewrites
/// its rate file as the fourth round starts), as a burst bucket that ran dry or a write cache
/// that filled: the rule holds on the lower level, and the report says that this steady
/// state is the level after a step down, with the round it came after and both rates.
#[test]
fn timing_pts_a_steady_state_after_a_step_down_is_called_the_level_after_it() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    // A bucket of a tenth of a second: a server that a busy host starved for a while does
    // not then serve a whole element at a burst.
    let export = RatedExport::start("60M", &["burstiness=0.1"]);
    let dir = disk_tempdir();
    let (status, stderr) = export.run_iops_test(dir.path(), "12", |number| {
        if number == 4 {
            export.set_rate("20M");
        }
    });
    assert_eq!(status.code(), Some(0), "{stderr}");
    let out = dir.path().join("out");
    let result = state(&out);
    let test = &result["tests"][0];
    assert_eq!(test["outcome"], "steady", "{stderr}");
    let found = &test["steady_after_step"];
    // The rate was changed as the fourth round started: three rounds at the first level,
    // within 10 % (the round in which it came is partly at each level when the server takes
    // the new rate a moment later).
    let rounds_before = found["rounds_before"].as_f64().unwrap();
    assert!((rounds_before - 3.0).abs() <= 0.3, "{test}");
    assert_eq!(found["variable"], "4KiB random write IOPS");
    let step = found["step"]["write_cliff"].clone();
    let before = step["before_iops"].as_f64().unwrap();
    let after = step["after_iops"].as_f64().unwrap();
    // The two levels are those of the rounds on each side of the step, in the ratio the
    // server's rates were set to (3), within the detector's noise.
    let tracked = first_tracked_of_each_round(test);
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    assert!(
        (before / mean(&tracked[..3]) - 1.0).abs() < 0.1,
        "{tracked:?}"
    );
    assert!(
        (after / mean(&tracked[3..]) - 1.0).abs() < 0.1,
        "{tracked:?}"
    );
    assert!((2.4..3.6).contains(&(before / after)), "{before} → {after}");
    let said = "It is the level after a step down, not the rate the target gave before it: \
                4KiB random write IOPS stepped down after round 3";
    let html = std::fs::read_to_string(out.join("pts.html")).unwrap();
    assert!(html.contains(said), "the report does not say it");
}

/// `--client`: the Client edition's differences — QD 16 × 2 workers, throughput at 1024 KiB
/// only, and rounds over the first 75 % of the active range while preconditioning writes
/// all of it — seen from the server's side: nbdkit's log filter records every request.
#[test]
fn pts_client_runs_the_client_editions_tests_on_three_quarters_of_the_range() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let server_dir = tempfile::tempdir().unwrap();
    let log = server_dir.path().join("requests.log");
    let log_argument = format!("logfile={}", log.display());
    let server = Nbdkit::start(
        server_dir.path(),
        &["--filter=log", "memory", "16M", &log_argument],
    );
    let dir = disk_tempdir();
    let url = server.url();
    let output = plain_in(
        dir.path(),
        &[
            "pts",
            &url,
            "--allow-destructive",
            "--client",
            "--tests",
            "iops,throughput",
            "--block-sizes",
            "4k",
            "--round",
            "100ms",
            "--max-rounds",
            "5",
            "--output-dir",
            "out",
        ],
    );
    assert_eq!(output.status, 0, "{}", output.stderr);
    let result = state(&dir.path().join("out"));
    let conditions = &result["conditions"];
    assert_eq!(conditions["edition"], "client", "{conditions}");
    assert_eq!(conditions["queue_depth"], 16);
    assert_eq!(conditions["workers"], 2);
    let throughput = &result["tests"][1];
    for round in throughput["rounds"].as_array().unwrap() {
        let sizes: Vec<u64> = round["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|cell| cell["block_size_bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(sizes, [1 << 20, 1 << 20], "{throughput}");
    }
    let html = std::fs::read_to_string(dir.path().join("out/pts.html")).unwrap();
    assert!(html.contains("SNIA PTS (Client)"));

    // Requests as the server saw them: (count, end) of every read and write.
    let three_quarters = 12u64 << 20;
    let text = std::fs::read_to_string(&log).unwrap();
    let field = |line: &str, name: &str| -> u64 {
        let value = line
            .split_whitespace()
            .find_map(|word| word.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {line}"));
        u64::from_str_radix(value.trim_start_matches("0x"), 16).unwrap()
    };
    let requests: Vec<(u64, u64)> = text
        .lines()
        .filter(|line| line.contains(" Write id=") || line.contains(" Read id="))
        .map(|line| {
            let count = field(line, "count=");
            (count, field(line, "offset=") + count)
        })
        .collect();
    let ends = |count: u64| requests.iter().filter(move |r| r.0 == count).map(|r| r.1);
    // The rounds: 4 KiB random and 1 MiB sequential, all within the first 12 MiB, the
    // random ones reaching near its end.
    assert!(ends(4096).count() > 100);
    assert!(
        ends(4096)
            .chain(ends(1 << 20))
            .all(|end| end <= three_quarters)
    );
    assert!(ends(4096).any(|end| end > 11 << 20));
    // Preconditioning: 128 KiB writes over the whole 16 MiB.
    assert_eq!(ends(128 << 10).max(), Some(16 << 20));
}
