//! Stage two: drafts → a validated [`Plan`]. Each job's settings are layered (`[defaults]`,
//! then its test, then the job itself, then the command line), turned into [`WorkloadOptions`]
//! and applied like the flags of `iopath run`; targets are gathered, shared between jobs that
//! name the same path, and checked to exist or to have a size to be created with.

use super::super::options::WorkloadOptions;
use super::document::{Problem, Setting, scalar_text};
use super::keys::{self, Extra};
use super::reader::{FileDraft, TableDraft, TargetEntry, TargetKey};
use crate::input::job_file::JobFileRequest;
use crate::result::Workload;
use crate::targets::TargetSpec;
use crate::workload::suite::base_workload;
use crate::workload::{JobPlan, Plan, TestPlan};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::DeTable;

/// Builds the plan of a file read into `draft`. `overrides` (command-line flags) apply on top
/// of every job; `request.targets`, when not empty, replace every job's targets; a test that
/// would start more worker threads than `request.limits` allow is refused. What the user
/// should know about settings that were left out goes to `notes` (each once).
pub(super) fn build_plan(
    draft: &FileDraft<'_>,
    overrides: &[Setting<'_>],
    request: &JobFileRequest,
    notes: &mut Vec<Problem>,
) -> Result<Plan, Problem> {
    let command_line_targets: Vec<TargetEntry> = request
        .targets
        .iter()
        .map(|path| TargetEntry {
            key: TargetKey::Path(path.clone()),
            size: None,
            line: None,
        })
        .collect();
    let mut targets = Targets::default();
    let mut tests = Vec::new();
    for (test_index, test) in draft.tests.iter().enumerate() {
        let single = [TableDraft {
            line: test.line,
            ..TableDraft::default()
        }];
        let job_drafts = if test.jobs.is_empty() {
            &single[..]
        } else {
            &test.jobs[..]
        };
        let mut jobs = Vec::new();
        let mut threads_in_test = 0u64;
        for (job_index, job) in job_drafts.iter().enumerate() {
            let settings = merge(&[&draft.defaults, &test.settings, &job.settings, overrides]);
            let workload = build_workload(&settings, job.line, notes)?;
            let entries = if command_line_targets.is_empty() {
                job.targets
                    .as_ref()
                    .or(test.targets.as_ref())
                    .or(draft.targets.as_ref())
                    .cloned()
                    .unwrap_or_else(|| vec![Targets::implicit()])
            } else {
                command_line_targets.clone()
            };
            // One worker thread per worker and target at least (the runner may add more).
            threads_in_test += u64::from(workload.workers) * entries.len() as u64;
            request
                .limits
                .check_worker_threads(threads_in_test)
                .map_err(|message| {
                    Problem::at(Some(job.line), format!("this test would start {message}"))
                })?;
            let name = match (&job.name, test.jobs.is_empty()) {
                (Some(name), _) => name.clone(),
                (None, true) => test.name.clone().unwrap_or_else(|| workload.summary()),
                (None, false) => format!("job {}", job_index + 1),
            };
            jobs.push(JobPlan {
                name,
                group: job.group.or(test.group).unwrap_or(0),
                targets: entries
                    .iter()
                    .map(|entry| targets.index_of(entry, &workload))
                    .collect(),
                workload,
                replay: None,
            });
        }
        let name = match (&test.name, jobs.as_slice()) {
            (Some(name), _) => name.clone(),
            (None, [only]) => only.name.clone(),
            (None, _) => format!("test {}", test_index + 1),
        };
        tests.push(test_plan(name, jobs));
    }
    Ok(Plan {
        targets: targets.into_specs()?,
        tests,
    })
}

/// A test of `jobs` (at least one).
fn test_plan(name: String, jobs: Vec<JobPlan>) -> TestPlan {
    let first = &jobs[0];
    let mut test = TestPlan::single(name, first.workload.clone(), first.targets.clone());
    test.jobs = jobs;
    test
}

/// Layers settings: a key of a later layer replaces the same key of an earlier one, and the
/// keys that say the same thing differently (`rw` replaces `spec`, `bytes` replaces
/// `duration`).
fn merge<'i>(layers: &[&[Setting<'i>]]) -> Vec<Setting<'i>> {
    let mut merged: Vec<Setting<'i>> = Vec::new();
    for layer in layers {
        for setting in layer.iter() {
            merged.retain(|earlier| {
                earlier.key != setting.key
                    && !keys::replaced_by(&setting.key).any(|k| k == earlier.key)
            });
        }
        merged.extend(layer.iter().cloned());
    }
    merged
}

/// The workload of one job's merged settings, built like the flags of `iopath run` build
/// theirs (from the same defaults, seed included); its notes go to `notes`.
fn build_workload(
    settings: &[Setting<'_>],
    line: usize,
    notes: &mut Vec<Problem>,
) -> Result<Workload, Problem> {
    let at = |setting: &Setting<'_>, message: String| Problem::at(setting.origin.line(), message);
    let mut table = DeTable::new();
    let mut extras = Vec::new();
    for setting in settings {
        if keys::EXTRA_KEYS.contains(&setting.key.as_str()) {
            let text = scalar_text(setting.value.get_ref()).unwrap_or_default();
            let extra = Extra::parse(&setting.key, &text)
                .map_err(|message| at(setting, format!("{}: {message}", setting.key)))?;
            extras.push((setting, extra));
        } else {
            table.insert(
                Spanned::new(0..0, setting.key.clone().into()),
                setting.value.clone(),
            );
        }
    }
    let options =
        WorkloadOptions::deserialize(toml::de::Deserializer::from(Spanned::new(0..0, table)))
            .map_err(|error| Problem::at(Some(line), error.message().to_string()))?;
    let find = |key: &str| settings.iter().find(|setting| setting.key == key);
    if options.think_time.is_none()
        && let Some(setting) = find("think-blocks")
    {
        return Err(at(
            setting,
            "think-blocks counts I/Os between think-time pauses: give think-time too".into(),
        ));
    }
    let at_mentioned = |message: String| {
        let line = match mentioned_setting(&message, settings) {
            Some(setting) => setting.origin.line(),
            None => Some(line),
        };
        Problem::at(line, message)
    };
    let mut workload = options
        .apply(&base_workload())
        .map_err(|error| at_mentioned(error.to_string()))?;
    for note in options.notes(&workload).into_iter().map(at_mentioned) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    for (setting, extra) in extras {
        extra
            .apply(&mut workload)
            .map_err(|error| at(setting, error.to_string()))?;
    }
    Ok(workload)
}

/// The setting a message of [`WorkloadOptions::apply`] names first (as `--key`).
fn mentioned_setting<'a, 'i>(
    message: &str,
    settings: &'a [Setting<'i>],
) -> Option<&'a Setting<'i>> {
    settings
        .iter()
        .filter_map(|setting| {
            let flag = format!("--{}", setting.key);
            message
                .match_indices(&flag)
                .find(|(at, _)| {
                    !message[at + flag.len()..]
                        .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
                })
                .map(|(at, _)| (at, setting))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, setting)| setting)
}

/// The targets of the plan as jobs name them; a path named by several jobs is one target.
#[derive(Default)]
struct Targets {
    gathered: Vec<GatheredTarget>,
}

struct GatheredTarget {
    key: TargetKey,
    /// Size given in a target entry.
    given_size: Option<u64>,
    /// Largest region end of the jobs on it (size + offset), as `iopath run` sizes a file it
    /// creates.
    region_end: Option<u64>,
    /// First line naming it.
    line: Option<usize>,
}

impl Targets {
    /// The target of a job without targets: a temporary file here, as `iopath run` without a
    /// target.
    fn implicit() -> TargetEntry {
        TargetEntry {
            key: TargetKey::Temporary(PathBuf::from(".")),
            size: None,
            line: None,
        }
    }

    /// The index of `entry` among the plan's targets, for a job running `workload` on it.
    fn index_of(&mut self, entry: &TargetEntry, workload: &Workload) -> usize {
        let index = match self.gathered.iter().position(|t| t.key == entry.key) {
            Some(index) => index,
            None => {
                self.gathered.push(GatheredTarget {
                    key: entry.key.clone(),
                    given_size: None,
                    region_end: None,
                    line: entry.line,
                });
                self.gathered.len() - 1
            }
        };
        let target = &mut self.gathered[index];
        target.given_size = target.given_size.max(entry.size);
        let region_end = workload
            .region_size_bytes
            .map(|size| size.saturating_add(workload.region_offset_bytes));
        target.region_end = target.region_end.max(region_end);
        index
    }

    /// The target specs; a path of the file that does not exist needs a size.
    fn into_specs(self) -> Result<Vec<TargetSpec>, Problem> {
        self.gathered
            .into_iter()
            .map(|target| {
                let size = target.given_size.or(target.region_end);
                match target.key {
                    TargetKey::Path(path) => {
                        let spec = TargetSpec::from_argument(&path, size)
                            .map_err(|message| Problem::at(target.line, format!("targets: {message}")))?;
                        if let TargetSpec::Path { path, create_size: None } = &spec
                            && target.line.is_some()
                            && !exists(path)
                        {
                            return Err(Problem::at(
                                target.line,
                                format!(
                                    "targets: {}: no such file or device (give the job a size, or write {{ path = \"{}\", size = \"1g\" }}, to create it)",
                                    path.display(),
                                    path.display()
                                ),
                            ));
                        }
                        Ok(spec)
                    }
                    TargetKey::Temporary(directory) => Ok(TargetSpec::TempFile { directory, size }),
                }
            })
            .collect()
    }
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}
