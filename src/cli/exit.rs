//! Exit statuses, in one place.

/// Everything ran.
pub const SUCCESS: i32 = 0;
/// An I/O or engine error stopped the run (the result is kept).
pub const RUN_FAILED: i32 = 1;
/// Bad input: a flag, a size, a target; nothing was written.
pub const BAD_INPUT: i32 = 2;
/// Interrupted by Ctrl-C or SIGTERM (the partial result is kept).
pub const INTERRUPTED: i32 = 130;
