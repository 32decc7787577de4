//! `iopath pts` on a loop device: refused without `--allow-destructive` and on a device with a
//! filesystem unless forced; the whole suite (purge by discard, preconditioning, rounds) in a
//! test-sized budget, interrupted during the throughput test and resumed from its state file.

use super::{iopath, is_root};
use crate::support::devices::LoopDevice;
use crate::support::process::{interrupt, run_watching_stderr};
use crate::support::pts::{SUITE_IN_SECONDS, state};
use serde_json::Value;
use std::process::Command;

fn rounds(result: &Value, test: usize) -> Vec<u64> {
    result["tests"][test]["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|round| round["number"].as_u64().unwrap())
        .collect()
}

#[test]
fn pts_runs_on_a_loop_device_and_resumes_after_an_interrupt() {
    if !crate::support::require(is_root(), "loop devices need root")
        || crate::support::devices::required_tool("mkfs.ext4", "e2fsprogs").is_none()
    {
        return;
    }
    let Some(device) = LoopDevice::attach_zeroed(48) else {
        return;
    };
    let path = device.path().to_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    // The whole device written, its signature overwritten.
    let forced = [
        "pts",
        path.as_str(),
        "--allow-destructive",
        "--force-overwrite-signature",
    ];
    let refused = iopath()
        .current_dir(dir.path())
        .args(["pts", &path])
        .args(SUITE_IN_SECONDS)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--allow-destructive"));
    assert!(!dir.path().join("out/pts.json").exists());

    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F", &path])
        .status()
        .unwrap();
    assert!(made.success());
    let refused = iopath()
        .current_dir(dir.path())
        .args(["pts", &path, "--allow-destructive"])
        .args(SUITE_IN_SECONDS)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--force-overwrite-signature"), "{stderr}");
    assert!(!dir.path().join("out/pts.json").exists());

    // The whole suite, stopped by SIGINT once the throughput test's second round starts.
    let (status, stderr) = run_watching_stderr(
        iopath()
            .current_dir(dir.path())
            .args(forced)
            .args(SUITE_IN_SECONDS),
        |line, child| {
            if line == "pts: Throughput: round 2" {
                interrupt(child);
            }
        },
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    let out = dir.path().join("out");
    let stopped = state(&out);
    assert_eq!(stopped["complete"], false);
    assert_ne!(stopped["tests"][0]["outcome"], "not_finished");
    assert_eq!(stopped["tests"][0]["purged"], true, "{stderr}");
    assert_eq!(stopped["tests"][1]["outcome"], "not_finished");
    let iops_rounds = rounds(&stopped, 0);
    let throughput_rounds = rounds(&stopped, 1);
    assert_eq!(throughput_rounds, [1], "{stderr}");
    assert!(
        stopped["conditions"]["purge_method"]
            .as_str()
            .unwrap()
            .contains("BLKDISCARD")
    );

    let resumed = iopath()
        .current_dir(dir.path())
        .args(forced)
        .args(["--resume", "out"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert_eq!(resumed.status.code(), Some(0), "{stderr}");
    // The throughput test goes on from its second round: no new purge or preconditioning.
    assert!(!stderr.contains("Throughput: purge"), "{stderr}");
    assert!(stderr.contains("pts: Throughput: round 2"), "{stderr}");
    let finished = state(&out);
    assert_eq!(finished["complete"], true);
    assert_eq!(rounds(&finished, 0), iops_rounds);
    let throughput = rounds(&finished, 1);
    assert_eq!(throughput[0], 1);
    assert!(throughput.windows(2).all(|pair| pair[1] == pair[0] + 1));
    for test in finished["tests"].as_array().unwrap() {
        assert_ne!(test["outcome"], "not_finished", "{}", test["kind"]);
        assert_eq!(test["purged"], true, "{}", test["kind"]);
    }
    assert!(
        finished["conditions"]["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("resumed")
    );
    assert!(out.join("pts.html").exists() && out.join("pts-latency.csv").exists());
}
