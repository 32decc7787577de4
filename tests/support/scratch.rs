//! Scratch directories of the corpus tests: a fixed place under the build's scratch directory
//! (so a failed case can be looked at afterwards), emptied when a case starts and removed when
//! it passes, so the suite does not leave gigabytes of test files behind.

use std::path::{Path, PathBuf};

/// A case's scratch directory, created empty by [`Scratch::fresh`] and removed on drop unless
/// the test is failing.
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// `base/name`, emptied and created.
    pub fn fresh(base: &Path, name: &str) -> Scratch {
        let path = base.join(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|error| panic!("scratch directory {}: {error}", path.display()));
        Scratch { path }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
