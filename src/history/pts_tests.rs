//! `iopath pts` runs in the history: kept beside `iopath run` results, listed, named by
//! references, read back whole, and refused where a RunResult is needed.

use super::*;
use crate::result::pts::{
    PtsCell, PtsConditions, PtsEdition, PtsOutcome, PtsRound, PtsTestKind, PtsTestResult,
};
use crate::result::{RateStep, WriteCliff};
use crate::support::fixtures;

fn saturation_run() -> PtsResult {
    let cell = PtsCell {
        block_size_bytes: 4096,
        read_percent: 0,
        random: true,
        iops: 1953.0,
        read_bytes_per_second: 0.0,
        write_bytes_per_second: 8e6,
        mean_latency_ns: 65_000.0,
        p99_latency_ns: 90_000,
        p9999_latency_ns: 120_000,
        max_latency_ns: 150_000,
        bytes: 4_000_000,
        rate_step: None,
    };
    PtsResult {
        schema_version: PTS_SCHEMA_VERSION,
        iopath_version: "0.1.0".into(),
        started_at: "2026-12-05T09:00:00Z".into(),
        label: None,
        conditions: PtsConditions {
            edition: PtsEdition::Enterprise,
            target: fixtures::result("small").targets[0].clone(),
            host: "array-host".into(),
            device_facts: Vec::new(),
            capacity_percent: 100,
            active_range_bytes: 64 << 20,
            purge_method: "trim of the whole export (NBD_CMD_TRIM)".into(),
            round_element_ns: 500_000_000,
            max_rounds: 25,
            queue_depth: 32,
            workers: 4,
            preconditioning_bytes: 128 << 20,
            block_sizes_bytes: vec![4096],
            saturation_limit_ns: 6_000_000_000,
            scaled_down: Vec::new(),
            notes: Vec::new(),
        },
        tests: vec![PtsTestResult {
            kind: PtsTestKind::Saturation,
            purged: true,
            preconditioned: false,
            rounds: vec![PtsRound {
                number: 1,
                cells: vec![cell],
                tracked: vec![1953.0],
            }],
            tracking: vec!["4KiB random write IOPS".into()],
            outcome: PtsOutcome::Saturated,
            windows: Vec::new(),
            rate_step: Some(RateStep::WriteCliff(WriteCliff {
                bytes_before: 24e6,
                seconds_before: 3.0,
                before_bytes_per_second: 8e6,
                after_bytes_per_second: 2e6,
                before_iops: 1953.0,
                after_iops: 488.0,
                stayed_low_after_idle: false,
            })),
            steady_after_step: None,
        }],
        complete: true,
    }
}

#[test]
fn a_pts_run_is_kept_listed_named_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open_or_create(&dir.path().join("h.sqlite")).unwrap();
    let run = history.record(&fixtures::result("small")).unwrap();
    let pts = saturation_run();
    let id = history.record_pts(&pts).unwrap();
    let listed = history.list(&Filter::default()).unwrap();
    assert_eq!(listed.len(), 2);
    let entry = &listed[0];
    assert_eq!((entry.id, entry.pts), (id, true));
    assert!(!listed[1].pts);
    assert_eq!(entry.tests, "PTS Enterprise: Write Saturation");
    assert_eq!(entry.verdicts, "saturated, write cliff");
    assert_eq!(entry.host, "array-host");
    assert_eq!(
        (entry.best_iops, entry.best_bytes_per_second),
        (1953.0, 8e6)
    );
    assert!(!entry.partial);
    let last = history
        .resolve(&Reference::parse("@last").unwrap(), "@last")
        .unwrap();
    assert_eq!(last, id);
    assert_eq!(
        history.load_any(id).unwrap(),
        StoredResult::Pts(Box::new(pts))
    );
    assert!(matches!(
        history.load_any(run).unwrap(),
        StoredResult::Run(_)
    ));
    let refused = history.load(id).unwrap_err();
    assert!(matches!(refused, HistoryError::PtsRun { id: found } if found == id));
    assert!(refused.to_string().contains("iopath report @"), "{refused}");
    // Its target is found by the target filter; a trend of a test never holds it.
    let by_target = Filter {
        target: Some(fixtures::result("small").targets[0].path.clone()),
        ..Filter::default()
    };
    assert_eq!(history.list(&by_target).unwrap().len(), 2);
    assert!(
        history
            .runs_with_test("Write Saturation", &Filter::default())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn runs_kept_before_pts_runs_existed_read_as_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let result = fixtures::result("small");
    {
        let connection = Connection::open(&path).unwrap();
        connection.execute_batch(schema::MIGRATIONS[0]).unwrap();
        connection.pragma_update(None, "user_version", 1).unwrap();
        connection
            .execute(
                "INSERT INTO runs (started_at, started_epoch_seconds, host, targets, tests,
                    test_count, best_bytes_per_second, best_iops, verdicts, partial,
                    iopath_version, result_json)
                 VALUES ('2026-12-01T00:00:00Z', 0, 'h', 't', 'small', 1, 0, 0, '', 0, '0',
                    ?1)",
                [serde_json::to_string(&result).unwrap()],
            )
            .unwrap();
    }
    let history = History::open_or_create(&path).unwrap();
    let listed = history.list(&Filter::default()).unwrap();
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].pts);
    assert_eq!(history.load(listed[0].id).unwrap(), result);
}

/// An interrupted run is kept partial; its resumption (the same start, host and target,
/// read back from the state file) replaces it under the same number, and is listed once.
#[test]
fn a_resumed_pts_run_is_kept_once_under_its_first_number() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open_or_create(&dir.path().join("h.sqlite")).unwrap();
    let mut interrupted = saturation_run();
    interrupted.complete = false;
    interrupted.tests[0].rounds.clear();
    let first = history.record_pts(&interrupted).unwrap();
    let between = history.record(&fixtures::result("small")).unwrap();
    // Interrupted again: still one partial row.
    let again = history.record_pts(&interrupted).unwrap();
    assert_eq!(again, first);
    let mut resumed = saturation_run();
    resumed.conditions.notes.push("resumed".into());
    let kept = history.record_pts(&resumed).unwrap();
    assert_eq!(kept, first);
    let listed = history.list(&Filter::default()).unwrap();
    let ids: Vec<i64> = listed.iter().map(|entry| entry.id).collect();
    assert_eq!(ids, [between, first]);
    let entry = &listed[1];
    assert!(!entry.partial);
    assert_eq!(
        (entry.best_iops, entry.verdicts.as_str()),
        (1953.0, "saturated, write cliff")
    );
    assert_eq!(
        history.load_any(first).unwrap(),
        StoredResult::Pts(Box::new(resumed.clone()))
    );
    // A finished run is never replaced: the same result kept again is another row.
    let another = history.record_pts(&resumed).unwrap();
    assert_ne!(another, first);
}

/// A run started at another time, or on another target, is not the interrupted one.
#[test]
fn only_the_same_start_host_and_target_resume_a_partial_pts_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open_or_create(&dir.path().join("h.sqlite")).unwrap();
    let mut interrupted = saturation_run();
    interrupted.complete = false;
    let first = history.record_pts(&interrupted).unwrap();
    let mut later = saturation_run();
    later.started_at = "2026-12-05T10:00:00Z".into();
    let mut elsewhere = saturation_run();
    elsewhere.conditions.target.path = "/dev/other".into();
    let mut other_host = saturation_run();
    other_host.conditions.host = "other-host".into();
    for run in [&later, &elsewhere, &other_host] {
        assert_ne!(history.record_pts(run).unwrap(), first);
    }
    assert_eq!(history.list(&Filter::default()).unwrap().len(), 4);
    let partial = &history.list(&Filter::default()).unwrap()[3];
    assert!(partial.id == first && partial.partial);
}

/// `iopath pts --label`: listed with the run, and `@label:NAME` names it.
#[test]
fn a_pts_run_keeps_its_label() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open_or_create(&dir.path().join("h.sqlite")).unwrap();
    let mut labelled = saturation_run();
    labelled.label = Some("nvme-fw2".into());
    let id = history.record_pts(&labelled).unwrap();
    history.record(&fixtures::result("small")).unwrap();
    let by_label = Filter {
        label: Some("nvme-fw2".into()),
        ..Filter::default()
    };
    let listed = history.list(&by_label).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].id, listed[0].label.as_deref()),
        (id, Some("nvme-fw2"))
    );
    let named = history
        .resolve(
            &Reference::parse("@label:nvme-fw2").unwrap(),
            "@label:nvme-fw2",
        )
        .unwrap();
    assert_eq!(named, id);
    assert_eq!(
        history.load_any(id).unwrap(),
        StoredResult::Pts(Box::new(labelled))
    );
}
