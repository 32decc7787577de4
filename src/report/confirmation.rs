//! The line every exporter shows for a verdict's confirming experiment (`--confirm`):
//! `experiment: QD 2 gave +98 %: queue-depth-bound, confirmed (1.6 MB/s → 3.2 MB/s, 3.0 s after a 1.0 s ramp)`.
//!
//! Plain text: each exporter escapes it for its own format.

use crate::result::Confirmation;
use crate::units::format_rate;

/// The finding, the two rates and the experiment's length.
pub fn confirmation_line(confirmation: &Confirmation) -> String {
    let mut line = format!("experiment: {}", confirmation.summary);
    if confirmation.measured_ns > 0 {
        line.push_str(&format!(
            " ({} → {}, {:.1} s after a {:.1} s ramp)",
            format_rate(confirmation.bytes_per_second_before),
            format_rate(confirmation.bytes_per_second_after),
            confirmation.measured_ns as f64 / 1e9,
            confirmation.ramp_ns as f64 / 1e9
        ));
    }
    line
}

/// The verdict as a table cell: its short name, followed by `→ NEW` when the confirming
/// experiment refuted it (`queue→device`: the deeper queue gave nothing, the device is the
/// limit), so that a table read alone never shows a verdict its own experiment disproved.
pub fn verdict_cell(analysis: &crate::result::TestAnalysis) -> String {
    let tested = analysis.verdict.short_name();
    match &analysis.confirmation {
        Some(confirmation)
            if confirmation.outcome == crate::result::ConfirmationOutcome::Refuted =>
        {
            format!("{tested}→{}", confirmation.derived_verdict.short_name())
        }
        _ => tested.to_string(),
    }
}
