//! A target as a recorded machine describes it: as it was inspected when recorded, or, for a
//! block device or a file the recording did not inspect, from its sysfs files and mount
//! table (sizes from `size` and `queue/`, where a live inspection would use ioctls). The same
//! description serves a block device of this host whose node cannot be opened
//! ([`unopened_block_device`]).

use super::host_view::HostView;
use super::machine::Machine;
use super::mounts;
use super::sysfs::{DeviceNumber, Sysfs, class_dir};
use crate::result::{TargetInfo, TargetKind};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// The block device `name`, which `target` names, as sysfs describes it: size and block sizes
/// from `size` and `queue/` (where an inspection of the open device would use ioctls),
/// rotational and read-only; its signature is not read (`filesystem` is `None`).
fn block_device(sysfs: Sysfs<'_>, target: &str, name: String) -> TargetInfo {
    let queue = sysfs.queue_facts(&name);
    let logical = queue.logical_block_size.unwrap_or(512);
    TargetInfo {
        path: target.to_string(),
        kind: TargetKind::BlockDevice,
        size_bytes: sysfs.size_bytes(&name).unwrap_or(0),
        logical_block_size_bytes: logical,
        physical_block_size_bytes: queue.physical_block_size.unwrap_or(logical),
        rotational: queue.rotational,
        filesystem: None,
        read_only: sysfs.is_read_only(&name),
        device: Some(name),
        direct_io_alignment_bytes: Some(logical),
        created_by_iopath: false,
        transfer_sizes: None,
        file_session: None,
        created_content: None,
        allocated_bytes_looked: None,
    }
}

/// The block device node `path` names on this host, described from its device number
/// (`st_rdev`: `stat` needs no permission on the node itself) and /sys, without opening it:
/// for where the node cannot be opened (no permission, a container's device rules). The
/// error names `path` and says why: it cannot be looked up, it is not a block device, or
/// /sys does not list its number.
pub fn unopened_block_device(path: &Path) -> Result<TargetInfo, String> {
    let shown = path.display();
    let metadata = std::fs::metadata(path).map_err(|error| format!("{shown}: {error}"))?;
    if !metadata.file_type().is_block_device() {
        return Err(format!("{shown}: not a block device"));
    }
    let number = DeviceNumber::from_dev_t(metadata.rdev());
    let view = HostView::live();
    let sysfs = Sysfs::new(&view);
    let name = sysfs.device_name(number).ok_or_else(|| {
        format!("{shown}: block device {number} is not listed under /sys/dev/block")
    })?;
    Ok(block_device(sysfs, &path.to_string_lossy(), name))
}

/// The target `target` on the recorded `machine`; the error says why there is none.
pub fn recorded_target(machine: &Machine, target: &str) -> Result<TargetInfo, String> {
    if let Some(info) = machine.recorded_target(target) {
        return Ok(info.clone());
    }
    let view = machine.view();
    let sysfs = Sysfs::new(view);
    let path = Path::new(target);
    let device_name = if path.is_absolute() {
        if path.starts_with("/dev") {
            view.resolve(path)
                .and_then(|resolved| {
                    resolved
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                })
                .or_else(|| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        } else {
            None
        }
    } else {
        Some(target.to_string())
    };
    if let Some(name) = device_name.filter(|name| view.is_dir(&class_dir(name))) {
        return Ok(block_device(sysfs, target, name));
    }
    if !path.is_absolute() || path.starts_with("/dev") {
        return Err(format!(
            "{target}: the recorded machine has no block device of that name; give /dev/NAME, an absolute file path or a URL"
        ));
    }
    let directory = path.parent().unwrap_or(Path::new("/"));
    let mount = mounts::read_mounts_in(view).and_then(|all| {
        all.into_iter()
            .filter(|m| directory.starts_with(&m.mount_point))
            .max_by_key(|m| m.mount_point.as_os_str().len())
    });
    let Some(mount) = mount else {
        return Err(format!(
            "{target}: the recorded machine has no such target and no mount table that holds it"
        ));
    };
    let device = (!mount.device.is_anonymous())
        .then(|| sysfs.device_name(mount.device))
        .flatten();
    let queue = device
        .as_deref()
        .map(|name| sysfs.queue_facts(name))
        .unwrap_or_default();
    let logical = queue.logical_block_size.unwrap_or(512);
    // The size of a file the recording did not inspect: what the filesystem allocated to it.
    let size_bytes = machine
        .system()
        .file_state(path, false)
        .allocated_bytes
        .unwrap_or(0);
    Ok(TargetInfo {
        path: target.to_string(),
        kind: TargetKind::File,
        size_bytes,
        logical_block_size_bytes: logical,
        physical_block_size_bytes: queue.physical_block_size.unwrap_or(4096).max(logical),
        rotational: queue.rotational,
        filesystem: Some(mount.filesystem),
        device,
        direct_io_alignment_bytes: None,
        created_by_iopath: false,
        transfer_sizes: None,
        file_session: None,
        created_content: None,
        allocated_bytes_looked: None,
        read_only: false,
    })
}
