//! Integration tests: the real `iopath` binary against real files, loop devices and mounts.

mod common;
mod correctness;
mod errors;
mod interrupt;
mod machines;
mod output;
mod safety;
mod verdicts;
mod workloads;
