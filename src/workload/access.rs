//! Access specifications: each I/O draws one line first, so its size, direction and randomness
//! are chosen together, as Iometer does.
//!
//! A line is `size:share:read%:random%[:align[:burst[:delay[:trim%]]]]`; a spec is lines
//! separated by commas: `--spec "64k:30:100:100, 512:50:0:0, 1k:20:50:0"`. Shares are relative
//! weights (Iometer's "% of access specification"; they need not add up to 100). The eighth
//! field, iopath's own, makes that share of the line's I/Os trims (discards): reads, trims and
//! writes (the rest) then split the line (`4k:1:0:100:4k:1:0:100` trims only).
//!
//! fio's `bssplit` differs: fio draws the direction first and the size independently of it
//! (from the direction's own split). iopath expresses both as lines: a fio workload becomes one
//! line per (direction, size) with weight = direction share × size share.

use super::WorkloadError;
use crate::result::{AccessLine, AccessSpec};
use crate::units::{format_size, parse_duration_ns, parse_size};

impl AccessLine {
    /// A line with no burst or delay.
    pub fn new(size_bytes: u64, weight: u32, read_percent: u8, random_percent: u8) -> Self {
        AccessLine {
            size_bytes,
            weight,
            read_percent,
            random_percent,
            alignment_bytes: size_bytes,
            burst_length: 1,
            delay_ns: 0,
            trim_percent: 0,
        }
    }

    /// Percentage of this line's I/Os that are writes (what reads and trims leave).
    pub fn write_percent(&self) -> u8 {
        100u8.saturating_sub(self.read_percent.saturating_add(self.trim_percent))
    }

    /// Reads `size:share:read%:random%[:align[:burst[:delay[:trim%]]]]`.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let fields: Vec<&str> = text.split(':').map(str::trim).collect();
        if !(4..=8).contains(&fields.len()) {
            return Err(WorkloadError::part(
                text,
                "an access line is size:share:read%:random%[:align[:burst[:delay[:trim%]]]]",
            ));
        }
        let size_bytes = parse_size(fields[0])?;
        if size_bytes == 0 {
            return Err(WorkloadError::part(text, "the size must be greater than 0"));
        }
        let number = |index: usize, what: &str, max: u64| -> Result<u64, WorkloadError> {
            match fields[index].trim_end_matches('%').parse::<u64>() {
                Ok(value) if value <= max => Ok(value),
                _ => Err(WorkloadError::part(
                    text,
                    format!(
                        "{what} '{}' is not a whole number up to {max}",
                        fields[index]
                    ),
                )),
            }
        };
        let weight = number(1, "the share", 1_000_000)? as u32;
        let read_percent = number(2, "the read percentage", 100)? as u8;
        let random_percent = number(3, "the random percentage", 100)? as u8;
        let mut line = AccessLine::new(size_bytes, weight, read_percent, random_percent);
        if let Some(align) = fields.get(4).filter(|f| !f.is_empty()) {
            line.alignment_bytes = parse_size(align)?;
            if line.alignment_bytes == 0 {
                return Err(WorkloadError::part(
                    text,
                    "the alignment must be greater than 0",
                ));
            }
        }
        if fields.get(5).is_some_and(|f| !f.is_empty()) {
            line.burst_length = number(5, "the burst length", 1_000_000)?.max(1) as u32;
        }
        if let Some(delay) = fields.get(6).filter(|f| !f.is_empty()) {
            line.delay_ns =
                parse_delay(delay).map_err(|e| WorkloadError::part(text, e.to_string()))?;
        }
        if fields.get(7).is_some_and(|f| !f.is_empty()) {
            line.trim_percent = number(7, "the trim percentage", 100)? as u8;
            if u16::from(line.read_percent) + u16::from(line.trim_percent) > 100 {
                return Err(WorkloadError::part(
                    text,
                    "the read and trim percentages add up to more than 100",
                ));
            }
        }
        Ok(line)
    }
}

/// Iometer's delays are milliseconds when bare.
fn parse_delay(text: &str) -> Result<u64, WorkloadError> {
    if text.chars().all(|c| c.is_ascii_digit()) {
        let ms: u64 = text
            .parse()
            .map_err(|_| WorkloadError::value(text, "is not a delay"))?;
        return Ok(ms * 1_000_000);
    }
    Ok(parse_duration_ns(text)?)
}

impl AccessSpec {
    /// Reads lines separated by commas (or newlines).
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let lines = text
            .split([',', '\n', ';'])
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(AccessLine::parse)
            .collect::<Result<Vec<_>, _>>()?;
        let spec = AccessSpec { lines };
        spec.validate()?;
        Ok(spec)
    }

    /// Checks that there is a line with a weight.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.lines.is_empty() {
            return Err(WorkloadError::SpecWithoutLines);
        }
        if self.total_weight() == 0 {
            return Err(WorkloadError::SpecWithoutShares);
        }
        Ok(())
    }

    /// Sum of the weights.
    pub fn total_weight(&self) -> u64 {
        self.lines
            .iter()
            .fold(0u64, |total, l| total.saturating_add(u64::from(l.weight)))
    }

    /// Largest transfer size (the buffer size).
    pub fn max_size_bytes(&self) -> u64 {
        self.active_lines().map(|l| l.size_bytes).max().unwrap_or(0)
    }

    /// Smallest transfer size.
    pub fn min_size_bytes(&self) -> u64 {
        self.active_lines().map(|l| l.size_bytes).min().unwrap_or(0)
    }

    /// The one size when every line has the same size.
    pub fn single_size(&self) -> Option<u64> {
        let first = self.active_lines().next()?.size_bytes;
        self.active_lines()
            .all(|l| l.size_bytes == first)
            .then_some(first)
    }

    /// Lines with a non-zero weight.
    pub fn active_lines(&self) -> impl Iterator<Item = &AccessLine> {
        self.lines.iter().filter(|l| l.weight > 0)
    }

    /// Overall share of reads, percent.
    pub fn read_percent(&self) -> f64 {
        self.weighted(|l| l.read_percent as f64)
    }

    /// Overall share of random I/Os, percent.
    pub fn random_percent(&self) -> f64 {
        self.weighted(|l| l.random_percent as f64)
    }

    fn weighted(&self, value: impl Fn(&AccessLine) -> f64) -> f64 {
        let total = self.total_weight() as f64;
        if total == 0.0 {
            return 0.0;
        }
        self.lines
            .iter()
            .map(|l| value(l) * l.weight as f64)
            .sum::<f64>()
            / total
    }

    /// Overall share of trims, percent.
    pub fn trim_percent(&self) -> f64 {
        self.weighted(|l| l.trim_percent as f64)
    }

    /// Whether any I/O may be a write.
    pub fn writes(&self) -> bool {
        self.active_lines().any(|l| l.write_percent() > 0)
    }

    /// Whether any I/O may be a trim (a discard).
    pub fn trims(&self) -> bool {
        self.active_lines().any(|l| l.trim_percent > 0)
    }

    /// Whether any I/O may change what the target holds (a write or a trim): the safety rules
    /// of writes apply.
    pub fn modifies(&self) -> bool {
        self.writes() || self.trims()
    }

    /// Smallest transfer size of the lines that may write (0 when none writes).
    pub fn min_write_size_bytes(&self) -> u64 {
        self.active_lines()
            .filter(|l| l.write_percent() > 0)
            .map(|l| l.size_bytes)
            .min()
            .unwrap_or(0)
    }

    /// Whether any I/O may be a read.
    pub fn reads(&self) -> bool {
        self.active_lines().any(|l| l.read_percent > 0)
    }

    /// Every alignment and size, for alignment checks.
    pub fn sizes_and_alignments(&self) -> impl Iterator<Item = u64> + '_ {
        self.active_lines()
            .flat_map(|l| [l.size_bytes, l.alignment_bytes])
    }
}

impl std::fmt::Display for AccessSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines: Vec<String> = self
            .lines
            .iter()
            .map(|l| {
                let mut text = format!(
                    "{}:{}:{}:{}",
                    format_size(l.size_bytes),
                    l.weight,
                    l.read_percent,
                    l.random_percent
                );
                let trims = l.trim_percent > 0;
                if l.alignment_bytes != l.size_bytes
                    || l.burst_length > 1
                    || l.delay_ns > 0
                    || trims
                {
                    text.push_str(&format!(":{}", format_size(l.alignment_bytes)));
                }
                if l.burst_length > 1 || l.delay_ns > 0 || trims {
                    text.push_str(&format!(
                        ":{}:{}",
                        l.burst_length,
                        crate::units::format_time(l.delay_ns)
                    ));
                }
                if trims {
                    text.push_str(&format!(":{}", l.trim_percent));
                }
                text
            })
            .collect();
        write!(f, "{}", lines.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use crate::result::{AccessLine, AccessSpec};

    #[test]
    fn iometer_lines_parse() {
        let spec = AccessSpec::parse("64k:30:100:100, 512:50:0:0, 1k:20:50:0").unwrap();
        assert_eq!(spec.lines.len(), 3);
        assert_eq!(spec.lines[0], AccessLine::new(65536, 30, 100, 100));
        assert_eq!(spec.max_size_bytes(), 65536);
        assert!((spec.read_percent() - 40.0).abs() < 1e-9);
        let with_burst = AccessLine::parse("4k:100:0:100:512:8:5").unwrap();
        assert_eq!(with_burst.alignment_bytes, 512);
        assert_eq!(with_burst.burst_length, 8);
        assert_eq!(with_burst.delay_ns, 5_000_000);
        assert_eq!(AccessSpec::parse(&spec.to_string()).unwrap(), spec);
    }

    #[test]
    fn a_trim_share_is_the_eighth_field_and_round_trips() {
        let spec = AccessSpec::parse("4k:1:0:100:4k:1:0:100, 64k:1:20:0:64k:1:0:30").unwrap();
        assert_eq!(spec.lines[0].trim_percent, 100);
        assert_eq!(spec.lines[0].write_percent(), 0);
        assert_eq!(spec.lines[1].write_percent(), 50);
        assert!(spec.trims() && spec.writes() && spec.modifies());
        assert!((spec.trim_percent() - 65.0).abs() < 1e-9);
        assert_eq!(AccessSpec::parse(&spec.to_string()).unwrap(), spec);
        let only_trims = AccessSpec::parse("4k:1:0:100:4k:1:0:100").unwrap();
        assert!(!only_trims.writes() && !only_trims.reads() && only_trims.modifies());
        let error = AccessSpec::parse("4k:1:60:0:4k:1:0:50").unwrap_err();
        assert!(error.to_string().contains("more than 100"), "{error}");
    }

    #[test]
    fn bad_lines_are_named() {
        for bad in [
            "",
            "4k:1:2",
            "4k:x:0:0",
            "4k:1:101:0",
            "0:1:0:0",
            "4k:0:0:0",
            "4k:1:0:0:0",
            "4k:1:0:0:4k:1:0:101",
        ] {
            let error = AccessSpec::parse(bad).unwrap_err();
            assert!(!error.to_string().is_empty(), "{bad}");
        }
    }
}
