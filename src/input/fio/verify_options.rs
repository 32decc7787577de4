//! fio's verification options (`verify`, `do_verify`, `verify_only`, `verify_fatal`,
//! `verify_interval`, `verify_offset`, `verify_pattern`, `verify_state_save`,
//! `verify_state_load`, and the trims of verified blocks: `trim_percentage`, `trim_backlog`,
//! `trim_backlog_batch`, `trim_verify_zero`), read into a job's
//! [`FioVerify`](super::settings::FioVerify).

use super::input::Input;
use super::parsers::{self, OptionError};
use super::settings::JobSettings;
use super::values::integer;
use crate::result::BufferPattern;
use crate::workload::verify_settings::parse_kind;

/// `verify`: 0/none, or a kind iopath has.
pub fn kind(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    let text = input.text()?;
    s.verify.kind = match text {
        "0" | "none" => None,
        "crc64" | "crc16" | "crc7" | "sha1" | "sha512" | "sha3-224" | "sha3-256" | "sha3-384"
        | "sha3-512" | "null" => {
            return Err(OptionError::Unsupported(format!(
                "'{text}' is not a verify kind iopath has; use crc32c, crc32, md5, sha256, xxhash, meta or pattern"
            )));
        }
        other => Some(parse_kind(other)?),
    };
    Ok(())
}

/// `do_verify`.
pub fn after_writes(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.after_writes = input.flag()?;
    Ok(())
}

/// `verify_only`.
pub fn only(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.only = input.flag()?;
    Ok(())
}

/// `verify_fatal`.
pub fn fatal(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.fatal = input.flag()?;
    Ok(())
}

/// `verify_interval`.
pub fn interval(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    let bytes = parsers::offset(input.text()?, s.kb_base)?;
    s.verify.interval_bytes = (bytes > 0).then_some(bytes);
    Ok(())
}

/// `verify_offset`.
pub fn header_offset(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.header_offset_bytes = parsers::offset(input.text()?, s.kb_base)?;
    Ok(())
}

/// `verify_pattern` (fio's `buffer_pattern` syntax; `%o` formats refused).
pub fn pattern(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.pattern = Some(BufferPattern::parse(input.text()?)?);
    Ok(())
}

/// `verify_backlog`: a count of writes (0: none; size suffixes multiply, as in fio: `1m` is
/// 1048576 writes).
pub fn backlog(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    let writes = count(input, "writes")?;
    s.verify.backlog_writes = (writes > 0).then_some(writes);
    Ok(())
}

/// `verify_state_save`.
pub fn state_save(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.state_save = input.flag()?;
    Ok(())
}

/// `verify_state_load`.
pub fn state_load(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.state_load = input.flag()?;
    Ok(())
}

/// A count (`verify_backlog`, `trim_backlog`, `trim_backlog_batch`): a whole number, with a
/// size suffix where fio takes one (`1k` is 1024).
fn count(input: &mut Input<'_>, what: &str) -> Result<u32, OptionError> {
    let text = input.text()?;
    integer(text, 0, u64::from(u32::MAX))
        .map(|count| count as u32)
        .map_err(|reason| OptionError::BadValue(format!("{reason}: not a count of {what}")))
}

/// `trim_percentage`: 0 to 100.
pub fn trim_percent(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    let text = input.text()?;
    let percent: u8 = text
        .parse()
        .ok()
        .filter(|percent| *percent <= 100)
        .ok_or_else(|| OptionError::BadValue(format!("'{text}' is not a percentage (0 to 100)")))?;
    s.verify.trim_percent = percent;
    Ok(())
}

/// `trim_backlog`: a count of writes (0: none).
pub fn trim_backlog(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.trim_backlog_writes = count(input, "writes")?;
    Ok(())
}

/// `trim_backlog_batch`: a count of trims (0: as many as `trim_backlog`).
pub fn trim_batch(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.trim_batch = count(input, "trims")?;
    Ok(())
}

/// `trim_verify_zero`.
pub fn trim_verify_zero(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.verify.trim_verify_zero = input.flag()?;
    Ok(())
}
