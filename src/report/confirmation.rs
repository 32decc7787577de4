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
