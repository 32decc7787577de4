//! fio's log-file options (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`, `log_avg_msec`, `log_window_value`/`log_max_value`, `log_offset`,
//! `log_prio`, `log_issue_time`, `log_hist_msec`, `log_hist_coarseness`, `per_job_logs`,
//! `log_unix_epoch`), read
//! into a job's [`LogOptions`]; `log_compression` and `log_store_compressed` are refused.

use super::input::Input;
use super::parsers::OptionError;
use super::settings::JobSettings;
use super::values::{integer, time_ns};
use crate::result::log_options::{LogOptions, WindowValue};

const MILLISECOND_NS: u64 = 1_000_000;

/// The prefix of a `write_*_log`: the value, or `""` for a bare name (the job's name, filled
/// in by [`with_job_name`]).
fn prefix(input: &Input<'_>) -> Option<String> {
    Some(input.value.map(str::trim).unwrap_or("").to_string())
}

/// `write_bw_log`.
pub fn bandwidth(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.bandwidth = prefix(input);
    Ok(())
}

/// `write_lat_log`.
pub fn latency(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.latency = prefix(input);
    Ok(())
}

/// `write_iops_log`.
pub fn iops(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.iops = prefix(input);
    Ok(())
}

/// `write_hist_log`.
pub fn histogram(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.histogram = prefix(input);
    Ok(())
}

/// A time in whole milliseconds (a bare number counts milliseconds).
fn milliseconds(input: &Input<'_>) -> Result<u64, OptionError> {
    let nanos = time_ns(input.text()?, MILLISECOND_NS)?;
    if nanos % MILLISECOND_NS != 0 {
        return Err(OptionError::BadValue(format!(
            "'{}' is not a whole number of milliseconds",
            input.text()?
        )));
    }
    Ok(nanos / MILLISECOND_NS)
}

/// `log_avg_msec`.
pub fn average(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.average_ms = milliseconds(input)?;
    Ok(())
}

/// `log_hist_msec`: 0 only (histogram lines are not written yet).
pub fn histogram_window(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.histogram_ms = milliseconds(input)?;
    if s.logs.histogram_ms > 0 {
        return Err(OptionError::Unsupported(
            "iopath does not write histogram log lines; remove log_hist_msec (write_hist_log alone gives fio's empty file)".into(),
        ));
    }
    Ok(())
}

/// `log_hist_coarseness` (0 to 6).
pub fn coarseness(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.histogram_coarseness = integer(input.text()?, 0, 6)? as u8;
    Ok(())
}

/// `log_window_value` and its older name `log_max_value`.
pub fn window_value(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.window_value = match input.text()? {
        "avg" | "0" => WindowValue::Average,
        "max" | "1" => WindowValue::Maximum,
        "both" => WindowValue::Both,
        other => {
            return Err(OptionError::BadValue(format!(
                "'{other}' is not avg, max, both, 0 or 1"
            )));
        }
    };
    Ok(())
}

/// `log_offset`.
pub fn offset(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.offset = input.flag()?;
    Ok(())
}

/// `log_prio`.
pub fn priority(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.priority = input.flag()?;
    Ok(())
}

/// `log_issue_time`.
pub fn issue_time(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.issue_time = input.flag()?;
    Ok(())
}

/// `log_unix_epoch` and `log_alternate_epoch` (whose clock, `log_alternate_epoch_clock_id`,
/// is the wall clock unless set otherwise, and iopath keeps no other).
pub fn unix_epoch(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.unix_epoch = input.flag()?;
    Ok(())
}

/// `per_job_logs`.
pub fn per_job(s: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    s.logs.per_job = input.flag()?;
    Ok(())
}

/// `log_compression`, `log_store_compressed`: 0 is accepted, anything else refused.
pub fn compression(_: &mut JobSettings, input: &mut Input<'_>) -> Result<(), OptionError> {
    match input.value.map(str::trim) {
        Some("0") => Ok(()),
        _ => Err(OptionError::Unsupported(
            "iopath writes its log files uncompressed (logs are kept in memory reserved before the run); remove the option".into(),
        )),
    }
}

/// The job's logs as the runner gets them: `None` when it asks for none; a bare
/// `write_*_log` named after the job, as in fio.
pub fn with_job_name(logs: &LogOptions, job_name: &str) -> Option<LogOptions> {
    if !logs.any() {
        return None;
    }
    let mut logs = logs.clone();
    for prefix in [
        &mut logs.bandwidth,
        &mut logs.latency,
        &mut logs.iops,
        &mut logs.histogram,
    ]
    .into_iter()
    .flatten()
    {
        if prefix.is_empty() {
            *prefix = job_name.to_string();
        }
    }
    Some(logs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_logs_under_the_job_name() {
        let logs = LogOptions {
            bandwidth: Some(String::new()),
            iops: Some("x".into()),
            ..LogOptions::default()
        };
        let named = with_job_name(&logs, "job1").unwrap();
        assert_eq!(named.bandwidth.as_deref(), Some("job1"));
        assert_eq!(named.iops.as_deref(), Some("x"));
        assert!(with_job_name(&LogOptions::default(), "job1").is_none());
    }
}
