//! What every test binary shares, and the library's own unit tests too (src/lib.rs includes
//! this folder under `cfg(test)`): prerequisites that skip or fail a test ([`require`],
//! [`skip_unless!`]), loop and device-mapper devices ([`devices`]) and the saved results of
//! real runs ([`fixtures`]).

#![allow(dead_code, unused_imports, unused_macros)]

pub mod blktrace;
pub mod busy_host;
pub mod corpus;
pub mod devices;
pub mod fixtures;
pub mod foreign;
pub mod fuzz;
pub mod history;
pub mod nas;
pub mod peer;
pub mod priority;
pub mod process;
pub mod pts;
pub mod scratch;
pub mod skip;
pub mod verify;

pub use process::{free_port, run_with_limit};
pub use skip::{require, skip};

/// Returns from the calling test unless `available` holds: see [`skip::require`].
/// `skip_unless!(has_command("fio"), "fio is not installed (apt-get install fio)")`.
macro_rules! skip_unless {
    ($available:expr, $($reason:tt)+) => {
        if !$crate::support::require($available, format_args!($($reason)+)) {
            return;
        }
    };
}
pub(crate) use skip_unless;
