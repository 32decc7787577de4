//! One view of a machine's `/sys`, `/proc` and `/dev`, rooted at a directory: `/` for the host
//! iopath runs on, or a recorded machine's directory.
//!
//! Every path given to a [`HostView`] is a path on the viewed machine (`/sys/class/block/sda`).
//! Symbolic links are resolved by the view itself, one component at a time, so that a link
//! (relative, as sysfs makes them, or absolute) never leads outside the root: `..` stops at
//! the root and an absolute target starts again from it. Every read is bounded in size.
//!
//! A view can record what it reads: the files with the bytes read, the links followed and
//! the directories listed, so that exactly those can be copied into a directory that then
//! stands in for the machine ([`super::record`]).
//!
//! ```
//! use iopath::discovery::HostView;
//! use std::path::Path;
//! let root = std::env::temp_dir().join(format!("iopath-view-doc-{}", std::process::id()));
//! std::fs::create_dir_all(root.join("sys/devices/disk")).unwrap();
//! std::fs::create_dir_all(root.join("sys/class/block")).unwrap();
//! std::fs::write(root.join("sys/devices/disk/size"), "2048\n").unwrap();
//! std::os::unix::fs::symlink("../../devices/disk", root.join("sys/class/block/sda")).unwrap();
//! let view = HostView::rooted(&root);
//! assert_eq!(view.attribute(Path::new("/sys/class/block/sda/size")).as_deref(), Some("2048"));
//! assert_eq!(view.resolve(Path::new("/sys/class/block/sda")).unwrap(), Path::new("/sys/devices/disk"));
//! std::fs::remove_dir_all(&root).unwrap();
//! ```

use crate::text::escape::escape_controls;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Largest single attribute or small file read, bytes (sysfs attributes are at most a page).
pub const ATTRIBUTE_LIMIT_BYTES: usize = 64 * 1024;
/// Largest table read (`/proc/self/mountinfo`, `/proc/net/route`), bytes.
pub const TABLE_LIMIT_BYTES: usize = 1 << 20;
/// Most entries listed from one directory.
pub const DIRECTORY_LIMIT: usize = 4096;
/// Most directories of `/sys/devices` walked to find a block device a recorded tree lists
/// nowhere else.
pub const DEVICE_WALK_LIMIT: usize = 20_000;
/// How deep that walk goes below `/sys/devices`.
pub const DEVICE_WALK_DEPTH: u32 = 16;
/// Most symbolic links followed while resolving one path (the kernel's own limit is 40).
const LINK_LIMIT: u32 = 40;
/// Most bytes a recording keeps in all; reads beyond it are still answered, not recorded.
pub const RECORDING_LIMIT_BYTES: usize = 16 << 20;
/// Most entries (files, links, directories) a recording keeps.
pub const RECORDING_LIMIT_ENTRIES: usize = 20_000;

/// One thing a recording keeps, at a path of the viewed machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordedEntry {
    /// A file and the bytes that were read from it.
    File(Vec<u8>),
    /// A file that was listed or probed but not read: copied as an empty file.
    Placeholder,
    /// A directory.
    Directory,
    /// A symbolic link and its target, as the link says it.
    Link(PathBuf),
}

/// What a recording view has kept.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Every entry, by path on the viewed machine.
    pub entries: BTreeMap<PathBuf, RecordedEntry>,
    /// Bytes of file content kept.
    pub bytes: usize,
    /// Whether something was left out because a limit was reached.
    pub truncated: bool,
    /// Lines kept of the tables narrowed to what discovery used.
    narrowed: BTreeMap<PathBuf, Vec<String>>,
}

impl Recording {
    fn keep(&mut self, path: &Path, entry: RecordedEntry) {
        if let RecordedEntry::File(bytes) = &entry {
            if self.narrowed.contains_key(path) {
                return;
            }
            let previous = match self.entries.get(path) {
                Some(RecordedEntry::File(old)) => old.len(),
                _ => 0,
            };
            if self.bytes - previous + bytes.len() > RECORDING_LIMIT_BYTES {
                self.truncated = true;
                return;
            }
            self.bytes = self.bytes - previous + bytes.len();
            self.entries.insert(path.to_path_buf(), entry);
            return;
        }
        if self.entries.contains_key(path) {
            return;
        }
        if self.entries.len() >= RECORDING_LIMIT_ENTRIES {
            self.truncated = true;
            return;
        }
        self.entries.insert(path.to_path_buf(), entry);
    }
}

/// A machine's `/sys`, `/proc` and `/dev` under a root directory.
#[derive(Debug)]
pub struct HostView {
    root: PathBuf,
    recording: Option<RefCell<Recording>>,
}

impl HostView {
    /// The host iopath runs on (root `/`).
    pub fn live() -> Self {
        HostView::rooted(Path::new("/"))
    }

    /// A machine whose files are under `root` (`root/sys/…`, `root/proc/…`).
    pub fn rooted(root: &Path) -> Self {
        HostView {
            root: root.to_path_buf(),
            recording: None,
        }
    }

    /// This view, keeping a record of everything it reads.
    pub fn recording(mut self) -> Self {
        self.recording = Some(RefCell::new(Recording::default()));
        self
    }

    /// The directory the view is rooted at.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether this is the live host (root `/`).
    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    /// What has been recorded so far (empty when not recording).
    pub fn recorded(&self) -> Recording {
        self.recording
            .as_ref()
            .map(|recording| recording.borrow().clone())
            .unwrap_or_default()
    }

    fn keep(&self, path: &Path, entry: RecordedEntry) {
        if let Some(recording) = &self.recording {
            recording.borrow_mut().keep(path, entry);
        }
    }

    /// Where a path of the viewed machine lies on this host.
    fn host_path(&self, path: &Path) -> PathBuf {
        let relative: PathBuf = path
            .components()
            .filter(|component| matches!(component, Component::Normal(_)))
            .collect();
        self.root.join(relative)
    }

    /// `path` with every symbolic link resolved inside the root; `None` when some component
    /// does not exist or links loop. The result is a path on the viewed machine.
    pub fn resolve(&self, path: &Path) -> Option<PathBuf> {
        let aliased = self.class_block_alias(path);
        let path = aliased.as_deref().unwrap_or(path);
        let mut pending: VecDeque<OsString> = VecDeque::new();
        push_components(&mut pending, path, false);
        let mut resolved = PathBuf::from("/");
        let mut follows = 0;
        while let Some(name) = pending.pop_front() {
            if name == ".." {
                resolved.pop();
                continue;
            }
            let candidate = resolved.join(&name);
            let metadata = fs::symlink_metadata(self.host_path(&candidate)).ok()?;
            if metadata.file_type().is_symlink() {
                follows += 1;
                if follows > LINK_LIMIT {
                    return None;
                }
                let target = fs::read_link(self.host_path(&candidate)).ok()?;
                self.keep(&candidate, RecordedEntry::Link(target.clone()));
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                push_components(&mut pending, &target, true);
            } else {
                resolved = candidate;
            }
        }
        Some(resolved)
    }

    /// Where `/sys/class/block/NAME…` lies in a recorded tree that has no `sys/class/block`
    /// (captures other tools keep): `/sys/block/NAME…` for a disk, `/sys/block/DISK/NAME…` for
    /// a partition, and an NVMe namespace under its controller (`/sys/class/nvme/nvme0/…`) or
    /// its subsystem (`/sys/class/nvme-subsystem/…`). `None` where nothing needs to change
    /// (this host, a tree with `sys/class/block`, another path, a name found nowhere).
    fn class_block_alias(&self, path: &Path) -> Option<PathBuf> {
        if self.is_live() {
            return None;
        }
        let rest = path
            .strip_prefix(crate::discovery::sysfs::CLASS_BLOCK)
            .ok()?;
        let mut components = rest.components();
        let name = components.next()?.as_os_str();
        let below = components.as_path();
        if self.root.join("sys/class/block").join(name).exists() {
            return None;
        }
        let disk = Path::new("/sys/block").join(name);
        if self.is_dir(&disk) {
            return Some(disk.join(below));
        }
        ["/sys/block", "/sys/class/nvme", "/sys/class/nvme-subsystem"]
            .iter()
            .find_map(|parents| {
                let parents = Path::new(parents);
                self.read_dir(parents)
                    .into_iter()
                    .map(|parent| parents.join(parent).join(name))
                    .find(|candidate| self.is_dir(candidate))
                    .map(|found| found.join(below))
            })
            .or_else(|| self.device_block_dir(name).map(|found| found.join(below)))
    }

    /// The directory `…/block/NAME` of a block device somewhere under `/sys/devices`, where
    /// every block device lives in sysfs: a bounded walk (at most [`DEVICE_WALK_LIMIT`]
    /// directories, [`DEVICE_WALK_DEPTH`] deep, links not followed).
    fn device_block_dir(&self, name: &std::ffi::OsStr) -> Option<PathBuf> {
        let mut pending = VecDeque::from([(PathBuf::from("/sys/devices"), 0u32)]);
        let mut visited = 0;
        while let Some((directory, depth)) = pending.pop_front() {
            visited += 1;
            if visited > DEVICE_WALK_LIMIT {
                return None;
            }
            let host = self.host_path(&directory);
            let Ok(entries) = fs::read_dir(&host) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok).take(DIRECTORY_LIMIT) {
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                if !is_dir {
                    continue;
                }
                let child = directory.join(entry.file_name());
                if entry.file_name() == "block" && host.join("block").join(name).is_dir() {
                    return Some(child.join(name));
                }
                if depth < DEVICE_WALK_DEPTH {
                    pending.push_back((child, depth + 1));
                }
            }
        }
        None
    }

    /// Up to `limit` bytes of the file at `path`.
    pub fn read_bytes(&self, path: &Path, limit: usize) -> Option<Vec<u8>> {
        let resolved = self.resolve(path)?;
        let file = fs::File::open(self.host_path(&resolved)).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(limit as u64).read_to_end(&mut bytes).ok()?;
        self.keep(&resolved, RecordedEntry::File(bytes.clone()));
        Some(bytes)
    }

    /// The text of the file at `path` (at most `limit` bytes, invalid UTF-8 replaced).
    pub fn read_text(&self, path: &Path, limit: usize) -> Option<String> {
        self.read_bytes(path, limit)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A small file (a sysfs attribute), whole.
    pub fn read_to_string(&self, path: &Path) -> Option<String> {
        self.read_text(path, ATTRIBUTE_LIMIT_BYTES)
    }

    /// A sysfs attribute, trimmed, with control characters escaped; `None` when absent,
    /// unreadable or empty.
    pub fn attribute(&self, path: &Path) -> Option<String> {
        let text = self.read_to_string(path)?;
        let text = escape_controls(text.trim()).into_owned();
        (!text.is_empty()).then_some(text)
    }

    /// A sysfs attribute parsed as a number.
    pub fn number<T: std::str::FromStr>(&self, path: &Path) -> Option<T> {
        self.attribute(path)?.parse().ok()
    }

    /// Names in the directory at `path`, sorted; empty when it is absent.
    pub fn read_dir(&self, path: &Path) -> Vec<String> {
        self.read_dir_matching(path, "")
    }

    /// Names in the directory at `path` that start with `prefix`, sorted (a recording keeps
    /// only those).
    pub fn read_dir_matching(&self, path: &Path, prefix: &str) -> Vec<String> {
        let Some(resolved) = self.resolve(path) else {
            return Vec::new();
        };
        let directory = self.host_path(&resolved);
        let Ok(list) = fs::read_dir(&directory) else {
            return Vec::new();
        };
        self.keep(&resolved, RecordedEntry::Directory);
        let mut names: Vec<String> = list
            .filter_map(Result::ok)
            .take(DIRECTORY_LIMIT)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(prefix))
            .collect();
        names.sort();
        if self.recording.is_some() {
            for name in &names {
                let child = resolved.join(name);
                let Ok(metadata) = fs::symlink_metadata(directory.join(name)) else {
                    continue;
                };
                let entry = if metadata.file_type().is_symlink() {
                    match fs::read_link(directory.join(name)) {
                        Ok(target) => RecordedEntry::Link(target),
                        Err(_) => continue,
                    }
                } else if metadata.is_dir() {
                    RecordedEntry::Directory
                } else {
                    RecordedEntry::Placeholder
                };
                self.keep(&child, entry);
            }
        }
        names
    }

    /// The target of the symbolic link at `path`, as the link says it (the path's parent is
    /// resolved first).
    pub fn read_link(&self, path: &Path) -> Option<PathBuf> {
        let parent = self.resolve(path.parent()?)?;
        let link = parent.join(path.file_name()?);
        let target = fs::read_link(self.host_path(&link)).ok()?;
        self.keep(&link, RecordedEntry::Link(target.clone()));
        Some(target)
    }

    /// Whether `path` exists (links followed).
    pub fn exists(&self, path: &Path) -> bool {
        self.kind(path).is_some()
    }

    /// Whether `path` is a directory (links followed).
    pub fn is_dir(&self, path: &Path) -> bool {
        self.kind(path) == Some(true)
    }

    /// `Some(true)` for a directory, `Some(false)` for anything else, `None` when absent.
    fn kind(&self, path: &Path) -> Option<bool> {
        let resolved = self.resolve(path)?;
        let metadata = fs::metadata(self.host_path(&resolved)).ok()?;
        let is_dir = metadata.is_dir();
        self.keep(
            &resolved,
            if is_dir {
                RecordedEntry::Directory
            } else {
                RecordedEntry::Placeholder
            },
        );
        Some(is_dir)
    }

    /// Keeps of the file at `path` only the lines of `text` (with the lines earlier calls
    /// kept) instead of all that was read: the part of a large table (the mount table, the
    /// routing table) that discovery used, so that a recording carries no more of the machine
    /// than it needs.
    pub fn narrow_recording(&self, path: &Path, text: &str) {
        let Some(recording) = &self.recording else {
            return;
        };
        let Some(resolved) = self.resolve(path) else {
            return;
        };
        let mut recording = recording.borrow_mut();
        let mut lines = recording.narrowed.remove(&resolved).unwrap_or_default();
        for line in text.lines() {
            if !lines.iter().any(|kept| kept == line) {
                lines.push(line.to_string());
            }
        }
        let mut content = lines.join("\n");
        if !content.is_empty() {
            content.push('\n');
        }
        recording.keep(&resolved, RecordedEntry::File(content.into_bytes()));
        recording.narrowed.insert(resolved, lines);
    }
}

/// Appends the components of `path` to `pending` (at the front when `front`), dropping the
/// root and `.`.
fn push_components(pending: &mut VecDeque<OsString>, path: &Path, front: bool) {
    let names: Vec<OsString> = path
        .components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    if front {
        for name in names.into_iter().rev() {
            pending.push_front(name);
        }
    } else {
        pending.extend(names);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let base = root.path();
        fs::create_dir_all(base.join("sys/devices/pci0000:00/0000:00:01.0/host0/block/sda"))
            .unwrap();
        fs::create_dir_all(base.join("sys/class/block")).unwrap();
        fs::write(
            base.join("sys/devices/pci0000:00/0000:00:01.0/host0/block/sda/size"),
            "1024\n",
        )
        .unwrap();
        fs::write(
            base.join("sys/devices/pci0000:00/0000:00:01.0/vendor"),
            "0x8086\n",
        )
        .unwrap();
        symlink(
            "../../devices/pci0000:00/0000:00:01.0/host0/block/sda",
            base.join("sys/class/block/sda"),
        )
        .unwrap();
        symlink(
            "../../..",
            base.join("sys/devices/pci0000:00/0000:00:01.0/host0/block/sda/device"),
        )
        .unwrap();
        root
    }

    #[test]
    fn relative_links_resolve_inside_the_root() {
        let root = tree();
        let view = HostView::rooted(root.path());
        assert_eq!(
            view.resolve(Path::new("/sys/class/block/sda")).unwrap(),
            Path::new("/sys/devices/pci0000:00/0000:00:01.0/host0/block/sda")
        );
        assert_eq!(
            view.attribute(Path::new("/sys/class/block/sda/size"))
                .as_deref(),
            Some("1024")
        );
        assert_eq!(
            view.attribute(Path::new("/sys/class/block/sda/device/vendor"))
                .as_deref(),
            Some("0x8086")
        );
        assert_eq!(
            view.number::<u64>(Path::new("/sys/class/block/sda/size")),
            Some(1024)
        );
        assert!(view.is_dir(Path::new("/sys/class/block/sda")));
        assert!(!view.exists(Path::new("/sys/class/block/sdb")));
        assert_eq!(view.read_dir(Path::new("/sys/class/block")), ["sda"]);
        assert_eq!(
            view.read_link(Path::new("/sys/class/block/sda")).unwrap(),
            Path::new("../../devices/pci0000:00/0000:00:01.0/host0/block/sda")
        );
    }

    #[test]
    fn links_never_leave_the_root() {
        let root = tree();
        let base = root.path();
        // An absolute link starts again from the root; `..` stops at the root.
        symlink("/sys/devices", base.join("sys/absolute")).unwrap();
        symlink("../../../../../../../../etc", base.join("sys/escape")).unwrap();
        symlink("loop", base.join("sys/loop")).unwrap();
        let view = HostView::rooted(base);
        assert_eq!(
            view.resolve(Path::new("/sys/absolute")).unwrap(),
            Path::new("/sys/devices")
        );
        assert_eq!(view.resolve(Path::new("/sys/escape")), None);
        assert_eq!(view.read_to_string(Path::new("/sys/escape/passwd")), None);
        assert_eq!(view.resolve(Path::new("/sys/loop")), None);
    }

    #[test]
    fn reads_are_bounded_and_controls_escaped() {
        let root = tempfile::tempdir().unwrap();
        fs::write(
            root.path().join("big"),
            vec![b'x'; 3 * ATTRIBUTE_LIMIT_BYTES],
        )
        .unwrap();
        fs::write(root.path().join("model"), "Disk\x1b[2J\n").unwrap();
        let view = HostView::rooted(root.path());
        assert_eq!(
            view.read_to_string(Path::new("/big")).unwrap().len(),
            ATTRIBUTE_LIMIT_BYTES
        );
        assert_eq!(
            view.attribute(Path::new("/model")).as_deref(),
            Some("Disk\\u{1b}[2J")
        );
        assert_eq!(view.read_to_string(Path::new("/")), None);
    }

    #[test]
    fn a_recording_keeps_what_was_read_links_and_listings() {
        let root = tree();
        let view = HostView::rooted(root.path()).recording();
        view.attribute(Path::new("/sys/class/block/sda/device/vendor"));
        view.read_dir(Path::new("/sys/class/block"));
        let recording = view.recorded();
        assert_eq!(
            recording.entries.get(Path::new("/sys/class/block/sda")),
            Some(&RecordedEntry::Link(PathBuf::from(
                "../../devices/pci0000:00/0000:00:01.0/host0/block/sda"
            )))
        );
        assert_eq!(
            recording
                .entries
                .get(Path::new("/sys/devices/pci0000:00/0000:00:01.0/vendor")),
            Some(&RecordedEntry::File(b"0x8086\n".to_vec()))
        );
        assert!(recording.entries.contains_key(Path::new(
            "/sys/devices/pci0000:00/0000:00:01.0/host0/block/sda/device"
        )));
        assert_eq!(
            recording.entries.get(Path::new("/sys/class/block")),
            Some(&RecordedEntry::Directory)
        );
        // Nothing else: the size file was never read.
        assert!(!recording.entries.keys().any(|p| p.ends_with("size")));
        let vendor = Path::new("/sys/devices/pci0000:00/0000:00:01.0/vendor");
        view.narrow_recording(vendor, "0x1af4\n");
        view.narrow_recording(vendor, "second\n0x1af4\n");
        // A later full read does not undo the narrowing.
        view.attribute(vendor);
        assert_eq!(
            view.recorded().entries.get(vendor),
            Some(&RecordedEntry::File(b"0x1af4\nsecond\n".to_vec()))
        );
    }
}
