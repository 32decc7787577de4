//! Sizes and times as people type them.
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

/// Formats a wait for messages: `30 s`, `1.5 s`, `250 ms` (whole milliseconds; below one,
/// microseconds).
///
/// ```
/// use iopath::units::format_wait;
/// use std::time::Duration;
/// assert_eq!(format_wait(Duration::from_secs(30)), "30 s");
/// assert_eq!(format_wait(Duration::from_millis(1500)), "1.5 s");
/// assert_eq!(format_wait(Duration::from_millis(250)), "250 ms");
/// ```
pub fn format_wait(wait: std::time::Duration) -> String {
    let milliseconds = wait.as_millis();
    if milliseconds >= 1000 {
        format!("{} s", milliseconds as f64 / 1000.0)
    } else if milliseconds > 0 {
        format!("{milliseconds} ms")
    } else {
        format!("{} µs", wait.as_micros())
    }
}

/// Formats bytes with a binary suffix the parser reads back (`4k`, `1m`, `1536`).
pub fn format_size(bytes: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{}", bytes >> shift, suffix);
        }
    }
    bytes.to_string()
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
}
