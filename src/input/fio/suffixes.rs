//! fio's unit suffixes, shared by plain values ([`super::values`]) and expressions
//! ([`super::arithmetic`]): `k m g t p` (with an optional `b`) are powers of `kb_base`, the
//! IEC spellings `ki kib mi mib …` powers of the other base; times take
//! `us usec ms msec s sec m min h d`.

/// Multiplier of a size suffix under `kb_base`, or `None` when the suffix is unknown.
pub fn size_multiplier(suffix: &str, kb_base: u64) -> Option<f64> {
    let lower = suffix.to_ascii_lowercase();
    let other_base = if kb_base == 1000 { 1024 } else { 1000 };
    let (letter, rest) = match lower.char_indices().nth(1) {
        Some((split, _)) => lower.split_at(split),
        None => (lower.as_str(), ""),
    };
    let power = match letter {
        "" => return Some(1.0),
        "b" if rest.is_empty() => return Some(1.0),
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return None,
    };
    let base = match rest {
        "" | "b" => kb_base,
        "i" | "ib" => other_base,
        _ => return None,
    };
    Some((base as f64).powi(power))
}

/// Nanoseconds per unit of a time suffix, or `None` when the suffix is unknown.
pub fn time_multiplier_ns(suffix: &str) -> Option<u64> {
    Some(match suffix.to_ascii_lowercase().as_str() {
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return None,
    })
}
