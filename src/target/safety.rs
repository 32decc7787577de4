//! Safety rules applied before any write.

use super::{TargetError, TargetInfo};

/// What the user allowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WritePolicy {
    /// `--allow-destructive`: writes to block devices and files iopath did not create.
    pub allow_destructive: bool,
    /// `--force-overwrite-signature`: also when a filesystem or partition table is found.
    pub force_overwrite_signature: bool,
}

/// Refuses a write to `info` that `policy` does not allow.
pub fn check_write_allowed(info: &TargetInfo, policy: WritePolicy) -> Result<(), TargetError> {
    let _ = (info, policy);
    todo!("write safety")
}
