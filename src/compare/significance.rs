//! Each figure with its 95 % confidence interval, and whether two runs differ beyond noise.
//!
//! MB/s and IOPS take the interval the analysis stored (`TestAnalysis::confidence`), or compute
//! it the same way when the run was not analysed: every full one-second interval of the
//! direction's series is one sample, and the interval is `± t(0.975, n−1) × s / √n`. A run
//! shorter than 10 s has a series of 250 ms intervals, whose correlation the interval allows
//! for ([`crate::analysis::short_run`]). Mean and
//! p99 latency take the same interval of the per-second mean and p99. Every interval is centred
//! on the test's own figure. Two runs differ in a metric only when their intervals do not
//! overlap; with no interval for either run the outcome is [`Outcome::Unknown`], never a win.
//! Overlapping intervals are "same" only when both are within ±[`SAME_WITHIN_PERCENT`] of their
//! figures; wider ones (two 2-second runs give ±1000 % and more) are [`Outcome::TooShort`],
//! with a note saying about how long each run would need to be.
//!
//! ```
//! use iopath::compare::{Metric, MetricValue, Outcome};
//! use iopath::compare::significance::outcome;
//! let before = MetricValue { value: 100.0, half_width: Some(3.0), samples: 10 };
//! let after = MetricValue { value: 105.0, half_width: Some(3.0), samples: 10 };
//! assert_eq!(outcome(Metric::Throughput, &before, &after), Outcome::Same);
//! let after = MetricValue { value: 110.0, half_width: Some(3.0), samples: 10 };
//! assert_eq!(outcome(Metric::Throughput, &before, &after), Outcome::Better);
//! assert_eq!(outcome(Metric::MeanLatency, &before, &after), Outcome::Worse);
//! // Two seconds each, 4.8x apart: the intervals overlap, but say nothing.
//! let before = MetricValue { value: 100.0, half_width: Some(1100.0), samples: 2 };
//! let after = MetricValue { value: 480.0, half_width: Some(5280.0), samples: 2 };
//! assert_eq!(outcome(Metric::Throughput, &before, &after), Outcome::TooShort);
//! ```

use super::comparison::{
    ComparedTest, FigureDirection, Metric, MetricChange, MetricValue, Outcome, RunChanges,
    SAME_WITHIN_PERCENT, TestFigures,
};
use super::matching::MatchedTest;
use crate::analysis::trust::{confidence_interval, direction_confidence};
use crate::result::{ConfidenceInterval, DirectionResult, RunResult, StopReason, TestResult};
use crate::targets::test_file::temporary_test_file_pid;

/// Whether `run` differs from `baseline` in `metric` beyond their 95 % intervals.
pub fn outcome(metric: Metric, baseline: &MetricValue, run: &MetricValue) -> Outcome {
    if baseline.value == run.value {
        return Outcome::Same;
    }
    let (Some((base_low, base_high)), Some((run_low, run_high))) =
        (baseline.bounds(), run.bounds())
    else {
        return Outcome::Unknown;
    };
    if base_low <= run_high && run_low <= base_high {
        let too_wide = [baseline, run].iter().any(|value| {
            value
                .half_width_percent()
                .is_none_or(|percent| percent > SAME_WITHIN_PERCENT)
        });
        return if too_wide {
            Outcome::TooShort
        } else {
            Outcome::Same
        };
    }
    if (run.value > baseline.value) == metric.higher_is_better() {
        Outcome::Better
    } else {
        Outcome::Worse
    }
}

/// The direction whose figures stand for a test across runs: reads and writes together when
/// any run mixed them, else the one direction every run did (see
/// [`FigureDirection::of`]).
pub fn figure_direction(tests: &[&TestResult]) -> FigureDirection {
    let reads = tests.iter().any(|test| test.read.io_count > 0);
    let writes = tests.iter().any(|test| test.write.io_count > 0);
    let trims = tests.iter().any(|test| test.trim.io_count > 0);
    match FigureDirection::of(reads, writes, trims) {
        // No run did I/O at all: reads and writes together, as for a mix.
        FigureDirection::Read if !reads => FigureDirection::Total,
        direction => direction,
    }
}

/// The direction's figures of `test`.
pub fn direction_of(test: &TestResult, direction: FigureDirection) -> &DirectionResult {
    test.figures(direction)
}

/// Per-second mean and p99 latencies of the full intervals of `direction` (those as long as
/// the longest, with at least one I/O).
pub fn latency_samples(direction: &DirectionResult) -> (Vec<f64>, Vec<f64>) {
    let full = direction
        .series
        .iter()
        .map(|point| point.duration_ns)
        .max()
        .unwrap_or(0);
    direction
        .series
        .iter()
        .filter(|point| full > 0 && point.duration_ns == full && point.io_count > 0)
        .map(|point| (point.mean_latency_ns as f64, point.p99_latency_ns as f64))
        .unzip()
}

fn half_width(interval: Option<&ConfidenceInterval>) -> Option<f64> {
    interval
        .map(|interval| interval.half_width)
        .filter(|half| half.is_finite())
}

/// The four figures of one test of one run, with their intervals.
pub fn test_figures(label: &str, test: &TestResult, direction: FigureDirection) -> TestFigures {
    let figures = direction_of(test, direction);
    let computed;
    let confidence = match &test.analysis {
        Some(analysis) => analysis.confidence.direction(direction),
        None => {
            computed = direction_confidence(figures);
            &computed
        }
    };
    let (means, p99s) = latency_samples(figures);
    // A short run's fine intervals are correlated: the same correction as for its rates.
    let fine = crate::analysis::short_run::fine_interval_ns(&figures.series);
    let latency_half = |samples: &[f64]| {
        let interval = match fine {
            Some(interval_ns) => {
                crate::analysis::short_run::correlated_interval(samples, interval_ns)
            }
            None => confidence_interval(samples),
        };
        half_width(interval.as_ref())
    };
    let count = |interval: Option<&ConfidenceInterval>| interval.map_or(0, |i| i.intervals);
    TestFigures {
        run: label.to_string(),
        bytes_per_second: MetricValue {
            value: figures.bytes_per_second,
            half_width: half_width(confidence.bytes_per_second.as_ref()),
            samples: count(confidence.bytes_per_second.as_ref()),
        },
        iops: MetricValue {
            value: figures.iops,
            half_width: half_width(confidence.iops.as_ref()),
            samples: count(confidence.iops.as_ref()),
        },
        mean_latency_ns: MetricValue {
            value: figures.latency.mean_ns,
            half_width: latency_half(&means),
            samples: means.len() as u32,
        },
        p99_latency_ns: MetricValue {
            value: figures.latency.percentile("99") as f64,
            half_width: latency_half(&p99s),
            samples: p99s.len() as u32,
        },
        verdict: test.analysis.as_ref().map(|analysis| analysis.verdict),
        stopped_early: test.stop_reason != StopReason::Completed,
        error_count: test.errors.count,
    }
}

/// Every metric of `run` against `baseline`.
pub fn changes(baseline: &TestFigures, run: &TestFigures) -> RunChanges {
    RunChanges {
        run: run.run.clone(),
        against: baseline.run.clone(),
        metrics: Metric::ALL
            .iter()
            .map(|metric| {
                let (base, value) = (baseline.value(*metric), run.value(*metric));
                MetricChange {
                    metric: *metric,
                    ratio: (base.value > 0.0).then(|| value.value / base.value),
                    difference: value.value - base.value,
                    outcome: outcome(*metric, base, value),
                }
            })
            .collect(),
    }
}

/// One matched test across `results`, labelled `labels`, against run `baseline`.
pub fn compare_test(
    matched: &MatchedTest,
    results: &[&RunResult],
    labels: &[&str],
    baseline: usize,
) -> ComparedTest {
    let tests: Vec<&TestResult> = matched
        .test_indexes
        .iter()
        .zip(results)
        .map(|(index, result)| &result.tests[*index])
        .collect();
    let direction = figure_direction(&tests);
    let figures: Vec<TestFigures> = tests
        .iter()
        .zip(labels)
        .map(|(test, label)| test_figures(label, test, direction))
        .collect();
    let changes: Vec<RunChanges> = figures
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != baseline)
        .map(|(_, run)| changes(&figures[baseline], run))
        .collect();
    let mut notes = Vec::new();
    for (index, test) in tests.iter().enumerate() {
        if index != baseline
            && let Some(note) =
                workload_difference(tests[baseline], test, results[baseline], results[index])
        {
            notes.push(format!(
                "{}: {note} ({}: {})",
                labels[index],
                labels[baseline],
                describe(tests[baseline])
            ));
        }
    }
    for change in &changes {
        if let Some(note) = too_short_note(change, &figures, baseline, &tests) {
            notes.push(note);
        }
    }
    ComparedTest {
        name: matched.key.display_name(),
        sweep: matched.key.sweep.clone(),
        direction,
        figures,
        changes,
        notes,
    }
}

/// For a run whose throughput could not be told from the baseline's (intervals too wide),
/// a note with both intervals and about how long each run would need to be for overlapping
/// intervals to mean "the same within ±10 %".
fn too_short_note(
    change: &RunChanges,
    figures: &[TestFigures],
    baseline: usize,
    tests: &[&TestResult],
) -> Option<String> {
    let throughput = change
        .metrics
        .iter()
        .find(|metric| metric.metric == Metric::Throughput)?;
    if throughput.outcome != Outcome::TooShort {
        return None;
    }
    let run = figures.iter().position(|f| f.run == change.run)?;
    let shown = |value: &MetricValue| {
        value
            .half_width_percent()
            .map_or("no interval".to_string(), |percent| {
                format!("± {percent:.0} %")
            })
    };
    let (base, other) = (
        &figures[baseline].bytes_per_second,
        &figures[run].bytes_per_second,
    );
    let interval_seconds = |test: &TestResult| {
        test.total
            .series
            .iter()
            .map(|point| point.duration_ns)
            .max()
            .filter(|ns| *ns > 0)
            .map_or(1.0, |ns| ns as f64 / 1e9)
    };
    let needed = [(base, tests[baseline]), (other, tests[run])]
        .iter()
        .filter_map(|(value, test)| {
            Some(value.samples_for(SAME_WITHIN_PERCENT)? as f64 * interval_seconds(test))
        })
        .fold(None, |most: Option<f64>, seconds| {
            Some(most.map_or(seconds, |m| m.max(seconds)))
        });
    let how_long = match needed {
        Some(seconds) => format!(
            "runs of about {} each would tell a {SAME_WITHIN_PERCENT:.0} % difference",
            rounded_duration(seconds)
        ),
        None => "run each for longer (at least two full seconds gives an interval)".to_string(),
    };
    Some(format!(
        "{}: too short to tell from {} (MB/s {} against {}): not \"same\"; {how_long}",
        change.run,
        change.against,
        shown(other),
        shown(base)
    ))
}

/// `seconds` rounded up for a note: `40 s`, `12 min`, `3 h`.
fn rounded_duration(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{} s", seconds.ceil() as u64)
    } else if seconds < 7200.0 {
        format!("{} min", (seconds / 60.0).ceil() as u64)
    } else {
        format!("{} h", (seconds / 3600.0).ceil() as u64)
    }
}

/// The workload of a test in a few words: each job's summary, engine, and worker threads ×
/// queue depth in effect.
fn describe(test: &TestResult) -> String {
    test.jobs
        .iter()
        .map(|job| {
            format!(
                "{}, {}, {} × QD {}",
                job.workload.summary(),
                job.engine.name,
                job.worker_threads,
                job.queue_depth_per_worker
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What differs between the workloads of two tests of the same name (or of two single-test
/// runs), or `None` when they are alike (seeds aside). `base_run` and `run` hold the tests, for
/// their targets.
fn workload_difference(
    baseline: &TestResult,
    other: &TestResult,
    base_run: &RunResult,
    run: &RunResult,
) -> Option<String> {
    if baseline.jobs.len() != other.jobs.len() {
        return Some(format!(
            "{} jobs instead of {}: {}",
            other.jobs.len(),
            baseline.jobs.len(),
            describe(other)
        ));
    }
    let mut fields: Vec<String> = Vec::new();
    let mut add = |field: String| {
        if !fields.contains(&field) {
            fields.push(field);
        }
    };
    for (base_job, job) in baseline.jobs.iter().zip(&other.jobs) {
        if let (Ok(serde_json::Value::Object(base)), Ok(serde_json::Value::Object(this))) = (
            serde_json::to_value(&base_job.workload),
            serde_json::to_value(&job.workload),
        ) {
            for (key, value) in &this {
                if key == "seed" || base.get(key) == Some(value) {
                    continue;
                }
                if key == "access" {
                    access_differences(&base_job.workload.access, &job.workload.access)
                        .into_iter()
                        .for_each(&mut add);
                } else {
                    add(field_words(key));
                }
            }
        }
        if base_job.engine.name != job.engine.name {
            add("engine".into());
        }
        let in_effect =
            |job: &crate::result::JobResult| (job.worker_threads, job.queue_depth_per_worker);
        let workload_says_so = base_job.workload.queue_depth != job.workload.queue_depth
            || base_job.workload.workers != job.workload.workers;
        if in_effect(base_job) != in_effect(job) && !workload_says_so {
            add("threads × QD".into());
        }
        if base_job.direct != job.direct {
            add("direct".into());
        }
        let paths = |job: &crate::result::JobResult, result: &RunResult| -> Vec<String> {
            job.target_indexes
                .iter()
                .filter_map(|index| result.targets.get(*index))
                .map(|target| target.path.clone())
                .collect()
        };
        let temporary = |paths: &[String]| {
            paths.iter().all(|path| {
                std::path::Path::new(path)
                    .file_name()
                    .and_then(temporary_test_file_pid)
                    .is_some()
            })
        };
        let (base_paths, these_paths) = (paths(base_job, base_run), paths(job, run));
        if base_paths != these_paths && !(temporary(&base_paths) && temporary(&these_paths)) {
            add(format!("target ({})", these_paths.join(", ")));
        }
    }
    let verb = if fields.len() == 1 {
        "differs"
    } else {
        "differ"
    };
    (!fields.is_empty()).then(|| format!("{} {verb}: {}", fields.join(", "), describe(other)))
}

/// A workload field's key in words: `queue_depth` → `queue depth`, `ramp_ns` → `ramp`.
fn field_words(key: &str) -> String {
    let key = key
        .strip_suffix("_ns")
        .or_else(|| key.strip_suffix("_bytes"))
        .unwrap_or(key);
    key.replace('_', " ")
}

/// What differs between two access specifications, in words (block size, read %, …).
fn access_differences(
    base: &crate::result::AccessSpec,
    other: &crate::result::AccessSpec,
) -> Vec<String> {
    if base.lines.len() != other.lines.len() {
        return vec!["access specification".into()];
    }
    let mut differences: Vec<String> = Vec::new();
    for (a, b) in base.lines.iter().zip(&other.lines) {
        let checks = [
            (a.size_bytes != b.size_bytes, "block size"),
            (a.weight != b.weight, "size mix"),
            (a.read_percent != b.read_percent, "read %"),
            (a.random_percent != b.random_percent, "random %"),
            // An alignment that follows the block size (the default) is no difference of its own.
            (
                a.alignment_bytes != b.alignment_bytes
                    && !(a.alignment_bytes == a.size_bytes && b.alignment_bytes == b.size_bytes),
                "alignment",
            ),
            (
                a.burst_length != b.burst_length || a.delay_ns != b.delay_ns,
                "burst",
            ),
        ];
        for (differs, name) in checks {
            if differs && !differences.iter().any(|known| known == name) {
                differences.push(name.into());
            }
        }
    }
    differences
}
