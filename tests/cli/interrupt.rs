//! Ctrl-C stops cleanly, keeps what was measured and removes iopath's temporary files.

use crate::common::*;
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_keeps_a_partial_result_and_removes_the_test_file() {
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
    let started = Instant::now();
    // Wait for the test file, then let the first test measure a little.
    while !list_dir(dir.path())
        .iter()
        .any(|n| n.starts_with(".iopath-test"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no test file appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(2500));
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
