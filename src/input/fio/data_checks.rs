//! The write-data settings of one job, checked once the whole section is read: conflicts are
//! refused, options that change nothing get a note.

use super::collect::JobDefinition;
use super::notes::Notes;
use crate::input::job_file::JobFileError;
use crate::result::{DedupeMode, WriteData};

/// The data settings of `job`, checked, with notes where an option has no effect.
pub fn job_write_data(job: &JobDefinition, notes: &mut Notes) -> Result<WriteData, JobFileError> {
    let settings = &job.settings;
    let data = &settings.write_data;
    let name = &job.section;
    let at = settings.write_data_at.as_ref().unwrap_or(&job.at);
    if data.is_default() {
        return Ok(WriteData::default());
    }
    if !settings.writes() {
        notes.add(
            Some(at),
            format!("job '{name}': buffer options have no effect: the job only reads"),
        );
        return Ok(WriteData::default());
    }
    if let Some(conflict) = data.conflict() {
        return Err(at.error(format!("job '{name}': {conflict}")));
    }
    if data.compress_chunk_bytes.is_some() && data.compress_percent.is_none_or(|p| p == 100) {
        notes.add(
            Some(at),
            format!("job '{name}': buffer_compress_chunk has no effect without a buffer_compress_percentage below 100 (as in fio)"),
        );
    }
    if data.dedupe_percent.is_none()
        && (data.dedupe_mode != DedupeMode::Repeat || data.dedupe_working_set_percent.is_some())
    {
        notes.add(
            Some(at),
            format!("job '{name}': dedupe_mode and dedupe_working_set_percentage have no effect without dedupe_percentage (as in fio)"),
        );
    }
    if data.compress_percent == Some(0) && data.dedupe_percent.is_none() {
        notes.add(
            Some(at),
            format!("job '{name}': buffer_compress_percentage=0: fio fills each buffer once with random data and does not scramble it, so writes of one buffer are identical blocks; iopath does the same"),
        );
    }
    Ok(data.clone())
}
