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
//! that nothing at or below `workload` imports `input`, that nothing imports `cli`, and that
//! only `discovery` names paths of `/sys` and `/proc`:
//!
//! ```text
//!  cli (the binary: flags, subcommands, streams, exit codes)
//!  cluster · metrics · history
//!  run · net · observe · report
//!  input (readers of flags, fio and TOML job files, presets)
//!  compare
//!  analysis · workload (the validated plan and the generators the worker asks)
//!  engine (the Engine trait, every engine, adapters over the protocol crates of crates/)
//!  targets · verify
//!  host
//!  discovery · stats
//!  gate · text · units · fill
//!  result (the RunResult schema: plain data, importing nothing of ours)
//! ```
//!
//! Below them, outside this crate: the workspace's client crates in `crates/`, which know
//! nothing of iopath — `iscsi-client` (libiscsi sessions and commands), `nbd-client` (NBD: wire
//! format, handshake, pipelined connections), `nfs-client` (XDR, ONC RPC, NFSv3, NFSv4.1), `smb-client` (SMB2/3 up to a logged-in connection: wire format, NTLMv2,
//! signing, encryption) and `wire-text` (text from a peer made safe to show, which [`text::escape`]
//! and [`units::format_wait`] re-export).
//! Only [`engine`] names a protocol client (tests/structure/import_graph/workspace_crates.rs).
//!
//! - [`result`]: the schema, one file per area, the one artifact everything reads;
//! - [`units`]: sizes, times and rates as people type and read them;
//! - [`text`]: text from outside made safe to show on a terminal ([`text::escape`]) and
//!   bounded in length;
//! - [`fill`]: what write buffers hold (random bytes, zeros, patterns, reducible data) and
//!   filling them, for the worker, verification and test files alike;
//! - [`gate`]: every path iopath creates, writes, replaces, reads from the user or removes:
//!   regular files only, atomic replace, removal of its own files only, bounded reads
//!   (tests/structure/path_gate.rs refuses any other such call);
//! - [`stats`]: fixed-memory latency histograms, recorders, per-interval series and their
//!   exact merges (pure);
//! - [`discovery`]: the only reader of `/sys`, `/proc` and `/dev`, through a
//!   [`discovery::Machine`] rooted at this host or at a recorded machine;
//! - [`host`]: CPU accounting, the clock, timestamps;
//! - [`verify`]: block headers, checksums and the ledger of written blocks;
//! - [`targets`]: files and block devices: inspection, safety checks, test files, opening;
//!   network targets' URLs ([`targets::network_target`]) and the life of a test file on a
//!   share ([`targets::remote_file`]);
//! - [`engine`]: how I/O is issued behind one trait — sync, io_uring, null, and the protocol
//!   engines NBD (over the `nbd-client` crate), iSCSI (over the `iscsi-client` crate), NFS
//!   (over `nfs-client`) and SMB (over `smb-client`);
//! - [`workload`]: what I/O to issue: the validated plan and the generators the worker asks
//!   on the hot path (offset planner, distributions, random map, file sets, write data), the
//!   default suite and sweeps; it reads no outside input;
//! - [`input`]: the readers of outside input — the workload flags, fio and TOML job files,
//!   presets — which build a [`workload::Plan`] before any I/O (and the TOML writer);
//! - [`analysis`]: the storage path of each target (the link catalog, hops), the verdict of
//!   each test and its trust notes ([`analysis::Analyser`], once per run result;
//!   [`analysis::analyse_on`], which `iopath explain` runs again on a saved result);
//! - [`compare`]: several results side by side;
//! - [`run`]: the runner: plan checks, the shape of each test ([`run::shape::TestShape`]:
//!   engine, workers, queue depth, largest block) and the host budget, workers, the
//!   coordinator, `--confirm`;
//! - [`pts`]: `iopath pts`, the SNIA PTS tests (purge, preconditioning, rounds until the
//!   specification's steady state), run through [`run`];
//! - [`observe`]: the far end's own counters (`--server-metrics`: a node exporter scraped
//!   once a second);
//! - [`net`]: raw TCP link tests (`iopath net`); [`report`]: the report model, built once,
//!   and one exporter per format that only formats it;
//! - [`cluster`]: runs from several clients at once (MPI), merged exactly;
//! - [`metrics`]: the live OpenMetrics endpoint (`--metrics`);
//! - [`history`]: every run kept in a local SQLite database.

pub mod analysis;
pub mod cluster;
pub mod compare;
pub mod discovery;
pub mod engine;
pub mod fill;
pub mod gate;
pub mod history;
pub mod host;
pub mod input;
pub mod metrics;
pub mod net;
pub mod observe;
pub mod pts;
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
