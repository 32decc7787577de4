//! Readers of outside input: the workload flags ([`options`], with their value parsers in
//! [`option_values`]), fio job files ([`fio`]), iopath's TOML job files ([`toml_job`], which
//! also writes any plan back), and the named presets ([`presets`]).
//!
//! Every reader works in two stages: raw text first, then the validated types of
//! [`crate::workload`] (a [`crate::workload::Plan`] of [`crate::result::Workload`]s), built
//! before any I/O. Readers sit above the generators: this module imports `workload`, and
//! nothing in `workload` imports it.
//!
//! ```
//! use iopath::input::option_values::queue_depth;
//! assert_eq!(queue_depth("moderate"), Ok(64));
//! assert!(queue_depth("0").is_err());
//! ```

pub mod fio;
pub mod job_file;
pub mod merged_capture;
pub mod option_values;
pub mod options;
pub mod presets;
pub mod toml_job;

/// Reads a job file: iopath's TOML when the name ends in `.toml`, fio's format otherwise.
pub fn load_job_file(
    path: &std::path::Path,
    request: &job_file::JobFileRequest,
) -> Result<job_file::LoadedJob, job_file::JobFileError> {
    if path.extension().is_some_and(|ext| ext == "toml") {
        toml_job::load(path, request)
    } else {
        fio::load(path, request)
    }
}
