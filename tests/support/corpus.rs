//! Folders of fio job files that tests run one by one.

use std::path::Path;

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
