//! What a workload's writes carry: the data settings as given (fio's `buffer_compress_percentage`,
//! `dedupe_percentage`, `buffer_pattern`, `zero_buffers`, `refill_buffers`, `scramble_buffers`
//! and their iopath flags), and the [`FillPlan`] they come to, by fio's rules:
//!
//! - compression below 100 % and dedupe are data built per buffer from a seed (random then
//!   fixed bytes per chunk; some buffers duplicates), refilled before every write unless refill
//!   is turned off;
//! - 100 % compression is zeros (or the pattern), filled once;
//! - otherwise a pattern, else zeros, else random bytes, filled once; without refill, every
//!   write of random data is scrambled (its sectors stamped) unless zeros or a pattern were
//!   asked for or scrambling was turned off;
//! - a buffer that a read used last is always filled again before it is written, so reads in a
//!   mixed workload never put the target's data into later writes.
//!
//! ```
//! use iopath::result::WriteData;
//! use iopath::fill::Content;
//! let data = WriteData { compress_percent: Some(50), ..WriteData::default() };
//! let plan = data.fill_plan(4096, 1 << 30);
//! assert!(plan.refill && !plan.scramble);
//! assert!(matches!(plan.content, Content::Reducible(ref r) if r.compress_percent == 50 && r.chunk_bytes == 512));
//! assert_eq!(data.describe().as_deref(), Some("50% compressible"));
//! ```

use super::error::{DataConflict, WorkloadError};
use crate::fill::{Content, DedupeFill, FillPlan, Reducible};
use crate::result::{BufferPattern, DedupeMode, WriteData};
use crate::units::format_size;

/// fio's default `buffer_compress_chunk`, bytes.
pub const DEFAULT_COMPRESS_CHUNK_BYTES: u64 = 512;
/// fio's default `dedupe_working_set_percentage`.
pub const DEFAULT_WORKING_SET_PERCENT: u8 = 5;

impl DedupeMode {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            DedupeMode::Repeat => "repeat",
            DedupeMode::WorkingSet => "working_set",
        }
    }

    /// Reads `repeat` or `working_set` (`working-set` too).
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        match text.trim() {
            "repeat" => Ok(DedupeMode::Repeat),
            "working_set" | "working-set" => Ok(DedupeMode::WorkingSet),
            other => Err(WorkloadError::value(other, "is not repeat or working_set")),
        }
    }
}

impl WriteData {
    /// Whether compression or dedupe was asked for (fio then neither scrambles nor, unless
    /// told not to, reuses buffers).
    fn shaped(&self) -> bool {
        self.compress_percent.is_some() || self.dedupe_percent.is_some()
    }

    /// The first contradiction among the settings, if any.
    pub fn conflict(&self) -> Option<DataConflict> {
        let dedupe = self.dedupe_percent.filter(|p| *p > 0)?;
        if self.compress_percent == Some(100) {
            return Some(DataConflict::FullCompressionWithDedupe);
        }
        let working_set = self.working_set_percent();
        if self.dedupe_mode == DedupeMode::WorkingSet
            && u16::from(dedupe) + u16::from(working_set) > 100
        {
            return Some(DataConflict::WorkingSetTooLarge {
                dedupe_percent: dedupe,
                working_set_percent: working_set,
            });
        }
        None
    }

    fn working_set_percent(&self) -> u8 {
        self.dedupe_working_set_percent
            .unwrap_or(DEFAULT_WORKING_SET_PERCENT)
    }

    /// Whether every write is filled again.
    pub fn refills(&self) -> bool {
        let compress = self.compress_percent.unwrap_or(0);
        self.refill
            .unwrap_or((1..100).contains(&compress) || self.dedupe_percent.is_some())
    }

    /// What a worker fills its buffers with. `min_write_bytes` is the smallest write block (a
    /// compression chunk is never longer); `region_bytes` sizes a dedupe working set.
    pub fn fill_plan(&self, min_write_bytes: u64, region_bytes: u64) -> FillPlan {
        let compress = self.compress_percent.filter(|p| *p < 100).unwrap_or(0);
        let dedupe = self.dedupe_percent.filter(|p| *p > 0);
        let min_write_bytes = min_write_bytes.max(1);
        let content = if compress > 0 || dedupe.is_some() {
            let chunk = match self
                .compress_chunk_bytes
                .unwrap_or(DEFAULT_COMPRESS_CHUNK_BYTES)
            {
                0 => min_write_bytes,
                chunk => chunk.min(min_write_bytes),
            };
            Content::Reducible(Reducible {
                compress_percent: compress,
                chunk_bytes: usize::try_from(chunk).unwrap_or(usize::MAX),
                fixed_pattern: self
                    .pattern
                    .as_ref()
                    .map_or_else(Vec::new, |p| p.bytes().to_vec()),
                dedupe: dedupe.map(|percent| DedupeFill {
                    percent,
                    working_set_buffers: (self.dedupe_mode == DedupeMode::WorkingSet).then(|| {
                        (region_bytes / 100 * u64::from(self.working_set_percent())
                            / min_write_bytes)
                            .max(1)
                    }),
                }),
            })
        } else if let Some(pattern) = &self.pattern {
            Content::Pattern(pattern.bytes().to_vec())
        } else if self.zero || self.compress_percent == Some(100) {
            Content::Zeros
        } else {
            Content::Random
        };
        let refill = self.refills();
        let scramble_wanted = self
            .scramble
            .unwrap_or(!self.zero && self.pattern.is_none());
        FillPlan {
            content,
            refill,
            scramble: !refill && !self.shaped() && scramble_wanted,
        }
    }

    /// A short description of what the writes carry (`50% compressible, 30% duplicate`),
    /// `None` for the default.
    pub fn describe(&self) -> Option<String> {
        if self.is_default() {
            return None;
        }
        let plan = self.fill_plan(u64::MAX, 0);
        let mut parts = Vec::new();
        match &plan.content {
            Content::Reducible(reducible) => {
                if reducible.compress_percent > 0 {
                    let chunk = self
                        .compress_chunk_bytes
                        .unwrap_or(DEFAULT_COMPRESS_CHUNK_BYTES);
                    parts.push(match chunk {
                        DEFAULT_COMPRESS_CHUNK_BYTES => {
                            format!("{}% compressible", reducible.compress_percent)
                        }
                        0 => format!("{}% compressible per block", reducible.compress_percent),
                        chunk => format!(
                            "{}% compressible in {} chunks",
                            reducible.compress_percent,
                            format_size(chunk)
                        ),
                    });
                }
                if let Some(percent) = self.dedupe_percent.filter(|p| *p > 0) {
                    parts.push(match self.dedupe_mode {
                        DedupeMode::Repeat => format!("{percent}% duplicate"),
                        DedupeMode::WorkingSet => format!(
                            "{percent}% duplicate of a {}% working set",
                            self.working_set_percent()
                        ),
                    });
                }
                if let Some(pattern) = &self.pattern {
                    parts.push(format!("pattern {}", short_pattern(pattern)));
                }
            }
            Content::Pattern(_) => {
                if let Some(pattern) = &self.pattern {
                    parts.push(format!("pattern {}", short_pattern(pattern)));
                }
            }
            Content::Zeros => parts.push("zeros".into()),
            Content::Random => parts.push("random".into()),
        }
        let usual_refill = matches!(plan.content, Content::Reducible(_));
        if plan.refill != usual_refill {
            parts.push(
                if plan.refill {
                    "refilled"
                } else {
                    "not refilled"
                }
                .into(),
            );
        }
        if matches!(plan.content, Content::Random) && !plan.refill && !plan.scramble {
            parts.push("not scrambled".into());
        }
        if matches!(plan.content, Content::Zeros | Content::Pattern(_)) && plan.scramble {
            parts.push("scrambled".into());
        }
        Some(parts.join(", "))
    }
}

impl WriteData {
    /// The settings as fio's options (`buffer_compress_percentage`, …), those given only.
    pub fn fio_options(&self) -> Vec<(&'static str, String)> {
        let mut options = Vec::new();
        if let Some(percent) = self.compress_percent {
            options.push(("buffer_compress_percentage", percent.to_string()));
        }
        if let Some(chunk) = self.compress_chunk_bytes {
            options.push(("buffer_compress_chunk", chunk.to_string()));
        }
        if let Some(percent) = self.dedupe_percent {
            options.push(("dedupe_percentage", percent.to_string()));
            options.push(("dedupe_mode", self.dedupe_mode.name().to_string()));
            if self.dedupe_mode == DedupeMode::WorkingSet {
                options.push((
                    "dedupe_working_set_percentage",
                    self.working_set_percent().to_string(),
                ));
            }
        }
        if let Some(pattern) = &self.pattern {
            options.push(("buffer_pattern", pattern.to_string()));
        }
        if self.zero {
            options.push(("zero_buffers", "1".into()));
        }
        if let Some(refill) = self.refill {
            options.push(("refill_buffers", u8::from(refill).to_string()));
        }
        if let Some(scramble) = self.scramble {
            options.push(("scramble_buffers", u8::from(scramble).to_string()));
        }
        options
    }
}

/// A pattern as shown in a description: at most 24 characters.
fn short_pattern(pattern: &BufferPattern) -> String {
    let text = pattern.to_string();
    if text.chars().count() <= 24 {
        text
    } else {
        let head: String = text.chars().take(20).collect();
        format!("{head}… ({} bytes)", pattern.bytes().len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> WriteData {
        WriteData::default()
    }

    #[test]
    fn the_default_is_random_scrambled_and_not_serialized() {
        let plan = data().fill_plan(4096, 1 << 20);
        assert_eq!(plan, FillPlan::default());
        assert_eq!(data().describe(), None);
        assert_eq!(serde_json::to_string(&data()).unwrap(), "{}");
    }

    #[test]
    fn fio_rules_decide_refill_and_scramble() {
        let compress = |percent| WriteData {
            compress_percent: Some(percent),
            ..data()
        };
        // 100 %: zeros filled once; 0 %: random filled once; neither scrambled (fio).
        let full = compress(100).fill_plan(4096, 0);
        assert_eq!(
            (full.content.clone(), full.refill, full.scramble),
            (Content::Zeros, false, false)
        );
        let none = compress(0).fill_plan(4096, 0);
        assert_eq!(
            (none.content, none.refill, none.scramble),
            (Content::Random, false, false)
        );
        // Refill can be turned off; the data stays shaped, and is not scrambled.
        let kept = WriteData {
            refill: Some(false),
            ..compress(40)
        }
        .fill_plan(4096, 0);
        assert!(!kept.refill && !kept.scramble);
        // Dedupe refills even at 0 %.
        let dedupe = WriteData {
            dedupe_percent: Some(0),
            ..data()
        }
        .fill_plan(4096, 0);
        assert_eq!(
            (dedupe.content, dedupe.refill, dedupe.scramble),
            (Content::Random, true, false)
        );
        // Zeros and patterns are not scrambled unless asked.
        let zeros = WriteData {
            zero: true,
            ..data()
        };
        assert!(!zeros.fill_plan(4096, 0).scramble);
        let scrambled_zeros = WriteData {
            scramble: Some(true),
            ..zeros.clone()
        };
        assert!(scrambled_zeros.fill_plan(4096, 0).scramble);
        assert_eq!(
            scrambled_zeros.describe().as_deref(),
            Some("zeros, scrambled")
        );
        let pattern = WriteData {
            pattern: Some(BufferPattern::parse("0xdeadface").unwrap()),
            zero: true,
            ..data()
        };
        let plan = pattern.fill_plan(4096, 0);
        assert_eq!(plan.content, Content::Pattern(vec![0xde, 0xad, 0xfa, 0xce]));
        assert!(!plan.scramble && !plan.refill);
    }

    #[test]
    fn chunks_never_pass_the_smallest_write() {
        let chunk = |given, min_write| {
            let plan = WriteData {
                compress_percent: Some(50),
                compress_chunk_bytes: given,
                ..data()
            }
            .fill_plan(min_write, 0);
            match plan.content {
                Content::Reducible(reducible) => reducible.chunk_bytes,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(chunk(None, 4096), 512);
        assert_eq!(chunk(Some(0), 8192), 8192);
        assert_eq!(chunk(Some(65536), 4096), 4096);
        assert_eq!(chunk(None, 256), 256);
    }

    #[test]
    fn working_sets_are_sized_from_the_region() {
        let plan = WriteData {
            dedupe_percent: Some(50),
            dedupe_mode: DedupeMode::WorkingSet,
            dedupe_working_set_percent: Some(10),
            ..data()
        }
        .fill_plan(4096, 100 << 20);
        let Content::Reducible(reducible) = plan.content else {
            panic!()
        };
        assert_eq!(
            reducible.dedupe.unwrap().working_set_buffers,
            Some((100u64 << 20) / 100 * 10 / 4096)
        );
    }

    #[test]
    fn contradictions_are_found() {
        let both = WriteData {
            compress_percent: Some(100),
            dedupe_percent: Some(20),
            ..data()
        };
        assert_eq!(
            both.conflict(),
            Some(DataConflict::FullCompressionWithDedupe)
        );
        let large = WriteData {
            dedupe_percent: Some(96),
            dedupe_mode: DedupeMode::WorkingSet,
            ..data()
        };
        assert_eq!(
            large.conflict(),
            Some(DataConflict::WorkingSetTooLarge {
                dedupe_percent: 96,
                working_set_percent: 5
            })
        );
        assert_eq!(
            WriteData {
                dedupe_percent: Some(95),
                ..large
            }
            .conflict(),
            None
        );
    }

    #[test]
    fn settings_read_back_as_fio_options() {
        let given = WriteData {
            compress_percent: Some(30),
            dedupe_percent: Some(10),
            dedupe_mode: DedupeMode::WorkingSet,
            pattern: Some(BufferPattern::parse("0x0102").unwrap()),
            refill: Some(false),
            ..data()
        };
        let options = given.fio_options();
        let text: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            text,
            [
                "buffer_compress_percentage=30",
                "dedupe_percentage=10",
                "dedupe_mode=working_set",
                "dedupe_working_set_percentage=5",
                "buffer_pattern=0x0102",
                "refill_buffers=0"
            ]
        );
        assert!(data().fio_options().is_empty());
    }

    #[test]
    fn descriptions_say_what_is_written() {
        let described = |data: WriteData| data.describe().unwrap();
        assert_eq!(
            described(WriteData {
                compress_percent: Some(75),
                compress_chunk_bytes: Some(8192),
                dedupe_percent: Some(30),
                ..data()
            }),
            "75% compressible in 8k chunks, 30% duplicate"
        );
        assert_eq!(
            described(WriteData {
                pattern: Some(BufferPattern::parse("\"abcd\"").unwrap()),
                ..data()
            }),
            "pattern \"abcd\""
        );
        assert_eq!(
            described(WriteData {
                refill: Some(true),
                ..data()
            }),
            "random, refilled"
        );
        assert_eq!(
            described(WriteData {
                scramble: Some(false),
                ..data()
            }),
            "random, not scrambled"
        );
    }
}
