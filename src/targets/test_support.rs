//! Test helpers for the target module: partition tables, zero-filled images, and mounts that
//! clean up after themselves even when an assertion fails; loop devices and system tools come
//! from the tests' shared support (tests/support/devices.rs).

use crate::support::devices::{is_root, required_tool, run, tool};
use crate::support::{require, skip};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `sfdisk --quiet image` with `script` on standard input (`label: dos\n,,L\n`…).
pub fn sfdisk(image: &Path, script: &str) {
    let program = tool("sfdisk").expect("sfdisk is installed");
    let mut child = Command::new(program)
        .arg("--quiet")
        .arg(image)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "sfdisk failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Creates a sparse zero-filled image of `size_mib` MiB at `directory/name`.
pub fn zero_image(directory: &Path, name: &str, size_mib: u64) -> PathBuf {
    let path = directory.join(name);
    let file = File::create(&path).unwrap();
    file.set_len(size_mib << 20).unwrap();
    path
}

/// Serialises tests that touch the process-wide removal registry: one of them empties it, which
/// would remove files other tests are still using.
pub fn registry_test_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A filesystem mounted on a temporary directory; unmounted on drop.
pub struct Mounted {
    mount_point: tempfile::TempDir,
}

impl Mounted {
    /// Mounts `device` on a fresh temporary directory; panics when mount fails.
    pub fn new(device: &Path) -> Self {
        let mount_point = tempfile::tempdir().unwrap();
        run(
            "mount",
            &[device.as_os_str(), mount_point.path().as_os_str()],
        );
        Mounted { mount_point }
    }

    /// Mounts an empty read-only tmpfs; `None` (with a note) when not root or mount fails.
    pub fn read_only_tmpfs() -> Option<Self> {
        Self::virtual_filesystem("tmpfs", "ro,size=1m")
    }

    /// Mounts an empty ramfs (which refuses O_DIRECT); `None` (with a note) when not root or
    /// mount fails.
    pub fn ramfs() -> Option<Self> {
        Self::virtual_filesystem("ramfs", "rw")
    }

    /// Mounts a memory filesystem of `kind` with `options` on a fresh temporary directory.
    fn virtual_filesystem(kind: &str, options: &str) -> Option<Self> {
        if !require(is_root(), format_args!("mounting {kind} needs root")) {
            return None;
        }
        let mount = required_tool("mount", "mount")?;
        let mount_point = tempfile::tempdir().unwrap();
        let status = Command::new(mount)
            .args(["-t", kind, "-o", options, "iopath-test"])
            .arg(mount_point.path())
            .stderr(Stdio::null())
            .status()
            .expect("mount runs");
        if !status.success() {
            skip(format_args!("the kernel refuses to mount {kind} here"));
            return None;
        }
        Some(Mounted { mount_point })
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.mount_point.path()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(umount) = tool("umount") {
            let status = Command::new(&umount)
                .arg(self.mount_point.path())
                .stderr(Stdio::null())
                .status();
            if !status.is_ok_and(|status| status.success()) {
                let _ = Command::new(umount)
                    .arg("--lazy")
                    .arg(self.mount_point.path())
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

/// Formats `device` as ext4; `None` when mkfs.ext4 is missing (the calling test is skipped,
/// or fails under `IOPATH_REQUIRE_ALL`, with the package to install).
pub fn format_ext4(device: &crate::support::devices::LoopDevice) -> Option<()> {
    required_tool("mkfs.ext4", "e2fsprogs")?;
    device.run("mkfs.ext4", &["-q", "-F"]);
    Some(())
}
