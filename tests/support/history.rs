//! Keeps the binary under test away from the user's own run history: every `iopath` a test
//! starts writes its history to a database under the build directory (shared by the tests,
//! which also shows that concurrent runs are kept), never to ~/.local/share.

use std::path::PathBuf;
use std::process::Command;

/// The history database of the tests: `history.sqlite` in the build's scratch directory
/// (`CARGO_TARGET_TMPDIR`), or in the system's temporary directory where that is not set.
pub fn path() -> PathBuf {
    option_env!("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join("history.sqlite")
}

/// `binary` (the iopath under test) with `IOPATH_HISTORY` set to [`path`].
pub fn command(binary: &str) -> Command {
    let mut command = Command::new(binary);
    command.env("IOPATH_HISTORY", path());
    command
}
