//! `iopath run smb://…` against a real Samba smbd on loopback (tests/support/nas.rs): a
//! verified pattern written at queue depth 8 that the share's own file holds, a test file
//! created, filled and removed with the protocol hop named (dialect, signing, encryption), a
//! foreign file left alone without `--allow-destructive`, `--connections` as multichannel
//! channels or independent sessions, AES-128-CCM named on SMB 3.0 and encryption refused on
//! SMB 2.1, the file removed after one Ctrl-C and after two, and the faults of the probe (exit
//! status 2 before any I/O), a wrong password and a server that dies mid-run (exit status 1),
//! each message naming the target and none showing the password.
//!
//! Skipped where smbd cannot run (not root, samba not installed), or failed under CI
//! (tests/support).

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::nas::{
    SAMBA_PASSWORD, SAMBA_READ_ONLY_SHARE, SAMBA_USER, SWAP_RUN, SWAP_TEST_FILE_BYTES, SambaServer,
    assert_the_swap_survived, established_connections_to, swap_once_filled,
};
use support::process::{Outcome, finish, interrupt, protocol_hop, wait_until_made};

const BINARY: &str = env!("CARGO_BIN_EXE_iopath");
const MIB: u64 = 1 << 20;

/// Runs `iopath run TARGET ARGS --ramp 0 --json FILE` in `directory` with `password` in the
/// environment (none: no password variable).
fn run(directory: &Path, target: &str, args: &[&str], password: Option<&str>) -> Outcome {
    let json = directory.join("out.json");
    let _ = std::fs::remove_file(&json);
    let output = command(directory, target, args, password)
        .output()
        .expect("iopath runs");
    finish(output, &json)
}

/// `iopath run TARGET ARGS --ramp 0 --json out.json` in `directory`, with `password` as the
/// only SMB variable of the environment (none: no SMB variable at all).
fn command(directory: &Path, target: &str, args: &[&str], password: Option<&str>) -> Command {
    let mut command = support::history::command(BINARY);
    command
        .current_dir(directory)
        .env_remove("IOPATH_SMB_USER")
        .env_remove("IOPATH_SMB_PASSWORD")
        .env_remove("IOPATH_SMB_DOMAIN")
        .args(["run", target, "--ramp", "0", "--net-timeout", "5"])
        .args(args)
        .arg("--json")
        .arg(directory.join("out.json"));
    if let Some(password) = password {
        command.env("IOPATH_SMB_PASSWORD", password);
    }
    command
}

/// 4 MiB written at queue depth 8 in 64 KiB blocks, verified (crc32c) and flushed at the end.
const VERIFIED_WRITES: [&str; 11] = [
    "--rw",
    "write",
    "--bs",
    "64k",
    "--qd",
    "8",
    "--bytes",
    "4m",
    "--verify",
    "crc32c",
    "--fsync-at-end",
];

/// Checks the result of a run of [`VERIFIED_WRITES`] over `file` (on the share, all zeroes
/// before): 4 MiB written, no mismatch on read-back, and every block of the share's file
/// written.
fn check_verified_writes(json: &serde_json::Value, file: &Path) {
    let test = &json["tests"][0];
    assert_eq!(test["write"]["bytes"].as_u64(), Some(4 * MIB), "{test}");
    assert_eq!(
        test["verification"]["mismatch_count"].as_u64(),
        Some(0),
        "{test}"
    );
    let content = std::fs::read(file).expect("the file is still there");
    assert_eq!(content.len() as u64, 4 * MIB);
    for (index, block) in content.chunks(64 * 1024).enumerate() {
        assert!(
            block.iter().any(|byte| *byte != 0),
            "block {index} unwritten"
        );
    }
}

#[test]
fn smb_run_writes_a_verified_pattern_at_qd8_that_the_shares_file_holds() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = server.share_directory().join("data.bin");
    std::fs::write(&file, vec![0u8; 4 * MIB as usize]).unwrap();
    let args = VERIFIED_WRITES;
    // A file iopath did not create is written only with --allow-destructive.
    let refused = run(
        work.path(),
        &server.url("data.bin"),
        &args,
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(refused.status, 2, "{}", refused.output);
    assert!(
        refused.output.contains("--allow-destructive"),
        "{}",
        refused.output
    );
    assert!(std::fs::read(&file).unwrap().iter().all(|byte| *byte == 0));

    let mut destructive = args.to_vec();
    destructive.push("--allow-destructive");
    let outcome = run(
        work.path(),
        &server.url("data.bin"),
        &destructive,
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    let json = outcome.json.expect("a JSON result");
    check_verified_writes(&json, &file);
    assert_eq!(json["tests"][0]["jobs"][0]["engine"]["name"], "smb");
    assert!(
        !serde_json::to_string(&json)
            .unwrap()
            .contains(SAMBA_PASSWORD)
    );
}

#[test]
fn smb_run_refuses_a_credentials_file_others_can_read_and_uses_an_owner_only_one() {
    use std::os::unix::fs::PermissionsExt;
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::write(server.share_directory().join("f"), vec![7u8; MIB as usize]).unwrap();
    let credentials = work.path().join("credentials");
    std::fs::write(
        &credentials,
        format!("username = {SAMBA_USER}\npassword = {SAMBA_PASSWORD}\n"),
    )
    .unwrap();
    let file = credentials.to_str().unwrap();
    let read = [
        "--rw",
        "read",
        "--bs",
        "64k",
        "--duration",
        "1",
        "--smb-credentials",
        file,
    ];
    for mode in [0o644, 0o640] {
        std::fs::set_permissions(&credentials, std::fs::Permissions::from_mode(mode)).unwrap();
        let outcome = run(work.path(), &server.url("f"), &read, None);
        assert_eq!(outcome.status, 2, "{mode:o}: {}", outcome.output);
        assert!(
            outcome
                .output
                .contains(&format!("{file}: permissions {mode:04o} are too open"))
                && outcome.output.contains("chmod 600"),
            "{}",
            outcome.output
        );
        assert!(
            !outcome.output.contains(SAMBA_PASSWORD),
            "{}",
            outcome.output
        );
        assert!(outcome.json.is_none(), "no run after a refusal");
    }
    std::fs::set_permissions(&credentials, std::fs::Permissions::from_mode(0o600)).unwrap();
    let outcome = run(work.path(), &server.url("f"), &read, None);
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    let json = outcome.json.expect("a JSON result");
    assert!(
        json["tests"][0]["read"]["bytes"].as_u64().unwrap_or(0) > 0,
        "{json}"
    );
}

#[test]
fn smb_run_creates_fills_and_removes_its_test_file_and_names_the_protocol_hop() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let on_server = server.share_directory().join("made.bin");
    let outcome = run(
        work.path(),
        &server.url("made.bin"),
        &[
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--size",
            "8m",
            "--duration",
            "1",
            "--sync",
            "--smb-encrypt",
        ],
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert!(!on_server.exists(), "the test file was removed");
    let json = outcome.json.expect("a JSON result");
    let target = &json["targets"][0];
    assert_eq!(
        (
            target["kind"].as_str(),
            target["created_by_iopath"].as_bool()
        ),
        (Some("smb"), Some(true)),
        "{target}"
    );
    assert_eq!(
        target["file_session"], "SMB 3.1.1, encrypted (AES-128-GCM)",
        "{target}"
    );
    let test = &json["tests"][0];
    assert!(test["read"]["bytes"].as_u64().unwrap_or(0) > 0, "{test}");
    assert!(test["write"]["bytes"].as_u64().unwrap_or(0) > 0, "{test}");
    let protocol = protocol_hop(&json);
    let description = protocol["description"].as_str().unwrap();
    assert!(
        description.starts_with("SMB 3.1.1, encrypted (AES-128-GCM) over TCP")
            && description.contains("removed after"),
        "{description}"
    );
    assert_eq!(protocol["protocol"], "smb");
    assert!(
        !serde_json::to_string(&json)
            .unwrap()
            .contains(SAMBA_PASSWORD)
    );
}

/// SMB 3.0 encrypts with AES-128-CCM, and the storage path says so; SMB 2.1 runs unencrypted,
/// and `--smb-encrypt` on it is refused before any I/O, naming the flag and the dialect.
#[test]
fn smb_run_names_aes_ccm_on_smb_3_0_and_refuses_encryption_on_smb_2_1() {
    let Some(server) = SambaServer::start(&[
        "server max protocol = SMB3_00",
        "server smb encrypt = required",
    ]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let read = [
        "--rw", "read", "--bs", "1m", "--qd", "8", "--size", "8m", "--bytes", "8m",
    ];
    let outcome = run(
        work.path(),
        &server.url("ccm.bin"),
        &read,
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    let json = outcome.json.expect("a JSON result");
    assert_eq!(
        json["targets"][0]["file_session"], "SMB 3.0, encrypted (AES-128-CCM)",
        "{}",
        json["targets"][0]
    );
    let test = &json["tests"][0];
    assert!(test["read"]["bytes"].as_u64().unwrap_or(0) > 0, "{test}");
    let protocol = protocol_hop(&json);
    let description = protocol["description"].as_str().unwrap();
    assert!(
        description.starts_with("SMB 3.0, encrypted (AES-128-CCM) over TCP"),
        "{description}"
    );
    drop(server);

    let Some(server) = SambaServer::start(&["server max protocol = SMB2_10"]) else {
        return;
    };
    let on_server = server.share_directory().join("plain.bin");
    let outcome = run(
        work.path(),
        &server.url("plain.bin"),
        &read,
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    let json = outcome.json.expect("a JSON result");
    assert_eq!(json["targets"][0]["file_session"], "SMB 2.1, unsigned");
    let mut encrypted = read.to_vec();
    encrypted.push("--smb-encrypt");
    let outcome = run(
        work.path(),
        &server.url("plain.bin"),
        &encrypted,
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(outcome.status, 2, "{}", outcome.output);
    assert!(
        outcome.output.contains("--smb-encrypt") && outcome.output.contains("SMB 2.1"),
        "{}",
        outcome.output
    );
    assert!(!on_server.exists(), "no test file was created");
}

#[test]
fn smb_run_refuses_before_any_io_naming_the_target() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let read = ["--rw", "read", "--bs", "4k", "--duration", "1"];
    // No password anywhere: a usage error.
    let outcome = run(work.path(), &server.url("f"), &read, None);
    assert_eq!(outcome.status, 2, "{}", outcome.output);
    assert!(
        outcome.output.contains("no password for root"),
        "{}",
        outcome.output
    );
    // A password in the URL is refused and not echoed back beyond the URL as typed.
    let with_password = format!(
        "smb://{SAMBA_USER}:secret@127.0.0.1:{}/share/f",
        server.port
    );
    let outcome = run(work.path(), &with_password, &read, Some(SAMBA_PASSWORD));
    assert_eq!(outcome.status, 2, "{}", outcome.output);
    assert!(
        outcome.output.contains("does not belong in the URL"),
        "{}",
        outcome.output
    );
    // A wrong password, a missing file without --size, no such share, a read-only share.
    let outcome = run(work.path(), &server.url("f"), &read, Some("wrong-password"));
    assert_ne!(outcome.status, 0, "{}", outcome.output);
    assert!(
        outcome.output.contains("logon failure"),
        "{}",
        outcome.output
    );
    assert!(
        !outcome.output.contains("wrong-password"),
        "{}",
        outcome.output
    );
    let outcome = run(
        work.path(),
        &server.url("missing"),
        &read,
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(outcome.status, 2, "{}", outcome.output);
    assert!(outcome.output.contains("give --size"), "{}", outcome.output);
    let no_share = format!("smb://{SAMBA_USER}@127.0.0.1:{}/nosuch/f", server.port);
    let outcome = run(work.path(), &no_share, &read, Some(SAMBA_PASSWORD));
    assert_ne!(outcome.status, 0, "{}", outcome.output);
    assert!(
        outcome.output.contains("has no share 'nosuch'"),
        "{}",
        outcome.output
    );
    let read_only = format!(
        "smb://{SAMBA_USER}@127.0.0.1:{}/{SAMBA_READ_ONLY_SHARE}/new",
        server.port
    );
    let outcome = run(
        work.path(),
        &read_only,
        &["--size", "1m", "--rw", "write"],
        Some(SAMBA_PASSWORD),
    );
    assert_ne!(outcome.status, 0, "{}", outcome.output);
    assert!(outcome.output.contains("read-only"), "{}", outcome.output);
    assert!(
        std::fs::read_dir(server.read_only_directory())
            .unwrap()
            .next()
            .is_none()
    );
    // The SMB flags need an smb:// target.
    let outcome = run(
        work.path(),
        "data.bin",
        &["--size", "1m", "--smb-sign"],
        None,
    );
    assert_eq!(outcome.status, 2, "{}", outcome.output);
}

/// How long a count of connections must last, unchanged, to be the run's: far longer than
/// the run's own short connections (the probe before the test, the removal after it) overlap
/// the engine's, far shorter than the second the engine's connections carry I/O.
const HELD_FOR: std::time::Duration = std::time::Duration::from_millis(300);

/// Runs `iopath run` as [`run`] does while counting, every 20 ms, the established TCP
/// connections to the server; returns the outcome and the largest count that lasted
/// [`HELD_FOR`] unchanged. Neither a short overlap (the probe beside the engine's
/// connections) nor a slow start (on a busy host, setting up four encrypted sessions one after
/// another took longer than the run's second of I/O, so 1, 2 or 3 connections were seen in
/// more samples than 4) is taken for the engine's count.
fn run_counting_connections(
    directory: &Path,
    server: &SambaServer,
    target: &str,
    args: &[&str],
) -> (Outcome, usize) {
    std::thread::scope(|scope| {
        let running = scope.spawn(|| run(directory, target, args, Some(SAMBA_PASSWORD)));
        let mut held = 0;
        let mut since = (0, std::time::Instant::now());
        while !running.is_finished() {
            let count = established_connections_to(server.port);
            let now = std::time::Instant::now();
            if count != since.0 {
                since = (count, now);
            } else if now.duration_since(since.1) >= HELD_FOR {
                held = held.max(count);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        (running.join().expect("the run's thread"), held)
    })
}

/// The description of the storage path's protocol hop of `json`'s first target.
fn protocol_hop_text(json: &serde_json::Value) -> String {
    protocol_hop(json)["description"]
        .as_str()
        .expect("a description")
        .to_string()
}

#[test]
fn smb_run_with_four_connections_binds_four_channels_to_one_session() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        server.share_directory().join("data.bin"),
        vec![7u8; 16 * MIB as usize],
    )
    .unwrap();
    let url = server.url("data.bin");
    // 4 s: on a host whose cores are full with other work (a CPU hog on each), binding four
    // channels, signed, took the whole of a 2-s window, and no read completed in it.
    let reads = [
        "--rw",
        "read",
        "--bs",
        "1m",
        "--qd",
        "8",
        "--duration",
        "4",
        "--connections",
        "4",
    ];
    let (outcome, held) = run_counting_connections(work.path(), &server, &url, &reads);
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert_eq!(held, 4, "TCP connections to smbd during the run");
    let json = outcome.json.expect("a JSON result");
    let test = &json["tests"][0];
    assert!(test["read"]["bytes"].as_u64().unwrap_or(0) > 0, "{test}");
    assert_eq!(
        test["jobs"][0]["engine"]["connections"],
        serde_json::json!({"per_worker": 4, "asked": 4, "multichannel": true}),
        "{test}"
    );
    let hop = protocol_hop_text(&json);
    assert!(
        hop.starts_with(
            "SMB 3.1.1, signed (AES-128-GMAC), 4 channels per worker bound to one session \
             (multichannel; server interfaces: 127.0.0.1 at 1 Gbit/s) over TCP"
        ),
        "{hop}"
    );

    // Writes over four encrypted channels: verified on read-back, and the share's file holds
    // every block.
    let file = server.share_directory().join("data.bin");
    std::fs::write(&file, vec![0u8; 4 * MIB as usize]).unwrap();
    // Capped at 2 MiB/s: the 4 MiB take about 2 s, so the four channels are held long enough
    // to be counted (encrypted, they would otherwise be written in a fraction of a second).
    let mut writes = VERIFIED_WRITES.to_vec();
    writes.extend([
        "--allow-destructive",
        "--connections",
        "4",
        "--smb-encrypt",
        "--rate",
        "2m",
    ]);
    let (outcome, held) = run_counting_connections(work.path(), &server, &url, &writes);
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert_eq!(held, 4, "TCP connections to smbd during the run");
    let json = outcome.json.expect("a JSON result");
    check_verified_writes(&json, &file);
    assert_eq!(
        json["tests"][0]["jobs"][0]["engine"]["connections"]["multichannel"],
        true
    );
    assert!(
        protocol_hop_text(&json).starts_with(
            "SMB 3.1.1, encrypted (AES-128-GCM), 4 channels per worker bound to one session"
        ),
        "{}",
        protocol_hop_text(&json)
    );
}

#[test]
fn smb_run_without_multichannel_opens_independent_sessions_and_says_so() {
    independent_sessions_said(&["server multi channel support = no"]);
}

#[test]
fn smb_run_on_a_session_the_server_must_encrypt_opens_independent_sessions() {
    // Samba binds no channel to a session whose encryption it requires: the connections are
    // sessions of their own, and the run says so.
    independent_sessions_said(&["server smb encrypt = required"]);
}

/// With `global` in smbd's configuration, a run with `--connections 4` holds 4 TCP
/// connections as 4 independent sessions, and says so in a note, the engine report and the
/// protocol hop.
fn independent_sessions_said(global: &[&str]) {
    let Some(server) = SambaServer::start(global) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        server.share_directory().join("data.bin"),
        vec![7u8; 4 * MIB as usize],
    )
    .unwrap();
    let args = [
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--duration",
        "1",
        "--connections",
        "4",
    ];
    let (outcome, held) =
        run_counting_connections(work.path(), &server, &server.url("data.bin"), &args);
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert_eq!(held, 4, "TCP connections to smbd during the run");
    let note = "multichannel not offered by the server: 4 independent SMB sessions per worker";
    assert!(outcome.output.contains(note), "{}", outcome.output);
    let json = outcome.json.expect("a JSON result");
    let connections = &json["tests"][0]["jobs"][0]["engine"]["connections"];
    assert_eq!(connections["multichannel"], false, "{connections}");
    assert_eq!(connections["per_worker"], 4, "{connections}");
    assert!(
        connections["note"].as_str().unwrap_or("").contains(note),
        "{connections}"
    );
    let hop = protocol_hop_text(&json);
    assert!(
        hop.contains("4 independent sessions per worker (multichannel not offered by the server)"),
        "{hop}"
    );
}

#[test]
fn smb_run_refuses_bad_connection_counts_before_any_io() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let on_server = server.share_directory().join("never.bin");
    for count in ["0", "33"] {
        let outcome = run(
            work.path(),
            &server.url("never.bin"),
            &[
                "--rw",
                "read",
                "--size",
                "1m",
                "--duration",
                "1",
                "--connections",
                count,
            ],
            Some(SAMBA_PASSWORD),
        );
        assert_eq!(outcome.status, 2, "{}", outcome.output);
        assert!(
            outcome.output.contains("--connections"),
            "{}",
            outcome.output
        );
        assert!(!on_server.exists(), "no test file was made");
    }
    // The default suite (no workload flags) takes --connections too, so it is checked too.
    let outcome = run(
        work.path(),
        &server.url("never.bin"),
        &["--size", "1m", "--connections", "33"],
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(outcome.status, 2, "{}", outcome.output);
    assert!(
        outcome.output.contains("--connections 33"),
        "{}",
        outcome.output
    );
    assert!(!on_server.exists(), "no test file was made");
}

/// Starts `iopath run TARGET ARGS --ramp 0 --json out.json` in `directory` with the share's
/// password in the environment, its output piped.
fn spawn(directory: &Path, target: &str, args: &[&str]) -> std::process::Child {
    command(directory, target, args, Some(SAMBA_PASSWORD))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("iopath runs")
}

#[test]
fn timing_smb_run_stopped_by_ctrl_c_removes_its_test_file_also_on_a_second_ctrl_c() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // One Ctrl-C while the run measures: the run stops, the file goes.
    let on_server = server.share_directory().join("stopped.bin");
    let child = spawn(
        work.path(),
        &server.url("stopped.bin"),
        &[
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "4m",
            "--duration",
            "60",
        ],
    );
    wait_until_made(&on_server);
    std::thread::sleep(Duration::from_secs(2));
    interrupt(&child);
    let outcome = finish(
        child.wait_with_output().expect("iopath ends"),
        &work.path().join("out.json"),
    );
    assert!([0, 1, 130].contains(&outcome.status), "{}", outcome.output);
    assert!(
        !on_server.exists(),
        "removed after Ctrl-C: {}",
        outcome.output
    );
    // Two at once while the file is being filled: iopath exits at once (130) and still
    // removes the file it was making.
    let filling = server.share_directory().join("filling.bin");
    let child = spawn(
        work.path(),
        &server.url("filling.bin"),
        &[
            "--rw",
            "read",
            "--bs",
            "1m",
            "--size",
            "2g",
            "--duration",
            "60",
        ],
    );
    wait_until_made(&filling);
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(100));
    interrupt(&child);
    let started = Instant::now();
    let outcome = finish(
        child.wait_with_output().expect("iopath ends"),
        &work.path().join("out.json"),
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!([1, 130].contains(&outcome.status), "{}", outcome.output);
    assert!(
        !filling.exists(),
        "removed after two Ctrl-C: {}",
        outcome.output
    );
}

#[test]
fn smb_run_on_a_server_that_dies_exits_1_and_an_unreachable_one_exits_2() {
    let Some(mut server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::write(server.share_directory().join("f.bin"), vec![0u8; 8 << 20]).unwrap();
    let url = server.url("f.bin");
    let child = spawn(
        work.path(),
        &url,
        &[
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--duration",
            "30",
        ],
    );
    std::thread::sleep(Duration::from_secs(2));
    server.kill();
    let started = Instant::now();
    let outcome = finish(
        child.wait_with_output().expect("iopath ends"),
        &work.path().join("out.json"),
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome.status, 1, "{}", outcome.output);
    assert!(outcome.output.contains("smb"), "{}", outcome.output);
    assert!(outcome.output.contains("127.0.0.1"), "{}", outcome.output);
    // Nothing listens any more: refused before any I/O, naming the target.
    let outcome = run(
        work.path(),
        &url,
        &["--rw", "read", "--duration", "1"],
        Some(SAMBA_PASSWORD),
    );
    assert_eq!(outcome.status, 2, "{}", outcome.output);
    assert!(outcome.output.contains(&url), "{}", outcome.output);
}

/// While a run is under way, its test file is moved away on the server (a rename in the
/// share's directory, behind smbd's back) and another file is put under its name. After the
/// run the other file is intact, the test file is where it was moved to, and iopath's warning
/// says that it left the name alone.
#[test]
fn smb_run_leaves_a_file_put_under_its_test_files_name_on_the_server() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let on_server = server.share_directory().join("moved.bin");
    let child = spawn(work.path(), &server.url("moved.bin"), &SWAP_RUN);
    swap_once_filled(&on_server, SWAP_TEST_FILE_BYTES, MIB);
    let outcome = finish(
        child.wait_with_output().expect("iopath ends"),
        &work.path().join("out.json"),
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert_the_swap_survived(&on_server, MIB, &outcome.output);
}
