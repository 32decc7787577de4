//! Reasons to doubt a result, and the confidence intervals of its rates.
//!
//! The confidence interval of a rate comes from the per-second series: every full interval's
//! rate is one sample (the last, shorter interval is left out), and the 95 % interval of their
//! mean is `mean ± t(0.975, n−1) × s / √n` (Student t, `s` the sample standard deviation).
//! The series is not steady when a step in it, or a least-squares line through it, is
//! significant at the 95 % level and moves the rate by 10 % or more; the note then says what
//! the series did ([`super::series_shape`]): a step as a step, a line only where one fits.
//!
//! ```
//! use iopath::analysis::trust::{confidence_interval, student_t_975};
//! assert!((student_t_975(9) - 2.2622).abs() < 1e-4);
//! let ci = confidence_interval(&[100.0, 102.0, 98.0, 101.0, 99.0]).unwrap();
//! assert_eq!(ci.mean, 100.0);
//! assert!((ci.half_width - 2.7764 * (2.5f64).sqrt() / 5f64.sqrt()).abs() < 1e-3);
//! ```

use crate::result::{
    ConfidenceInterval, DirectionConfidence, DirectionResult, FigureDirection, HopUtilisation,
    JobResult, StopReason, StoragePath, TargetInfo, TestConfidence, TestResult, TrustKind,
    TrustNote,
};
use crate::units::{format_bytes, format_percent, format_rate};
use std::collections::HashMap;

pub use super::sample_interval::{confidence_interval, full_interval_rates};
pub use super::series_shape::{TREND_MIN_INTERVALS, Trend, trend};
pub use super::student_t::student_t_975;

/// A confidence interval wider than this (half-width, percent of the mean) means the run was
/// too short for the variation seen.
pub const WIDE_INTERVAL_PERCENT: f64 = 5.0;
/// The half-width a longer run is advised to reach, percent.
pub const TARGET_INTERVAL_PERCENT: f64 = 2.0;
/// A trend that moves the rate by this much over the run (and is significant) is "not steady".
pub const TREND_PERCENT: f64 = 10.0;
/// A rate this far above a hop's capacity (percent of it), or beyond its confidence interval,
/// is "above capacity".
pub const ABOVE_CAPACITY_MARGIN_PERCENT: f64 = 2.0;

/// Confidence intervals of one direction's rates.
pub fn direction_confidence(direction: &DirectionResult) -> DirectionConfidence {
    if direction.io_count == 0 {
        return DirectionConfidence::default();
    }
    let (bytes, iops) = full_interval_rates(&direction.series);
    match super::short_run::fine_interval_ns(&direction.series) {
        Some(interval_ns) => DirectionConfidence {
            bytes_per_second: super::short_run::correlated_interval(&bytes, interval_ns),
            iops: super::short_run::correlated_interval(&iops, interval_ns),
        },
        None => DirectionConfidence {
            bytes_per_second: confidence_interval(&bytes),
            iops: confidence_interval(&iops),
        },
    }
}

/// Confidence intervals of a test.
pub fn test_confidence(test: &TestResult) -> TestConfidence {
    TestConfidence {
        read: direction_confidence(&test.read),
        write: direction_confidence(&test.write),
        trim: direction_confidence(&test.trim),
        total: direction_confidence(&test.total),
    }
}

/// The `not_steady` note of a series of per-second rates, if it moved: a step said as a step
/// (after how long, from what to what), a straight line only where one fits, else where it
/// started and ended. It moved when the step is significant and changes the rate by
/// [`TREND_PERCENT`] or more, or when a fitted line's slope is significant and moves the rate
/// by that much of its mean.
pub fn unsteady(rates: &[f64]) -> Option<String> {
    use super::series_shape::{Shape, change_percent, shape};
    let line_moved = trend(rates)
        .is_some_and(|trend| trend.significant && trend.change_percent.abs() >= TREND_PERCENT);
    let advice = "a longer ramp or --steady would help";
    let signed = |change: f64| format!("{:+.0} %", change.round() + 0.0);
    match shape(rates) {
        Shape::Step {
            seconds_before,
            seconds_after,
            before,
            after,
            significant,
        } => {
            let change = change_percent(before, after);
            (significant && change.abs() >= TREND_PERCENT).then(|| {
                format!(
                    "not steady: throughput stepped {} after {seconds_before} s, from {} to {} ({}), and stayed there for the last {seconds_after} s: the mean mixes both levels; {advice}",
                    if after < before { "down" } else { "up" },
                    format_rate(before),
                    format_rate(after),
                    signed(change)
                )
            })
        }
        Shape::Line {
            first,
            last,
            r_squared,
            ..
        } => line_moved.then(|| {
            let change = change_percent(first, last);
            format!(
                "not steady: throughput {} {:.0} % over {} s along a straight line (fitted {} → {}, R² {r_squared:.2}); {advice}",
                if change > 0.0 { "rose" } else { "fell" },
                change.abs(),
                rates.len(),
                format_rate(first),
                format_rate(last)
            )
        }),
        Shape::Uneven {
            seconds_before,
            seconds_after,
            before,
            after,
            lowest,
            highest,
        } => line_moved.then(|| {
            format!(
                "not steady: throughput averaged {} over the first {seconds_before} s and {} over the last {seconds_after} s ({}), with seconds from {} to {}; neither one step nor a straight line fits; {advice}",
                format_rate(before),
                format_rate(after),
                signed(change_percent(before, after)),
                format_rate(lowest),
                format_rate(highest)
            )
        }),
        Shape::Flat => None,
    }
}

/// The `too_short` note of an interval wider than [`WIDE_INTERVAL_PERCENT`]: how long a run
/// would give [`TARGET_INTERVAL_PERCENT`], as the interval shrinks with 1/√n; but when the
/// rate `stepped`, the width is the distance between two levels, which no longer run of the
/// same kind shrinks as noise does, and the note says so instead.
pub fn wide_interval_note(ci: &ConfidenceInterval, stepped: bool) -> String {
    let seconds = ci.measured_seconds();
    let head = format!(
        "±{:.1} % at 95 % confidence from {} s",
        ci.half_width_percent,
        super::short_run::format_seconds(seconds)
    );
    if stepped {
        return format!(
            "{head}: the rate stepped (below), so the interval spans two levels rather than noise; a longer run narrows it only once it measures the later level alone"
        );
    }
    // The interval narrows as 1/√n, and n grows with the run's length (fine intervals'
    // effective samples too).
    let needed = (seconds * (ci.half_width_percent / TARGET_INTERVAL_PERCENT).powi(2)).ceil();
    format!(
        "{head}: too short for the variation seen; about {needed:.0} s would give ±{TARGET_INTERVAL_PERCENT:.0} %"
    )
}

/// What the trust checks look at.
pub(super) struct TrustInputs<'a> {
    pub test: &'a TestResult,
    /// Every target of the run, and its path (same order).
    pub targets: &'a [TargetInfo],
    pub paths: &'a [StoragePath],
    /// Indexes of the targets this test used.
    pub target_indexes: &'a [usize],
    pub hops: &'a [HopUtilisation],
    pub confidence: &'a TestConfidence,
    pub memory_available_bytes: Option<u64>,
    /// The rate stepped down during the test (a burst bucket, a write cliff).
    pub rate_step: Option<&'a crate::result::RateStep>,
}

/// The direction a test is about: both when mixed, else the one that moved.
pub(super) fn main_direction(test: &TestResult) -> (&DirectionResult, &'static str) {
    let direction = test.main_direction();
    let name = match direction {
        FigureDirection::Total => "total",
        other => other.name(),
    };
    (test.figures(direction), name)
}

/// Bytes a test can touch: the region of each target its jobs move data on, counted once per
/// target (the file-operation engines move none).
pub(super) fn working_set_bytes(test: &TestResult, targets: &[TargetInfo]) -> u64 {
    // Keyed by target: a job of 100 000 files looks each up once, not against every other.
    let mut regions: HashMap<usize, u64> = HashMap::new();
    for job in test.jobs.iter().filter(|job| moves_data(job)) {
        for &index in &job.target_indexes {
            let size = targets.get(index).map_or(0, |t| t.size_bytes);
            let region = job
                .workload
                .region_size_bytes
                .unwrap_or_else(|| size.saturating_sub(job.workload.region_offset_bytes));
            let largest = regions.entry(index).or_insert(region);
            *largest = (*largest).max(region);
        }
    }
    regions
        .values()
        .fold(0u64, |sum, region| sum.saturating_add(*region))
}

/// Whether `job` moves data (every engine but the file-operation ones: `filecreate`,
/// `filestat`, … create, look up or remove a file per I/O).
fn moves_data(job: &JobResult) -> bool {
    !job.workload.engine.is_file_operation()
}

/// The most sparse targets named one by one in a test's notes; the others are counted in one
/// more note, with their sizes added up.
const SPARSE_TARGETS_NAMED: usize = 3;

/// The notes about `sparse` targets (each with its allocated bytes): one per target up to
/// [`SPARSE_TARGETS_NAMED`], then one for the rest (a job over thousands of sparse files).
fn sparse_notes(sparse: &[(&TargetInfo, u64)]) -> Vec<String> {
    let mut notes: Vec<String> = sparse
        .iter()
        .take(SPARSE_TARGETS_NAMED)
        .map(|(target, allocated)| {
            format!(
                "{} is sparse ({} of {} allocated): reads of its holes never reach the device",
                target.path,
                format_bytes(*allocated),
                format_bytes(target.size_bytes)
            )
        })
        .collect();
    let rest = sparse.get(SPARSE_TARGETS_NAMED..).unwrap_or_default();
    if !rest.is_empty() {
        let allocated = rest.iter().map(|(_, allocated)| allocated).sum::<u64>();
        let size = rest
            .iter()
            .map(|(target, _)| target.size_bytes)
            .sum::<u64>();
        notes.push(format!(
            "{} more targets are sparse ({} of {} allocated in all): reads of their holes never reach the device",
            rest.len(),
            format_bytes(allocated),
            format_bytes(size)
        ));
    }
    notes
}

/// Every trust note of a test.
pub(super) fn trust_notes(inputs: &TrustInputs) -> Vec<TrustNote> {
    let test = inputs.test;
    let mut notes = Vec::new();
    let mut add = |kind, message: String| notes.push(TrustNote { kind, message });
    if test.stop_reason != StopReason::Completed {
        add(
            TrustKind::Partial,
            format!(
                "stopped early ({}): the figures cover {:.1} s",
                match test.stop_reason {
                    StopReason::Interrupted => "interrupted",
                    _ => "an I/O error",
                },
                test.measured_ns as f64 / 1e9
            ),
        );
    }
    if test.errors.count > 0 {
        add(
            TrustKind::Errors,
            format!(
                "{} I/O errors: failed I/Os are not in the rates",
                test.errors.count
            ),
        );
    }
    // A page cache between iopath and the device matters only to jobs that move data: a
    // file-operation engine's create, look-up or removal is a metadata operation.
    let buffered = test.jobs.iter().any(|job| moves_data(job) && !job.direct);
    let reads = test
        .jobs
        .iter()
        .any(|job| moves_data(job) && job.read.io_count > 0);
    if buffered {
        add(
            TrustKind::BufferedIo,
            "buffered I/O (no O_DIRECT): the page cache sits between iopath and the device; reads may come from memory and writes may not have reached the device".into(),
        );
        if let Some(note) =
            super::hidden_queue::cache_served(test, inputs.paths, inputs.target_indexes)
        {
            add(TrustKind::BufferedIo, note);
        }
        let working_set = working_set_bytes(test, inputs.targets);
        if reads
            && let Some(available) = inputs.memory_available_bytes
            && working_set > 0
            && working_set <= available
        {
            add(
                TrustKind::WorkingSetInMemory,
                format!(
                    "the working set ({}) fits in free memory ({}): buffered reads can be served from the page cache",
                    format_bytes(working_set),
                    format_bytes(available)
                ),
            );
        }
    }
    for &index in inputs.target_indexes {
        if let Some(inner) = inputs.paths.get(index).and_then(|path| {
            path.hops.iter().find(|hop| {
                hop.kind == crate::result::HopKind::PageCache
                    && hop.key != super::path::PAGE_CACHE_KEY
            })
        }) {
            add(
                TrustKind::BufferedIo,
                format!(
                    "the path has a page cache below the target ({}): reads may come from memory even with O_DIRECT",
                    inner.description
                ),
            );
        }
    }
    let main_ci = inputs.confidence.direction(test.main_direction());
    let margin = main_ci
        .bytes_per_second
        .as_ref()
        .map_or(0.0, |ci| ci.half_width_percent)
        .max(ABOVE_CAPACITY_MARGIN_PERCENT);
    let compression = super::written_data::compression_reason(test);
    for hop in inputs.hops {
        if hop.utilisation_percent > 100.0 + margin {
            let cache = |place: &str| match compression {
                Some(reason) => format!("a cache or {reason} {place} it"),
                None => {
                    format!("a cache {place} it (the data written neither compresses nor repeats)")
                }
            };
            let why = if hop.below_page_cache {
                "buffered I/O was served by the page cache above it".to_string()
            } else if hop.declared {
                format!("{}, or the declared figure is too low", cache("behind"))
            } else {
                format!("{}, or a discovered figure is wrong", cache("below"))
            };
            add(
                TrustKind::AboveCapacity,
                format!(
                    "{} is {} of what {} can carry ({}): {why}",
                    format_rate(
                        hop.inbound_bytes_per_second
                            .max(hop.outbound_bytes_per_second)
                    ),
                    format_percent(hop.utilisation_percent),
                    hop.hop_name,
                    format_rate(hop.capacity_bytes_per_second as f64)
                ),
            );
        }
    }
    if reads {
        let mut sparse = Vec::new();
        for &index in inputs.target_indexes {
            let (Some(target), Some(path)) = (inputs.targets.get(index), inputs.paths.get(index))
            else {
                continue;
            };
            if path.first_blocks_all_zero == Some(true) && target.filesystem.is_none() {
                add(
                    TrustKind::NeverWritten,
                    format!(
                        "the first 64 KiB of {} read as zeros: it may never have been written, and thin or sparse volumes answer such reads without touching the media",
                        target.path
                    ),
                );
            } else if let Some(allocated) = path.allocated_bytes
                && target.size_bytes > 0
                && allocated < target.size_bytes / 2
            {
                sparse.push((target, allocated));
            }
        }
        for note in sparse_notes(&sparse) {
            add(TrustKind::NeverWritten, note);
        }
    }
    if test.write.io_count > 0 {
        for target in inputs
            .target_indexes
            .iter()
            .filter_map(|&index| inputs.targets.get(index))
        {
            if let Some(content @ crate::result::CreatedContent::Sized { .. }) =
                target.created_content
            {
                add(
                    TrustKind::FirstWrites,
                    format!(
                        "{} was created for the run without data ({}): a write that reaches a block for the first time also allocates it, which a write over data does not (as in fio; --overwrite, or fio's overwrite=1, fills the file first)",
                        target.path,
                        content.describe()
                    ),
                );
            }
        }
    }
    for note in super::written_data::reducible_data_notes(test) {
        add(TrustKind::ReducibleData, note);
    }
    let (direction, _) = main_direction(test);
    if direction.io_count > 0 {
        // Steadiness is judged second by second, a short run's finer series added up.
        let rates = super::short_run::per_second_rates(&direction.series);
        let moved = unsteady(&rates);
        let stepped = moved.is_some()
            && matches!(
                super::series_shape::shape(&rates),
                super::series_shape::Shape::Step { .. }
            );
        match &main_ci.bytes_per_second {
            None => add(
                TrustKind::TooShort,
                "fewer than two full seconds: no confidence interval; run 5 s or more".into(),
            ),
            Some(ci) if ci.half_width_percent > WIDE_INTERVAL_PERCENT => {
                add(TrustKind::TooShort, wide_interval_note(ci, stepped));
            }
            Some(_) => {}
        }
        if let Some(step) = inputs.rate_step {
            // The step said as what it is, in place of the plain step.
            let steady_after = test
                .steady_state
                .as_ref()
                .and_then(|steady| steady.attained_after_ns)
                .map(|ns| ns as f64 / 1e9);
            let kind = match step {
                crate::result::RateStep::BurstBucket(_) => TrustKind::BurstBucket,
                crate::result::RateStep::WriteCliff(_) => TrustKind::WriteCliff,
            };
            add(kind, super::bucket_or_cliff::note(step, steady_after));
        } else if let Some(message) = moved {
            add(TrustKind::NotSteady, message);
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_targets_past_three_are_counted_in_one_note() {
        let targets: Vec<TargetInfo> = (0..1000)
            .map(|n| {
                let kind = crate::result::TargetKind::File;
                TargetInfo::unexamined(format!("/data/f.{n}"), kind, 1 << 20)
            })
            .collect();
        let sparse: Vec<(&TargetInfo, u64)> = targets.iter().map(|t| (t, 4096)).collect();
        let notes = sparse_notes(&sparse);
        assert_eq!(notes.len(), 4);
        assert!(notes[2].starts_with("/data/f.2 is sparse (4.0 KiB of 1.0 MiB"));
        assert_eq!(
            notes[3],
            "997 more targets are sparse (3.9 MiB of 997.0 MiB allocated in all): reads of their holes never reach the device"
        );
        assert_eq!(sparse_notes(&sparse[..3]).len(), 3);
    }
    use crate::result::IntervalPoint;

    fn point(index: u64, bytes: u64, duration_ns: u64) -> IntervalPoint {
        IntervalPoint {
            start_ns: index * 1_000_000_000,
            duration_ns,
            bytes,
            io_count: bytes / 4096,
            mean_latency_ns: 100_000,
            p99_latency_ns: 200_000,
            latency_buckets: Vec::new(),
        }
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        assert_eq!(student_t_975(1), 12.7062);
        assert_eq!(student_t_975(10), 2.2281);
        assert_eq!(student_t_975(30), 2.0423);
        for (degrees, expected) in [(40, 2.0211), (60, 2.0003), (120, 1.9799), (1000, 1.9623)] {
            let value = student_t_975(degrees);
            assert!((value - expected).abs() < 2e-4, "{degrees}: {value}");
        }
        assert!(student_t_975(0).is_infinite());
    }

    #[test]
    fn intervals_use_only_full_seconds() {
        let series = vec![
            point(0, 100_000_000, 1_000_000_000),
            point(1, 110_000_000, 1_000_000_000),
            point(2, 90_000_000, 1_000_000_000),
            point(3, 5_000_000, 300_000_000),
        ];
        let (bytes, iops) = full_interval_rates(&series);
        assert_eq!(bytes, [100e6, 110e6, 90e6]);
        assert_eq!(iops.len(), 3);
        let ci = confidence_interval(&bytes).unwrap();
        assert_eq!(ci.intervals, 3);
        assert!((ci.mean - 100e6).abs() < 1.0);
        // s = 10 MB/s, t(0.975, 2) = 4.3027: ±24.84 MB/s.
        assert!(
            (ci.half_width - 4.3027 * 10e6 / 3f64.sqrt()).abs() < 1.0,
            "{ci:?}"
        );
        assert!((ci.half_width_percent - 24.84).abs() < 0.01);
        assert!(confidence_interval(&[5.0]).is_none());
        assert!(confidence_interval(&[0.0, 0.0]).is_none());
        assert_eq!(full_interval_rates(&[]), (vec![], vec![]));
    }

    #[test]
    fn a_trend_must_be_large_and_significant() {
        let falling: Vec<f64> = (0..10).map(|i| 100.0 - 3.0 * i as f64).collect();
        let fall = trend(&falling).unwrap();
        assert!(fall.significant);
        assert!(
            (fall.change_percent + 27.0 / 86.5 * 100.0).abs() < 1e-6,
            "{fall:?}"
        );
        let flat_noisy = [100.0, 104.0, 97.0, 102.0, 99.0, 103.0, 98.0, 101.0];
        let flat = trend(&flat_noisy).unwrap();
        assert!(flat.change_percent.abs() < TREND_PERCENT);
        assert!(trend(&[1.0, 2.0, 3.0]).is_none());
        let constant = trend(&[5.0; 6]).unwrap();
        assert!(!constant.significant);
    }

    /// The token bucket that ran dry: 119.5 MB/s for 5 s, then 25–27 MB/s. Once said as
    /// "fell 203 % over 16 s (fitted 118.4 MB/s → 0 B/s)"; a step it is, with its second and
    /// both levels, and no fall beyond 100 %.
    #[test]
    fn notes_say_a_step_a_ramp_and_an_uneven_series_as_they_are() {
        let mut bucket = vec![119.5e6; 5];
        bucket.extend([
            26e6, 25e6, 27e6, 26e6, 25.5e6, 26.5e6, 26e6, 25e6, 27e6, 26e6, 26e6,
        ]);
        let note = unsteady(&bucket).expect("not steady");
        assert!(
            note.starts_with(
                "not steady: throughput stepped down after 5 s, from 119.5 MB/s to 26.0 MB/s (-78 %), and stayed there for the last 11 s"
            ),
            "{note}"
        );
        assert!(!note.contains("fitted") && !note.contains("203"), "{note}");

        let ramp: Vec<f64> = (0..10).map(|i| (100.0 - 3.0 * i as f64) * 1e6).collect();
        let note = unsteady(&ramp).expect("not steady");
        assert!(
            note.starts_with("not steady: throughput fell 27 % over 10 s along a straight line (fitted 100.0 MB/s → 73.0 MB/s, R² 1.00)"),
            "{note}"
        );

        // Steady, then sliding to almost nothing: no line through zero, no fall over 100 %.
        let slide = [
            100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 75.0, 50.0, 25.0, 1.0,
        ]
        .map(|r| r * 1e6);
        let note = unsteady(&slide).expect("not steady");
        assert!(!note.contains("straight line"), "{note}");
        let percents: Vec<f64> = note
            .split(['(', ' '])
            .filter_map(|word| word.strip_suffix('%').or(Some(word)))
            .filter_map(|word| word.trim_start_matches('+').parse::<f64>().ok())
            .collect();
        assert!(percents.iter().all(|p| *p >= -100.0), "{note}");

        // The interval of a stepped series is not noise a longer run averages away.
        let interval = confidence_interval(&bucket).unwrap();
        let wide = wide_interval_note(&interval, true);
        assert!(
            wide.contains("spans two levels") && !wide.contains("would give"),
            "{wide}"
        );
        assert!(wide_interval_note(&interval, false).contains("would give ±2 %"));

        // Noise about a level, and a level: nothing to say.
        let noise = [100.0, 104.0, 97.0, 102.0, 99.0, 103.0, 98.0, 101.0].map(|r| r * 1e6);
        assert_eq!(unsteady(&noise), None);
        assert_eq!(unsteady(&[50e6; 8]), None);
    }
}
