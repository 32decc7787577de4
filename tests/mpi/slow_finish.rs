//! A rank that is slow to hand in its result after its test is not a lost rank: after its
//! test a rank sends no heartbeat while it merges, analyses and serialises what it measured,
//! which on a host crowded with ranks takes seconds (64 debug-build ranks on 2 cores: 5–7 s).
//! Here one of 4 ranks is held still (SIGSTOP) for 4.5 s from a second before its test's end,
//! longer than the 3 s of silence that make a rank lost while a test runs.

use super::{IOPATH, has_worker_thread, have_tools, mpirun, rank_process, read_result};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The test's length, s.
const SECONDS: u64 = 4;

#[test]
fn a_rank_slow_to_send_its_result_after_its_test_is_waited_for_not_lost() {
    if !have_tools() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let json = directory.path().join("run.json");
    let mark = format!("{}-{:?}-slow-finish", std::process::id(), Instant::now());
    let mut child = mpirun(4)
        .env("IOPATH_TEST_MARK", &mark)
        .arg(IOPATH)
        .args(["run", "--engine", "null", "--rw", "randread", "--bs", "4k"])
        .args(["--duration", &SECONDS.to_string(), "--ramp", "0", "--json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The test starts on every rank at one instant: from when rank 2's workers run.
    let deadline = Instant::now() + Duration::from_secs(60);
    let victim = loop {
        if let Some(pid) = rank_process(&mark, 2).filter(|&pid| has_worker_thread(pid)) {
            break pid;
        }
        assert!(
            Instant::now() < deadline,
            "rank 2 did not start its workers"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_secs(SECONDS - 1));
    let signal = |name: &str| {
        std::process::Command::new("kill")
            .args([name, &victim.to_string()])
            .status()
            .unwrap()
    };
    assert!(signal("-STOP").success());
    std::thread::sleep(Duration::from_millis(4_500));
    signal("-CONT");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mpirun still runs a minute after rank 2 went on");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let result = read_result(&json);
    let cluster = result.cluster.as_ref().expect("a cluster section");
    assert!(cluster.lost_ranks.is_empty(), "{status}\n{stderr}");
    assert!(cluster.ranks[2].lost.is_none(), "{stderr}");
    // Rank 2's figures are in the merged ones, with every other rank's.
    let own: u64 = cluster
        .ranks
        .iter()
        .map(|rank| rank.tests[0].total.io_count)
        .sum();
    assert!(cluster.ranks[2].tests[0].total.io_count > 0);
    assert_eq!(result.tests[0].total.io_count, own);
}
