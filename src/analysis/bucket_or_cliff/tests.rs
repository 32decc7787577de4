//! The step as the analysis sees it: the verdict, its trust note and the JSON of a test whose
//! series stepped down.

use crate::analysis::test_results::{cpu, direction, empty_direction, idle_cpu, test_of, workload};
use crate::analysis::test_support::facts;
use crate::analysis::verdict::analyse_test;
use crate::result::{
    DirectionResult, RateStep, SteadyOutcome, TestAnalysis, TestResult, TrustKind, Verdict,
};

/// 1 MiB I/Os at `before` bytes/s for `seconds_before` s, then at `after`, 10 s in all.
fn stepped(before: f64, after: f64, seconds_before: usize) -> DirectionResult {
    let mut direction = direction(before, 1 << 20, 4_000_000.0, 0.0);
    for (second, point) in direction.series.iter_mut().enumerate() {
        let rate = if second < seconds_before {
            before
        } else {
            after
        };
        point.bytes = rate as u64;
        point.io_count = point.bytes >> 20;
    }
    direction.bytes = direction.series.iter().map(|p| p.bytes).sum();
    direction.io_count = direction.series.iter().map(|p| p.io_count).sum();
    direction.bytes_per_second = direction.bytes as f64 / 10.0;
    direction.iops = direction.io_count as f64 / 10.0;
    direction
}

fn analysed(test: &TestResult) -> TestAnalysis {
    analyse_test(test, &[], &[], &facts())
}

fn note(analysis: &TestAnalysis, kind: TrustKind) -> Option<&str> {
    analysis
        .trust_notes
        .iter()
        .find(|note| note.kind == kind)
        .map(|note| note.message.as_str())
}

#[test]
fn reads_that_step_down_are_rate_limited_by_a_burst_bucket() {
    let test = test_of(
        workload(1 << 20, 100, 0, 8),
        stepped(312e6, 125e6, 4),
        empty_direction(),
        idle_cpu(),
    );
    let analysis = analysed(&test);
    assert_eq!(
        analysis.verdict,
        Verdict::BurstBucket,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis.evidence.starts_with(
            "rate-limited by a burst bucket: 312.0 MB/s for 4 s, then 125.0 MB/s: a bucket of 748.0 MB"
        ),
        "{}",
        analysis.evidence
    );
    let Some(RateStep::BurstBucket(bucket)) = &analysis.rate_step else {
        panic!("{:?}", analysis.rate_step);
    };
    assert_eq!(bucket.bucket_bytes, 748e6);
    let message = note(&analysis, TrustKind::BurstBucket).expect("a note");
    assert!(message.starts_with("burst bucket: 312.0 MB/s"), "{message}");
    // Said once, as a bucket, not again as a plain step.
    assert_eq!(note(&analysis, TrustKind::NotSteady), None);

    // The figures are in the saved result and read back.
    let json = serde_json::to_string(&analysis).unwrap();
    assert!(json.contains("\"rate_step\":{\"burst_bucket\":{"), "{json}");
    assert!(json.contains("\"verdict\":\"burst_bucket\""), "{json}");
    let back: TestAnalysis = serde_json::from_str(&json).unwrap();
    assert_eq!(back, analysis);
}

#[test]
fn writes_that_step_down_fell_off_a_write_cliff() {
    let test = test_of(
        workload(1 << 20, 0, 0, 8),
        empty_direction(),
        stepped(500e6, 150e6, 3),
        idle_cpu(),
    );
    let analysis = analysed(&test);
    assert_eq!(
        analysis.verdict,
        Verdict::WriteCliff,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis
            .evidence
            .starts_with("a write cliff: after 1.50 GB written (3 s): 500.0 MB/s, then 150.0 MB/s"),
        "{}",
        analysis.evidence
    );
    assert!(note(&analysis, TrustKind::WriteCliff).is_some());
}

/// `--steady` ended the test once the baseline held: the note says that the steady state is
/// the baseline after the burst.
#[test]
fn a_steady_state_after_a_burst_is_called_the_baseline() {
    let mut test = test_of(
        workload(1 << 20, 100, 0, 8),
        stepped(312e6, 125e6, 4),
        empty_direction(),
        idle_cpu(),
    );
    test.steady_state = Some(SteadyOutcome {
        criterion: "bw:5%:5s".into(),
        attained_after_ns: Some(9_000_000_000),
    });
    let analysis = analysed(&test);
    let message = note(&analysis, TrustKind::BurstBucket).expect("a note");
    assert!(
        message.ends_with(
            "the steady state found after 9 s (--steady, fio's ss) is the level after the burst bucket, not the rate before it"
        ),
        "{message}"
    );
}

/// A level series keeps its verdict and has no step.
#[test]
fn a_level_series_has_no_step() {
    let test = test_of(
        workload(1 << 20, 100, 0, 8),
        direction(300e6, 1 << 20, 4_000_000.0, 0.03),
        empty_direction(),
        idle_cpu(),
    );
    let analysis = analysed(&test);
    assert_eq!(analysis.rate_step, None);
    assert_ne!(analysis.verdict, Verdict::BurstBucket);
}

/// A step while other processes kept both cores full (iopath 5 % of the host) and its worker
/// waited 43 % of the time for a CPU: the scheduler handing iopath less of a core makes steps
/// of its own, so the busy host is the verdict and the step is named in its evidence and its
/// note as what it may also be.
#[test]
fn a_step_on_a_host_busy_with_other_processes_is_the_busy_host() {
    let mut busy = cpu(10.0, [100.0, 100.0], 0.0);
    busy.busiest_thread_cpu_wait_ns = busy.wall_ns * 43 / 100;
    let test = test_of(
        workload(1 << 20, 100, 0, 8),
        stepped(312e6, 125e6, 4),
        empty_direction(),
        busy.clone(),
    );
    let analysis = analysed(&test);
    assert_eq!(
        analysis.verdict,
        Verdict::HostCpuBound,
        "{}",
        analysis.evidence
    );
    assert!(
        analysis
            .evidence
            .starts_with("the host's CPU, taken by other processes")
            && analysis
                .evidence
                .contains("rate-limited by a burst bucket: 312.0 MB/s for 4 s, then 125.0 MB/s")
            && analysis
                .evidence
                .contains("which a host busy with other work can make too")
            && analysis
                .evidence
                .contains("a worker waited 43 % of the time for a CPU"),
        "{}",
        analysis.evidence
    );
    assert!(matches!(analysis.rate_step, Some(RateStep::BurstBucket(_))));
    assert!(note(&analysis, TrustKind::BurstBucket).is_some());

    // The same busy host while the worker mostly waited for its I/O, not for a CPU (a bucket
    // the server keeps): the step stays the verdict.
    busy.busiest_thread_cpu_wait_ns = busy.wall_ns * 14 / 100;
    let waiting_for_io = test_of(
        workload(1 << 20, 100, 0, 8),
        stepped(312e6, 125e6, 4),
        empty_direction(),
        busy,
    );
    assert_eq!(analysed(&waiting_for_io).verdict, Verdict::BurstBucket);

    // iopath itself filling the cores: the step stays the verdict.
    let own = test_of(
        workload(1 << 20, 100, 0, 8),
        stepped(312e6, 125e6, 4),
        empty_direction(),
        cpu(190.0, [100.0, 100.0], 0.0),
    );
    assert_eq!(analysed(&own).verdict, Verdict::BurstBucket);
}
