//! Sysfs and procfs captures other projects keep as test data (`../shared/foreign-sys/`,
//! whose README names each file's repository, path and commit), unpacked for a test as a
//! recorded machine: `ttar` text archives (prometheus/procfs, node_exporter) by [`unpack_ttar`],
//! tarballs by `tar`.
//!
//! Each capture is unpacked once per process into a temporary directory that lives as long as
//! the process; [`capture`] returns the directory that holds its `sys/` (and `proc/`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The unpacked capture `file` of `../shared/foreign-sys` (e.g. `node_exporter-sys.ttar`): the
/// directory holding its `sys/`, or `None` after a skip (a failure under CI) where the corpus
/// is missing.
#[track_caller]
pub fn capture(file: &str) -> Option<PathBuf> {
    let corpus = super::corpus::shared_dir("foreign-sys")?;
    static UNPACKED: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut unpacked = UNPACKED
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(root) = unpacked.get(file) {
        return Some(root.clone());
    }
    let source = corpus.join(file);
    assert!(source.is_file(), "{} is missing", source.display());
    let destination = tempfile::Builder::new()
        .prefix("iopath-foreign-")
        .tempdir()
        .expect("a temporary directory")
        .keep();
    if file.ends_with(".ttar") {
        unpack_ttar(&source, &destination);
    } else {
        let status = Command::new("tar")
            .arg("-xf")
            .arg(&source)
            .arg("-C")
            .arg(&destination)
            .status()
            .expect("tar runs");
        assert!(status.success(), "tar -xf {} failed", source.display());
    }
    let root = holder_of_sys(&destination)
        .unwrap_or_else(|| panic!("{file}: no sys/ directory in the capture"));
    unpacked.insert(file.to_string(), root.clone());
    Some(root)
}

/// The shallowest directory under `top` (itself included) that holds a `sys` directory.
fn holder_of_sys(top: &Path) -> Option<PathBuf> {
    let mut pending = vec![top.to_path_buf()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for directory in pending {
            if directory.join("sys").is_dir() {
                return Some(directory);
            }
            for entry in std::fs::read_dir(&directory).ok()?.flatten() {
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    next.push(entry.path());
                }
            }
        }
        pending = next;
    }
    None
}

/// Unpacks a `ttar` archive (the plain-text tree format of prometheus's fixtures: `Directory:`,
/// `Path:` with `Lines: N` and N lines of content or `SymlinkTo: TARGET`, then `Mode:`; a line
/// ending in `EOF` has no newline, `NULLBYTE` stands for a zero byte) into `destination`.
pub fn unpack_ttar(archive: &Path, destination: &Path) {
    let text = std::fs::read(archive).expect("the archive reads");
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.split('\n').collect();
    let inside = |name: &str| {
        let relative = Path::new(name);
        assert!(
            relative
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_))),
            "ttar path {name} leaves the archive"
        );
        destination.join(relative)
    };
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        index += 1;
        if let Some(name) = line.strip_prefix("Directory: ") {
            std::fs::create_dir_all(inside(name)).unwrap();
        } else if let Some(name) = line.strip_prefix("Path: ") {
            let path = inside(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let next = lines.get(index).copied().unwrap_or("");
            if let Some(count) = next.strip_prefix("Lines: ") {
                let count: usize = count.trim().parse().expect("a line count");
                let body = &lines[index + 1..index + 1 + count];
                index += 1 + count;
                let mut content = String::new();
                for line in body {
                    content.push_str(line);
                    content.push('\n');
                }
                if let Some(cut) = content.strip_suffix("EOF\n") {
                    content = cut.to_string();
                }
                std::fs::write(&path, content.replace("NULLBYTE", "\0")).unwrap();
            } else if let Some(target) = next.strip_prefix("SymlinkTo: ") {
                index += 1;
                let _ = std::fs::remove_file(&path);
                std::os::unix::fs::symlink(target, &path).unwrap();
            }
        }
    }
}
