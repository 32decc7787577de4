//! Integration tests: the real `iopath` binary against real files, loop devices and mounts.

#[path = "../support/mod.rs"]
mod support;

mod common;
mod correctness;
mod errors;
mod interrupt;
mod machines;
mod output;
mod safety;
mod threads;
mod verdicts;
mod workloads;
