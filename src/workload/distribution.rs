//! Where random offsets fall: uniform (the default), zipf, pareto, normal or zoned, with fio's
//! parameters (`zipf:1.2`, `pareto:0.2`, `normal:10`, `zoned:60/10:30/20:10/70`).
//!
//! - **zipf:θ** — block of rank k is hit with probability ∝ k^-θ (sampled by rejection-inversion,
//!   O(1) per draw for any region size).
//! - **pareto:h** — a share 1-h of the accesses go to a share h of the blocks (h = 0.2: 80/20).
//! - **normal:σ%** — Gaussian around the middle of the region, σ in percent of the region.
//! - **zoned:A/S:…** — A % of the accesses go to the next S % of the region, zone after zone.
//! - **zoned_abs:A/SIZE:…** — the same with absolute zone sizes (`zoned_abs:60/20g:40/100g`);
//!   the zones must fit in the region, whose rest is not accessed.
//! - **sequence:2,0,1** — a fixed sequence of blocks (multiples of the alignment), repeated;
//!   **sequence_stride:2,0,1** moves each repetition on by the sequence's length (2,0,1,5,3,4 …)
//!   and starts over at the end of the region.
//!
//! zipf, pareto and normal take an optional centre from 0 to 1 (`zipf:1.2:0.25`): the place of
//! the hottest block as a share of the region (by default the start of the scattered order for
//! zipf and pareto, the middle for normal).
//!
//! Hot blocks of zipf and pareto are scattered over the region by a fixed permutation, so that
//! "hot" is not "at the start of the file".

use super::WorkloadError;
use crate::result::{AbsoluteZone, OffsetDistribution, Zone};

/// Most blocks a sequence may name (fio's limit).
pub const MAX_SEQUENCE_BLOCKS: usize = 64;

/// Reads `A/B:…` zones whose sizes `size` reads.
fn zones_of<T>(
    text: &str,
    parameter: &str,
    size: impl Fn(&str) -> Result<T, WorkloadError>,
) -> Result<Vec<(f64, T)>, WorkloadError> {
    parameter
        .split(':')
        .map(|zone| {
            let (access, zone_size) = zone.split_once('/').ok_or_else(|| {
                WorkloadError::part(text, "a zone is ACCESS%/SIZE, as in zoned:60/10:40/90")
            })?;
            let access = access
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| (0.0..=100.0).contains(v))
                .ok_or_else(|| {
                    WorkloadError::part(text, format!("'{access}' is not a percentage"))
                })?;
            Ok((access, size(zone_size.trim())?))
        })
        .collect()
}

impl OffsetDistribution {
    /// Reads fio's spelling: `random`, `zipf:1.2`, `pareto:0.2`, `normal:10`,
    /// `zoned:60/10:30/20:10/70`.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let (kind, parameter) = text.split_once(':').unwrap_or((text, ""));
        let (value, center) = match parameter.split_once(':') {
            Some((value, center)) if matches!(kind, "zipf" | "pareto" | "normal" | "gauss") => {
                let center = center
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|c| (0.0..=1.0).contains(c))
                    .ok_or_else(|| {
                        WorkloadError::part(
                            text,
                            format!("the centre '{center}' is not from 0 to 1"),
                        )
                    })?;
                (value, Some(center))
            }
            _ => (parameter, None),
        };
        let number = |what: &str| -> Result<f64, WorkloadError> {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    WorkloadError::part(text, format!("{what} needs a number, as in {what}:1.2"))
                })
        };
        let distribution = match kind {
            "random" | "uniform" => OffsetDistribution::Uniform,
            "zipf" => OffsetDistribution::Zipf {
                theta: number("zipf")?,
                center,
            },
            "pareto" => OffsetDistribution::Pareto {
                h: number("pareto")?,
                center,
            },
            "normal" | "gauss" => OffsetDistribution::Normal {
                stddev_percent: number("normal")?,
                center,
            },
            "zoned" => {
                let zones = zones_of(text, parameter, |size| {
                    size.parse::<f64>()
                        .ok()
                        .filter(|v| (0.0..=100.0).contains(v))
                        .ok_or_else(|| {
                            WorkloadError::part(text, format!("'{size}' is not a percentage"))
                        })
                })?;
                OffsetDistribution::Zoned {
                    zones: zones
                        .into_iter()
                        .map(|(access_percent, size_percent)| Zone {
                            access_percent,
                            size_percent,
                        })
                        .collect(),
                }
            }
            "zoned_abs" => {
                let zones = zones_of(text, parameter, |size| {
                    crate::units::parse_size(size)
                        .map_err(|e| WorkloadError::part(text, e.to_string()))
                })?;
                OffsetDistribution::ZonedAbsolute {
                    zones: zones
                        .into_iter()
                        .map(|(access_percent, size_bytes)| AbsoluteZone {
                            access_percent,
                            size_bytes,
                        })
                        .collect(),
                }
            }
            "sequence" | "sequence_stride" => OffsetDistribution::Sequence {
                blocks: parameter
                    .split(',')
                    .map(|block| {
                        block.trim().parse::<u64>().map_err(|_| {
                            WorkloadError::part(
                                text,
                                format!("'{block}' is not a block number (sequence:2,0,1)"),
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?,
                stride: kind == "sequence_stride",
            },
            other => {
                return Err(WorkloadError::Unknown {
                    kind: "distribution",
                    name: other.to_string(),
                    choices: "choose random, zipf:θ, pareto:h, normal:σ%, zoned:A/S:…, zoned_abs:A/SIZE:…, sequence:B,B,…".to_string(),
                });
            }
        };
        distribution.validate()?;
        Ok(distribution)
    }

    /// Checks that the distribution fits a region of `region_bytes` whose random offsets are
    /// multiples of `block_bytes`: absolute zones must end inside it, sequence blocks lie in it.
    pub fn check_region(&self, region_bytes: u64, block_bytes: u64) -> Result<(), String> {
        match self {
            OffsetDistribution::ZonedAbsolute { zones } => {
                let total: u64 = zones.iter().map(|zone| zone.size_bytes).sum();
                if total > region_bytes {
                    return Err(format!(
                        "{self}: the zones add up to {total} bytes, more than the region ({region_bytes} bytes)"
                    ));
                }
                Ok(())
            }
            OffsetDistribution::Sequence { blocks, .. } => {
                let count = region_bytes / block_bytes.max(1);
                match blocks.iter().find(|&&block| block >= count) {
                    Some(block) => Err(format!(
                        "{self}: block {block} is past the end of the region ({count} blocks of {block_bytes} bytes)"
                    )),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        match self {
            OffsetDistribution::Uniform => Ok(()),
            OffsetDistribution::Zipf { theta, .. } if *theta > 0.0 && *theta < 100.0 => Ok(()),
            OffsetDistribution::Zipf { theta, .. } => Err(WorkloadError::parameter(
                format!("zipf:{theta}"),
                "the exponent must be above 0",
            )),
            OffsetDistribution::Pareto { h, .. } if *h > 0.0 && *h < 1.0 => Ok(()),
            OffsetDistribution::Pareto { h, .. } => Err(WorkloadError::parameter(
                format!("pareto:{h}"),
                "h must lie between 0 and 1",
            )),
            OffsetDistribution::Normal { stddev_percent, .. }
                if *stddev_percent > 0.0 && *stddev_percent <= 100.0 =>
            {
                Ok(())
            }
            OffsetDistribution::Normal { stddev_percent, .. } => Err(WorkloadError::parameter(
                format!("normal:{stddev_percent}"),
                "the deviation must be a percentage above 0",
            )),
            OffsetDistribution::ZonedAbsolute { zones } => {
                let access: f64 = zones.iter().map(|z| z.access_percent).sum();
                if zones.is_empty() || (access - 100.0).abs() > 1e-6 {
                    Err(WorkloadError::parameter(
                        "zoned_abs",
                        format!("the access shares add up to {access} %; they must be 100"),
                    ))
                } else if zones.iter().any(|zone| zone.size_bytes == 0) {
                    Err(WorkloadError::parameter(
                        "zoned_abs",
                        "every zone needs a size above 0",
                    ))
                } else {
                    Ok(())
                }
            }
            OffsetDistribution::Sequence { blocks, .. } => {
                if blocks.is_empty() || blocks.len() > MAX_SEQUENCE_BLOCKS {
                    Err(WorkloadError::parameter(
                        "sequence",
                        format!(
                            "give 1 to {MAX_SEQUENCE_BLOCKS} block numbers, as in sequence:2,0,1"
                        ),
                    ))
                } else {
                    Ok(())
                }
            }
            OffsetDistribution::Zoned { zones } => {
                let access: f64 = zones.iter().map(|z| z.access_percent).sum();
                let size: f64 = zones.iter().map(|z| z.size_percent).sum();
                if zones.is_empty() || (access - 100.0).abs() > 1e-6 || (size - 100.0).abs() > 1e-6
                {
                    Err(WorkloadError::parameter(
                        "zoned",
                        format!(
                            "the access shares add up to {access} % and the size shares to {size} %; both must be 100"
                        ),
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl std::fmt::Display for OffsetDistribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OffsetDistribution::Uniform => write!(f, "random"),
            OffsetDistribution::Zipf { theta, center } => {
                write!(f, "zipf:{theta}{}", center_text(center))
            }
            OffsetDistribution::Pareto { h, center } => {
                write!(f, "pareto:{h}{}", center_text(center))
            }
            OffsetDistribution::Normal {
                stddev_percent,
                center,
            } => write!(f, "normal:{stddev_percent}{}", center_text(center)),
            OffsetDistribution::ZonedAbsolute { zones } => {
                let parts: Vec<String> = zones
                    .iter()
                    .map(|z| {
                        format!(
                            "{}/{}",
                            z.access_percent,
                            crate::units::format_size(z.size_bytes)
                        )
                    })
                    .collect();
                write!(f, "zoned_abs:{}", parts.join(":"))
            }
            OffsetDistribution::Sequence { blocks, stride } => {
                let parts: Vec<String> = blocks.iter().map(u64::to_string).collect();
                let kind = if *stride {
                    "sequence_stride"
                } else {
                    "sequence"
                };
                write!(f, "{kind}:{}", parts.join(","))
            }
            OffsetDistribution::Zoned { zones } => {
                let parts: Vec<String> = zones
                    .iter()
                    .map(|z| format!("{}/{}", z.access_percent, z.size_percent))
                    .collect();
                write!(f, "zoned:{}", parts.join(":"))
            }
        }
    }
}

fn center_text(center: &Option<f64>) -> String {
    center.map(|c| format!(":{c}")).unwrap_or_default()
}

/// Draws slot indexes in `0..slots` from a distribution.
#[derive(Clone, Debug)]
pub struct SlotSampler {
    slots: u64,
    kind: SamplerKind,
    stride: u64,
    /// Added to every scattered or normal slot (the centre), modulo `slots`.
    offset: u64,
}

#[derive(Clone, Debug)]
enum SamplerKind {
    Uniform,
    Zipf(ZipfSampler),
    Pareto {
        power: f64,
    },
    Normal {
        mean: f64,
        stddev: f64,
    },
    Zoned {
        zones: Vec<(u32, u64, u64)>,
    },
    Sequence {
        blocks: Vec<u64>,
        stride: bool,
        drawn: u64,
    },
}

/// The greatest common divisor of `a` and `b` (`a` when `b` is 0).
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl SlotSampler {
    /// A sampler over `slots` (at least 1) slots of `slot_bytes` each.
    pub fn new(distribution: &OffsetDistribution, slots: u64, slot_bytes: u64) -> Self {
        let slots = slots.max(1);
        let mut offset = 0;
        let kind = match distribution {
            OffsetDistribution::Uniform => SamplerKind::Uniform,
            OffsetDistribution::Zipf { theta, center } => {
                offset = center.map_or(0, |c| (slots as f64 * c) as u64 % slots);
                SamplerKind::Zipf(ZipfSampler::new(slots, *theta))
            }
            OffsetDistribution::Pareto { h, center } => {
                offset = center.map_or(0, |c| (slots as f64 * c) as u64 % slots);
                SamplerKind::Pareto {
                    power: h.ln() / (1.0 - h).ln(),
                }
            }
            OffsetDistribution::Normal {
                stddev_percent,
                center,
            } => SamplerKind::Normal {
                mean: slots as f64 * center.unwrap_or(0.5),
                stddev: slots as f64 * stddev_percent / 100.0,
            },
            OffsetDistribution::ZonedAbsolute { zones } => {
                let slot_bytes = slot_bytes.max(1);
                let mut start = 0u64;
                let mut cumulative = 0u32;
                let mut table = Vec::new();
                for zone in zones {
                    let length =
                        (zone.size_bytes / slot_bytes).clamp(1, slots.saturating_sub(start).max(1));
                    cumulative += (zone.access_percent * 10_000.0).round() as u32;
                    table.push((cumulative, start.min(slots - 1), length));
                    start = (start + length).min(slots);
                }
                SamplerKind::Zoned { zones: table }
            }
            OffsetDistribution::Sequence { blocks, stride } => SamplerKind::Sequence {
                blocks: blocks.clone(),
                stride: *stride,
                drawn: 0,
            },
            OffsetDistribution::Zoned { zones } => {
                let mut start = 0u64;
                let mut cumulative = 0u32;
                let mut table = Vec::new();
                for (index, zone) in zones.iter().enumerate() {
                    let length = if index + 1 == zones.len() {
                        slots - start
                    } else {
                        ((slots as f64 * zone.size_percent / 100.0) as u64).min(slots - start)
                    };
                    cumulative += (zone.access_percent * 10_000.0).round() as u32;
                    table.push((cumulative, start, length.max(1)));
                    start = (start + length).min(slots - 1);
                }
                SamplerKind::Zoned { zones: table }
            }
        };
        let mut stride = ((slots as f64 * 0.618_033_988_75) as u64) | 1;
        while gcd(stride, slots) != 1 {
            stride += 2;
        }
        SlotSampler {
            slots,
            kind,
            stride: stride % slots.max(2),
            offset,
        }
    }

    /// The rank-th hottest slot (a bijection of `0..slots`).
    #[inline]
    fn scatter(&self, rank: u64) -> u64 {
        if self.slots <= 1 {
            return 0;
        }
        ((rank as u128 * self.stride.max(1) as u128) % self.slots as u128) as u64
    }

    /// Draws the hotness rank (0 = hottest) of zipf and pareto, or the slot for the others.
    #[inline]
    pub fn rank(&mut self, rng: &mut fastrand::Rng) -> u64 {
        let slots = self.slots;
        match &mut self.kind {
            SamplerKind::Uniform => rng.u64(0..self.slots),
            SamplerKind::Zipf(zipf) => zipf.sample(rng) - 1,
            SamplerKind::Pareto { power } => {
                let rank = ((self.slots - 1) as f64 * rng.f64().powf(*power)) as u64;
                rank.min(self.slots - 1)
            }
            SamplerKind::Normal { mean, stddev } => loop {
                // Box–Muller.
                let u1 = rng.f64().max(f64::MIN_POSITIVE);
                let u2 = rng.f64();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let value = *mean + z * *stddev;
                if value >= 0.0 && value < self.slots as f64 {
                    break value as u64;
                }
            },
            SamplerKind::Zoned { zones } => {
                let draw = rng.u32(0..1_000_000);
                let (_, start, length) = zones
                    .iter()
                    .find(|(cumulative, _, _)| draw < *cumulative)
                    .unwrap_or(&zones[zones.len() - 1]);
                start + rng.u64(0..*length)
            }
            SamplerKind::Sequence {
                blocks,
                stride,
                drawn,
            } => {
                let count = blocks.len() as u64;
                let index = *drawn % count;
                let base = if *stride { *drawn / count * count } else { 0 };
                *drawn += 1;
                let slot = base + blocks[index as usize];
                if slot >= slots {
                    // Past the end of the region: the strided pattern starts over.
                    *drawn = 1;
                    blocks[0].min(slots - 1)
                } else {
                    slot
                }
            }
        }
    }

    /// Draws a slot.
    #[inline]
    pub fn sample(&mut self, rng: &mut fastrand::Rng) -> u64 {
        let rank = self.rank(rng);
        let slot = match self.kind {
            SamplerKind::Zipf(_) | SamplerKind::Pareto { .. } => self.scatter(rank),
            _ => rank,
        };
        if self.offset == 0 {
            slot
        } else {
            (slot + self.offset) % self.slots
        }
    }
}

/// Zipf sampling over ranks 1..=n by rejection-inversion (Hörmann and Derflinger, 1996).
#[derive(Clone, Debug)]
struct ZipfSampler {
    n: f64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl ZipfSampler {
    fn new(n: u64, exponent: f64) -> Self {
        let mut sampler = ZipfSampler {
            n: n as f64,
            exponent,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        sampler.h_integral_x1 = sampler.h_integral(1.5) - 1.0;
        sampler.h_integral_n = sampler.h_integral(n as f64 + 0.5);
        sampler.s = 2.0 - sampler.h_integral_inverse(sampler.h_integral(2.5) - sampler.h(2.0));
        sampler
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        expm1_over_x((1.0 - self.exponent) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (log1p_over_x(t) * x).exp()
    }

    fn sample(&self, rng: &mut fastrand::Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.f64() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// (e^x - 1) / x, continuous at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0
    }
}

/// ln(1 + x) / x, continuous at 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::OffsetDistribution;

    const DRAWS: usize = 1_000_000;

    /// Share of draws that hit the hottest `hot` ranks.
    fn hot_share(sampler: &mut SlotSampler, hot: u64) -> f64 {
        let mut rng = fastrand::Rng::with_seed(11);
        let hits = (0..DRAWS).filter(|_| sampler.rank(&mut rng) < hot).count();
        hits as f64 / DRAWS as f64
    }

    #[test]
    fn zipf_hot_set_matches_theory() {
        let slots = 100_000u64;
        for theta in [0.8, 1.2, 2.0] {
            let mut sampler = SlotSampler::new(
                &OffsetDistribution::Zipf {
                    theta,
                    center: None,
                },
                slots,
                1,
            );
            let weight = |k: u64| (k as f64).powf(-theta);
            let total: f64 = (1..=slots).map(weight).sum();
            for hot in [10u64, 1_000, 10_000] {
                let theory = (1..=hot).map(weight).sum::<f64>() / total;
                let measured = hot_share(&mut sampler, hot);
                assert!(
                    (measured - theory).abs() < 0.02 * theory.max(0.05),
                    "zipf {theta}, top {hot}: {measured} vs {theory}"
                );
            }
        }
    }

    #[test]
    fn pareto_puts_one_minus_h_on_h() {
        let mut sampler = SlotSampler::new(
            &OffsetDistribution::Pareto {
                h: 0.2,
                center: None,
            },
            1_000_000,
            1,
        );
        let share = hot_share(&mut sampler, 200_000);
        assert!((share - 0.8).abs() < 0.01, "{share}");
    }

    #[test]
    fn normal_keeps_68_percent_within_one_deviation() {
        let slots = 1_000_000u64;
        let mut sampler = SlotSampler::new(
            &OffsetDistribution::Normal {
                stddev_percent: 10.0,
                center: None,
            },
            slots,
            1,
        );
        let mut rng = fastrand::Rng::with_seed(3);
        let inside = (0..DRAWS)
            .filter(|_| sampler.sample(&mut rng).abs_diff(slots / 2) < slots / 10)
            .count();
        let share = inside as f64 / DRAWS as f64;
        assert!((share - 0.6827).abs() < 0.01, "{share}");
    }

    #[test]
    fn zones_get_their_shares() {
        let distribution = OffsetDistribution::parse("zoned:60/10:30/20:10/70").unwrap();
        let slots = 1_000u64;
        let mut sampler = SlotSampler::new(&distribution, slots, 1);
        let mut rng = fastrand::Rng::with_seed(5);
        let mut counts = [0usize; 3];
        for _ in 0..DRAWS {
            let slot = sampler.sample(&mut rng);
            counts[if slot < 100 {
                0
            } else if slot < 300 {
                1
            } else {
                2
            }] += 1;
        }
        for (count, expected) in counts.iter().zip([0.6, 0.3, 0.1]) {
            let share = *count as f64 / DRAWS as f64;
            assert!((share - expected).abs() < 0.01, "{counts:?}");
        }
    }

    #[test]
    fn centres_absolute_zones_and_sequences() {
        let mut rng = fastrand::Rng::with_seed(7);
        let normal = OffsetDistribution::parse("normal:5:0.25").unwrap();
        let mut sampler = SlotSampler::new(&normal, 1000, 1);
        let mean = (0..10_000).map(|_| sampler.sample(&mut rng)).sum::<u64>() as f64 / 10_000.0;
        assert!((mean - 250.0).abs() < 10.0, "{mean}");
        let zoned = OffsetDistribution::parse("zoned_abs:80/4k:20/12k").unwrap();
        assert!(zoned.check_region(16384, 1024).is_ok());
        assert!(zoned.check_region(8192, 1024).is_err());
        let mut sampler = SlotSampler::new(&zoned, 64, 1024);
        let low = (0..10_000).filter(|_| sampler.sample(&mut rng) < 4).count();
        assert!((low as f64 / 10_000.0 - 0.8).abs() < 0.02, "{low}");
        let sequence = OffsetDistribution::parse("sequence:2,0,1").unwrap();
        let mut sampler = SlotSampler::new(&sequence, 12, 4096);
        let slots: Vec<u64> = (0..6).map(|_| sampler.sample(&mut rng)).collect();
        assert_eq!(slots, [2, 0, 1, 2, 0, 1]);
        let strided = OffsetDistribution::parse("sequence_stride:2,0,1").unwrap();
        let mut sampler = SlotSampler::new(&strided, 6, 4096);
        let slots: Vec<u64> = (0..8).map(|_| sampler.sample(&mut rng)).collect();
        assert_eq!(slots, [2, 0, 1, 5, 3, 4, 2, 0]);
        assert!(sequence.check_region(3 * 4096, 4096).is_ok());
        assert!(sequence.check_region(2 * 4096, 4096).is_err());
    }

    #[test]
    fn scattering_is_a_permutation() {
        for slots in [1u64, 2, 10, 64, 1000, 4096] {
            let sampler = SlotSampler::new(
                &OffsetDistribution::Zipf {
                    theta: 1.2,
                    center: None,
                },
                slots,
                1,
            );
            let mut seen: Vec<u64> = (0..slots).map(|r| sampler.scatter(r)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..slots).collect::<Vec<_>>(), "{slots}");
        }
    }

    #[test]
    fn parse_and_refuse() {
        assert_eq!(
            OffsetDistribution::parse("zipf:1.2").unwrap(),
            OffsetDistribution::Zipf {
                theta: 1.2,
                center: None
            }
        );
        for text in [
            "zipf:1.2:0.25",
            "pareto:0.3:0.5",
            "normal:10:0.2",
            "zoned_abs:60/1m:40/3m",
            "sequence:2,0,1",
            "sequence_stride:2,0,1",
        ] {
            let parsed = OffsetDistribution::parse(text).unwrap();
            assert_eq!(parsed.to_string(), text);
        }
        for bad in [
            "zipf",
            "pareto:1.5",
            "normal:0",
            "zoned:50/50:40/50",
            "lognormal:2",
            "zipf:1.2:2",
            "zoned_abs:60/1m:30/1m",
            "sequence:",
            "sequence:1,x",
        ] {
            assert!(OffsetDistribution::parse(bad).is_err(), "{bad}");
        }
    }
}
