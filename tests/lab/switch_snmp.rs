//! A switch's port counters in the verdict (`--switch-snmp`): three network namespaces the
//! test creates — a client, a "switch" holding a Linux bridge with one port to each side, and a
//! server with an NBD export (nbdkit, memory plugin) — with the switch's port toward the
//! client shaped to 200 Mbit/s by tc tbf. net-snmp's `snmpd`, started by the test in the
//! switch's namespace with a configuration it writes (a community of its own, the agent on
//! the bridge's address, the shaped port's speed declared as 200 Mbit/s as a real switch
//! reports its port speed), stands in for the switch's agent. iopath reads from the client's
//! namespace; nothing on the client's side is full, and the verdict names the switch port.
//!
//! docs/verdict.md, "The switch's counters", quotes it.

use super::{has_command, is_root, support, verdict};
use crate::support::process::{KillOnDrop, wait_until};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// The shaped port's rate, as tc and snmpd's `interface` line write it.
const PORT_RATE_BITS: u64 = 200_000_000;
/// Addresses inside the test's own namespaces (nothing else is there).
const CLIENT_ADDRESS: &str = "198.18.250.1";
const SERVER_ADDRESS: &str = "198.18.250.2";
const SWITCH_ADDRESS: &str = "198.18.250.3";
const NBD_PORT: u16 = 10809;
/// The community the test's agent answers to.
const COMMUNITY: &str = "lab-switch-ro";

/// Runs `command`, which must succeed.
fn run_ok(command: &mut Command) {
    let output = command.output().expect("the command starts");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn ip(args: &[&str]) {
    run_ok(Command::new("ip").args(args));
}

/// The three namespaces, deleted when dropped (after the processes in them: fields drop in
/// order, and this owns none).
struct Switched {
    client: String,
    switch: String,
    server: String,
}

impl Switched {
    /// Client — [switch port p-cli | bridge | port p-srv] — server, p-cli shaped.
    fn up() -> Switched {
        let prefix = format!("ipt{}sw", std::process::id());
        let switched = Switched {
            client: format!("{prefix}-cli"),
            switch: format!("{prefix}-sw"),
            server: format!("{prefix}-srv"),
        };
        for namespace in [&switched.client, &switched.switch, &switched.server] {
            ip(&["netns", "add", namespace]);
            ip(&["-n", namespace, "link", "set", "lo", "up"]);
        }
        let sw = switched.switch.as_str();
        ip(&["-n", sw, "link", "add", "br0", "type", "bridge"]);
        ip(&[
            "-n",
            sw,
            "addr",
            "add",
            &format!("{SWITCH_ADDRESS}/24"),
            "dev",
            "br0",
        ]);
        ip(&["-n", sw, "link", "set", "br0", "up"]);
        for (port, end, address) in [
            ("p-cli", &switched.client, CLIENT_ADDRESS),
            ("p-srv", &switched.server, SERVER_ADDRESS),
        ] {
            ip(&[
                "-n", sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", end,
            ]);
            ip(&["-n", sw, "link", "set", port, "master", "br0"]);
            ip(&["-n", sw, "link", "set", port, "up"]);
            ip(&[
                "-n",
                end,
                "addr",
                "add",
                &format!("{address}/24"),
                "dev",
                "eth0",
            ]);
            ip(&["-n", end, "link", "set", "eth0", "up"]);
        }
        // What the switch sends the client: 200 Mbit/s, a bucket of 8 ms (at least 128 KiB,
        // as scripts/lab shapes its links).
        let burst = (PORT_RATE_BITS / 8 / 125).max(131_072);
        run_ok(Command::new("tc").args([
            "-n",
            sw,
            "qdisc",
            "replace",
            "dev",
            "p-cli",
            "root",
            "tbf",
            "rate",
            &format!("{PORT_RATE_BITS}bit"),
            "burst",
            &burst.to_string(),
            "latency",
            "20ms",
        ]));
        switched
    }
}

impl Drop for Switched {
    fn drop(&mut self) {
        for namespace in [&self.client, &self.switch, &self.server] {
            let _ = Command::new("ip")
                .args(["netns", "del", namespace])
                .status();
        }
    }
}

/// Starts `program` in `namespace`, its output to `log`.
fn start_in(namespace: &str, log: &Path, program: &[&str]) -> KillOnDrop {
    let log = std::fs::File::create(log).expect("a log file");
    let child = Command::new("ip")
        .args(["netns", "exec", namespace])
        .args(program)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("ip netns exec starts");
    KillOnDrop(child)
}

/// `snmpd` in the switch's namespace on the bridge's address, its persistent files, MIBs and
/// log in `dir`.
fn start_agent(switched: &Switched, dir: &Path) -> KillOnDrop {
    let config = dir.join("snmpd.conf");
    std::fs::write(
        &config,
        format!(
            "agentaddress udp:{SWITCH_ADDRESS}:161\n\
             rocommunity {COMMUNITY} 198.18.250.0/24\n\
             interface p-cli 6 {PORT_RATE_BITS}\n"
        ),
    )
    .expect("the agent's configuration");
    let mut command = Command::new("ip");
    command
        .args(["netns", "exec", &switched.switch, "snmpd", "-f", "-C", "-c"])
        .arg(&config)
        .arg("-Lf")
        .arg(dir.join("snmpd.log"))
        .arg("-p")
        .arg(dir.join("snmpd.pid"))
        .args(["-M", &dir.display().to_string(), "-m", ""])
        .env("SNMP_PERSISTENT_DIR", dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let agent = KillOnDrop(command.spawn().expect("snmpd starts"));
    // The agent is ready when it has written its pid file.
    wait_until("snmpd", || dir.join("snmpd.pid").exists());
    agent
}

/// Reads over NBD from the client's namespace, with the switch's counters when `community`
/// is given; the RunResult.
fn read_through_the_switch(switched: &Switched, community: Option<&Path>) -> Value {
    let mut command = Command::new("ip");
    command
        .args(["netns", "exec", &switched.client])
        .arg(env!("CARGO_BIN_EXE_iopath"))
        .env("IOPATH_HISTORY", support::history::path())
        .args([
            "run",
            &format!("nbd://{SERVER_ADDRESS}:{NBD_PORT}"),
            "--rw",
            "read",
            "--bs",
            "1m",
            "--qd",
            "8",
            // The agent refreshes its counters every 3 s or so: 6 s gives two intervals.
            "--duration",
            "6s",
            "--ramp",
            "500ms",
            "--no-confirm",
            "--json",
            "-",
        ]);
    if let Some(community) = community {
        command
            .args(["--switch-snmp", SWITCH_ADDRESS])
            .arg("--switch-snmp-community-file")
            .arg(community);
    }
    let output = command.output().expect("iopath runs");
    assert!(
        output.status.success(),
        "iopath failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("a RunResult")
}

/// `verdict: evidence`, and the switch port's intervals when there is one.
fn seen(json: &Value) -> String {
    let (verdict, analysis) = verdict(json);
    let intervals = analysis["server_hops"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|hop| hop["name"] == "p-cli")
        .map_or(String::new(), |hop| {
            format!(" [p-cli over {} intervals]", hop["intervals"])
        });
    let client_bytes = json["tests"][0]["total"]["bytes_per_second"]
        .as_f64()
        .unwrap_or(0.0);
    format!(
        "{verdict}: {}{intervals} (the client read {:.1} MB/s)",
        analysis["evidence"].as_str().unwrap_or(""),
        client_bytes / 1e6
    )
}

/// A read through a switch port shaped to 200 Mbit/s: the client alone cannot see the port
/// (its own link is an unshaped veth); with the switch's counters the verdict is
/// switch-link-bound on that port, with its speed and use as evidence.
#[test]
fn a_saturated_switch_port_is_switch_link_bound() {
    let tools = ["ip", "tc", "nbdkit", "snmpd"];
    let missing: Vec<&str> = tools.into_iter().filter(|t| !has_command(t)).collect();
    if !support::require(
        is_root() && missing.is_empty(),
        format!(
            "needs root and {} (packages iproute2, nbdkit, snmpd)",
            missing.join(", ")
        ),
    ) {
        return;
    }
    let _lock = super::MeasureLock::take();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let community = dir.path().join("community");
    std::fs::write(&community, format!("{COMMUNITY}\n")).expect("the community file");
    std::fs::set_permissions(
        &community,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("owner-only");
    let switched = Switched::up();
    let _agent = start_agent(&switched, dir.path());
    let _server = start_in(
        &switched.server,
        &dir.path().join("nbdkit.log"),
        &[
            "nbdkit",
            "-f",
            "-p",
            &NBD_PORT.to_string(),
            "-i",
            SERVER_ADDRESS,
            "memory",
            "256M",
        ],
    );
    wait_until("nbdkit", || {
        Command::new("ip")
            .args(["netns", "exec", &switched.client])
            .args([
                "bash",
                "-c",
                &format!("exec 3<>/dev/tcp/{SERVER_ADDRESS}/{NBD_PORT}"),
            ])
            .status()
            .is_ok_and(|status| status.success())
    });
    // A community the agent does not know: no answer, exit 2 before any I/O.
    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, "not-this-one\n").expect("a community file");
    std::fs::set_permissions(&wrong, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("owner-only");
    let refused = Command::new("ip")
        .args(["netns", "exec", &switched.client])
        .arg(env!("CARGO_BIN_EXE_iopath"))
        .args([
            "run",
            &format!("nbd://{SERVER_ADDRESS}:{NBD_PORT}"),
            "--duration",
            "1s",
        ])
        .args([
            "--switch-snmp",
            SWITCH_ADDRESS,
            "--switch-snmp-community-file",
        ])
        .arg(&wrong)
        .output()
        .expect("iopath runs");
    let message = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{message}");
    assert!(
        message.contains(&format!("--switch-snmp {SWITCH_ADDRESS}: no answer")),
        "{message}"
    );

    let mut tries = Vec::new();
    for _ in 0..3 {
        let client_only = read_through_the_switch(&switched, None);
        assert!(
            !seen(&client_only).contains("switch"),
            "the client alone named a switch: {}",
            seen(&client_only)
        );
        let with_switch = read_through_the_switch(&switched, Some(&community));
        tries.push(format!(
            "with the switch's counters: {}; the client alone: {}",
            seen(&with_switch),
            seen(&client_only)
        ));
        let (verdict, analysis) = verdict(&with_switch);
        let evidence = analysis["evidence"].as_str().unwrap_or("");
        if verdict == "switch_link_bound" && evidence.contains("port p-cli at ") {
            assert!(
                analysis["limiting_hop"]
                    .as_str()
                    .is_some_and(|hop| hop.starts_with("switch:") && hop.ends_with(":port:p-cli")),
                "{analysis:#}"
            );
            // What docs/verdict.md quotes (shown with --no-capture).
            eprintln!("{}", tries.last().map_or("", String::as_str));
            return;
        }
    }
    panic!("expected switch_link_bound on p-cli: {tries:#?}");
}
