//! `--switch-snmp`: net-snmp's `snmpd` on loopback (a UDP port of its own, a community and a
//! configuration the test writes) read during a run — the host's interfaces as switch ports,
//! their series in the result — and every bad input refused with exit status 2 before any
//! I/O (no test file created).

use crate::common::*;
use crate::support::devices::required_tool;
use crate::support::process::{KillOnDrop, wait_until};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// A UDP port nothing listens on now.
fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|socket| socket.local_addr())
        .map(|address| address.port())
        .expect("a free UDP port")
}

/// An owner-only file holding `text`.
fn private_file(path: &Path, text: &str, mode: u32) -> String {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    path.to_string_lossy().into_owned()
}

/// `snmpd` on 127.0.0.1, stopped when dropped.
struct Agent {
    _process: KillOnDrop,
    address: String,
}

impl Agent {
    fn start(dir: &Path, community: &str) -> Option<Agent> {
        let program = required_tool("snmpd", "snmpd")?;
        let port = free_udp_port();
        let config = dir.join("snmpd.conf");
        std::fs::write(
            &config,
            format!("agentaddress udp:127.0.0.1:{port}\nrocommunity {community} 127.0.0.1\n"),
        )
        .unwrap();
        let pid_file = dir.join("snmpd.pid");
        let child = Command::new(program)
            .args(["-f", "-C", "-c"])
            .arg(&config)
            .arg("-Lf")
            .arg(dir.join("snmpd.log"))
            .arg("-p")
            .arg(&pid_file)
            .arg("-M")
            .arg(dir)
            .args(["-m", ""])
            .env("SNMP_PERSISTENT_DIR", dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("snmpd starts");
        let agent = Agent {
            _process: KillOnDrop(child),
            address: format!("127.0.0.1:{port}"),
        };
        // The agent is ready when it has written its pid file.
        wait_until("snmpd", || pid_file.exists());
        Some(agent)
    }
}

#[test]
fn timing_an_snmp_agent_read_during_the_run_gives_each_test_its_switch_ports() {
    let agent_dir = tempfile::tempdir().unwrap();
    let Some(agent) = Agent::start(agent_dir.path(), "iopath-ro") else {
        return;
    };
    let dir = disk_tempdir();
    let community = private_file(&dir.path().join("community"), "iopath-ro\n", 0o600);
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
            // The agent refreshes its counters every 3–4 s: 6 s holds at least one interval.
            "--duration",
            "6s",
            "--ramp",
            "0",
            "--no-confirm",
            "--no-history",
            "--switch-snmp",
            &agent.address,
            "--switch-snmp-community-file",
            &community,
        ],
    );
    output.expect_status(0);
    let test = &output.json()["tests"][0];
    let series = &test["server_metrics"][0];
    assert_eq!(series["source"], format!("snmp://{}", agent.address));
    assert!(series["node_name"].is_string(), "{series}");
    let ports = series["devices"].as_array().expect("devices");
    // Loopback is a port of every Linux host, its speed known to net-snmp.
    let lo = ports
        .iter()
        .find(|port| port["name"] == "lo")
        .unwrap_or_else(|| panic!("no lo: {series}"));
    assert_eq!(lo["kind"], "switch_port");
    assert!(
        lo["speed_bytes_per_second"].as_u64().unwrap_or(0) > 0,
        "{lo}"
    );
    // The agent's own answers cross loopback: the counters move, and its cache refreshes
    // every 3–4 s.
    let points = lo["points"].as_array().expect("points");
    assert!(!points.is_empty(), "{lo}");
    assert!(
        points
            .iter()
            .any(|p| p["read_bytes_per_second"].as_f64().unwrap_or(0.0) > 0.0),
        "{lo}"
    );
    assert!(output.stdout.contains("  switch "), "{}", output.stdout);

    // The agent stays silent to another community.
    let wrong = private_file(&dir.path().join("wrong"), "not-this-one\n", 0o600);
    std::fs::remove_file(dir.path().join("test.dat")).unwrap();
    let refused = run_in(
        dir.path(),
        &[
            "test.dat",
            "--size",
            "1m",
            "--duration",
            "1s",
            "--no-history",
            "--switch-snmp",
            &agent.address,
            "--switch-snmp-community-file",
            &wrong,
        ],
    );
    refused.expect_status(2);
    assert!(refused.stderr.contains("no answer"), "{}", refused.stderr);
    assert!(
        !dir.path().join("test.dat").exists(),
        "I/O before the refusal"
    );
}

#[test]
fn bad_switch_snmp_inputs_exit_2_before_any_io() {
    let dir = disk_tempdir();
    let closed = format!("127.0.0.1:{}", free_udp_port());
    let open = private_file(&dir.path().join("open"), "public\n", 0o644);
    let two_words = private_file(&dir.path().join("two"), "pub lic\n", 0o600);
    let cases: [(&[&str], &str); 6] = [
        (&["--switch-snmp", "sw 1"], "expected HOST[:PORT]"),
        (&["--switch-snmp", "sw1:0"], "the port must be 1–65535"),
        (&["--switch-snmp", "fd00::1"], "IPv6 address in brackets"),
        (&["--switch-snmp", &closed], "refused"),
        (
            &[
                "--switch-snmp",
                &closed,
                "--switch-snmp-community-file",
                &open,
            ],
            "SNMP community file",
        ),
        (
            &[
                "--switch-snmp",
                &closed,
                "--switch-snmp-community-file",
                &two_words,
            ],
            "one word",
        ),
    ];
    expect_refused_before_any_io(dir.path(), &cases);
}
