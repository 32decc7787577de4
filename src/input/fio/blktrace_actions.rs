//! The codes of a blktrace event's `action` field (the kernel's `blktrace_api.h`): the action
//! in the low 16 bits, the categories of the request above them.

/// The bits of `action` that hold the action (the categories are above them).
pub const ACTION_MASK: u32 = 0xffff;

/// The actions (the low 16 bits of `action`) that matter here: a request entering the queue,
/// merged into one queued before it (at its back or front), completed.
pub const ACTION_QUEUE: u32 = 1;
/// See [`ACTION_QUEUE`].
pub const ACTION_BACKMERGE: u32 = 2;
/// See [`ACTION_QUEUE`].
pub const ACTION_FRONTMERGE: u32 = 3;
/// See [`ACTION_QUEUE`].
pub const ACTION_COMPLETE: u32 = 8;

/// The categories (the high 16 bits of `action`) that matter here.
pub const CATEGORY_READ: u32 = 1 << 16;
/// See [`CATEGORY_READ`].
pub const CATEGORY_WRITE: u32 = 1 << (1 + 16);
/// See [`CATEGORY_READ`].
pub const CATEGORY_FLUSH: u32 = 1 << (2 + 16);
/// See [`CATEGORY_READ`].
pub const CATEGORY_NOTIFY: u32 = 1 << (10 + 16);
/// See [`CATEGORY_READ`].
pub const CATEGORY_DISCARD: u32 = 1 << (13 + 16);
