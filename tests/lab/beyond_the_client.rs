//! Paths limited by something beyond the client, where more outstanding I/O would not help:
//! a server paced below its link, a server's token bucket that runs dry, and buffered reads
//! paced by read-ahead from a device whose requests take 5 ms. None may be called
//! queue-depth-bound without evidence; each is said as what is known (latency-bound, where
//! the time goes), and the deeper queue that a latency-bound verdict gets unasked decides.
//! docs/verdict.md, "Lab scenarios", lists these with the others.

use super::{Lab, MeasureLock, measured_iopath, nbd_run_timed, support, verdict};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use support::busy_host::{busy_with_others, names_the_busy_host};

/// What a try saw, for the message when no try was right.
fn seen_line(json: &Value) -> String {
    let (verdict, analysis) = verdict(json);
    format!(
        "{verdict}: {} / {} / {}",
        analysis["evidence"], analysis["confirmation"]["summary"], analysis["trust_notes"]
    )
}

/// The evidence of the first test, or "".
fn evidence(analysis: &Value) -> &str {
    analysis["evidence"].as_str().unwrap_or("")
}

/// NBD over 1 Gbit from a server that serves 160 × 2^20 bit/s (21 MB/s: the array disk
/// throttled to 20 MB/s), 1 MiB reads at QD 8 with the link declared: the link is far from
/// full, the queue is full, and nothing shows the server would serve more at once. The verdict
/// is latency-bound beyond the last visible hop with its figures, and the deeper queue it runs
/// unasked gains nothing: confirmed, still "latency" in the table. With --no-confirm nothing
/// more runs.
#[test]
fn a_server_paced_below_its_link_is_latency_bound_and_a_deeper_queue_confirms_it() {
    let Some(lab) = Lab::up_with(
        &["1g"],
        &["--no-iscsi", "--no-nfs", "--no-smb", "--nbd-rate", "160M"],
    ) else {
        return;
    };
    let url = lab.link("1g").nbd.clone();
    let workload = ["--rw", "read", "--bs", "1m", "--qd", "8", "--link", "1gbe"];
    let mut seen = Vec::new();
    let mut found = false;
    let mut busy = 0;
    for _ in 0..3 {
        // A ramp of 1 s empties the rate filter's bucket (2 s of its rate) before measuring.
        let json = nbd_run_timed(&[&url], &workload, "3s", "1s");
        seen.push(seen_line(&json));
        let (verdict, analysis) = verdict(&json);
        assert_ne!(verdict, "queue_depth_bound", "{seen:?}");
        let link = analysis["hops"]
            .as_array()
            .and_then(|hops| hops.iter().find(|hop| hop["declared"] == true))
            .and_then(|hop| hop["utilisation_percent"].as_f64())
            .unwrap_or(100.0);
        let confirmation = &analysis["confirmation"];
        if busy_with_others(&json) {
            // Other processes kept the cores full: the host's CPU, not the server, is what
            // this try could measure, and the verdict must say so.
            assert!(names_the_busy_host(&json), "{seen:#?}");
            busy += 1;
            continue;
        }
        if verdict == "latency_bound"
            && evidence(analysis).starts_with("beyond the last visible hop: 8 I/Os in flight, ")
            && evidence(analysis).contains("1GbE at ")
            && link < 50.0
            && confirmation["experiment"] == "queue_depth"
            && confirmation["setting_after"] == 16
            && confirmation["outcome"] == "confirmed"
            && confirmation["derived_verdict"] == "latency_bound"
        {
            found = true;
            break;
        }
    }
    assert!(
        found || busy == 3,
        "expected latency-bound, confirmed by QD 16 (or the busy host's verdict on a host busy \
         with others): {seen:#?}"
    );
    if !found {
        eprintln!("note: every try ran on a host busy with other processes: {seen:#?}");
    }
    let mut quiet = workload.to_vec();
    quiet.push("--no-confirm");
    let json = nbd_run_timed(&[&url], &quiet, "2s", "1s");
    let (_, analysis) = verdict(&json);
    assert!(analysis.get("confirmation").is_none(), "{analysis}");
}

/// Per-second rates of the first test's main direction.
fn per_second_rates(json: &Value) -> Vec<f64> {
    json["tests"][0]["read"]["series"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|point| {
            let duration = point["duration_ns"].as_f64().filter(|d| *d > 0.0)?;
            Some(point["bytes"].as_f64()? / duration * 1e9)
        })
        .collect()
}

/// A server's token bucket that runs dry (nbdkit's rate filter at 200 × 2^20 bit/s holds 2 s
/// of it, full when the server starts) behind 1 Gbit: the first second runs near the link,
/// the rest at the bucket's rate. The trust note says a step (when, from what to what), never
/// a line fitted through it, and no fall beyond 100 %; the verdict is not queue-depth-bound.
#[test]
fn a_token_bucket_that_runs_dry_is_a_step_in_the_trust_notes() {
    let Some(lab) = Lab::up_with(
        &["1g"],
        &["--no-iscsi", "--no-nfs", "--no-smb", "--nbd-rate", "200M"],
    ) else {
        return;
    };
    let url = lab.link("1g").nbd.clone();
    let workload = [
        "--rw",
        "read",
        "--bs",
        "1m",
        "--qd",
        "8",
        "--link",
        "1gbe",
        "--no-confirm",
    ];
    // One try: the bucket fills only while the server idles (2 s), so a second try right
    // after would start half-empty.
    let json = nbd_run_timed(&[&url], &workload, "5s", "0");
    let seen = seen_line(&json);
    let (verdict, analysis) = verdict(&json);
    assert_ne!(verdict, "queue_depth_bound", "{seen}");
    let rates = per_second_rates(&json);
    let (first, last) = (rates[0], rates[rates.len() - 1]);
    assert!(
        first > 1.5 * last,
        "the bucket did not run dry: {rates:?}; {seen}"
    );
    let notes: Vec<&str> = analysis["trust_notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|note| note["kind"] == "not_steady")
        .filter_map(|note| note["message"].as_str())
        .collect();
    assert_eq!(notes.len(), 1, "{seen}");
    let note = notes[0];
    assert!(
        note.starts_with("not steady: throughput stepped down after ") && !note.contains("fitted"),
        "{note}"
    );
    let change: f64 = note
        .split_once(" (")
        .and_then(|(_, rest)| rest.split_once(" %"))
        .and_then(|(number, _)| number.parse().ok())
        .unwrap_or_else(|| panic!("no change in {note}"));
    assert!((-100.0..-10.0).contains(&change), "{note}");
    // Nor does the interval promise that a longer run averages a step away.
    for note in analysis["trust_notes"].as_array().into_iter().flatten() {
        if note["kind"] == "too_short" {
            assert!(!note.to_string().contains("would give"), "{note}");
        }
    }
}

/// The cgroup v1 blkio hierarchy, where a process's reads of one device can be throttled.
const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// A blkio cgroup of this test, removed when dropped (after the process in it has ended).
struct ThrottleGroup {
    directory: std::path::PathBuf,
}

impl ThrottleGroup {
    /// A cgroup allowing `iops` reads per second of the device `major:minor`.
    fn new(device: &str, iops: u32) -> ThrottleGroup {
        let directory = Path::new(BLKIO).join(format!("iopath-lab-{}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("a blkio cgroup");
        std::fs::write(
            directory.join("blkio.throttle.read_iops_device"),
            format!("{device} {iops}"),
        )
        .expect("a read IOPS limit");
        ThrottleGroup { directory }
    }
}

impl Drop for ThrottleGroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.directory);
    }
}

/// Seed 004's `dd`: buffered 4 KiB sequential reads at QD 1 from a device whose requests take
/// 5 ms (a loop device with direct I/O, its reads throttled to 200 a second by a cgroup v1
/// blkio limit on the reading process) with a read-ahead window of 128 KiB: the window, not
/// iopath's queue, sets the rate. Without evidence it must not be queue-depth-bound: it is
/// latency-bound behind the page cache, and a table that says "queue" says it because the
/// deeper queue it ran unasked gained.
#[test]
fn buffered_reads_paced_by_read_ahead_are_latency_bound_not_queue_depth_bound() {
    if !support::require(
        support::devices::is_root()
            && Path::new(BLKIO)
                .join("blkio.throttle.read_iops_device")
                .is_file(),
        "needs root and a cgroup v1 blkio hierarchy at /sys/fs/cgroup/blkio",
    ) {
        return;
    }
    let _lock = MeasureLock::take();
    // 256 MiB: more than 3.5 s at the ~26 MB/s the window allows, so nothing is read twice.
    let Some(device) = support::devices::LoopDevice::attach_zeroed(256) else {
        return;
    };
    let path = device.path().to_string_lossy().into_owned();
    let status = Command::new("losetup")
        .args(["--direct-io=on", &path])
        .status()
        .expect("losetup runs");
    assert!(status.success(), "losetup --direct-io=on {path}");
    let queue = Path::new("/sys/block").join(device.name());
    std::fs::write(queue.join("queue/read_ahead_kb"), "128").expect("read_ahead_kb");
    let number = std::fs::read_to_string(queue.join("dev")).expect("the device number");
    let group = ThrottleGroup::new(number.trim(), 200);
    let procs = group.directory.join("cgroup.procs");
    let mut seen = Vec::new();
    let mut busy = 0;
    for _ in 0..3 {
        // Each try starts with nothing of the device in the page cache.
        let status = Command::new("blockdev")
            .args(["--flushbufs", &path])
            .status()
            .expect("blockdev runs");
        assert!(status.success(), "blockdev --flushbufs {path}");
        let output = measured_iopath()
            .args([
                "run",
                &path,
                "--rw",
                "read",
                "--bs",
                "4k",
                "--qd",
                "1",
                "--buffered",
            ])
            .args(["--duration", "3s", "--ramp", "500ms", "--json", "-"])
            .pre_exec_in_cgroup(&procs)
            .output()
            .expect("iopath runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let json: Value = serde_json::from_slice(&output.stdout).expect("a RunResult");
        seen.push(seen_line(&json));
        let (verdict, analysis) = verdict(&json);
        let confirmation = &analysis["confirmation"];
        assert_ne!(verdict, "queue_depth_bound", "{seen:#?}");
        // The window paces it: at most one 128 KiB read-ahead per allowed request, with room
        // for the window's growth at the start.
        let rate = json["tests"][0]["read"]["bytes_per_second"]
            .as_f64()
            .unwrap_or(0.0);
        assert!(
            rate < 2.0 * 128.0 * 1024.0 * 200.0,
            "{rate} B/s: not paced by the read-ahead window; {seen:#?}"
        );
        if confirmation["derived_verdict"] == "queue_depth_bound" {
            // The table may say queue only on the experiment's evidence.
            assert!(
                confirmation["change_percent"].as_f64().unwrap_or(0.0) >= 15.0,
                "{seen:#?}"
            );
        }
        if verdict == "latency_bound" && evidence(analysis).starts_with("behind the page cache") {
            return;
        }
        if busy_with_others(&json) {
            // Other processes kept the cores full: the verdict must name them.
            assert!(names_the_busy_host(&json), "{seen:#?}");
            busy += 1;
        }
    }
    if busy == 3 {
        eprintln!("note: every try ran on a host busy with other processes: {seen:#?}");
        return;
    }
    panic!("expected latency-bound behind the page cache: {seen:#?}");
}

/// Runs a command inside a cgroup: the child writes its own process id into `cgroup.procs`
/// before it executes the program.
trait InCgroup {
    fn pre_exec_in_cgroup(&mut self, procs: &Path) -> &mut Self;
}

impl InCgroup for Command {
    fn pre_exec_in_cgroup(&mut self, procs: &Path) -> &mut Self {
        use std::os::unix::process::CommandExt;
        let procs = std::ffi::CString::new(procs.as_os_str().as_encoded_bytes())
            .expect("a path without NUL");
        // SAFETY: the closure runs in the child between fork and exec and only calls
        // async-signal-safe functions (open, write, close) on memory prepared before the fork.
        unsafe {
            self.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // "0" moves the writing process itself.
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                libc::close(fd);
                if written != 1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        }
    }
}
