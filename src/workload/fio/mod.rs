//! fio job files (placeholder).

use super::job_file::{JobFileError, JobFileRequest, LoadedJob};
use std::path::Path;

/// Reads a fio job file into a plan.
pub fn load(path: &Path, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
    let _ = request;
    Err(JobFileError {
        file: path.to_path_buf(),
        line: None,
        message: "fio job files are not supported yet".into(),
    })
}
