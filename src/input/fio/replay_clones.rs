//! The logs of a job's clones. fio reads `read_iolog=a:b:c` (`\:` a colon inside a name) as
//! one log per `numjobs` clone: clone `i` replays log `i` modulo the list's length, so 3
//! clones of `a:b` replay `a`, `b`, `a`, and a log listed past the last clone is never read
//! (fio's `get_name_by_idx` at the clone's `subjob_number`). Each clone replays its own log
//! with its own length (and, from a capture, its own queue depth); the job's files are those
//! of all its logs.

use super::collect::JobDefinition;
use super::iolog::{IOLOG_LIMIT, Iolog};
use super::location::Set;
use super::replay_log::read_replay_log;
use crate::gate::read::FileLimit;
use crate::input::job_file::JobFileError;
use crate::text::escape::escape_controls;
use std::path::Path;

/// One log of the list, as read.
#[derive(Clone, Debug)]
pub struct CloneLog {
    /// Its name in `read_iolog`.
    pub name: String,
    /// The log.
    pub log: Iolog,
}

/// The logs `job`'s clones replay: the first `min(listed, clones)` logs of `read_iolog`'s
/// list, read together up to the I/O log limit (a log named twice is read once); clone `i`
/// replays entry `i % len`. Errors name the option and the log.
pub fn clone_logs(
    job: &JobDefinition,
    log_path: &Set<String>,
) -> Result<Vec<CloneLog>, JobFileError> {
    let names = super::values::colon_list(&log_path.value);
    if names.is_empty() {
        return Err(log_path.at.error(format!(
            "job '{}': read_iolog={}: names no log",
            job.section,
            escape_controls(&log_path.value)
        )));
    }
    let clones = job.settings.numjobs.max(1) as usize;
    let mut left = IOLOG_LIMIT.max_bytes;
    let mut logs: Vec<CloneLog> = Vec::new();
    for name in names.into_iter().take(clones) {
        if let Some(read) = logs.iter().find(|read| read.name == name) {
            let log = read.log.clone();
            logs.push(CloneLog { name, log });
            continue;
        }
        let limit = FileLimit {
            what: if left == IOLOG_LIMIT.max_bytes {
                IOLOG_LIMIT.what
            } else {
                "the I/O logs of a job's clones (together)"
            },
            max_bytes: left,
        };
        let size = std::fs::metadata(&name).map_or(0, |meta| meta.len());
        let log = read_replay_log(Path::new(&name), limit).map_err(|error| {
            log_path.at.error(format!(
                "job '{}': read_iolog={}: {error}",
                job.section,
                escape_controls(&name)
            ))
        })?;
        left = left.saturating_sub(size);
        logs.push(CloneLog { name, log });
    }
    Ok(logs)
}

/// The files of all `logs`, each once, in the order the logs add them.
pub fn files_of(logs: &[CloneLog]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for file in logs.iter().flat_map(|entry| &entry.log.files) {
        if !files.contains(file) {
            files.push(file.clone());
        }
    }
    files
}

/// The clones that replay entry `entry` of `count` logs among `clones` clones, shown as a list
/// (`0, 2, 4`, shortened past eight).
pub fn clones_of_entry(entry: usize, count: usize, clones: u32) -> String {
    let all: Vec<String> = (entry..clones as usize)
        .step_by(count.max(1))
        .map(|clone| clone.to_string())
        .collect();
    match all.len() {
        0..=8 => all.join(", "),
        many => format!(
            "{}, … {} ({many} clones)",
            all[..4].join(", "),
            all[many - 1]
        ),
    }
}

/// The note of a job whose list names more logs than it has clones: which are never read.
pub fn unread_note(job: &JobDefinition, log_path: &Set<String>, read: usize) -> Option<String> {
    let names = super::values::colon_list(&log_path.value);
    let unread = names.get(read..).filter(|rest| !rest.is_empty())?;
    let shown: Vec<String> = unread
        .iter()
        .map(|name| escape_controls(name).into_owned())
        .collect();
    Some(format!(
        "job '{}': read_iolog lists {} logs for {read} clone(s) (numjobs): {} not read, as in fio, which gives clone i the i-th log",
        job.section,
        names.len(),
        shown.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_take_the_logs_in_turn_and_long_lists_are_shortened() {
        assert_eq!(clones_of_entry(0, 2, 3), "0, 2");
        assert_eq!(clones_of_entry(1, 2, 3), "1");
        assert_eq!(clones_of_entry(2, 3, 2), "");
        assert_eq!(clones_of_entry(1, 1, 20), "1, 2, 3, 4, … 19 (19 clones)");
    }
}
