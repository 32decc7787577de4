//! Integration tests: the real `iopath` binary against real files, loop devices and mounts.

#[path = "../support/mod.rs"]
mod support;

mod common;
mod correctness;
mod data;
mod errors;
mod input_files;
mod interrupt;
mod output;
mod output_files;
mod safety;
mod stale_files;
mod threads;
mod verdicts;
mod workloads;
