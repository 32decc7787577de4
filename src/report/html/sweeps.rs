//! Sweep curves: for every swept axis, IOPS against the queue depth or the workers (MB/s
//! against the block size), and mean and p99 latency against IOPS. One curve per run and per
//! rest of the test (its name without the sweep labels, and the values of any other swept
//! axis), so that runs that swept the same way are drawn over each other.

use super::page::Section;
use super::svg::{Axis, LineChart, Scale, Series, compact, latency_tick, size_tick, whole_tick};
use crate::report::model::RunReport;
use crate::result::{SweepAxis, SweepValue, TestResult};
use crate::units::{format_count, format_latency, format_size};

/// One point of a curve.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// The swept value (queue depth, workers, or block size in bytes).
    pub x: f64,
    /// I/Os per second.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// Mean latency, ns.
    pub mean_latency_ns: f64,
    /// p99 latency, ns.
    pub p99_latency_ns: f64,
}

/// The points of one run along one axis, the rest of the test fixed.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// Index of the run.
    pub run: usize,
    /// What its points share (workloads without the swept value, other axes' values).
    key: String,
    /// The test's name without its sweep point, and the other axes' values.
    pub rest: String,
    /// In order of the swept value.
    pub points: Vec<SweepPoint>,
}

fn value_label(value: &SweepValue) -> String {
    match value.axis {
        SweepAxis::Bs => format!("bs={}", format_size(value.value)),
        axis => format!("{}={}", axis.name(), value.value),
    }
}

/// The name of `test` without what names its sweep point: `axis=value` labels, and the
/// `QD16`, `x4 workers` or block size of a name made from the swept workload
/// (`randread 4k QD16` swept on qd → `randread 4k`).
pub fn base_name(test: &TestResult) -> String {
    let words: Vec<&str> = test.name.split_whitespace().collect();
    let mut kept = Vec::with_capacity(words.len());
    let mut index = 0;
    while index < words.len() {
        let word = words[index];
        let mut skip = 1;
        let swept = test.sweep.iter().any(|value| {
            if word.starts_with(&format!("{}=", value.axis.name())) {
                return true;
            }
            match value.axis {
                SweepAxis::Qd => word == format!("QD{}", value.value),
                SweepAxis::Bs => word == format_size(value.value),
                SweepAxis::Workers => {
                    let matches = word == format!("x{}", value.value)
                        && words.get(index + 1) == Some(&"workers");
                    if matches {
                        skip = 2;
                    }
                    matches
                }
            }
        });
        if !swept {
            kept.push(word);
        }
        index += if swept { skip } else { 1 };
    }
    if kept.is_empty() {
        test.name.clone()
    } else {
        kept.join(" ")
    }
}

/// What every point of one curve shares: the jobs' workloads with the swept value (and the
/// seed) taken out, and the values of the other swept axes.
fn curve_key(test: &TestResult, axis: SweepAxis) -> String {
    let mut parts = Vec::with_capacity(test.jobs.len() + test.sweep.len());
    for job in &test.jobs {
        let mut workload = job.workload.clone();
        workload.seed = 0;
        match axis {
            SweepAxis::Qd => workload.queue_depth = 0,
            SweepAxis::Workers => workload.workers = 0,
            SweepAxis::Bs => {
                for line in &mut workload.access.lines {
                    line.size_bytes = 0;
                    line.alignment_bytes = 0;
                }
            }
        }
        parts.push(serde_json::to_string(&workload).unwrap_or_default());
    }
    parts.extend(
        test.sweep
            .iter()
            .filter(|other| other.axis != axis)
            .map(value_label),
    );
    parts.join("|")
}

/// The axes swept in any of `runs`, in order of first appearance.
pub fn swept_axes(runs: &[RunReport<'_>]) -> Vec<SweepAxis> {
    let mut axes = Vec::new();
    for run in runs {
        for test in &run.result.tests {
            for value in &test.sweep {
                if !axes.contains(&value.axis) {
                    axes.push(value.axis);
                }
            }
        }
    }
    axes
}

/// The curves along `axis`.
pub fn curves(runs: &[RunReport<'_>], axis: SweepAxis) -> Vec<Curve> {
    let mut curves: Vec<Curve> = Vec::new();
    for (run_index, run) in runs.iter().enumerate() {
        for (test, set) in run.result.tests.iter().zip(&run.figures) {
            let Some(value) = test.sweep.iter().find(|value| value.axis == axis) else {
                continue;
            };
            let mut rest = vec![base_name(test)];
            rest.extend(
                test.sweep
                    .iter()
                    .filter(|other| other.axis != axis)
                    .map(value_label),
            );
            let rest = rest.join(" ");
            let figures = test.figures(set.main);
            let point = SweepPoint {
                x: value.value as f64,
                iops: figures.iops,
                bytes_per_second: figures.bytes_per_second,
                mean_latency_ns: figures.latency.mean_ns,
                p99_latency_ns: figures.latency.percentile("99") as f64,
            };
            let key = curve_key(test, axis);
            match curves
                .iter_mut()
                .find(|curve| curve.run == run_index && curve.key == key)
            {
                Some(curve) => curve.points.push(point),
                None => curves.push(Curve {
                    run: run_index,
                    key,
                    rest,
                    points: vec![point],
                }),
            }
        }
    }
    for curve in &mut curves {
        curve.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    curves
}

fn curve_label(runs: &[RunReport<'_>], curves: &[Curve], curve: &Curve) -> String {
    let several_rests = curves.iter().any(|other| other.key != curve.key);
    let mut parts = Vec::new();
    if runs.len() > 1 {
        parts.push(runs[curve.run].label.to_string());
    }
    if several_rests || parts.is_empty() {
        parts.push(curve.rest.clone());
    }
    parts.join(" · ")
}

fn x_axis(axis: SweepAxis, curves: &[Curve]) -> Axis {
    let mut values: Vec<f64> = curves
        .iter()
        .flat_map(|curve| curve.points.iter().map(|point| point.x))
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let (title, format): (&str, fn(f64) -> String) = match axis {
        SweepAxis::Qd => ("queue depth per worker", whole_tick),
        SweepAxis::Workers => ("workers per target", whole_tick),
        SweepAxis::Bs => ("block size", size_tick),
    };
    let low = values.first().copied().unwrap_or(1.0);
    let high = values.last().copied().unwrap_or(1.0);
    if high >= low * 4.0 {
        let mut axis = Axis::with(title, Scale::Log2, format);
        if values.len() <= 12 {
            axis.ticks = Some(values);
        }
        axis
    } else {
        Axis::with(title, Scale::LinearFitted, format)
    }
}

fn charts(runs: &[RunReport<'_>], axis: SweepAxis) -> String {
    let curves = curves(runs, axis);
    let bandwidth = axis == SweepAxis::Bs;
    let name = axis.name();
    let mut rate_series = Vec::new();
    let mut latency_series = Vec::new();
    for (index, curve) in curves.iter().enumerate() {
        let label = curve_label(runs, &curves, curve);
        let mut series = Series::new(
            &label,
            index,
            curve
                .points
                .iter()
                .map(|p| {
                    (
                        p.x,
                        if bandwidth {
                            p.bytes_per_second / 1e6
                        } else {
                            p.iops
                        },
                    )
                })
                .collect(),
        );
        series.point_titles = curve
            .points
            .iter()
            .map(|p| {
                format!(
                    "{label}, {name}={}: {} IOPS, {:.1} MB/s",
                    if bandwidth {
                        format_size(p.x as u64)
                    } else {
                        format!("{}", p.x)
                    },
                    format_count(p.iops),
                    p.bytes_per_second / 1e6
                )
            })
            .collect();
        rate_series.push(series);
        for (which, dashed) in [("mean", false), ("p99", true)] {
            let mut series = Series::new(
                &format!("{label} {which}"),
                index,
                curve
                    .points
                    .iter()
                    .map(|p| {
                        (
                            p.iops,
                            if dashed {
                                p.p99_latency_ns
                            } else {
                                p.mean_latency_ns
                            },
                        )
                    })
                    .collect(),
            );
            series.dashed = dashed;
            series.point_titles = curve
                .points
                .iter()
                .map(|p| {
                    let latency = if dashed {
                        p.p99_latency_ns
                    } else {
                        p.mean_latency_ns
                    };
                    format!(
                        "{label}, {name}={}: {which} {} at {} IOPS",
                        if bandwidth {
                            format_size(p.x as u64)
                        } else {
                            format!("{}", p.x)
                        },
                        format_latency(latency),
                        format_count(p.iops)
                    )
                })
                .collect();
            latency_series.push(series);
        }
    }
    let rate_chart = LineChart {
        id: format!("sweep-{name}-rate"),
        kind: if bandwidth {
            "sweep-bandwidth"
        } else {
            "sweep-iops"
        },
        caption: if bandwidth {
            "MB/s against block size".into()
        } else {
            format!("IOPS against {}", x_axis(axis, &curves).title)
        },
        x: x_axis(axis, &curves),
        y: Axis::linear(if bandwidth { "MB/s" } else { "IOPS" }),
        series: rate_series,
        markers: Vec::new(),
        attributes: vec![("axis".into(), name.into())],
    };
    let latency_chart = LineChart {
        id: format!("sweep-{name}-latency"),
        kind: "sweep-latency",
        caption: format!("Latency against IOPS as {name} grows (mean solid, p99 dashed)"),
        x: Axis::with("IOPS", Scale::Linear, compact),
        y: Axis::with("latency (log scale)", Scale::Log10, latency_tick),
        series: latency_series,
        markers: Vec::new(),
        attributes: vec![("axis".into(), name.into())],
    };
    format!(
        r#"<div class="charts">{}{}</div>"#,
        rate_chart.render(),
        latency_chart.render()
    )
}

/// The sweep section, when any run swept.
pub fn section(runs: &[RunReport<'_>]) -> Option<Section> {
    let axes = swept_axes(runs);
    if axes.is_empty() {
        return None;
    }
    let mut html = String::new();
    for axis in axes {
        html.push_str(&charts(runs, axis));
    }
    html.push_str(r#"<p class="meta">Each point is one test of the sweep; a mixed test counts reads and writes together.</p>"#);
    Some(Section {
        id: "sweeps",
        title: "Sweep curves",
        body: html,
    })
}
