//! A worker thread the system refuses to create: the run fails with a message naming the
//! threads asked for and the limit, stops and joins the workers already created, and ends —
//! no panic, no hang.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The unprivileged user the run switches to (RLIMIT_NPROC is not enforced for root).
const NOBODY: libc::uid_t = 65534;
/// Tasks (processes and threads) the user may have.
const TASK_LIMIT: libc::rlim_t = 32;
/// Longest a refused run may take.
const BOUND: Duration = Duration::from_secs(30);

#[test]
fn a_thread_limit_fails_the_run_cleanly() {
    if !is_root() {
        eprintln!("skipped: needs root to run iopath as another user");
        return;
    }
    // World-writable, so that the unprivileged run can create its test file there.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut command = iopath();
    command
        .current_dir(dir.path())
        .args([
            "run",
            "--size",
            "16m",
            "--rw",
            "randread",
            "--workers",
            "64",
        ])
        .args(["--ramp", "0", "--duration", "2", "--json", "out.json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: between fork and exec only async-signal-safe calls (setrlimit, setgroups,
    // setgid, setuid) on plain values, reporting failure through the returned error.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: TASK_LIMIT,
                rlim_max: TASK_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &limit) != 0
                || libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(NOBODY) != 0
                || libc::setuid(NOBODY) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let mut child = command
        .spawn()
        .expect("iopath starts as uid 65534 (fewer than 32 tasks of that user must run here)");
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run hung for {BOUND:?} after a thread could not be created");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The thread budget refuses the plan before any I/O (exit 2); should the limit be met only
    // while threads are being created (another process of the same user starting threads
    // meanwhile), the run fails cleanly instead (exit 1). Either way the figures are named.
    match status.code() {
        Some(2) => assert!(
            stderr.contains("needs 64 worker threads") && stderr.contains("RLIMIT_NPROC"),
            "{stderr}"
        ),
        Some(1) => {
            assert!(stderr.contains("of the 64 this test asks for"), "{stderr}");
            assert!(
                stderr.contains(&format!("at most {TASK_LIMIT} processes and threads")),
                "{stderr}"
            );
        }
        other => panic!("exit status {other:?}: {stderr}"),
    }
    // The process ended by itself, so every thread it created was joined or gone; its test
    // file was removed and no result was written (no test ran).
    assert_eq!(list_dir(dir.path()), Vec::<String>::new(), "{stderr}");
}
