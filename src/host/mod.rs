//! What runs on the machine: the CPU time iopath and every core use ([`cpu`]), the clock every
//! latency is read from ([`clock`]), wall-clock timestamps with their calendar arithmetic
//! ([`time`]), and the C library calls that ask what this process may do ([`sys`]). What the
//! machine is (name, kernel, CPUs, memory) is read by discovery
//! ([`crate::discovery::resources`]), the one reader of `/sys` and `/proc`.
//!
//! Used alike by the runner and by `iopath net`; nothing here knows about workloads or
//! results beyond the plain data it fills in.

pub mod clock;
pub mod cpu;
pub mod sys;
pub mod time;
