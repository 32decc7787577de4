//! fio's buffer options into the job's [`WriteData`](crate::result::WriteData): `zero_buffers`, `refill_buffers`,
//! `scramble_buffers`, `buffer_compress_percentage`, `buffer_compress_chunk`, `buffer_pattern`
//! and the `dedupe_*` options.
//!
//! Two of them change others when they are read, as fio's own parser does, so that their order
//! in the file counts the same way: `buffer_pattern` turns scrambling and `zero_buffers` off (a
//! later `scramble_buffers=1` or `zero_buffers` turns them on again), and `dedupe_percentage`
//! turns refilling on (a later `refill_buffers=0` turns it off).

use super::input::Input;
use super::parsers::OptionError;
use super::settings::JobSettings;
use super::values::{percent, size};
use crate::result::BufferPattern;
use crate::result::DedupeMode;

/// Remembers the line of the last buffer option, for notes.
fn seen(s: &mut JobSettings, input: &Input<'_>) {
    s.write_data_at = Some(input.at.clone());
}

/// `zero_buffers`.
pub fn zero_buffers(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.write_data.zero = input.flag()?;
    seen(s, input);
    Ok(())
}

/// `refill_buffers`.
pub fn refill_buffers(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.write_data.refill = Some(input.flag()?);
    seen(s, input);
    Ok(())
}

/// `scramble_buffers` (fio's default is 1).
pub fn scramble_buffers(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.write_data.scramble = Some(input.flag()?);
    seen(s, input);
    Ok(())
}

/// `buffer_compress_percentage`.
pub fn compress_percentage(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.write_data.compress_percent = Some(percent(input.text()?)?);
    seen(s, input);
    Ok(())
}

/// `buffer_compress_chunk` (bytes when no unit is given; 0: the block size).
pub fn compress_chunk(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.write_data.compress_chunk_bytes = Some(size(input.text()?, s.kb_base)?);
    seen(s, input);
    Ok(())
}

/// `buffer_pattern`: the pattern, and scrambling and zeros off.
pub fn pattern(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    let pattern = BufferPattern::parse(input.text()?)?;
    s.write_data.pattern = Some(pattern);
    s.write_data.scramble = Some(false);
    s.write_data.zero = false;
    seen(s, input);
    Ok(())
}

/// `dedupe_percentage`: the share, and refilling on.
pub fn dedupe_percentage(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.write_data.dedupe_percent = Some(percent(input.text()?)?);
    s.write_data.refill = Some(true);
    seen(s, input);
    Ok(())
}

/// `dedupe_mode`: repeat or working_set.
pub fn dedupe_mode(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.write_data.dedupe_mode = DedupeMode::parse(input.text()?)?;
    seen(s, input);
    Ok(())
}

/// `dedupe_working_set_percentage`.
pub fn dedupe_working_set(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.write_data.dedupe_working_set_percent = Some(percent(input.text()?)?);
    seen(s, input);
    Ok(())
}

/// `dedupe_global`: 0 only (each worker keeps its own working set).
pub fn dedupe_global(_: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    if input.flag()? {
        return Err(OptionError::Unsupported(
            "a dedupe working set shared by all jobs is not supported: each worker keeps its own"
                .into(),
        ));
    }
    Ok(())
}
