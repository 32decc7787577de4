//! The handlers of the replay options in the option table (fio's `read_iolog`,
//! `write_iolog`, `replay_*`): each reads its value into [`super::replay_settings`].

use super::input::Input;
use super::location::Set;
use super::parsers::OptionError;
use super::settings::JobSettings;

/// A path option's value (`read_iolog`, `replay_redirect`, `write_iolog`).
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
