//! The engine a test ran with.

use crate::engine::Capabilities;
use serde::{Deserialize, Serialize};

/// The engine in effect for a test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineReport {
    /// Engine name.
    pub name: String,
    /// What it did.
    pub capabilities: Capabilities,
}
