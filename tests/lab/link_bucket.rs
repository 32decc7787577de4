//! A token bucket on a link, tc tbf on its own (docs/steady-state.md, "The lab"): a lab link
//! of 80 Mbit/s whose tbf holds a bucket of 160 MB, spent at up to 400 Mbit/s (scripts/lab
//! `--burst`, `--peak`). 1 MiB sequential reads over NBD run at the peak until the bucket is
//! spent (160 MB / (400 − 80) Mbit/s ≈ 4 s), then at the link's rate: the verdict names the
//! bucket. With think time after 240 reads, tbf gathers tokens at the link's rate while the
//! worker idles, and its reads run at the peak again until those are spent: the bucket's
//! note gives the refill.
//!
//! tbf counts frames from the MAC header on, and TCP carries 1448 bytes of payload in each
//! 1514-byte frame (docs/lab.md, "How the links are shaped"): the bucket iopath can see is
//! 1448/1514 of what tbf holds. The lab spells rates as a wire's and shapes them to 1514/1538
//! of it, so a rate's payload is 1448/1538 of the wire's. The burst, the baseline and the
//! bucket must be within 10 % of those figures (tbf's accounting is exact to a frame; the 10 %
//! are the fit's, as in [`super::burst`]); what was spent again after idle time within 15 %
//! of the idle time × the link's rate: it is a figure of two or three seconds, with a partly
//! idle interval at each end, where the bucket is fitted over four.

use super::burst::{bucket_note, figure, up_to_three_tries, within_percent, within_ten_percent};
use super::{Lab, nbd_run_timed};
use serde_json::Value;

/// The link, its rate and its peak, spelled as scripts/lab takes them.
const LINK: &str = "80m";
const LINK_BITS: f64 = 80e6;
const PEAK: &str = "400m";
const PEAK_BITS: f64 = 400e6;
/// tbf's bucket, bytes of frames.
const BUCKET_FRAME_BYTES: f64 = 160e6;
/// TCP payload in each byte of a wire, and in each byte that tbf counts.
const PAYLOAD_PER_WIRE_BYTE: f64 = 1448.0 / 1538.0;
const PAYLOAD_PER_FRAME_BYTE: f64 = 1448.0 / 1514.0;

/// Per-second MB of the first test's reads.
fn seconds_of(test: &Value) -> Vec<f64> {
    test["read"]["series"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|point| point["bytes"].as_f64().unwrap_or(0.0) / 1e6)
        .collect()
}

/// One run of `workload` for `duration` on a fresh link (a full bucket): the first test.
fn link_try(workload: &[&str], duration: &str) -> Option<Value> {
    let burst = BUCKET_FRAME_BYTES.to_string();
    let lab = Lab::up_with(
        &[LINK],
        &[
            "--no-iscsi",
            "--no-nfs",
            "--no-smb",
            "--burst",
            &burst,
            "--peak",
            PEAK,
        ],
    )?;
    let json = nbd_run_timed(&[&lab.link(LINK).nbd], workload, duration, "0");
    Some(json["tests"][0].clone())
}

/// 1 MiB reads at QD 4 (on their own for 11 s: ≈ 4 s at the peak, then the link's rate).
const READS: [&str; 7] = ["--rw", "read", "--bs", "1m", "--qd", "4", "--no-confirm"];

/// The payload of the link's rate, bytes per second.
fn baseline() -> f64 {
    LINK_BITS / 8.0 * PAYLOAD_PER_WIRE_BYTE
}

/// The burst, the baseline and the bucket of `bucket` against what tbf was set to.
#[track_caller]
fn fitted_to_the_link(bucket: &Value, seconds: &[f64]) {
    assert_eq!(bucket["counted_in_ios"], false, "{bucket}");
    within_ten_percent(
        "burst",
        figure(bucket, "burst_bytes_per_second"),
        PEAK_BITS / 8.0 * PAYLOAD_PER_WIRE_BYTE,
        seconds,
    );
    within_ten_percent(
        "baseline",
        figure(bucket, "baseline_bytes_per_second"),
        baseline(),
        seconds,
    );
    within_ten_percent(
        "bucket",
        figure(bucket, "bucket_bytes"),
        BUCKET_FRAME_BYTES * PAYLOAD_PER_FRAME_BYTE,
        seconds,
    );
}

#[test]
fn a_tbf_bucket_on_a_link_is_named_with_its_rate_and_size() {
    let Some(test) = up_to_three_tries(
        || link_try(&READS, "11s"),
        |test| {
            test.as_ref()
                .is_none_or(|test| test["analysis"]["verdict"] == "burst_bucket")
        },
    ) else {
        return;
    };
    let seconds = seconds_of(&test);
    let analysis = &test["analysis"];
    assert_eq!(
        analysis["verdict"], "burst_bucket",
        "{analysis}; MB per second: {seconds:.1?}"
    );
    fitted_to_the_link(&analysis["rate_step"]["burst_bucket"], &seconds);
    let evidence = analysis["evidence"].as_str().unwrap_or_default();
    assert!(
        evidence.starts_with("rate-limited by a burst bucket: ")
            && evidence.contains("refilling at the baseline (no idle time to measure it)"),
        "{evidence}"
    );
}

/// The same link with 10 s of think time after 240 reads (≈ 4 s at the peak, 6 s at the
/// rate): the think time paces the test (its verdict), and the bucket's note says what it
/// spent again after the idle time.
#[test]
fn a_tbf_bucket_on_a_link_refills_at_its_rate_while_idle() {
    let mut workload = READS.to_vec();
    workload.extend(["--think-time", "10s", "--think-blocks", "240"]);
    let Some(test) = up_to_three_tries(
        || link_try(&workload, "27s"),
        |test| {
            test.as_ref().is_none_or(|test| {
                test["analysis"]["rate_step"]["burst_bucket"]["refill_per_second"].is_number()
            })
        },
    ) else {
        return;
    };
    let seconds = seconds_of(&test);
    let analysis = &test["analysis"];
    let bucket = &analysis["rate_step"]["burst_bucket"];
    assert!(
        bucket["refill_per_second"].is_number(),
        "{analysis}; MB per second: {seconds:.1?}"
    );
    fitted_to_the_link(bucket, &seconds);
    // The think time less the reads in flight when it began (4 MiB at the link's rate).
    let idle = figure(bucket, "refill_idle_seconds");
    assert!(
        (8.5..=10.5).contains(&idle),
        "idle {idle} s; MB per second: {seconds:.1?}"
    );
    // What was spent again above the baseline is what tbf gathered at its rate while idle.
    within_percent(
        "spent again after idle",
        figure(bucket, "refill_per_second") * idle,
        baseline() * idle,
        15.0,
        &seconds,
    );
    assert_eq!(analysis["verdict"], "rate_limited", "{analysis}");
    let message = bucket_note(analysis);
    assert!(
        message.contains(" above it again after ") && message.contains(" s idle: refilled at "),
        "{message}"
    );
}
