//! Real devices and special files for tests: system tools found where root keeps them, named
//! pipes, loop devices over images (zeroed, prepared, or a file the test made) and
//! device-mapper devices over them, each removed on drop even when an assertion fails. Where the machine cannot make one (not root, a
//! tool or a kernel feature missing), the constructor skips the calling test through
//! [`require`] and returns `None`.

use super::{require, skip};
use iopath::discovery::HostView;
use iopath::discovery::sysfs::{CLASS_BLOCK, class_dir, partitions};
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

/// `name` when it is installed; else `None`, after [`require`] skipped the calling test with
/// the package to install.
pub fn required_tool(name: &str, package: &str) -> Option<PathBuf> {
    let found = tool(name);
    if require(
        found.is_some(),
        format_args!("{name} is not installed (apt-get install {package})"),
    ) {
        found
    } else {
        None
    }
}

/// Whether `name` is installed (see [`tool`]).
pub fn has_command(name: &str) -> bool {
    tool(name).is_some()
}

/// Runs fio on `job_file` in `dir` (output discarded) and asserts it succeeded; false (a
/// listed skip, a failure under CI) when fio is not installed.
pub fn fio_ran(dir: &std::path::Path, job_file: &str) -> bool {
    if !crate::support::require(
        has_command("fio"),
        "fio is not installed (apt-get install fio)",
    ) {
        return false;
    }
    let output = std::process::Command::new("fio")
        .current_dir(dir)
        .args(["--output=/dev/null", job_file])
        .output()
        .expect("fio starts");
    assert!(
        output.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    true
}

/// Whether the tests run as root (needed for loop devices and mounts).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
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

/// 512-byte blocks the file system holds for `path` (what a discard or a punched hole frees).
pub fn allocated_blocks(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        .blocks()
}

/// Makes a named pipe (FIFO) at `path`, readable and writable by the owner.
pub fn make_fifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `name` is a valid NUL-terminated path that outlives the call.
    let made = unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {path:?}");
}

/// A temporary directory on the build directory's filesystem (a disk filesystem, where /tmp
/// may be tmpfs), or in /tmp when there is no build directory.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    if base.is_dir() {
        tempfile::tempdir_in(base).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    }
}

/// A loop device; detached on drop (its partitions and any mount of it first).
pub struct LoopDevice {
    device: PathBuf,
    image: PathBuf,
    // Dropped after the device is detached (fields drop after `Drop::drop` runs).
    _directory: Option<tempfile::TempDir>,
}

impl LoopDevice {
    /// Attaches a fresh sparse zeroed image of `size_mib` MiB.
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
        if !loop_devices_available() {
            return None;
        }
        let directory = disk_tempdir();
        let image = directory.path().join("image");
        std::fs::File::create(&image)
            .and_then(|file| file.set_len(size_mib << 20))
            .unwrap();
        prepare(&image);
        let mut device = Self::losetup(&image, partition_scan)?;
        device._directory = Some(directory);
        Some(device)
    }

    /// Attaches `backing`, a file the test made (and removes).
    pub fn attach(backing: &Path) -> Option<Self> {
        if !loop_devices_available() {
            return None;
        }
        Self::losetup(backing, false)
    }

    fn losetup(image: &Path, partition_scan: bool) -> Option<Self> {
        let mut command = Command::new(tool("losetup")?);
        command.arg("--find").arg("--show");
        if partition_scan {
            command.arg("--partscan");
        }
        let output = command.arg(image).output().expect("losetup runs");
        if !output.status.success() {
            skip(format_args!(
                "losetup found no loop device ({})",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
            return None;
        }
        Some(LoopDevice {
            device: PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()),
            image: image.to_path_buf(),
            _directory: None,
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
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The image file behind it.
    pub fn backing_file(&self) -> &Path {
        &self.image
    }

    /// Runs `name args… /dev/loopN`.
    pub fn run(&self, name: &str, args: &[&str]) {
        let mut all: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        all.push(self.device.as_os_str());
        run(name, &all);
    }

    /// Sectors read and written so far, from /sys/block/NAME/stat (the kernel's counters).
    pub fn sectors(&self) -> (u64, u64) {
        let text = HostView::live()
            .attribute(&class_dir(&self.name()).join("stat"))
            .expect("the loop device's counters in sysfs");
        let fields: Vec<u64> = text
            .split_whitespace()
            .map(|f| f.parse().unwrap())
            .collect();
        (fields[2], fields[6])
    }

    /// A linear device-mapper device over the whole loop device; `None`, after skipping the
    /// calling test, without dmsetup or device-mapper support in the kernel.
    pub fn map_linear(&self) -> Option<MappedDevice> {
        let dmsetup = required_tool("dmsetup", "dmsetup")?;
        let view = HostView::live();
        let misc = view
            .read_to_string(Path::new("/proc/misc"))
            .unwrap_or_default();
        if !misc.contains("device-mapper") {
            super::skip::kernel_lacks("device-mapper");
            return None;
        }
        let sectors = view
            .attribute(&class_dir(&self.name()).join("size"))
            .expect("the loop device's size in sysfs");
        let name = format!("iopath-test-{}-{}", std::process::id(), self.name());
        let output = Command::new(&dmsetup)
            .args(["create", &name, "--table"])
            .arg(format!("0 {sectors} linear {} 0", self.device.display()))
            .stdin(Stdio::null())
            .output()
            .expect("dmsetup runs");
        if !output.status.success() {
            skip(format_args!(
                "dmsetup create failed: no device-mapper here? ({})",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            ));
            return None;
        }
        Some(MappedDevice { dmsetup, name })
    }
}

/// Whether this machine can attach loop devices; skips the calling test when not.
fn loop_devices_available() -> bool {
    require(is_root(), "loop devices need root") && required_tool("losetup", "mount").is_some()
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let quiet = |program: PathBuf, args: &[&std::ffi::OsStr]| {
            let _ = Command::new(program)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        };
        let device = self.device.as_os_str();
        if let Some(umount) = tool("umount") {
            quiet(umount, &[device]);
        }
        if !partitions(&self.name()).is_empty()
            && let Some(partx) = tool("partx")
        {
            quiet(partx, &["--delete".as_ref(), device]);
        }
        if let Some(losetup) = tool("losetup") {
            quiet(losetup, &["--detach".as_ref(), device]);
        }
    }
}

/// A device-mapper device; removed on drop (before the loop device under it).
pub struct MappedDevice {
    dmsetup: PathBuf,
    name: String,
}

impl MappedDevice {
    /// `/dev/mapper/NAME`, or `/dev/dm-N` where no udev made the former.
    pub fn path(&self) -> PathBuf {
        let mapper = Path::new("/dev/mapper").join(&self.name);
        if mapper.exists() {
            return mapper;
        }
        let view = HostView::live();
        view.read_dir(Path::new(CLASS_BLOCK))
            .into_iter()
            .find(|entry| {
                view.attribute(&class_dir(entry).join("dm/name"))
                    .is_some_and(|name| name == self.name)
            })
            .map(|entry| Path::new("/dev").join(entry))
            .unwrap_or(mapper)
    }

    /// Its device-mapper name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for MappedDevice {
    fn drop(&mut self) {
        let _ = Command::new(&self.dmsetup)
            .args(["remove", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
