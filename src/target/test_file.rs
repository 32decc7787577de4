//! Test files iopath creates: sizing from free space, creation filled with incompressible data,
//! the ownership mark, and removal (also on Ctrl-C).

use super::TargetError;
use std::path::Path;

/// Default size of the temporary test file: 1 GiB where there is room, never more than a quarter
/// of the free space of `directory` (rounded down to MiB).
pub fn default_test_file_size(directory: &Path) -> Result<u64, TargetError> {
    let _ = directory;
    todo!()
}

/// Creates `path` (which must not exist) with `size_bytes` of incompressible data from `seed`,
/// and marks it as created by iopath.
pub fn create_test_file(path: &Path, size_bytes: u64, seed: u64) -> Result<(), TargetError> {
    let _ = (path, size_bytes, seed);
    todo!()
}
