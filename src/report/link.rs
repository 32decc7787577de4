//! The table of link tests (`iopath net`): one row per direction measured.
//!
//! A link test counts the payload bytes the *receiver* read from its sockets (TCP and IP
//! headers are not counted), over a measured window timed by the receiver's clock. Rates are
//! derived from those integers; MB/s (10^6 B/s) and Gbit/s (10^9 bit/s) are what link rates
//! are quoted in, so the table shows both, and MiB/s beside them.

use crate::result::LinkTestResult;
use crate::text::escape::escape_controls;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::io::Write;

/// The table of link tests: one row per direction.
pub fn link_table(tests: &[LinkTestResult]) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec![
            "link test",
            "peer",
            "streams",
            "time",
            "MB/s",
            "MiB/s",
            "Gbit/s",
            "CPU %",
            "core %",
        ]);
    for test in tests {
        table.add_row(vec![
            test.name.clone(),
            test.peer.clone(),
            test.streams.to_string(),
            format!("{:.2} s", test.measured_ns as f64 / 1e9),
            format!("{:.1}", test.megabytes_per_second()),
            format!("{:.1}", test.bytes_per_second / 1_048_576.0),
            format!("{:.3}", test.gigabits_per_second()),
            format!("{:.1}", test.cpu.process_percent_of_host()),
            format!("{:.0}", test.cpu.busiest_core_percent()),
        ]);
    }
    for index in 2..9 {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// Writes the link table and every warning of its tests.
pub fn write_link_text(tests: &[LinkTestResult], out: &mut dyn Write) -> std::io::Result<()> {
    if tests.is_empty() {
        return Ok(());
    }
    writeln!(out, "{}", link_table(tests))?;
    writeln!(
        out,
        "MB/s = 10^6 B/s and Gbit/s = 10^9 bit/s of TCP payload, counted by the receiver; \
         CPU % = iopath's share of the host, core % = busiest core."
    )?;
    for test in tests {
        for warning in &test.warnings {
            writeln!(out, "warning: {}: {}", test.name, escape_controls(warning))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{CpuResult, LinkDirection};

    fn sample() -> LinkTestResult {
        LinkTestResult {
            name: "net send".into(),
            peer: "127.0.0.1:5280".into(),
            direction: LinkDirection::Send,
            streams: 2,
            measured_ns: 2_000_000_000,
            bytes: 250_000_000,
            bytes_per_second: 125_000_000.0,
            series: Vec::new(),
            cpu: CpuResult::default(),
            warnings: vec!["stream 1 moved no bytes".into()],
        }
    }

    #[test]
    fn table_shows_each_direction_and_warning() {
        let mut out = Vec::new();
        write_link_text(&[sample()], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("net send"), "{text}");
        assert!(text.contains("125.0"), "{text}");
        assert!(text.contains("1.000"), "{text}");
        assert!(
            text.contains("warning: net send: stream 1 moved no bytes"),
            "{text}"
        );
    }
}
