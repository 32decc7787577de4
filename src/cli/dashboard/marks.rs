//! What the dashboard's drawings share: the charts' reach, the colours of their lines, the
//! shape of a chart line, and the bar of a share.

use ratatui::style::Color;
use std::collections::VecDeque;

/// How far back the charts reach, seconds.
pub const CHART_SECONDS: f64 = 300.0;

/// Colours of the series, in turn.
pub const COLOURS: [Color; 6] = [
    Color::Cyan,
    Color::Yellow,
    Color::Magenta,
    Color::Green,
    Color::Blue,
    Color::Red,
];

/// One line of a chart: its name, its points (seconds, value) and its colour.
pub type ChartLine<'a> = (String, &'a VecDeque<(f64, f64)>, Color);

/// `▕██████░░░░▏` for a share (0–1; more is drawn full).
pub fn bar(share: f64, width: usize) -> String {
    let filled = ((share.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    format!("▕{}{}▏", "█".repeat(filled), " ".repeat(width - filled))
}
