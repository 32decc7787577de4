//! iopath measures a storage path — disk, controller, bus, link, protocol — and reports
//! throughput, IOPS, latency percentiles and CPU cost you can trust.
//!
//! Data flows one way: a validated [`workload::Plan`] is executed by the [`run`] module, whose
//! workers each own an [`engine::Engine`], their buffers and their [`stats`] recorders; the
//! outcome is a [`report::RunResult`], plain serde data that every exporter reads. Library code
//! never prints and never exits; only the binary's `cli` layer chooses streams and exit codes.

pub mod analysis;
pub mod clock;
pub mod compare;
pub mod discovery;
pub mod engine;
pub mod net;
pub mod report;
pub mod run;
pub mod stats;
pub mod target;
pub mod units;
pub mod workload;
