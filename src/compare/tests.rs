//! The comparison on a saved real run (the `mixed` fixture of tests/fixtures), with
//! series set by hand where a test needs known noise.

use super::*;
use crate::result::DirectionResult;
use crate::result::IntervalPoint;
use crate::support::fixtures::{mixed, result};

/// Replaces the series of `direction` by one-second points of `megabytes_per_second` (4 KiB
/// I/Os, `latency_us` each), and its totals by theirs.
fn set_series(direction: &mut DirectionResult, megabytes_per_second: &[f64], latency_us: f64) {
    direction.series = megabytes_per_second
        .iter()
        .enumerate()
        .map(|(second, rate)| {
            let bytes = (rate * 1e6) as u64;
            IntervalPoint {
                start_ns: second as u64 * 1_000_000_000,
                duration_ns: 1_000_000_000,
                bytes,
                io_count: bytes / 4096,
                mean_latency_ns: (latency_us * 1e3) as u64,
                p99_latency_ns: (latency_us * 3e3) as u64,
                latency_buckets: Vec::new(),
            }
        })
        .collect();
    let seconds = megabytes_per_second.len() as f64;
    direction.bytes = direction.series.iter().map(|p| p.bytes).sum();
    direction.io_count = direction.series.iter().map(|p| p.io_count).sum();
    direction.bytes_per_second = direction.bytes as f64 / seconds;
    direction.iops = direction.io_count as f64 / seconds;
    direction.latency.mean_ns = latency_us * 1e3;
    direction
        .latency
        .percentiles_ns
        .insert("99".into(), (latency_us * 3e3) as u64);
}

/// The shared run with its "mixed" test's totals set to `rates` at `latency_us`.
fn run_with(rates: &[f64], latency_us: f64, label: &str) -> RunResult {
    let mut result = mixed().clone();
    result.label = Some(label.into());
    set_series(&mut result.tests[0].total, rates, latency_us);
    result
}

fn compare_two(a: &RunResult, b: &RunResult) -> Comparison {
    compare(
        &[LabeledRun::new("a", a), LabeledRun::new("b", b)],
        &CompareOptions::default(),
    )
    .unwrap()
}

#[test]
fn a_run_against_itself_is_the_same_everywhere() {
    let result = mixed();
    let comparison = compare_two(result, result);
    assert_eq!(comparison.tests.len(), result.tests.len());
    assert!(comparison.unmatched.is_empty());
    assert_eq!(comparison.baseline, "a");
    for test in &comparison.tests {
        assert_eq!(test.figures.len(), 2);
        assert_eq!(test.changes.len(), 1);
        assert!(test.notes.is_empty(), "{:?}", test.notes);
        for change in &test.changes[0].metrics {
            assert_eq!(change.outcome, Outcome::Same, "{}", test.name);
            assert_eq!(change.difference, 0.0);
            assert!(change.ratio.is_none_or(|ratio| ratio == 1.0));
        }
    }
    // "mixed" reads and writes, so its figures are both together.
    assert_eq!(
        comparison.tests[0].direction,
        comparison::FigureDirection::Total
    );
}

#[test]
fn a_change_beyond_both_intervals_is_a_change() {
    let before = run_with(&[100.0, 102.0, 98.0, 101.0, 99.0], 100.0, "before");
    let after = run_with(&[150.0, 153.0, 147.0, 151.0, 149.0], 150.0, "after");
    let comparison = compare_two(&before, &after);
    let test = &comparison.tests[0];
    let figures = &test.figures[0];
    assert_eq!(figures.run, "a");
    let half = figures.bytes_per_second.half_width.unwrap();
    // t(0.975, 4) × s / √n with s = √2.5 MB/s.
    assert!(
        (half - 2.7764 * 2.5f64.sqrt() * 1e6 / 5f64.sqrt()).abs() < 1e3,
        "{half}"
    );
    let changes = &test.changes[0];
    let throughput = changes.metric(Metric::Throughput).unwrap();
    assert_eq!(throughput.outcome, Outcome::Better);
    assert!((throughput.ratio.unwrap() - 1.5).abs() < 1e-9);
    assert!((throughput.difference - 50e6).abs() < 1.0);
    assert_eq!(
        changes.metric(Metric::Iops).unwrap().outcome,
        Outcome::Better
    );
    // Latency went up by half, every second alike: the interval is zero wide, so worse.
    assert_eq!(
        changes.metric(Metric::MeanLatency).unwrap().outcome,
        Outcome::Worse
    );
    assert_eq!(
        changes.metric(Metric::P99Latency).unwrap().outcome,
        Outcome::Worse
    );
}

#[test]
fn overlapping_intervals_are_the_same_and_missing_ones_are_unknown() {
    let before = run_with(&[100.0, 110.0, 90.0, 105.0, 95.0], 100.0, "before");
    let after = run_with(&[104.0, 114.0, 94.0, 109.0, 99.0], 100.0, "after");
    let comparison = compare_two(&before, &after);
    let changes = &comparison.tests[0].changes[0];
    let throughput = changes.metric(Metric::Throughput).unwrap();
    assert!(throughput.ratio.unwrap() > 1.03);
    assert_eq!(throughput.outcome, Outcome::Same);

    let short = run_with(&[120.0], 90.0, "short");
    let comparison = compare_two(&before, &short);
    let changes = &comparison.tests[0].changes[0];
    assert!(
        comparison.tests[0].figures[1]
            .bytes_per_second
            .half_width
            .is_none()
    );
    for change in &changes.metrics {
        assert_eq!(change.outcome, Outcome::Unknown, "{:?}", change.metric);
    }
}

#[test]
fn two_second_runs_far_apart_are_too_short_to_tell_never_the_same() {
    // Two 2-second runs 4.8x apart: two per-second values each give intervals of ±100 % and
    // more, which overlap; "same" would claim what the data does not show.
    let slow = run_with(&[20.0, 80.0], 100.0, "slow");
    let fast = run_with(&[100.0, 380.0], 100.0, "fast");
    let comparison = compare_two(&slow, &fast);
    let test = &comparison.tests[0];
    let throughput = test.changes[0].metric(Metric::Throughput).unwrap();
    assert!(throughput.ratio.unwrap() > 4.5, "{throughput:?}");
    assert_eq!(throughput.outcome, Outcome::TooShort);
    let note = test
        .notes
        .iter()
        .find(|note| note.contains("too short to tell"))
        .unwrap_or_else(|| panic!("no note: {:?}", test.notes));
    assert!(note.contains("would tell a 10 % difference"), "{note}");

    // Long and steady runs a little apart, within both tight intervals: the same.
    let steady: Vec<f64> = (0..30).map(|second| 100.0 + (second % 3) as f64).collect();
    let close: Vec<f64> = steady.iter().map(|rate| rate + 0.5).collect();
    let comparison = compare_two(
        &run_with(&steady, 100.0, "a"),
        &run_with(&close, 100.0, "b"),
    );
    let throughput = comparison.tests[0].changes[0]
        .metric(Metric::Throughput)
        .unwrap();
    assert_eq!(throughput.outcome, Outcome::Same);
}

#[test]
fn the_time_that_would_tell_follows_the_spread() {
    let value = |half_width: f64, samples: u32| comparison::MetricValue {
        value: 100.0,
        half_width: Some(half_width),
        samples,
    };
    // ±20 % from 10 values: s = 20 × √10 / t(9) ≈ 27.96; ±10 % needs t(n−1) × 27.96 / √n ≤ 10,
    // about 33 values.
    let needed = value(20.0, 10).samples_for(10.0).unwrap();
    assert!((32..=35).contains(&needed), "{needed}");
    // Already narrow enough: its own count.
    assert_eq!(value(5.0, 10).samples_for(10.0), Some(10));
    // No interval or no count: unknown.
    assert_eq!(value(5.0, 0).samples_for(10.0), None);
}

#[test]
fn tests_missing_from_a_run_are_listed_not_dropped() {
    let a = mixed().clone();
    let mut b = mixed().clone();
    b.tests[1].name = "renamed".into();
    let mut c = mixed().clone();
    c.tests.push(c.tests[0].clone());
    let comparison = compare(
        &[
            LabeledRun::new("a", &a),
            LabeledRun::new("b", &b),
            LabeledRun::new("c", &c),
        ],
        &CompareOptions::default(),
    )
    .unwrap();
    assert_eq!(comparison.tests.len(), 1);
    assert_eq!(comparison.tests[0].name, "mixed");
    assert_eq!(comparison.tests[0].changes.len(), 2);
    let listed: Vec<(&str, &[String], &[String])> = comparison
        .unmatched
        .iter()
        .map(|test| {
            (
                test.name.as_str(),
                test.present_in.as_slice(),
                test.missing_from.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (
                "pair",
                &["a".to_string(), "c".into()][..],
                &["b".to_string()][..]
            ),
            (
                "renamed",
                &["b".to_string()][..],
                &["a".to_string(), "c".into()][..]
            ),
            (
                "mixed #2",
                &["c".to_string()][..],
                &["a".to_string(), "b".into()][..]
            ),
        ]
    );
}

#[test]
fn the_baseline_can_be_chosen_and_labels_are_checked() {
    let before = run_with(&[100.0, 102.0, 98.0, 101.0, 99.0], 100.0, "before");
    let after = run_with(&[150.0, 153.0, 147.0, 151.0, 149.0], 150.0, "after");
    let runs = [
        LabeledRun::new("before", &before),
        LabeledRun::new("after", &after),
    ];
    let options = CompareOptions {
        baseline: Some("after".into()),
        cost: None,
    };
    let comparison = compare(&runs, &options).unwrap();
    assert_eq!(comparison.baseline, "after");
    assert_eq!(comparison.baseline_index(), 1);
    let change = &comparison.tests[0].changes[0];
    assert_eq!(change.run, "before");
    assert_eq!(change.against, "after");
    assert_eq!(
        change.metric(Metric::Throughput).unwrap().outcome,
        Outcome::Worse
    );
    let options = CompareOptions {
        baseline: Some("other".into()),
        cost: None,
    };
    let error = compare(&runs, &options).unwrap_err().to_string();
    assert!(
        error.contains("'other'") && error.contains("before, after"),
        "{error}"
    );
    assert_eq!(
        compare(&runs[..1], &CompareOptions::default()).unwrap_err(),
        CompareError::TooFewRuns(1)
    );
}

#[test]
fn another_workload_under_the_same_name_is_noted() {
    let a = mixed().clone();
    let mut b = mixed().clone();
    b.tests[0].jobs[0].workload.queue_depth = 16;
    b.tests[0].jobs[0].workload.seed += 1;
    let comparison = compare_two(&a, &b);
    let notes = &comparison.tests[0].notes;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("b: queue depth differs: "),
        "{}",
        notes[0]
    );
    assert!(
        notes[0].contains("QD16") && notes[0].contains("(a: "),
        "{}",
        notes[0]
    );
    assert!(comparison.tests[1].notes.is_empty());
}

#[test]
fn two_single_test_runs_are_compared_whatever_their_names() {
    let qd4 = result("small");
    let mut qd32 = qd4.clone();
    qd32.tests[0].name = "50% read 100% random 8k QD32".into();
    let workload = &mut qd32.tests[0].jobs[0].workload;
    workload.queue_depth = 32;
    for line in &mut workload.access.lines {
        line.size_bytes = 8192;
        line.alignment_bytes = 8192;
    }
    let comparison = compare_two(&qd4, &qd32);
    assert!(
        comparison.unmatched.is_empty(),
        "{:?}",
        comparison.unmatched
    );
    assert_eq!(comparison.tests.len(), 1);
    let test = &comparison.tests[0];
    assert_eq!(
        test.name,
        "50% read 100% random 4k QD4 vs 50% read 100% random 8k QD32"
    );
    assert_eq!(test.figures.len(), 2);
    // The alignment follows the block size in both: not a difference of its own.
    assert_eq!(test.notes.len(), 1, "{:?}", test.notes);
    assert!(
        test.notes[0].starts_with("b: block size, queue depth differ: "),
        "{}",
        test.notes[0]
    );
    assert!(
        comparison
            .notes
            .iter()
            .any(|note| note.contains("compared as one test")),
        "{:?}",
        comparison.notes
    );

    // Another target is named; the same single test is matched by name, not paired.
    let mut elsewhere = qd4.clone();
    elsewhere.targets[0].path = "/mnt/other/f.dat".into();
    let comparison = compare_two(&qd4, &elsewhere);
    assert_eq!(comparison.tests[0].name, qd4.tests[0].name);
    assert!(
        comparison.tests[0].notes[0].starts_with("b: target (/mnt/other/f.dat) differs: "),
        "{:?}",
        comparison.tests[0].notes
    );
    assert!(
        !comparison
            .notes
            .iter()
            .any(|note| note.contains("compared as one test"))
    );

    // Runs of several tests still match by name only.
    let comparison = compare_two(&qd4, mixed());
    assert!(comparison.tests.is_empty());
    assert_eq!(comparison.unmatched.len(), 3);
}

#[test]
fn cost_and_density_follow_from_the_peaks() {
    let mut fc = run_with(&[400.0, 400.0], 100.0, "fc");
    let mut iscsi = run_with(&[1000.0, 1000.0], 100.0, "iscsi");
    fc.tests.truncate(1);
    iscsi.tests.truncate(1);
    let inputs = CostInputs::from_flags(
        &["fc=1200".into(), "iscsi=2400".into()],
        &["fc=2,iscsi=1".into()],
        Some("10GB/s"),
    )
    .unwrap()
    .unwrap();
    let runs = [LabeledRun::new("fc", &fc), LabeledRun::new("iscsi", &iscsi)];
    let options = CompareOptions {
        baseline: None,
        cost: Some(inputs),
    };
    let comparison = compare(&runs, &options).unwrap();
    let cost = comparison.cost.as_ref().unwrap();
    assert_eq!(cost.target_bytes_per_second, Some(10e9));
    assert_eq!(cost.basis, "peaks over the 1 test every run has");
    let fc = &cost.runs[0];
    assert_eq!(fc.peak_bytes_per_second, 400e6);
    assert_eq!(fc.peak_bytes_per_second_test, "mixed");
    assert!((fc.price_per_gigabyte_per_second.unwrap() - 3000.0).abs() < 1e-6);
    assert_eq!(fc.bytes_per_second_per_port, Some(200e6));
    assert_eq!(fc.ports_needed, Some(50));
    assert_eq!(fc.units_needed, Some(25));
    assert_eq!(fc.price_for_target, Some(30_000.0));
    let iscsi = &cost.runs[1];
    assert!((iscsi.price_per_gigabyte_per_second.unwrap() - 2400.0).abs() < 1e-6);
    assert_eq!(iscsi.ports_needed, Some(10));
    let per_kiops = 2400.0 / (iscsi.peak_iops / 1e3);
    assert!((iscsi.price_per_thousand_iops.unwrap() - per_kiops).abs() < 1e-9);

    let unknown = CostInputs::from_flags(&["san=5".into()], &[], None).unwrap();
    let options = CompareOptions {
        baseline: None,
        cost: unknown,
    };
    assert!(matches!(
        compare(&runs, &options),
        Err(CompareError::UnknownLabel { flag: "--cost", .. })
    ));
    assert!(CostInputs::from_flags(&[], &["fc=1.5".into()], None).is_err());
    assert!(CostInputs::from_flags(&[], &[], Some("10GB/s")).is_err());
    assert!(CostInputs::from_flags(&[], &["fc=2".into()], Some("fast")).is_err());
    assert_eq!(CostInputs::from_flags(&[], &[], None).unwrap(), None);
}

#[test]
fn the_output_round_trips_as_json() {
    let before = run_with(&[100.0, 102.0, 98.0, 101.0, 99.0], 100.0, "before");
    let comparison = compare_two(&before, mixed());
    let text = serde_json::to_string(&comparison).unwrap();
    assert!(text.contains("\"comparison_version\":1"), "{text}");
    assert!(text.contains("\"metric\":\"throughput\""), "{text}");
    let back: Comparison = serde_json::from_str(&text).unwrap();
    assert_eq!(back.runs, comparison.runs);
    assert_eq!(back.tests.len(), comparison.tests.len());
    for (read, written) in back.tests.iter().zip(&comparison.tests) {
        assert_eq!(read.name, written.name);
        assert_eq!(read.figures.len(), written.figures.len());
        let outcomes = |test: &ComparedTest| -> Vec<Outcome> {
            test.changes[0].metrics.iter().map(|m| m.outcome).collect()
        };
        assert_eq!(outcomes(read), outcomes(written));
    }
}
