//! iopath measures a storage path — disk, controller, bus, link, protocol — and reports
//! throughput, IOPS, latency percentiles and CPU cost you can trust.
//!
//! Data flows one way: a validated [`workload::Plan`] is executed by the [`run`] module, whose
//! workers each own an [`engine::Engine`], their buffers and their [`stats`] recorders; the
//! outcome is a [`result::RunResult`], plain serde data that the [`analysis`], [`compare`] and
//! every exporter in [`report`] read. Library code never prints and never exits; only the
//! binary's `cli` layer chooses streams and exit codes.
//!
//! The modules form layers and every import points down; tests/import_graph.rs checks that
//! no import goes round in a circle and that the schema, the statistics, the engines, the
//! analysis and the exporters keep to their layer:
//!
//! ```text
//!  cli (the binary: flags, streams, exit codes)
//!  cluster
//!  run · net · report
//!  compare
//!  workload · analysis
//!  targets
//!  engine
//!  host · stats · units · bounded_read · escape
//!  result (the RunResult schema: plain data, importing nothing of ours)
//! ```
//!
//! - [`result`]: the schema, one file per area, the one artifact everything reads;
//! - [`stats`]: fixed-memory latency histograms, recorders, per-interval series (pure);
//! - [`engine`]: how I/O is issued (sync, io_uring, null, NBD, iSCSI) behind one trait;
//! - [`host`]: what the machine is — CPU accounting, host facts, the clock, timestamps;
//! - [`units`]: sizes, times and rates as people type and read them;
//! - [`bounded_read`]: files the user names, read only when regular and within a size limit;
//! - [`text::escape`]: text from outside made safe to show on a terminal;
//! - [`analysis`]: the storage path of each target and the verdict of each test;
//! - [`workload`], [`targets`], [`run`]: what I/O to issue, where, and the runner;
//! - [`cluster`]: runs from several clients at once (MPI), merged exactly;
//! - [`net`]: raw TCP link tests; [`compare`]: several results side by side;
//! - [`report`]: one exporter per format.

pub mod analysis;
pub mod bounded_read;
pub mod cluster;
pub mod compare;
pub mod discovery;
pub mod engine;
pub mod history;
pub mod host;
pub mod metrics;
pub mod net;
pub mod report;
pub mod result;
pub mod run;
pub mod stats;
pub mod targets;
pub mod text;
pub mod units;
pub mod verify;
pub mod workload;

// The tests' shared support (tests/support), whose paths name this crate `iopath` as the
// integration tests do.
#[cfg(test)]
extern crate self as iopath;
#[cfg(test)]
#[path = "../tests/support/mod.rs"]
mod support;
