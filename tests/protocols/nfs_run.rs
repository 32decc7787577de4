//! `iopath run nfs://…` against a real nfs-ganesha on loopback (tests/support/nas.rs): a
//! pattern written and read back at queue depth 8 that the server's own file agrees with, test
//! files created, filled and removed (also on Ctrl-C), files iopath did not create left alone,
//! the free-space refusal, job files written for fio's libnfs engine (`ioengine=nfs`,
//! `nfs_url`) and with fio's default engine, and every fault of the probe (exit status 2
//! before any I/O) and of a server that dies mid-run (exit status 1), each message naming the
//! target. The `nfs41_` tests do the same with `?version=4.1` (the export has
//! `Protocols = 3, 4` and a pseudo path), and check that NFSv3 and NFSv4.1 read the same bytes
//! and that a server granting fewer session slots than the queue depth is named.
//!
//! Skipped where nfs-ganesha cannot run (not root; nfs-ganesha, nfs-ganesha-vfs or rpcbind not
//! installed), or failed under CI (tests/support).

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::nas::{
    GaneshaServer, SWAP_RUN, SWAP_TEST_FILE_BYTES, assert_the_swap_survived, names_in,
    swap_once_filled,
};
use support::process::{Outcome, finish, interrupt, protocol_hop, wait_until_made};

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

/// A pattern written at queue depth 8 through `url_of(server, "data.bin")` (NFSv3 or NFSv4.1),
/// UNSTABLE with a COMMIT at the end, verified on read-back and held by the server's file.
fn writes_a_verified_pattern_at_qd8(url_of: fn(&GaneshaServer, &str) -> String) {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = foreign_file(&server, "data.bin", 4 * MIB, 0);
    let outcome = run(
        work.path(),
        &url_of(&server, "data.bin"),
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
fn nfs_run_writes_a_verified_pattern_at_qd8_that_the_servers_file_holds() {
    writes_a_verified_pattern_at_qd8(GaneshaServer::url);
}

#[test]
fn nfs41_run_writes_a_verified_pattern_at_qd8_that_the_servers_file_holds() {
    writes_a_verified_pattern_at_qd8(GaneshaServer::url41);
}

/// A test file created through `url_of(server, "made.bin")`, used for reads and FILE_SYNC
/// writes and removed; the storage path's protocol hop starts with `hop`, names `detail` and
/// carries the protocol key `key`.
fn creates_fills_and_removes_its_test_file(
    url_of: fn(&GaneshaServer, &str) -> String,
    (hop, detail, key): (&str, &str, &str),
) {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let on_server = server.export_directory().join("made.bin");
    let outcome = run(
        work.path(),
        &url_of(&server, "made.bin"),
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
    assert!(
        names_in(&server.export_directory()).is_empty(),
        "nothing is left on the server"
    );
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
        description.starts_with(hop)
            && description.contains(detail)
            && description.contains("removed after"),
        "{description}"
    );
    assert_eq!(protocol["protocol"], key);
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
fn nfs_run_creates_fills_and_removes_its_test_file_and_names_the_protocol_hop() {
    creates_fills_and_removes_its_test_file(GaneshaServer::url, ("NFSv3/TCP, rsize", "", "nfs"));
}

#[test]
fn nfs41_run_creates_fills_and_removes_its_test_file_and_names_the_protocol_hop() {
    creates_fills_and_removes_its_test_file(
        GaneshaServer::url41,
        ("NFSv4.1/TCP, rsize", ", slots ", "nfs41"),
    );
}

/// A file the test made, reached through `url_of`: refused for writing without
/// `--allow-destructive`, read (also with `--size`, which never re-creates or truncates an
/// existing file), never removed, never written.
fn leaves_a_foreign_file_alone(url_of: fn(&GaneshaServer, &str) -> String) {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = foreign_file(&server, "theirs.bin", 2 * MIB, 0x5a);
    let url = url_of(&server, "theirs.bin");
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
            "--size",
            "1m",
        ],
    );
    assert_eq!(read.status, 0, "{}", read.output);
    assert_eq!(std::fs::read(&file).unwrap(), vec![0x5a; 2 * MIB as usize]);
}

#[test]
fn nfs_run_leaves_a_foreign_file_alone_without_allow_destructive() {
    leaves_a_foreign_file_alone(GaneshaServer::url);
}

#[test]
fn nfs41_run_leaves_a_foreign_file_alone_without_allow_destructive() {
    leaves_a_foreign_file_alone(GaneshaServer::url41);
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

/// Asserts that `iopath run TARGET ARGS` exits with status 2 and a message naming `target`
/// and each of `words`.
fn assert_refused(directory: &Path, target: &str, args: &[&str], words: &[&str]) {
    let outcome = run(directory, target, args);
    assert_eq!(outcome.status, 2, "{target}: {}", outcome.output);
    for word in std::iter::once(&target).chain(words) {
        assert!(
            outcome.output.contains(word),
            "{target}: {}",
            outcome.output
        );
    }
}

/// The probe faults on a read-only export `server` through `url_of`: a missing directory, a
/// missing file without `--size`, no test file can be made, an existing file is not written
/// (and left unchanged), but is read.
fn read_only_export_faults(
    directory: &Path,
    server: &GaneshaServer,
    url_of: fn(&GaneshaServer, &str) -> String,
) {
    let refused = |target: &str, args: &[&str], words: &[&str]| {
        assert_refused(directory, target, args, words)
    };
    refused(
        &url_of(server, "missing/f"),
        &["--rw", "read"],
        &["no such file or directory"],
    );
    refused(&url_of(server, "absent"), &["--rw", "read"], &["--size"]);
    refused(
        &url_of(server, "absent"),
        &["--rw", "read", "--size", "1m"],
        &["read-only export"],
    );
    foreign_file(server, "ro.bin", MIB, 3);
    refused(
        &url_of(server, "ro.bin"),
        &["--rw", "write", "--allow-destructive"],
        &["read-only"],
    );
    let read = run(
        directory,
        &url_of(server, "ro.bin"),
        &["--rw", "read", "--duration", "1"],
    );
    assert_eq!(read.status, 0, "{}", read.output);
    assert_eq!(
        std::fs::read(server.export_directory().join("ro.bin")).unwrap(),
        vec![3; MIB as usize]
    );
}

#[test]
fn nfs_probe_faults_exit_2_naming_the_target_before_any_io() {
    let work = tempfile::tempdir().unwrap();
    let refused = |target: &str, args: &[&str], words: &[&str]| {
        assert_refused(work.path(), target, args, words)
    };
    // Nothing listens.
    let port = support::free_port();
    refused(
        &format!("nfs://127.0.0.1:{port}/export/f?mountport={port}"),
        &["--rw", "read"],
        &["MOUNT", "refused"],
    );
    refused("nfs://127.0.0.1/export/f?version=9", &[], &["version"]);

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
    read_only_export_faults(work.path(), &server, GaneshaServer::url);
    drop(server);

    // An export this client may not use at all.
    let Some(denied) = GaneshaServer::start("None") else {
        return;
    };
    refused(&denied.url("f"), &["--rw", "read"], &["access denied"]);
}

#[test]
fn nfs_run_on_a_server_that_dies_exits_1_naming_the_target() {
    a_run_on_a_server_that_dies_exits_1(GaneshaServer::url);
}

#[test]
fn nfs41_run_on_a_server_that_dies_exits_1_naming_the_target() {
    a_run_on_a_server_that_dies_exits_1(GaneshaServer::url41);
}

/// A run through `url_of` whose server is killed 2 s in ends within 20 s with exit status 1.
fn a_run_on_a_server_that_dies_exits_1(url_of: fn(&GaneshaServer, &str) -> String) {
    let Some(mut server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    foreign_file(&server, "f.bin", 8 * MIB, 0);
    let json = work.path().join("out.json");
    let url = url_of(&server, "f.bin");
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
fn timing_nfs_run_stopped_by_ctrl_c_removes_its_test_file() {
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
    wait_until_made(&on_server);
    std::thread::sleep(Duration::from_secs(2));
    interrupt(&child);
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
    use iopath::targets::remote_file::{RemoteFileServer, create_test_file};
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
        assert_refused(work.path(), target, args, words)
    };
    let port = support::free_port();
    refused(
        &format!("nfs://127.0.0.1:{port}/export/f?version=4.1"),
        &["--rw", "read"],
        &["NFSv4.1", "refused"],
    );

    let Some(server) = GaneshaServer::start("RO") else {
        return;
    };
    let url = |path: &str| format!("nfs://127.0.0.1:{}{path}?version=4.1", server.port);
    refused(&url("/nowhere/f"), &["--rw", "read"], &["NFS4ERR_NOENT"]);
    read_only_export_faults(work.path(), &server, GaneshaServer::url41);
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

#[test]
fn nfs41_a_test_file_is_removed_after_its_clients_lease_ran_out() {
    use iopath::engine::nfs::{NfsRemoteFile, NfsUrl};
    use iopath::targets::remote_file::{RemoteFileServer, create_test_file};
    let Some(server) = GaneshaServer::start_with("RW", "Lease_Lifetime = 2;") else {
        return;
    };
    let url = NfsUrl::parse(&server.url41("lease.bin")).unwrap();
    let mut remote = NfsRemoteFile::find(&url, Duration::from_secs(10)).expect("found");
    assert_eq!(remote.existing_size().unwrap(), None);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let file = create_test_file(Box::new(remote), MIB, 7, &stop)
        .expect("created and filled")
        .expect("not stopped");
    let on_server = server.export_directory().join("lease.bin");
    assert_eq!(std::fs::metadata(&on_server).unwrap().len(), MIB);
    // A run longer than the lease: the client that made the file is gone when it is removed.
    std::thread::sleep(Duration::from_secs(7));
    file.remove().expect("removed through a fresh client");
    assert!(!on_server.exists());
}

/// Counts the files in `directory` every 50 ms until `child` ends; the most seen at once.
fn most_files_while(directory: &Path, child: &mut std::process::Child) -> usize {
    let mut most = 0;
    while child.try_wait().expect("iopath runs").is_none() {
        let count = std::fs::read_dir(directory).map_or(0, |entries| entries.count());
        most = most.max(count);
        std::thread::sleep(Duration::from_millis(50));
    }
    most
}

#[test]
fn nfs_job_files_written_for_fios_libnfs_engine_run_on_their_own_files() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // The shape of fio's examples/nfs.fio: nfs_url names the export, each of the 3 clones has
    // a file of its own named by filename_format, the reader waits for the writer.
    let base = server.url("").replace("/?", "?");
    let job = work.path().join("nfs.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nnfs_url={base}\nioengine=nfs\nblocksize=64k\niodepth=4\nsize=4m\n\
             numjobs=3\nfilename_format=files.$clientuid.$jobnum.$filenum\ntime_based=1\n\
             group_reporting\n\n[write]\nrw=write\nruntime=1s\nstonewall\n\n\
             [read]\nwait_for=write\nrw=randread\nruntime=1s\n"
        ),
    )
    .unwrap();
    let check = support::history::command(BINARY)
        .current_dir(work.path())
        .args(["job", "check"])
        .arg(&job)
        .output()
        .expect("iopath runs");
    let listing = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{listing}");
    assert_eq!(
        listing
            .matches("(will be created, 4m, and removed after the run)")
            .count(),
        3,
        "{listing}"
    );
    let json = work.path().join("out.json");
    let mut child = support::history::command(BINARY)
        .current_dir(work.path())
        .args(["run", "--net-timeout", "5", "--job"])
        .arg(&job)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iopath runs");
    let most = most_files_while(&server.export_directory(), &mut child);
    let outcome = finish(child.wait_with_output().expect("iopath ends"), &json);
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert_eq!(most, 3, "one file per clone on the server while it ran");
    assert_eq!(
        std::fs::read_dir(server.export_directory())
            .unwrap()
            .count(),
        0,
        "the files were removed"
    );
    let json = outcome.json.expect("a JSON result");
    let tests = json["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 2, "the reader waited for the writer: {json}");
    assert!(tests[0]["write"]["bytes"].as_u64().unwrap_or(0) > 0);
    assert!(tests[1]["read"]["bytes"].as_u64().unwrap_or(0) > 0);
    for test in tests {
        assert_eq!(test["jobs"][0]["engine"]["name"], "nfs", "{test}");
    }
}

#[test]
fn nfs_a_job_with_fios_default_engine_runs_on_an_nfs_target_one_io_at_a_time() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // No ioengine: fio's psync, one I/O in flight whatever iodepth says.
    let job = work.path().join("plain.fio");
    std::fs::write(
        &job,
        "[plain]\nrw=randread\nbs=4k\niodepth=16\nsize=2m\nruntime=1\ntime_based\n",
    )
    .unwrap();
    let json = work.path().join("out.json");
    let output = support::history::command(BINARY)
        .current_dir(work.path())
        .args(["run", "--net-timeout", "5", "--job"])
        .arg(&job)
        .arg(server.url("plain.bin"))
        .arg("--json")
        .arg(&json)
        .output()
        .expect("iopath runs");
    let outcome = finish(output, &json);
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert!(
        outcome.output.contains("the sync engine on nfs://"),
        "{}",
        outcome.output
    );
    let json = outcome.json.expect("a JSON result");
    let job = &json["tests"][0]["jobs"][0];
    assert_eq!(job["engine"]["name"], "nfs", "{job}");
    assert_eq!(job["queue_depth_per_worker"], 1, "{job}");
    assert_eq!(job["worker_threads"], 1, "{job}");
    assert!(json["tests"][0]["read"]["bytes"].as_u64().unwrap_or(0) > 0);
    assert!(!server.export_directory().join("plain.bin").exists());
}

#[test]
fn timing_nfs_two_ctrl_c_while_the_test_file_is_filled_exit_at_once_and_remove_it() {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("out.json");
    let filling = server.export_directory().join("filling.bin");
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
        &json,
    );
    wait_until_made(&filling);
    for _ in 0..2 {
        interrupt(&child);
        std::thread::sleep(Duration::from_millis(100));
    }
    let started = Instant::now();
    let outcome = finish(child.wait_with_output().expect("iopath ends"), &json);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!([1, 130].contains(&outcome.status), "{}", outcome.output);
    assert!(!filling.exists(), "removed: {}", outcome.output);
}

/// While a run of `url_of(server, "moved.bin")` is under way, its test file is moved away on
/// the server (a rename in the exported directory, behind nfs-ganesha's back: its caches
/// still hold the old name) and another file is put under its name. After the run the other
/// file is intact and iopath's warning names what it did: it left the name alone.
fn a_file_put_under_the_test_files_name_survives(url_of: fn(&GaneshaServer, &str) -> String) {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("out.json");
    let on_server = server.export_directory().join("moved.bin");
    let child = spawn(work.path(), &url_of(&server, "moved.bin"), &SWAP_RUN, &json);
    swap_once_filled(&on_server, SWAP_TEST_FILE_BYTES, MIB);
    let outcome = finish(child.wait_with_output().expect("iopath ends"), &json);
    assert_eq!(outcome.status, 0, "{}", outcome.output);
    assert_the_swap_survived(&on_server, MIB, &outcome.output);
}

#[test]
fn nfs_run_leaves_a_file_put_under_its_test_files_name_on_the_server() {
    a_file_put_under_the_test_files_name_survives(GaneshaServer::url);
}

#[test]
fn nfs41_run_leaves_a_file_put_under_its_test_files_name_on_the_server() {
    a_file_put_under_the_test_files_name_survives(GaneshaServer::url41);
}

/// A verify state saved through `url_of(server, "a.bin")` names the file by the server's
/// handle: a later run on the same file, over a new connection, checks it clean; the same
/// state loaded for b.bin, of the same size, is refused before any I/O (exit 2), both named.
fn a_state_names_its_nfs_file(url_of: fn(&GaneshaServer, &str) -> String) {
    let Some(server) = GaneshaServer::start("RW") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    foreign_file(&server, "a.bin", MIB, 0);
    foreign_file(&server, "b.bin", MIB, 0);
    let region = [
        "--name",
        "vt",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--bytes",
        "1m",
        "--verify",
        "crc32c",
        "--allow-destructive",
    ];
    let write = [
        &region[..],
        &["--verify-read-back=false", "--verify-state-save"],
    ]
    .concat();
    let check = [&region[..], &["--verify-only", "--verify-state-load"]].concat();
    let written = run(work.path(), &url_of(&server, "a.bin"), &write);
    assert_eq!(written.status, 0, "{}", written.output);
    let other = run(work.path(), &url_of(&server, "b.bin"), &check);
    assert_eq!(other.status, 2, "{}", other.output);
    assert!(
        other.output.contains(&format!(
            "saved for {} (1048576 bytes, server handle ",
            url_of(&server, "a.bin")
        )) && other.output.contains(&format!(
            "not for {} (1048576 bytes, server handle ",
            url_of(&server, "b.bin")
        )),
        "{}",
        other.output
    );
    assert!(other.json.is_none(), "a refused run wrote a result");
    let same = run(work.path(), &url_of(&server, "a.bin"), &check);
    assert_eq!(same.status, 0, "{}", same.output);
    let verification = &same.json.expect("a JSON result")["tests"][0]["verification"];
    assert_eq!(
        (
            verification["blocks_checked"].as_u64(),
            verification["mismatch_count"].as_u64()
        ),
        (Some(256), Some(0)),
        "{verification}"
    );
}

#[test]
fn nfs_verify_state_is_refused_for_another_file_and_loads_for_its_own() {
    a_state_names_its_nfs_file(GaneshaServer::url);
}

#[test]
fn nfs41_verify_state_is_refused_for_another_file_and_loads_for_its_own() {
    a_state_names_its_nfs_file(GaneshaServer::url41);
}
