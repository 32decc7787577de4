//! A bucket counted per request, as a cloud disk counts its burst credits (gp2/gp3-style):
//! an nbdkit plugin of our own (iops_bucket.c, compiled at start-up by nbdkit's cc plugin)
//! serves a memory disk whose every read and write takes one token, whatever its size — a
//! bucket of 6000 I/Os, full at the start, refilled at 500 a second, spent at up to 1500 a
//! second. Reads run at 1500 a second until the bucket is spent (6000 / (1500 − 500) = 6 s),
//! then at 500. The rates are low enough that a client short of CPU on a busy host (a debug
//! build, other builds on both cores) still keeps up with the burst.
//!
//! With a mix of 4 KiB and 64 KiB reads (half each: a mean of 34 KiB, above the size at which
//! one block size is taken to be counted in I/Os) the bytes of each second follow the mix while
//! the I/Os do not: the bucket must be fitted in I/Os. With 4 KiB reads alone the same server
//! shows the same bucket.
//!
//! The plugin schedules each request's start exactly (a late thread does not move the
//! schedule), so the rates are the ones set; what the fit can miss is the share of the second
//! in which the bucket ran dry and a second the client could not keep its queue full in.
//! The burst, the baseline and the bucket must be within 10 % of what the plugin was set to:
//! the criterion of the other buckets of the lab ([`super::burst`]). Measured on the 2-core
//! machine under a load of 12: 1486 IOPS for 6.1 s, then 500, a bucket of 5999 I/Os (mixed);
//! 1484 IOPS, 500, 5995 I/Os (4 KiB) — each within 1 %.

use super::burst::{
    Servers, figure, nbdkit, nbdkit_available, run, up_to_three_tries, within_ten_percent,
};
use super::{MeasureLock, has_command, support};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// I/Os a second while the bucket holds tokens, and once it is empty.
const PEAK_IOPS: f64 = 1500.0;
const BASELINE_IOPS: f64 = 500.0;
/// The bucket, I/Os.
const BUCKET_IOS: f64 = 6000.0;

/// The plugin's source: a memory disk that takes one token per request.
fn plugin_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/iops_bucket.c")
}

fn available() -> bool {
    nbdkit_available()
        && support::require(
            has_command("cc") && Path::new("/usr/include/nbdkit-plugin.h").is_file(),
            "needs a C compiler and nbdkit-plugin.h (packages gcc, nbdkit-plugin-dev)",
        )
}

/// The plugin on a Unix socket in `directory`, with a full bucket.
fn bucket_server(directory: &Path) -> (PathBuf, Servers) {
    let socket = directory.join("bucket.sock");
    let server = nbdkit(
        &socket,
        &[
            "cc".into(),
            plugin_source().display().to_string(),
            "size=1G".into(),
            format!("burst={BUCKET_IOS}"),
            format!("baseline={BASELINE_IOPS}"),
            format!("peak={PEAK_IOPS}"),
        ],
    );
    (socket, Servers(vec![server]))
}

/// Up to three 14-s runs of `workload` against fresh servers until the verdict is
/// burst-bucket, which it must be: the fitted bucket and the per-second MB.
fn fitted(workload: &[&str]) -> (Value, Vec<f64>) {
    let (analysis, seconds) = up_to_three_tries(
        || {
            let directory = tempfile::tempdir().expect("a directory");
            let (socket, _server) = bucket_server(directory.path());
            let mut args = workload.to_vec();
            args.extend(["--duration", "14s"]);
            run(&socket, &args)
        },
        |(analysis, _)| analysis["verdict"] == "burst_bucket",
    );
    assert_eq!(
        analysis["verdict"], "burst_bucket",
        "{analysis}; MB per second: {seconds:.1?}"
    );
    let evidence = analysis["evidence"].as_str().unwrap_or_default();
    assert!(
        evidence.contains(" IOPS for ") && evidence.contains(" I/Os ("),
        "counted in I/Os: {evidence}"
    );
    (analysis["rate_step"]["burst_bucket"].clone(), seconds)
}

/// The burst, the baseline and the bucket of `bucket`, in I/Os, against the plugin's.
#[track_caller]
fn counted_in_ios(bucket: &Value, seconds: &[f64]) {
    assert_eq!(bucket["counted_in_ios"], true, "{bucket}");
    within_ten_percent("burst", figure(bucket, "burst_iops"), PEAK_IOPS, seconds);
    within_ten_percent(
        "baseline",
        figure(bucket, "baseline_iops"),
        BASELINE_IOPS,
        seconds,
    );
    within_ten_percent("bucket", figure(bucket, "bucket_ios"), BUCKET_IOS, seconds);
    within_ten_percent(
        "burst time",
        figure(bucket, "burst_seconds"),
        BUCKET_IOS / (PEAK_IOPS - BASELINE_IOPS),
        seconds,
    );
}

#[test]
fn a_bucket_of_requests_is_fitted_in_ios_for_a_mix_of_sizes() {
    if !available() {
        return;
    }
    let _lock = MeasureLock::take();
    let (bucket, seconds) = fitted(&["--rw", "randread", "--bs", "4k/50,64k/50", "--qd", "8"]);
    counted_in_ios(&bucket, &seconds);
    // Bytes of a mean of 34 KiB per I/O: far more than 4 KiB reads would move.
    let bytes_per_io = figure(&bucket, "burst_bytes_per_second") / figure(&bucket, "burst_iops");
    assert!(
        (20_000.0..50_000.0).contains(&bytes_per_io),
        "{bytes_per_io} bytes per I/O: {bucket}"
    );
}

#[test]
fn a_bucket_of_requests_is_fitted_in_ios_for_one_size() {
    if !available() {
        return;
    }
    let _lock = MeasureLock::take();
    let (bucket, seconds) = fitted(&["--rw", "randread", "--bs", "4k", "--qd", "8"]);
    counted_in_ios(&bucket, &seconds);
}
