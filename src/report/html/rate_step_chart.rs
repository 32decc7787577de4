//! The fitted step of a test whose rate stepped down (a burst bucket, a write cliff), drawn
//! over its rate-over-time charts: a dashed line at the two fitted levels and a marker where
//! the bucket ran dry or the cache filled.

use super::svg::{Marker, Series};
use crate::result::{RateStep, TestResult};

/// Colour index of the fitted levels (black, apart from every direction).
const FITTED_COLOR: usize = 6;

/// The fitted levels as a dashed series, and the marker at the step, for the MB/s chart
/// (`iops` false) or the IOPS chart; `None` when the analysis found no step.
pub fn fitted_step(test: &TestResult, iops: bool) -> Option<(Series, Marker)> {
    let step = test.analysis.as_ref()?.rate_step.as_ref()?;
    // (bytes/s before, after, I/Os per second before, after, the step's time, its label)
    let (bytes, ios, at, label) = match step {
        RateStep::BurstBucket(b) => (
            (b.burst_bytes_per_second, b.baseline_bytes_per_second),
            (b.burst_iops, b.baseline_iops),
            b.burst_seconds,
            "bucket dry",
        ),
        RateStep::WriteCliff(c) => (
            (c.before_bytes_per_second, c.after_bytes_per_second),
            (c.before_iops, c.after_iops),
            c.seconds_before,
            "cache full",
        ),
    };
    let (before, after) = if iops {
        ios
    } else {
        (bytes.0 / 1e6, bytes.1 / 1e6)
    };
    let end = test.measured_ns as f64 / 1e9;
    let mut series = Series::new(
        &format!("{} (fitted)", step.name()),
        FITTED_COLOR,
        vec![
            (0.0, before),
            (at, before),
            (at, after),
            (end.max(at), after),
        ],
    );
    series.dashed = true;
    Some((
        series,
        Marker {
            x: at,
            label: label.into(),
            color: FITTED_COLOR,
        },
    ))
}
