//! Jobs into tests, as fio runs them: jobs run together until one says `stonewall` (or
//! `wait_for_previous`), which starts a new test once all before it have ended. Reporting groups
//! follow fio: `stonewall` or `new_group` starts a new group when the current one has jobs.
//!
//! Per test: fio's steady-state options become the test's steady-state criterion (a buffered
//! job's `invalidate=1` drops the cached pages of its own files when it starts: see
//! [`super::handling`]).

use super::collect::JobDefinition;
use super::expand::Environment;
use super::extended_mapping::MappingContext;
use super::location::Set;
use super::mapping::{MappedJob, map_job};
use super::notes::Notes;
use crate::input::job_file::{JobFileError, JobFileRequest};
use crate::input::merged_capture::MergedCapture;
use crate::targets::TargetSpec;
use crate::workload::steady::SteadyCriterion;
use crate::workload::{JobPlan, Plan, TestPlan, TestSettings};
use std::path::Path;

/// Whether `job`'s `wait_for` asks for a new test: `true` when the job it names runs alone in
/// the current test (so the test's end is that job's end), `false` without `wait_for` or when
/// the named job ran in an earlier test. Refused when the named job is not an earlier one, or
/// runs beside other jobs (a new test would also wait for those, which fio does not).
fn waits_for_the_current_test(
    job: &JobDefinition,
    phases: &[Vec<(&JobDefinition, JobPlan)>],
) -> Result<bool, JobFileError> {
    let Some(waitee) = &job.settings.wait_for else {
        return Ok(false);
    };
    let name = waitee.value.as_str();
    let in_current = phases
        .last()
        .map(|phase| phase.iter().filter(|(_, plan)| plan.name == name).count())
        .unwrap_or(0);
    let anywhere = phases.iter().flatten().any(|(_, plan)| plan.name == name);
    if !anywhere {
        return Err(waitee.at.error(format!(
            "job '{}': wait_for={name}: no job of that name comes before it",
            job.section
        )));
    }
    let current_len = phases.last().map_or(0, Vec::len);
    if in_current == 0 || job.settings.stonewall {
        return Ok(false);
    }
    if in_current < current_len {
        return Err(waitee.at.error(format!(
            "job '{}': wait_for={name}: other jobs run beside '{name}', and iopath's tests end when all their jobs end; put stonewall on the job instead (it then waits for all of them)",
            job.section
        )));
    }
    Ok(true)
}

/// Builds the plan of `jobs` read from `path`, and the merges of blktrace captures to write
/// before it runs. Steady-state settings iopath cannot honour are refused, or listed in
/// `ignored` with `request.ignore_unsupported`.
pub fn build_plan(
    path: &Path,
    jobs: &[JobDefinition],
    request: &JobFileRequest,
    environment: &Environment,
    notes: &mut Notes,
    ignored: &mut Vec<String>,
) -> Result<(Plan, Vec<MergedCapture>), JobFileError> {
    if jobs.is_empty() {
        return Err(JobFileError {
            file: path.to_path_buf(),
            line: None,
            message: "no job: the file has no section other than [global]".into(),
        });
    }
    let mut targets = TargetTable::default();
    let mut merged_captures = Vec::new();
    let mut phases: Vec<Vec<(&JobDefinition, JobPlan)>> = Vec::new();
    let mut group = 0u32;
    let mut jobs_in_group = 0u32;
    let mut clones_before = 0u32;
    let mut threads_in_phase = 0u64;
    for job in jobs {
        let settings = &job.settings;
        if (settings.stonewall || settings.new_group) && jobs_in_group > 0 {
            group += 1;
            jobs_in_group = 0;
        }
        let waits = waits_for_the_current_test(job, &phases)?;
        // Every phase gets its job right below, so a stonewall always closes a non-empty one.
        if settings.stonewall || waits || phases.is_empty() {
            phases.push(Vec::new());
            threads_in_phase = 0;
        }
        let MappedJob {
            workload,
            targets: job_targets,
            replay,
            merged_capture,
        } = map_job(
            job,
            request,
            &MappingContext {
                environment,
                first_clone: clones_before,
            },
            notes,
        )?;
        if let Some(merged) = merged_capture {
            add_merge(&mut merged_captures, merged, job)?;
        }
        clones_before = clones_before.saturating_add(settings.numjobs);
        // One worker thread per worker and set of files at least (the runner's engine may add
        // more).
        let file_sets = job_targets
            .len()
            .div_ceil(workload.worker_files.per_worker.max(1) as usize);
        threads_in_phase += u64::from(workload.workers) * file_sets as u64;
        request
            .limits
            .check_worker_threads(threads_in_phase)
            .map_err(|message| {
                job.at.error(format!(
                    "job '{}': its test would start {message}",
                    job.section
                ))
            })?;
        let indexes = job_targets
            .into_iter()
            .map(|target| targets.add(target))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| {
                job.at.error(format!(
                    "job '{}': the jobs name more than {MAX_TARGETS} files and devices",
                    job.section
                ))
            })?;
        jobs_in_group += 1;
        phases.last_mut().expect("a phase exists").push((
            job,
            JobPlan {
                name: job
                    .settings
                    .name
                    .clone()
                    .unwrap_or_else(|| job.section.clone()),
                group,
                workload,
                targets: indexes,
                replay,
            },
        ));
    }
    let mut tests = Vec::new();
    for phase in phases {
        let settings = TestSettings {
            drop_caches_before: false,
            steady: steady_criterion(&phase, request, ignored)?,
            ..TestSettings::default()
        };
        let jobs: Vec<JobPlan> = phase.into_iter().map(|(_, plan)| plan).collect();
        tests.push(TestPlan {
            name: test_name(&jobs),
            jobs,
            settings,
        });
    }
    let plan = Plan {
        targets: targets.specs,
        tests,
    };
    Ok((plan, merged_captures))
}

/// Adds the merge `job` writes: once when an earlier job writes the same merge to the same
/// file, refused when it writes another.
fn add_merge(
    merges: &mut Vec<MergedCapture>,
    merged: MergedCapture,
    job: &JobDefinition,
) -> Result<(), JobFileError> {
    match merges.iter().find(|earlier| earlier.path == merged.path) {
        None => merges.push(merged),
        Some(earlier) if earlier.bytes == merged.bytes => {}
        Some(_) => {
            let at = job
                .settings
                .replay
                .merge_file
                .as_ref()
                .map_or(&job.at, |set| &set.at);
            return Err(at.error(format!(
                "job '{}': merge_blktrace_file={}: an earlier job writes another merge to that file; name another",
                job.section,
                crate::text::escape::escape_controls(&merged.path.display().to_string())
            )));
        }
    }
    Ok(())
}

/// A test's name from its jobs': `a`, `a + b`, or `a + … + z (N jobs)`.
fn test_name(jobs: &[JobPlan]) -> String {
    let names: Vec<&str> = jobs.iter().map(|job| job.name.as_str()).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        few if few.len() <= 4 => few.join(" + "),
        many => format!(
            "{} + … + {} ({} jobs)",
            many[0],
            many[many.len() - 1],
            many.len()
        ),
    }
}

/// The test's steady-state criterion from its jobs' `steadystate` options.
fn steady_criterion(
    phase: &[(&JobDefinition, JobPlan)],
    request: &JobFileRequest,
    ignored: &mut Vec<String>,
) -> Result<Option<SteadyCriterion>, JobFileError> {
    let Some((job, plan)) = phase.iter().find(|(job, _)| job.settings.steady.is_some()) else {
        return Ok(None);
    };
    let spec: &Set<_> = job.settings.steady.as_ref().expect("found above");
    let refuse = |message: String,
                  ignored: &mut Vec<String>|
     -> Result<Option<SteadyCriterion>, JobFileError> {
        if request.ignore_unsupported {
            ignored.push(format!("{}: steadystate ({message})", spec.at));
            Ok(None)
        } else {
            Err(spec
                .at
                .error(format!("unsupported option 'steadystate': {message}")))
        }
    };
    let same_everywhere = phase.iter().all(|(other, other_plan)| {
        other.settings.steady.as_ref().map(|s| s.value) == Some(spec.value)
            && other.settings.steady_duration.as_ref().map(|s| s.value)
                == job.settings.steady_duration.as_ref().map(|s| s.value)
            && other
                .settings
                .extended
                .steady_interval
                .as_ref()
                .map(|s| s.value)
                == job
                    .settings
                    .extended
                    .steady_interval
                    .as_ref()
                    .map(|s| s.value)
            && (phase.len() == 1
                || (other.settings.group_reporting && other_plan.group == plan.group))
    });
    if !same_everywhere {
        return refuse(
            "iopath judges steady state per test: every job of the test needs the same criterion, with group_reporting in one group".into(),
            ignored,
        );
    }
    let Some(duration) = &job.settings.steady_duration else {
        return Err(spec.at.error(
            "steadystate needs ss_dur (steadystate_duration), the window it is judged over",
        ));
    };
    let seconds = duration.value / 1_000_000_000;
    if seconds < 2 || !duration.value.is_multiple_of(1_000_000_000) {
        return Err(duration
            .at
            .error("ss_dur: the window must be a whole number of seconds, at least 2"));
    }
    let interval = job.settings.extended.steady_interval.as_ref();
    let interval_ns = interval.map_or(1_000_000_000, |set| set.value);
    let samples = duration.value / interval_ns;
    if !duration.value.is_multiple_of(interval_ns) || samples < 2 {
        let at = interval.map_or(&duration.at, |set| &set.at);
        return Err(at.error(format!(
            "steadystate_check_interval ({} s) must divide ss_dur ({seconds} s) into at least 2 samples",
            interval_ns / 1_000_000_000
        )));
    }
    // fio's slope is per sample; iopath's is the change across the whole window.
    let limit_percent = if spec.value.slope {
        spec.value.limit_percent * (samples - 1) as f64
    } else {
        spec.value.limit_percent
    };
    if limit_percent > 100.0 {
        return refuse(
            format!("the slope limit over a {seconds} s window exceeds 100 % of the mean"),
            ignored,
        );
    }
    Ok(Some(SteadyCriterion {
        metric: spec.value.metric,
        slope: spec.value.slope,
        limit_percent,
        window_ns: duration.value,
        interval_ns,
        settle_ns: job
            .settings
            .steady_ramp
            .as_ref()
            .map_or(0, |ramp| ramp.value),
    }))
}

/// Most distinct targets (files, devices, volumes) one job file may name: as many files as
/// any count option allows ([`crate::workload::limits::MAX_FILES`]).
pub const MAX_TARGETS: usize = crate::workload::limits::MAX_FILES as usize;

/// Targets of the plan, each path once (the largest creation size wins).

#[derive(Default)]
struct TargetTable {
    specs: Vec<TargetSpec>,
    index: std::collections::HashMap<String, usize>,
}

impl TargetTable {
    /// The index of `spec`, added when new; `None` past [`MAX_TARGETS`].
    fn add(&mut self, spec: TargetSpec) -> Option<usize> {
        let key = target_key(&spec);
        if let Some(&index) = self.index.get(&key) {
            if let (
                TargetSpec::Path {
                    create_size: known, ..
                },
                TargetSpec::Path {
                    create_size: new, ..
                },
            ) = (&mut self.specs[index], &spec)
            {
                *known = (*known).max(*new);
            }
            return Some(index);
        }
        if self.specs.len() >= MAX_TARGETS {
            return None;
        }
        self.specs.push(spec);
        self.index.insert(key, self.specs.len() - 1);
        Some(self.specs.len() - 1)
    }
}

/// What makes two targets the same: the path (`./a` is `a`), or the volume.
fn target_key(spec: &TargetSpec) -> String {
    match spec {
        TargetSpec::Path { path, .. } => {
            let normalized: std::path::PathBuf = path.components().collect();
            format!("path:{}", normalized.display())
        }
        other => format!("{other:?}"),
    }
}
