//! Charts as inline SVG, drawn here without any library or script: line charts on linear or
//! logarithmic axes, and horizontal grouped bar charts.
//!
//! Every chart is a `<figure class="chart">` whose `data-kind` says what it shows and whose
//! `data-series` counts its series; each series is a `<g class="series">` with its
//! `data-label` and `data-points` (the points of its `<polyline>`, or its bars). The
//! browser test checks those counts against the RunResult and that each is really drawn.
//!
//! ```
//! use iopath::report::html::svg::{Axis, LineChart, Series, nice_ticks};
//! assert_eq!(nice_ticks(0.0, 97.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
//! let chart = LineChart {
//!     id: "c1".into(),
//!     kind: "throughput",
//!     caption: "MB/s over time".into(),
//!     x: Axis::linear("seconds"),
//!     y: Axis::linear("MB/s"),
//!     series: vec![Series::new("read", 0, vec![(1.0, 250.0), (2.0, 260.0)])],
//!     markers: vec![],
//!     attributes: vec![],
//! };
//! let svg = chart.render();
//! assert!(svg.contains(r#"data-series="1""#) && svg.contains(r#"data-points="2""#));
//! ```

use super::escape::escape;
use std::fmt::Write;

/// Colours of series, told apart also in grey print and by most colour-blind readers
/// (Okabe and Ito's palette, yellow left out).
pub const PALETTE: [&str; 7] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000",
];

/// The colour of series number `index`.
pub fn color(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

const WIDTH: f64 = 440.0;
const HEIGHT: f64 = 250.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 42.0;
/// Most points that get a hover circle each.
const MAX_POINT_CIRCLES: usize = 120;

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values, starting at zero.
    Linear,
    /// Linear, fitted to the data rather than starting at zero.
    LinearFitted,
    /// Powers of ten evenly spaced (latencies).
    Log10,
    /// Powers of two evenly spaced (queue depths, block sizes).
    Log2,
}

/// One axis: its title, scale, and how tick values are written.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Title under (x) or beside (y) the axis, with the unit.
    pub title: String,
    /// The mapping.
    pub scale: Scale,
    /// Writes a tick value.
    pub format: fn(f64) -> String,
    /// Ticks to use instead of computed ones (the sweep's values).
    pub ticks: Option<Vec<f64>>,
}

impl Axis {
    /// A linear axis from zero with compact numbers.
    pub fn linear(title: &str) -> Self {
        Axis {
            title: title.into(),
            scale: Scale::Linear,
            format: compact,
            ticks: None,
        }
    }

    /// An axis with another scale and format.
    pub fn with(title: &str, scale: Scale, format: fn(f64) -> String) -> Self {
        Axis {
            title: title.into(),
            scale,
            format,
            ticks: None,
        }
    }
}

/// A numbered series of (x, y) points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Colour index into [`PALETTE`].
    pub color: usize,
    /// Drawn dashed.
    pub dashed: bool,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Hover text of each point (same length as `points`, or empty for none).
    pub point_titles: Vec<String>,
    /// Extra `data-` attributes of the series (`("count", "1234")`).
    pub attributes: Vec<(String, String)>,
}

impl Series {
    /// A solid series.
    pub fn new(label: &str, color: usize, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            color,
            dashed: false,
            points,
            point_titles: Vec::new(),
            attributes: Vec::new(),
        }
    }
}

/// A vertical line at `x` with a short label.
#[derive(Clone, Debug)]
pub struct Marker {
    /// Where.
    pub x: f64,
    /// Its label (`p99`).
    pub label: String,
    /// Colour index.
    pub color: usize,
}

/// A line chart.
#[derive(Clone, Debug)]
pub struct LineChart {
    /// Element id.
    pub id: String,
    /// What it shows (`throughput`, `iops`, `latency-distribution`, `sweep-iops`…).
    pub kind: &'static str,
    /// Caption above it.
    pub caption: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// The series.
    pub series: Vec<Series>,
    /// Vertical markers.
    pub markers: Vec<Marker>,
    /// Extra `data-` attributes of the figure.
    pub attributes: Vec<(String, String)>,
}

/// Tick values between `low` and `high`: multiples of 1, 2 or 5 × 10^n, about five of them,
/// the last at or above `high`.
pub fn nice_ticks(low: f64, high: f64) -> Vec<f64> {
    let span = (high - low).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|factor| factor * magnitude)
        .find(|step| *step >= raw)
        .unwrap_or(10.0 * magnitude);
    let decimals = (-step.log10().floor()).max(0.0) as i32;
    let unit = 10f64.powi(decimals);
    let first = (low / step).floor() as i64;
    let mut ticks = Vec::new();
    for multiple in first..first + 50 {
        let value = ((multiple as f64 * step) * unit).round() / unit;
        ticks.push(value);
        if value >= high {
            break;
        }
    }
    ticks
}

/// A number in few characters: `950`, `12.5k`, `1.2M`, `0.25`.
pub fn compact(value: f64) -> String {
    let magnitude = value.abs();
    let (scaled, suffix) = if magnitude >= 1e9 {
        (value / 1e9, "G")
    } else if magnitude >= 1e6 {
        (value / 1e6, "M")
    } else if magnitude >= 1e4 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    let text = if scaled.fract() == 0.0 || scaled.abs() >= 100.0 {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}{suffix}")
}

/// A latency tick: `100 ns`, `10 µs`, `2.5 ms`, `1 s`.
pub fn latency_tick(ns: f64) -> String {
    let (value, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", compact(value))
}

/// A size tick in powers of 1024: `512`, `4k`, `1m`.
pub fn size_tick(bytes: f64) -> String {
    crate::units::format_size(bytes.max(0.0) as u64)
}

/// A plain whole number tick.
pub fn whole_tick(value: f64) -> String {
    format!("{value:.0}")
}

/// Maps values of one axis to pixels.
struct Mapping {
    scale: Scale,
    low: f64,
    high: f64,
    from: f64,
    to: f64,
}

impl Mapping {
    fn transform(scale: Scale, value: f64) -> f64 {
        match scale {
            Scale::Linear | Scale::LinearFitted => value,
            Scale::Log10 => value.max(f64::MIN_POSITIVE).log10(),
            Scale::Log2 => value.max(f64::MIN_POSITIVE).log2(),
        }
    }

    fn at(&self, value: f64) -> f64 {
        let (low, high) = (
            Self::transform(self.scale, self.low),
            Self::transform(self.scale, self.high),
        );
        let share = if high > low {
            (Self::transform(self.scale, value) - low) / (high - low)
        } else {
            0.5
        };
        self.from + share.clamp(-0.05, 1.05) * (self.to - self.from)
    }
}

/// The range and ticks of an axis over `values`.
fn extent(axis: &Axis, values: &[f64]) -> (f64, f64, Vec<f64>) {
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if let Some(ticks) = &axis.ticks
        && !ticks.is_empty()
    {
        let low = ticks.iter().copied().fold(f64::INFINITY, f64::min).min(min);
        let high = ticks
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
            .max(max);
        return (low, high, ticks.clone());
    }
    match axis.scale {
        Scale::Linear | Scale::LinearFitted => {
            let low = if axis.scale == Scale::Linear || !min.is_finite() {
                0.0_f64.min(if min.is_finite() { min } else { 0.0 })
            } else {
                min
            };
            let high = if max.is_finite() && max > low {
                max
            } else {
                low + 1.0
            };
            let ticks = nice_ticks(low, high);
            (ticks[0], *ticks.last().unwrap_or(&high), ticks)
        }
        Scale::Log10 | Scale::Log2 => {
            let base: f64 = if axis.scale == Scale::Log10 {
                10.0
            } else {
                2.0
            };
            let min = positive.iter().copied().fold(f64::INFINITY, f64::min);
            let max = positive.iter().copied().fold(0.0, f64::max);
            if !min.is_finite() || max <= 0.0 {
                return (1.0, base, vec![1.0, base]);
            }
            let low = base.powf(min.log(base).floor());
            let high = base.powf(max.log(base).ceil()).max(low * base);
            let mut ticks = Vec::new();
            let mut tick = low;
            while tick <= high * 1.0001 && ticks.len() < 64 {
                ticks.push(tick);
                tick *= base;
            }
            if axis.scale == Scale::Log2 && ticks.len() > 10 {
                let keep = ticks.len().div_ceil(10);
                ticks = ticks.into_iter().step_by(keep).collect();
            }
            (low, high, ticks)
        }
    }
}

fn data_attributes(attributes: &[(String, String)]) -> String {
    let mut text = String::new();
    for (name, value) in attributes {
        let _ = write!(text, r#" data-{}="{}""#, name, escape(value));
    }
    text
}

/// The legend of a chart: one coloured swatch and label per series.
pub fn legend(entries: &[(String, usize, bool)]) -> String {
    let mut html = String::from(r#"<div class="legend">"#);
    for (label, color_index, dashed) in entries {
        let _ = write!(
            html,
            r#"<span><i class="swatch{}" style="border-color:{}"></i>{}</span>"#,
            if *dashed { " dashed" } else { "" },
            color(*color_index),
            escape(label)
        );
    }
    html.push_str("</div>");
    html
}

impl LineChart {
    /// The chart as a `<figure>`.
    pub fn render(&self) -> String {
        let xs: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(self.markers.iter().map(|m| m.x))
            .collect();
        let ys: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .collect();
        let (x_low, x_high, x_ticks) = extent(&self.x, &xs);
        let (y_low, y_high, y_ticks) = extent(&self.y, &ys);
        let x_map = Mapping {
            scale: self.x.scale,
            low: x_low,
            high: x_high,
            from: LEFT,
            to: WIDTH - RIGHT,
        };
        let y_map = Mapping {
            scale: self.y.scale,
            low: y_low,
            high: y_high,
            from: HEIGHT - BOTTOM,
            to: TOP,
        };
        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<figure class="chart" id="{id}" data-kind="{kind}" data-series="{count}"{extra}><figcaption>{caption}</figcaption>"#,
            id = self.id,
            kind = self.kind,
            count = self.series.len(),
            extra = data_attributes(&self.attributes),
            caption = escape(&self.caption),
        );
        let _ = write!(
            svg,
            r#"<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}">"#,
            escape(&self.caption)
        );
        svg.push_str(r#"<g class="axes">"#);
        for tick in &y_ticks {
            let y = y_map.at(*tick);
            let _ = write!(
                svg,
                r#"<line class="grid" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
                WIDTH - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                escape(&(self.y.format)(*tick))
            );
        }
        for tick in &x_ticks {
            let x = x_map.at(*tick);
            let _ = write!(
                svg,
                r#"<line class="tick-mark" x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{}"/><text class="tick" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
                HEIGHT - BOTTOM,
                HEIGHT - BOTTOM + 5.0,
                HEIGHT - BOTTOM + 17.0,
                escape(&(self.x.format)(*tick))
            );
        }
        let _ = write!(
            svg,
            r#"<line class="axis" x1="{LEFT}" x2="{}" y1="{bottom}" y2="{bottom}"/><line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/>"#,
            WIDTH - RIGHT,
            bottom = HEIGHT - BOTTOM
        );
        let _ = write!(
            svg,
            r#"<text class="axis-title" x="{}" y="{}" text-anchor="middle">{}</text><text class="axis-title" transform="translate(14 {}) rotate(-90)" text-anchor="middle">{}</text></g>"#,
            (LEFT + WIDTH - RIGHT) / 2.0,
            HEIGHT - 6.0,
            escape(&self.x.title),
            (TOP + HEIGHT - BOTTOM) / 2.0,
            escape(&self.y.title)
        );
        for marker in &self.markers {
            let x = x_map.at(marker.x);
            let _ = write!(
                svg,
                r#"<g class="marker"><line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{}" stroke="{c}"/><text x="{:.1}" y="{}" fill="{c}">{}</text></g>"#,
                HEIGHT - BOTTOM,
                x + 3.0,
                TOP + 10.0,
                escape(&marker.label),
                c = color(marker.color)
            );
        }
        for series in &self.series {
            let _ = write!(
                svg,
                r#"<g class="series" data-label="{}" data-points="{}"{}>"#,
                escape(&series.label),
                series.points.len(),
                data_attributes(&series.attributes)
            );
            let mut points = String::new();
            for (x, y) in &series.points {
                let _ = write!(points, "{:.1},{:.1} ", x_map.at(*x), y_map.at(*y));
            }
            let _ = write!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.8"{}><title>{}</title></polyline>"#,
                points.trim_end(),
                color(series.color),
                if series.dashed {
                    r#" stroke-dasharray="5 3""#
                } else {
                    ""
                },
                escape(&series.label)
            );
            if series.points.len() <= MAX_POINT_CIRCLES {
                for (index, (x, y)) in series.points.iter().enumerate() {
                    let title = series
                        .point_titles
                        .get(index)
                        .map_or(String::new(), |t| format!("<title>{}</title>", escape(t)));
                    let _ = write!(
                        svg,
                        r#"<circle class="point" cx="{:.1}" cy="{:.1}" r="2.4" fill="{}">{title}</circle>"#,
                        x_map.at(*x),
                        y_map.at(*y),
                        color(series.color)
                    );
                }
            }
            svg.push_str("</g>");
        }
        svg.push_str("</svg>");
        let entries: Vec<(String, usize, bool)> = self
            .series
            .iter()
            .map(|s| (s.label.clone(), s.color, s.dashed))
            .collect();
        svg.push_str(&legend(&entries));
        svg.push_str("</figure>");
        svg
    }
}

/// One series of a bar chart: one bar per group.
#[derive(Clone, Debug)]
pub struct BarSeries {
    /// Legend text.
    pub label: String,
    /// Colour index.
    pub color: usize,
    /// One value per group.
    pub values: Vec<f64>,
    /// Text after each bar (`0.93× same`), or empty.
    pub annotations: Vec<String>,
}

/// Horizontal bars, grouped: one group per test, one bar per series (run) in each.
#[derive(Clone, Debug)]
pub struct BarChart {
    /// Element id.
    pub id: String,
    /// What it shows.
    pub kind: &'static str,
    /// Caption.
    pub caption: String,
    /// Group names (tests).
    pub groups: Vec<String>,
    /// The series.
    pub series: Vec<BarSeries>,
    /// Writes a value.
    pub format: fn(f64) -> String,
}

impl BarChart {
    /// The chart as a `<figure>`.
    pub fn render(&self) -> String {
        const BAR: f64 = 14.0;
        const GAP: f64 = 10.0;
        const CHART_WIDTH: f64 = 440.0;
        const NAME_WIDTH: f64 = 150.0;
        const ANNOTATION_WIDTH: f64 = 104.0;
        let bars = self.series.len().max(1) as f64;
        let group_height = bars * BAR + GAP;
        let height = TOP + self.groups.len() as f64 * group_height + 28.0;
        let max = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().copied())
            .fold(0.0, f64::max);
        let ticks = nice_ticks(0.0, if max > 0.0 { max } else { 1.0 });
        let top_value = *ticks.last().unwrap_or(&1.0);
        let (left, right) = (NAME_WIDTH, CHART_WIDTH - ANNOTATION_WIDTH);
        let x = |value: f64| left + (value / top_value).clamp(0.0, 1.0) * (right - left);
        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<figure class="chart bars" id="{}" data-kind="{}" data-series="{}"><figcaption>{}</figcaption><svg viewBox="0 0 {} {height:.0}" role="img" aria-label="{}"><g class="axes">"#,
            self.id,
            self.kind,
            self.series.len(),
            escape(&self.caption),
            CHART_WIDTH,
            escape(&self.caption)
        );
        let bottom = height - 28.0;
        for tick in &ticks {
            let _ = write!(
                svg,
                r#"<line class="grid" x1="{0:.1}" x2="{0:.1}" y1="{TOP}" y2="{bottom:.1}"/><text class="tick" x="{0:.1}" y="{1:.1}" text-anchor="middle">{2}</text>"#,
                x(*tick),
                bottom + 14.0,
                escape(&(self.format)(*tick))
            );
        }
        for (index, group) in self.groups.iter().enumerate() {
            let y = TOP + index as f64 * group_height + bars * BAR / 2.0 + 4.0;
            let short: String = if group.chars().count() > 23 {
                group.chars().take(22).chain(['…']).collect()
            } else {
                group.clone()
            };
            let _ = write!(
                svg,
                r#"<text class="tick" x="{:.1}" y="{y:.1}" text-anchor="end">{}<title>{}</title></text>"#,
                left - 6.0,
                escape(&short),
                escape(group)
            );
        }
        svg.push_str("</g>");
        for (number, series) in self.series.iter().enumerate() {
            let _ = write!(
                svg,
                r#"<g class="series" data-label="{}" data-points="{}">"#,
                escape(&series.label),
                series.values.len()
            );
            for (index, value) in series.values.iter().enumerate() {
                let y = TOP + index as f64 * group_height + number as f64 * BAR;
                let width = (x(*value) - left).max(0.5);
                let _ = write!(
                    svg,
                    r#"<rect class="bar" x="{left:.1}" y="{y:.1}" width="{width:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                    BAR - 2.0,
                    color(series.color),
                    escape(&series.label),
                    escape(&(self.format)(*value))
                );
                let annotation = series.annotations.get(index).map_or("", String::as_str);
                let _ = write!(
                    svg,
                    r#"<text class="bar-label" x="{:.1}" y="{:.1}">{}{}{}</text>"#,
                    left + width + 4.0,
                    y + BAR - 3.0,
                    escape(&(self.format)(*value)),
                    if annotation.is_empty() { "" } else { "  " },
                    escape(annotation)
                );
            }
            svg.push_str("</g>");
        }
        svg.push_str("</svg>");
        let entries: Vec<(String, usize, bool)> = self
            .series
            .iter()
            .map(|s| (s.label.clone(), s.color, false))
            .collect();
        svg.push_str(&legend(&entries));
        svg.push_str("</figure>");
        svg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_numbers_are_round() {
        assert_eq!(nice_ticks(0.0, 1.0), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(nice_ticks(0.0, 0.07), [0.0, 0.02, 0.04, 0.06, 0.08]);
        assert_eq!(nice_ticks(0.0, 66_310.0).last(), Some(&80_000.0));
        assert_eq!(compact(950.0), "950");
        assert_eq!(compact(12_500.0), "12.5k");
        assert_eq!(compact(1_200_000.0), "1.2M");
        assert_eq!(compact(0.25), "0.25");
        assert_eq!(latency_tick(10_000.0), "10 µs");
        assert_eq!(latency_tick(2_500_000.0), "2.5 ms");
    }

    #[test]
    fn log_axes_span_whole_powers() {
        let axis = Axis::with("latency", Scale::Log10, latency_tick);
        let (low, high, ticks) = extent(&axis, &[3_000.0, 450_000.0]);
        assert_eq!((low, high), (1_000.0, 1_000_000.0));
        assert_eq!(ticks.len(), 4);
        let mut axis = Axis::with("QD", Scale::Log2, whole_tick);
        axis.ticks = Some(vec![1.0, 4.0, 16.0, 64.0]);
        let (low, high, ticks) = extent(&axis, &[1.0, 64.0]);
        assert_eq!((low, high, ticks.len()), (1.0, 64.0, 4));
    }

    #[test]
    fn bars_count_their_groups() {
        let chart = BarChart {
            id: "b".into(),
            kind: "compare-throughput",
            caption: "MB/s <by> test".into(),
            groups: vec!["one".into(), "two".into()],
            series: vec![
                BarSeries {
                    label: "a".into(),
                    color: 0,
                    values: vec![1.0, 2.0],
                    annotations: vec![],
                },
                BarSeries {
                    label: "b".into(),
                    color: 1,
                    values: vec![2.0, 1.0],
                    annotations: vec!["2.00× better".into(), "0.50× worse".into()],
                },
            ],
            format: compact,
        };
        let svg = chart.render();
        assert_eq!(svg.matches("<rect class=\"bar\"").count(), 4);
        assert!(svg.contains("MB/s &lt;by&gt; test"));
        assert!(svg.contains(r#"data-series="2""#));
    }
}
