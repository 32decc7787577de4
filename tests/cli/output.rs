//! What the user gets: the default suite, the table, the JSON RunResult.

use crate::common::*;

#[test]
fn the_default_suite_runs_on_a_temporary_file_and_removes_it() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &["--size", "32m", "--duration", "0.3", "--ramp", "0"],
    );
    run.expect_status(0);
    let json = run.json();
    let names: Vec<&str> = json["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "SEQ1M Q8 read",
            "SEQ1M Q8 write",
            "RND4K Q32 read",
            "RND4K Q32 write",
            "RND4K Q1 read",
            "RND4K Q1 write",
            "SEQ512 Q64 read"
        ]
    );
    for test in json["tests"].as_array().unwrap() {
        let direction = if test["name"].as_str().unwrap().ends_with("write") {
            "write"
        } else {
            "read"
        };
        assert!(
            test[direction]["io_count"].as_u64().unwrap() > 0,
            "{}",
            test["name"]
        );
    }
    let last_job = &json["tests"][6]["jobs"][0];
    assert_eq!(last_job["queue_depth_per_worker"], 64);
    assert_eq!(
        last_job["workload"]["access"]["lines"][0]["size_bytes"],
        512
    );
    for name in names {
        assert!(run.stdout.contains(name), "table lacks {name}");
    }
    assert_eq!(
        list_dir(dir.path()),
        ["out.json"],
        "the temporary file must be gone"
    );
}

#[test]
fn the_result_carries_host_target_workload_and_series() {
    let dir = disk_tempdir();
    let run = run_in(
        dir.path(),
        &[
            "f.dat",
            "--size",
            "16m",
            "--rw",
            "randrw",
            "--read-pct",
            "70",
            "--bs",
            "4k",
            "--qd",
            "4",
            "--duration",
            "2",
            "--ramp",
            "0.2",
            "--label",
            "before",
        ],
    );
    run.expect_status(0);
    let json = run.json();
    assert_eq!(json["schema_version"], 2);
    assert_eq!(json["label"], "before");
    assert!(json["command_line"].as_array().unwrap().len() > 5);
    for field in ["hostname", "kernel", "cpu_model"] {
        assert!(!json["host"][field].as_str().unwrap().is_empty(), "{field}");
    }
    assert!(u64_at(json, &["host", "memory_bytes"]) > 0);
    let target = &json["targets"][0];
    assert_eq!(target["kind"], "file");
    assert_eq!(target["size_bytes"], 16 << 20);
    assert!(u64_at(target, &["logical_block_size_bytes"]) >= 512);
    assert_eq!(target["created_by_iopath"], true);
    let test = &json["tests"][0];
    assert_eq!(
        test["jobs"][0]["workload"]["access"]["lines"][0]["read_percent"],
        70
    );
    assert_eq!(test["jobs"][0]["ramp_ns"], 200_000_000);
    assert_eq!(test["measured_ns"], 2_000_000_000u64);
    for direction in ["read", "write"] {
        let d = &test[direction];
        assert!(d["io_count"].as_u64().unwrap() > 0);
        let percentiles = d["latency"]["percentiles_ns"].as_object().unwrap();
        assert_eq!(percentiles.len(), 7);
        let series = d["series"].as_array().unwrap();
        // A run under 10 s is sampled every 250 ms.
        assert_eq!(series.len(), 8, "one point per 250 ms");
        assert!(series.iter().all(|p| p["duration_ns"] == 250_000_000));
        let summed: u64 = series.iter().map(|p| p["io_count"].as_u64().unwrap()).sum();
        assert_eq!(summed, d["io_count"].as_u64().unwrap());
        assert!(
            series
                .iter()
                .all(|p| p["p99_latency_ns"].as_u64().unwrap() > 0)
        );
    }
    let reads = test["read"]["io_count"].as_f64().unwrap();
    let all = test["total"]["io_count"].as_f64().unwrap();
    assert!((reads / all - 0.7).abs() < 0.05);
    assert!(u64_at(test, &["cpu", "user_ns"]) + u64_at(test, &["cpu", "system_ns"]) > 0);
    assert!(!test["cpu"]["cores"].as_array().unwrap().is_empty());
}

#[test]
fn json_on_stdout_is_never_mixed_with_messages() {
    let dir = disk_tempdir();
    let run = plain_in(
        dir.path(),
        &[
            "run",
            "f.dat",
            "--size",
            "8m",
            "--rw",
            "read",
            "--duration",
            "0.3",
            "--ramp",
            "0",
            "--json",
            "-",
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is JSON only");
    assert_eq!(json["tests"][0]["stop_reason"], "completed");
    assert!(run.stderr.contains("MB/s"), "the table goes to stderr");
    assert!(run.stderr.contains("creating"));
    assert!(
        !run.stdout.contains('\r') && !run.stderr.contains('\r'),
        "no live line off a terminal"
    );
}

#[test]
fn help_shows_examples() {
    let dir = disk_tempdir();
    let top = plain_in(dir.path(), &["--help"]);
    assert_eq!(top.status, 0);
    assert!(top.stdout.contains("Examples:") && top.stdout.contains("iopath run"));
    let run = plain_in(dir.path(), &["run", "--help"]);
    assert_eq!(run.status, 0);
    for flag in [
        "--rw",
        "--random-pct",
        "--bs",
        "--qd",
        "--bytes",
        "--fsync-at-end",
        "--allow-destructive",
        "--live",
        "--no-live",
        "--metrics",
    ] {
        assert!(run.stdout.contains(flag), "run --help lacks {flag}");
    }
}

#[test]
fn a_terminal_gets_a_live_line_each_second() {
    crate::support::skip_unless!(
        has_command("script"),
        "script(1), which gives iopath a terminal, is not installed (apt-get install bsdutils)"
    );
    let dir = disk_tempdir();
    let command = format!(
        "{} run f.dat --size 8m --rw randread --duration 2 --ramp 0.5",
        env!("CARGO_BIN_EXE_iopath")
    );
    let output = std::process::Command::new("script")
        .env("IOPATH_HISTORY", crate::support::history::path())
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    let live_updates = text.matches("\r\u{1b}[2K").count();
    assert!(
        live_updates >= 2,
        "expected a live line on a terminal: {text:?}"
    );
    assert!(
        text.contains("MB/s") && text.contains("IOPS") && text.contains("/ 2.5 s"),
        "{text}"
    );
}
