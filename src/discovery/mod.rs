//! Discovery: the only code that reads `/sys`, `/proc` and `/dev`, or asks the kernel with
//! system calls, to learn a target's storage path, and the one reader of what the machine is
//! and has (its description, CPU counters, memory and thread room).
//!
//! Everything goes through a [`Machine`]: a [`HostView`] rooted at a directory (`/` for this
//! host, or a recorded machine's directory) and a [`System`] for what needs a system call on
//! the real machine (name lookups, routes, where a file lives). [`gather`] walks one target's
//! path and returns plain [`facts`]; the analysis turns them into hops with capacities
//! without reading anything itself. [`record`] copies exactly the files discovery read into a
//! directory that then stands in for this machine (`iopath path --record DIR TARGET`).
//!
//! - [`host_view`]: bounded reads, directory listings and links resolved inside the root;
//! - [`sysfs`], [`mounts`], [`route`]: block devices, the mount table, the routing and
//!   neighbour tables;
//! - [`system`], [`machine`], [`machine_file`]: system-call answers, live or recorded;
//! - [`memcpy`]: the memory copy bandwidth of this host;
//! - [`resources`]: the machine's description, per-core CPU counters and the room a plan is
//!   checked against;
//! - [`target`]: a target as a recorded machine describes it;
//! - [`counters`], [`disk_counters`]: the bytes each device and interface moved, and each
//!   block device's requests and their time;
//! - [`writeback`]: the page cache's dirty limits.
//!
//! ```
//! use iopath::discovery::{Machine, facts::PathFacts, gather};
//! use iopath::result::{TargetInfo, TargetKind};
//! let info = TargetInfo {
//!     path: "nbd://127.0.0.1:10809/disk".into(),
//!     kind: TargetKind::Nbd,
//!     size_bytes: 0,
//!     logical_block_size_bytes: 512,
//!     physical_block_size_bytes: 512,
//!     rotational: None,
//!     filesystem: None,
//!     device: None,
//!     direct_io_alignment_bytes: None,
//!     created_by_iopath: false,
//!     transfer_sizes: None,
//!     file_session: None,
//!     created_content: None,
//!     allocated_bytes_looked: None,
//!     read_only: false,
//! };
//! let facts = gather::gather(&info, Some(("127.0.0.1", 10809)), &Machine::this_host());
//! assert!(matches!(facts, PathFacts::Network(Some(_))));
//! ```

pub mod counters;
pub mod disk_counters;
pub mod facts;
pub mod gather;
pub mod host_view;
pub mod machine;
pub mod machine_file;
pub mod memcpy;
pub mod mounts;
pub mod processes;
pub mod record;
pub mod resources;
pub mod route;
pub mod sysfs;
pub mod system;
pub mod target;
pub mod writeback;

#[cfg(test)]
pub(crate) mod machines;

pub use host_view::HostView;
pub use machine::{HostFacts, Machine, MachineError};
pub use system::System;
