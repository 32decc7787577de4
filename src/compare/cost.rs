//! Cost and density: given each run's price (`--cost fc=1200,iscsi=2400`, any currency) and
//! ports (`--ports fc=2,iscsi=1`), the price per GB/s and per 1,000 IOPS, the bandwidth per
//! port, and for a target bandwidth (`--target-bandwidth 10GB/s`) the ports and the units
//! (each as measured) needed to reach it.
//!
//! A run's bandwidth is its best MB/s among the tests every run has (so that each run is
//! judged on the same tests), its IOPS the best IOPS among them; with no test in common, the
//! best of all its tests. Scaling to a target assumes units add up linearly, which the
//! switch, the array and the host may not allow: the report says so.
//!
//! ```
//! use iopath::compare::cost::parse_assignments;
//! let prices = parse_assignments("--cost", "fc=1200, iscsi=2400.50").unwrap();
//! assert_eq!(prices, [("fc".to_string(), 1200.0), ("iscsi".to_string(), 2400.5)]);
//! assert!(parse_assignments("--cost", "fc").is_err());
//! ```

use super::CompareError;
use super::comparison::{ComparedTest, CostReport, RunCost};
use crate::result::RunResult;

/// Prices, ports and a target, as given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostInputs {
    /// (run label, price).
    pub prices: Vec<(String, f64)>,
    /// (run label, ports).
    pub ports: Vec<(String, f64)>,
    /// Bandwidth to reach, bytes per second.
    pub target_bytes_per_second: Option<f64>,
}

impl CostInputs {
    /// Reads the flags: each of `prices` and `ports` is `LABEL=NUMBER[,LABEL=NUMBER…]` (the
    /// flags may repeat), `target` a rate such as `10GB/s` or `40Gb/s`.
    pub fn from_flags(
        prices: &[String],
        ports: &[String],
        target: Option<&str>,
    ) -> Result<Option<Self>, CompareError> {
        let mut inputs = CostInputs::default();
        for text in prices {
            inputs.prices.extend(parse_assignments("--cost", text)?);
        }
        for text in ports {
            for (label, count) in parse_assignments("--ports", text)? {
                if count < 1.0 || count.fract() != 0.0 {
                    return Err(CompareError::BadValue {
                        flag: "--ports",
                        reason: format!("{label}={count}: ports are a whole number, 1 or more"),
                    });
                }
                inputs.ports.push((label, count));
            }
        }
        if let Some(target) = target {
            let rate = crate::analysis::declared::parse_rate(target).map_err(|reason| {
                CompareError::BadValue {
                    flag: "--target-bandwidth",
                    reason,
                }
            })?;
            inputs.target_bytes_per_second = Some(rate as f64);
        }
        let empty = inputs.prices.is_empty() && inputs.ports.is_empty();
        if empty && inputs.target_bytes_per_second.is_some() {
            return Err(CompareError::BadValue {
                flag: "--target-bandwidth",
                reason: "needs --ports or --cost to say what one unit is".into(),
            });
        }
        Ok((!empty).then_some(inputs))
    }
}

/// Reads `LABEL=NUMBER[,LABEL=NUMBER…]` for `flag`.
pub fn parse_assignments(
    flag: &'static str,
    text: &str,
) -> Result<Vec<(String, f64)>, CompareError> {
    let bad = |reason: String| CompareError::BadValue { flag, reason };
    let mut pairs = Vec::new();
    for part in text
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        let (label, number) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("'{part}' is not LABEL=NUMBER")))?;
        let value: f64 = number
            .trim()
            .parse()
            .ok()
            .filter(|value: &f64| value.is_finite() && *value >= 0.0)
            .ok_or_else(|| {
                bad(format!(
                    "'{part}': '{}' is not a number of 0 or more",
                    number.trim()
                ))
            })?;
        pairs.push((label.trim().to_string(), value));
    }
    if pairs.is_empty() {
        return Err(bad(format!("'{text}' gives no LABEL=NUMBER")));
    }
    Ok(pairs)
}

fn value_for(
    pairs: &[(String, f64)],
    labels: &[&str],
    flag: &'static str,
) -> Result<Vec<Option<f64>>, CompareError> {
    let mut values = vec![None; labels.len()];
    for (label, value) in pairs {
        let index = super::labels::index_of(labels, label, flag)?;
        values[index] = Some(*value);
    }
    Ok(values)
}

/// The cost report of runs `results` labelled `labels`, whose common tests are `compared`.
pub fn cost_report(
    inputs: &CostInputs,
    labels: &[&str],
    results: &[&RunResult],
    compared: &[ComparedTest],
) -> Result<CostReport, CompareError> {
    let prices = value_for(&inputs.prices, labels, "--cost")?;
    let ports = value_for(&inputs.ports, labels, "--ports")?;
    let target = inputs.target_bytes_per_second;
    let basis = if compared.is_empty() {
        "peaks over all tests of each run (no test is in every run)".to_string()
    } else {
        format!(
            "peaks over the {} test{} every run has",
            compared.len(),
            if compared.len() == 1 { "" } else { "s" }
        )
    };
    let mut runs = Vec::with_capacity(labels.len());
    for (index, label) in labels.iter().enumerate() {
        let candidates: Vec<(String, f64, f64)> = if compared.is_empty() {
            results[index]
                .tests
                .iter()
                .map(|test| {
                    let direction = super::significance::figure_direction(&[test]);
                    let figures = super::significance::direction_of(test, direction);
                    (test.name.clone(), figures.bytes_per_second, figures.iops)
                })
                .collect()
        } else {
            compared
                .iter()
                .map(|test| {
                    let figures = &test.figures[index];
                    (
                        test.name.clone(),
                        figures.bytes_per_second.value,
                        figures.iops.value,
                    )
                })
                .collect()
        };
        let best = |pick: fn(&(String, f64, f64)) -> f64| {
            candidates
                .iter()
                .max_by(|a, b| pick(a).total_cmp(&pick(b)))
                .map(|entry| (entry.0.clone(), pick(entry)))
                .unwrap_or_default()
        };
        let (bandwidth_test, bandwidth) = best(|entry| entry.1);
        let (iops_test, iops) = best(|entry| entry.2);
        let price = prices[index];
        let port_count = ports[index];
        let per_port = port_count
            .filter(|_| bandwidth > 0.0)
            .map(|count| bandwidth / count);
        let units_needed = target
            .filter(|_| bandwidth > 0.0)
            .map(|target| (target / bandwidth).ceil() as u64);
        runs.push(RunCost {
            run: label.to_string(),
            price,
            ports: port_count.map(|count| count as u32),
            peak_bytes_per_second: bandwidth,
            peak_bytes_per_second_test: bandwidth_test,
            peak_iops: iops,
            peak_iops_test: iops_test,
            price_per_gigabyte_per_second: price
                .filter(|_| bandwidth > 0.0)
                .map(|price| price / (bandwidth / 1e9)),
            price_per_thousand_iops: price
                .filter(|_| iops > 0.0)
                .map(|price| price / (iops / 1e3)),
            bytes_per_second_per_port: per_port,
            ports_needed: target
                .zip(per_port)
                .map(|(target, per_port)| (target / per_port).ceil() as u64),
            units_needed,
            price_for_target: units_needed
                .zip(price)
                .map(|(units, price)| units as f64 * price),
        });
    }
    Ok(CostReport {
        target_bytes_per_second: target,
        basis,
        runs,
    })
}
