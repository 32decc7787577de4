//! `iopath run nfs://…?version=4.1` against a real nfs-ganesha on loopback (tests/support/nas.rs,
//! which exports with `Protocols = 3, 4` and a pseudo path): a pattern written and read back
//! at queue depth 8 that the server's own file agrees with, a test file created, filled and
//! removed, a file iopath did not create left alone, the same byte counts as NFSv3 in one
//! run's comparison, and the probe's faults (exit status 2 before any I/O, naming the URL).
//!
//! Skipped where nfs-ganesha cannot run (not root; nfs-ganesha, nfs-ganesha-vfs or rpcbind not
//! installed), or failed under CI (tests/support).

mod support;

use std::path::Path;
use support::nas::GaneshaServer;
use support::process::{Outcome, finish};

const BINARY: &str = env!("CARGO_BIN_EXE_iopath");
const MIB: u64 = 1 << 20;

/// Runs `iopath run TARGET ARGS --ramp 0 --json FILE` in `directory`.
fn run(directory: &Path, target: &str, args: &[&str]) -> Outcome {
    let json = directory.join("out.json");
    let _ = std::fs::remove_file(&json);
    let output = support::history::command(BINARY)
        .current_dir(directory)
        .args(["run", target, "--ramp", "0", "--net-timeout", "5"])
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("iopath runs");
    finish(output, &json)
}

/// A file of `size` bytes of `byte` in the export, made by the test (not by iopath).
fn foreign_file(server: &GaneshaServer, name: &str, size: u64, byte: u8) -> std::path::PathBuf {
    let path = server.export_directory().join(name);
    std::fs::write(&path, vec![byte; size as usize]).expect("a file in the export");
    path
}

#[test]
fn nfs41_run_writes_a_verified_pattern_at_qd8_that_the_servers_file_holds() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = foreign_file(&server, "data.bin", 4 * MIB, 0);
    let outcome = run(
        work.path(),
        &server.url41("data.bin"),
        &[
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
            "--allow-destructive",
        ],
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    let json = outcome.json.expect("a JSON result");
    let test = &json["tests"][0];
    assert_eq!(test["write"]["bytes"].as_u64(), Some(4 * MIB), "{test}");
    let verification = &test["verification"];
    assert_eq!(
        verification["mismatch_count"].as_u64(),
        Some(0),
        "{verification}"
    );
    assert!(
        verification["blocks_checked"].as_u64().unwrap_or(0) >= 64,
        "every block read back: {verification}"
    );
    assert_eq!(test["jobs"][0]["engine"]["name"], "nfs");
    assert_eq!(
        test["jobs"][0]["engine"]["write_stability"], "unstable_commit",
        "{}",
        test["jobs"][0]["engine"]
    );
    let content = std::fs::read(&file).expect("the file is still there");
    assert_eq!(content.len() as u64, 4 * MIB);
    for (index, block) in content.chunks(64 * 1024).enumerate() {
        assert!(
            block.iter().any(|byte| *byte != 0),
            "block {index} unwritten"
        );
    }
    let target = &json["targets"][0];
    assert_eq!(target["kind"], "nfs");
    assert_eq!(target["created_by_iopath"], false);
    assert_eq!(target["size_bytes"].as_u64(), Some(4 * MIB));
}

#[test]
fn nfs41_run_creates_fills_and_removes_its_test_file_and_names_the_protocol_hop() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let on_server = server.export_directory().join("made.bin");
    let outcome = run(
        work.path(),
        &server.url41("made.bin"),
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
        ],
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert!(!on_server.exists(), "the test file was removed");
    let json = outcome.json.expect("a JSON result");
    let target = &json["targets"][0];
    assert_eq!(target["created_by_iopath"], true, "{target}");
    assert_eq!(target["size_bytes"].as_u64(), Some(8 * MIB));
    let test = &json["tests"][0];
    assert!(test["read"]["bytes"].as_u64().unwrap_or(0) > 0, "{test}");
    assert!(test["write"]["bytes"].as_u64().unwrap_or(0) > 0, "{test}");
    assert_eq!(test["jobs"][0]["engine"]["write_stability"], "file_sync");
    let hops = json["paths"][0]["hops"].as_array().expect("a storage path");
    let protocol = hops
        .iter()
        .find(|hop| hop["kind"] == "protocol")
        .expect("a protocol hop");
    let description = protocol["description"].as_str().unwrap();
    assert!(
        description.starts_with("NFSv4.1/TCP, rsize")
            && description.contains(", slots ")
            && description.contains("removed after"),
        "{description}"
    );
    assert_eq!(protocol["name"], "NFSv4.1");
}

#[test]
fn nfs41_run_leaves_a_foreign_file_alone_without_allow_destructive() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = foreign_file(&server, "theirs.bin", 2 * MIB, 0x5a);
    let url = server.url41("theirs.bin");
    let refused = run(work.path(), &url, &["--rw", "write", "--bs", "4k"]);
    assert_eq!(refused.status, 2, "{}", refused.output);
    assert!(
        refused.output.contains(&url) && refused.output.contains("--allow-destructive"),
        "{}",
        refused.output
    );
    // --size with an existing file: the file is used as it is, never re-created or truncated.
    let read = run(
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
            "1",
            "--size",
            "1m",
        ],
    );
    assert_eq!(read.status, 0, "{}", read.output);
    assert_eq!(std::fs::read(&file).unwrap(), vec![0x5a; 2 * MIB as usize]);
}

#[test]
fn nfs41_and_nfs3_read_the_same_bytes_in_one_comparison() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    foreign_file(&server, "same.bin", 8 * MIB, 1);
    let mut bytes = Vec::new();
    for url in [server.url("same.bin"), server.url41("same.bin")] {
        let outcome = run(
            work.path(),
            &url,
            &["--rw", "read", "--bs", "1m", "--qd", "8", "--bytes", "8m"],
        );
        assert_eq!(outcome.status, 0, "{url}: {}", outcome.output);
        let json = outcome.json.expect("a JSON result");
        bytes.push(json["tests"][0]["read"]["bytes"].as_u64());
    }
    assert_eq!(bytes[0], Some(8 * MIB));
    assert_eq!(bytes[0], bytes[1], "NFSv3 and NFSv4.1 read the same bytes");
}

#[test]
fn nfs41_probe_faults_exit_2_naming_the_target_before_any_io() {
    let work = tempfile::tempdir().unwrap();
    let refused = |target: &str, args: &[&str], words: &[&str]| {
        let outcome = run(work.path(), target, args);
        assert_eq!(outcome.status, 2, "{target}: {}", outcome.output);
        assert!(
            outcome.output.contains(target),
            "{target}: {}",
            outcome.output
        );
        for word in words {
            assert!(
                outcome.output.contains(word),
                "{target}: {}",
                outcome.output
            );
        }
    };
    let port = support::free_port();
    refused(
        &format!("nfs://127.0.0.1:{port}/export/f?version=4.1"),
        &["--rw", "read"],
        &["NFSv4.1", "refused"],
    );
    refused("nfs://127.0.0.1/export/f?version=9", &[], &["version"]);

    let Some(server) = GaneshaServer::start("RO") else {
        return;
    };
    let url = |path: &str| format!("nfs://127.0.0.1:{}{path}?version=4.1", server.port);
    refused(&url("/nowhere/f"), &["--rw", "read"], &["NFS4ERR_NOENT"]);
    refused(
        &server.url41("missing/f"),
        &["--rw", "read"],
        &["no such file or directory"],
    );
    refused(&server.url41("absent"), &["--rw", "read"], &["--size"]);
    refused(
        &server.url41("absent"),
        &["--rw", "read", "--size", "1m"],
        &["read-only export"],
    );
    foreign_file(&server, "ro.bin", MIB, 3);
    refused(
        &server.url41("ro.bin"),
        &["--rw", "write", "--allow-destructive"],
        &["read-only"],
    );
    let read = run(
        work.path(),
        &server.url41("ro.bin"),
        &["--rw", "read", "--duration", "1"],
    );
    assert_eq!(read.status, 0, "{}", read.output);
    assert_eq!(
        std::fs::read(server.export_directory().join("ro.bin")).unwrap(),
        vec![3; MIB as usize]
    );
    drop(server);

    let Some(denied) = GaneshaServer::start("None") else {
        return;
    };
    refused(&denied.url41("f"), &["--rw", "read"], &["NFS4ERR_"]);
    drop(denied);

    // A server that speaks NFSv4.0 only.
    let Some(old) = GaneshaServer::start_with("RW", "minor_versions = 0;") else {
        return;
    };
    refused(
        &old.url41("f"),
        &["--rw", "read", "--size", "1m"],
        &["NFS4ERR_MINOR_VERS_MISMATCH", "version=3"],
    );
    drop(old);

    // No room for the test file: both figures, nothing made.
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    refused(
        &server.url41("huge.bin"),
        &["--rw", "read", "--size", "1000t"],
        &["needed", "available"],
    );
    assert!(!server.export_directory().join("huge.bin").exists());
}

#[test]
fn nfs41_run_says_when_the_server_grants_fewer_slots_than_the_queue_depth() {
    let Some(server) = GaneshaServer::start_with("RW", "slot_table_size = 4;") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    foreign_file(&server, "few.bin", 4 * MIB, 2);
    let outcome = run(
        work.path(),
        &server.url41("few.bin"),
        &["--rw", "read", "--bs", "64k", "--qd", "16", "--bytes", "4m"],
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert!(
        outcome
            .output
            .contains("granted 4 NFSv4.1 session slots for a queue depth of 16"),
        "{}",
        outcome.output
    );
    let json = outcome.json.expect("a JSON result");
    assert_eq!(json["tests"][0]["read"]["bytes"].as_u64(), Some(4 * MIB));
    assert_eq!(json["targets"][0]["file_session"], "slots 4");
}
