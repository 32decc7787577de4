//! What the machine is: its name, kernel, CPUs and memory ([`info`]), the CPU time iopath and
//! every core use ([`cpu`]), the clock every latency is read from ([`clock`]) and wall-clock
//! timestamps with their calendar arithmetic ([`time`]).
//!
//! Used alike by the runner and by `iopath net`; nothing here knows about workloads or
//! results beyond the plain data it fills in.

pub mod clock;
pub mod cpu;
pub mod info;
pub mod sys;
pub mod time;
