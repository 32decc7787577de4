//! The handlers of the replay options in the option table (fio's `read_iolog`,
//! `write_iolog`, `replay_*`): each reads its value into [`super::replay_settings`].

use super::input::Input;
use super::location::Set;
use super::parsers::OptionError;
use super::settings::JobSettings;

/// A path option's value (`read_iolog`, `replay_redirect`, `write_iolog`,
/// `merge_blktrace_file`).
fn path_value(input: &Input<'_>) -> Result<Set<String>, OptionError> {
    Ok(input.set(input.text()?.to_string()))
}

/// A whole number of at least 1.
fn positive(input: &Input<'_>) -> Result<u64, OptionError> {
    super::values::integer(input.text()?, 1, u64::from(u32::MAX)).map_err(OptionError::BadValue)
}

/// `read_iolog=FILE`.
pub fn read_log(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.log = Some(path_value(input)?);
    Ok(())
}

/// `write_iolog=FILE`.
pub fn write_log(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.record = Some(path_value(input)?);
    Ok(())
}

/// `replay_no_stall`.
pub fn no_stall(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.no_stall = input.flag()?;
    Ok(())
}

/// `replay_time_scale=PERCENT`.
pub fn time_scale(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.time_scale_percent = positive(input)?;
    Ok(())
}

/// `replay_redirect=PATH`.
pub fn redirect(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.redirect = Some(path_value(input)?);
    Ok(())
}

/// `replay_align=BYTES` (a power of 2).
pub fn align(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    let bytes = super::values::size(input.text()?, s.kb_base).map_err(OptionError::BadValue)?;
    if !bytes.is_power_of_two() {
        return Err(OptionError::BadValue(format!(
            "{bytes} is not a power of 2"
        )));
    }
    s.replay.align_bytes = bytes;
    Ok(())
}

/// `replay_scale=N`.
pub fn scale(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.scale = positive(input)?;
    Ok(())
}

/// `replay_skip=read,write,trim,sync` (any of them).
pub fn skip(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    let mut skip = [false; 4];
    for word in input.text()?.split(',').map(str::trim) {
        let index = ["read", "write", "trim", "sync"]
            .iter()
            .position(|name| *name == word)
            .ok_or_else(|| {
                OptionError::BadValue(format!(
                    "'{}' is not read, write, trim or sync",
                    crate::text::escape::escape_controls(word)
                ))
            })?;
        skip[index] = true;
    }
    s.replay.skip = skip;
    Ok(())
}

/// Most values in a `merge_blktrace_*` list (fio's list length).
pub const MAX_MERGE_VALUES: usize = 20;

/// Largest value in a `merge_blktrace_*` list (fio keeps them in an `int`).
pub const MAX_MERGE_VALUE: u64 = i32::MAX as u64;

/// A `merge_blktrace_*` list: up to [`MAX_MERGE_VALUES`] numbers separated by `:`, each cut to
/// a whole number as fio cuts it (`50.9` is 50), from 1 to [`MAX_MERGE_VALUE`].
pub fn merge_list(text: &str) -> Result<Vec<u64>, String> {
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    if parts.len() > MAX_MERGE_VALUES {
        return Err(format!(
            "{} values; fio's lists hold at most {MAX_MERGE_VALUES}",
            parts.len()
        ));
    }
    parts
        .iter()
        .map(|part| {
            let shown = crate::text::escape::escape_controls(part);
            let number: f64 = part
                .parse()
                .ok()
                .filter(|number: &f64| number.is_finite())
                .ok_or_else(|| format!("'{shown}' is not a number"))?;
            let whole = number.trunc();
            if whole < 1.0 || whole > MAX_MERGE_VALUE as f64 {
                return Err(format!(
                    "'{shown}' is not from 1 to {MAX_MERGE_VALUE} (fio takes its whole part)"
                ));
            }
            Ok(whole as u64)
        })
        .collect()
}

/// `merge_blktrace_file=PATH`.
pub fn merge_file(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.merge_file = Some(path_value(input)?);
    Ok(())
}

/// `merge_blktrace_scalars=PERCENT:PERCENT…`.
pub fn merge_scalars(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.merge_scalars = Some(input.set(merge_list(input.text()?)?));
    Ok(())
}

/// `merge_blktrace_iters=N:N…`.
pub fn merge_iterations(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.replay.merge_iterations = Some(input.set(merge_list(input.text()?)?));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_lists_take_whole_numbers_from_1_as_fio_cuts_them() {
        assert_eq!(merge_list("50:100"), Ok(vec![50, 100]));
        assert_eq!(merge_list(" 2.9 : 1 "), Ok(vec![2, 1]));
        for (text, message) in [
            ("0:1", "'0' is not from 1"),
            ("0.5", "'0.5' is not from 1"),
            ("1:x", "'x' is not a number"),
            ("1::2", "'' is not a number"),
            ("nan", "'nan' is not a number"),
            ("-3", "'-3' is not from 1"),
            ("4294967296", "is not from 1 to 2147483647"),
        ] {
            let error = merge_list(text).unwrap_err();
            assert!(error.contains(message), "{text}: {error}");
        }
        let long = vec!["1"; 21].join(":");
        assert!(merge_list(&long).unwrap_err().contains("at most 20"));
    }
}
