//! An iSCSI initiator in user space over libiscsi's asynchronous API: log in to one target
//! and LUN, run single SCSI commands, or drive many commands at once from one event loop —
//! with no kernel initiator, no `/dev/sdX` and no mount.
//!
//! libiscsi (LGPL, 1.x, Debian's `libiscsi7`) is loaded at run time with `dlopen`
//! ([`library::library`]): a program using this crate builds and runs without it, and only
//! the first session needs it (the error then names the package). The parts:
//!
//! - [`ffi`]: the C types and constants of libiscsi 1.19 that are touched, with the layout of
//!   `struct scsi_task` asserted at compile time;
//! - [`library`]: `dlopen` of `libiscsi.so.7` and the table of its functions, resolved once;
//! - [`session`]: one logged-in session as an RAII type (RFC 7143 login, optionally with
//!   CHAP; logout on drop), its event loop ([`session::poll_sessions`]) with a deadline on
//!   every wait, and single commands ([`session::Session::run`]);
//! - [`status`]: SCSI status and sense data (SPC-4 §4.5) as errnos and text;
//! - [`task`]: a finished single command (status, sense, data-in) as an RAII type.
//!
//! Errors are [`std::io::Error`]s whose messages name the target and the command; text the
//! target or libiscsi sent is shown with its control characters escaped.
//!
//! ```no_run
//! use iscsi_client::library::library;
//! use iscsi_client::session::{LoginParameters, Session};
//! use std::time::Duration;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let library = library()?;
//! let login = LoginParameters {
//!     portal: "127.0.0.1:3260".into(),
//!     target_iqn: "iqn.2026-01.org.example:disk".into(),
//!     lun: 1,
//!     initiator_iqn: "iqn.2026-01.org.example:initiator".into(),
//!     chap: None,
//! };
//! let timeout = Duration::from_secs(30);
//! let mut session = Session::connect(library, &login, timeout)?;
//! let capacity = session
//!     .run("READ CAPACITY(16)", timeout, |library, context, lun, callback, private| {
//!         // SAFETY: the session's live context, with its own callback and private data.
//!         unsafe { (library.readcapacity16_task)(context, lun, callback, private) }
//!     })?
//!     .check("READ CAPACITY(16)")?;
//! let last_block = u64::from_be_bytes(capacity.data_in()[..8].try_into()?);
//! println!("{} blocks", last_block + 1);
//! session.logout(timeout)?;
//! # Ok(())
//! # }
//! ```
//!
//! Without a target, the library check is all there is to run:
//!
//! ```
//! match iscsi_client::library::library() {
//!     Ok(_) => println!("libiscsi is here"),
//!     Err(message) => assert!(message.contains("libiscsi7")),
//! }
//! ```

#![deny(missing_docs)]

mod dynamic_library;
pub mod ffi;
pub mod library;
pub mod session;
pub mod status;
mod sys;
pub mod task;
