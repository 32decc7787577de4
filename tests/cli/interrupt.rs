//! Ctrl-C and SIGTERM stop cleanly at any phase of a run (file fill, start delay, ramp,
//! measured time, between sweep points), keep what was measured and remove iopath's temporary
//! files; a second signal ends the run at once and still writes what it has.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a first signal may take to end a run.
const FIRST_SIGNAL_BOUND: Duration = Duration::from_secs(3);
/// How long a second signal may take.
const SECOND_SIGNAL_BOUND: Duration = Duration::from_secs(1);
/// Longest wait for a run to reach the phase a test signals it in.
const PHASE_TIMEOUT: Duration = Duration::from_secs(60);

/// An `iopath run` in a directory, killed if the test ends before it does.
struct Running {
    child: Option<Child>,
    dir: PathBuf,
}

impl Running {
    /// Starts `iopath run ARGS --json out.json` in `dir`.
    fn start(dir: &Path, args: &[&str]) -> Running {
        let child = iopath()
            .current_dir(dir)
            .arg("run")
            .args(args)
            .args(["--json", "out.json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("iopath starts");
        Running {
            child: Some(child),
            dir: dir.to_path_buf(),
        }
    }

    fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    /// Threads of the process now (0 once it is gone).
    fn threads(&self) -> usize {
        process_threads(self.pid() as u32)
    }

    /// Waits until `ready` holds (the run has reached a phase), failing after
    /// [`PHASE_TIMEOUT`] or when the run ends first.
    fn wait_for(&mut self, phase: &str, ready: impl Fn(&Running) -> bool) {
        let started = Instant::now();
        while !ready(self) {
            let child = self.child.as_mut().unwrap();
            if let Some(status) = child.try_wait().unwrap() {
                let output = self.child.take().unwrap().wait_with_output().unwrap();
                panic!(
                    "the run ended ({status}) before {phase}: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            assert!(started.elapsed() < PHASE_TIMEOUT, "{phase} never came");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until worker threads run (a test has started): more than the main and the
    /// signal-handling threads.
    fn wait_for_workers(&mut self) {
        self.wait_for("the first test", |run| run.threads() > 2);
    }

    /// Waits until the temporary test file exists.
    fn wait_for_test_file(&mut self) {
        self.wait_for("the test file", |run| {
            list_dir(&run.dir)
                .iter()
                .any(|name| name.starts_with(".iopath-test"))
        });
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill sends a signal to the child this test spawned (still unreaped).
        unsafe { libc::kill(self.pid(), signal) };
    }

    /// Waits for the run to end, at most `bound` after now; returns its status, the time it
    /// took and its stderr.
    fn finish_within(&mut self, bound: Duration) -> (ExitStatus, Duration, String) {
        let started = Instant::now();
        let child = self.child.as_mut().unwrap();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > bound + Duration::from_secs(10) {
                break child.try_wait().unwrap().unwrap_or_else(|| {
                    let _ = child.kill();
                    panic!("the run was still going {bound:?} after the signal; killed it");
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let took = started.elapsed();
        let output = self.child.take().unwrap().wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            took <= bound,
            "the run took {took:?} to end after the signal (bound {bound:?}): {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        (status, took, stderr)
    }

    /// The RunResult written to out.json.
    fn json(&self) -> Value {
        let text = std::fs::read_to_string(self.dir.join("out.json")).expect("out.json");
        serde_json::from_str(&text).expect("out.json is whole JSON")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Threads of process `pid` now (0 once it is gone): more than the main and the
/// signal-handling threads once a test's workers run.
fn process_threads(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Threads:"))
                .and_then(|count| count.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Starts random 4 KiB reads on a 16 MiB temporary file with `extra` flags, and waits until
/// its first test has run for `settle`.
fn random_reads_running(dir: &Path, extra: &[&str], settle: Duration) -> Running {
    let mut args = vec!["--size", "16m", "--rw", "randread"];
    args.extend_from_slice(extra);
    let mut run = Running::start(dir, &args);
    run.wait_for_workers();
    std::thread::sleep(settle);
    run
}

/// Sends `signal`, expects the run to end within the first-signal bound with status 130, and
/// to leave only out.json behind (the temporary test file removed). Returns the RunResult.
fn stop_once(run: &mut Running, signal: i32) -> Value {
    run.signal(signal);
    let (status, _, stderr) = run.finish_within(FIRST_SIGNAL_BOUND);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_eq!(
        list_dir(&run.dir),
        ["out.json"],
        "the test file must be gone: {stderr}"
    );
    let json = run.json();
    assert_eq!(json["partial"], true, "{json}");
    json
}

#[test]
fn timing_ctrl_c_keeps_a_partial_result_and_removes_the_test_file() {
    let dir = disk_tempdir();
    let json_path = dir.path().join("out.json");
    let args = [
        "run",
        "--size",
        "64m",
        "--duration",
        "20",
        "--ramp",
        "0",
        "--json",
    ]
    .map(std::ffi::OsStr::new);
    let child = spawn_in(dir.path(), &[&args[..], &[json_path.as_os_str()]].concat());
    // Wait for the workers (the test file is filled before they start: on a busy machine that
    // takes longer than any fixed wait), then let the first test measure a little.
    let started = Instant::now();
    while process_threads(child.id()) <= 2 {
        assert!(
            started.elapsed() < PHASE_TIMEOUT,
            "no worker started: {:?}",
            list_dir(dir.path())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: kill sends a signal to the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(json["partial"], true);
    assert_eq!(json["tests"][0]["stop_reason"], "interrupted");
    assert!(u64_at(&json, &["tests", "0", "read", "io_count"]) > 0);
    assert!(String::from_utf8_lossy(&output.stdout).contains("partial"));
    assert_eq!(
        list_dir(dir.path()),
        ["out.json"],
        "the test file must be gone"
    );
}

/// A big test file is being filled: the first signal stops the fill, removes the partial file
/// and writes a partial result without tests.
fn stop_during_fill(signal: i32) {
    let dir = disk_tempdir();
    let mut run = Running::start(dir.path(), &["--size", "4g", "--rw", "read", "--ramp", "0"]);
    run.wait_for_test_file();
    std::thread::sleep(Duration::from_millis(300));
    let json = stop_once(&mut run, signal);
    assert_eq!(json["tests"].as_array().unwrap().len(), 0, "{json}");
}

#[test]
fn sigterm_during_the_fill_stops_it_and_removes_the_file() {
    stop_during_fill(libc::SIGTERM);
}

#[test]
fn sigint_during_the_fill_stops_it_and_removes_the_file() {
    stop_during_fill(libc::SIGINT);
}

/// A long ramp: the test is kept, interrupted, with nothing measured.
fn stop_during_ramp(signal: i32) {
    let dir = disk_tempdir();
    let mut run = random_reads_running(
        dir.path(),
        &["--ramp", "60", "--duration", "5"],
        Duration::from_millis(500),
    );
    let json = stop_once(&mut run, signal);
    assert_eq!(json["tests"][0]["stop_reason"], "interrupted", "{json}");
    assert_eq!(u64_at(&json, &["tests", "0", "total", "io_count"]), 0);
}

#[test]
fn sigterm_during_the_ramp_stops_at_once() {
    stop_during_ramp(libc::SIGTERM);
}

#[test]
fn sigint_during_the_ramp_stops_at_once() {
    stop_during_ramp(libc::SIGINT);
}

#[test]
fn a_signal_during_a_sweep_keeps_the_points_done() {
    let dir = disk_tempdir();
    let mut run = random_reads_running(
        dir.path(),
        &[
            "--ramp",
            "0",
            "--duration",
            "1",
            "--sweep",
            "qd=1,2,4,8,16,32",
        ],
        Duration::from_millis(2500),
    );
    let json = stop_once(&mut run, libc::SIGTERM);
    let tests = json["tests"].as_array().unwrap();
    assert!(!tests.is_empty() && tests.len() < 6, "{json}");
    assert_eq!(tests[0]["stop_reason"], "completed", "{json}");
    assert!(u64_at(&json, &["tests", "0", "total", "io_count"]) > 0);
}

#[test]
fn timing_a_signal_during_a_think_time_stops_at_once() {
    let dir = disk_tempdir();
    let mut run = random_reads_running(
        dir.path(),
        &["--think-time", "60s", "--ramp", "0"],
        Duration::from_millis(500),
    );
    let json = stop_once(&mut run, libc::SIGINT);
    assert_eq!(json["tests"][0]["stop_reason"], "interrupted", "{json}");
}

#[test]
fn timing_sigterm_during_a_job_start_delay_stops_at_once() {
    let dir = disk_tempdir();
    std::fs::write(
        dir.path().join("late.fio"),
        "[late]\nfilename=data.bin\nsize=16m\nrw=randread\nstartdelay=60\nruntime=5\ntime_based=1\n",
    )
    .unwrap();
    let mut run = Running::start(dir.path(), &["--job", "late.fio"]);
    run.wait_for_workers();
    std::thread::sleep(Duration::from_millis(500));
    run.signal(libc::SIGTERM);
    let (status, _, stderr) = run.finish_within(FIRST_SIGNAL_BOUND);
    assert_eq!(status.code(), Some(130), "{stderr}");
    let json = run.json();
    assert_eq!(json["partial"], true, "{json}");
    assert_eq!(json["tests"][0]["stop_reason"], "interrupted", "{json}");
    assert_eq!(u64_at(&json, &["tests", "0", "total", "io_count"]), 0);
    // A file a job names is kept, as after any run; it was complete before the delay.
    assert_eq!(list_dir(dir.path()), ["data.bin", "late.fio", "out.json"]);
    assert_eq!(
        std::fs::metadata(dir.path().join("data.bin"))
            .unwrap()
            .len(),
        16 << 20
    );
}

/// A signal while a job file's later files are being created stops the creation: the files
/// done are kept (a job file's files stay, as in fio), the one being filled is removed.
#[test]
fn sigint_while_a_job_creates_its_files_stops_between_or_within_them() {
    let dir = disk_tempdir();
    std::fs::write(
        dir.path().join("many.fio"),
        "[many]\nnrfiles=40\nsize=4g\nrw=randread\nruntime=5\ntime_based=1\n",
    )
    .unwrap();
    let mut run = Running::start(dir.path(), &["--job", "many.fio"]);
    let started = Instant::now();
    while !dir.path().join("many.0.1").exists() {
        assert!(
            started.elapsed() < PHASE_TIMEOUT,
            "the second file was not begun"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    run.signal(libc::SIGINT);
    let (status, _, stderr) = run.finish_within(FIRST_SIGNAL_BOUND);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_eq!(run.json()["partial"], true);
    let files = list_dir(dir.path());
    assert!(files.contains(&"many.0.0".to_string()), "{files:?}");
    assert!(files.len() < 40, "the creation went on: {files:?}");
    for file in files.iter().filter(|name| name.starts_with("many.0.")) {
        let length = std::fs::metadata(dir.path().join(file)).unwrap().len();
        assert_eq!(length, (4u64 << 30) / 40, "{file} is partial");
    }
}

/// A signal during the start delay of a later test (after a stonewall) keeps the test that
/// finished.
#[test]
fn timing_sigterm_during_a_later_tests_start_delay_keeps_the_earlier_test() {
    let dir = disk_tempdir();
    std::fs::write(
        dir.path().join("two.fio"),
        "[a]\nfilename=d.bin\nsize=16m\nrw=randread\nruntime=1\ntime_based=1\n[b]\nstonewall\nfilename=d.bin\nsize=16m\nrw=randread\nstartdelay=60\nruntime=5\ntime_based=1\n",
    )
    .unwrap();
    let mut run = Running::start(dir.path(), &["--job", "two.fio", "--ramp", "0"]);
    run.wait_for_workers();
    std::thread::sleep(Duration::from_millis(2500));
    run.signal(libc::SIGTERM);
    let (status, _, stderr) = run.finish_within(FIRST_SIGNAL_BOUND);
    assert_eq!(status.code(), Some(130), "{stderr}");
    let json = run.json();
    assert_eq!(json["partial"], true, "{json}");
    assert_eq!(json["tests"][0]["stop_reason"], "completed", "{json}");
    assert_eq!(json["tests"][1]["stop_reason"], "interrupted", "{json}");
    assert_eq!(u64_at(&json, &["tests", "1", "total", "io_count"]), 0);
}

#[test]
fn a_second_signal_ends_the_run_at_once_and_writes_what_it_has() {
    let dir = disk_tempdir();
    let mut run = random_reads_running(
        dir.path(),
        &["--ramp", "0", "--duration", "30"],
        Duration::from_millis(500),
    );
    run.signal(libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(10));
    run.signal(libc::SIGINT);
    let (status, _, stderr) = run.finish_within(SECOND_SIGNAL_BOUND);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_eq!(list_dir(dir.path()), ["out.json"], "{stderr}");
    assert_eq!(run.json()["partial"], true);
}

/// A server that stops answering writes holds the first signal up (an I/O in flight is
/// waited for); the second ends the run at once and writes the test that had finished.
#[test]
fn a_second_signal_writes_the_finished_tests_while_a_server_stalls() {
    if crate::support::devices::required_tool("nbdkit", "nbdkit").is_none() {
        return;
    }
    let server_dir = tempfile::tempdir().unwrap();
    let server = Nbdkit::start(
        server_dir.path(),
        &["--filter=delay", "memory", "64M", "delay-write=60"],
    );
    let dir = disk_tempdir();
    std::fs::write(
        dir.path().join("two.fio"),
        "[global]\nioengine=nbd\nruntime=1\ntime_based=1\n[reads]\nrw=randread\n[writes]\nstonewall\nrw=write\n",
    )
    .unwrap();
    let url = server.url();
    let mut run = Running::start(
        dir.path(),
        &[
            "--job",
            "two.fio",
            &url,
            "--allow-destructive",
            "--csv",
            "out.csv",
        ],
    );
    // The reads take a second; then the first write waits on the server.
    run.wait_for_workers();
    std::thread::sleep(Duration::from_millis(2500));
    run.signal(libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        run.threads() > 0,
        "the first signal should wait for the write"
    );
    run.signal(libc::SIGTERM);
    let (status, _, stderr) = run.finish_within(SECOND_SIGNAL_BOUND);
    assert_eq!(status.code(), Some(130), "{stderr}");
    let json = run.json();
    assert_eq!(json["partial"], true, "{json}");
    assert_eq!(json["tests"][0]["name"], "reads", "{json}");
    assert_eq!(json["tests"][0]["stop_reason"], "completed", "{json}");
    assert!(u64_at(&json, &["tests", "0", "total", "io_count"]) > 0);
    let csv = std::fs::read_to_string(dir.path().join("out.csv")).unwrap();
    assert!(csv.contains("reads"), "{csv}");
}
