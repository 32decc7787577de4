//! `iopath run nfs://…` against a real nfs-ganesha on loopback (tests/support/nas.rs): a
//! pattern written and read back at queue depth 8 that the server's own file agrees with, test
//! files created, filled and removed (also on Ctrl-C), files iopath did not create left alone,
//! the free-space refusal, and every fault of the probe (exit status 2 before any I/O) and of a
//! server that dies mid-run (exit status 1), each message naming the target.
//!
//! Skipped where nfs-ganesha cannot run (not root; nfs-ganesha, nfs-ganesha-vfs or rpcbind not
//! installed), or failed under CI (tests/support).

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::nas::GaneshaServer;
use support::process::{Outcome, finish, protocol_hop};

const BINARY: &str = env!("CARGO_BIN_EXE_iopath");
const MIB: u64 = 1 << 20;

/// Runs `iopath run TARGET ARGS --ramp 0 --json FILE` in `directory`.
fn run(directory: &Path, target: &str, args: &[&str]) -> Outcome {
    let json = directory.join("out.json");
    let _ = std::fs::remove_file(&json);
    let output = command(directory, target, args, &json)
        .output()
        .expect("iopath runs");
    finish(output, &json)
}

fn command(directory: &Path, target: &str, args: &[&str], json: &Path) -> Command {
    let mut command = support::history::command(BINARY);
    command
        .current_dir(directory)
        .args(["run", target, "--ramp", "0", "--net-timeout", "5"])
        .args(args)
        .arg("--json")
        .arg(json);
    command
}

/// Starts `iopath run TARGET ARGS …` in `directory`, its output piped.
fn spawn(directory: &Path, target: &str, args: &[&str], json: &Path) -> std::process::Child {
    command(directory, target, args, json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iopath runs")
}

/// A file of `size` bytes of `byte` in the export, made by the test (not by iopath).
fn foreign_file(server: &GaneshaServer, name: &str, size: u64, byte: u8) -> std::path::PathBuf {
    let path = server.export_directory().join(name);
    std::fs::write(&path, vec![byte; size as usize]).expect("a file in the export");
    path
}

#[test]
fn nfs_run_writes_a_verified_pattern_at_qd8_that_the_servers_file_holds() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = foreign_file(&server, "data.bin", 4 * MIB, 0);
    let outcome = run(
        work.path(),
        &server.url("data.bin"),
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
    assert_eq!(test["jobs"][0]["queue_depth_per_worker"].as_u64(), Some(8));
    // The server's own view: the same size, every 64 KiB block written (none left zero), and
    // the file is still there (iopath did not create it, so does not remove it).
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
fn nfs_run_creates_fills_and_removes_its_test_file_and_names_the_protocol_hop() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let on_server = server.export_directory().join("made.bin");
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
        ],
    );
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert!(!on_server.exists(), "the test file was removed");
    let json = outcome.json.expect("a JSON result");
    let target = &json["targets"][0];
    assert_eq!(target["created_by_iopath"], true, "{target}");
    assert_eq!(target["size_bytes"].as_u64(), Some(8 * MIB));
    let read_bytes = target["transfer_sizes"]["read_bytes"].as_u64().unwrap_or(0);
    assert!(read_bytes >= 4096, "{target}");
    let test = &json["tests"][0];
    assert!(test["read"]["bytes"].as_u64().unwrap_or(0) > 0, "{test}");
    assert!(test["write"]["bytes"].as_u64().unwrap_or(0) > 0, "{test}");
    assert_eq!(test["jobs"][0]["engine"]["write_stability"], "file_sync");
    let hops = json["paths"][0]["hops"].as_array().expect("a storage path");
    let protocol = protocol_hop(&json);
    let description = protocol["description"].as_str().unwrap();
    assert!(
        description.starts_with("NFSv3/TCP, rsize") && description.contains("removed after"),
        "{description}"
    );
    assert_eq!(protocol["protocol"], "nfs");
    assert!(
        hops.iter()
            .any(|hop| hop["kind"] == "network_interface" && hop["name"] == "lo"),
        "the route to the server: {hops:?}"
    );
    assert!(
        outcome.output.contains("of incompressible data"),
        "{}",
        outcome.output
    );
}

#[test]
fn nfs_run_leaves_a_foreign_file_alone_without_allow_destructive() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = foreign_file(&server, "theirs.bin", 2 * MIB, 0x5a);
    let url = server.url("theirs.bin");
    let refused = run(work.path(), &url, &["--rw", "write", "--bs", "4k"]);
    assert_eq!(refused.status, 2, "{}", refused.output);
    assert!(
        refused.output.contains(&url) && refused.output.contains("--allow-destructive"),
        "{}",
        refused.output
    );
    // Read freely; never removed; never written.
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
        ],
    );
    assert_eq!(read.status, 0, "{}", read.output);
    assert_eq!(std::fs::read(&file).unwrap(), vec![0x5a; 2 * MIB as usize]);
}

#[test]
fn nfs_run_refuses_a_test_file_the_export_has_no_room_for() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let url = server.url("huge.bin");
    let outcome = run(work.path(), &url, &["--rw", "read", "--size", "1000t"]);
    assert_eq!(outcome.status, 2, "{}", outcome.output);
    assert!(
        outcome.output.contains(&url)
            && outcome.output.contains("needed")
            && outcome.output.contains("available"),
        "{}",
        outcome.output
    );
    assert!(!server.export_directory().join("huge.bin").exists());
}

#[test]
fn nfs_probe_faults_exit_2_naming_the_target_before_any_io() {
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
    // Nothing listens.
    let port = support::free_port();
    refused(
        &format!("nfs://127.0.0.1:{port}/export/f?mountport={port}"),
        &["--rw", "read"],
        &["MOUNT", "refused"],
    );
    refused("nfs://127.0.0.1/export/f?version=4.1", &[], &["version"]);

    let Some(server) = GaneshaServer::start("RO") else {
        return;
    };
    let export_url = |path: &str| {
        format!(
            "nfs://127.0.0.1:{}{path}?mountport={}",
            server.port, server.mount_port
        )
    };
    refused(&export_url("/nowhere/f"), &["--rw", "read"], &["no export"]);
    refused(
        &server.url("missing/f"),
        &["--rw", "read"],
        &["no such file or directory"],
    );
    refused(&server.url("absent"), &["--rw", "read"], &["--size"]);
    // A read-only export: no test file can be made, an existing file is not written.
    refused(
        &server.url("absent"),
        &["--rw", "read", "--size", "1m"],
        &["read-only export"],
    );
    foreign_file(&server, "ro.bin", MIB, 3);
    refused(
        &server.url("ro.bin"),
        &["--rw", "write", "--allow-destructive"],
        &["read-only"],
    );
    let read = run(
        work.path(),
        &server.url("ro.bin"),
        &["--rw", "read", "--duration", "1"],
    );
    assert_eq!(read.status, 0, "{}", read.output);
    drop(server);

    // An export this client may not use at all.
    let Some(denied) = GaneshaServer::start("None") else {
        return;
    };
    refused(&denied.url("f"), &["--rw", "read"], &["access denied"]);
}

#[test]
fn nfs_run_on_a_server_that_dies_exits_1_naming_the_target() {
    let Some(mut server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    foreign_file(&server, "f.bin", 8 * MIB, 0);
    let json = work.path().join("out.json");
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
        &json,
    );
    std::thread::sleep(Duration::from_secs(2));
    server.kill();
    let started = Instant::now();
    let outcome = finish(child.wait_with_output().expect("iopath ends"), &json);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(outcome.status, 1, "{}", outcome.output);
    assert!(outcome.output.contains("nfs"), "{}", outcome.output);
}

#[test]
fn nfs_run_stopped_by_ctrl_c_removes_its_test_file() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("out.json");
    let on_server = server.export_directory().join("stopped.bin");
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
        &json,
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !on_server.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(on_server.exists(), "the test file was made");
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: kill only sends a signal, to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let outcome = finish(child.wait_with_output().expect("iopath ends"), &json);
    assert!([0, 1, 130].contains(&outcome.status), "{}", outcome.output);
    assert!(
        !on_server.exists(),
        "removed after Ctrl-C: {}",
        outcome.output
    );
}

#[test]
fn nfs_a_test_file_replaced_on_the_server_is_not_removed() {
    use iopath::engine::nfs::{NfsRemoteFile, NfsUrl};
    use iopath::engine::remote_file::{RemoteFileServer, create_test_file};
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let url = NfsUrl::parse(&server.url("swap.bin")).unwrap();
    let timeout = Duration::from_secs(10);
    let mut remote = NfsRemoteFile::find(&url, timeout).expect("the export is found");
    assert_eq!(remote.existing_size().unwrap(), None);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let file = create_test_file(Box::new(remote), MIB, 7, &stop)
        .expect("created and filled")
        .expect("not stopped");
    let on_server = server.export_directory().join("swap.bin");
    assert_eq!(std::fs::metadata(&on_server).unwrap().len(), MIB);
    // Another client replaces it (through the server, as a client would): iopath must leave
    // the new file alone.
    let found = iopath::engine::nfs::find(&url, timeout).unwrap();
    iopath::engine::nfs::remove_file(&url, &found, timeout).unwrap();
    let missing = iopath::engine::nfs::find(&url, timeout).unwrap();
    iopath::engine::nfs::create_file(&url, &missing, timeout).unwrap();
    let error = file.remove().expect_err("not iopath's file any more");
    assert!(error.problem.contains("left in place"), "{error}");
    assert!(on_server.exists(), "the other client's file is still there");
}
