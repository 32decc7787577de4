//! fio's value syntax: sizes under `kb_base`, times with a per-option bare unit, integers,
//! booleans, per-direction lists (`read,write,trim`) and `:`-separated file lists.
//!
//! Sizes: `k m g t p` (with an optional `b`) are powers of `kb_base` (1024 by default); the IEC
//! spellings `ki kib mi mib …` are powers of the *other* base — with the default 1024 that makes
//! `4KiB` = 4000 bytes, fio's compatibility mode, which fio's HOWTO documents and iopath keeps.
//! `0x` numbers are hexadecimal. A value that starts with `(` is arithmetic
//! ([`super::arithmetic`]). Fractions (`1.5m`) are refused: fio silently reads them as `1`.
//!
//! Times: `us usec ms msec s sec m min h d`; a bare number takes the option's own unit (seconds
//! for `runtime`, microseconds for `thinktime`).

use super::arithmetic::{Units, evaluate};
use super::suffixes::{size_multiplier, time_multiplier_ns};

/// Whether `text` uses an IEC suffix (`KiB`, `mi` …), which fio reads in powers of 1000 under
/// its default `kb_base=1024`.
pub fn uses_iec_suffix(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["ki", "mi", "gi", "ti", "pi"]
        .iter()
        .any(|iec| lower.contains(iec))
}

/// A size, or a percentage of the target (`50%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeValue {
    /// Bytes.
    Bytes(u64),
    /// Percent of the file or device.
    Percent(f64),
}

fn whole(value: f64, text: &str) -> Result<u64, String> {
    if value < 0.0 {
        return Err(format!("'{text}' is negative"));
    }
    if value >= u64::MAX as f64 {
        return Err(format!("'{text}' is too large"));
    }
    Ok(value as u64)
}

/// Reads a size or a percentage.
pub fn size_or_percent(text: &str, kb_base: u64) -> Result<SizeValue, String> {
    let text = text.trim();
    if text.starts_with('(') {
        return evaluate(text, Units::Bytes { kb_base })
            .and_then(|value| whole(value, text))
            .map(SizeValue::Bytes);
    }
    if let Some(number) = text.strip_suffix('%') {
        return match number.trim().parse::<f64>() {
            Ok(percent) if percent > 0.0 && percent <= 100.0 => Ok(SizeValue::Percent(percent)),
            _ => Err(format!("'{text}' is not a percentage from 1 to 100")),
        };
    }
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map(SizeValue::Bytes)
            .map_err(|_| format!("'{text}' is not a hexadecimal number"));
    }
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    if digits.is_empty() {
        return Err(format!(
            "'{text}' is not a size (a whole number, optionally with k, m, g, t or p)"
        ));
    }
    if suffix.starts_with('.') {
        return Err(format!(
            "'{text}': fio reads whole numbers only (it would take '{digits}'); write the size in a smaller unit"
        ));
    }
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("'{text}' is too large"))?;
    let multiplier = size_multiplier(suffix, kb_base).ok_or_else(|| {
        format!(
            "'{text}' is not a size: unknown unit '{suffix}' (use k, m, g, t, p, or KiB, MiB …)"
        )
    })?;
    // Multipliers are whole powers of 1000 or 1024, exact in an f64.
    number
        .checked_mul(multiplier as u64)
        .map(SizeValue::Bytes)
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// Reads a size in bytes; percentages are refused.
pub fn size(text: &str, kb_base: u64) -> Result<u64, String> {
    match size_or_percent(text, kb_base)? {
        SizeValue::Bytes(bytes) => Ok(bytes),
        SizeValue::Percent(_) => Err(format!(
            "'{text}': a percentage of the target is not supported here; give a size"
        )),
    }
}

/// Reads a whole number between `min` and `max` (fio accepts size suffixes on integers too).
pub fn integer(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let value = size(text, 1024)?;
    if value < min || value > max {
        return Err(format!(
            "'{text}' is not a whole number from {min} to {max}"
        ));
    }
    Ok(value)
}

/// Reads a time in nanoseconds; a bare number counts `bare_unit_ns` (1 s for runtime, 1 µs for
/// thinktime).
pub fn time_ns(text: &str, bare_unit_ns: u64) -> Result<u64, String> {
    let text = text.trim();
    if text.starts_with('(') {
        return evaluate(text, Units::Time).and_then(|value| whole(value.round(), text));
    }
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    if digits.is_empty() {
        return Err(format!(
            "'{text}' is not a time (a whole number, optionally with us, ms, s, m, h or d)"
        ));
    }
    if suffix.starts_with('.') {
        return Err(format!(
            "'{text}': fio reads whole numbers only (it would take '{digits}'); use a smaller unit, as in 500ms"
        ));
    }
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("'{text}' is too large"))?;
    let multiplier = if suffix.is_empty() {
        bare_unit_ns
    } else {
        time_multiplier_ns(suffix).ok_or_else(|| {
            format!("'{text}' is not a time: unknown unit '{suffix}' (use us, ms, s, m, h or d)")
        })?
    };
    number
        .checked_mul(multiplier)
        .ok_or_else(|| format!("'{text}' is too long"))
}

/// Reads a boolean: no value means true; otherwise a number, 0 being false.
pub fn boolean(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(true),
        Some(text) => match text.parse::<u64>() {
            Ok(number) => Ok(number != 0),
            Err(_) => Err(format!("'{text}' is not a boolean (0 or 1)")),
        },
    }
}

/// Reads a whole percentage, 0–100.
pub fn percent(text: &str) -> Result<u8, String> {
    match integer(text.trim().trim_end_matches('%'), 0, 100) {
        Ok(value) => Ok(value as u8),
        Err(_) => Err(format!("'{text}' is not a percentage from 0 to 100")),
    }
}

/// Splits a per-direction list `read,write,trim` as fio does: an empty part leaves that
/// direction as it was (`None`); a list that does not end in a comma gives its last part to the
/// directions after it (`bs=8k,32k` sets writes and trims to 32k; `bs=8k,32k,` leaves trims).
pub fn per_direction(text: &str) -> [Option<&str>; 3] {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let last = parts.last().copied().unwrap_or("");
    std::array::from_fn(|direction| {
        let part = parts.get(direction).copied().unwrap_or(last);
        (!part.is_empty()).then_some(part)
    })
}

/// Splits a `:`-separated list of file or directory names; `\:` is a colon inside a name.
pub fn colon_list(text: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let mut characters = text.chars().peekable();
    while let Some(c) = characters.next() {
        match c {
            '\\' if characters.peek() == Some(&':') => {
                characters.next();
                names.last_mut().expect("never empty").push(':');
            }
            ':' => names.push(String::new()),
            other => names.last_mut().expect("never empty").push(other),
        }
    }
    names
        .into_iter()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_kb_base() {
        for (text, base, bytes) in [
            ("4k", 1024, 4096),
            ("4K", 1024, 4096),
            ("4kb", 1024, 4096),
            ("4KiB", 1024, 4000),
            ("1mi", 1024, 1_000_000),
            ("1m", 1024, 1 << 20),
            ("4k", 1000, 4000),
            ("4KiB", 1000, 4096),
            ("4ki", 1000, 4096),
            ("1MiB", 1000, 1 << 20),
            ("1g", 1000, 1_000_000_000),
            ("1t", 1024, 1 << 40),
            ("512", 1000, 512),
            ("512b", 1024, 512),
            ("0x1000", 1024, 4096),
            ("(4k*2+512)", 1024, 8704),
        ] {
            assert_eq!(size(text, base), Ok(bytes), "{text} with kb_base={base}");
        }
        for bad in [
            "4kk",
            "",
            "k",
            "1.5m",
            "-4k",
            "4 k",
            "4x",
            "99999999999999999999",
            "20%",
        ] {
            assert!(size(bad, 1024).is_err(), "{bad}");
        }
        assert_eq!(size_or_percent("50%", 1024), Ok(SizeValue::Percent(50.0)));
        assert!(uses_iec_suffix("4KiB") && !uses_iec_suffix("4k"));
    }

    #[test]
    fn times_take_the_option_unit_when_bare() {
        const SECOND: u64 = 1_000_000_000;
        assert_eq!(time_ns("60", SECOND), Ok(60 * SECOND));
        assert_eq!(time_ns("5m", SECOND), Ok(300 * SECOND));
        assert_eq!(time_ns("250ms", SECOND), Ok(250_000_000));
        assert_eq!(time_ns("10", 1_000), Ok(10_000));
        assert_eq!(time_ns("2h", 1_000), Ok(7200 * SECOND));
        assert_eq!(time_ns("(500+500)", SECOND), Ok(1_000_000));
        for bad in ["0.5", "5x", "", "ms", "99999999999999999999d"] {
            assert!(time_ns(bad, SECOND).is_err(), "{bad}");
        }
    }

    #[test]
    fn booleans_and_numbers() {
        assert_eq!(boolean(None), Ok(true));
        assert_eq!(boolean(Some("0")), Ok(false));
        assert_eq!(boolean(Some("1")), Ok(true));
        assert!(boolean(Some("yes")).is_err());
        assert_eq!(integer("16", 1, 65536), Ok(16));
        assert!(integer("0", 1, 65536).is_err());
        assert_eq!(percent("60"), Ok(60));
        assert!(percent("101").is_err());
    }

    #[test]
    fn per_direction_lists_follow_fio() {
        assert_eq!(per_direction("256k"), [Some("256k"); 3]);
        assert_eq!(
            per_direction("8k,32k"),
            [Some("8k"), Some("32k"), Some("32k")]
        );
        assert_eq!(per_direction("8k,32k,"), [Some("8k"), Some("32k"), None]);
        assert_eq!(per_direction(",8k"), [None, Some("8k"), Some("8k")]);
        assert_eq!(per_direction(",8k,"), [None, Some("8k"), None]);
        assert_eq!(per_direction("500k,"), [Some("500k"), None, None]);
    }

    #[test]
    fn file_lists_split_on_unescaped_colons() {
        assert_eq!(colon_list("/dev/sda:/dev/sdb"), ["/dev/sda", "/dev/sdb"]);
        assert_eq!(
            colon_list(r"iscsi\://127.0.0.1/iqn.2016-02.com.fio\:system\:fio/1"),
            ["iscsi://127.0.0.1/iqn.2016-02.com.fio:system:fio/1"]
        );
        assert_eq!(colon_list("a::b:"), ["a", "b"]);
    }
}
