//! blktrace captures (binary, which fio's `read_iolog` also replays) read into the same
//! [`Iolog`] as fio's text logs: the first stage of replaying one.
//!
//! A capture is a run of events, each a 48-byte header (`struct blk_io_trace` of the Linux
//! kernel's and blktrace's `blktrace_api.h`) followed by `pdu_len` bytes of payload:
//!
//! | bytes | field | |
//! |---|---|---|
//! | 0–3 | `magic` | `0x65617400` with the format version (7) in its low byte |
//! | 4–7 | `sequence` | event number |
//! | 8–15 | `time` | nanoseconds |
//! | 16–23 | `sector` | offset in 512-byte sectors |
//! | 24–27 | `bytes` | length |
//! | 28–31 | `action` | what happened: an action (low 16 bits), categories above |
//! | 32–35 | `pid` | |
//! | 36–39 | `device` | the kernel's device number: major above bit 20, minor below |
//! | 40–43 | `cpu` | |
//! | 44–45 | `error` | |
//! | 46–47 | `pdu_len` | payload bytes after the header |
//!
//! The capture's byte order is the machine's that wrote it: the first event's magic tells
//! which, and every event is read in that order (as fio does).
//!
//! As in fio, only the events of a request entering the queue (action `QUEUE`) become I/Os —
//! issues, merges, completions and the rest are the block layer's side effects — and notify
//! events (process names, timestamps, messages) are skipped: a queued discard is a trim, a
//! queued flush a sync, any other a write when its category says write, else a read. Reads and
//! writes of 0 bytes are left out (fio warns and drops them), and so are trims of 0 bytes. Each
//! I/O is timed by the nanoseconds since the queued event before it (none when the clock went
//! back), summed, so that its time counts from the first; the sum is kept in microseconds as
//! the text logs' times are. Devices become the log's files in the order they first appear,
//! named `MAJOR:MINOR` (see [`resolve_devices`] for naming them as this machine does).
//!
//! Every event also counts towards the depth a replay takes when its job sets no `iodepth`
//! ([`super::blktrace_depth`], [`Iolog::queue_depth`]).
//!
//! Reading is bounded by the caller's size limit and [`super::iolog::MAX_ACTIONS`]; a
//! truncated event, a wrong magic or version, an offset past 2^64 bytes: an error naming the
//! event (counted from 1) and its byte offset.
//!
//! ```
//! use iopath::input::fio::blktrace::parse_blktrace;
//! use iopath::input::fio::iolog::TraceAction;
//! // One queued write of 4 KiB at sector 8 of device 7:0, little-endian.
//! let mut event = [0u8; 48];
//! event[0..4].copy_from_slice(&0x6561_7407u32.to_le_bytes());
//! event[16..24].copy_from_slice(&8u64.to_le_bytes());
//! event[24..28].copy_from_slice(&4096u32.to_le_bytes());
//! event[28..32].copy_from_slice(&(1u32 | (1 << 4 | 1 << 1) << 16).to_le_bytes());
//! event[36..40].copy_from_slice(&(7u32 << 20).to_le_bytes());
//! let log = parse_blktrace(&event).unwrap();
//! assert_eq!(log.files, ["7:0"]);
//! assert_eq!((log.ios[0].action, log.ios[0].offset, log.ios[0].length), (TraceAction::Write, 4096, 4096));
//! ```

pub use super::blktrace_actions::{
    ACTION_BACKMERGE, ACTION_COMPLETE, ACTION_FRONTMERGE, ACTION_MASK, ACTION_QUEUE,
    CATEGORY_DISCARD, CATEGORY_FLUSH, CATEGORY_NOTIFY, CATEGORY_READ, CATEGORY_WRITE,
};
use super::blktrace_depth::DepthCounter;
use super::iolog::{Iolog, IologVersion, MAX_ACTIONS, MAX_FILES, TraceAction, TraceIo};

/// The magic number of every event, its low byte the format version.
pub const MAGIC: u32 = 0x6561_7400;

/// The one format version iopath (and fio) reads.
pub const VERSION: u32 = 7;

/// The size of an event's header, bytes.
pub const EVENT_BYTES: usize = 48;

/// Bytes in a sector of `sector`.
const SECTOR_BYTES: u64 = 512;

/// The bits of the kernel's device number below its major.
const MINOR_BITS: u32 = 20;

/// Whether `bytes` start like a blktrace capture (the magic, in either byte order).
pub fn is_blktrace(bytes: &[u8]) -> bool {
    byte_order(bytes).is_some()
}

/// The byte order of a capture: `Some(true)` big-endian, `Some(false)` little-endian, `None`:
/// not a capture.
pub(super) fn byte_order(bytes: &[u8]) -> Option<bool> {
    let first = bytes.first_chunk::<4>()?;
    if u32::from_le_bytes(*first) & !0xff == MAGIC {
        Some(false)
    } else if u32::from_be_bytes(*first) & !0xff == MAGIC {
        Some(true)
    } else {
        None
    }
}

/// Why a capture cannot be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BlktraceError {
    /// The file ends inside an event.
    #[error("event {event} at byte {at}: truncated ({needed} bytes needed, {left} left)")]
    Truncated {
        /// The event, counted from 1.
        event: usize,
        /// Its byte offset.
        at: usize,
        /// Bytes its header and payload need.
        needed: usize,
        /// Bytes left in the file.
        left: usize,
    },
    /// An event does not start with the magic.
    #[error("event {event} at byte {at}: not a blktrace event (magic {found:#010x})")]
    Magic {
        /// The event, counted from 1.
        event: usize,
        /// Its byte offset.
        at: usize,
        /// What its first four bytes read as.
        found: u32,
    },
    /// An event of another format version.
    #[error("event {event} at byte {at}: blktrace format version {found}, iopath reads version 7")]
    Version {
        /// The event, counted from 1.
        event: usize,
        /// Its byte offset.
        at: usize,
        /// Its version.
        found: u32,
    },
    /// An event's range passes 2^64 bytes.
    #[error("event {event} at byte {at}: sector {sector} and {bytes} bytes pass 2^64 bytes")]
    Range {
        /// The event, counted from 1.
        event: usize,
        /// Its byte offset.
        at: usize,
        /// Its sector.
        sector: u64,
        /// Its length.
        bytes: u32,
    },
    /// More I/Os than [`MAX_ACTIONS`].
    #[error("more than {MAX_ACTIONS} I/Os")]
    TooManyIos,
    /// More devices than [`MAX_FILES`].
    #[error("event {event}: more than {MAX_FILES} devices")]
    TooManyDevices {
        /// The event, counted from 1.
        event: usize,
    },
    /// No queued read, write, trim or flush.
    #[error("no queued read, write, trim or flush in {events} events")]
    Empty {
        /// Events read.
        events: usize,
    },
}

/// The fields of one event's header that the replay reads.
pub(super) struct Event {
    pub(super) magic: u32,
    pub(super) time_ns: u64,
    sector: u64,
    bytes: u32,
    pub(super) action: u32,
    device: u32,
    pub(super) pdu_len: u16,
}

impl Event {
    /// The header at the start of `header` in the byte order `big_endian`.
    pub(super) fn read(header: &[u8; EVENT_BYTES], big_endian: bool) -> Event {
        let u32_at = |at: usize| {
            let field = [header[at], header[at + 1], header[at + 2], header[at + 3]];
            if big_endian {
                u32::from_be_bytes(field)
            } else {
                u32::from_le_bytes(field)
            }
        };
        let u64_at = |at: usize| {
            let (high, low) = if big_endian {
                (at, at + 4)
            } else {
                (at + 4, at)
            };
            (u64::from(u32_at(high)) << 32) | u64::from(u32_at(low))
        };
        let pdu = [header[46], header[47]];
        Event {
            magic: u32_at(0),
            time_ns: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
            pdu_len: if big_endian {
                u16::from_be_bytes(pdu)
            } else {
                u16::from_le_bytes(pdu)
            },
        }
    }

    /// What a queued event does (`None`: not an I/O to replay).
    fn queued_action(&self) -> Option<TraceAction> {
        if self.action & CATEGORY_NOTIFY != 0 || self.action & ACTION_MASK != ACTION_QUEUE {
            return None;
        }
        Some(if self.action & CATEGORY_DISCARD != 0 {
            TraceAction::Trim
        } else if self.action & CATEGORY_FLUSH != 0 {
            TraceAction::Sync
        } else if self.action & CATEGORY_WRITE != 0 {
            TraceAction::Write
        } else {
            TraceAction::Read
        })
    }
}

/// The event that starts at byte `at` of `bytes` (number `event`, from 1) in the byte order
/// `big_endian`, and its size with its payload: checked to be whole, with the magic and
/// version 7.
pub(super) fn checked_event(
    bytes: &[u8],
    at: usize,
    event: usize,
    big_endian: bool,
) -> Result<(Event, usize), BlktraceError> {
    let left = bytes.len().saturating_sub(at);
    let truncated = |needed| BlktraceError::Truncated {
        event,
        at,
        needed,
        left,
    };
    let header = bytes[at.min(bytes.len())..]
        .first_chunk::<EVENT_BYTES>()
        .ok_or(truncated(EVENT_BYTES))?;
    let parsed = Event::read(header, big_endian);
    if parsed.magic & !0xff != MAGIC {
        return Err(BlktraceError::Magic {
            event,
            at,
            found: parsed.magic,
        });
    }
    if parsed.magic & 0xff != VERSION {
        return Err(BlktraceError::Version {
            event,
            at,
            found: parsed.magic & 0xff,
        });
    }
    let size = EVENT_BYTES + usize::from(parsed.pdu_len);
    if size > left {
        return Err(truncated(size));
    }
    Ok((parsed, size))
}

/// Reads a capture from its bytes (see the module documentation); its files are its devices,
/// named `MAJOR:MINOR`.
pub fn parse_blktrace(bytes: &[u8]) -> Result<Iolog, BlktraceError> {
    let big_endian = byte_order(bytes).unwrap_or(false);
    let mut log = Iolog {
        version: IologVersion::Blktrace,
        files: Vec::new(),
        ios: Vec::new(),
        dropped: 0,
        queue_depth: None,
    };
    let mut depth = DepthCounter::default();
    let mut devices: Vec<u32> = Vec::new();
    let mut at = 0usize;
    let mut event = 0usize;
    let mut last_queued_ns: Option<u64> = None;
    let mut elapsed_ns = 0u64;
    while at < bytes.len() {
        event += 1;
        let (parsed, size) = checked_event(bytes, at, event, big_endian)?;
        let start = at;
        at += size;
        depth.observe(parsed.action);
        let Some(action) = parsed.queued_action() else {
            continue;
        };
        // The time since the queued event before (none for the first, or when the clock went
        // back), as fio waits it.
        if let Some(last) = last_queued_ns {
            elapsed_ns = elapsed_ns.saturating_add(parsed.time_ns.saturating_sub(last));
        }
        last_queued_ns = Some(parsed.time_ns);
        let moves_data = action != TraceAction::Sync;
        if moves_data && parsed.bytes == 0 {
            log.dropped += 1;
            continue;
        }
        let range = parsed
            .sector
            .checked_mul(SECTOR_BYTES)
            .filter(|offset| offset.checked_add(u64::from(parsed.bytes)).is_some());
        let Some(offset) = range else {
            return Err(BlktraceError::Range {
                event,
                at: start,
                sector: parsed.sector,
                bytes: parsed.bytes,
            });
        };
        if log.ios.len() >= MAX_ACTIONS {
            return Err(BlktraceError::TooManyIos);
        }
        let file = match devices.iter().position(|device| *device == parsed.device) {
            Some(file) => file,
            None => {
                if devices.len() >= MAX_FILES {
                    return Err(BlktraceError::TooManyDevices { event });
                }
                devices.push(parsed.device);
                log.files.push(format!(
                    "{}:{}",
                    parsed.device >> MINOR_BITS,
                    parsed.device & ((1 << MINOR_BITS) - 1)
                ));
                devices.len() - 1
            }
        };
        let (offset, length) = if moves_data {
            (offset, parsed.bytes)
        } else {
            (0, 0)
        };
        log.ios.push(TraceIo {
            at_us: elapsed_ns / 1000,
            file: file as u32,
            action,
            offset,
            length,
            line: event,
        });
    }
    if log.ios.is_empty() {
        return Err(BlktraceError::Empty { events: event });
    }
    log.queue_depth = Some(depth.deepest());
    Ok(log)
}

/// Names the devices of a capture (files named `MAJOR:MINOR`) as this machine does:
/// `/dev/NAME` when sysfs lists a block device of that number and `/dev/NAME` exists (as fio
/// looks the number up under /dev); a device this machine does not have keeps its number.
pub fn resolve_devices(log: &mut Iolog) {
    use crate::discovery::sysfs::{DeviceNumber, device_name};
    for file in &mut log.files {
        let Some(number) = DeviceNumber::parse(file) else {
            continue;
        };
        if let Some(name) = device_name(number) {
            let path = format!("/dev/{name}");
            if std::path::Path::new(&path).exists() {
                *file = path;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::blktrace::{
        ACTION_ISSUE, DISCARD, Event, FLUSH, NOTIFY, READ, WRITE, device, encode,
    };

    /// A process notice with its name, a write, its issue, a read on another device, a flush,
    /// a write of 0 bytes with the clock gone back, a discard.
    fn capture(big_endian: bool) -> Vec<u8> {
        let (loop0, loop1) = (device(7, 0), device(7, 1));
        let notice = Event {
            time_ns: 5_000,
            action: NOTIFY,
            device: loop0,
            payload: b"app\0".to_vec(),
            ..Event::default()
        };
        let issue = Event {
            action: ACTION_ISSUE | WRITE,
            ..Event::io(1_000_500, loop0, WRITE, 8, 4096)
        };
        let events = [
            notice,
            Event::io(1_000_000, loop0, WRITE, 8, 4096),
            issue,
            Event::io(3_000_000, loop1, READ, 16, 512),
            Event::io(3_100_000, loop0, FLUSH, 0, 0),
            Event::io(2_000_000, loop0, WRITE, 0, 0),
            Event::io(2_500_000, loop1, DISCARD, 64, 65536),
        ];
        encode(&events, big_endian)
    }

    #[test]
    fn queued_events_become_ios_in_either_byte_order() {
        for big_endian in [false, true] {
            let bytes = capture(big_endian);
            assert!(is_blktrace(&bytes));
            let log = parse_blktrace(&bytes).unwrap();
            assert_eq!(log.files, ["7:0", "7:1"]);
            assert_eq!(log.dropped, 1, "the write of 0 bytes");
            let shapes: Vec<_> = log
                .ios
                .iter()
                .map(|io| (io.at_us, io.file, io.action, io.offset, io.length, io.line))
                .collect();
            // 2 ms to the read, 0.1 ms to the flush, none when the clock goes back, then 0.5 ms.
            assert_eq!(
                shapes,
                [
                    (0, 0, TraceAction::Write, 4096, 4096, 2),
                    (2000, 1, TraceAction::Read, 8192, 512, 4),
                    (2100, 0, TraceAction::Sync, 0, 0, 5),
                    (2600, 1, TraceAction::Trim, 32768, 65536, 7),
                ],
                "big-endian: {big_endian}"
            );
        }
    }

    #[test]
    fn a_broken_capture_names_the_event_and_its_byte() {
        let good = capture(false);
        let cut = &good[..good.len() - 10];
        assert_eq!(
            parse_blktrace(cut).unwrap_err().to_string(),
            "event 7 at byte 292: truncated (48 bytes needed, 38 left)"
        );
        assert_eq!(
            parse_blktrace(&good[..50]).unwrap_err().to_string(),
            "event 1 at byte 0: truncated (52 bytes needed, 50 left)",
            "the payload is cut"
        );
        let mut bad_magic = good.clone();
        bad_magic[101] ^= 0xff;
        assert_eq!(
            parse_blktrace(&bad_magic).unwrap_err(),
            BlktraceError::Magic {
                event: 3,
                at: 100,
                found: 0x6561_8b07
            }
        );
        let mut bad_version = good.clone();
        bad_version[52] = 6;
        assert!(
            parse_blktrace(&bad_version)
                .unwrap_err()
                .to_string()
                .contains("event 2 at byte 52: blktrace format version 6")
        );
        let far = encode(&[Event::io(0, 0, WRITE, u64::MAX / 256, 512)], false);
        assert!(matches!(
            parse_blktrace(&far),
            Err(BlktraceError::Range { event: 1, .. })
        ));
        let quiet = Event {
            action: NOTIFY,
            ..Event::default()
        };
        assert_eq!(
            parse_blktrace(&encode(&[quiet], false)).unwrap_err(),
            BlktraceError::Empty { events: 1 }
        );
    }

    #[test]
    fn a_device_this_machine_lacks_keeps_its_number() {
        let unknown = Event::io(0, u32::MAX, READ, 0, 512);
        let mut log = parse_blktrace(&encode(&[unknown], false)).unwrap();
        resolve_devices(&mut log);
        assert_eq!(log.files, ["4095:1048575"]);
    }
}
