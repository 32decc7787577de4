//! The fio options that reach past the basic pattern, in fio's own terms (stage one): shares of
//! the file (`offset=N%`, `size=N%`, `io_size=N%`, `offset_increment`), the offset modifier of
//! `rw` and `rw_sequencer`, CPU and NUMA placement, the arrival process, random start delays,
//! `exitall`, flows and the latency target — with the readers of their values.
//! [`super::extended_mapping`] turns them into iopath's workload.

use super::parsers::OptionError;
use super::settings::Set;
use super::values::{SizeValue, size_or_percent};
use crate::workload::job_controls::EndOthers;

/// A size in bytes or a share of the file (fio's `N%`, a whole percentage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// Bytes.
    Bytes(u64),
    /// Percent of the file or device (1 to 100).
    Percent(u32),
}

/// Reads a size or a whole percentage from 1 to 100.
pub fn share(text: &str, kb_base: u64) -> Result<Share, OptionError> {
    match size_or_percent(text, kb_base)? {
        SizeValue::Bytes(bytes) => Ok(Share::Bytes(bytes)),
        SizeValue::Percent(percent) if percent.fract() == 0.0 => Ok(Share::Percent(percent as u32)),
        SizeValue::Percent(percent) => Err(OptionError::BadValue(format!(
            "'{percent}%': fio reads whole percentages only (it would take {}%)",
            percent.trunc()
        ))),
    }
}

/// What `rw`'s `:N` suffix asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Modifier {
    /// No suffix (or `:0` on a sequential pattern, `:1` on a random one).
    #[default]
    None,
    /// Sequential: this many bytes added to the end of each I/O (negative: backwards).
    Step(i64),
    /// Random: a new random offset every this many I/Os.
    Every(u32),
}

/// The options of this module for one job (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct ExtendedSettings {
    /// `offset=N%`.
    pub offset_percent: Option<Set<u32>>,
    /// `size=N%`.
    pub size_percent: Option<Set<u32>>,
    /// `io_size=N%`.
    pub io_size_percent: Option<Set<u32>>,
    /// `offset_increment`.
    pub offset_increment: Option<Set<Share>>,
    /// `offset_align` (0: the smallest block).
    pub offset_align: u64,
    /// `rw`'s `:N`, with the line of the `rw` that gave it.
    pub modifier: Option<Set<Modifier>>,
    /// `rw_sequencer=identical`.
    pub repeat_offset: bool,
    /// `random_generator=lfsr`.
    pub lfsr: Option<Set<()>>,
    /// `random_sequence_stride`.
    pub sequence_stride: bool,
    /// `cpus_allowed` / `cpumask`: the CPUs.
    pub cpus: Option<Set<Vec<u32>>>,
    /// `cpus_allowed_policy=split`.
    pub cpus_split: bool,
    /// `numa_cpu_nodes`: the nodes.
    pub numa_nodes: Option<Set<Vec<u32>>>,
    /// `numa_mem_policy`, as written.
    pub numa_mem_policy: Option<Set<String>>,
    /// `rate_process=poisson`.
    pub poisson: Option<Set<()>>,
    /// The upper end of `startdelay=A-B`, ns.
    pub start_delay_high_ns: Option<u64>,
    /// `exitall`.
    pub exitall: Option<Set<()>>,
    /// `exit_what` (default: the group).
    pub exit_what: EndOthers,
    /// `exitall_on_error`.
    pub exitall_on_error: Option<Set<()>>,
    /// `steadystate_check_interval`, ns.
    pub steady_interval: Option<Set<u64>>,
    /// `flow`: the weight.
    pub flow: Option<Set<u32>>,
    /// `flow_id`.
    pub flow_id: u32,
    /// `flow_sleep`, ns.
    pub flow_sleep_ns: u64,
    /// `latency_target`, ns.
    pub latency_target: Option<Set<u64>>,
    /// `latency_window`, ns.
    pub latency_window_ns: Option<u64>,
    /// `latency_percentile` (default 100).
    pub latency_percentile: f64,
    /// `latency_run`.
    pub latency_run: bool,
}

impl Default for ExtendedSettings {
    fn default() -> Self {
        ExtendedSettings {
            offset_percent: None,
            size_percent: None,
            io_size_percent: None,
            offset_increment: None,
            offset_align: 0,
            modifier: None,
            repeat_offset: false,
            lfsr: None,
            sequence_stride: false,
            cpus: None,
            cpus_split: false,
            numa_nodes: None,
            numa_mem_policy: None,
            poisson: None,
            start_delay_high_ns: None,
            exitall: None,
            exit_what: EndOthers::Group,
            exitall_on_error: None,
            steady_interval: None,
            flow: None,
            flow_id: 0,
            flow_sleep_ns: 0,
            latency_target: None,
            latency_window_ns: None,
            latency_percentile: 100.0,
            latency_run: false,
        }
    }
}

/// Most CPUs or NUMA nodes a list may name.
const MAX_CPU: u32 = 4095;

/// Reads a CPU or node list: `0,5,8-15` (ascending, each once), or `all` for `0..=all_max`.
pub fn cpu_list(text: &str, all_max: Option<u32>) -> Result<Vec<u32>, OptionError> {
    let text = text.trim();
    if text == "all" {
        return match all_max {
            Some(max) => Ok((0..=max).collect()),
            None => Err(OptionError::BadValue("'all' is not a list here".into())),
        };
    }
    let number = |part: &str| -> Result<u32, OptionError> {
        part.trim()
            .parse::<u32>()
            .ok()
            .filter(|value| *value <= MAX_CPU)
            .ok_or_else(|| {
                OptionError::BadValue(format!(
                    "'{part}' is not a number from 0 to {MAX_CPU} (a list is like 0,5,8-15)"
                ))
            })
    };
    let mut values = Vec::new();
    for part in text.split(',').filter(|part| !part.trim().is_empty()) {
        let (low, high) = match part.split_once('-') {
            Some((low, high)) => (number(low)?, number(high)?),
            None => {
                let value = number(part)?;
                (value, value)
            }
        };
        if low > high {
            return Err(OptionError::BadValue(format!(
                "'{part}': a range goes from low to high"
            )));
        }
        values.extend(low..=high);
    }
    if values.is_empty() {
        return Err(OptionError::BadValue("names no CPU".into()));
    }
    values.sort_unstable();
    values.dedup();
    Ok(values)
}

/// Reads `cpumask`: a decimal (or `0x` hexadecimal) bit mask of CPUs.
pub fn cpu_mask(text: &str) -> Result<Vec<u32>, OptionError> {
    let text = text.trim();
    let mask = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse::<u64>(),
    }
    .map_err(|_| OptionError::BadValue(format!("'{text}' is not a CPU bit mask (1 << cpu …)")))?;
    let cpus: Vec<u32> = (0..64).filter(|cpu| mask & (1 << cpu) != 0).collect();
    if cpus.is_empty() {
        return Err(OptionError::BadValue("the mask names no CPU".into()));
    }
    Ok(cpus)
}

/// Reads `rw`'s suffix for a random (`count`) or sequential (`step`, a signed size) pattern.
pub fn modifier(text: &str, random: bool, kb_base: u64) -> Result<Modifier, OptionError> {
    let text = text.trim();
    if random {
        let count = super::values::integer(text, 1, u64::from(u32::MAX))? as u32;
        return Ok(if count > 1 {
            Modifier::Every(count)
        } else {
            Modifier::None
        });
    }
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let bytes = super::values::size(magnitude, kb_base)?;
    let step = i64::try_from(bytes)
        .map_err(|_| OptionError::BadValue(format!("'{text}' is too large")))?;
    Ok(match (step, negative) {
        (0, _) => Modifier::None,
        (step, true) => Modifier::Step(-step),
        (step, false) => Modifier::Step(step),
    })
}

/// Reads `numa_mem_policy`: `default`, `local`, `prefer:N`, `bind:LIST`, `interleave:LIST`.
pub fn numa_mem_policy(text: &str) -> Result<(), OptionError> {
    let (mode, nodes) = match text.split_once(':') {
        Some((mode, nodes)) => (mode.trim(), Some(nodes.trim())),
        None => (text.trim(), None),
    };
    match (mode, nodes) {
        ("default" | "local", None) => Ok(()),
        ("prefer", Some(node)) => cpu_list(node, None).and_then(|nodes| {
            if nodes.len() == 1 {
                Ok(())
            } else {
                Err(OptionError::BadValue("prefer takes one node".into()))
            }
        }),
        ("bind" | "interleave", Some(nodes)) => cpu_list(nodes, Some(MAX_CPU)).map(|_| ()),
        _ => Err(OptionError::BadValue(format!(
            "'{text}' is not default, local, prefer:NODE, bind:NODES or interleave:NODES"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_masks_and_modifiers() {
        assert_eq!(cpu_list("0,5,8-10", None), Ok(vec![0, 5, 8, 9, 10]));
        assert_eq!(cpu_list("3,1-2,2", None), Ok(vec![1, 2, 3]));
        assert_eq!(cpu_list("all", Some(1)), Ok(vec![0, 1]));
        assert!(cpu_list("2-1", None).is_err());
        assert!(cpu_list("x", None).is_err());
        assert_eq!(cpu_mask("34"), Ok(vec![1, 5]));
        assert_eq!(cpu_mask("0x3"), Ok(vec![0, 1]));
        assert!(cpu_mask("0").is_err());
        assert_eq!(modifier("-8k", false, 1024), Ok(Modifier::Step(-8192)));
        assert_eq!(modifier("4k", false, 1024), Ok(Modifier::Step(4096)));
        assert_eq!(modifier("0", false, 1024), Ok(Modifier::None));
        assert_eq!(modifier("8", true, 1024), Ok(Modifier::Every(8)));
        assert_eq!(modifier("1", true, 1024), Ok(Modifier::None));
        assert!(modifier("0", true, 1024).is_err());
        assert_eq!(share("25%", 1024), Ok(Share::Percent(25)));
        assert_eq!(share("1m", 1024), Ok(Share::Bytes(1 << 20)));
        assert!(share("12.5%", 1024).is_err());
        assert!(numa_mem_policy("bind:0").is_ok());
        assert!(numa_mem_policy("interleave:0-1").is_ok());
        assert!(numa_mem_policy("prefer:0,1").is_err());
        assert!(numa_mem_policy("firm").is_err());
    }
}
