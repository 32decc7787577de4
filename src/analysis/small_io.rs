//! The size at or below which an I/O's limit is taken to be per I/O rather than per byte: a
//! device-bound test of such I/Os is confirmed with larger blocks ([`super::confirmation`]),
//! and a burst bucket that one block size cannot place is counted in I/Os
//! ([`super::burst_bucket`]), as a cloud disk counts its credits for small I/Os.

/// Mean I/O size, bytes, at or below which a limit is taken to be per I/O.
pub const SMALL_BLOCK_BYTES: f64 = 16.0 * 1024.0;
