//! Data fetched from public repositories, which the tests read but the repository does not
//! carry: fio's examples, fio's regression job files, job files of public projects, sysfs
//! captures of other projects. It lives beside the checkout, in `../shared/` (each folder with a
//! README naming its upstream repository and commit), or wherever `IOPATH_SHARED` points.
//!
//! [`shared_dir`] is the one way a test finds such a folder: where it is missing, the test is
//! skipped and listed (tests/support/skip.rs), and under `CI` or `IOPATH_REQUIRE_ALL` it fails.

use std::path::{Path, PathBuf};

/// The variable that names the folder of shared data (default: `../shared` beside the checkout).
pub const SHARED_VARIABLE: &str = "IOPATH_SHARED";

/// The folder of shared data: `$IOPATH_SHARED`, else `../shared` beside the checkout.
pub fn shared_root() -> PathBuf {
    match std::env::var_os(SHARED_VARIABLE) {
        Some(root) if !root.is_empty() => PathBuf::from(root),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

/// The corpus `name` (a folder of the shared data, e.g. `fio-examples`), or `None` after
/// skipping the calling test (a failure under `CI` or `IOPATH_REQUIRE_ALL`) where it is missing.
#[track_caller]
pub fn shared_dir(name: &str) -> Option<PathBuf> {
    let dir = shared_root().join(name);
    if dir.is_dir() {
        Some(dir)
    } else {
        super::skip(format_args!(
            "the corpus {} is not here (set {SHARED_VARIABLE} to the folder that holds {name}/)",
            dir.display()
        ));
        None
    }
}

/// The names of the `.fio` files in `dir`, sorted.
pub fn fio_files(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{} cannot be read: {error}", dir.display()))
        .map(|entry| entry.expect("a directory entry").file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".fio"))
        .collect();
    files.sort();
    files
}
