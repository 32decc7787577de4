//! Sweeps (Iometer's cycling): one test per point of one or more axes.
//!
//! `--sweep qd=1,2,4..256` (a list; `A..B` doubles from A to B), `--sweep bs=512..1m`,
//! `--sweep workers=1..32/+4` (`/+S` steps linearly by S, `/*F` multiplies by F). Several
//! `--sweep` flags combine: every combination is a point, the first axis varying slowest.

use super::{TestPlan, WorkloadError};
use crate::result::{AccessLine, SweepAxis, SweepValue};
use crate::units::{format_size, parse_size};

impl SweepAxis {
    /// Name as written on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SweepAxis::Qd => "qd",
            SweepAxis::Bs => "bs",
            SweepAxis::Workers => "workers",
        }
    }
}

/// One axis and its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The axis.
    pub axis: SweepAxis,
    /// Its values, in order.
    pub values: Vec<u64>,
}

/// Most points one sweep may produce.
pub const MAX_POINTS: usize = 1_000;

fn parse_value(axis: SweepAxis, text: &str) -> Result<u64, WorkloadError> {
    let value = match axis {
        SweepAxis::Bs => parse_size(text)?,
        _ => text
            .trim()
            .parse::<u64>()
            .map_err(|_| WorkloadError::value(text, "is not a whole number"))?,
    };
    let limit = match axis {
        SweepAxis::Qd => u64::from(super::limits::MAX_QUEUE_DEPTH),
        SweepAxis::Workers => 4_096,
        SweepAxis::Bs => 1 << 30,
    };
    if value == 0 || value > limit {
        return Err(WorkloadError::SweepValue {
            axis: axis.name(),
            text: text.to_string(),
            limit,
        });
    }
    Ok(value)
}

impl Sweep {
    /// Reads `qd=1,2,4..256`, `bs=512..1m`, `workers=1..32/+4`.
    pub fn parse(text: &str) -> Result<Self, WorkloadError> {
        let (name, values) = text
            .split_once('=')
            .ok_or_else(|| WorkloadError::part(text, "a sweep is AXIS=VALUES, as in qd=1..256"))?;
        let axis = match name.trim() {
            "qd" | "iodepth" => SweepAxis::Qd,
            "bs" => SweepAxis::Bs,
            "workers" | "numjobs" => SweepAxis::Workers,
            other => {
                return Err(WorkloadError::value(
                    other,
                    "cannot be swept (sweep qd, bs or workers)",
                ));
            }
        };
        let mut points = Vec::new();
        for part in values.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((from, rest)) = part.split_once("..") else {
                points.push(parse_value(axis, part)?);
                continue;
            };
            let (to, step) = match rest.split_once('/') {
                Some((to, step)) => (to, Some(step.trim())),
                None => (rest, None),
            };
            let (from, to) = (parse_value(axis, from)?, parse_value(axis, to)?);
            if from > to {
                return Err(WorkloadError::part(part, "the range must go upwards"));
            }
            let next: Box<dyn Fn(u64) -> u64> = match step {
                None => Box::new(|v| v * 2),
                Some(step) if step.starts_with('+') => {
                    let by = parse_value(axis, &step[1..])?;
                    Box::new(move |v| v + by)
                }
                Some(step) if step.starts_with('*') => {
                    let by: u64 = step[1..].parse().ok().filter(|f| *f >= 2).ok_or_else(|| {
                        WorkloadError::part(step, "a factor is a whole number of 2 or more")
                    })?;
                    Box::new(move |v| v * by)
                }
                Some(step) => {
                    return Err(WorkloadError::part(
                        step,
                        "a step is +N (linear) or *N (multiplying)",
                    ));
                }
            };
            let mut value = from;
            while value <= to {
                points.push(value);
                if points.len() > MAX_POINTS {
                    return Err(WorkloadError::value(
                        text,
                        format!("has more than {MAX_POINTS} points"),
                    ));
                }
                value = next(value);
            }
        }
        if points.is_empty() {
            return Err(WorkloadError::value(text, "gives no value"));
        }
        Ok(Sweep {
            axis,
            values: points,
        })
    }
}

/// Expands `tests` over every combination of `sweeps` (the first sweep varying slowest).
pub fn expand(tests: Vec<TestPlan>, sweeps: &[Sweep]) -> Result<Vec<TestPlan>, WorkloadError> {
    if sweeps.is_empty() {
        return Ok(tests);
    }
    let mut combinations: Vec<Vec<SweepValue>> = vec![Vec::new()];
    for sweep in sweeps {
        if combinations
            .iter()
            .any(|c| c.iter().any(|v| v.axis == sweep.axis))
        {
            return Err(WorkloadError::SweptTwice {
                axis: sweep.axis.name(),
            });
        }
        combinations = combinations
            .into_iter()
            .flat_map(|combination| {
                sweep.values.iter().map(move |value| {
                    let mut next = combination.clone();
                    next.push(SweepValue {
                        axis: sweep.axis,
                        value: *value,
                    });
                    next
                })
            })
            .collect();
        if combinations.len() > MAX_POINTS {
            return Err(WorkloadError::TooManySweepTests { limit: MAX_POINTS });
        }
    }
    let mut expanded = Vec::new();
    for test in tests {
        for combination in &combinations {
            let mut point = test.clone();
            let labels: Vec<String> = combination
                .iter()
                .map(|v| match v.axis {
                    SweepAxis::Bs => format!("bs={}", format_size(v.value)),
                    axis => format!("{}={}", axis.name(), v.value),
                })
                .collect();
            let automatic_name =
                test.jobs.len() == 1 && test.name == test.jobs[0].workload.summary();
            point.name = format!("{} {}", test.name, labels.join(" "));
            for job in &mut point.jobs {
                for value in combination {
                    match value.axis {
                        SweepAxis::Qd => job.workload.queue_depth = value.value as u32,
                        SweepAxis::Workers => job.workload.workers = value.value as u32,
                        SweepAxis::Bs => {
                            for line in &mut job.workload.access.lines {
                                *line = AccessLine {
                                    size_bytes: value.value,
                                    alignment_bytes: value.value,
                                    ..line.clone()
                                };
                            }
                        }
                    }
                }
            }
            if automatic_name {
                // A name made from the workload is made again from the swept workload.
                point.name = point.jobs[0].workload.summary();
            }
            point.settings.sweep = combination.clone();
            expanded.push(point);
        }
    }
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::suite::base_workload;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(
            Sweep::parse("qd=1,2,4..256").unwrap().values,
            [1, 2, 4, 8, 16, 32, 64, 128, 256]
        );
        assert_eq!(
            Sweep::parse("bs=512..4k").unwrap().values,
            [512, 1024, 2048, 4096]
        );
        assert_eq!(
            Sweep::parse("workers=1..13/+4").unwrap().values,
            [1, 5, 9, 13]
        );
        assert_eq!(Sweep::parse("qd=1..100/*10").unwrap().values, [1, 10, 100]);
        for bad in [
            "qd",
            "depth=1..4",
            "qd=0..4",
            "qd=8..4",
            "qd=1..4/x",
            "bs=4kk",
            "qd=",
            "qd=1..1000000/+1",
        ] {
            assert!(Sweep::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn combinations_make_named_points() {
        let test = TestPlan::single("base", base_workload(), vec![0]);
        let sweeps = [
            Sweep::parse("qd=1,8").unwrap(),
            Sweep::parse("bs=4k,64k").unwrap(),
        ];
        let points = expand(vec![test], &sweeps).unwrap();
        let names: Vec<&str> = points.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "base qd=1 bs=4k",
                "base qd=1 bs=64k",
                "base qd=8 bs=4k",
                "base qd=8 bs=64k"
            ]
        );
        assert_eq!(points[3].jobs[0].workload.queue_depth, 8);
        assert_eq!(points[3].jobs[0].workload.access.lines[0].size_bytes, 65536);
        assert_eq!(points[3].settings.sweep.len(), 2);
        assert!(
            expand(
                points.clone(),
                &[Sweep::parse("qd=1").unwrap(), Sweep::parse("qd=2").unwrap()]
            )
            .is_err()
        );
    }
}
