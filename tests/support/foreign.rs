//! Sysfs and procfs captures other projects keep as test data (`../shared/foreign-sys/`,
//! whose README names each file's repository, path and commit), unpacked for a test as a
//! recorded machine: `ttar` text archives (prometheus/procfs, node_exporter) by [`unpack_ttar`],
//! tarballs by `tar`.
//!
//! Each capture is unpacked once per build into the build's scratch directory
//! (`CARGO_TARGET_TMPDIR/foreign-sys/`, the system's temporary directory where that is not set),
//! under a name that changes with the archive's size and modification time: every test process
//! of the suite reuses it, so the suite leaves one unpacked tree per capture behind, not one per
//! test. A tree is unpacked beside its final name and renamed into place, so two processes
//! unpacking at once both end with a whole tree; [`capture`] returns the directory that holds its
//! `sys/` (and `proc/`).

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
    let destination = unpacked_place(&source, file);
    if !destination.is_dir() {
        unpack_into_place(&source, file, &destination);
    }
    let root = holder_of_sys(&destination)
        .unwrap_or_else(|| panic!("{file}: no sys/ directory in the capture"));
    unpacked.insert(file.to_string(), root.clone());
    Some(root)
}

/// Where `file` (the archive at `source`) is kept unpacked: named after the file, its size and
/// its modification time, so an updated corpus is unpacked afresh.
fn unpacked_place(source: &Path, file: &str) -> PathBuf {
    let metadata = std::fs::metadata(source).expect("the capture's metadata");
    let modified = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_secs());
    option_env!("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join("foreign-sys")
        .join(format!("{file}-{}-{modified}", metadata.len()))
}

/// Unpacks `source` into a fresh directory beside `destination`, then renames it into place; a
/// process that lost the race to another removes its own copy and uses the other's.
fn unpack_into_place(source: &Path, file: &str, destination: &Path) {
    let parent = destination.parent().expect("a parent directory");
    std::fs::create_dir_all(parent).expect("the captures' directory");
    let fresh = tempfile::Builder::new()
        .prefix(".unpacking-")
        .tempdir_in(parent)
        .expect("a temporary directory");
    if file.ends_with(".ttar") {
        unpack_ttar(source, fresh.path());
    } else {
        let status = Command::new("tar")
            .arg("-xf")
            .arg(source)
            .arg("-C")
            .arg(fresh.path())
            .status()
            .expect("tar runs");
        assert!(status.success(), "tar -xf {} failed", source.display());
    }
    let fresh = fresh.keep();
    if std::fs::rename(&fresh, destination).is_err() {
        assert!(
            destination.is_dir(),
            "{} could not be put in place",
            destination.display()
        );
        let _ = std::fs::remove_dir_all(&fresh);
    }
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
