//! Buffered I/O's hidden queue (docs/verdict.md, "The hidden queue"): seed 004's `dd bs=4k`
//! after dropping the cache, on a device whose every request takes 5 ms — a loop device with
//! direct I/O, its reads throttled to 200 a second by a cgroup v1 blkio limit on the reading
//! process. At queue depth 1 the kernel's read-ahead window carries the stream, one window per
//! request: the rate follows `read_ahead_kb`, the verdict is read-ahead-bound with the window
//! named, and O_DIRECT at the same depth (the experiment `--confirm` runs) loses nearly all of
//! it. The same device read with O_DIRECT at QD 8 is not read-ahead-bound.

use super::blkio::{BLKIO, InCgroup, ThrottleGroup};
use super::{MeasureLock, measured_iopath, support, verdict};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Read requests the throttle lets through each second: 5 ms each.
const THROTTLE_IOPS: u32 = 200;

/// A zeroed loop device of 256 MiB with direct I/O (so that every read the page cache misses
/// reaches the throttle as a request of its own), throttled in a cgroup of its own.
struct SlowDevice {
    device: support::devices::LoopDevice,
    group: ThrottleGroup,
}

impl SlowDevice {
    /// `None` when loop devices are not available here (the helper says why).
    fn new() -> Option<SlowDevice> {
        // 256 MiB: more than 4 s at the ~52 MB/s a 256 KiB window allows, so nothing is read
        // twice.
        let device = support::devices::LoopDevice::attach_zeroed(256)?;
        let path = device.path().to_string_lossy().into_owned();
        let status = Command::new("losetup")
            .args(["--direct-io=on", &path])
            .status()
            .expect("losetup runs");
        assert!(status.success(), "losetup --direct-io=on {path}");
        let number = std::fs::read_to_string(Self::queue_dir(&device).join("dev"))
            .expect("the device number");
        let group = ThrottleGroup::new(number.trim(), THROTTLE_IOPS);
        Some(SlowDevice { device, group })
    }

    fn queue_dir(device: &support::devices::LoopDevice) -> PathBuf {
        Path::new("/sys/block").join(device.name())
    }

    fn path(&self) -> String {
        self.device.path().to_string_lossy().into_owned()
    }

    /// Sets the device's read-ahead window and empties its page cache.
    fn prepare(&self, read_ahead_kib: u32) {
        std::fs::write(
            Self::queue_dir(&self.device).join("queue/read_ahead_kb"),
            read_ahead_kib.to_string(),
        )
        .expect("read_ahead_kb");
        let status = Command::new("blockdev")
            .args(["--flushbufs", &self.path()])
            .status()
            .expect("blockdev runs");
        assert!(status.success(), "blockdev --flushbufs {}", self.path());
    }

    /// `iopath run DEVICE ARGS --json -` inside the throttled cgroup.
    fn run(&self, args: &[&str]) -> Value {
        let output = measured_iopath()
            .args(["run", &self.path()])
            .args(args)
            .args(["--json", "-"])
            .pre_exec_in_cgroup(&self.group.procs())
            .output()
            .expect("iopath runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("a RunResult")
    }
}

/// Whether the cgroup v1 blkio throttle this test needs is here (and root, to use it).
fn throttle_available() -> bool {
    support::require(
        support::devices::is_root()
            && Path::new(BLKIO)
                .join("blkio.throttle.read_iops_device")
                .is_file(),
        "needs root and a cgroup v1 blkio hierarchy at /sys/fs/cgroup/blkio",
    )
}

/// Seed 004's `dd bs=4k`: buffered 4 KiB sequential reads at QD 1.
const DD_READ: [&str; 11] = [
    "--rw",
    "read",
    "--bs",
    "4k",
    "--qd",
    "1",
    "--buffered",
    "--duration",
    "3s",
    "--ramp",
    "500ms",
];

/// The verdict, evidence and confirmation of a test, for messages.
fn seen(test: &Value) -> String {
    let analysis = &test["analysis"];
    format!(
        "{} at {:.1} MB/s: {} / {}",
        analysis["verdict"],
        test["read"]["bytes_per_second"].as_f64().unwrap_or(0.0) / 1e6,
        analysis["evidence"],
        analysis["confirmation"]["summary"]
    )
}

/// Whether `test` is read-ahead-bound with a window of `kib` KiB named, confirmed by
/// O_DIRECT at the same depth losing half or more.
fn read_ahead_bound_at(test: &Value, kib: u32) -> bool {
    let analysis = &test["analysis"];
    let confirmation = &analysis["confirmation"];
    analysis["verdict"] == "read_ahead_bound"
        && analysis["evidence"]
            .as_str()
            .is_some_and(|evidence| evidence.contains(&format!("(read_ahead_kb {kib})")))
        && confirmation["experiment"] == "direct"
        && confirmation["outcome"] == "confirmed"
        && confirmation["change_percent"].as_f64().unwrap_or(0.0) <= -50.0
}

/// The rate follows the window (128 KiB gives about twice 64 KiB's), each run is
/// read-ahead-bound with its window named and confirmed by O_DIRECT at QD 1, and the same
/// device read with O_DIRECT at QD 8 is not read-ahead-bound.
#[test]
fn buffered_reads_at_qd_1_follow_the_read_ahead_window_and_say_so() {
    if !throttle_available() {
        return;
    }
    let _lock = MeasureLock::take();
    let Some(device) = SlowDevice::new() else {
        return;
    };
    let mut confirm = DD_READ.to_vec();
    confirm.push("--confirm");
    let mut tries = Vec::new();
    for _ in 0..3 {
        let mut rates = Vec::new();
        let mut named = true;
        for kib in [64, 128] {
            device.prepare(kib);
            let json = device.run(&confirm);
            let test = &json["tests"][0];
            tries.push(seen(test));
            named &= read_ahead_bound_at(test, kib);
            rates.push(test["read"]["bytes_per_second"].as_f64().unwrap_or(0.0));
        }
        let ratio = rates[1] / rates[0].max(1.0);
        if named && (1.6..2.4).contains(&ratio) {
            let direct = device.run(&[
                "--rw",
                "read",
                "--bs",
                "4k",
                "--qd",
                "8",
                "--duration",
                "2s",
                "--ramp",
                "500ms",
                "--no-confirm",
            ]);
            let (verdict, analysis) = verdict(&direct);
            assert_ne!(verdict, "read_ahead_bound", "{analysis}");
            assert_eq!(direct["tests"][0]["jobs"][0]["direct"], true);
            return;
        }
    }
    panic!("expected read-ahead-bound, 128 KiB at about twice 64 KiB's rate: {tries:#?}");
}

/// The seed 004 preset (`--preset dd`: a buffered write, then a read after the cache is
/// dropped) on the same device says why its read runs at the window's rate.
#[test]
fn the_dd_preset_after_a_cache_drop_names_the_read_ahead_window() {
    if !throttle_available() {
        return;
    }
    let _lock = MeasureLock::take();
    let Some(device) = SlowDevice::new() else {
        return;
    };
    let mut tries = Vec::new();
    for _ in 0..3 {
        device.prepare(128);
        let json = device.run(&[
            "--preset",
            "dd",
            "--allow-destructive",
            "--duration",
            "2s",
            "--ramp",
            "500ms",
            "--confirm",
        ]);
        let read = json["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|test| test["name"] == "dd read (cache dropped)")
            .expect("the dd read");
        tries.push(seen(read));
        if read_ahead_bound_at(read, 128) {
            return;
        }
    }
    panic!("expected the dd read to be read-ahead-bound at 128 KiB: {tries:#?}");
}
