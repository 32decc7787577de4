//! Shared helpers of the integration tests: run the real binary, read its JSON, make loop
//! devices and mounts that are always cleaned up.

#![allow(dead_code)]

use crate::support::{require, skip};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The iopath binary under test.
pub fn iopath() -> Command {
    crate::support::history::command(env!("CARGO_BIN_EXE_iopath"))
}

/// Output of one run.
pub struct RunOutput {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    pub json: Option<Value>,
}

/// Runs `iopath run ARGS --json DIR/out.json` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> RunOutput {
    run_with_json(dir, &dir.join("out.json"), args)
}

/// Runs `iopath run ARGS --json DIR/out.json` in `dir` in the real-time class
/// (`support::priority::realtime_command`): for a timing-sensitive test that holds the run's
/// own latencies or rates to what its flags ask, whatever else the machine runs.
pub fn run_measured_in(dir: &Path, args: &[&str]) -> RunOutput {
    let command = crate::support::priority::realtime_command(env!("CARGO_BIN_EXE_iopath"));
    run_command_with_json(command, dir, &dir.join("out.json"), args)
}

/// Runs `iopath run ARGS --json JSON_PATH` in `dir`.
pub fn run_with_json(dir: &Path, json_path: &Path, args: &[&str]) -> RunOutput {
    run_command_with_json(iopath(), dir, json_path, args)
}

/// Runs `COMMAND run ARGS --json JSON_PATH` in `dir` (`command` starts the iopath under test).
fn run_command_with_json(
    mut command: Command,
    dir: &Path,
    json_path: &Path,
    args: &[&str],
) -> RunOutput {
    let _ = std::fs::remove_file(json_path);
    let output = command
        .current_dir(dir)
        .arg("run")
        .args(args)
        .arg("--json")
        .arg(json_path)
        .output()
        .expect("iopath runs");
    let json = std::fs::read_to_string(json_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    into_run_output(output, json)
}

/// Runs `iopath run ARGS --no-history` in `dir` under `strace -f TRACING -o LOG` and returns
/// strace's log; panics with iopath's standard error when the run fails.
pub fn traced_run(strace: &Path, dir: &Path, tracing: &[&str], args: &[&str]) -> String {
    let log = dir.join("strace.log");
    let output = Command::new(strace)
        .current_dir(dir)
        .arg("-f")
        .args(tracing)
        .arg("-o")
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_iopath"))
        .arg("run")
        .args(args)
        .arg("--no-history")
        .output()
        .expect("strace runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(&log).expect("strace's log")
}

/// Runs `iopath ARGS` (no JSON) in `dir`.
pub fn plain_in(dir: &Path, args: &[&str]) -> RunOutput {
    let output = iopath()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("iopath runs");
    into_run_output(output, None)
}

/// What a finished process printed and how it ended, with the JSON read, if any.
pub fn into_run_output(output: Output, json: Option<Value>) -> RunOutput {
    RunOutput {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        json,
    }
}

impl RunOutput {
    /// The JSON, or a panic that shows what the run printed.
    pub fn json(&self) -> &Value {
        self.json.as_ref().unwrap_or_else(|| {
            panic!(
                "no JSON (exit {}):\nstdout:\n{}\nstderr:\n{}",
                self.status, self.stdout, self.stderr
            )
        })
    }

    /// The JSON read as a RunResult (every target and path, as in memory).
    pub fn result(&self) -> iopath::result::RunResult {
        serde_json::from_value(self.json().clone()).expect("the JSON is a RunResult")
    }

    /// Asserts the exit status, showing the output when it differs.
    pub fn expect_status(&self, status: i32) -> &Self {
        assert_eq!(
            self.status, status,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// `value[path...]`, where a key of digits indexes an array.
pub fn at<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    let mut current = value;
    for key in path {
        current = match (current, key.parse::<usize>()) {
            (Value::Array(items), Ok(index)) => &items[index],
            _ => &current[*key],
        };
    }
    current
}

/// `value[path...]` as u64.
pub fn u64_at(value: &Value, path: &[&str]) -> u64 {
    let current = at(value, path);
    current
        .as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not an integer: {current}"))
}

/// `value[path...]` as f64.
pub fn f64_at(value: &Value, path: &[&str]) -> f64 {
    let current = at(value, path);
    current
        .as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number: {current}"))
}

pub use crate::support::devices::{LoopDevice, has_command, is_root};

/// A mount that is unmounted on drop.
pub struct Mount {
    pub point: PathBuf,
}

impl Mount {
    /// `mount ARGS POINT`; `None` when it fails or we are not root, after [`require`] skipped
    /// the calling test.
    pub fn new(args: &[&str], point: &Path) -> Option<Mount> {
        if !require(is_root(), "mounting needs root") {
            return None;
        }
        std::fs::create_dir_all(point).unwrap();
        let status = Command::new("mount")
            .args(args)
            .arg(point)
            .status()
            .expect("mount runs");
        if !status.success() {
            skip(format_args!("mount {args:?} failed here"));
            return None;
        }
        Some(Mount {
            point: point.to_path_buf(),
        })
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.point).status();
    }
}

/// Every entry of a directory, sorted.
pub fn list_dir(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A file of `size` pseudo-random bytes written without iopath.
pub fn write_foreign_file(path: &Path, size: usize) {
    let mut rng = fastrand::Rng::with_seed(3);
    let data: Vec<u8> = (0..size).map(|_| rng.u8(..)).collect();
    std::fs::write(path, data).unwrap();
}

/// Directory for test files on a disk filesystem (O_DIRECT works), not tmpfs.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tempfile::tempdir_in(base).unwrap()
}

/// A sparse file of `bytes` zero bytes at `path` (a loop device's backing image).
pub fn sparse_image(path: &Path, bytes: u64) {
    std::fs::File::create(path).unwrap().set_len(bytes).unwrap();
}

/// Starts `iopath ARGS` in `dir` with stdout and stderr captured, without waiting for it.
pub fn spawn_in(dir: &Path, args: &[&std::ffi::OsStr]) -> std::process::Child {
    iopath()
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("iopath starts")
}

/// `iopath pts TARGET` running write saturation alone, briefly: three rounds of 100 ms.
pub fn brief_saturation(target: &str) -> Vec<&str> {
    vec![
        "pts",
        target,
        "--tests",
        "saturation",
        "--round",
        "100ms",
        "--saturation-time",
        "300ms",
    ]
}

/// Longest wait for nbdkit to come up.
const NBDKIT_START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// An nbdkit on a Unix socket in `dir`, killed on drop.
pub struct Nbdkit {
    child: Child,
    socket: PathBuf,
}

impl Nbdkit {
    /// Starts `nbdkit ARGS` serving on `dir/nbd.sock`, and waits until it has written its
    /// pid file.
    pub fn start(dir: &Path, args: &[&str]) -> Nbdkit {
        let socket = dir.join("nbd.sock");
        let pid_file = dir.join("nbdkit.pid");
        let child = Command::new("nbdkit")
            .arg("--exit-with-parent")
            .arg("-U")
            .arg(&socket)
            .arg("-P")
            .arg(&pid_file)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nbdkit starts");
        let mut server = Nbdkit { child, socket };
        let started = Instant::now();
        while !std::fs::read_to_string(&pid_file).is_ok_and(|pid| !pid.trim().is_empty()) {
            assert!(
                server.child.try_wait().unwrap().is_none(),
                "nbdkit exited at start"
            );
            assert!(
                started.elapsed() < NBDKIT_START_TIMEOUT,
                "nbdkit did not come up"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        server
    }

    /// The server's `nbd+unix://` URL.
    pub fn url(&self) -> String {
        format!("nbd+unix:///?socket={}", self.socket.display())
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `iopath run test.dat --size 1m --duration 1s --no-history FLAGS` in `dir` for each
/// case, and holds that it exits with status 2, says the case's message and created no test
/// file: a bad input refused before any I/O.
pub fn expect_refused_before_any_io(dir: &Path, cases: &[(&[&str], &str)]) {
    for (flags, message) in cases {
        let mut args = vec![
            "test.dat",
            "--size",
            "1m",
            "--duration",
            "1s",
            "--no-history",
        ];
        args.extend_from_slice(flags);
        let output = run_in(dir, &args);
        output.expect_status(2);
        assert!(
            output.stderr.contains(message),
            "{flags:?}: {}",
            output.stderr
        );
        assert!(
            !dir.join("test.dat").exists(),
            "{flags:?}: I/O before the refusal"
        );
    }
}
