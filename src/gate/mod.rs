//! The one gate for paths: every file iopath creates, writes, replaces, reads from the user or
//! removes goes through this module, and only through it (tests/structure/path_gate.rs refuses
//! any other call in `src/` that opens a path for writing, renames or removes one, with a short
//! list of reasoned exceptions such as the targets themselves).
//!
//! Its rules:
//! - **Regular files only.** A path is written when it is missing (a new file) or a regular
//!   file iopath may replace. A directory, a device node, a FIFO or a socket is refused before
//!   anything is opened, and a symbolic link is followed only to a regular file.
//! - **Atomic replace** ([`replace`]): a new file is written beside the destination, synced and
//!   renamed over it; a failed or killed run leaves the old file whole.
//! - **Remove only what is provably ours** ([`created`]): a file is removed only when this
//!   process created it (same path, device and inode), or, for a test file a killed run left,
//!   when it is still the very file that was found (same name, device and inode).
//! - **Bounded, non-blocking reads** ([`read`]): a file the user names is opened with
//!   `O_NONBLOCK` (a FIFO never holds the open), checked to be regular on the open descriptor,
//!   and read up to a stated limit.
//! - **Databases** ([`database`]): SQLite opens only a regular file (or a new one), never a
//!   device through a link, and a reader opens it read-only.
//!
//! Where it lives: at the bottom of the layers, importing nothing of ours, beside `text` and
//! `units` (ARCHITECTURE.md). It does not sit with the targets: they import the engines and
//! discovery, and both of these write files too (the trim probe, the memory-copy cache, a
//! recorded machine): a gate inside `targets` would make those imports point up and close a
//! circle. So `targets` (test files), `discovery`, `engine`, `history`, `verify`, `report` and
//! the `cli` all use this one module, and it uses none of them.

pub mod created;
pub mod database;
pub mod read;
pub mod replace;

use std::fs::Metadata;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// What a file that is not a regular file is, for messages: `a directory`, `a character
/// device`, `a block device`, `a named pipe (FIFO)`, `a socket`, else `a special file`.
pub fn kind_name(metadata: &Metadata) -> &'static str {
    let file_type = metadata.file_type();
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_fifo() {
        "a named pipe (FIFO)"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// Whether the calling process may write into `path` (`access(W_OK)`; also fails with EROFS on
/// a read-only filesystem).
pub fn check_writable(path: &Path) -> io::Result<()> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    let result = unsafe { libc::access(c_path.as_ptr(), libc::W_OK) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
