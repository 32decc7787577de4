//! Readers of the values of [`super::extended`]'s options: shares of the file (`N%` or a
//! size), CPU lists and masks (and their compact form for messages), and `numa_mem_policy`.

use super::extended::Share;
use super::parsers::OptionError;
use super::values::{SizeValue, size_or_percent};

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

/// Shows a CPU list compactly (`0-3,8`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut index = 0;
    while index < cpus.len() {
        let start = cpus[index];
        let mut end = start;
        while index + 1 < cpus.len() && cpus[index + 1] == end + 1 {
            index += 1;
            end += 1;
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        index += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_masks_and_shares() {
        assert_eq!(cpu_list("0,5,8-10", None), Ok(vec![0, 5, 8, 9, 10]));
        assert_eq!(cpu_list("3,1-2,2", None), Ok(vec![1, 2, 3]));
        assert_eq!(cpu_list("all", Some(1)), Ok(vec![0, 1]));
        assert!(cpu_list("2-1", None).is_err());
        assert!(cpu_list("x", None).is_err());
        assert_eq!(cpu_mask("34"), Ok(vec![1, 5]));
        assert_eq!(cpu_mask("0x3"), Ok(vec![0, 1]));
        assert!(cpu_mask("0").is_err());
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(share("25%", 1024), Ok(Share::Percent(25)));
        assert_eq!(share("1m", 1024), Ok(Share::Bytes(1 << 20)));
        assert!(share("12.5%", 1024).is_err());
        assert!(numa_mem_policy("bind:0").is_ok());
        assert!(numa_mem_policy("interleave:0-1").is_ok());
        assert!(numa_mem_policy("prefer:0,1").is_err());
        assert!(numa_mem_policy("firm").is_err());
    }
}
