//! A job's `merge_blktrace_file`: the blktrace captures its `read_iolog` lists (`a:b:c`, `\:`
//! a colon inside a name) read, merged ([`super::blktrace_merge`]) with
//! `merge_blktrace_scalars` and `merge_blktrace_iters` (one value per capture each), and the
//! merge read back as the log the job replays — all when the job file is read, before any I/O.
//!
//! The merge is a file iopath writes, so it follows the rule for output files: it is written,
//! before the run, only where no file is ([`crate::input::merged_capture::write_merged`],
//! never through a link); a file already there that holds this very merge byte for byte (the
//! same job run again) is replayed as it is and not written; any other file (or a directory,
//! a device …) is refused.
//! The captures together are read up to the I/O log limit, 256 MiB.

use super::blktrace::{parse_blktrace, resolve_devices};
use super::blktrace_merge::{CaptureToMerge, merge_captures};
use super::collect::JobDefinition;
use super::iolog::{IOLOG_LIMIT, Iolog};
use super::location::Set;
use crate::gate::read::{FileLimit, read_bytes};
use crate::gate::replace::OutputFile;
use crate::input::job_file::JobFileError;
use crate::input::merged_capture::MergedCapture;
use crate::text::escape::escape_controls;
use std::path::{Path, PathBuf};

/// The log a job with `merge_blktrace_file` replays, the merge to write and the note saying
/// so; errors name the option and the capture.
pub fn merged_log(
    job: &JobDefinition,
    log_path: &Set<String>,
    merge_file: &Set<String>,
) -> Result<(Iolog, MergedCapture, String), JobFileError> {
    let name = &job.section;
    let replay = &job.settings.replay;
    let names = super::values::colon_list(&log_path.value);
    let shown_log = escape_controls(&log_path.value);
    if names.is_empty() {
        return Err(log_path.at.error(format!(
            "job '{name}': read_iolog={shown_log}: names no capture to merge"
        )));
    }
    let per_capture = |list: &Option<Set<Vec<u64>>>, option: &str, default: u64| {
        let Some(list) = list else {
            return Ok(vec![default; names.len()]);
        };
        if list.value.len() != names.len() {
            return Err(list.at.error(format!(
                "job '{name}': {option} has {} value(s) for the {} capture(s) read_iolog lists: give one per capture",
                list.value.len(),
                names.len()
            )));
        }
        Ok(list.value.clone())
    };
    let scalars = per_capture(&replay.merge_scalars, "merge_blktrace_scalars", 100)?;
    let iterations = per_capture(&replay.merge_iterations, "merge_blktrace_iters", 1)?;
    let captures = read_captures(&names, name, log_path)?;
    let to_merge: Vec<CaptureToMerge<'_>> = names
        .iter()
        .zip(&captures)
        .zip(scalars.iter().zip(&iterations))
        .map(|((capture, bytes), (scale, passes))| CaptureToMerge {
            name: capture,
            bytes,
            scale_percent: *scale,
            iterations: *passes,
        })
        .collect();
    let merged = merge_captures(&to_merge).map_err(|error| {
        log_path
            .at
            .error(format!("job '{name}': read_iolog: {error}"))
    })?;
    let shown_merge = escape_controls(&merge_file.value);
    let refuse = |problem: String| {
        merge_file.at.error(format!(
            "job '{name}': merge_blktrace_file={shown_merge}: {problem}"
        ))
    };
    let path = PathBuf::from(&merge_file.value);
    let present = already_written(&path, &merged).map_err(refuse)?;
    let mut log = parse_blktrace(&merged)
        .map_err(|error| refuse(format!("the merge cannot be replayed: {error}")))?;
    resolve_devices(&mut log);
    let listed: Vec<String> = to_merge
        .iter()
        .map(|capture| {
            let mut shown = escape_controls(capture.name).into_owned();
            if capture.scale_percent != 100 {
                shown.push_str(&format!(" at {} %", capture.scale_percent));
            }
            if capture.iterations != 1 {
                shown.push_str(&format!(" × {}", capture.iterations));
            }
            shown
        })
        .collect();
    let fate = if present {
        "already holds this merge: replayed as it is, not written"
    } else {
        "written before the run"
    };
    let note = format!(
        "job '{name}': merges {} blktrace capture(s) ({}) into {shown_merge}: {} queued request(s) in time order, {fate}",
        names.len(),
        listed.join(", "),
        merged.len() / super::blktrace::EVENT_BYTES,
    );
    Ok((
        log,
        MergedCapture {
            path,
            bytes: merged,
            present,
        },
        note,
    ))
}

/// The bytes of each capture `names` lists, together at most the I/O log limit.
fn read_captures(
    names: &[String],
    job: &str,
    log_path: &Set<String>,
) -> Result<Vec<Vec<u8>>, JobFileError> {
    let mut left = IOLOG_LIMIT.max_bytes;
    let mut captures = Vec::with_capacity(names.len());
    for capture in names {
        let limit = FileLimit {
            what: "blktrace captures to merge (together)",
            max_bytes: left,
        };
        let bytes = read_bytes(Path::new(capture), limit).map_err(|error| {
            log_path.at.error(format!(
                "job '{job}': read_iolog: cannot read the capture {}: {error}",
                escape_controls(capture)
            ))
        })?;
        left -= bytes.len() as u64;
        captures.push(bytes);
    }
    Ok(captures)
}

/// Whether `path` holds `merged` already (`true`), or is free to write (`false`); any other
/// file there is refused.
fn already_written(path: &Path, merged: &[u8]) -> Result<bool, String> {
    OutputFile::check(path).map_err(|error| error.to_string())?;
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(false);
    }
    let limit = FileLimit {
        what: "merged capture",
        max_bytes: merged.len() as u64,
    };
    match read_bytes(path, limit) {
        Ok(found) if found == merged => Ok(true),
        _ => Err(
            "a file is there that does not hold this merge; iopath writes the merge only where no file is (remove it, or name another)"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::merged_capture::write_merged;
    use crate::support::blktrace::{Event, READ, WRITE, device, encode};

    fn job(directory: &Path, options: &str) -> JobDefinition {
        let at = super::super::location::Location {
            file: directory.join("job.fio"),
            line: 1,
        };
        let mut settings = super::super::settings::JobSettings::fio_defaults(at.clone());
        for option in options.split_whitespace() {
            let (key, value) = option.split_once('=').unwrap();
            let set = |value| Set {
                value,
                at: at.clone(),
            };
            let list = super::super::replay_options::merge_list;
            match key {
                "read_iolog" => settings.replay.log = Some(set(value.to_string())),
                "merge_blktrace_file" => settings.replay.merge_file = Some(set(value.to_string())),
                "merge_blktrace_scalars" => {
                    settings.replay.merge_scalars = Some(Set {
                        value: list(value).unwrap(),
                        at: at.clone(),
                    })
                }
                "merge_blktrace_iters" => {
                    settings.replay.merge_iterations = Some(Set {
                        value: list(value).unwrap(),
                        at: at.clone(),
                    })
                }
                _ => panic!("{key}"),
            }
        }
        JobDefinition {
            section: "merge".into(),
            at,
            settings,
        }
    }

    fn merge(job: &JobDefinition) -> Result<(Iolog, MergedCapture, String), JobFileError> {
        let replay = &job.settings.replay;
        merged_log(
            job,
            replay.log.as_ref().unwrap(),
            replay.merge_file.as_ref().unwrap(),
        )
    }

    #[test]
    fn a_merge_is_written_once_and_a_file_not_holding_it_is_refused() {
        let directory = tempfile::tempdir().unwrap();
        let dir = directory.path();
        let disk = device(8, 0);
        std::fs::write(
            dir.join("a"),
            encode(&[Event::io(10, disk, READ, 1, 512)], false),
        )
        .unwrap();
        std::fs::write(
            dir.join("b:c"),
            encode(&[Event::io(5, disk, WRITE, 2, 512)], true),
        )
        .unwrap();
        let options = format!(
            "read_iolog={0}/a:{0}/b\\:c merge_blktrace_file={0}/merged merge_blktrace_scalars=100:300",
            dir.display()
        );
        let job = job(dir, &options);
        let (log, merged, note) = merge(&job).unwrap();
        assert!(!merged.present);
        assert_eq!(log.ios.len(), 2);
        assert_eq!(
            log.ios[0].offset, 512,
            "the read at 10 ns comes before the write at 15 ns"
        );
        assert!(
            note.contains("merges 2 blktrace capture(s)")
                && note.contains("b:c at 300 %")
                && note.contains("written before the run"),
            "{note}"
        );
        write_merged(&merged).unwrap();
        let (_, again, note) = merge(&job).unwrap();
        assert!(
            again.present && note.contains("already holds this merge"),
            "{note}"
        );
        write_merged(&again).unwrap();
        assert_eq!(std::fs::read(dir.join("merged")).unwrap(), merged.bytes);

        std::fs::write(dir.join("merged"), b"someone else's").unwrap();
        let error = merge(&job).unwrap_err().to_string();
        assert!(
            error.contains("merge_blktrace_file=") && error.contains("does not hold this merge"),
            "{error}"
        );
        assert_eq!(
            std::fs::read(dir.join("merged")).unwrap(),
            b"someone else's"
        );
        let error = write_merged(&merged).unwrap_err();
        assert_eq!(
            error.kind(),
            std::io::ErrorKind::AlreadyExists,
            "never written over"
        );
    }

    #[test]
    fn lists_of_the_wrong_length_and_missing_captures_name_the_option() {
        let directory = tempfile::tempdir().unwrap();
        let dir = directory.path();
        std::fs::write(
            dir.join("a"),
            encode(&[Event::io(10, device(8, 0), READ, 1, 512)], false),
        )
        .unwrap();
        let base = format!(
            "read_iolog={0}/a:{0}/a merge_blktrace_file={0}/m",
            dir.display()
        );
        let error = merge(&job(dir, &format!("{base} merge_blktrace_iters=2"))).unwrap_err();
        assert!(
            error
                .message
                .contains("merge_blktrace_iters has 1 value(s) for the 2 capture(s)"),
            "{error}"
        );
        let error = merge(&job(dir, &format!("{base} merge_blktrace_scalars=1:2:3"))).unwrap_err();
        assert!(
            error
                .message
                .contains("merge_blktrace_scalars has 3 value(s)"),
            "{error}"
        );
        let missing = format!(
            "read_iolog={0}/a:{0}/gone merge_blktrace_file={0}/m",
            dir.display()
        );
        let error = merge(&job(dir, &missing)).unwrap_err();
        assert!(
            error.message.contains("cannot read the capture") && error.message.contains("gone"),
            "{error}"
        );
        assert!(!dir.join("m").exists());
        let into_directory = format!("read_iolog={0}/a merge_blktrace_file={0}", dir.display());
        let error = merge(&job(dir, &into_directory)).unwrap_err();
        assert!(error.message.contains("is a directory"), "{error}");
    }
}
