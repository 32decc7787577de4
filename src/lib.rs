//! iopath measures a storage path — disk, controller, bus, link, protocol — and reports
//! throughput, IOPS, latency percentiles and CPU cost you can trust.
//!
//! Data flows one way: a validated [`workload::Plan`] is executed by the [`run`] module, whose
//! workers each own an [`engine::Engine`], their buffers and their [`stats`] recorders; the
//! outcome is a [`result::RunResult`], plain serde data that the [`analysis`], [`compare`] and
//! every exporter in [`report`] read. Library code never prints and never exits; only the
//! binary's `cli` layer chooses streams and exit codes. ARCHITECTURE.md at the repository root
//! follows a flag to an engine submission and a completion to a report.
//!
//! The modules form layers; a module uses only modules on lower lines, and nothing points up.
//! tests/structure/import_graph.rs checks that no import goes round in a circle, that `result`
//! imports nothing of ours and `stats` nothing but `result`, that `engine` knows nothing of `workload`,
//! `report`, `analysis`, `compare` or `run`, that `analysis` and `report` never import `run`,
//! that nothing imports `cli`, and that only `discovery` names paths of `/sys` and `/proc`:
//!
//! ```text
//!  cli (the binary: flags, subcommands, streams, exit codes)
//!  cluster · metrics · history
//!  run · net · report
//!  compare
//!  analysis · workload
//!  targets · verify
//!  engine
//!  host
//!  discovery · stats
//!  gate · text · units
//!  result (the RunResult schema: plain data, importing nothing of ours)
//! ```
//!
//! - [`result`]: the schema, one file per area, the one artifact everything reads;
//! - [`units`]: sizes, times and rates as people type and read them;
//! - [`text`]: text from outside made safe to show on a terminal ([`text::escape`]) and
//!   bounded in length;
//! - [`gate`]: every path iopath creates, writes, replaces, reads from the user or removes:
//!   regular files only, atomic replace, removal of its own files only, bounded reads
//!   (tests/structure/path_gate.rs refuses any other such call);
//! - [`stats`]: fixed-memory latency histograms, recorders, per-interval series and their
//!   exact merges (pure);
//! - [`discovery`]: the only reader of `/sys`, `/proc` and `/dev`, through a
//!   [`discovery::Machine`] rooted at this host or at a recorded machine;
//! - [`host`]: CPU accounting, the clock, timestamps;
//! - [`engine`]: how I/O is issued behind one trait — sync, io_uring, null, and the protocol
//!   clients NBD, iSCSI, NFS and SMB;
//! - [`verify`]: block headers, checksums and the ledger of written blocks;
//! - [`targets`]: files and block devices: inspection, safety checks, test files, opening;
//! - [`workload`]: what I/O to issue: the plan, the offset planner, the suite, presets and
//!   sweeps, the readers of flags, fio and TOML job files, and the TOML writer;
//! - [`analysis`]: the storage path of each target (the link catalog, hops), the verdict of
//!   each test and its trust notes ([`analysis::analyse`], [`analysis::analyse_on`], which
//!   `iopath explain` runs again on a saved result);
//! - [`compare`]: several results side by side;
//! - [`run`]: the runner: plan checks and budget, workers, the coordinator, `--confirm`;
//! - [`net`]: raw TCP link tests (`iopath net`); [`report`]: one exporter per format;
//! - [`cluster`]: runs from several clients at once (MPI), merged exactly;
//! - [`metrics`]: the live OpenMetrics endpoint (`--metrics`);
//! - [`history`]: every run kept in a local SQLite database.

pub mod analysis;
pub mod cluster;
pub mod compare;
pub mod discovery;
pub mod engine;
pub mod gate;
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
