//! The targets of the file-operation engines (`filecreate`, `filestat`, `filedelete`,
//! `dircreate`, `dirstat`, `dirdelete`): paths worked on by name, and the rule that a job
//! removes only what iopath made.
//!
//! As in fio, `filestat` and `filedelete` find their files laid out before the run (iopath
//! creates each missing one, marked as its own), and `dirstat` and `dirdelete` find their
//! directories made before the run; `filecreate` and `dircreate` make theirs in the run.
//! `filedelete` refuses, before any I/O, a file that exists and does not carry iopath's
//! ownership mark ([`crate::targets::test_file::is_created_by_iopath`]); `dirdelete` refuses
//! a directory that exists before the run (a directory carries no mark). Look-ups of existing
//! files and directories are read-only and always allowed.

use super::RunError;
use super::pending_target::PendingTarget;
use super::plan_error::PlanError;
use crate::engine::file_operations::FileOperation;
use crate::targets::TargetSpec;
use crate::targets::test_file::{check_test_file_directory, is_created_by_iopath};
use std::path::Path;

/// The pending target of `spec` for jobs doing `operation`, or `None` when the target is an
/// ordinary one (a file `filestat` or `filedelete` finds, or that iopath lays out for them).
pub(super) fn operated_target(
    spec: &TargetSpec,
    operation: FileOperation,
) -> Result<Option<PendingTarget>, RunError> {
    let path = match spec {
        TargetSpec::Path { path, .. } => path,
        TargetSpec::TempFile { directory, .. } => {
            return Err(PlanError::FileOperationTarget {
                path: directory.clone(),
                engine: operation.name(),
                problem: "is a directory: give the paths of the files to work on (or names in a job file)",
            }
            .into());
        }
        TargetSpec::Network(network) => {
            return Err(PlanError::FileOperationTarget {
                path: network.to_string().into(),
                engine: operation.name(),
                problem: "is a network volume: file operations work on local paths",
            }
            .into());
        }
    };
    let existing = std::fs::symlink_metadata(path).ok();
    let refuse = |problem| {
        Err(PlanError::FileOperationTarget {
            path: path.clone(),
            engine: operation.name(),
            problem,
        }
        .into())
    };
    match (operation, &existing) {
        (FileOperation::CreateDirectory, Some(_)) => {
            refuse("exists already (dircreate makes each directory in the run)")
        }
        (FileOperation::StatDirectory | FileOperation::DeleteDirectory, Some(found))
            if !found.is_dir() =>
        {
            refuse("is not a directory")
        }
        (FileOperation::CreateFile, Some(found)) if !found.is_file() => {
            refuse("exists and is not a regular file")
        }
        (FileOperation::StatFile | FileOperation::DeleteFile, _) => Ok(None),
        (_, existing) => {
            if existing.is_none() {
                check_parent(path)?;
            }
            let directory = operation.on_directories();
            Ok(Some(PendingTarget::Named {
                path: path.clone(),
                existed: existing.is_some(),
                make_directory: directory && existing.is_none() && !operation.creates(),
            }))
        }
    }
}

/// The directory a path to make will be in must exist and be writable.
fn check_parent(path: &Path) -> Result<(), RunError> {
    let parent = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(check_test_file_directory(parent)?)
}

/// Refuses a job that would remove `target` when iopath did not make it: a file that exists
/// without iopath's ownership mark, or a directory that exists before the run.
pub(super) fn check_removal(
    operation: FileOperation,
    target: &PendingTarget,
) -> Result<(), RunError> {
    if !operation.removes() {
        return Ok(());
    }
    let refused = |path: &Path, problem| {
        Err(PlanError::FileOperationTarget {
            path: path.to_path_buf(),
            engine: operation.name(),
            problem,
        }
        .into())
    };
    match target {
        PendingTarget::Existing(handle) if !is_created_by_iopath(handle.path()) => refused(
            handle.path(),
            "refusing to remove a file iopath did not create (it carries no iopath ownership mark)",
        ),
        PendingTarget::Named {
            path,
            existed: true,
            ..
        } => refused(
            path,
            "refusing to remove a directory that existed before the run (dirdelete removes only directories iopath makes)",
        ),
        _ => Ok(()),
    }
}

/// Makes the directory of a [`PendingTarget::Named`] that `dirstat` or `dirdelete` finds made
/// before the run.
pub(super) fn make_directory(path: &Path) -> Result<(), RunError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(path)
        .map_err(|source| {
            RunError::Target(crate::targets::TargetError::Io {
                path: path.to_path_buf(),
                operation: "make the directory",
                source,
            })
        })
}
