use super::*;
use crate::analysis::bucket_or_cliff::classify;
use crate::analysis::burst_bucket::fit_burst_bucket;
use crate::analysis::write_cliff::find_write_cliff;
use crate::result::RateStep;

/// Deterministic noise of ±`percent` about 1 (a fixed pattern, no generator).
fn noisy(level: f64, count: usize, percent: f64, phase: usize) -> Vec<f64> {
    const PATTERN: [f64; 7] = [0.3, -0.8, 1.0, -0.2, 0.6, -1.0, 0.1];
    (0..count)
        .map(|i| level * (1.0 + PATTERN[(i + phase) % PATTERN.len()] * percent / 100.0))
        .collect()
}

/// Rates of 1 MiB I/Os, one per second.
fn of_bytes(bytes: Vec<f64>) -> IntervalRates {
    IntervalRates {
        interval_seconds: 1.0,
        iops: bytes.iter().map(|b| b / 1048576.0).collect(),
        bytes_per_second: bytes,
    }
}

fn within(value: f64, expected: f64, percent: f64) -> bool {
    (value - expected).abs() <= expected.abs() * percent / 100.0
}

/// 312 MB/s for 41 s (the drop inside the 42nd second), then 125 MB/s, with ±3 % noise: the
/// bucket is (312 − 125) × 41.4 s.
#[test]
fn a_bucket_that_runs_dry_is_fitted_to_its_figures() {
    let mut bytes = noisy(312e6, 41, 3.0, 0);
    bytes.push(0.4 * 312e6 + 0.6 * 125e6);
    bytes.extend(noisy(125e6, 30, 3.0, 3));
    let bucket = fit_burst_bucket(&of_bytes(bytes)).expect("a bucket");
    assert!(
        within(bucket.burst_bytes_per_second, 312e6, 1.0),
        "{bucket:?}"
    );
    assert!(
        within(bucket.baseline_bytes_per_second, 125e6, 1.0),
        "{bucket:?}"
    );
    assert!(within(bucket.burst_seconds, 41.4, 1.0), "{bucket:?}");
    assert!(within(bucket.bucket_bytes, 187e6 * 41.4, 2.0), "{bucket:?}");
    assert!(!bucket.counted_in_ios && bucket.refill_per_second.is_none());
    let words = crate::analysis::burst_bucket::describe(&bucket);
    assert!(
        words.starts_with("312.") && words.contains(" for 41.4 s, then 12"),
        "{words}"
    );
}

/// An IOPS bucket: 3000 I/Os a second of sizes that change every second, then 1000; the byte
/// series is ragged, the I/O series flat, so the bucket counts I/Os.
#[test]
fn an_iops_bucket_counts_ios() {
    let sizes = [4096.0, 16384.0, 8192.0, 4096.0, 65536.0, 8192.0, 32768.0];
    let mut iops = vec![3000.0; 8];
    iops.extend([1000.0; 10]);
    let rates = IntervalRates {
        interval_seconds: 1.0,
        bytes_per_second: iops
            .iter()
            .enumerate()
            .map(|(i, r)| r * sizes[i % sizes.len()])
            .collect(),
        iops,
    };
    let bucket = fit_burst_bucket(&rates).expect("a bucket");
    assert!(bucket.counted_in_ios, "{bucket:?}");
    assert_eq!((bucket.burst_iops, bucket.baseline_iops), (3000.0, 1000.0));
    assert_eq!(bucket.bucket_ios, 16000.0);
    assert!(crate::analysis::burst_bucket::describe(&bucket).contains("16,000 I/Os"));
}

/// A bucket of requests met by a mix of 4 KiB and 64 KiB reads (a mean of 34 KiB), as the lab
/// measured it on a busy host: the client, short of CPU, kept the burst from 2585 to 2827
/// I/Os a second, the bytes following; at the baseline the bucket held the I/Os to 1000 a
/// second while the bytes followed the mix. The baseline tells the unit: I/Os, though the
/// mean I/O is large and both series are as ragged over the whole run.
#[test]
fn a_mix_of_sizes_at_an_iops_baseline_counts_ios() {
    let iops = [
        2782.0, 2827.0, 2706.0, 2817.0, 2586.0, 2585.0, 2694.0, 1000.0, 999.0, 1000.0, 1001.0,
        999.0, 1000.0, 1000.0,
    ];
    let megabytes = [
        97.96, 102.02, 94.46, 96.88, 92.31, 91.69, 94.84, 35.0, 36.78, 34.82, 36.54, 34.26, 33.28,
        34.26,
    ];
    let rates = IntervalRates {
        interval_seconds: 1.0,
        bytes_per_second: megabytes.iter().map(|mb| mb * 1e6).collect(),
        iops: iops.to_vec(),
    };
    let bucket = fit_burst_bucket(&rates).expect("a bucket");
    assert!(bucket.counted_in_ios, "{bucket:?}");
    assert!(within(bucket.baseline_iops, 1000.0, 0.1), "{bucket:?}");
    assert!(within(bucket.bucket_ios, 12_000.0, 1.0), "{bucket:?}");

    // The same mix against a bucket of bytes: the baseline holds the bytes, the I/Os follow
    // the mix; counted in bytes.
    let bytes_bucket = IntervalRates {
        interval_seconds: 1.0,
        bytes_per_second: rates
            .bytes_per_second
            .iter()
            .enumerate()
            .map(|(second, bytes)| if second < 7 { *bytes } else { 35e6 })
            .collect(),
        iops: rates
            .iops
            .iter()
            .zip(&rates.bytes_per_second)
            .enumerate()
            .map(|(second, (ios, bytes))| {
                if second < 7 {
                    *ios
                } else {
                    35e6 / (bytes / ios)
                }
            })
            .collect(),
    };
    let bucket = fit_burst_bucket(&bytes_bucket).expect("a bucket");
    assert!(!bucket.counted_in_ios, "{bucket:?}");
    assert!(
        within(bucket.baseline_bytes_per_second, 35e6, 0.1),
        "{bucket:?}"
    );
}

/// After idle time the rate comes back to the burst for a while: the refill is what was
/// spent again over the idle time (and a bucket, never a cliff, even for writes).
#[test]
fn a_return_after_idle_measures_the_refill() {
    let mut bytes = vec![300e6; 6];
    bytes.extend([100e6; 6]);
    bytes.extend([0.0; 5]);
    // 5 s idle at a refill of 100 MB/s: 500 MB above the baseline, 2.5 s at 300 MB/s.
    bytes.extend([300e6, 300e6, 200e6, 100e6, 100e6, 100e6]);
    let rates = of_bytes(bytes);
    let bucket = fit_burst_bucket(&rates).expect("a bucket");
    assert_eq!(bucket.refill_per_second, Some(100e6), "{bucket:?}");
    assert!(matches!(
        classify(&rates, true),
        Some(RateStep::BurstBucket(_))
    ));
}

/// Small I/Os of one size against a bucket: the byte and the I/O series are the same series,
/// so neither is flatter, and the bucket is counted in I/Os (a cloud disk's credits); the
/// same steps with 1 MiB I/Os stay in bytes.
#[test]
fn small_ios_of_one_size_count_in_ios() {
    let mut iops = noisy(3000.0, 6, 2.0, 0);
    iops.extend(noisy(1000.0, 8, 2.0, 3));
    let of_size = |size: f64| IntervalRates {
        interval_seconds: 1.0,
        bytes_per_second: iops.iter().map(|r| r * size).collect(),
        iops: iops.clone(),
    };
    let bucket = fit_burst_bucket(&of_size(4096.0)).expect("a bucket");
    assert!(bucket.counted_in_ios, "{bucket:?}");
    assert!(within(bucket.bucket_ios, 2000.0 * 6.0, 2.0), "{bucket:?}");
    let words = crate::analysis::burst_bucket::describe(&bucket);
    assert!(
        words.contains(" IOPS for 6 s, then ") && words.contains(" I/Os (49."),
        "{words}"
    );
    let large = fit_burst_bucket(&of_size(1048576.0)).expect("a bucket");
    assert!(!large.counted_in_ios, "{large:?}");
}

/// Idle time that starts and ends inside an interval: the partly idle intervals on both
/// sides count their idle shares, the return counts what it spent in its partly idle first
/// interval and in the one where it fell back. 5.1 s idle at a refill of 100 MB/s: 510 MB.
#[test]
fn a_return_after_idle_counts_the_partly_idle_intervals() {
    let mut bytes = vec![300e6; 6];
    bytes.extend([100e6; 6]);
    // 0.2 s at the baseline, then idle for 0.8 + 4 + 0.3 s.
    bytes.push(20e6);
    bytes.extend([0.0; 4]);
    // 0.7 s at the burst (140 MB above the baseline), a whole second (200 MB), 0.85 s
    // (170 MB) and the rest of that second at the baseline.
    bytes.extend([
        210e6,
        300e6,
        0.85 * 300e6 + 0.15 * 100e6,
        100e6,
        100e6,
        100e6,
    ]);
    let bucket = fit_burst_bucket(&of_bytes(bytes)).expect("a bucket");
    let refill = bucket.refill_per_second.expect("a refill");
    assert!(within(refill, 100e6, 0.1), "{bucket:?}");
    assert!(
        within(bucket.refill_idle_seconds.unwrap_or(0.0), 5.1, 0.1),
        "{bucket:?}"
    );
    let words = crate::analysis::burst_bucket::describe(&bucket);
    assert!(
        words.ends_with(
            "and 510.0 MB above it again after 5.1 s idle: refilled at 100.0 MB/s while idle"
        ),
        "{words}"
    );
}

/// Writes that step down and stay down after idle: a cliff, with the bytes before the step.
#[test]
fn a_cliff_stays_low_after_idle() {
    let mut bytes = noisy(500e6, 6, 2.0, 1);
    bytes.push(0.5 * 500e6 + 0.5 * 150e6);
    bytes.extend(noisy(150e6, 8, 2.0, 4));
    let plain = of_bytes(bytes.clone());
    let Some(RateStep::WriteCliff(cliff)) = classify(&plain, true) else {
        panic!("a cliff");
    };
    assert!(within(cliff.bytes_before, 500e6 * 6.5, 2.0), "{cliff:?}");
    assert!(!cliff.stayed_low_after_idle);
    // The same series read: a bucket (a write cache does not slow reads).
    assert!(matches!(
        classify(&plain, false),
        Some(RateStep::BurstBucket(_))
    ));

    bytes.extend([0.0; 4]);
    bytes.extend(noisy(150e6, 5, 2.0, 2));
    let idle = of_bytes(bytes);
    assert_eq!(fit_burst_bucket(&idle), None);
    let cliff = find_write_cliff(&idle).expect("a cliff");
    assert!(cliff.stayed_low_after_idle);
    assert!(classify(&idle, false).is_none());
}

/// Noise, a slow drift, a single dip, a rise, a step too small and a step too late are not
/// buckets or cliffs.
#[test]
fn what_is_not_a_step() {
    let cases: Vec<(&str, Vec<f64>)> = vec![
        ("noise ±8 %", noisy(200e6, 30, 8.0, 0)),
        (
            "a slow drift from 200 to 120",
            (0..30)
                .map(|i| (200.0 - 80.0 * i as f64 / 29.0) * 1e6)
                .collect(),
        ),
        ("a single dip", {
            let mut dip = noisy(200e6, 20, 2.0, 0);
            dip[9] = 60e6;
            dip
        }),
        ("a dip of three seconds", {
            let mut dip = noisy(200e6, 20, 2.0, 0);
            dip[8..11].copy_from_slice(&[60e6, 60e6, 60e6]);
            dip
        }),
        ("a rise", {
            let mut rise = vec![100e6; 6];
            rise.extend([200e6; 6]);
            rise
        }),
        ("a drop of 10 %", {
            let mut small = vec![200e6; 6];
            small.extend([180e6; 6]);
            small
        }),
        ("a drop in the last two seconds", {
            let mut late = noisy(200e6, 12, 2.0, 0);
            late.extend([80e6, 80e6]);
            late
        }),
        ("two steps down", {
            let mut stairs = vec![300e6; 6];
            stairs.extend([200e6; 6]);
            stairs.extend([100e6; 6]);
            stairs
        }),
        ("a drop that slides over five seconds", {
            let mut slide = vec![300e6; 6];
            slide.extend([260e6, 220e6, 180e6, 140e6]);
            slide.extend([100e6; 6]);
            slide
        }),
        ("too short", vec![300e6, 300e6, 100e6, 100e6]),
    ];
    for (name, bytes) in cases {
        let rates = of_bytes(bytes);
        assert_eq!(classify(&rates, false), None, "{name}");
        assert_eq!(classify(&rates, true), None, "{name}");
    }
}

#[test]
fn idle_splits_the_series_into_stretches() {
    assert_eq!(
        active_stretches(&[5.0, 5.0, 0.0, 0.1, 4.0, 0.0]),
        vec![0..2, 4..5]
    );
    assert_eq!(active_stretches(&[]), Vec::<std::ops::Range<usize>>::new());
    // A run that starts idle has no first level at its start.
    let mut late = vec![0.0; 3];
    late.extend([300.0, 300.0, 300.0, 100.0, 100.0, 100.0]);
    assert_eq!(first_stretch_step(&late), None);
}

/// The stored series of a test: full seconds only, the shorter last interval left out.
#[test]
fn rates_of_a_stored_series() {
    let point = |index: u64, bytes: u64, duration_ns: u64| IntervalPoint {
        start_ns: index * 1_000_000_000,
        duration_ns,
        bytes,
        io_count: bytes / 4096,
        mean_latency_ns: 0,
        p99_latency_ns: 0,
        latency_buckets: Vec::new(),
    };
    let rates = IntervalRates::of_series(&[
        point(0, 8192, 1_000_000_000),
        point(1, 4096, 1_000_000_000),
        point(2, 4096, 500_000_000),
    ]);
    assert_eq!(rates.interval_seconds, 1.0);
    assert_eq!(rates.bytes_per_second, [8192.0, 4096.0]);
    assert_eq!(rates.iops, [2.0, 1.0]);
}
