//! Rates that change over time, against nbdkit's rate filter on a Unix socket
//! (docs/steady-state.md, "The lab"):
//!
//! - a burst bucket: one nbdkit whose rate filter allows 24 MB/s with a bucket of 15 s
//!   (`burstiness=15`: 360 MB, full at the start), behind another that caps the client at
//!   80 MB/s; 1 MiB reads run at 80 MB/s until the bucket is spent (360 MB / 56 MB/s =
//!   6.4 s), then at 24 MB/s;
//! - an IOPS bucket: the same two servers at 3000 and 1000 reads of 4 KiB a second with a
//!   bucket of 12 s (nbdkit's rate filter charges a request its bytes: 4 KiB reads through a
//!   byte bucket meet a bucket of I/Os), 4 KiB random reads, fitted in I/Os;
//! - a write cliff: nbdkit's file plugin over a sparse file on tmpfs, its rate filter at
//!   60 MB/s until the file holds 300 MB (the test watches its allocated blocks and then
//!   rewrites the filter's rate file to 20 MB/s).
//!
//! The figures iopath fits must be within 10 % of those the lab set.

use super::{MeasureLock, has_command, is_root, measured_iopath, support};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::priority::MEASURE_NICE;

/// nbdkit servers of one test, stopped when dropped.
pub(super) struct Servers(pub(super) Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts `nbdkit --foreground -U SOCKET ARGS…` at the measuring priority and waits for its
/// socket.
pub(super) fn nbdkit(socket: &Path, args: &[String]) -> Child {
    let mut command = if is_root() {
        let mut nice = Command::new("nice");
        nice.args(["-n", MEASURE_NICE, "nbdkit"]);
        nice
    } else {
        Command::new("nbdkit")
    };
    let child = command
        .args(["--foreground", "-U"])
        .arg(socket)
        .args(args)
        .stdin(Stdio::null())
        .spawn()
        .expect("nbdkit starts");
    support::process::wait_until_made(socket);
    child
}

/// Whether nbdkit and /dev/shm are here (else the test is skipped, or fails under CI).
pub(super) fn nbdkit_available() -> bool {
    support::require(
        has_command("nbdkit") && Path::new("/dev/shm").is_dir(),
        "needs nbdkit (package nbdkit) and /dev/shm",
    )
}

/// `iopath run ARGS… --no-confirm --json -`: the first test of the result.
fn first_test(args: &[&std::ffi::OsStr]) -> Value {
    let output = measured_iopath()
        .arg("run")
        .args(args)
        .args(["--no-confirm", "--json", "-"])
        .output()
        .expect("iopath runs");
    assert!(
        output.status.success(),
        "iopath run {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    json["tests"][0].clone()
}

/// `iopath run nbd+unix:///?socket=SOCKET WORKLOAD --ramp 0`: the test's analysis and its
/// main direction's per-second bytes.
pub(super) fn run(socket: &Path, workload: &[&str]) -> (Value, Vec<f64>) {
    let url = format!("nbd+unix:///?socket={}", socket.display());
    let mut args: Vec<&std::ffi::OsStr> = vec![url.as_ref()];
    args.extend(workload.iter().map(std::ffi::OsStr::new));
    args.extend(["--ramp", "0"].map(std::ffi::OsStr::new));
    let test = first_test(&args);
    let direction = if test["read"]["io_count"].as_u64() > Some(0) {
        "read"
    } else {
        "write"
    };
    let seconds = test[direction]["series"]
        .as_array()
        .expect("a series")
        .iter()
        .map(|point| point["bytes"].as_f64().unwrap_or(0.0) / 1e6)
        .collect();
    (test["analysis"].clone(), seconds)
}

/// Up to three tries of `attempt`, each with servers of its own (a fresh bucket), until one
/// is `recognised`: on a host other work keeps busy, a server starved for a second breaks a
/// plateau, and the step is then rightly not recognised. The last try when none is.
pub(super) fn up_to_three_tries<T>(attempt: impl Fn() -> T, recognised: impl Fn(&T) -> bool) -> T {
    let mut last = attempt();
    for _ in 1..3 {
        if recognised(&last) {
            break;
        }
        eprintln!("note: the step was not recognised; trying again with fresh servers");
        last = attempt();
    }
    last
}

pub(super) fn figure(value: &Value, name: &str) -> f64 {
    value[name]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} in {value}"))
}

#[track_caller]
pub(super) fn within_ten_percent(what: &str, fitted: f64, set: f64, seconds: &[f64]) {
    within_percent(what, fitted, set, 10.0, seconds);
}

#[track_caller]
pub(super) fn within_percent(what: &str, fitted: f64, set: f64, percent: f64, seconds: &[f64]) {
    assert!(
        (fitted - set).abs() <= set * percent / 100.0,
        "{what}: fitted {fitted:.3e}, the lab set {set:.3e} (± {percent} %); MB per second: \
         {seconds:.1?}"
    );
}

/// Rates of the rate filter, bits per second.
const BURST_BITS: u64 = 640_000_000;
const BASELINE_BITS: u64 = 192_000_000;
/// The back server's bucket, seconds of its rate.
const BUCKET_SECONDS: f64 = 15.0;

/// The bucket's two servers in `directory`: the socket of the front one, and both servers.
fn bucket_servers(directory: &Path) -> (PathBuf, Servers) {
    bucket_servers_of(directory, BURST_BITS, BASELINE_BITS, BUCKET_SECONDS)
}

/// Two servers in `directory`: the back one's rate filter allows `baseline_bits` per second
/// with a bucket of `bucket_seconds` of it, the front one caps the client at `burst_bits`.
fn bucket_servers_of(
    directory: &Path,
    burst_bits: u64,
    baseline_bits: u64,
    bucket_seconds: f64,
) -> (PathBuf, Servers) {
    let (back, front) = (directory.join("back.sock"), directory.join("front.sock"));
    let mut servers = Servers(Vec::new());
    servers.0.push(nbdkit(
        &back,
        &[
            "--filter=rate".into(),
            "memory".into(),
            "1G".into(),
            format!("rate={baseline_bits}"),
            format!("burstiness={bucket_seconds}"),
        ],
    ));
    servers.0.push(nbdkit(
        &front,
        &[
            "--filter=rate".into(),
            "nbd".into(),
            format!("socket={}", back.display()),
            format!("rate={burst_bits}"),
            "burstiness=0.1".into(),
        ],
    ));
    (front, servers)
}

/// Up to three 14-s runs of `workload` against fresh servers of [`bucket_servers_of`] until
/// the verdict is burst-bucket, which it must be: the analysis and the per-second MB.
fn bucket_verdict(
    (burst_bits, baseline_bits, bucket_seconds): (u64, u64, f64),
    workload: &[&str],
) -> (Value, Vec<f64>) {
    let (analysis, seconds) = up_to_three_tries(
        || {
            let directory = tempfile::tempdir().expect("a directory");
            let (front, _servers) =
                bucket_servers_of(directory.path(), burst_bits, baseline_bits, bucket_seconds);
            let mut args = workload.to_vec();
            args.extend(["--duration", "14s"]);
            run(&front, &args)
        },
        |(analysis, _)| analysis["verdict"] == "burst_bucket",
    );
    assert_eq!(
        analysis["verdict"], "burst_bucket",
        "{analysis}; MB per second: {seconds:.1?}"
    );
    (analysis, seconds)
}

/// The message of the burst bucket's trust note in `analysis`.
pub(super) fn bucket_note(analysis: &Value) -> &str {
    let notes = analysis["trust_notes"].as_array().expect("notes");
    notes
        .iter()
        .find(|note| note["kind"] == "burst_bucket")
        .unwrap_or_else(|| panic!("a burst bucket note: {notes:?}"))["message"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn a_burst_bucket_is_fitted_to_the_bucket_the_lab_set() {
    if !nbdkit_available() {
        return;
    }
    let _lock = MeasureLock::take();
    let (analysis, seconds) = bucket_verdict(
        (BURST_BITS, BASELINE_BITS, BUCKET_SECONDS),
        &["--rw", "read", "--bs", "1m", "--qd", "4"],
    );
    let bucket = &analysis["rate_step"]["burst_bucket"];
    let (burst, baseline) = (BURST_BITS as f64 / 8.0, BASELINE_BITS as f64 / 8.0);
    let size = baseline * BUCKET_SECONDS;
    within_ten_percent(
        "burst",
        figure(bucket, "burst_bytes_per_second"),
        burst,
        &seconds,
    );
    within_ten_percent(
        "baseline",
        figure(bucket, "baseline_bytes_per_second"),
        baseline,
        &seconds,
    );
    within_ten_percent("bucket", figure(bucket, "bucket_bytes"), size, &seconds);
    within_ten_percent(
        "burst time",
        figure(bucket, "burst_seconds"),
        size / (burst - baseline),
        &seconds,
    );
    let evidence = analysis["evidence"].as_str().unwrap_or_default();
    assert!(
        evidence.starts_with("rate-limited by a burst bucket: "),
        "{evidence}"
    );
}

/// An IOPS bucket: nbdkit's rate filter charges each request its bytes, so 4 KiB reads
/// through a byte bucket meet a bucket of I/Os, its rate and size divided by 4096. 3000 reads
/// a second until a bucket of 12 s of 1000 a second is spent (12,000 reads, 6 s), then 1000.
const IOPS_BURST: u64 = 3000;
const IOPS_BASELINE: u64 = 1000;
const IOPS_BUCKET_SECONDS: f64 = 12.0;

/// Bits per second of `iops` reads of 4 KiB.
fn bits_of_4k(iops: u64) -> u64 {
    iops * 4096 * 8
}

#[test]
fn an_iops_bucket_of_small_reads_is_fitted_in_ios() {
    if !nbdkit_available() {
        return;
    }
    let _lock = MeasureLock::take();
    let (analysis, seconds) = bucket_verdict(
        (
            bits_of_4k(IOPS_BURST),
            bits_of_4k(IOPS_BASELINE),
            IOPS_BUCKET_SECONDS,
        ),
        &["--rw", "randread", "--bs", "4k", "--qd", "8"],
    );
    let bucket = &analysis["rate_step"]["burst_bucket"];
    assert_eq!(bucket["counted_in_ios"], true, "{bucket}");
    let (burst, baseline) = (IOPS_BURST as f64, IOPS_BASELINE as f64);
    let size = baseline * IOPS_BUCKET_SECONDS;
    within_ten_percent("burst", figure(bucket, "burst_iops"), burst, &seconds);
    within_ten_percent(
        "baseline",
        figure(bucket, "baseline_iops"),
        baseline,
        &seconds,
    );
    within_ten_percent("bucket", figure(bucket, "bucket_ios"), size, &seconds);
    let evidence = analysis["evidence"].as_str().unwrap_or_default();
    assert!(
        evidence.starts_with("rate-limited by a burst bucket: ")
            && evidence.contains(" IOPS for ")
            && evidence.contains(" I/Os ("),
        "{evidence}"
    );
}

/// fio's steadystate options on the same bucket: `ss=bw:10%` over an 8 s window (longer than
/// the burst) holds only at the baseline, and the note says that the steady state found is
/// the baseline after the burst.
#[test]
fn fio_steady_state_after_a_burst_is_called_the_baseline() {
    if !nbdkit_available() {
        return;
    }
    let _lock = MeasureLock::take();
    let test = &up_to_three_tries(
        || {
            let directory = tempfile::tempdir().expect("a directory");
            let (front, _servers) = bucket_servers(directory.path());
            let job = directory.path().join("steady.fio");
            std::fs::write(
                &job,
                format!(
                    "[ss-read]\nioengine=nbd\nuri=nbd+unix:///?socket={}\nrw=read\nbs=1m\n\
                     iodepth=4\ntime_based\nruntime=30s\nss=bw:10%\nss_dur=8s\nss_ramp=1s\n",
                    front.display()
                ),
            )
            .expect("the job file");
            first_test(&["--job".as_ref(), job.as_os_str()])
        },
        |test| test["analysis"]["rate_step"]["burst_bucket"].is_object(),
    );
    let steady_ns = test["steady_state"]["attained_after_ns"]
        .as_f64()
        .unwrap_or_else(|| panic!("steady state reached: {}", test["steady_state"]));
    let bucket = &test["analysis"]["rate_step"]["burst_bucket"];
    let burst_seconds = figure(bucket, "burst_seconds");
    assert!(
        steady_ns / 1e9 > burst_seconds,
        "steady after {steady_ns} ns, burst of {burst_seconds} s"
    );
    let message = bucket_note(&test["analysis"]);
    assert!(
        message.contains("(--steady, fio's ss) is the level after the burst bucket"),
        "{message}"
    );
}

/// Rates of the cliff, bits per second, and the bytes before it.
const CACHE_BITS: u64 = 480_000_000;
const BEHIND_CACHE_BITS: u64 = 160_000_000;
const CACHE_BYTES: u64 = 300_000_000;

/// Rewrites the rate file to `bits` per second once `file` holds `bytes` (its allocated
/// blocks), within `limit`.
fn switch_after(file: PathBuf, bytes: u64, rate_file: PathBuf, bits: u64, limit: Duration) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        let allocated = std::fs::metadata(&file)
            .map_or(0, |m| std::os::unix::fs::MetadataExt::blocks(&m) * 512);
        if allocated >= bytes {
            let next = rate_file.with_extension("next");
            std::fs::write(&next, bits.to_string()).expect("the next rate");
            std::fs::rename(&next, &rate_file).expect("the rate file replaced");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One run of the cliff with servers and an image of its own: the test's analysis and its
/// per-second MB.
fn cliff_try() -> (Value, Vec<f64>) {
    let directory = tempfile::tempdir().expect("a directory");
    let backing = tempfile::Builder::new()
        .prefix("iopath-cliff")
        .tempdir_in("/dev/shm")
        .expect("a tmpfs directory");
    let image = backing.path().join("disk.img");
    std::fs::File::create(&image)
        .and_then(|file| file.set_len(1 << 30))
        .expect("a sparse image");
    let (socket, rate_file) = (
        directory.path().join("cliff.sock"),
        directory.path().join("rate"),
    );
    std::fs::write(&rate_file, CACHE_BITS.to_string()).expect("the rate file");
    let _servers = Servers(vec![nbdkit(
        &socket,
        &[
            "--filter=rate".into(),
            "file".into(),
            image.display().to_string(),
            format!("rate={CACHE_BITS}"),
            format!("rate-file={}", rate_file.display()),
            "burstiness=0.25".into(),
        ],
    )]);
    let watcher = {
        let (image, rate_file) = (image.clone(), rate_file.clone());
        std::thread::spawn(move || {
            switch_after(
                image,
                CACHE_BYTES,
                rate_file,
                BEHIND_CACHE_BITS,
                Duration::from_secs(30),
            )
        })
    };
    let (analysis, seconds) = run(
        &socket,
        &[
            "--rw",
            "write",
            "--bs",
            "1m",
            "--qd",
            "4",
            "--duration",
            "12s",
            "--allow-destructive",
        ],
    );
    watcher.join().expect("the watcher");
    (analysis, seconds)
}

#[test]
fn a_write_cliff_is_found_at_the_bytes_the_lab_set() {
    if !nbdkit_available() {
        return;
    }
    let _lock = MeasureLock::take();
    let (analysis, seconds) = up_to_three_tries(cliff_try, |(analysis, _)| {
        analysis["verdict"] == "write_cliff"
    });
    assert_eq!(
        analysis["verdict"], "write_cliff",
        "{analysis}; MB per second: {seconds:.1?}"
    );
    let cliff = &analysis["rate_step"]["write_cliff"];
    within_ten_percent(
        "bytes before",
        figure(cliff, "bytes_before"),
        CACHE_BYTES as f64,
        &seconds,
    );
    within_ten_percent(
        "before",
        figure(cliff, "before_bytes_per_second"),
        CACHE_BITS as f64 / 8.0,
        &seconds,
    );
    within_ten_percent(
        "after",
        figure(cliff, "after_bytes_per_second"),
        BEHIND_CACHE_BITS as f64 / 8.0,
        &seconds,
    );
}
