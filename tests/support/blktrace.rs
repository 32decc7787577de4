//! blktrace captures built by tests from the documented layout of one event (`struct
//! blk_io_trace` in the kernel's include/uapi/linux/blktrace_api.h, also in blktrace's and
//! fio's sources): a 48-byte header — magic with the version (u32), sequence (u32), time in ns
//! (u64), sector (u64), bytes (u32), action (u32), pid (u32), device (u32), cpu (u32), error
//! (u16), pdu_len (u16) — then `pdu_len` bytes of payload. Fields are in the byte order of
//! the machine that captured, which [`encode`] takes as an argument.

/// `BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION`.
pub const MAGIC_VERSION_7: u32 = 0x6561_7407;

/// A category bit of `action` (the categories sit above the low 16 bits of the action).
pub const fn category(bit: u32) -> u32 {
    1 << (16 + bit)
}

/// Categories: read, write, flush, queue, issue, complete, notify, discard.
pub const READ: u32 = category(0);
pub const WRITE: u32 = category(1);
pub const FLUSH: u32 = category(2);
pub const QUEUE: u32 = category(4);
pub const ISSUE: u32 = category(6);
pub const COMPLETE: u32 = category(7);
pub const NOTIFY: u32 = category(10);
pub const DISCARD: u32 = category(13);

/// Actions (low 16 bits): queued, back merge, issued, completed.
pub const ACTION_QUEUE: u32 = 1;
pub const ACTION_BACKMERGE: u32 = 2;
pub const ACTION_ISSUE: u32 = 7;
pub const ACTION_COMPLETE: u32 = 8;

/// A queued event of these categories, as the kernel logs a request entering the queue.
pub const fn queued(categories: u32) -> u32 {
    ACTION_QUEUE | QUEUE | categories
}

/// The kernel's device number of `major:minor` as blktrace records it (minor in the low 20
/// bits).
pub const fn device(major: u32, minor: u32) -> u32 {
    (major << 20) | minor
}

/// One event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds.
    pub time_ns: u64,
    /// Offset in 512-byte sectors.
    pub sector: u64,
    /// Length, bytes.
    pub bytes: u32,
    /// Action and categories.
    pub action: u32,
    /// [`device`].
    pub device: u32,
    /// The payload after the header.
    pub payload: Vec<u8>,
}

impl Event {
    /// A queued I/O of `categories` (READ, WRITE, DISCARD or FLUSH).
    pub fn io(time_ns: u64, device: u32, categories: u32, sector: u64, bytes: u32) -> Event {
        Event {
            time_ns,
            sector,
            bytes,
            action: queued(categories),
            device,
            payload: Vec::new(),
        }
    }
}

/// The bytes of `events` in the byte order `big_endian`, numbered from 1.
pub fn encode(events: &[Event], big_endian: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (index, event) in events.iter().enumerate() {
        let put = |out: &mut Vec<u8>, bytes: &[u8]| {
            if big_endian {
                out.extend(bytes.iter().rev());
            } else {
                out.extend_from_slice(bytes);
            }
        };
        put(&mut out, &MAGIC_VERSION_7.to_le_bytes());
        put(&mut out, &(index as u32 + 1).to_le_bytes());
        put(&mut out, &event.time_ns.to_le_bytes());
        put(&mut out, &event.sector.to_le_bytes());
        put(&mut out, &event.bytes.to_le_bytes());
        put(&mut out, &event.action.to_le_bytes());
        put(&mut out, &4242u32.to_le_bytes());
        put(&mut out, &event.device.to_le_bytes());
        put(&mut out, &(index as u32 % 2).to_le_bytes());
        put(&mut out, &0u16.to_le_bytes());
        put(&mut out, &(event.payload.len() as u16).to_le_bytes());
        out.extend_from_slice(&event.payload);
    }
    out
}
