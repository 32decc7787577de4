//! Running a program from a test, bounded in time; a port for a server it starts, the server
//! stopped with the test ([`KillOnDrop`]) and waited for until it is ready ([`wait_until`],
//! [`wait_for_port`]).

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Runs `command` with its standard output discarded and its standard error kept; kills it and
/// fails the test when it runs longer than `limit`. Returns the exit code (-1 when a signal
/// ended it) and the standard error as text.
pub fn run_with_limit(command: &mut Command, limit: Duration) -> (i32, String) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{command:?} does not start: {error}"));
    let started = Instant::now();
    while child.try_wait().expect("wait works").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} ran for more than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs `command` with its standard output discarded, handing each line of its standard
/// error to `on_line` as it comes (with the running child, to signal it); returns the exit
/// status and the whole standard error.
pub fn run_watching_stderr(
    command: &mut Command,
    mut on_line: impl FnMut(&str, &Child),
) -> (ExitStatus, String) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{command:?} does not start: {error}"));
    let mut stderr = String::new();
    for line in BufReader::new(child.stderr.take().expect("a pipe")).lines() {
        let line = line.expect("standard error is text");
        on_line(&line, &child);
        stderr.push_str(&line);
        stderr.push('\n');
    }
    (child.wait().expect("wait works"), stderr)
}

/// A free TCP port on loopback (free when asked; the server takes it a moment later).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

/// A server or agent a test started, killed and reaped when dropped (also when the test fails
/// half-way), so that nothing it started outlives it.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until `ready` holds, asking every 50 ms, and fails the test, naming `what`, when it
/// does not within 10 s.
pub fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until something accepts TCP connections on `address:port` (10 s at most; see
/// [`wait_until`]).
pub fn wait_for_port(address: &str, port: u16) {
    let target = format!("{address}:{port}");
    wait_until(&format!("a listener on {target}"), || {
        TcpStream::connect(&target).is_ok()
    });
}

/// What one run of the binary did.
pub struct Outcome {
    /// Exit status (-1: killed by a signal).
    pub status: i32,
    /// Standard output and standard error, one after the other.
    pub output: String,
    /// The JSON result it wrote, when it wrote one that parses.
    pub json: Option<serde_json::Value>,
}

/// What `output` says, with the JSON result at `json` when there is one.
pub fn finish(output: std::process::Output, json: &Path) -> Outcome {
    Outcome {
        status: output.status.code().unwrap_or(-1),
        output: format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
        json: std::fs::read_to_string(json)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok()),
    }
}

/// The protocol hop of the first storage path of a run's JSON result (fails the test when
/// there is none).
pub fn protocol_hop(json: &serde_json::Value) -> &serde_json::Value {
    json["paths"][0]["hops"]
        .as_array()
        .expect("a storage path")
        .iter()
        .find(|hop| hop["kind"] == "protocol")
        .expect("a protocol hop")
}

/// Waits (at most 20 s) until `path` exists, and fails the test when it does not.
pub fn wait_until_made(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(path.exists(), "{} was made", path.display());
}

/// Sends SIGINT (Ctrl-C) to `child`.
pub fn interrupt(child: &std::process::Child) {
    // SAFETY: kill only sends a signal, to a child the test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}
