//! Native TOML job files (placeholder).

use super::Plan;
use super::job_file::{JobFileError, JobFileRequest, LoadedJob};
use std::path::Path;

/// Reads a TOML job file into a plan.
pub fn load(path: &Path, request: &JobFileRequest) -> Result<LoadedJob, JobFileError> {
    let _ = request;
    Err(JobFileError {
        file: path.to_path_buf(),
        line: None,
        message: "TOML job files are not supported yet".into(),
    })
}

/// Writes a plan as a TOML job file.
pub fn to_toml(plan: &Plan) -> String {
    let _ = plan;
    String::new()
}
