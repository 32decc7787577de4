//! The iSCSI engine against a real target: a private `tgtd` on a free loopback port with a
//! file-backed LUN, started and torn down by each test.
//!
//! The tests are skipped when they cannot run here (not root, as tgtd needs; tgt not installed,
//! `apt-get install tgt`; libiscsi missing, `apt-get install libiscsi7`), or fail under CI
//! (tests/support).

use crate::support;

use iopath::engine::iscsi::{self, IscsiEngine};
use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
use iopath::result::Direction;
use iopath::targets::network_target::NetworkTarget;
use serde_json::Value;
use std::fs::File;
use std::net::TcpStream;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::devices::allocated_blocks;
use support::free_port;

const IQN: &str = "iqn.2026-01.dev.iopath:test";
const MIB: u64 = 1 << 20;

/// A `tgtd` of our own, serving one target with a file-backed disk at LUN 1.
struct TgtServer {
    daemon: Child,
    /// The iSCSI portal's port.
    port: u16,
    /// tgtd's management channel number (`-C`; tgtd accepts 0..=32767).
    control_port: u16,
    backing: PathBuf,
    _directory: tempfile::TempDir,
}

/// Why these tests cannot run here, if they cannot.
fn missing_prerequisite() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (tgtd needs root)".into());
    }
    for tool in ["tgtd", "tgtadm"] {
        let found = Command::new(tool)
            .arg("--help")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if !found {
            return Some(format!("{tool} is not installed (apt-get install tgt)"));
        }
    }
    iscsi::libiscsi_available().err().map(|e| e.to_string())
}

/// A tgtd management channel number that no tgtd on this machine uses now.
fn free_control_port() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = 20_000 + (std::process::id() % 1000) as u16 * 10;
    loop {
        let candidate = base + NEXT.fetch_add(1, Ordering::Relaxed) % 10_000;
        let candidate = if candidate > 32_767 {
            candidate - 12_000
        } else {
            candidate
        };
        if !PathBuf::from(format!("/var/run/tgtd/socket.{candidate}")).exists() {
            return candidate;
        }
    }
}

impl TgtServer {
    /// Starts tgtd with a `size` byte LUN, or prints why it cannot and returns `None`.
    fn start(size: u64) -> Option<TgtServer> {
        if let Some(reason) = missing_prerequisite() {
            support::skip(reason);
            return None;
        }
        let directory = tempfile::tempdir().expect("a temporary directory");
        let backing = directory.path().join("lun1.img");
        File::create(&backing)
            .and_then(|file| file.set_len(size))
            .expect("the backing file");
        let mut attempts = 0;
        let mut server = loop {
            let log = File::create(directory.path().join("tgtd.log")).expect("a log file");
            let port = free_port();
            let control_port = free_control_port();
            let daemon = Command::new("tgtd")
                .args(["-f", "-C", &control_port.to_string()])
                .args(["--iscsi", &format!("portal=127.0.0.1:{port}")])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("tgtd starts");
            let mut server = TgtServer {
                daemon,
                port,
                control_port,
                backing: backing.clone(),
                _directory: tempfile::tempdir().expect("a temporary directory"),
            };
            // Another tgtd may have taken the port or control port meanwhile: try again.
            match server.wait_until_ready() {
                Ok(()) => break server,
                Err(error) if attempts < 5 => {
                    attempts += 1;
                    eprintln!("tgtd did not start ({error}); trying other ports");
                }
                Err(error) => panic!("tgtd did not start: {error}"),
            }
        };
        server._directory = directory;
        let backing = server.backing.display().to_string();
        server.tgtadm(&["--op", "new", "--mode", "target", "--tid", "1", "-T", IQN]);
        server.tgtadm(&[
            "--op",
            "new",
            "--mode",
            "logicalunit",
            "--tid",
            "1",
            "--lun",
            "1",
            "-b",
            &backing,
        ]);
        server.tgtadm(&[
            "--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL",
        ]);
        Some(server)
    }

    fn tgtadm_command(&self, arguments: &[&str]) -> Command {
        let mut command = Command::new("tgtadm");
        command
            .args(["-C", &self.control_port.to_string(), "--lld", "iscsi"])
            .args(arguments)
            .stdin(Stdio::null());
        command
    }

    /// Sets `params` (`readonly=1`, `thin_provisioning=1`) on LUN 1.
    fn update_lun(&self, params: &str) {
        self.tgtadm(&[
            "--op",
            "update",
            "--mode",
            "logicalunit",
            "--tid",
            "1",
            "--lun",
            "1",
            "--params",
            params,
        ]);
    }

    /// Runs tgtadm and insists that it succeeds.
    fn tgtadm(&self, arguments: &[&str]) {
        let output = self
            .tgtadm_command(arguments)
            .output()
            .expect("tgtadm runs");
        assert!(
            output.status.success(),
            "tgtadm {arguments:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Waits until tgtd answers on its management socket and listens on its portal.
    fn wait_until_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = self.daemon.try_wait() {
                return Err(format!("it exited at start: {status}"));
            }
            let managed = self
                .tgtadm_command(&["--op", "show", "--mode", "system"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            if managed && TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err("it did not become ready in 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn url(&self, iqn: &str, lun: u32) -> String {
        format!("iscsi://127.0.0.1:{}/{iqn}/{lun}", self.port)
    }

    fn target(&self) -> NetworkTarget {
        NetworkTarget::parse(&self.url(IQN, 1)).expect("a valid URL")
    }

    /// Kills tgtd at once (connections drop without a logout).
    fn kill(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

impl Drop for TgtServer {
    fn drop(&mut self) {
        if let Ok(None) = self.daemon.try_wait() {
            // tgtd ignores SIGTERM while it has targets: remove them, then the daemon.
            let quiet = |mut command: Command| {
                let _ = command.stdout(Stdio::null()).stderr(Stdio::null()).status();
            };
            quiet(self.tgtadm_command(&[
                "--op", "delete", "--mode", "target", "--tid", "1", "--force",
            ]));
            quiet(self.tgtadm_command(&["--op", "delete", "--mode", "system"]));
            let deadline = Instant::now() + Duration::from_secs(5);
            while matches!(self.daemon.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.kill();
        for suffix in ["", ".lock"] {
            let _ = std::fs::remove_file(format!(
                "/var/run/tgtd/socket.{}{suffix}",
                self.control_port
            ));
        }
    }
}

/// The byte at `index` of the test pattern for a block written at `offset`.
fn pattern(offset: u64, index: usize) -> u8 {
    ((offset / 512) as usize * 7 + index * 13 + 1) as u8
}

/// Submits `requests` (one slot each), flushes and reaps all of them; returns the results
/// in slot order.
fn run_batch(engine: &mut IscsiEngine, requests: &[IoRequest]) -> Vec<i64> {
    for request in requests {
        engine.submit(*request).expect("submit");
    }
    engine.flush().expect("flush");
    let mut results = vec![i64::MIN; requests.len()];
    let mut completions = vec![Completion::default(); requests.len()];
    let mut reaped = 0;
    while reaped < requests.len() {
        let count = engine.reap(1, &mut completions).expect("reap");
        for completion in &completions[..count] {
            results[completion.slot as usize] = completion.result;
        }
        reaped += count;
    }
    results
}

#[test]
fn engine_writes_and_reads_back_a_pattern_at_queue_depth_8() {
    let Some(server) = TgtServer::start(64 * MIB) else {
        return;
    };
    let target = server.target();
    let volume = iscsi::probe(&target, Duration::from_secs(30)).expect("probe");
    assert_eq!(volume.size_bytes, 64 * MIB);
    assert_eq!(volume.logical_block_size, 512);
    assert_eq!(volume.head.len(), 68 * 1024);
    assert!(!volume.read_only);
    assert!(
        volume.head.iter().all(|byte| *byte == 0),
        "a fresh sparse file"
    );

    let places: [(u64, u32); 8] = [
        (0, 4096),
        (8192 + 3 * 512, 512),
        (64 * 1024, 65536),
        (MIB, 8192),
        (10 * MIB + 512, 4096),
        (32 * MIB, 65536),
        (50 * MIB, 16384),
        (64 * MIB - 4096, 4096),
    ];
    for write_through in [false, true] {
        let options = EngineOptions {
            write_through,
            connections: if write_through { 2 } else { 1 },
            ..EngineOptions::new(8, 65536)
        };
        let mut engine = IscsiEngine::open(&target, &options).expect("open");
        assert_eq!(engine.block_size_bytes(), 512);
        assert_eq!(engine.name(), "iscsi");
        let salt = usize::from(write_through);
        let requests: Vec<IoRequest> = places
            .iter()
            .enumerate()
            .map(|(slot, &(offset, length))| IoRequest {
                file: 0,
                slot: slot as u32,
                direction: Direction::Write,
                offset,
                length,
            })
            .collect();
        for request in &requests {
            let buffer = engine.buffer_mut(request.slot as usize);
            for (index, byte) in buffer[..request.length as usize].iter_mut().enumerate() {
                *byte = pattern(request.offset, index + salt);
            }
        }
        let written = run_batch(&mut engine, &requests);
        let lengths: Vec<i64> = places
            .iter()
            .map(|(_, length)| i64::from(*length))
            .collect();
        assert_eq!(written, lengths, "every write completes in full");
        engine.sync_data().expect("SYNCHRONIZE CACHE");

        for slot in 0..places.len() {
            engine.buffer_mut(slot).fill(0);
        }
        let reads: Vec<IoRequest> = requests
            .iter()
            .map(|request| IoRequest {
                file: 0,
                direction: Direction::Read,
                ..*request
            })
            .collect();
        assert_eq!(run_batch(&mut engine, &reads), lengths);
        let backing = File::open(&server.backing).expect("the backing file");
        for request in &requests {
            let length = request.length as usize;
            let expected: Vec<u8> = (0..length)
                .map(|index| pattern(request.offset, index + salt))
                .collect();
            let through_engine = &engine.buffer_mut(request.slot as usize)[..length];
            assert!(
                through_engine == expected.as_slice(),
                "read back through iSCSI at {}",
                request.offset
            );
            let mut in_file = vec![0u8; length];
            backing
                .read_exact_at(&mut in_file, request.offset)
                .expect("read the backing file");
            assert!(
                in_file == expected,
                "backing file at {} (write_through {write_through})",
                request.offset
            );
        }
    }

    let mut engine = IscsiEngine::open(&target, &EngineOptions::new(2, 4096)).expect("open");
    let misaligned = IoRequest {
        file: 0,
        slot: 0,
        direction: Direction::Read,
        offset: 100,
        length: 4096,
    };
    let error = engine.submit(misaligned).unwrap_err().to_string();
    assert!(error.contains("512-byte logical block"), "{error}");
    // At the end, as on a block device: a short read across it, nothing past it.
    assert_eq!(engine.volume_size_bytes(), 64 * MIB);
    let across = IoRequest {
        file: 0,
        offset: 64 * MIB - 1024,
        ..misaligned
    };
    let past = IoRequest {
        file: 0,
        slot: 1,
        offset: 64 * MIB,
        ..misaligned
    };
    assert_eq!(run_batch(&mut engine, &[across, past]), vec![1024, 0]);
    let write_past = IoRequest {
        file: 0,
        direction: Direction::Write,
        ..past
    };
    assert_eq!(
        run_batch(&mut engine, &[across, write_past]),
        vec![1024, -i64::from(libc::ENOSPC)]
    );
}

#[test]
fn an_unknown_target_name_is_named_in_the_error() {
    let Some(server) = TgtServer::start(8 * MIB) else {
        return;
    };
    let missing = "iqn.2026-01.dev.iopath:no-such-target";
    let target = NetworkTarget::parse(&server.url(missing, 1)).unwrap();
    let started = Instant::now();
    let probed = iscsi::probe(&target, Duration::from_secs(30))
        .unwrap_err()
        .to_string();
    assert!(probed.contains(missing), "{probed}");
    let opened = IscsiEngine::open(&target, &EngineOptions::new(4, 4096))
        .err()
        .expect("no such target")
        .to_string();
    assert!(opened.contains(missing), "{opened}");
    assert!(started.elapsed() < Duration::from_secs(10));

    // LUN 0 of tgt is its controller, not a disk.
    let controller = NetworkTarget::parse(&server.url(IQN, 0)).unwrap();
    let error = iscsi::probe(&controller, Duration::from_secs(30))
        .unwrap_err()
        .to_string();
    assert!(error.contains("not a disk"), "{error}");
}

#[test]
fn a_server_stopped_mid_run_is_an_engine_error_not_a_hang() {
    let Some(mut server) = TgtServer::start(64 * MIB) else {
        return;
    };
    let target = server.target();
    let options = EngineOptions {
        connections: 2,
        ..EngineOptions::new(8, 4096)
    };
    let mut engine = IscsiEngine::open(&target, &options).expect("open");
    let (sender, receiver) = mpsc::channel();
    let (running_sender, running) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let started = Instant::now();
        let mut free: Vec<u32> = (0..8).collect();
        let mut completions = [Completion::default(); 8];
        let mut random = 0x1234_5678u64;
        let mut issued = 0u64;
        let mut announced = false;
        let outcome = 'run: loop {
            if started.elapsed() > Duration::from_secs(60) {
                break Ok(issued);
            }
            while let Some(slot) = free.pop() {
                random = random
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let request = IoRequest {
                    file: 0,
                    slot,
                    direction: Direction::Read,
                    offset: (random >> 33) % (64 * MIB / 4096) * 4096,
                    length: 4096,
                };
                if let Err(error) = engine.submit(request) {
                    break 'run Err(error.to_string());
                }
                issued += 1;
            }
            if issued >= 1000 && !announced {
                announced = true;
                let _ = running_sender.send(());
            }
            if let Err(error) = engine.flush() {
                break Err(error.to_string());
            }
            match engine.reap(1, &mut completions) {
                Ok(count) => free.extend(completions[..count].iter().map(|c| c.slot)),
                Err(error) => break Err(error.to_string()),
            }
        };
        let _ = sender.send(outcome);
        drop(engine);
    });
    running
        .recv_timeout(Duration::from_secs(20))
        .expect("I/O is flowing");
    server.kill();
    let outcome = receiver
        .recv_timeout(Duration::from_secs(20))
        .expect("the engine gives up instead of hanging");
    let error = outcome.expect_err("a lost connection is an engine error");
    eprintln!("after the server stopped: {error}");
    assert!(error.contains("iscsi"), "{error}");
    assert!(error.contains("127.0.0.1"), "{error}");
    worker.join().expect("the worker thread ends");
}

#[test]
fn the_binary_runs_against_an_iscsi_url() {
    let Some(server) = TgtServer::start(64 * MIB) else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let json_path = directory.path().join("out.json");
    let url = server.url(IQN, 1);
    let output = support::history::command(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(directory.path())
        .args(["run", &url, "--rw", "randread", "--bs", "4k", "--qd", "32"])
        .args(["--duration", "1", "--ramp", "0", "--json"])
        .arg(&json_path)
        .output()
        .expect("iopath runs");
    assert!(
        output.status.success(),
        "exit {:?}\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(json["targets"][0]["kind"], "iscsi");
    let test = &json["tests"][0];
    assert_eq!(test["jobs"][0]["engine"]["name"], "iscsi");
    assert!(test["total"]["io_count"].as_u64().unwrap() > 0, "{test}");
    assert_eq!(test["total"]["error_count"], 0);

    // Writing to a network volume needs --allow-destructive.
    let refused = support::history::command(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(directory.path())
        .args(["run", &url, "--rw", "randwrite", "--bs", "4k", "--qd", "4"])
        .args(["--duration", "1", "--ramp", "0"])
        .output()
        .expect("iopath runs");
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let untouched = std::fs::read(&server.backing).unwrap();
    assert!(
        untouched.iter().all(|byte| *byte == 0),
        "nothing was written"
    );
}

#[test]
fn flipped_bits_behind_an_iscsi_lun_are_each_reported_and_clean_data_is_not() {
    use support::verify::{self, BLOCKS};
    let Some(server) = TgtServer::start(MIB) else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let url = server.url(IQN, 1);
    let binary = env!("CARGO_BIN_EXE_iopath");
    let mut write = verify::write_args("crc32c");
    write.push("--allow-destructive".into());
    let mut check = verify::check_args("crc32c");
    check.push("--allow-destructive".into());
    let written = verify::run(binary, directory.path(), &url, &write);
    assert_eq!(written.status, 0, "{}", written.describe());
    let clean = verify::run(binary, directory.path(), &url, &check);
    assert_eq!(
        (clean.status, clean.checked(), clean.bad()),
        (0, BLOCKS, 0),
        "{}",
        clean.describe()
    );
    let offsets = verify::flip_blocks(&server.backing, 0, &[2, 50, 51, 250]);
    let found = verify::run(binary, directory.path(), &url, &check);
    assert_eq!((found.status, found.bad()), (1, 4), "{}", found.describe());
    let mut reported = found.mismatches();
    reported.sort();
    let expected: Vec<(u64, String)> = offsets
        .iter()
        .map(|offset| (*offset, "checksum".to_string()))
        .collect();
    assert_eq!(reported, expected, "{}", found.describe());
}

#[test]
fn a_read_only_lun_is_reported_and_refuses_writes() {
    let Some(server) = TgtServer::start(8 * MIB) else {
        return;
    };
    server.update_lun("readonly=1");
    let target = server.target();
    let volume = iscsi::probe(&target, Duration::from_secs(30)).expect("probe");
    assert!(volume.read_only);
    let mut engine = IscsiEngine::open(&target, &EngineOptions::new(1, 4096)).expect("open");
    let write = IoRequest {
        file: 0,
        slot: 0,
        direction: Direction::Write,
        offset: 0,
        length: 4096,
    };
    assert_eq!(
        run_batch(&mut engine, &[write]),
        vec![-i64::from(libc::EROFS)],
        "a refused write is one failed I/O, not an engine error"
    );
    let read = IoRequest {
        file: 0,
        direction: Direction::Read,
        ..write
    };
    assert_eq!(run_batch(&mut engine, &[read]), vec![4096]);
}

#[test]
fn chap_credentials_come_from_the_environment() {
    let Some(server) = TgtServer::start(8 * MIB) else {
        return;
    };
    let (user, secret) = ("iopathuser", "iopath-secret-12");
    server.tgtadm(&[
        "--op",
        "new",
        "--mode",
        "account",
        "--user",
        user,
        "--password",
        secret,
    ]);
    server.tgtadm(&[
        "--op", "bind", "--mode", "account", "--tid", "1", "--user", user,
    ]);
    let directory = tempfile::tempdir().unwrap();
    let run = |credentials: &[(&str, &str)]| {
        let mut command = support::history::command(env!("CARGO_BIN_EXE_iopath"));
        command
            .current_dir(directory.path())
            .env_remove(iscsi::USER_VARIABLE)
            .env_remove(iscsi::PASSWORD_VARIABLE)
            .args(["run", &server.url(IQN, 1), "--rw", "randread", "--bs", "4k"])
            .args(["--qd", "2", "--duration", "1", "--ramp", "0"]);
        for (name, value) in credentials {
            command.env(name, value);
        }
        command.output().expect("iopath runs")
    };
    let refused = run(&[]);
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains(IQN), "{message}");
    assert!(message.contains(iscsi::USER_VARIABLE), "{message}");

    let half = run(&[(iscsi::USER_VARIABLE, user)]);
    let message = String::from_utf8_lossy(&half.stderr);
    assert!(message.contains(iscsi::PASSWORD_VARIABLE), "{message}");

    let admitted = run(&[
        (iscsi::USER_VARIABLE, user),
        (iscsi::PASSWORD_VARIABLE, secret),
    ]);
    assert!(
        admitted.status.success(),
        "{}",
        String::from_utf8_lossy(&admitted.stderr)
    );
}

/// Runs `iopath ARGS` in `directory`: exit status and what it printed.
fn iopath(directory: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let output = support::history::command(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(directory)
        .args(args)
        .output()
        .expect("iopath runs");
    (
        output.status.code(),
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

#[test]
fn trims_unmap_on_a_thin_lun_and_are_refused_on_a_thick_one() {
    let Some(server) = TgtServer::start(16 * MIB) else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(7);
    let data: Vec<u8> = (0..16 * MIB).map(|_| rng.u8(..)).collect();
    std::fs::write(&server.backing, &data).unwrap();
    let full = allocated_blocks(&server.backing);
    let directory = tempfile::tempdir().unwrap();
    let url = server.url(IQN, 1);
    let json = directory.path().join("out.json");
    let json_text = json.display().to_string();
    let trims = [
        "run",
        &url,
        "--rw",
        "trim",
        "--bs",
        "1m",
        "--bytes",
        "16m",
        "--qd",
        "4",
        "--allow-destructive",
        "--json",
        &json_text,
    ];
    // tgt's LUNs are thick unless told otherwise: no LBPME, no LBPU.
    assert!(
        !iscsi::probe(&server.target(), Duration::from_secs(30))
            .unwrap()
            .trim
    );
    let (status, output) = iopath(directory.path(), &trims);
    assert_eq!(status, Some(2), "{output}");
    for needle in [url.as_str(), "cannot trim", "UNMAP"] {
        assert!(output.contains(needle), "{needle}: {output}");
    }
    assert_eq!(
        std::fs::read(&server.backing).unwrap(),
        data,
        "nothing was unmapped"
    );

    server.update_lun("thin_provisioning=1");
    assert!(
        iscsi::probe(&server.target(), Duration::from_secs(30))
            .unwrap()
            .trim
    );
    let (status, output) = iopath(directory.path(), &trims);
    assert_eq!(status, Some(0), "{output}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let trim = &result["tests"][0]["trim"];
    assert_eq!(trim["io_count"], 16, "{trim}");
    assert_eq!(trim["error_count"], 0);
    assert!(trim["latency"]["mean_ns"].as_f64().unwrap() > 0.0);
    let after = allocated_blocks(&server.backing);
    assert!(
        after < full / 8,
        "{after} of {full} blocks left after UNMAP of all"
    );
}
