//! cgroup v1 blkio throttling for the lab: a cgroup of the test that holds one device's reads
//! (per request or per byte) for the processes put into it, and a way to start a process in it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The cgroup v1 blkio hierarchy, where a process's reads of one device can be throttled.
pub(super) const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// A blkio cgroup of this test, removed when dropped (after the process in it has ended).
pub(super) struct ThrottleGroup {
    pub(super) directory: PathBuf,
}

impl ThrottleGroup {
    /// A cgroup allowing `iops` reads per second of the device `major:minor`.
    pub(super) fn new(device: &str, iops: u32) -> ThrottleGroup {
        ThrottleGroup::limiting("blkio.throttle.read_iops_device", device, u64::from(iops))
    }

    /// A cgroup whose `limit` file (`blkio.throttle.read_bps_device`, …) allows `value` for
    /// the device `major:minor`; named after this process and the device, so two groups of
    /// one test do not meet.
    pub(super) fn limiting(limit: &str, device: &str, value: u64) -> ThrottleGroup {
        let directory = Path::new(BLKIO).join(format!(
            "iopath-lab-{}-{}",
            std::process::id(),
            device.replace(':', "-")
        ));
        std::fs::create_dir_all(&directory).expect("a blkio cgroup");
        std::fs::write(directory.join(limit), format!("{device} {value}")).expect("a blkio limit");
        ThrottleGroup { directory }
    }

    /// The file a process writes its id into to join.
    pub(super) fn procs(&self) -> PathBuf {
        self.directory.join("cgroup.procs")
    }
}

impl Drop for ThrottleGroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.directory);
    }
}

/// Runs a command inside a cgroup: the child writes its own process id into `cgroup.procs`
/// before it executes the program.
pub(super) trait InCgroup {
    fn pre_exec_in_cgroup(&mut self, procs: &Path) -> &mut Self;
}

impl InCgroup for Command {
    fn pre_exec_in_cgroup(&mut self, procs: &Path) -> &mut Self {
        use std::os::unix::process::CommandExt;
        let procs = std::ffi::CString::new(procs.as_os_str().as_encoded_bytes())
            .expect("a path without NUL");
        // SAFETY: the closure runs in the child between fork and exec and only calls
        // async-signal-safe functions (open, write, close) on memory prepared before the fork.
        unsafe {
            self.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // "0" moves the writing process itself.
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                libc::close(fd);
                if written != 1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        }
    }
}
