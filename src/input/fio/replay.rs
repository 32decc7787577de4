//! A job that replays an I/O log (fio's `read_iolog` and the `replay_*` options): the log (a
//! fio text log, or a blktrace capture) is read and checked when the job file is, its files
//! become the job's targets (or map onto the targets the job names), and its I/Os become the
//! [`ReplayTrace`]s the job's workers issue.
//!
//! - Files: with `replay_redirect=PATH` every I/O goes to `PATH`; with `filename` (or targets on
//!   the command line) a logged file goes to the target of the same name, else to the targets in
//!   turn by the order the log added its files; otherwise the log's own files are the targets
//!   (a missing one is created as large as the log's furthest I/O on it). A blktrace capture's
//!   files are its devices, named as this machine names them (`/dev/NAME`); a device this
//!   machine lacks needs a target named for it (`filename`, `replay_redirect`).
//! - Offsets: divided by `replay_scale`, then rounded down to `replay_align`; a blktrace
//!   capture's lengths are also rounded up to `replay_align`, as fio does.
//! - Timing: each I/O waits after the one before it as long as the log says (version 3: the
//!   difference of the timestamps; version 2: its `wait` lines; blktrace: the nanoseconds
//!   between queued events, kept in microseconds), scaled by
//!   `replay_time_scale` (percent: 200 replays twice as fast); waits below 100 µs are carried
//!   over to the next I/O rather than slept one by one. `replay_no_stall`: no waits.
//! - `replay_skip=read,write,trim,sync` drops those actions; syncs in a log are not issued (the
//!   note says how many).
//! - The job runs until each of its `numjobs` workers issued its log once, as fio's clones
//!   each replay a whole log (`read_iolog=a:b`: clone `i` the `i`-th, see
//!   [`super::replay_clones`]); `loops` does not repeat it (nor in fio) and `runtime` still
//!   bounds it; trims size no data
//!   buffer, so a log of 2 GiB trims and 4 KiB writes uses 4 KiB buffers.

use super::collect::JobDefinition;
use super::iolog::{Iolog, IologVersion, TraceAction};
use super::location::Set;
use super::notes::Notes;
use super::replay_clones::{CloneLog, clone_logs, clones_of_entry, files_of, unread_note};
pub use super::replay_settings::ReplaySettings;
use crate::input::job_file::{JobFileError, JobFileRequest};
use crate::result::{AccessLine, AccessSpec, Direction, RunLength, WorkerFiles, Workload};
use crate::targets::TargetSpec;
use crate::workload::replay::{CloneTraces, ReplayIo, ReplayTrace};
use std::path::Path;
use std::sync::Arc;

/// Waits shorter than this are carried over to the next I/O, µs.
const SHORTEST_WAIT_US: u64 = 100;

/// Checks the destination of `write_iolog` before any I/O: a path where nothing exists yet (an
/// I/O log is never written over a file, not even one an earlier run wrote: a replay may be
/// reading it), and a job that logs every I/O rather than windows of them.
pub fn check_record(
    record: &Set<String>,
    job: &str,
    logs: &crate::result::log_options::LogOptions,
) -> Result<(), JobFileError> {
    let shown = crate::text::escape::escape_controls(&record.value);
    if std::fs::symlink_metadata(&record.value).is_ok() {
        return Err(record.at.error(format!(
            "job '{job}': write_iolog={shown}: the file exists; iopath writes an I/O log only to a new file (remove it, or name another)"
        )));
    }
    if logs.average_ms > 0
        && (logs.bandwidth.is_some() || logs.latency.is_some() || logs.iops.is_some())
    {
        return Err(record.at.error(format!(
            "job '{job}': write_iolog={shown} with log_avg_msec: iopath records every I/O or windows of them, not both; drop log_avg_msec or write_iolog"
        )));
    }
    Ok(())
}

/// A job that replays logs, ready to map: its definition with the logs' files as its
/// `filename` when it names none (and the logs' extent as its `size` when it gives none, so
/// that a missing file is created large enough), and the logs.
pub struct ReplayJob {
    /// The definition to map.
    pub job: JobDefinition,
    /// The logs of its clones, clone `i` replaying entry `i % len` (one log unless
    /// `read_iolog` lists several and the job has several clones).
    pub logs: Vec<CloneLog>,
    /// The queue depth of each log's clones when each takes its own from its capture (empty:
    /// the job's `iodepth` for all).
    pub clone_depths: Vec<u32>,
    /// Workers replaying a whole log each, side by side (fio's `numjobs`).
    pub clones: u32,
    /// The job's `loops` when above 1: fio does not repeat a replay for it, nor does iopath
    /// (the note says so).
    pub unrepeated_loops: Option<u32>,
    /// The merge of captures to write before the run (`merge_blktrace_file`).
    pub merged: Option<crate::input::merged_capture::MergedCapture>,
}

/// Reads the log `job` replays (`None`: it replays none), merging captures first with
/// `merge_blktrace_file`; errors name the log and the line.
pub fn replay_job(
    job: &JobDefinition,
    request: &JobFileRequest,
    notes: &mut Notes,
) -> Result<Option<ReplayJob>, JobFileError> {
    let settings = &job.settings;
    let Some(log_path) = &settings.replay.log else {
        if let Some(merge) = &settings.replay.merge_file {
            return Err(merge.at.error(format!(
                "job '{}': merge_blktrace_file merges the blktrace captures read_iolog lists, and the job has no read_iolog",
                job.section
            )));
        }
        unused_merge_lists(job, notes);
        return Ok(None);
    };
    let (logs, merged) = match &settings.replay.merge_file {
        Some(merge_file) => {
            let (log, merged, note) = super::replay_merge::merged_log(job, log_path, merge_file)?;
            notes.add(Some(&merge_file.at), note);
            let name = merge_file.value.clone();
            (vec![CloneLog { name, log }], Some(merged))
        }
        None => {
            unused_merge_lists(job, notes);
            let logs = clone_logs(job, log_path)?;
            if let Some(note) = unread_note(job, log_path, logs.len()) {
                notes.add(Some(&log_path.at), note);
            }
            (logs, None)
        }
    };
    let mut job = job.clone();
    let settings = &mut job.settings;
    let mut clone_depths = Vec::new();
    if let Some(depth) = logs.iter().filter_map(|entry| entry.log.queue_depth).max()
        && !settings.iodepth_set
        && request.overrides.qd.is_none()
    {
        if logs.len() > 1 {
            // Each clone at its own capture's depth (a text log's at the job's), as in fio;
            // the job's slots are sized to the deepest.
            clone_depths = logs
                .iter()
                .map(|entry| entry.log.queue_depth.unwrap_or(settings.iodepth))
                .collect();
        }
        settings.iodepth = depth;
        let which = if logs.len() > 1 {
            let each: Vec<String> = clone_depths.iter().map(u32::to_string).collect();
            format!(
                "the captures: each clone at its own log's depth ({})",
                each.join(", ")
            )
        } else {
            "the capture".to_string()
        };
        notes.add(
            Some(&log_path.at),
            format!(
                "job '{}': iodepth={depth} from {which} (its deepest queue between completions, at most {}), as fio sets it when the job sets no iodepth",
                job.section,
                super::blktrace_depth::MAX_DEPTH
            ),
        );
    }
    let own_files = settings.replay.redirect.is_none()
        && settings.filenames.is_none()
        && request.targets.is_empty();
    let unknown_device = logs
        .iter()
        .filter(|entry| entry.log.version == IologVersion::Blktrace)
        .find_map(|entry| {
            let device = entry.log.files.iter().find(|file| !file.starts_with('/'))?;
            Some((&entry.name, device))
        });
    if own_files && let Some((name, device)) = unknown_device {
        return Err(log_path.at.error(format!(
            "job '{}': read_iolog={}: the capture's device {device} is not on this machine (no block device of that number): name what to replay it on with filename= or replay_redirect=",
            job.section,
            crate::text::escape::escape_controls(name)
        )));
    }
    if let Some(redirect) = &settings.replay.redirect {
        settings.filenames = Some(Set {
            value: vec![redirect.value.clone()],
            at: redirect.at.clone(),
        });
    } else if settings.filenames.is_none() && request.targets.is_empty() {
        settings.filenames = Some(Set {
            value: files_of(&logs),
            at: log_path.at.clone(),
        });
    }
    if settings.size.is_none() && settings.filesize.is_none() {
        let furthest = logs
            .iter()
            .flat_map(|entry| &entry.log.ios)
            .filter(|io| io.action != TraceAction::Trim)
            .map(|io| io.offset.saturating_add(u64::from(io.length)))
            .max()
            .unwrap_or(0)
            .max(4096);
        settings.filesize = Some(Set {
            value: furthest,
            at: log_path.at.clone(),
        });
    }
    // A replay runs until its log is issued, not for a time.
    settings.time_based = None;
    let clones = settings.numjobs.max(1);
    let unrepeated_loops = (settings.loops > 1).then_some(settings.loops);
    // The clones are the replay's workers, over the same files; a replay is issued once.
    settings.numjobs = 1;
    settings.loops = 1;
    Ok(Some(ReplayJob {
        job,
        logs,
        clone_depths,
        clones,
        unrepeated_loops,
        merged,
    }))
}

/// Notes `merge_blktrace_scalars` and `merge_blktrace_iters` on a job that merges nothing.
fn unused_merge_lists(job: &JobDefinition, notes: &mut Notes) {
    let replay = &job.settings.replay;
    for (list, option) in [
        (&replay.merge_scalars, "merge_blktrace_scalars"),
        (&replay.merge_iterations, "merge_blktrace_iters"),
    ] {
        if let Some(list) = list {
            notes.add(
                Some(&list.at),
                format!(
                    "job '{}': {option} has no effect without merge_blktrace_file (nor in fio)",
                    job.section
                ),
            );
        }
    }
}

/// Where each of the log's files goes: an index into `targets`.
fn file_targets(log: &Iolog, targets: &[TargetSpec], redirected: bool) -> Vec<u32> {
    let names: Vec<Option<&Path>> = targets
        .iter()
        .map(|target| match target {
            TargetSpec::Path { path, .. } => Some(path.as_path()),
            _ => None,
        })
        .collect();
    let count = targets.len().max(1);
    log.files
        .iter()
        .enumerate()
        .map(|(index, file)| {
            if redirected {
                return 0;
            }
            let by_name = names
                .iter()
                .position(|name| name.is_some_and(|name| name == Path::new(file)));
            by_name.unwrap_or(index % count) as u32
        })
        .collect()
}

/// The trace of `log` as `settings` replay it onto `targets`, and how many syncs it leaves out.
pub fn replay_trace(
    log: &Iolog,
    settings: &ReplaySettings,
    targets: &[TargetSpec],
) -> (ReplayTrace, usize) {
    let files = file_targets(log, targets, settings.redirect.is_some());
    let mut ios = Vec::with_capacity(log.ios.len());
    let mut syncs = 0;
    let mut previous_us = 0u64;
    let mut owed_us = 0u64;
    for logged in &log.ios {
        owed_us = owed_us.saturating_add(logged.at_us.saturating_sub(previous_us));
        previous_us = previous_us.max(logged.at_us);
        let (direction, skipped) = match logged.action {
            TraceAction::Read => (Direction::Read, settings.skip[0]),
            TraceAction::Write => (Direction::Write, settings.skip[1]),
            TraceAction::Trim => (Direction::Trim, settings.skip[2]),
            TraceAction::Sync | TraceAction::DataSync => {
                if !settings.skip[3] {
                    syncs += 1;
                }
                continue;
            }
        };
        if skipped {
            continue;
        }
        let mut offset = logged.offset / settings.scale.max(1);
        let mut length = logged.length;
        if settings.align_bytes > 1 {
            offset &= !(settings.align_bytes - 1);
            if log.version == IologVersion::Blktrace {
                length = u64::from(length)
                    .checked_next_multiple_of(settings.align_bytes)
                    .and_then(|rounded| u32::try_from(rounded).ok())
                    .unwrap_or(length);
            }
        }
        let delay_ns = if settings.no_stall || owed_us < SHORTEST_WAIT_US {
            0
        } else {
            let scaled =
                u128::from(owed_us) * 1000 * 100 / u128::from(settings.time_scale_percent.max(1));
            owed_us = 0;
            u64::try_from(scaled).unwrap_or(u64::MAX)
        };
        if settings.no_stall {
            owed_us = 0;
        }
        ios.push(ReplayIo {
            delay_ns,
            file: files.get(logged.file as usize).copied().unwrap_or(0),
            direction,
            offset,
            length,
        });
    }
    (ReplayTrace { ios }, syncs)
}

/// Makes `workload` the workload of replaying `traces` on `target_count` targets: `clones`
/// workers, each over all of them, directions and the largest data block as the traces have
/// them (weighed by the clones replaying each), run until each worker issued its trace once.
pub fn replay_workload(
    workload: &mut Workload,
    traces: &CloneTraces,
    target_count: usize,
    clones: u32,
) {
    let clones = clones.max(1);
    let logs = traces.traces.len().max(1);
    // How many clones replay each trace: clone i replays trace i % logs.
    let weighed = |index: usize| (clones as usize).saturating_sub(index).div_ceil(logs) as u64;
    let over_clones = |of: &dyn Fn(&ReplayTrace) -> u64| -> u64 {
        traces
            .traces
            .iter()
            .enumerate()
            .map(|(index, trace)| of(trace).saturating_mul(weighed(index)))
            .sum()
    };
    let total = over_clones(&|trace| trace.ios.len() as u64).max(1);
    let count = |direction| over_clones(&|trace| trace.count(direction) as u64);
    let share = |direction| match count(direction) {
        0 => 0,
        issued => (issued * 100 / total).clamp(1, 99) as u8,
    };
    let writes = count(Direction::Write) > 0;
    let mut read_percent = share(Direction::Read);
    let mut trim_percent = share(Direction::Trim);
    if !writes {
        // Whatever is not a read is a trim.
        read_percent = if count(Direction::Trim) == 0 {
            100
        } else {
            read_percent
        };
        trim_percent = 100 - read_percent;
    } else if read_percent + trim_percent >= 100 {
        trim_percent = 99 - read_percent.min(98);
    }
    let size_bytes = match traces
        .traces
        .iter()
        .map(|trace| trace.largest_data_io_bytes())
        .max()
    {
        None | Some(0) => 4096,
        Some(largest) => largest,
    };
    workload.access = AccessSpec {
        lines: vec![AccessLine {
            trim_percent,
            // What the traces' I/Os keep, so that O_DIRECT is checked against them.
            alignment_bytes: traces
                .traces
                .iter()
                .map(|trace| trace.alignment_bytes())
                .min()
                .unwrap_or(4096),
            ..AccessLine::new(size_bytes, 100, read_percent, 100)
        }],
    };
    workload.workers = clones;
    workload.worker_files = WorkerFiles {
        per_worker: target_count.max(1) as u32,
        ..WorkerFiles::default()
    };
    let time_limit_ns = match workload.length {
        RunLength::Bytes { time_limit_ns, .. } => time_limit_ns,
        RunLength::Time { duration_ns } => Some(duration_ns),
    };
    // Every byte each clone's trace issues, in whole blocks: the runner gives each worker its
    // own trace's budget and I/O count (the job's are the sum and the longest).
    workload.length = RunLength::Bytes {
        bytes: over_clones(&|trace| trace.byte_budget(size_bytes)),
        time_limit_ns,
    };
    workload.io_limit = traces
        .traces
        .iter()
        .map(|trace| trace.ios.len() as u64)
        .max();
    workload.offsets.random_map = false;
}

/// What a replayed log is, for notes: `a version 2 I/O log of N I/Os (…) over F file(s)`,
/// with what is left out of it.
fn log_summary(log: &Iolog, trace: &ReplayTrace, syncs: usize) -> String {
    let (what, files) = match log.version {
        IologVersion::V2 => ("a version 2 I/O log", "file(s)"),
        IologVersion::V3 => ("a version 3 I/O log", "file(s)"),
        IologVersion::Blktrace => ("a blktrace capture", "device(s)"),
    };
    let mut summary = format!(
        "{what} of {} I/Os ({} reads, {} writes, {} trims) over {} {files}",
        trace.ios.len(),
        trace.count(Direction::Read),
        trace.count(Direction::Write),
        trace.count(Direction::Trim),
        log.files.len()
    );
    if log.dropped > 0 {
        summary.push_str(&format!(
            "; its {} I/O(s) of 0 bytes are left out, as fio leaves them",
            log.dropped
        ));
    }
    if syncs > 0 {
        summary.push_str(&format!(
            "; its {syncs} sync(s) are not issued (iopath syncs at the end with end_fsync)"
        ));
    }
    summary
}

/// The note a job replaying one log gets.
pub fn replay_note(job: &str, log: &Iolog, trace: &ReplayTrace, syncs: usize) -> String {
    format!("job '{job}': replays {}", log_summary(log, trace, syncs))
}

/// Checks, maps and notes the replay of `replay` into `mapped` (`targets`: the job's): the
/// trace of each clone's log.
pub fn apply(
    replay: &ReplayJob,
    workload: &mut Workload,
    targets: &[TargetSpec],
    notes: &mut Notes,
) -> CloneTraces {
    let settings = &replay.job.settings.replay;
    let job = &replay.job.section;
    let mut traces = CloneTraces {
        queue_depths: replay.clone_depths.clone(),
        ..CloneTraces::default()
    };
    let mut summaries = Vec::with_capacity(replay.logs.len());
    for entry in &replay.logs {
        let (trace, syncs) = replay_trace(&entry.log, settings, targets);
        summaries.push(log_summary(&entry.log, &trace, syncs));
        traces.traces.push(Arc::new(trace));
    }
    replay_workload(workload, &traces, targets.len(), replay.clones);
    let mut note = match summaries.as_slice() {
        [one] => {
            let mut note = format!("job '{job}': replays {one}");
            if replay.clones > 1 {
                note.push_str(&format!(
                    "; each of its {} clones (numjobs) replays the whole log, as in fio",
                    replay.clones
                ));
            }
            note
        }
        several => {
            let each: Vec<String> = replay
                .logs
                .iter()
                .zip(several)
                .enumerate()
                .map(|(index, (entry, summary))| {
                    let clones = clones_of_entry(index, several.len(), replay.clones);
                    let noun = if clones.contains(',') {
                        "clones"
                    } else {
                        "clone"
                    };
                    format!(
                        "{noun} {clones}: {} ({summary})",
                        crate::text::escape::escape_controls(&entry.name)
                    )
                })
                .collect();
            format!(
                "job '{job}': its {} clones (numjobs) replay the logs read_iolog lists in turn, clone i the i-th, as in fio: {}",
                replay.clones,
                each.join("; ")
            )
        }
    };
    if let Some(loops) = replay.unrepeated_loops {
        note.push_str(&format!(
            "; loops={loops} does not repeat a replay (nor in fio): it is issued once"
        ));
    }
    notes.add(settings.log.as_ref().map(|log| &log.at), note);
    traces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::fio::iolog::parse_iolog;
    use std::path::PathBuf;

    fn target(path: &str) -> TargetSpec {
        TargetSpec::Path {
            path: PathBuf::from(path),
            create_size: None,
        }
    }

    #[test]
    fn files_go_to_targets_of_their_name_else_in_turn() {
        let log = parse_iolog(
            "fio version 2 iolog\n/b add\n/x add\n/b open\n/x open\n/b read 0 512\n/x write 512 512\n",
        )
        .unwrap();
        let settings = ReplaySettings::default();
        let (trace, _) = replay_trace(&log, &settings, &[target("/a"), target("/b")]);
        let files: Vec<u32> = trace.ios.iter().map(|io| io.file).collect();
        assert_eq!(files, [1, 1]);
        let redirected = ReplaySettings {
            redirect: Some(Set {
                value: "/a".into(),
                at: super::super::location::Location {
                    file: PathBuf::from("job.fio"),
                    line: 1,
                },
            }),
            ..ReplaySettings::default()
        };
        let (trace, _) = replay_trace(&log, &redirected, &[target("/a")]);
        assert!(trace.ios.iter().all(|io| io.file == 0));
    }

    #[test]
    fn offsets_scale_then_align_and_waits_scale_with_time() {
        let log = parse_iolog(
            "fio version 3 iolog\n0 /a add\n0 /a open\n1000 /a write 10000 512\n1050 /a read 20480 512\n1300 /a sync 0 0\n3000 /a trim 4096 1048576\n",
        )
        .unwrap();
        let settings = ReplaySettings {
            scale: 2,
            align_bytes: 4096,
            time_scale_percent: 200,
            ..ReplaySettings::default()
        };
        let (trace, syncs) = replay_trace(&log, &settings, &[target("/a")]);
        assert_eq!(syncs, 1);
        let shapes: Vec<_> = trace
            .ios
            .iter()
            .map(|io| (io.delay_ns, io.direction, io.offset))
            .collect();
        // 50 µs after the write is owed to the trim, which waits 2000 µs in all, at twice the pace.
        assert_eq!(
            shapes,
            [
                (500_000, Direction::Write, 4096),
                (0, Direction::Read, 8192),
                (1_000_000, Direction::Trim, 0),
            ]
        );
        let stalled = ReplaySettings {
            no_stall: true,
            skip: [true, false, false, false],
            ..ReplaySettings::default()
        };
        let (trace, _) = replay_trace(&log, &stalled, &[target("/a")]);
        assert!(trace.ios.iter().all(|io| io.delay_ns == 0));
        assert_eq!(trace.count(Direction::Read), 0);
    }

    #[test]
    fn a_blktrace_capture_rounds_lengths_up_to_the_alignment_and_paces_by_its_nanoseconds() {
        use crate::support::blktrace::{READ, WRITE, device, encode};
        let io = crate::support::blktrace::Event::io;
        let disk = device(8, 0);
        let events = [
            io(7_000_000, disk, WRITE, 3, 1000),
            io(7_000_050, disk, READ, 9, 512),
            io(9_000_050, disk, WRITE, 0, 0),
            io(10_000_050, disk, READ, 17, 4096),
        ];
        let log = crate::input::fio::blktrace::parse_blktrace(&encode(&events, false)).unwrap();
        let settings = ReplaySettings {
            align_bytes: 4096,
            time_scale_percent: 50,
            ..ReplaySettings::default()
        };
        let (trace, _) = replay_trace(&log, &settings, &[target("/dev/sda")]);
        let shapes: Vec<_> = trace
            .ios
            .iter()
            .map(|io| (io.delay_ns, io.direction, io.offset, io.length))
            .collect();
        // The 3 ms after the read (the write of 0 bytes is left out) at half the pace.
        assert_eq!(
            shapes,
            [
                (0, Direction::Write, 0, 4096),
                (0, Direction::Read, 4096, 4096),
                (6_000_000, Direction::Read, 8192, 4096),
            ]
        );
        let note = replay_note("j", &log, &trace, 0);
        assert!(
            note.contains("replays a blktrace capture of 3 I/Os")
                && note.contains("over 1 device(s)")
                && note.contains("its 1 I/O(s) of 0 bytes are left out"),
            "{note}"
        );
    }

    #[test]
    fn a_trace_of_huge_trims_sizes_its_block_by_its_writes() {
        let log = parse_iolog(
            "fio version 3 iolog\n30 /dev/null add\n31 /dev/null open\n40 /dev/null trim 0 2147483648\n50 /dev/null write 0 4096\n",
        )
        .unwrap();
        let (trace, _) = replay_trace(&log, &ReplaySettings::default(), &[target("/dev/null")]);
        let mut workload = crate::workload::suite::base_workload();
        replay_workload(&mut workload, &CloneTraces::one(trace.clone()), 1, 1);
        assert_eq!(workload.access.max_size_bytes(), 4096);
        assert_eq!(
            workload.access.lines[0].alignment_bytes, 4096,
            "the alignment its I/Os keep"
        );
        assert!(workload.trims() && workload.writes() && !workload.reads());
        assert_eq!(workload.io_limit, Some(2));
    }

    #[test]
    fn the_byte_budget_of_a_replay_holds_every_io_in_whole_blocks() {
        let log =
            parse_iolog("fio version 2 iolog\n/a add\n/a open\n/a write 0 8192\n/a read 0 4096\n")
                .unwrap();
        let (trace, _) = replay_trace(&log, &ReplaySettings::default(), &[target("/a")]);
        let mut workload = crate::workload::suite::base_workload();
        replay_workload(&mut workload, &CloneTraces::one(trace.clone()), 1, 1);
        let RunLength::Bytes { bytes, .. } = workload.length else {
            panic!("a replay runs to a byte count");
        };
        assert_eq!(
            bytes,
            2 * 8192,
            "12 KiB in 8 KiB blocks: two blocks, not one"
        );
        replay_workload(&mut workload, &CloneTraces::one(trace), 1, 3);
        assert_eq!(workload.workers, 3, "a worker per clone");
        assert_eq!(
            workload.io_limit,
            Some(2),
            "each worker issues the log once"
        );
        assert!(matches!(workload.length, RunLength::Bytes { bytes, .. } if bytes == 3 * 2 * 8192));
    }
}
