//! fio's verification options (`verify`, `do_verify`, `verify_only`, `verify_fatal`,
//! `verify_interval`, `verify_offset`, `verify_pattern`, `verify_state_save`,
//! `verify_state_load`), read into a job's [`FioVerify`] and turned into the workload's
//! [`VerifySettings`].

use super::input::Input;
use super::parsers::{self, OptionError};
use super::settings::JobSettings;
use crate::result::{BufferPattern, VerifyKind, VerifySettings};
use crate::workload::verify_settings::parse_kind;

/// A job's verification options as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioVerify {
    /// `verify` (`None`: 0 or none).
    pub kind: Option<VerifyKind>,
    /// `do_verify` (default 1).
    pub after_writes: bool,
    /// `verify_only`.
    pub only: bool,
    /// `verify_fatal`.
    pub fatal: bool,
    /// `verify_interval`, bytes.
    pub interval_bytes: Option<u64>,
    /// `verify_offset`, bytes.
    pub header_offset_bytes: u64,
    /// `verify_pattern`.
    pub pattern: Option<BufferPattern>,
    /// `verify_state_save` given true.
    pub state_save: bool,
    /// `verify_state_load`.
    pub state_load: bool,
}

impl Default for FioVerify {
    fn default() -> Self {
        FioVerify {
            kind: None,
            after_writes: true,
            only: false,
            fatal: false,
            interval_bytes: None,
            header_offset_bytes: 0,
            pattern: None,
            state_save: false,
            state_load: false,
        }
    }
}

impl FioVerify {
    /// The workload's settings (`None` when the job does not verify).
    pub fn settings(&self) -> Option<VerifySettings> {
        let kind = self.kind?;
        Some(VerifySettings {
            kind,
            after_writes: self.after_writes,
            only: self.only,
            fatal: self.fatal,
            interval_bytes: self.interval_bytes,
            header_offset_bytes: self.header_offset_bytes,
            pattern: self.pattern.clone(),
            state_save: self.state_save,
            state_load: self.state_load,
        })
    }
}

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
