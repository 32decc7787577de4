//! Several blktrace captures merged into one, in time order, as fio's `merge_blktrace_file`
//! merges the captures `read_iolog` lists before replaying the result.
//!
//! Each capture is read event by event (see [`super::blktrace`] for the layout); only the
//! requests entering the queue whose categories name a read, a write or a discard are kept
//! (completions, issues, merges, notify events and bare flushes are left out). A kept event's
//! time becomes `(time + iteration × length) × scale / 100` in integer nanoseconds, where
//! `scale` is the capture's percentage (`merge_blktrace_scalars`, default 100: 50 replays it
//! at twice its pace), `iteration` counts its passes from 0 (`merge_blktrace_iters`, default
//! 1 pass) and `length` is the time of the capture's last event, whatever it is. The
//! captures' next kept events are compared and the earliest is written out (on a tie, the
//! capture listed first, until a capture that ends hands its place in the list to the last
//! one, as in fio); a capture that ends starts its next pass, or leaves the merge after its
//! last.
//!
//! The merge holds each kept event's 48-byte header, its payload dropped (`pdu_len` 0), in
//! this machine's byte order, as fio writes it. Differences from fio, which are fio's slips:
//! fio leaves each capture's pass counter and length as `malloc` returns them (iopath starts
//! them at 0); when a capture starts a pass again, fio writes the last event it read once more
//! (and on a capture ending in one of its kept events, it takes the scaled time of that event
//! as `length`); iopath writes every pass's events once and takes the time as logged. With
//! one pass per capture (and zeroed memory under fio), the merges are the same to the byte.
//!
//! A capture that is not one, is cut short, has an event without the magic or of another
//! version, holds no request to keep, or whose scaled time passes 2^64 ns: an error naming the
//! capture and the event (counted from 1) with its byte offset; a merge of more than [`MERGE_LIMIT_BYTES`] (what a
//! replay reads back): an error.
//!
//! ```
//! use iopath::input::fio::blktrace_merge::{CaptureToMerge, merge_captures};
//! // A queued read at 1 µs in one capture, a queued write at 0.5 µs in the other.
//! let event = |time_ns: u64, category_bit: u32| {
//!     let mut event = [0u8; 48];
//!     event[0..4].copy_from_slice(&0x6561_7407u32.to_le_bytes());
//!     event[8..16].copy_from_slice(&time_ns.to_le_bytes());
//!     event[24..28].copy_from_slice(&512u32.to_le_bytes());
//!     event[28..32].copy_from_slice(&(1u32 | (1 << 4 | category_bit) << 16).to_le_bytes());
//!     event
//! };
//! let (read, write) = (event(1_000, 1 << 0), event(500, 1 << 1));
//! let capture = |bytes| CaptureToMerge { name: "sda", bytes, scale_percent: 100, iterations: 1 };
//! let merged = merge_captures(&[capture(&read), capture(&write)]).unwrap();
//! assert_eq!(merged, [write, read].concat());
//! ```

use super::blktrace::{
    ACTION_MASK, ACTION_QUEUE, BlktraceError, CATEGORY_DISCARD, CATEGORY_READ, CATEGORY_WRITE,
    EVENT_BYTES, Event, byte_order, checked_event,
};

/// The largest merge: what a replay reads back (the I/O log limit), bytes.
pub const MERGE_LIMIT_BYTES: u64 = super::iolog::IOLOG_LIMIT.max_bytes;

/// The bytes of the header's fields in order: magic, sequence, time, sector, bytes, action,
/// pid, device, cpu, error, payload length.
const FIELD_BYTES: [usize; 11] = [4, 4, 8, 8, 4, 4, 4, 4, 4, 2, 2];

/// Where the time and the payload length sit in the header.
const TIME_AT: usize = 8;
const PAYLOAD_LENGTH_AT: usize = 46;

/// One capture to merge and how.
#[derive(Clone, Copy, Debug)]
pub struct CaptureToMerge<'a> {
    /// Its name, for messages.
    pub name: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
    /// Its times scaled by this percentage (100: as logged).
    pub scale_percent: u64,
    /// Passes over it (at least 1).
    pub iterations: u64,
}

/// Why captures cannot be merged. Each names the capture, control characters escaped.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// A file that does not start with a blktrace event.
    #[error("{capture}: not a blktrace capture (no blktrace magic at its start)")]
    NotACapture {
        /// The capture.
        capture: String,
    },
    /// An event that cannot be read.
    #[error("{capture}: {error}")]
    Event {
        /// The capture.
        capture: String,
        /// What is wrong with the event.
        error: BlktraceError,
    },
    /// No request to keep.
    #[error("{capture}: no queued read, write or discard to merge")]
    NothingQueued {
        /// The capture.
        capture: String,
    },
    /// A scaled time past 2^64 ns.
    #[error("{capture}: event {event}: its time in pass {pass} scaled passes 2^64 ns")]
    Time {
        /// The capture.
        capture: String,
        /// The event, counted from 1.
        event: usize,
        /// The pass, counted from 1.
        pass: u64,
    },
    /// The merge would be larger than [`MERGE_LIMIT_BYTES`].
    #[error(
        "the merge would pass {MERGE_LIMIT_BYTES} bytes (more than {} events): fewer passes or shorter captures",
        MERGE_LIMIT_BYTES / EVENT_BYTES as u64
    )]
    TooLarge,
}

/// A capture being merged: its requests to merge and the next one.
struct Cursor<'a> {
    /// The capture's name, escaped.
    capture: String,
    bytes: &'a [u8],
    big_endian: bool,
    scale_percent: u64,
    iterations: u64,
    /// The time of its last event (any kind), ns.
    length_ns: u64,
    /// Where each request to merge starts, and its event number (from 1).
    kept: Vec<(u32, u32)>,
    /// The pass under way, from 0.
    pass: u64,
    /// The next request to merge in this pass: an index into `kept`.
    next: usize,
    /// The current request: its header in this machine's byte order, time scaled, payload
    /// dropped.
    header: [u8; EVENT_BYTES],
    /// Its time, ns.
    time_ns: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor before the first request of `capture`, every event checked.
    fn new(capture: &CaptureToMerge<'a>) -> Result<Cursor<'a>, MergeError> {
        let name = crate::text::escape::escape_controls(capture.name).into_owned();
        let Some(big_endian) = byte_order(capture.bytes) else {
            return Err(MergeError::NotACapture { capture: name });
        };
        let (kept, length_ns) =
            scan(capture.bytes, big_endian).map_err(|error| MergeError::Event {
                capture: name.clone(),
                error,
            })?;
        if kept.is_empty() {
            return Err(MergeError::NothingQueued { capture: name });
        }
        Ok(Cursor {
            capture: name,
            bytes: capture.bytes,
            big_endian,
            scale_percent: capture.scale_percent,
            iterations: capture.iterations.max(1),
            length_ns,
            kept,
            pass: 0,
            next: 0,
            header: [0; EVENT_BYTES],
            time_ns: 0,
        })
    }

    /// Requests this cursor gives the merge, over all its passes.
    fn total(&self) -> u128 {
        self.kept.len() as u128 * u128::from(self.iterations)
    }

    /// Moves to the next request, in this pass or the next; `false` after the last pass.
    fn advance(&mut self) -> Result<bool, MergeError> {
        if self.next == self.kept.len() {
            self.pass += 1;
            if self.pass >= self.iterations {
                return Ok(false);
            }
            self.next = 0;
        }
        let (at, event) = self.kept[self.next];
        self.next += 1;
        let at = at as usize;
        let header = *self.bytes[at..]
            .first_chunk::<EVENT_BYTES>()
            .expect("scanned whole");
        let logged_ns = Event::read(&header, self.big_endian).time_ns;
        let scaled = (u128::from(logged_ns) + u128::from(self.pass) * u128::from(self.length_ns))
            * u128::from(self.scale_percent)
            / 100;
        self.time_ns = u64::try_from(scaled).map_err(|_| MergeError::Time {
            capture: self.capture.clone(),
            event: event as usize,
            pass: self.pass + 1,
        })?;
        self.header = native_order(&header, self.big_endian);
        self.header[TIME_AT..TIME_AT + 8].copy_from_slice(&self.time_ns.to_ne_bytes());
        self.header[PAYLOAD_LENGTH_AT..].copy_from_slice(&0u16.to_ne_bytes());
        Ok(true)
    }
}

/// Checks every event of a capture in the byte order `big_endian`: where each request to
/// merge starts with its event number, and the time of the last event.
fn scan(bytes: &[u8], big_endian: bool) -> Result<(Vec<(u32, u32)>, u64), BlktraceError> {
    let mut kept = Vec::new();
    let mut last_ns = 0;
    let mut at = 0usize;
    let mut event = 0usize;
    while at < bytes.len() {
        event += 1;
        let (parsed, size) = checked_event(bytes, at, event, big_endian)?;
        if is_merged(parsed.action) {
            // Captures are read up to the I/O log limit: offsets and counts fit 32 bits.
            kept.push((at as u32, event as u32));
        }
        last_ns = parsed.time_ns;
        at += size;
    }
    Ok((kept, last_ns))
}

/// Whether an event is merged: a request entering the queue to read, write or discard.
fn is_merged(action: u32) -> bool {
    action & ACTION_MASK == ACTION_QUEUE
        && action & (CATEGORY_READ | CATEGORY_WRITE | CATEGORY_DISCARD) != 0
}

/// `header`, logged in the byte order `big_endian`, in this machine's.
fn native_order(header: &[u8; EVENT_BYTES], big_endian: bool) -> [u8; EVENT_BYTES] {
    let mut native = *header;
    if big_endian != cfg!(target_endian = "big") {
        let mut at = 0;
        for width in FIELD_BYTES {
            native[at..at + width].reverse();
            at += width;
        }
    }
    native
}

/// Merges `captures` (see the module documentation) into the bytes of one capture.
pub fn merge_captures(captures: &[CaptureToMerge<'_>]) -> Result<Vec<u8>, MergeError> {
    let mut active = captures
        .iter()
        .map(Cursor::new)
        .collect::<Result<Vec<Cursor<'_>>, MergeError>>()?;
    let total: u128 = active.iter().map(Cursor::total).sum();
    if total * EVENT_BYTES as u128 > u128::from(MERGE_LIMIT_BYTES) {
        return Err(MergeError::TooLarge);
    }
    for cursor in &mut active {
        cursor.advance()?;
    }
    let mut merged = Vec::with_capacity(total as usize * EVENT_BYTES);
    while !active.is_empty() {
        let mut earliest = 0;
        for (index, cursor) in active.iter().enumerate() {
            if cursor.time_ns < active[earliest].time_ns {
                earliest = index;
            }
        }
        merged.extend_from_slice(&active[earliest].header);
        if !active[earliest].advance()? {
            // The last capture takes the place of the one that ended, as in fio.
            active.swap_remove(earliest);
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::blktrace::{
        ACTION_COMPLETE, COMPLETE, DISCARD, Event, FLUSH, NOTIFY, READ, WRITE, device, encode,
    };

    fn capture(bytes: &[u8], scale_percent: u64, iterations: u64) -> CaptureToMerge<'_> {
        named("sda", bytes, scale_percent, iterations)
    }

    fn named<'a>(
        name: &'a str,
        bytes: &'a [u8],
        scale_percent: u64,
        iterations: u64,
    ) -> CaptureToMerge<'a> {
        CaptureToMerge {
            name,
            bytes,
            scale_percent,
            iterations,
        }
    }

    /// (time, sector) of each event of a merge.
    fn times_and_sectors(merged: &[u8]) -> Vec<(u64, u64)> {
        merged
            .chunks(EVENT_BYTES)
            .map(|event| {
                let u64_at = |at: usize| u64::from_ne_bytes(event[at..at + 8].try_into().unwrap());
                (u64_at(8), u64_at(16))
            })
            .collect()
    }

    #[test]
    fn queued_requests_merge_in_time_order_with_their_payloads_dropped() {
        let disk = device(8, 0);
        let first = encode(
            &[
                Event {
                    payload: b"ab".to_vec(),
                    ..Event::io(100, disk, READ, 1, 512)
                },
                Event::io(300, disk, WRITE, 2, 512),
                Event::io(350, disk, FLUSH, 0, 0),
                Event {
                    action: NOTIFY,
                    ..Event::io(360, disk, 0, 0, 0)
                },
                Event::io(500, disk, DISCARD, 3, 4096),
            ],
            true,
        );
        let second = encode(
            &[
                Event::io(200, disk, WRITE, 10, 512),
                Event::io(300, disk, READ, 11, 512),
                Event {
                    action: ACTION_COMPLETE | COMPLETE | READ,
                    ..Event::io(400, disk, 0, 11, 512)
                },
            ],
            false,
        );
        let merged = merge_captures(&[capture(&first, 100, 1), capture(&second, 100, 1)]).unwrap();
        // On the tie at 300 the capture listed first goes first; the flush, the notice and the
        // completion are left out.
        assert_eq!(
            times_and_sectors(&merged),
            [(100, 1), (200, 10), (300, 2), (300, 11), (500, 3)]
        );
        assert!(
            merged
                .chunks(EVENT_BYTES)
                .all(|event| event[46..48] == [0, 0]),
            "no payload"
        );
        let log = crate::input::fio::blktrace::parse_blktrace(&merged).unwrap();
        assert_eq!(log.ios.len(), 5);
        assert_eq!(log.queue_depth, Some(1), "a merge holds no completion");
    }

    #[test]
    fn scales_and_passes_shift_each_capture_by_its_length() {
        let disk = device(8, 0);
        let fast = encode(
            &[
                Event::io(0, disk, READ, 1, 512),
                Event::io(1_000, disk, READ, 2, 512),
                Event {
                    action: ACTION_COMPLETE | COMPLETE | READ,
                    ..Event::io(2_000, disk, 0, 2, 512)
                },
            ],
            false,
        );
        let slow = encode(&[Event::io(1_500, disk, WRITE, 9, 512)], false);
        let merged = merge_captures(&[capture(&fast, 50, 3), capture(&slow, 100, 1)]).unwrap();
        // The fast capture at half its times, its passes 2000 ns apart before scaling.
        assert_eq!(
            times_and_sectors(&merged),
            [
                (0, 1),
                (500, 2),
                (1_000, 1),
                (1_500, 2),
                (1_500, 9),
                (2_000, 1),
                (2_500, 2)
            ]
        );
    }

    #[test]
    fn bad_captures_are_named() {
        let disk = device(8, 0);
        let good = encode(&[Event::io(0, disk, READ, 1, 512)], false);
        let only_flushes = encode(&[Event::io(0, disk, FLUSH, 0, 0)], false);
        assert_eq!(
            merge_captures(&[capture(&good, 100, 1), named("b\n", &only_flushes, 100, 1)])
                .unwrap_err()
                .to_string(),
            "b\\n: no queued read, write or discard to merge",
            "named, control characters escaped"
        );
        assert!(matches!(
            merge_captures(&[capture(b"fio version 2 iolog\n", 100, 1)]),
            Err(MergeError::NotACapture { .. })
        ));
        let cut = &good[..40];
        assert_eq!(
            merge_captures(&[capture(&good, 100, 1), named("cut", cut, 100, 1)])
                .unwrap_err()
                .to_string(),
            "cut: event 1 at byte 0: truncated (48 bytes needed, 40 left)"
        );
        let late = encode(&[Event::io(u64::MAX / 2, disk, READ, 1, 512)], false);
        assert_eq!(
            merge_captures(&[capture(&late, 100, 3)]),
            Err(MergeError::Time {
                capture: "sda".into(),
                event: 1,
                pass: 3
            })
        );
    }
}
