//! Integration tests: the real `iopath` binary against real files, loop devices and mounts.

#[path = "../support/mod.rs"]
mod support;

mod common;
mod correctness;
mod data;
mod errors;
mod fio_files;
mod fio_options;
mod input_files;
mod interrupt;
mod machines;
mod output;
mod output_files;
mod safety;
mod stale_files;
mod threads;
mod trace;
mod verdicts;
mod workloads;
