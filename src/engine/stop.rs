//! [`StopSignal`]: the run's request to stop (Ctrl-C, SIGTERM, a worker that failed), shared
//! by the signal handler, the runner and every engine that may wait on a server.
//!
//! Engines that block on a network server look at it between short waits, so a stop is seen
//! promptly even while a server stalls; the flag itself is a plain atomic, read with relaxed
//! ordering (it orders nothing else).
//!
//! ```
//! use iopath::engine::StopSignal;
//! let stop = StopSignal::new();
//! let seen_by_a_worker = stop.clone();
//! assert!(!seen_by_a_worker.is_raised());
//! stop.raise();
//! assert!(seen_by_a_worker.is_raised());
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared stop flag; clones see the same flag.
#[derive(Clone, Debug, Default)]
pub struct StopSignal(Arc<AtomicBool>);

impl StopSignal {
    /// A signal not raised yet.
    pub fn new() -> Self {
        StopSignal::default()
    }

    /// Asks everyone holding a clone to stop.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was asked for.
    #[inline]
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The flag itself, for code that sets or reads it directly.
    pub fn flag(&self) -> &AtomicBool {
        &self.0
    }
}
