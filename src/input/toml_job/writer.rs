//! Any [`Plan`] as a TOML job file that loads back into the same workloads.
//!
//! Every job's workload is written in full: the access as `spec` (lines carry sizes, shares,
//! directions, randomness, alignment, bursts and delays), the seed, the queue depth, workers
//! and run length always, everything else where it differs from the defaults. Keys every job
//! shares go to `[defaults]`; targets every job shares go to the top-level `targets`.

use super::super::options::WorkloadOptions;
use super::keys::{self, EXTRA_KEY_PLACES};
use crate::result::{AccessSpec, RunLength, Workload};
use crate::targets::TargetSpec;
use crate::text::escape::escape_controls;
use crate::units::format_size;
use crate::units::format_time;
use crate::workload::suite::base_workload;
use crate::workload::{JobPlan, Plan, TestPlan};
use std::path::Path;

/// One `key = value` line, the value already in TOML.
type Line = (String, String);

/// A job's lines, and comments about values the format cannot hold.
struct JobText {
    keys: Vec<Line>,
    comments: Vec<String>,
    targets: Option<String>,
}

/// Writes `plan` as a TOML job file: loading it gives tests and jobs of the same names,
/// groups and workloads (`==`), on the same targets.
pub fn to_toml(plan: &Plan) -> String {
    let region_ends = region_ends(plan);
    let mut texts: Vec<Vec<JobText>> = plan
        .tests
        .iter()
        .map(|test| {
            test.jobs
                .iter()
                .map(|job| JobText {
                    targets: job_targets(plan, job, &region_ends),
                    ..workload_text(&job.workload)
                })
                .collect()
        })
        .collect();
    let mut out = format!(
        "# iopath job file, written by iopath {}.\n\
         # Loading it gives the same workloads, seeds included: iopath run --job FILE\n\
         # (keys: docs/job-files.md; `iopath job check FILE` validates without I/O).\n",
        env!("CARGO_PKG_VERSION")
    );
    let all_jobs = || texts.iter().flatten();
    let first_targets = all_jobs().next().and_then(|job| job.targets.clone());
    let shared_targets = all_jobs().all(|job| job.targets == first_targets);
    if shared_targets {
        if let Some(targets) = &first_targets {
            out.push_str(&format!("\ntargets = {targets}\n"));
        }
        texts
            .iter_mut()
            .flatten()
            .for_each(|job| job.targets = None);
    }
    let shared = shared_keys(&texts);
    if !shared.is_empty() {
        out.push_str("\n[defaults]\n");
        write_lines(&mut out, &shared);
        for job in texts.iter_mut().flatten() {
            job.keys.retain(|line| !shared.contains(line));
        }
    }
    for (test, jobs) in plan.tests.iter().zip(&texts) {
        write_test(&mut out, test, jobs);
    }
    out
}

fn write_test(out: &mut String, test: &TestPlan, jobs: &[JobText]) {
    out.push_str(&format!("\n[[test]]\nname = {}\n", quoted(&test.name)));
    match (test.jobs.as_slice(), jobs) {
        ([job], [text]) if job.name == test.name => {
            if job.group != 0 {
                out.push_str(&format!("group = {}\n", job.group));
            }
            write_job_body(out, text);
        }
        _ => {
            for (job, text) in test.jobs.iter().zip(jobs) {
                out.push_str(&format!("\n[[test.job]]\nname = {}\n", quoted(&job.name)));
                if job.group != 0 {
                    out.push_str(&format!("group = {}\n", job.group));
                }
                write_job_body(out, text);
            }
        }
    }
}

fn write_job_body(out: &mut String, text: &JobText) {
    if let Some(targets) = &text.targets {
        out.push_str(&format!("targets = {targets}\n"));
    }
    write_lines(out, &text.keys);
    for comment in &text.comments {
        out.push_str(&toml_comment(comment));
    }
}

/// `text` as one TOML comment line, `# text` and a line break. TOML allows no control
/// character but tab in a comment, and a line break would end it: control characters (from a
/// job file's values or a file name) are written as visible escapes (`\u{1b}`, `\n`).
///
/// ```
/// use iopath::input::toml_job::toml_comment;
/// assert_eq!(toml_comment("bs=4k\u{1b}[2J\nrw=write"), "# bs=4k\\u{1b}[2J\\nrw=write\n");
/// ```
pub fn toml_comment(text: &str) -> String {
    format!("# {}\n", escape_controls(text))
}

fn write_lines(out: &mut String, lines: &[Line]) {
    for (key, value) in lines {
        out.push_str(&format!("{key} = {value}\n"));
    }
}

/// Keys with the same value in every job (when there are several jobs).
fn shared_keys(texts: &[Vec<JobText>]) -> Vec<Line> {
    let mut jobs = texts.iter().flatten();
    let Some(first) = jobs.next() else {
        return Vec::new();
    };
    if jobs.clone().next().is_none() {
        return Vec::new();
    }
    first
        .keys
        .iter()
        .filter(|line| jobs.clone().all(|job| job.keys.contains(line)))
        .cloned()
        .collect()
}

/// An integer as TOML: a number up to i64::MAX, a string above (the readers take both).
fn integer(value: u64) -> String {
    match i64::try_from(value) {
        Ok(value) => value.to_string(),
        Err(_) => quoted(&value.to_string()),
    }
}

/// A serialized option value as TOML.
fn toml_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => quoted(text),
        serde_json::Value::Number(number) => match number.as_u64() {
            Some(value) => integer(value),
            None => number.to_string(),
        },
        other => other.to_string(),
    }
}

fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

fn path_text(path: &Path) -> String {
    quoted(&path.to_string_lossy())
}

/// Per target, the largest region end of the jobs on it: the size loading gives it by default.
fn region_ends(plan: &Plan) -> Vec<Option<u64>> {
    let mut ends = vec![None; plan.targets.len()];
    for job in plan.tests.iter().flat_map(|test| &test.jobs) {
        let workload = &job.workload;
        let end = workload
            .region_size_bytes
            .map(|size| size.saturating_add(workload.region_offset_bytes));
        for &index in &job.targets {
            if let Some(slot) = ends.get_mut(index) {
                *slot = (*slot).max(end);
            }
        }
    }
    ends
}

/// A job's `targets` value; `None` when it is the temporary file a job without targets gets.
fn job_targets(plan: &Plan, job: &JobPlan, region_ends: &[Option<u64>]) -> Option<String> {
    let entries: Vec<(&TargetSpec, Option<u64>)> = job
        .targets
        .iter()
        .filter_map(|&index| Some((plan.targets.get(index)?, region_ends[index])))
        .collect();
    match entries.as_slice() {
        [] => None,
        [(TargetSpec::TempFile { directory, size }, end)]
            if directory == Path::new(".") && size == end =>
        {
            None
        }
        _ => {
            let texts: Vec<String> = entries
                .iter()
                .map(|(spec, end)| target_entry(spec, *end))
                .collect();
            Some(format!("[{}]", texts.join(", ")))
        }
    }
}

fn target_entry(spec: &TargetSpec, region_end: Option<u64>) -> String {
    let size_part = |size: &Option<u64>| match size {
        Some(size) if Some(*size) != region_end => {
            format!(", size = {}", quoted(&format_size(*size)))
        }
        _ => String::new(),
    };
    match spec {
        TargetSpec::Path { path, create_size } => match size_part(create_size).as_str() {
            "" => path_text(path),
            size => format!("{{ path = {}{size} }}", path_text(path)),
        },
        TargetSpec::TempFile { directory, size } => format!(
            "{{ temporary-in = {}{} }}",
            path_text(directory),
            size_part(size)
        ),
        TargetSpec::Network(target) => quoted(&target.to_string()),
    }
}

/// The keys of a workload, in the order the flags are declared.
fn workload_text(workload: &Workload) -> JobText {
    let base = base_workload();
    let mut comments = Vec::new();
    let mut extras: Vec<(&str, String)> = Vec::new();
    let mut options = WorkloadOptions {
        spec: Some(workload.access.clone()),
        qd: Some(workload.queue_depth),
        workers: Some(workload.workers),
        size: workload.region_size_bytes,
        rate: workload.rate_bytes_per_second,
        rate_iops: workload.rate_iops,
        buffered: workload.buffered,
        seed: Some(workload.seed),
        no_register: !workload.register_buffers,
        continue_on_error: workload.continue_on_error,
        connections: (workload.connections != 1).then_some(workload.connections),
        files_per_worker: (workload.worker_files.per_worker != 1)
            .then_some(workload.worker_files.per_worker),
        file_service: (workload.worker_files.service != base.worker_files.service)
            .then(|| workload.worker_files.service.clone()),
        open_files: workload.worker_files.open_files,
        ..WorkloadOptions::default()
    };
    if workload.distribution != base.distribution {
        options.distribution = Some(workload.distribution.clone());
    }
    if workload.region_offset_bytes != 0 {
        options.offset = Some(workload.region_offset_bytes);
    }
    options.random_map = workload.offsets.random_map;
    options.overwrite = workload.file_setup.overwrite;
    options.fallocate = (workload.file_setup.preallocation != base.file_setup.preallocation)
        .then_some(workload.file_setup.preallocation);
    let other_rules = crate::result::OffsetRules {
        random_map: false,
        ..workload.offsets
    };
    if !other_rules.is_default() {
        comments.push(format!(
            "not written: {other_rules} (no key holds fio's offset modifiers or clone regions)"
        ));
    }
    if !workload.controls.is_default() {
        comments.push(
            "not written: CPU placement, Poisson arrivals, start-delay ranges, exitall, flows or the latency target of the job (no key holds them)".to_string(),
        );
    }
    if !workload.handling.is_default() {
        comments.push(
            "not written: create_on_open, the access-pattern hint, force_async or serialize_overlap of the job (no key holds them)".to_string(),
        );
    }
    if !workload.error_policy.is_default() {
        comments.push(
            "not written: the job's error policy by kind and errno, or exitall_on_error (no key holds them; continue_on_error keeps going after every error)".to_string(),
        );
    }
    match workload.length {
        RunLength::Time { duration_ns } => {
            options.duration = Some(duration_ns);
            options.ramp = Some(workload.ramp_ns);
        }
        RunLength::Bytes {
            bytes,
            time_limit_ns,
        } => {
            options.bytes = Some(bytes);
            if let Some(limit) = time_limit_ns {
                extras.push((keys::TIME_LIMIT, quoted(&format_time(limit))));
            }
            if workload.ramp_ns != 0 {
                comments.push(format!(
                    "not written: ramp = \"{}\" (a byte count in a TOML job has no ramp; here the ramp's I/O counts towards the bytes, unmeasured)",
                    format_time(workload.ramp_ns)
                ));
            }
        }
    }
    if workload.think_time_ns != 0 || workload.think_time_blocks != 1 {
        options.think_time = Some(workload.think_time_ns);
        if workload.think_time_blocks != 1 {
            options.think_blocks = Some(workload.think_time_blocks);
        }
    }
    for (set, key, field) in [
        (workload.sync_writes, "sync", &mut options.sync),
        (
            workload.fsync_at_end,
            "fsync-at-end",
            &mut options.fsync_at_end,
        ),
    ] {
        if set && !workload.writes() {
            comments.push(format!("not written: {key} = true (this job never writes)"));
        } else {
            *field = set;
        }
    }
    if workload.engine != base.engine {
        options.engine = Some(workload.engine);
    }
    if let Some(data) = workload.write_data.describe() {
        if workload.writes() {
            options.set_data(&workload.write_data);
        } else {
            comments.push(format!(
                "not written: data settings ({data}): this job never writes"
            ));
        }
    }
    if let Some(verify) = &workload.verify {
        options.set_verify(verify);
    }
    if workload.start_delay_ns != 0 {
        extras.push((
            keys::START_DELAY,
            quoted(&format_time(workload.start_delay_ns)),
        ));
    }
    if let Some(limit) = workload.io_limit {
        extras.push((keys::IO_LIMIT, integer(limit)));
    }
    if let Some(writes) = workload.fsync_every_writes {
        extras.push((keys::FSYNC_EVERY, writes.to_string()));
    }
    // Through JSON, whose integers hold any u64 (TOML's stop at i64::MAX).
    let mut values = match serde_json::to_value(&options) {
        Ok(serde_json::Value::Object(values)) => values,
        _ => serde_json::Map::new(),
    };
    values.insert(
        "spec".into(),
        serde_json::Value::String(spec_text(&workload.access)),
    );
    let mut lines = Vec::new();
    for &key in keys::option_keys() {
        if let Some(value) = values.get(key) {
            lines.push((key.to_string(), toml_value(value)));
        }
        for (extra, _) in EXTRA_KEY_PLACES.iter().filter(|(_, place)| *place == key) {
            if let Some((_, value)) = extras.iter().find(|(name, _)| name == extra) {
                lines.push((extra.to_string(), value.clone()));
            }
        }
    }
    JobText {
        keys: lines,
        comments,
        targets: None,
    }
}

/// The access spec as text that parses back to exactly `spec` (its display form is exact).
fn spec_text(spec: &AccessSpec) -> String {
    spec.to_string()
}
