//! One fio job as an iopath workload: engine and depth, access lines, distribution, region,
//! run length, rates, think time, sync, seed; then the command line's overrides on top.
//!
//! Run length: `time_based` + `runtime` is a timed run (after `ramp_time`); otherwise the job
//! transfers its bytes — `io_size`, or `size`, or its existing files' sizes, × `loops`, for each
//! clone — with `runtime` as a time limit. fio's rates are per clone and per direction; iopath
//! caps the job's total, at the rate that holds every capped direction to its cap.

use super::collect::JobDefinition;
use super::extended_mapping::{self, MappingContext, Region};
use super::files::{JobFiles, existing_bytes, job_files};
use super::lines::{access_spec, direction_shares, mean_sizes};
use super::notes::Notes;
use super::settings::{JobSettings, READ, WRITE};
use crate::input::job_file::{JobFileError, JobFileRequest};
use crate::result::{EngineKind, FileService, RunLength, WorkerFiles, Workload};
use crate::targets::TargetSpec;
use crate::workload::suite::{DEFAULT_SEED, base_workload};

/// A job mapped to a workload, with the files it runs on.
#[derive(Clone, Debug)]
pub struct MappedJob {
    /// The workload, overrides applied.
    pub workload: Workload,
    /// Its targets (one per file).
    pub targets: Vec<TargetSpec>,
    /// The traces its clones replay (fio's `read_iolog`), their files mapped to `targets`.
    pub replay: Option<crate::workload::replay::CloneTraces>,
    /// The merge of blktrace captures to write before the run (`merge_blktrace_file`).
    pub merged_capture: Option<crate::input::merged_capture::MergedCapture>,
}

/// Maps `job`; errors point at the line to change.
pub fn map_job(
    job: &JobDefinition,
    request: &JobFileRequest,
    context: &MappingContext<'_>,
    notes: &mut Notes,
) -> Result<MappedJob, JobFileError> {
    let Some(mut replay) = super::replay::replay_job(job, request, notes)? else {
        return map_generated_job(job, request, context, notes);
    };
    let mut mapped = map_generated_job(&replay.job, request, context, notes)?;
    mapped.merged_capture = replay.merged.take();
    mapped.replay = Some(super::replay::apply(
        &replay,
        &mut mapped.workload,
        &mapped.targets,
        notes,
    ));
    Ok(mapped)
}

/// Maps a job that generates its I/O (or a replayed job before its trace is applied).
fn map_generated_job(
    job: &JobDefinition,
    request: &JobFileRequest,
    context: &MappingContext<'_>,
    notes: &mut Notes,
) -> Result<MappedJob, JobFileError> {
    let settings = &job.settings;
    let name = &job.section;
    let overrides = &request.overrides;
    let buffered_aio =
        overrides.engine.is_none() && settings.buffered && settings.engine.value.0 == "libaio";
    let job_engine = if buffered_aio {
        // Linux AIO does a buffered read or write inside io_submit, before it returns: fio's
        // libaio has one I/O at a time in flight on a file opened without O_DIRECT (the
        // engine's note says so).
        EngineKind::Sync
    } else {
        settings.engine.value.1
    };
    let engine = overrides.engine.unwrap_or(job_engine);
    let files = job_files(job, request, engine, notes)?;
    let region = extended_mapping::region(job, &files, request, notes)?;
    let mut workload = base_workload();
    workload.engine = job_engine;
    workload.queue_depth = settings.iodepth;
    if engine == EngineKind::Sync && settings.iodepth > 1 && !buffered_aio {
        workload.queue_depth = 1;
        let engine_name = match overrides.engine {
            Some(kind) => kind.name(),
            None => settings.engine.value.0.as_str(),
        };
        notes.add(
            Some(&settings.engine.at),
            format!(
                "job '{name}': iodepth={} with a sync engine ({engine_name}): fio keeps one I/O in flight per clone whatever iodepth says, and so does iopath (use ioengine=io_uring for depth)",
                settings.iodepth
            ),
        );
    } else if buffered_aio {
        workload.queue_depth = 1;
    }
    workload.workers = files.workers_per_set;
    workload.worker_files = worker_files(job, &files, notes);
    workload.access = access_spec(settings);
    workload.distribution = distribution(job, notes);
    workload.region_offset_bytes = region.offset_bytes;
    workload.region_size_bytes = region.size_bytes;
    workload.offsets = extended_mapping::offset_rules(job, &region, notes);
    workload.controls = extended_mapping::controls(job, context, notes)?;
    workload.ramp_ns = settings.ramp.as_ref().map_or(0, |ramp| ramp.value);
    workload.start_delay_ns = settings.start_delay_ns;
    workload.buffered = settings.buffered;
    workload.sync_writes = settings.sync_writes && settings.writes();
    workload.fsync_every_writes = settings.fsync_every_writes.filter(|_| settings.writes());
    let modifies = settings.writes() || settings.pattern.trims();
    workload.fsync_at_end = settings.end_fsync.is_some() && modifies;
    if let Some(at) = &settings.end_fsync
        && !modifies
    {
        notes.add(
            Some(at),
            format!("job '{name}': end_fsync has no effect: the job only reads"),
        );
    }
    workload.write_data = super::data_checks::job_write_data(job, notes)?;
    workload.think_time_ns = settings.think_time_ns;
    workload.think_time_blocks = settings.think_time_blocks.max(1);
    workload.error_policy = crate::result::ErrorPolicy {
        error_ends: extended_mapping::error_scope(job),
        ..settings.error_policy.clone()
    };
    workload.handling = super::handling::io_handling(job, engine, notes)?;
    workload.file_setup = crate::result::FileSetup {
        overwrite: settings.overwrite,
        preallocation: settings.fallocate,
        first_job_lays_out: true,
    };
    workload.verify = settings
        .verify
        .settings()
        .map(|verify| fitted_interval(verify, &workload.access));
    workload.seed = seed(job, notes);
    workload.io_limit = io_limit(job, &files, notes);
    let clones = files.clones as f64;
    workload.rate_bytes_per_second = total_rate(settings, settings.rate, true, notes, name)
        .map(|rate| (rate * clones).round().max(1.0) as u64);
    workload.rate_iops = total_rate(settings, settings.rate_iops, false, notes, name)
        .map(|rate| (rate * clones).round().max(1.0) as u64);
    sequential_notes(job, &files, notes);
    if let Some(at) = &settings.read_mix_at
        && !(settings.pattern.reads() && settings.pattern.writes())
    {
        notes.add(
            Some(at),
            format!(
                "job '{name}': rwmixread/rwmixwrite has no effect: rw names a single direction (as in fio)"
            ),
        );
    }
    let timed = overrides.duration.is_some() || overrides.bytes.is_some();
    workload.length = if timed {
        RunLength::Time {
            duration_ns: overrides.duration.unwrap_or(1_000_000_000),
        }
    } else {
        run_length(job, &files, &region, request, notes)?
    };
    let job_error = |message: String| job.at.error(format!("job '{name}': {message}"));
    let mut workload = overrides
        .apply(&workload)
        .map_err(|error| job_error(error.to_string()))?;
    for note in overrides.notes(&workload) {
        notes.add(None, note);
    }
    if engine == EngineKind::Null {
        workload.region_size_bytes = None;
    }
    if matches!(workload.length, RunLength::Bytes { .. }) && workload.ramp_ns > 0 {
        let at = settings.ramp.as_ref().map_or(&job.at, |ramp| &ramp.at);
        notes.add(
            Some(at),
            format!("job '{name}': ramp_time in a job that runs to a byte count: the ramp's I/O counts towards the bytes but not in the results, as in fio"),
        );
    }
    Ok(MappedJob {
        workload,
        targets: files.targets,
        replay: None,
        merged_capture: None,
    })
}

/// The files each worker moves over and how it picks the next (`file_service_type`,
/// `openfiles`), noted where they cannot matter.
fn worker_files(job: &JobDefinition, files: &JobFiles, notes: &mut Notes) -> WorkerFiles {
    let settings = &job.settings;
    let per_worker = files.files_per_worker.max(1);
    if per_worker == 1 {
        for at in [
            settings.file_service.as_ref().map(|set| &set.at),
            settings.open_files.as_ref().map(|set| &set.at),
        ]
        .into_iter()
        .flatten()
        {
            notes.add(
                Some(at),
                format!(
                    "job '{}': each worker has one file here, so there is no file to choose (as in fio)",
                    job.section
                ),
            );
        }
        return WorkerFiles::default();
    }
    WorkerFiles {
        per_worker,
        service: settings
            .file_service
            .as_ref()
            .map_or_else(FileService::default, |set| set.value.clone()),
        open_files: settings
            .open_files
            .as_ref()
            .map(|set| set.value)
            .filter(|&open| open < per_worker),
    }
}

/// Where iopath's sequential I/O differs from fio's.
fn sequential_notes(job: &JobDefinition, files: &JobFiles, notes: &mut Notes) {
    let settings = &job.settings;
    let name = &job.section;
    if let Some(at) = &settings.random_percent_at
        && !settings.pattern.random()
    {
        notes.add(
            Some(at),
            format!(
                "job '{name}': percentage_random has no effect on a sequential pattern (as in fio)"
            ),
        );
    }
    let shares = direction_shares(settings);
    let random_everywhere = settings.pattern.random()
        && super::lines::issued_directions(settings)
            .into_iter()
            .all(|direction| settings.random_percent[direction] == 100);
    if random_everywhere {
        return;
    }
    if shares[READ] > 0 && shares[WRITE] > 0 {
        notes.add(
            Some(&job.at),
            format!("job '{name}': sequential reads and writes share one position in iopath (fio keeps one per direction)"),
        );
    }
    if files.workers_per_set > 1 {
        notes.add(
            Some(&job.at),
            format!(
                "job '{name}': {} workers share each file: iopath starts each one's sequential I/O at its own part of the region, where fio's clones all start at its beginning",
                files.workers_per_set
            ),
        );
    }
}

/// The distribution, noted when it cannot matter.
fn distribution(job: &JobDefinition, notes: &mut Notes) -> crate::result::OffsetDistribution {
    match &job.settings.distribution {
        Some(set) if !job.settings.pattern.random() => {
            notes.add(
                Some(&set.at),
                format!(
                    "job '{}': random_distribution has no effect on a sequential pattern (as in fio)",
                    job.section
                ),
            );
            Default::default()
        }
        Some(set) => match &set.value {
            crate::result::OffsetDistribution::Sequence { blocks, .. } => {
                crate::result::OffsetDistribution::Sequence {
                    blocks: blocks.clone(),
                    stride: job.settings.extended.sequence_stride,
                }
            }
            other => other.clone(),
        },
        None => Default::default(),
    }
}

/// `randseed`, or fio's fixed seed (`randrepeat=1`), or one drawn now.
fn seed(job: &JobDefinition, notes: &mut Notes) -> u64 {
    let settings = &job.settings;
    if let Some(seed) = settings.randseed {
        return seed;
    }
    if settings.randrepeat {
        return DEFAULT_SEED;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let seed = nanos ^ (u64::from(std::process::id()) << 32);
    notes.add(
        Some(&job.at),
        format!(
            "job '{}': randrepeat=0: seed {seed} drawn for this run (randseed={seed} repeats it)",
            job.section
        ),
    );
    seed
}

/// `verify` with its interval fitted to the block sizes as fio fits it: no larger than the
/// smallest block, and a factor of the smallest and the largest (else their greatest common
/// divisor).
fn fitted_interval(
    mut verify: crate::result::VerifySettings,
    access: &crate::result::AccessSpec,
) -> crate::result::VerifySettings {
    let (smallest, largest) = (access.min_size_bytes(), access.max_size_bytes());
    if let Some(interval) = verify.interval_bytes
        && smallest > 0
    {
        let interval = interval.min(smallest);
        verify.interval_bytes = Some(
            if smallest.is_multiple_of(interval) && largest.is_multiple_of(interval) {
                interval
            } else {
                crate::workload::distribution::gcd(smallest, largest)
            },
        );
    }
    verify
}

/// `number_ios` per iopath worker: fio counts per clone, iopath per worker; a trimwrite's
/// trims and writes both count.
fn io_limit(job: &JobDefinition, files: &JobFiles, notes: &mut Notes) -> Option<u64> {
    let number = job.settings.number_ios.as_ref()?;
    // A clone is one worker over its files; only network volumes get a worker each.
    let per_clone = (files.files_per_clone / files.files_per_worker.max(1)).max(1) as u64;
    if per_clone > 1 {
        notes.add(
            Some(&number.at),
            format!(
                "job '{}': number_ios={} is split over the {per_clone} workers of each clone",
                job.section, number.value
            ),
        );
    }
    // trimwrite counts each trim and its write, as fio does (twice number_ios in all).
    let trim_then_write = if job.settings.pattern.write_after_trim() {
        2
    } else {
        1
    };
    Some(
        number
            .value
            .saturating_mul(trim_then_write)
            .div_ceil(per_clone),
    )
}

/// The total rate (per clone) that keeps each capped direction at its cap: for each direction
/// that issues I/O and has a cap, cap ÷ share (bytes share for `rate`, I/O share for
/// `rate_iops`); the smallest wins.
fn total_rate(
    settings: &JobSettings,
    caps: [Option<u64>; 2],
    by_bytes: bool,
    notes: &mut Notes,
    name: &str,
) -> Option<f64> {
    if caps == [None, None] {
        return None;
    }
    let io_shares = direction_shares(settings).map(|share| share as f64 / 100.0);
    let sizes = mean_sizes(settings);
    let weights = if by_bytes {
        [
            io_shares[READ] * sizes[READ],
            io_shares[WRITE] * sizes[WRITE],
        ]
    } else {
        io_shares
    };
    let total_weight: f64 = weights.iter().sum();
    let option = if by_bytes { "rate" } else { "rate_iops" };
    let at = settings.rate_at.as_ref();
    let mut total: Option<f64> = None;
    for direction in [READ, WRITE] {
        if let Some(cap) = caps[direction]
            && weights[direction] > 0.0
        {
            let limit = cap as f64 * total_weight / weights[direction];
            total = Some(total.map_or(limit, |t: f64| t.min(limit)));
        }
    }
    match total {
        None => notes.add(
            at,
            format!("job '{name}': {option} has no effect: it caps a direction the job does not issue"),
        ),
        Some(total) if io_shares[READ] > 0.0 && io_shares[WRITE] > 0.0 => notes.add(
            at,
            format!(
                "job '{name}': {option} caps each direction in fio; iopath caps the job's total at {:.0} {} per clone, which holds the capped direction(s) to their cap in this mix",
                total,
                if by_bytes { "bytes/s" } else { "IOPS" }
            ),
        ),
        Some(_) => {}
    }
    total
}

/// The run length fio gives the job (no overrides).
fn run_length(
    job: &JobDefinition,
    files: &JobFiles,
    region: &Region,
    request: &JobFileRequest,
    notes: &mut Notes,
) -> Result<RunLength, JobFileError> {
    let settings = &job.settings;
    let name = &job.section;
    if let Some(at) = &settings.time_based {
        match &settings.runtime {
            Some(runtime) => {
                return Ok(RunLength::Time {
                    duration_ns: runtime.value,
                });
            }
            None => notes.add(
                Some(at),
                format!("job '{name}': time_based without runtime: fio drops time_based (\"time_based requires a runtime\") and runs the byte count, and so does iopath; give runtime= (or --duration) for a timed run"),
            ),
        }
    }
    let files_per_clone = files.files_per_clone as u64;
    let existing = || {
        existing_bytes(files, region.offset_bytes)
            .map_err(|message| job.at.error(format!("job '{name}': {message}")))
    };
    // The bytes of each clone's regions, for shares and holes.
    let region_per_clone = || -> Result<u64, JobFileError> {
        match (request.overrides.size, region.size_bytes) {
            (Some(size), _) | (None, Some(size)) => Ok(size.saturating_mul(files_per_clone)),
            (None, None) => existing(),
        }
    };
    let per_clone = if let Some(io_size) = &settings.io_size {
        io_size.value
    } else if settings.extended.io_size_percent.is_some()
        || (settings.extended.size_percent.is_some() && request.overrides.size.is_none())
    {
        extended_mapping::shared_bytes(settings, region_per_clone()?).unwrap_or(0)
    } else if let Some(size) = request.overrides.size {
        size.saturating_mul(files_per_clone)
    } else if let Some(size) = &settings.size {
        size.value
    } else if let Some(filesize) = &settings.filesize {
        filesize.value.saturating_mul(files_per_clone)
    } else {
        existing()?
    };
    let per_clone = match settings.io_size {
        Some(_) => per_clone,
        None => {
            let per_file = per_clone / files_per_clone.max(1);
            match extended_mapping::bytes_with_holes(settings, per_file, notes, name) {
                Some(bytes) => bytes.saturating_mul(files_per_clone),
                None => per_clone,
            }
        }
    };
    // trimwrite trims each byte and then writes it: the count is of both, twice the size (fio).
    let trim_then_write = if settings.pattern.write_after_trim() {
        2
    } else {
        1
    };
    let bytes = per_clone
        .saturating_mul(settings.loops as u64)
        .saturating_mul(files.clones as u64)
        .saturating_mul(trim_then_write);
    if bytes == 0 {
        return Err(job.at.error(format!(
            "job '{name}': nothing to transfer (the files are empty past offset)"
        )));
    }
    Ok(RunLength::Bytes {
        bytes,
        time_limit_ns: settings.runtime.as_ref().map(|runtime| runtime.value),
    })
}
