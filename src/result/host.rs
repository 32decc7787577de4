//! The machine a run (or a client of a multi-client run) ran on.

use serde::{Deserialize, Serialize};

/// The machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpu_count: u32,
    /// Installed memory, bytes.
    pub memory_bytes: u64,
}
