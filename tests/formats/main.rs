//! Integration tests of what iopath reads and writes: fio and TOML job files (fio's own
//! corpus and real-world files), fuzzed inputs and server replies, the exporters against the
//! tools that read their formats and against snapshots, `iopath compare` and the HTML report,
//! and data verification. One module per subject.

#[path = "../support/mod.rs"]
mod support;

#[path = "compare_report/chromium.rs"]
mod chromium;

mod blktrace_fuzz;
mod blktrace_merge;
mod blktrace_merge_fuzz;
mod blktrace_replay;
mod compare_report;
mod exporter_snapshots;
mod exporters;
mod fio_corpus;
mod fio_real_world;
mod input_fuzz;
mod iolog_clones;
mod iolog_replay;
mod pts_report;
mod reply_fuzz;
mod toml_jobs;
mod verify;
mod verify_passes;
