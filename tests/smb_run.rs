//! `iopath run smb://…` against a real Samba smbd on loopback (tests/support/nas.rs): a
//! verified pattern written at queue depth 8 that the share's own file holds, a test file
//! created, filled and removed with the protocol hop named (dialect, signing, encryption), a
//! foreign file left alone without `--allow-destructive`, AES-128-CCM named on SMB 3.0 and
//! encryption refused on SMB 2.1, and the faults of the probe (exit status 2 before any I/O)
//! and a wrong password, each message naming the target and none showing the password.
//!
//! Skipped where smbd cannot run (not root, samba not installed), or failed under CI
//! (tests/support).

mod support;

use std::path::Path;
use support::nas::{SAMBA_PASSWORD, SAMBA_READ_ONLY_SHARE, SAMBA_USER, SambaServer};
use support::process::{Outcome, finish, protocol_hop};

const BINARY: &str = env!("CARGO_BIN_EXE_iopath");
const MIB: u64 = 1 << 20;

/// Runs `iopath run TARGET ARGS --ramp 0 --json FILE` in `directory` with `password` in the
/// environment (none: no password variable).
fn run(directory: &Path, target: &str, args: &[&str], password: Option<&str>) -> Outcome {
    let json = directory.join("out.json");
    let _ = std::fs::remove_file(&json);
    let mut command = support::history::command(BINARY);
    command
        .current_dir(directory)
        .env_remove("IOPATH_SMB_USER")
        .env_remove("IOPATH_SMB_PASSWORD")
        .env_remove("IOPATH_SMB_DOMAIN")
        .args(["run", target, "--ramp", "0", "--net-timeout", "5"])
        .args(args)
        .arg("--json")
        .arg(&json);
    if let Some(password) = password {
        command.env("IOPATH_SMB_PASSWORD", password);
    }
    finish(command.output().expect("iopath runs"), &json)
}

#[test]
fn smb_run_writes_a_verified_pattern_at_qd8_that_the_shares_file_holds() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = server.share_directory().join("data.bin");
    std::fs::write(&file, vec![0u8; 4 * MIB as usize]).unwrap();
    let args = [
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
    let test = &json["tests"][0];
    assert_eq!(test["write"]["bytes"].as_u64(), Some(4 * MIB), "{test}");
    assert_eq!(
        test["verification"]["mismatch_count"].as_u64(),
        Some(0),
        "{test}"
    );
    assert_eq!(test["jobs"][0]["engine"]["name"], "smb");
    let content = std::fs::read(&file).expect("the file is still there");
    assert_eq!(content.len() as u64, 4 * MIB);
    for (index, block) in content.chunks(64 * 1024).enumerate() {
        assert!(
            block.iter().any(|byte| *byte != 0),
            "block {index} unwritten"
        );
    }
    assert!(
        !serde_json::to_string(&json)
            .unwrap()
            .contains(SAMBA_PASSWORD)
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
