//! Where random offsets fall: uniform (the default), zipf, pareto, normal or zoned, with fio's
//! parameters (`zipf:1.2`, `pareto:0.2`, `normal:10`, `zoned:60/10:30/20:10/70`).
//!
//! - **zipf:θ** — block of rank k is hit with probability ∝ k^-θ (sampled by rejection-inversion,
//!   O(1) per draw for any region size).
//! - **pareto:h** — a share 1-h of the accesses go to a share h of the blocks (h = 0.2: 80/20).
//! - **normal:σ%** — Gaussian around the middle of the region, σ in percent of the region.
//! - **zoned:A/S:…** — A % of the accesses go to the next S % of the region, zone after zone.
//!
//! Hot blocks of zipf and pareto are scattered over the region by a fixed permutation, so that
//! "hot" is not "at the start of the file".

use super::WorkloadError;
use crate::result::{OffsetDistribution, Zone};

impl OffsetDistribution {
    /// Reads fio's spelling: `random`, `zipf:1.2`, `pareto:0.2`, `normal:10`,
    /// `zoned:60/10:30/20:10/70`.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let (kind, parameter) = text.split_once(':').unwrap_or((text, ""));
        let number = |what: &str| -> Result<f64, WorkloadError> {
            parameter
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
            },
            "pareto" => OffsetDistribution::Pareto {
                h: number("pareto")?,
            },
            "normal" | "gauss" => OffsetDistribution::Normal {
                stddev_percent: number("normal")?,
            },
            "zoned" => {
                let zones = parameter
                    .split(':')
                    .map(|zone| {
                        let (access, size) = zone.split_once('/').ok_or_else(|| {
                            WorkloadError::part(
                                text,
                                "a zone is ACCESS%/SIZE%, as in zoned:60/10:40/90",
                            )
                        })?;
                        let parse = |v: &str| {
                            v.trim()
                                .parse::<f64>()
                                .ok()
                                .filter(|v| (0.0..=100.0).contains(v))
                                .ok_or_else(|| {
                                    WorkloadError::part(text, format!("'{v}' is not a percentage"))
                                })
                        };
                        Ok(Zone {
                            access_percent: parse(access)?,
                            size_percent: parse(size)?,
                        })
                    })
                    .collect::<Result<Vec<_>, WorkloadError>>()?;
                OffsetDistribution::Zoned { zones }
            }
            other => {
                return Err(WorkloadError::Unknown {
                    kind: "distribution",
                    name: other.to_string(),
                    choices: "choose random, zipf:θ, pareto:h, normal:σ%, zoned:A/S:…".to_string(),
                });
            }
        };
        distribution.validate()?;
        Ok(distribution)
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        match self {
            OffsetDistribution::Uniform => Ok(()),
            OffsetDistribution::Zipf { theta } if *theta > 0.0 && *theta < 100.0 => Ok(()),
            OffsetDistribution::Zipf { theta } => Err(WorkloadError::parameter(
                format!("zipf:{theta}"),
                "the exponent must be above 0",
            )),
            OffsetDistribution::Pareto { h } if *h > 0.0 && *h < 1.0 => Ok(()),
            OffsetDistribution::Pareto { h } => Err(WorkloadError::parameter(
                format!("pareto:{h}"),
                "h must lie between 0 and 1",
            )),
            OffsetDistribution::Normal { stddev_percent }
                if *stddev_percent > 0.0 && *stddev_percent <= 100.0 =>
            {
                Ok(())
            }
            OffsetDistribution::Normal { stddev_percent } => Err(WorkloadError::parameter(
                format!("normal:{stddev_percent}"),
                "the deviation must be a percentage above 0",
            )),
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
            OffsetDistribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            OffsetDistribution::Pareto { h } => write!(f, "pareto:{h}"),
            OffsetDistribution::Normal { stddev_percent } => write!(f, "normal:{stddev_percent}"),
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

/// Draws slot indexes in `0..slots` from a distribution.
#[derive(Clone, Debug)]
pub struct SlotSampler {
    slots: u64,
    kind: SamplerKind,
    stride: u64,
}

#[derive(Clone, Debug)]
enum SamplerKind {
    Uniform,
    Zipf(ZipfSampler),
    Pareto { power: f64 },
    Normal { mean: f64, stddev: f64 },
    Zoned { zones: Vec<(u32, u64, u64)> },
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl SlotSampler {
    /// A sampler over `slots` (at least 1) slots.
    pub fn new(distribution: &OffsetDistribution, slots: u64) -> Self {
        let slots = slots.max(1);
        let kind = match distribution {
            OffsetDistribution::Uniform => SamplerKind::Uniform,
            OffsetDistribution::Zipf { theta } => {
                SamplerKind::Zipf(ZipfSampler::new(slots, *theta))
            }
            OffsetDistribution::Pareto { h } => SamplerKind::Pareto {
                power: h.ln() / (1.0 - h).ln(),
            },
            OffsetDistribution::Normal { stddev_percent } => SamplerKind::Normal {
                mean: slots as f64 / 2.0,
                stddev: slots as f64 * stddev_percent / 100.0,
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
    pub fn rank(&self, rng: &mut fastrand::Rng) -> u64 {
        match &self.kind {
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
                let value = mean + z * stddev;
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
        }
    }

    /// Draws a slot.
    #[inline]
    pub fn sample(&self, rng: &mut fastrand::Rng) -> u64 {
        let rank = self.rank(rng);
        match self.kind {
            SamplerKind::Zipf(_) | SamplerKind::Pareto { .. } => self.scatter(rank),
            _ => rank,
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
    fn hot_share(sampler: &SlotSampler, hot: u64) -> f64 {
        let mut rng = fastrand::Rng::with_seed(11);
        let hits = (0..DRAWS).filter(|_| sampler.rank(&mut rng) < hot).count();
        hits as f64 / DRAWS as f64
    }

    #[test]
    fn zipf_hot_set_matches_theory() {
        let slots = 100_000u64;
        for theta in [0.8, 1.2, 2.0] {
            let sampler = SlotSampler::new(&OffsetDistribution::Zipf { theta }, slots);
            let weight = |k: u64| (k as f64).powf(-theta);
            let total: f64 = (1..=slots).map(weight).sum();
            for hot in [10u64, 1_000, 10_000] {
                let theory = (1..=hot).map(weight).sum::<f64>() / total;
                let measured = hot_share(&sampler, hot);
                assert!(
                    (measured - theory).abs() < 0.02 * theory.max(0.05),
                    "zipf {theta}, top {hot}: {measured} vs {theory}"
                );
            }
        }
    }

    #[test]
    fn pareto_puts_one_minus_h_on_h() {
        let sampler = SlotSampler::new(&OffsetDistribution::Pareto { h: 0.2 }, 1_000_000);
        let share = hot_share(&sampler, 200_000);
        assert!((share - 0.8).abs() < 0.01, "{share}");
    }

    #[test]
    fn normal_keeps_68_percent_within_one_deviation() {
        let slots = 1_000_000u64;
        let sampler = SlotSampler::new(
            &OffsetDistribution::Normal {
                stddev_percent: 10.0,
            },
            slots,
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
        let sampler = SlotSampler::new(&distribution, slots);
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
    fn scattering_is_a_permutation() {
        for slots in [1u64, 2, 10, 64, 1000, 4096] {
            let sampler = SlotSampler::new(&OffsetDistribution::Zipf { theta: 1.2 }, slots);
            let mut seen: Vec<u64> = (0..slots).map(|r| sampler.scatter(r)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..slots).collect::<Vec<_>>(), "{slots}");
        }
    }

    #[test]
    fn parse_and_refuse() {
        assert_eq!(
            OffsetDistribution::parse("zipf:1.2").unwrap(),
            OffsetDistribution::Zipf { theta: 1.2 }
        );
        for bad in [
            "zipf",
            "pareto:1.5",
            "normal:0",
            "zoned:50/50:40/50",
            "lognormal:2",
        ] {
            assert!(OffsetDistribution::parse(bad).is_err(), "{bad}");
        }
    }
}
