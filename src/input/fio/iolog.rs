//! fio's I/O logs (`read_iolog`, the HOWTO's "Trace file format" versions 2 and 3) read into
//! a list of timed I/Os over named files: the first stage of replaying one (the second, mapping
//! them onto a job's targets and timing them, is [`super::replay`]). A blktrace capture (binary,
//! which fio also replays) is read by [`super::blktrace`] into the same list;
//! [`super::replay_log`] tells the two apart and reads the file.
//!
//! A log is text, one action per line, after a first line `fio version 2 iolog` or
//! `fio version 3 iolog`:
//!
//! - `FILE add|open|close` — a file enters the log, is opened, is closed (version 3 puts a
//!   timestamp first: `TIME FILE add`);
//! - `FILE read|write|trim OFFSET LENGTH` — an I/O of `LENGTH` bytes at `OFFSET`;
//!   `FILE sync|datasync` — fsync or fdatasync of the file (fio writes `0 0` after them);
//! - version 2 only: `FILE wait MICROSECONDS 0` — a pause before the next action (below
//!   100 µs, none, as in fio); version 3 times each action instead by its first field,
//!   microseconds since the run began.
//!
//! A file must be added before it is opened and open when it is used. Reading is bounded:
//! the file's size ([`IOLOG_LIMIT`]), each line's length ([`MAX_LINE_BYTES`]) and the number of
//! actions ([`MAX_ACTIONS`]); an error names the line and shows it with control characters
//! escaped.
//!
//! ```
//! use iopath::input::fio::iolog::{parse_iolog, TraceAction};
//! let log = parse_iolog("fio version 3 iolog\n5 /dev/sdb add\n9 /dev/sdb open\n\
//!                        20 /dev/sdb write 4096 8192\n30 /dev/sdb close\n").unwrap();
//! assert_eq!(log.files, ["/dev/sdb"]);
//! assert_eq!(log.ios[0].action, TraceAction::Write);
//! assert_eq!((log.ios[0].at_us, log.ios[0].offset, log.ios[0].length), (20, 4096, 8192));
//! ```

use crate::gate::read::FileLimit;
use crate::text::escape::escape_controls;

/// The largest I/O log read: 256 MiB (some four million actions).
pub const IOLOG_LIMIT: FileLimit = FileLimit {
    what: "I/O log",
    max_bytes: 256 << 20,
};

/// The longest line read (a file name of up to 4096 bytes and the numbers).
pub const MAX_LINE_BYTES: usize = 4200;

/// The most actions a log may hold.
pub const MAX_ACTIONS: usize = 16 << 20;

/// The most files a log may name.
pub const MAX_FILES: usize = 65_536;

/// The format version of a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IologVersion {
    /// `fio version 2 iolog`: no timestamps, `wait` actions.
    V2,
    /// `fio version 3 iolog`: each action timed.
    V3,
    /// A blktrace capture (binary): its queued events, timed by their nanoseconds; its files
    /// are block devices.
    Blktrace,
}

/// What one logged I/O does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceAction {
    /// Reads its range.
    Read,
    /// Writes its range.
    Write,
    /// Trims (discards) its range.
    Trim,
    /// fsync of the file.
    Sync,
    /// fdatasync of the file.
    DataSync,
}

/// One logged I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceIo {
    /// When it is due, µs after the start: its timestamp (version 3), or the sum of the
    /// waits before it (version 2).
    pub at_us: u64,
    /// Its file: an index into [`Iolog::files`].
    pub file: u32,
    /// What it does.
    pub action: TraceAction,
    /// Byte offset (0 for a sync).
    pub offset: u64,
    /// Length, bytes (0 for a sync).
    pub length: u32,
    /// Its line in the log (in a blktrace capture: its event, counted from 1).
    pub line: usize,
}

/// A whole log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iolog {
    /// Its format version.
    pub version: IologVersion,
    /// The files it names, in the order they were added.
    pub files: Vec<String>,
    /// Its I/Os, in order.
    pub ios: Vec<TraceIo>,
    /// I/Os of 0 bytes left out (a blktrace capture has some; fio drops them too).
    pub dropped: usize,
    /// The deepest queue a blktrace capture shows (see
    /// [`super::blktrace_depth::DepthCounter`]); `None` for a text log.
    pub queue_depth: Option<u32>,
}

/// Why a log cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum IologError {
    /// The first line names no version iopath reads.
    #[error("line 1: not a fio I/O log of version 2 or 3 (its first line is \"{0}\")")]
    Version(String),
    /// A line is wrong.
    #[error("line {line}: {message}: \"{text}\"")]
    Line {
        /// Line number, from 1.
        line: usize,
        /// What is wrong.
        message: String,
        /// The line, escaped and shortened.
        text: String,
    },
    /// The log holds more than [`MAX_ACTIONS`] actions.
    #[error("more than {MAX_ACTIONS} actions in the I/O log")]
    TooManyActions,
    /// The log holds no I/O.
    #[error("the I/O log holds no read, write, trim or sync")]
    Empty,
    /// The file is not text.
    #[error("line {0}: not UTF-8 text: not a fio I/O log")]
    NotText(usize),
}

/// Reads a log from the bytes of its file: text, or an error naming the first line that is
/// not.
pub fn parse_iolog_bytes(bytes: Vec<u8>) -> Result<Iolog, IologError> {
    match String::from_utf8(bytes) {
        Ok(text) => parse_iolog(&text),
        Err(error) => {
            let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|byte| **byte == b'\n').count() + 1;
            Err(IologError::NotText(line))
        }
    }
}

/// Reads a log from its text (see the module documentation).
pub fn parse_iolog(text: &str) -> Result<Iolog, IologError> {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").trim_end();
    let version = match first {
        "fio version 2 iolog" => IologVersion::V2,
        "fio version 3 iolog" => IologVersion::V3,
        other => return Err(IologError::Version(shown(other))),
    };
    let mut log = Iolog {
        version,
        files: Vec::new(),
        ios: Vec::new(),
        dropped: 0,
        queue_depth: None,
    };
    let mut open = Vec::new();
    let mut waited_us = 0u64;
    for (index, line) in lines.enumerate() {
        let number = index + 2;
        let fail = |message: &str| IologError::Line {
            line: number,
            message: message.to_string(),
            text: shown(line),
        };
        if line.len() > MAX_LINE_BYTES {
            return Err(fail(&format!("longer than {MAX_LINE_BYTES} bytes")));
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if log.ios.len() >= MAX_ACTIONS {
            return Err(IologError::TooManyActions);
        }
        let (at_us, rest) = match version {
            IologVersion::V3 => {
                let time = number_field(fields[0])
                    .ok_or_else(|| fail("a version 3 line starts with its time in microseconds"))?;
                (time, &fields[1..])
            }
            IologVersion::V2 | IologVersion::Blktrace => (waited_us, &fields[..]),
        };
        let (name, action, numbers) = match rest {
            [name, action] => (*name, *action, None),
            [name, action, offset, length] => (*name, *action, Some((*offset, *length))),
            _ => return Err(fail("expected FILE ACTION, or FILE ACTION OFFSET LENGTH")),
        };
        let known = log.files.iter().position(|file| file == name);
        match (action, numbers) {
            ("add", None) => {
                if known.is_none() {
                    if log.files.len() >= MAX_FILES {
                        return Err(fail(&format!("more than {MAX_FILES} files")));
                    }
                    log.files.push(name.to_string());
                    open.push(false);
                }
            }
            ("open" | "close", None) => {
                let file = known.ok_or_else(|| fail("the file was not added before"))?;
                if action == "close" && !open[file] {
                    return Err(fail("the file is not open"));
                }
                open[file] = action == "open";
            }
            ("wait", Some((delay, _))) if version == IologVersion::V2 => {
                let delay = number_field(delay).ok_or_else(|| fail("a wait in microseconds"))?;
                if delay >= 100 {
                    waited_us = waited_us.saturating_add(delay);
                }
            }
            ("wait", _) => return Err(fail("wait is a version 2 action only")),
            (io_action, Some((offset, length))) => {
                let action = match io_action {
                    "read" => TraceAction::Read,
                    "write" => TraceAction::Write,
                    "trim" => TraceAction::Trim,
                    "sync" => TraceAction::Sync,
                    "datasync" => TraceAction::DataSync,
                    _ => {
                        return Err(fail(
                            "unknown action (read, write, trim, sync, datasync, wait, add, open, close)",
                        ));
                    }
                };
                let file = known.ok_or_else(|| fail("the file was not added before"))?;
                if !open[file] {
                    return Err(fail("the file is not open"));
                }
                let offset = number_field(offset)
                    .ok_or_else(|| fail("the offset is not a number of bytes"))?;
                let length = number_field(length)
                    .and_then(|length| u32::try_from(length).ok())
                    .ok_or_else(|| fail("the length is not a number of bytes below 4 GiB"))?;
                let moves_data = !matches!(action, TraceAction::Sync | TraceAction::DataSync);
                if moves_data && length == 0 {
                    return Err(fail("an I/O of 0 bytes"));
                }
                if offset.checked_add(u64::from(length)).is_none() {
                    return Err(fail("the range passes 2^64 bytes"));
                }
                let (offset, length) = if moves_data { (offset, length) } else { (0, 0) };
                log.ios.push(TraceIo {
                    at_us,
                    file: file as u32,
                    action,
                    offset,
                    length,
                    line: number,
                });
            }
            _ => return Err(fail("expected FILE ACTION, or FILE ACTION OFFSET LENGTH")),
        }
    }
    if log.ios.is_empty() {
        return Err(IologError::Empty);
    }
    Ok(log)
}

/// A decimal number of a log.
fn number_field(text: &str) -> Option<u64> {
    if text.bytes().all(|byte| byte.is_ascii_digit()) {
        text.parse().ok()
    } else {
        None
    }
}

/// `text` as an error shows it: control characters escaped, at most 120 characters.
fn shown(text: &str) -> String {
    let short: String = text.chars().take(120).collect();
    escape_controls(&short).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_s_own_version_3_log_reads_with_its_trims_and_writes() {
        let text = "fio version 3 iolog\n30 /dev/null add\n10731 /dev/null open\n\
                    10736 /dev/null trim 0 2147483648\n10752 /dev/null write 0 4096\n\
                    10900 /dev/null close\n";
        let log = parse_iolog(text).unwrap();
        assert_eq!(log.version, IologVersion::V3);
        assert_eq!(log.files, ["/dev/null"]);
        let shapes: Vec<_> = log
            .ios
            .iter()
            .map(|io| (io.at_us, io.action, io.offset, io.length, io.line))
            .collect();
        assert_eq!(
            shapes,
            [
                (10736, TraceAction::Trim, 0, 2 << 30, 4),
                (10752, TraceAction::Write, 0, 4096, 5)
            ]
        );
    }

    #[test]
    fn version_2_waits_add_up_and_short_ones_are_dropped() {
        let text = "fio version 2 iolog\n/a add\n/b add\n/a open\n/b open\n/a read 0 512\n\
                    /a wait 50 0\n/b write 512 512\n/a wait 1000 0\n/b sync 0 0\n/a wait 250 0\n\
                    /a datasync 0 0\n/a close\n/b close\n";
        let log = parse_iolog(text).unwrap();
        assert_eq!(log.files, ["/a", "/b"]);
        let timed: Vec<_> = log
            .ios
            .iter()
            .map(|io| (io.at_us, io.file, io.action))
            .collect();
        assert_eq!(
            timed,
            [
                (0, 0, TraceAction::Read),
                (0, 1, TraceAction::Write),
                (1000, 1, TraceAction::Sync),
                (1250, 0, TraceAction::DataSync)
            ]
        );
    }

    #[test]
    fn mistakes_name_their_line() {
        let cases = [
            ("fio version 1 iolog\n", "line 1"),
            (
                "fio version 2 iolog\n/a open\n",
                "line 2: the file was not added before",
            ),
            (
                "fio version 2 iolog\n/a add\n/a read 0 512\n",
                "line 3: the file is not open",
            ),
            (
                "fio version 2 iolog\n/a add\n/a open\n/a read x 512\n",
                "line 4: the offset",
            ),
            (
                "fio version 2 iolog\n/a add\n/a open\n/a read 0 0\n",
                "line 4: an I/O of 0 bytes",
            ),
            (
                "fio version 2 iolog\n/a add\n/a open\n/a read 0 5000000000\n",
                "line 4: the length",
            ),
            (
                "fio version 2 iolog\n/a add\n/a open\n/a seek 0 1\n",
                "line 4: unknown action",
            ),
            (
                "fio version 3 iolog\n1 /a add\n2 /a open\n3 /a wait 100 0\n",
                "line 4: wait is a version 2",
            ),
            (
                "fio version 3 iolog\n/a add\n",
                "line 2: a version 3 line starts",
            ),
            ("fio version 2 iolog\n/a add\n/a open\n", "holds no read"),
            (
                "fio version 2 iolog\n/a add\n/a open\n/a read 18446744073709551615 2\n",
                "line 4: the range passes",
            ),
        ];
        for (text, expected) in cases {
            let error = parse_iolog(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    #[test]
    fn long_lines_and_control_characters_are_bounded_and_escaped() {
        let long = format!("fio version 2 iolog\n/{} add\n", "a".repeat(MAX_LINE_BYTES));
        let error = parse_iolog(&long).unwrap_err().to_string();
        assert!(error.contains("line 2: longer than"), "{error}");
        assert!(
            error.len() < 400,
            "the line is shortened: {} bytes",
            error.len()
        );
        let error = parse_iolog("fio version 2 iolog\n/a\u{1b}[31m open\n")
            .unwrap_err()
            .to_string();
        assert!(!error.chars().any(char::is_control), "{error:?}");
    }
}
