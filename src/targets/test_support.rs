//! Test helpers for the target module: finding system tools, zero-filled images, and loop
//! devices and mounts that clean up after themselves even when an assertion fails.

use crate::support::{require, skip};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The full path of `name` when it is installed (on PATH, or in the sbin directories that a
/// non-login root shell may leave off PATH).
pub fn tool(name: &str) -> Option<PathBuf> {
    let path_variable = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_variable)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|directory| directory.join(name))
        .find(|candidate| candidate.is_file())
}

/// Runs `name args…`, panicking with its output when it cannot be run or fails.
pub fn run(name: &str, args: &[&std::ffi::OsStr]) -> String {
    let program = tool(name).unwrap_or_else(|| panic!("{name} is not installed"));
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {name}: {error}"));
    assert!(
        output.status.success(),
        "{name} {args:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

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

/// Whether the tests run as root (needed for loop devices and mounts).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over an image in its own temporary directory; detached on drop.
pub struct LoopDevice {
    device: PathBuf,
    // Dropped after the device is detached (fields drop after `Drop::drop` runs).
    _directory: tempfile::TempDir,
}

impl LoopDevice {
    /// Attaches a fresh zeroed image of `size_mib` MiB; `None` (with a note) when not root or
    /// losetup is missing or no loop device can be had.
    pub fn attach_zeroed(size_mib: u64) -> Option<Self> {
        Self::attach_with(size_mib, |_| {}, false)
    }

    /// Like [`LoopDevice::attach_zeroed`], letting `prepare` write to the image first and
    /// asking the kernel to scan it for partitions when `partition_scan`.
    pub fn attach_with(
        size_mib: u64,
        prepare: impl FnOnce(&Path),
        partition_scan: bool,
    ) -> Option<Self> {
        if !require(is_root(), "loop devices need root") {
            return None;
        }
        let losetup = tool("losetup");
        if !require(
            losetup.is_some(),
            "losetup is not installed (apt-get install mount)",
        ) {
            return None;
        }
        let losetup = losetup?;
        let directory = tempfile::tempdir().unwrap();
        let image = zero_image(directory.path(), "image", size_mib);
        prepare(&image);
        let mut command = Command::new(losetup);
        command.arg("--find").arg("--show");
        if partition_scan {
            command.arg("--partscan");
        }
        let output = command.arg(&image).output().unwrap();
        if !output.status.success() {
            skip(format_args!(
                "losetup found no loop device ({})",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
            return None;
        }
        let device = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        Some(LoopDevice {
            device,
            _directory: directory,
        })
    }

    /// The loop device, `/dev/loopN`.
    pub fn path(&self) -> &Path {
        &self.device
    }

    /// The kernel name, `loopN`.
    pub fn name(&self) -> String {
        self.device
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// Runs `name args… /dev/loopN`.
    pub fn run(&self, name: &str, args: &[&str]) {
        let mut all: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        all.push(self.device.as_os_str());
        run(name, &all);
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let has_partitions = !crate::discovery::sysfs::partitions(&self.name()).is_empty();
        if has_partitions && let Some(partx) = tool("partx") {
            let _ = Command::new(partx)
                .arg("--delete")
                .arg(&self.device)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        if let Some(losetup) = tool("losetup") {
            let _ = Command::new(losetup)
                .arg("--detach")
                .arg(&self.device)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
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
        let mount = tool("mount");
        if !require(
            mount.is_some(),
            "mount is not installed (apt-get install mount)",
        ) {
            return None;
        }
        let mount = mount?;
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
