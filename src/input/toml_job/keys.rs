//! The keys of a TOML job: the workload options (declared once, in [`WorkloadOptions`]), four
//! keys for workload fields no flag sets, and how keys of different layers replace each other.

use super::super::option_values as parse;
use super::super::options::WorkloadOptions;
use crate::result::{RunLength, Workload};
use crate::workload::WorkloadError;
use serde::de::{Deserialize, Deserializer, Error as _, Visitor};

/// Delay before the job starts (fio's `startdelay`).
pub(super) const START_DELAY: &str = "start-delay";
/// Most I/Os per worker thread (fio's `number_ios`).
pub(super) const IO_LIMIT: &str = "io-limit";
/// fdatasync after every this many writes (fio's `fsync` / `fdatasync`).
pub(super) const FSYNC_EVERY: &str = "fsync-every";
/// Longest time a byte count may take (fio's `runtime` without `time_based`).
pub(super) const TIME_LIMIT: &str = "time-limit";

/// Keys for workload fields that no flag of `iopath run` sets.
pub(super) const EXTRA_KEYS: [&str; 4] = [START_DELAY, IO_LIMIT, FSYNC_EVERY, TIME_LIMIT];

/// Where each extra key is written: right after this option key.
pub(super) const EXTRA_KEY_PLACES: [(&str, &str); 4] = [
    (TIME_LIMIT, "bytes"),
    (START_DELAY, "ramp"),
    (IO_LIMIT, "rate-iops"),
    (FSYNC_EVERY, "sync"),
];

/// The name of a test or a job.
pub(super) const NAME: &str = "name";
/// The targets of a job.
pub(super) const TARGETS: &str = "targets";
/// The reporting group of a job.
pub(super) const GROUP: &str = "group";
/// The concurrent jobs of a test (`[[test.job]]`).
pub(super) const JOB: &str = "job";
/// The table applied to every test (`[defaults]`).
pub(super) const DEFAULTS: &str = "defaults";
/// The tests (`[[test]]`).
pub(super) const TEST: &str = "test";

/// Keys that describe the access as simple options rather than as a `spec`.
const SIMPLE_ACCESS: [&str; 5] = ["rw", "read-pct", "random-pct", "bs", "align"];

/// Keys of [`WorkloadOptions`] (the flags of `iopath run` without their dashes), in the order
/// they are declared.
///
/// The names are read from the derived `Deserialize` implementation itself, so a new flag is a
/// new job-file key with no list to update.
pub(super) fn option_keys() -> &'static [&'static str] {
    let mut fields = None;
    let _ = WorkloadOptions::deserialize(FieldNames(&mut fields));
    fields.unwrap_or(&[])
}

/// Whether `key` sets part of a workload (an option or an extra key).
pub(super) fn is_workload_key(key: &str) -> bool {
    EXTRA_KEYS.contains(&key) || option_keys().contains(&key)
}

/// Keys that cannot be set in the same table as `key`: they say the same thing differently.
pub(super) fn conflicting(key: &str) -> &'static [&'static str] {
    match key {
        "spec" => &SIMPLE_ACCESS,
        "duration" => &["bytes", TIME_LIMIT],
        "bytes" | TIME_LIMIT => &["duration"],
        key if SIMPLE_ACCESS.contains(&key) => &["spec"],
        _ => &[],
    }
}

/// Keys of earlier layers (`[defaults]`, the test) that `key` in a later layer removes: `rw`
/// in a test replaces the defaults' `spec`, `bytes` replaces a `duration` and its `ramp`.
pub(super) fn replaced_by(key: &str) -> impl Iterator<Item = &'static str> {
    let ramp: &[&str] = if key == "bytes" { &["ramp"] } else { &[] };
    conflicting(key).iter().chain(ramp).copied()
}

/// The value of an extra key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Extra {
    /// `start-delay`, ns.
    StartDelay(u64),
    /// `io-limit`, I/Os per worker thread.
    IoLimit(u64),
    /// `fsync-every`, writes.
    FsyncEvery(u32),
    /// `time-limit`, ns.
    TimeLimit(u64),
}

impl Extra {
    /// Reads the value of extra key `key`, written as text.
    pub(super) fn parse(key: &str, text: &str) -> Result<Self, WorkloadError> {
        match key {
            START_DELAY => parse::time(text).map(Extra::StartDelay),
            IO_LIMIT => match text.trim().parse::<u64>() {
                Ok(limit) if limit > 0 => Ok(Extra::IoLimit(limit)),
                _ => Err(WorkloadError::value(
                    text,
                    "is not a whole number of I/Os above 0",
                )),
            },
            FSYNC_EVERY => parse::blocks(text).map(Extra::FsyncEvery),
            TIME_LIMIT => parse::positive_time(text).map(Extra::TimeLimit),
            other => Err(WorkloadError::value(other, "is not an extra key")),
        }
    }

    /// Sets the field of `workload` this value is about.
    pub(super) fn apply(self, workload: &mut Workload) -> Result<(), WorkloadError> {
        match self {
            Extra::StartDelay(delay_ns) => workload.start_delay_ns = delay_ns,
            Extra::IoLimit(limit) => workload.io_limit = Some(limit),
            Extra::FsyncEvery(writes) => workload.fsync_every_writes = Some(writes),
            Extra::TimeLimit(limit_ns) => match &mut workload.length {
                RunLength::Bytes { time_limit_ns, .. } => *time_limit_ns = Some(limit_ns),
                RunLength::Time { .. } => {
                    return Err(WorkloadError::TimeLimitWithoutBytes);
                }
            },
        }
        Ok(())
    }
}

/// A deserializer that only records the field names a struct asks for, then stops.
struct FieldNames<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(Self::Error::custom(
            "only the field names of a struct are read",
        ))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(Self::Error::custom("field names read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_keys_are_the_flag_names() {
        let keys = option_keys();
        for key in [
            "rw",
            "read-pct",
            "bs",
            "spec",
            "qd",
            "fsync-at-end",
            "no-register",
        ] {
            assert!(keys.contains(&key), "{key} in {keys:?}");
        }
        for extra in EXTRA_KEYS {
            assert!(!keys.contains(&extra), "{extra} is also a flag");
        }
        for (extra, place) in EXTRA_KEY_PLACES {
            assert!(EXTRA_KEYS.contains(&extra));
            assert!(keys.contains(&place), "{place}");
        }
    }

    #[test]
    fn extra_values_are_checked() {
        assert_eq!(
            Extra::parse(START_DELAY, "250ms"),
            Ok(Extra::StartDelay(250_000_000))
        );
        assert_eq!(Extra::parse(IO_LIMIT, "1000"), Ok(Extra::IoLimit(1000)));
        assert_eq!(Extra::parse(FSYNC_EVERY, "8"), Ok(Extra::FsyncEvery(8)));
        for (key, bad) in [
            (IO_LIMIT, "0"),
            (IO_LIMIT, "many"),
            (FSYNC_EVERY, "0"),
            (TIME_LIMIT, "0"),
            (START_DELAY, "soon"),
        ] {
            assert!(Extra::parse(key, bad).is_err(), "{key} = {bad}");
        }
    }

    #[test]
    fn later_layers_replace_what_says_the_same_thing() {
        assert!(replaced_by("rw").any(|key| key == "spec"));
        assert!(replaced_by("spec").any(|key| key == "bs"));
        assert!(replaced_by("bytes").any(|key| key == "ramp"));
        assert!(!conflicting("bytes").contains(&"ramp"));
        assert_eq!(replaced_by("qd").count(), 0);
    }
}
