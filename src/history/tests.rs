use super::*;
use crate::support::fixtures;

fn with_label(name: &str, label: Option<&str>) -> RunResult {
    let mut result = fixtures::result(name);
    result.label = label.map(str::to_string);
    result
}

#[test]
fn a_recorded_run_reads_back_whole_and_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep/dir/history.sqlite");
    let mut history = History::open_or_create(&path).unwrap();
    let result = fixtures::result("network");
    let id = history.record(&result).unwrap();
    assert_eq!(history.load(id).unwrap(), result);
    let listed = history.list(&Filter::default()).unwrap();
    assert_eq!(listed.len(), 1);
    let run = &listed[0];
    assert_eq!(run.id, id);
    assert_eq!(run.started_at, result.started_at);
    assert_eq!(run.host, result.host.hostname);
    assert_eq!(run.test_count as usize, result.tests.len());
    assert!(run.best_bytes_per_second > 0.0);
    assert_eq!(run.verdicts, "link-bound");
}

#[test]
fn a_run_of_many_alike_files_keeps_one_target_entry_and_reads_back_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let mut history = History::open_or_create(&path).unwrap();
    let mut result = fixtures::result("small");
    let alone = result.targets[0].clone();
    let files = (0..10_000).map(|n| {
        crate::result::TargetInfo::unexamined(
            format!("/data/many/job.0.{n}"),
            crate::result::TargetKind::File,
            4096,
        )
    });
    result.targets = std::iter::once(alone.clone()).chain(files).collect();
    let id = history.record(&result).unwrap();
    assert_eq!(history.load(id).unwrap().targets.len(), 10_001);
    let rows: i64 = history
        .connection
        .query_row(
            "SELECT count(*) FROM run_targets WHERE run_id = ?1",
            [id],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(rows, 2, "the lone target and the run of alike files");
    let listed = &history.list(&Filter::default()).unwrap()[0];
    assert_eq!(
        listed.targets,
        format!("{}, /data/many/job.0.0 (+9999 more)", alone.path)
    );
    let found = |text: &str| {
        let filter = Filter {
            target: Some(text.into()),
            ..Filter::default()
        };
        history.list(&filter).unwrap().len()
    };
    assert_eq!(found("/data/many/"), 1, "by the files' directory");
    assert_eq!(found(&alone.path), 1, "by the lone target");
    assert_eq!(found("/data/other/"), 0);
}

#[test]
fn filters_and_references_find_the_runs_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open_or_create(&dir.path().join("h.sqlite")).unwrap();
    let fc = history.record(&with_label("small", Some("fc"))).unwrap();
    let iscsi = history.record(&with_label("sweep", Some("iscsi"))).unwrap();
    let newest = history.record(&with_label("mixed", None)).unwrap();
    let resolve = |text: &str| history.resolve(&Reference::parse(text).unwrap(), text);
    assert_eq!(resolve("@last").unwrap(), newest);
    assert_eq!(resolve("@-1").unwrap(), iscsi);
    assert_eq!(resolve("@label:fc").unwrap(), fc);
    assert_eq!(resolve(&format!("@{iscsi}")).unwrap(), iscsi);
    for missing in ["@-3", "@label:nfs", "@99"] {
        let error = resolve(missing).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{missing}: no such run in the history")
        );
    }
    let label = Filter {
        label: Some("iscsi".into()),
        ..Filter::default()
    };
    let ids = |filter: &Filter| -> Vec<i64> {
        history.list(filter).unwrap().iter().map(|r| r.id).collect()
    };
    assert_eq!(ids(&label), [iscsi]);
    assert_eq!(ids(&Filter::default()), [newest, iscsi, fc]);
    let limited = Filter {
        limit: Some(2),
        ..Filter::default()
    };
    assert_eq!(ids(&limited), [newest, iscsi]);
    let target = fixtures::result("small").targets[0].path.clone();
    let by_target = Filter {
        target: Some(target.clone()),
        ..Filter::default()
    };
    assert!(ids(&by_target).contains(&fc));
    let nowhere = Filter {
        target: Some("/no/such/target".into()),
        ..Filter::default()
    };
    assert!(ids(&nowhere).is_empty());
    let future = Filter {
        since_epoch_seconds: Some(u64::MAX >> 2),
        ..Filter::default()
    };
    assert!(ids(&future).is_empty());
    let past = Filter {
        since_epoch_seconds: Some(0),
        ..Filter::default()
    };
    assert_eq!(ids(&past).len(), 3);
}

#[test]
fn a_database_from_a_newer_iopath_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    drop(History::open_or_create(&path).unwrap());
    let newer = schema::current_version() + 1;
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", newer)
        .unwrap();
    let error = History::open_existing(&path).err().unwrap();
    assert!(
        matches!(error, HistoryError::Newer { found, .. } if found == newer),
        "{error}"
    );
    assert!(error.to_string().contains("newer iopath"), "{error}");
}

#[test]
fn a_damaged_database_is_reported_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let garbage = vec![0x5a_u8; 8192];
    std::fs::write(&path, &garbage).unwrap();
    let error = History::open_or_create(&path).err().unwrap();
    assert!(matches!(error, HistoryError::Corrupt(_)), "{error}");
    assert!(error.to_string().contains("left untouched"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
}

#[test]
fn a_missing_database_is_not_created_by_readers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    assert!(matches!(
        History::open_existing(&path),
        Err(HistoryError::Missing)
    ));
    assert!(!path.exists());
}

#[test]
fn an_old_database_is_migrated_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    Connection::open(&path).unwrap();
    let mut first = History::open_or_create(&path).unwrap();
    first.record(&fixtures::result("small")).unwrap();
    let second = History::open_existing(&path).unwrap();
    assert_eq!(
        schema::read_version(&second.connection).unwrap(),
        schema::current_version()
    );
    assert_eq!(second.list(&Filter::default()).unwrap().len(), 1);
}

#[test]
fn writers_on_separate_connections_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let result = fixtures::result("small");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let mut history = History::open_or_create(&path).unwrap();
                for _ in 0..5 {
                    history.record(&result).unwrap();
                }
            });
        }
    });
    let history = History::open_existing(&path).unwrap();
    assert_eq!(history.list(&Filter::default()).unwrap().len(), 20);
}

#[test]
fn since_takes_dates_times_and_ages() {
    assert_eq!(
        parse_since("2026-11-30T08:00:00Z", 0).unwrap(),
        1_796_025_600
    );
    assert_eq!(parse_since("2026-11-30", 0).unwrap(), 1_795_996_800);
    assert_eq!(
        parse_since("7d", 1_000_000).unwrap(),
        1_000_000 - 7 * 86_400
    );
    assert_eq!(parse_since("30m", 100).unwrap(), 0);
    for bad in ["", "d", "7x", "2026-13-01", "-1d"] {
        assert!(parse_since(bad, 0).is_err(), "{bad}");
    }
}

#[test]
fn the_location_follows_the_environment() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        }
    };
    let at = |pairs| location(env(pairs)).unwrap();
    assert_eq!(
        at(&[("IOPATH_HISTORY", "/x/h.db"), ("HOME", "/h")]),
        Path::new("/x/h.db")
    );
    assert_eq!(
        at(&[("XDG_DATA_HOME", "/d"), ("HOME", "/h")]),
        Path::new("/d/iopath/history.sqlite")
    );
    assert_eq!(
        at(&[("XDG_DATA_HOME", "relative"), ("HOME", "/h")]),
        Path::new("/h/.local/share/iopath/history.sqlite")
    );
    assert!(matches!(location(env(&[])), Err(HistoryError::NoLocation)));
}

#[test]
fn a_trend_follows_one_test_and_compares_each_run_with_the_one_before() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open_or_create(&dir.path().join("h.sqlite")).unwrap();
    let base = fixtures::result("small");
    let name = base.tests[0].name.clone();
    let mut faster = base.clone();
    let test = &mut faster.tests[0];
    for direction in [&mut test.read, &mut test.write, &mut test.total] {
        direction.bytes_per_second *= 3.0;
        direction.iops *= 3.0;
    }
    faster.tests[0].analysis = None;
    let first = history.record(&base).unwrap();
    history.record(&fixtures::result("network")).unwrap();
    let second = history.record(&base).unwrap();
    let third = history.record(&faster).unwrap();
    let points = trend::trend(&history, &name, &Filter::default()).unwrap();
    let ids: Vec<i64> = points.iter().map(|p| p.id).collect();
    assert_eq!(ids, [first, second, third]);
    assert!(points[0].against_previous.is_none());
    let outcome = |point: &trend::TrendPoint| {
        point
            .against_previous
            .as_ref()
            .unwrap()
            .metric(crate::compare::Metric::Throughput)
            .unwrap()
            .outcome
    };
    assert_eq!(outcome(&points[1]), crate::compare::Outcome::Same);
    assert_eq!(outcome(&points[2]), crate::compare::Outcome::Better);
    let limited = Filter {
        limit: Some(2),
        ..Filter::default()
    };
    let ids: Vec<i64> = trend::trend(&history, &name, &limited)
        .unwrap()
        .iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, [second, third]);
    assert!(
        trend::trend(&history, "no such test", &Filter::default())
            .unwrap()
            .is_empty()
    );
}
