//! Sizes and times as people type them, and figures as people read them.
//!
//! Sizes take `k`, `m`, `g`, `t`, `p` suffixes in powers of 1024, as fio and dd do: `4k` = 4096.
//! `4K`, `4KiB` and `4kb` mean the same. A bare number is bytes. Times are seconds when bare
//! (`5`, `0.5`) and accept `ns`, `us`, `ms`, `s`, `m`, `h`.
//!
//! ```
//! use iopath::units::{parse_size, parse_duration_ns};
//! assert_eq!(parse_size("4k").unwrap(), 4096);
//! assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
//! assert_eq!(parse_duration_ns("1500ms").unwrap(), 1_500_000_000);
//! assert!(parse_size("4kk").is_err());
//! ```
//!
//! The `format_*` functions write sizes, rates, I/O rates, percentages and latencies the same
//! way wherever iopath shows them (terminal, reports, evidence lines): rates in decimal units,
//! as links are rated (`117.7 MB/s`), memory and volume sizes in binary ones (`23.9 GiB`).
//!
//! ```
//! use iopath::units::{format_latency, format_rate};
//! assert_eq!(format_rate(117_685_305.0), "117.7 MB/s");
//! assert_eq!(format_rate(7_876_923_076.9), "7.88 GB/s");
//! assert_eq!(format_latency(85_300.0), "85.3 µs");
//! ```

/// Why a size or time could not be read; the message quotes the input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not a valid {what}: {reason}")]
pub struct UnitError {
    /// The text as given.
    pub input: String,
    /// "size" or "time".
    pub what: &'static str,
    /// What is wrong.
    pub reason: &'static str,
}

fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    (&text[..end], &text[end..])
}

/// Reads a size in bytes (`4k`, `1m`, `512`, `4KiB`, `2g`).
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let error = |reason| UnitError {
        input: input.to_string(),
        what: "size",
        reason,
    };
    let text = input.trim();
    if text.starts_with('-') {
        return Err(error("sizes cannot be negative"));
    }
    let (number, suffix) = split_number(text);
    if number.is_empty() {
        return Err(error(
            "expected a number, optionally followed by k, m, g or t",
        ));
    }
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => {
            return Err(error(
                "unknown suffix (use k, m, g, t or p: powers of 1024)",
            ));
        }
    };
    if number.contains('.') {
        let value: f64 = number.parse().map_err(|_| error("not a number"))?;
        let bytes = value * (1u64 << shift) as f64;
        if bytes.fract() != 0.0 {
            return Err(error("not a whole number of bytes"));
        }
        if bytes >= u64::MAX as f64 {
            return Err(error("too large"));
        }
        return Ok(bytes as u64);
    }
    let value: u64 = number.parse().map_err(|_| error("too large"))?;
    value
        .checked_mul(1u64 << shift)
        .ok_or_else(|| error("too large"))
}

/// Reads a time and returns nanoseconds (`5` = 5 s, `500ms`, `2m`, `1h`).
pub fn parse_duration_ns(input: &str) -> Result<u64, UnitError> {
    let error = |reason| UnitError {
        input: input.to_string(),
        what: "time",
        reason,
    };
    let text = input.trim();
    if text.starts_with('-') {
        return Err(error("times cannot be negative"));
    }
    let (number, suffix) = split_number(text);
    if number.is_empty() {
        return Err(error(
            "expected a number, optionally followed by ms, s, m or h",
        ));
    }
    let nanos_per_unit: f64 = match suffix.to_ascii_lowercase().as_str() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(error(
                "unknown unit (use ms, s, m or h; bare numbers are seconds)",
            ));
        }
    };
    let value: f64 = number.parse().map_err(|_| error("not a number"))?;
    let nanos = value * nanos_per_unit;
    if !nanos.is_finite() || nanos >= u64::MAX as f64 {
        return Err(error("too large"));
    }
    Ok(nanos.round() as u64)
}

/// Formats ns as a time [`parse_duration_ns`] reads back exactly (`5s`, `250ms`, `1500us`,
/// `7ns`).
///
/// ```
/// use iopath::units::{format_time, parse_duration_ns};
/// assert_eq!(format_time(1_500_000), "1500us");
/// assert_eq!(parse_duration_ns(&format_time(90_000_000_000)), Ok(90_000_000_000));
/// ```
pub fn format_time(nanos: u64) -> String {
    for (unit, suffix) in [
        (3_600_000_000_000u64, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ] {
        if nanos >= unit && nanos.is_multiple_of(unit) {
            return format!("{}{suffix}", nanos / unit);
        }
    }
    format!("{nanos}ns")
}

/// Formats a wait for messages: `30 s`, `1.5 s`, `250 ms` (whole milliseconds; below one,
/// microseconds). The protocol clients under crates/ write their waits the same way.
///
/// ```
/// use iopath::units::format_wait;
/// use std::time::Duration;
/// assert_eq!(format_wait(Duration::from_millis(1500)), "1.5 s");
/// ```
pub use wire_text::format_wait;

/// Formats bytes with a binary suffix the parser reads back (`4k`, `1m`, `1536`).
pub fn format_size(bytes: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{}", bytes >> shift, suffix);
        }
    }
    bytes.to_string()
}

/// Formats a rate in decimal units with three or four significant digits (`117.7 MB/s`,
/// `7.88 GB/s`, `850 kB/s`).
pub fn format_rate(bytes_per_second: f64) -> String {
    let value = bytes_per_second.max(0.0);
    if value >= 1e12 {
        format!("{:.2} TB/s", value / 1e12)
    } else if value >= 1e9 {
        format!("{:.2} GB/s", value / 1e9)
    } else if value >= 1e6 {
        format!("{:.1} MB/s", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.0} kB/s", value / 1e3)
    } else {
        format!("{value:.0} B/s")
    }
}

/// Formats an amount of bytes in the decimal units of [`format_rate`] (`7.67 GB`), for
/// amounts that are a rate × a time.
pub fn format_decimal_bytes(bytes: f64) -> String {
    let rate = format_rate(bytes);
    rate.strip_suffix("/s").unwrap_or(&rate).to_string()
}

/// Formats a size in binary units (`688 B`, `64.0 MiB`, `23.9 GiB`), as memory and volumes
/// are usually sized.
pub fn format_bytes(bytes: u64) -> String {
    let units = [
        (1u64 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (size, unit) in units {
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} B")
}

/// Formats an I/O rate (`850 IOPS`, `52.5 k IOPS`, `1.20 M IOPS`).
pub fn format_iops(iops: f64) -> String {
    let value = iops.max(0.0);
    if value >= 1e6 {
        format!("{:.2} M IOPS", value / 1e6)
    } else if value >= 1e4 {
        format!("{:.1} k IOPS", value / 1e3)
    } else {
        format!("{value:.0} IOPS")
    }
}

/// Formats a percentage for evidence lines: whole percent from 10 up, one decimal below.
pub fn format_percent(percent: f64) -> String {
    if percent >= 10.0 {
        format!("{percent:.0} %")
    } else {
        format!("{percent:.1} %")
    }
}

/// Formats a latency in ns with a unit that keeps three or four significant digits.
pub fn format_latency(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Formats a count with thousands separators (`1,234,567`).
pub fn format_count(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_and_dd() {
        for (text, bytes) in [
            ("512", 512),
            ("4k", 4096),
            ("4K", 4096),
            ("4KiB", 4096),
            ("4kb", 4096),
            ("1m", 1 << 20),
            ("1.5m", 3 << 19),
            ("2g", 2 << 30),
            ("1t", 1 << 40),
            ("0", 0),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for bad in [
            "4kk",
            "-1",
            "",
            "k",
            "1x",
            "1.1",
            "99999999999999999999",
            "16777216t",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_are_seconds_when_bare() {
        for (text, nanos) in [
            ("5", 5_000_000_000),
            ("0.5", 500_000_000),
            ("250ms", 250_000_000),
            ("2s", 2_000_000_000),
            ("1m", 60_000_000_000),
            ("1h", 3_600_000_000_000),
            ("0", 0),
        ] {
            assert_eq!(parse_duration_ns(text), Ok(nanos), "{text}");
        }
        for bad in ["-1", "5x", "", "s", "1e999"] {
            assert!(parse_duration_ns(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formatted_sizes_parse_back() {
        for bytes in [512, 4096, 65536, 1 << 20, 3 << 30, 1536] {
            assert_eq!(parse_size(&format_size(bytes)), Ok(bytes));
        }
    }

    #[test]
    fn rates_and_percentages_read_well() {
        assert_eq!(format_rate(117_685_305.0), "117.7 MB/s");
        assert_eq!(format_rate(1_250_000_000.0), "1.25 GB/s");
        assert_eq!(format_rate(850_000.0), "850 kB/s");
        assert_eq!(format_rate(12.0), "12 B/s");
        assert_eq!(format_bytes(688), "688 B");
        assert_eq!(format_bytes(64 << 20), "64.0 MiB");
        assert_eq!(format_bytes(25_700_000_000), "23.9 GiB");
        assert_eq!(format_iops(850.4), "850 IOPS");
        assert_eq!(format_iops(52_512.0), "52.5 k IOPS");
        assert_eq!(format_iops(1_200_000.0), "1.20 M IOPS");
        assert_eq!(format_percent(97.6), "98 %");
        assert_eq!(format_percent(7.04), "7.0 %");
    }

    #[test]
    fn latencies_and_counts_read_well() {
        assert_eq!(format_count(1234567.4), "1,234,567");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_latency(850.0), "850 ns");
        assert_eq!(format_latency(85_300.0), "85.3 µs");
        assert_eq!(format_latency(1_234_000.0), "1.23 ms");
    }
}
