//! Integration tests: the real `iopath` binary against real files, loop devices and mounts.

#[path = "../support/mod.rs"]
mod support;

mod common;
mod compare_single;
mod completions;
mod correctness;
mod dashboard_servers;
mod data;
mod error_policies;
mod errors;
mod explain;
mod file_engine_calls;
mod file_engines;
mod file_layout;
mod fio_files;
mod fio_options;
mod history;
mod input_files;
mod install;
mod interrupt;
mod live;
mod machines;
mod many_files;
mod metrics;
mod null_engine;
mod output;
mod output_files;
mod path_command;
mod path_gate;
mod pts;
mod pts_history;
mod pts_purge;
mod pts_write_cliff;
mod result_size;
mod safety;
mod server_metrics;
mod short_runs;
mod stale_files;
mod switch_snmp;
mod threads;
mod trace;
mod trim;
mod url_passwords;
mod verdicts;
mod workloads;
