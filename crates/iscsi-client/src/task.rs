//! A finished SCSI command as an RAII [`FinishedTask`]: its status, sense and data-in, freed
//! with `scsi_free_scsi_task` when dropped.

use crate::ffi::{SCSI_STATUS_CHECK_CONDITION, SCSI_STATUS_GOOD, ScsiTask};
use crate::library::Library;
use crate::status::{sense_key_name, status_name};
use libc::c_int;
use std::ffi::CStr;
use std::io;
use std::ptr::NonNull;

/// A finished SCSI command; frees its task when dropped.
pub struct FinishedTask {
    library: &'static Library,
    task: NonNull<ScsiTask>,
}

impl FinishedTask {
    /// Takes ownership of `task`, whose command has finished.
    ///
    /// # Safety
    ///
    /// `task` must come from `library`, its callback must have run, and nothing else may
    /// free it.
    pub unsafe fn new(library: &'static Library, task: NonNull<ScsiTask>) -> Self {
        FinishedTask { library, task }
    }
}

impl FinishedTask {
    /// The SCSI status (`SCSI_STATUS_*`).
    pub fn status(&self) -> c_int {
        // SAFETY: the task is alive until `self` is dropped and libiscsi no longer touches it.
        unsafe { self.task.as_ref().status }
    }

    /// Sense key and additional sense (ASC << 8 | ASCQ) of a CHECK CONDITION.
    pub fn sense(&self) -> (c_int, c_int) {
        // SAFETY: as in `status`.
        let sense = unsafe { self.task.as_ref().sense };
        (sense.key, sense.ascq)
    }

    /// The data-in the target returned (empty for commands without data).
    pub fn data_in(&self) -> &[u8] {
        // SAFETY: as in `status`; `datain` describes a buffer owned by the task.
        let data = unsafe { self.task.as_ref().datain };
        if data.data.is_null() || data.size <= 0 {
            return &[];
        }
        // SAFETY: libiscsi allocated `size` bytes at `data`; they live as long as the task.
        unsafe { std::slice::from_raw_parts(data.data, data.size as usize) }
    }

    /// `self` when the command succeeded; otherwise an error describing `what` failed and
    /// how.
    pub fn check(self, what: &str) -> Result<Self, io::Error> {
        match self.status() {
            SCSI_STATUS_GOOD => Ok(self),
            SCSI_STATUS_CHECK_CONDITION => {
                let (key, ascq) = self.sense();
                Err(io::Error::other(format!(
                    "{what} failed: CHECK CONDITION, {}, {}",
                    sense_key_name(key),
                    describe_additional_sense(self.library, ascq)
                )))
            }
            status => Err(io::Error::other(format!(
                "{what} failed: {}",
                status_name(status)
            ))),
        }
    }

    /// Whether the command failed with a CHECK CONDITION of sense `key`.
    pub fn failed_with(&self, key: c_int) -> bool {
        self.status() == SCSI_STATUS_CHECK_CONDITION && self.sense().0 == key
    }
}

impl Drop for FinishedTask {
    fn drop(&mut self) {
        // SAFETY: the task came from libiscsi, its command has finished, and it is freed once.
        unsafe { (self.library.free_task)(self.task.as_ptr()) }
    }
}

/// libiscsi's description of an additional sense code, with the code.
fn describe_additional_sense(library: &Library, ascq: c_int) -> String {
    // SAFETY: scsi_sense_ascq_str returns a pointer to a static string (or null).
    let text = unsafe { (library.sense_ascq_str)(ascq) };
    let name = if text.is_null() {
        "unknown additional sense".into()
    } else {
        // SAFETY: non-null static NUL-terminated string.
        unsafe { CStr::from_ptr(text) }.to_string_lossy()
    };
    format!("{name} (ASC/ASCQ {ascq:#06x})")
}
