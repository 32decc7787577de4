//! Test helpers for the analysis: host facts that need no measurement, and loop and
//! device-mapper devices that clean up after themselves.

use super::HostFacts;
use crate::discovery::HostView;
use crate::discovery::sysfs::{CLASS_BLOCK, class_dir};
use crate::support::{require, skip};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Host facts with a fixed memory copy bandwidth (10 GB/s) and 8 GiB available.
pub fn facts() -> HostFacts {
    HostFacts {
        memory_copy_bytes_per_second: Some(10_000_000_000),
        memory_available_bytes: Some(8 << 30),
    }
}

/// The full path of `name` when installed (PATH or the sbin directories).
pub fn tool(name: &str) -> Option<PathBuf> {
    let path_variable = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_variable)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|directory| directory.join(name))
        .find(|candidate| candidate.is_file())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over a zeroed image on the build directory's filesystem; detached on drop.
pub struct LoopDevice {
    device: PathBuf,
    image: PathBuf,
    _directory: tempfile::TempDir,
}

impl LoopDevice {
    /// Attaches a sparse zeroed image of `size_mib` MiB; `None` (with a note) when not root,
    /// without losetup, or when no loop device can be had.
    pub fn attach(size_mib: u64) -> Option<Self> {
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
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        let directory = if base.is_dir() {
            tempfile::tempdir_in(base).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let image = directory.path().join("image");
        let file = std::fs::File::create(&image).unwrap();
        file.set_len(size_mib << 20).unwrap();
        let output = Command::new(losetup)
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .expect("losetup runs");
        if !output.status.success() {
            skip(format_args!(
                "losetup found no loop device ({})",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
            return None;
        }
        Some(LoopDevice {
            device: PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()),
            image,
            _directory: directory,
        })
    }

    /// `/dev/loopN`.
    pub fn path(&self) -> &Path {
        &self.device
    }

    /// `loopN`.
    pub fn name(&self) -> String {
        self.device
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The image file behind it.
    pub fn backing_file(&self) -> &Path {
        &self.image
    }

    /// A linear device-mapper device over the whole loop device; `None`, after skipping the
    /// calling test, without dmsetup or device-mapper support in the kernel.
    pub fn map_linear(&self) -> Option<MappedDevice> {
        let dmsetup = tool("dmsetup");
        if !require(
            dmsetup.is_some(),
            "dmsetup is not installed (apt-get install dmsetup)",
        ) {
            return None;
        }
        let dmsetup = dmsetup?;
        let view = HostView::live();
        let misc = view
            .read_to_string(Path::new("/proc/misc"))
            .unwrap_or_default();
        if !misc.contains("device-mapper") {
            crate::support::skip::kernel_lacks("device-mapper");
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

impl Drop for LoopDevice {
    fn drop(&mut self) {
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
