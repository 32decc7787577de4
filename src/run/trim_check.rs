//! Whether a job that trims can trim each of its targets, asked of the target itself before any
//! I/O (and only after the checks that allow writing it passed): a block device must discard
//! (and, with io_uring, the kernel must take io_uring's discard command), a file's file system
//! must punch holes, an NBD server must advertise trim support and an iSCSI LUN must accept
//! UNMAP. A target that cannot is refused with [`PlanError::CannotTrim`], which names it and
//! says why.

use super::PlanError;
use crate::engine::io_uring::probe_block_discard;
use crate::engine::trim::{self, LocalTrim};
use crate::engine::volume::NetworkVolumeInfo;
use crate::result::EngineKind;
use crate::targets::TargetHandle;
use crate::targets::network_target::NetworkTarget;
use crate::targets::open::OpenRequest;
use crate::workload::JobPlan;
use std::path::Path;

/// A target as the trim check sees it.
pub(super) enum TrimTarget<'a> {
    /// A probed network volume.
    Network(&'a NetworkTarget, &'a NetworkVolumeInfo),
    /// An existing file or block device, open and checked.
    Existing(&'a TargetHandle),
    /// A file iopath will create at this path.
    Create(&'a Path),
    /// Nothing will be opened (a null-engine job's file).
    Nothing,
}

/// Refuses `job` on `target` when the job trims (its workload, or the trims of verified blocks)
/// and the target cannot, or when trimmed blocks must read back as zeroes
/// (`trim_verify_zero`) and the target does not document that they do.
pub(super) fn check_trims(job: &JobPlan, target: TrimTarget<'_>) -> Result<(), PlanError> {
    let workload = &job.workload;
    let verify_trim = workload
        .verify
        .as_ref()
        .and_then(|verify| verify.trim)
        .filter(|_| workload.writes());
    if !(workload.trims() || verify_trim.is_some()) || workload.engine == EngineKind::Null {
        return Ok(());
    }
    if verify_trim.is_some_and(|trim| trim.verify_zero) {
        check_zeroes_after_trim(&target)?;
    }
    match target {
        TrimTarget::Network(network, volume) if !volume.trim => Err(PlanError::CannotTrim {
            target: network.to_string(),
            reason: match network {
                NetworkTarget::Nbd { .. } => {
                    "the NBD server does not advertise trim support (NBD_FLAG_SEND_TRIM)"
                }
                NetworkTarget::Iscsi { .. } => {
                    "the LUN does not accept UNMAP (no thin provisioning: READ CAPACITY(16) \
                         does not set LBPME, or the Logical Block Provisioning VPD page does \
                         not set LBPU)"
                }
                NetworkTarget::Nfs { .. } => {
                    "neither NFSv3 nor NFSv4.1 has a way to discard a range of a file"
                }
                NetworkTarget::Smb { .. } => {
                    "iopath's SMB client does not discard ranges of a file (not supported yet)"
                }
            }
            .to_string(),
        }),
        TrimTarget::Network(network, volume) => {
            let largest = workload
                .access
                .active_lines()
                .filter(|line| line.trim_percent > 0)
                .map(|line| line.size_bytes)
                .max()
                .unwrap_or(0);
            if volume.max_trim_bytes > 0 && largest > volume.max_trim_bytes {
                return Err(PlanError::CannotTrim {
                    target: network.to_string(),
                    reason: format!(
                        "a trim of {largest} bytes is more than the {} bytes the server takes in one (the Block Limits page's MAXIMUM UNMAP LBA COUNT); use a smaller --bs",
                        volume.max_trim_bytes
                    ),
                });
            }
            Ok(())
        }
        TrimTarget::Nothing => Ok(()),
        TrimTarget::Existing(handle) => {
            let refused = |reason: String| PlanError::CannotTrim {
                target: handle.path().display().to_string(),
                reason,
            };
            let opened = handle
                .reopen(OpenRequest {
                    write: true,
                    direct: false,
                    dsync: false,
                })
                .map_err(|error| refused(format!("cannot open it for writing: {error}")))?;
            let how = LocalTrim::of(&opened.file)
                .map_err(|error| refused(format!("cannot tell what it is: {error}")))?;
            trim::probe(&opened.file, how).map_err(|error| {
                refused(match how {
                    LocalTrim::Discard => {
                        format!("the block device does not discard ({error})")
                    }
                    LocalTrim::PunchHole => {
                        format!("its file system cannot punch holes ({error})")
                    }
                })
            })?;
            if how == LocalTrim::Discard && workload.engine == EngineKind::IoUring {
                probe_block_discard(&opened.file).map_err(|error| {
                    refused(format!(
                        "this kernel's io_uring cannot discard on block devices (Linux 6.12 or \
                         later; {error}); use --engine sync"
                    ))
                })?;
            }
            Ok(())
        }
        TrimTarget::Create(path) => {
            let directory = match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            };
            trim::probe_directory(directory).map_err(|error| PlanError::CannotTrim {
                target: path.display().to_string(),
                reason: format!(
                    "the file system of {} cannot punch holes ({error})",
                    std::fs::canonicalize(directory)
                        .unwrap_or_else(|_| directory.to_path_buf())
                        .display()
                ),
            })
        }
    }
}

/// Refuses a target whose trimmed blocks are not documented to read back as zeroes: a file
/// with a punched hole reads zeroes (fallocate(2)), and so does a loop device, whose discard
/// punches a hole in its backing file; another block device need not (the kernel no longer
/// promises `discard_zeroes_data`), nor an NBD export (the protocol leaves a trimmed range's
/// contents to the server), nor an iSCSI LUN (iopath does not read its LBPRZ bit).
fn check_zeroes_after_trim(target: &TrimTarget<'_>) -> Result<(), PlanError> {
    const ADVICE: &str = "use trim_verify_zero=0 to check trimmed blocks as never written";
    let refused = |target: String, why: &str| PlanError::CannotTrim {
        target,
        reason: format!("trim_verify_zero=1, but {why}; {ADVICE}"),
    };
    match target {
        TrimTarget::Network(network @ NetworkTarget::Nbd { .. }, _) => Err(refused(
            network.to_string(),
            "an NBD server need not read a trimmed range back as zeroes (the protocol leaves it to the server)",
        )),
        TrimTarget::Network(network @ NetworkTarget::Iscsi { .. }, _) => Err(refused(
            network.to_string(),
            "iopath does not read whether the LUN returns zeroes after UNMAP (LBPRZ)",
        )),
        // Neither NFSv3, NFSv4.1 nor iopath's SMB client trims at all: refused as such below.
        TrimTarget::Network(NetworkTarget::Nfs { .. } | NetworkTarget::Smb { .. }, _) => Ok(()),
        TrimTarget::Existing(handle) => {
            use std::os::unix::fs::{FileTypeExt, MetadataExt};
            let path = handle.path();
            let metadata = std::fs::metadata(path)
                .map_err(|error| refused(path.display().to_string(), &error.to_string()))?;
            if metadata.file_type().is_block_device() && libc::major(metadata.rdev()) != LOOP_MAJOR
            {
                return Err(refused(
                    path.display().to_string(),
                    "a block device need not read discarded blocks back as zeroes (only a loop \
                     device, which punches a hole in its backing file, does)",
                ));
            }
            Ok(())
        }
        TrimTarget::Create(_) | TrimTarget::Nothing => Ok(()),
    }
}

/// The major number of loop devices (Linux's `LOOP_MAJOR`).
const LOOP_MAJOR: u32 = 7;
