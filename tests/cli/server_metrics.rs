//! `--server-metrics`: a real node exporter on loopback read during a run (its series on each
//! test's clock, its devices in the analysis), and every bad input refused with exit status 2
//! before any I/O (no test file created).

use crate::common::*;
use crate::support::devices::required_tool;
use crate::support::process::{KillOnDrop, free_port, wait_for_port};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

/// A node exporter on 127.0.0.1, stopped when dropped.
pub(crate) struct Exporter {
    _process: KillOnDrop,
    /// Its `/metrics` URL.
    pub(crate) url: String,
}

impl Exporter {
    /// Starts one (`None`: the package is missing and the test skips).
    pub(crate) fn start() -> Option<Exporter> {
        let program = required_tool("prometheus-node-exporter", "prometheus-node-exporter")?;
        let port = free_port();
        let child = Command::new(program)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .args([
                "--collector.disable-defaults",
                "--collector.cpu",
                "--collector.diskstats",
                "--collector.netdev",
                "--collector.uname",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the node exporter starts");
        let exporter = Exporter {
            _process: KillOnDrop(child),
            url: format!("http://127.0.0.1:{port}/metrics"),
        };
        wait_for_port("127.0.0.1", port);
        Some(exporter)
    }
}

#[test]
fn timing_a_node_exporter_read_during_the_run_gives_each_test_its_server_series() {
    let Some(exporter) = Exporter::start() else {
        return;
    };
    let dir = disk_tempdir();
    let output = run_in(
        dir.path(),
        &[
            "test.dat",
            "--size",
            "16m",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--duration",
            "3s",
            "--ramp",
            "0",
            "--no-confirm",
            "--no-history",
            "--server-metrics",
            &exporter.url,
        ],
    );
    output.expect_status(0);
    let test = &output.json()["tests"][0];
    let measured = test["measured_ns"].as_f64().expect("measured_ns");
    let series = &test["server_metrics"][0];
    assert_eq!(series["source"], exporter.url.as_str());
    assert!(series["node_name"].is_string(), "{series}");
    let devices = series["devices"].as_array().expect("devices");
    let cores: Vec<_> = devices.iter().filter(|d| d["kind"] == "core").collect();
    assert!(!cores.is_empty(), "{series}");
    for core in cores {
        let points = core["points"].as_array().expect("points");
        // Three seconds measured, a scrape a second: two or three intervals inside (one
        // fewer when a scrape on a loaded host took longer than its 2 s).
        assert!((1..=4).contains(&points.len()), "{core}");
        for point in points {
            let end = point["end_ns"].as_f64().unwrap();
            let busy = point["busy_percent"].as_f64().unwrap();
            assert!(end > 0.0 && end <= measured + 1e9, "{point}");
            assert!((0.0..=100.0).contains(&busy), "{point}");
        }
    }
    let hops = test["analysis"]["server_hops"]
        .as_array()
        .expect("server hops");
    assert!(hops.iter().any(|hop| hop["kind"] == "core"), "{hops:?}");
    assert!(
        output.stdout.contains("  server ") && output.stdout.contains("core cpu"),
        "{}",
        output.stdout
    );
}

#[test]
fn bad_server_metrics_inputs_exit_2_before_any_io() {
    let dir = disk_tempdir();
    let closed = format!("http://127.0.0.1:{}/metrics", free_port());
    let world_readable = dir.path().join("token");
    std::fs::write(&world_readable, "a-token-of-some-length\n").unwrap();
    std::fs::set_permissions(&world_readable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let token = world_readable.to_string_lossy().into_owned();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--server-metrics", "https://nas/metrics"],
            "https is not supported",
        ),
        (
            &["--server-metrics", "http://root:pw@nas/metrics"],
            "credentials do not go in the URL",
        ),
        (&["--server-metrics", "nas:9100"], "must start with http://"),
        (&["--server-metrics", &closed], "cannot connect"),
        (
            &[
                "--server-metrics",
                &closed,
                "--server-metrics-bearer-file",
                &token,
            ],
            "server metrics credentials",
        ),
    ];
    expect_refused_before_any_io(dir.path(), &cases);
}
