//! How a fio job's files are opened and its requests submitted: `create_on_open`,
//! `fadvise_hint`, `invalidate`, `force_async`, `serialize_overlap`, the data path of `ioengine=mmap` or
//! `splice` and the look-up call of `filestat` / `dirstat` (`stat_type`) into [`IoHandling`].

use super::collect::JobDefinition;
use super::notes::Notes;
use crate::input::job_file::JobFileError;
use crate::result::{DataPath, EngineKind, IoHandling};

/// The job's [`IoHandling`] on `engine`. A job that reads with `create_on_open=1` reads files
/// that start empty, as in fio: a read past what its writes have laid out gets no data (see
/// docs/fio-compatibility.md, "create_on_open").
pub fn io_handling(
    job: &JobDefinition,
    engine: EngineKind,
    notes: &mut Notes,
) -> Result<IoHandling, JobFileError> {
    let settings = &job.settings;
    let name = &job.section;
    // The file-operation engines make their files in the run whatever `create_on_open` says.
    let local = engine != EngineKind::Null && !engine.is_protocol() && !engine.is_file_operation();
    let create_on_open = settings
        .create_on_open
        .as_ref()
        .is_some_and(|set| set.value && local);
    let force_async_every = match &settings.force_async {
        Some(set) if set.value > 0 && engine != EngineKind::IoUring => {
            notes.add(
                Some(&set.at),
                format!(
                    "job '{name}': force_async has no effect: the job does not run on io_uring"
                ),
            );
            0
        }
        Some(set) => set.value,
        None => 0,
    };
    let data_path = match (engine, settings.engine.value.0.as_str()) {
        (EngineKind::Sync, "mmap") => DataPath::Mmap,
        (EngineKind::Sync, "splice") => DataPath::Splice,
        _ => DataPath::Pread,
    };
    Ok(IoHandling {
        data_path,
        create_on_open,
        access_hint: settings.fadvise_hint,
        invalidate_cache: settings.invalidate && settings.buffered && local,
        force_async_every,
        serialize_overlap: settings.serialize_overlap,
        stat_call: settings.stat_type,
    })
}
