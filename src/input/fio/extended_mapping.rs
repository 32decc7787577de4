//! The options of [`super::extended`] as iopath's workload: regions given as shares of the
//! file (resolved against the files' sizes when the job is read, as fio does when it sets
//! up its files), offset modifiers and the random map ([`OffsetRules`]), and CPU placement,
//! arrivals, start delays, exits, flows and latency targets ([`JobControls`]).

use super::collect::JobDefinition;
use super::expand::Environment;
use super::extended::{Modifier, Share};
use super::extended_values::format_cpu_list;
use super::files::JobFiles;
use super::location::Set;
use super::notes::Notes;
use super::settings::{BlockChoice, JobSettings, Pattern};
use crate::input::job_file::{JobFileError, JobFileRequest};
use crate::result::OffsetDistribution;
use crate::result::OffsetRules;
use crate::result::{EndOthers, Flow, JobControls, LatencyTarget};
use crate::targets::TargetSpec;

/// What mapping a job needs to know beyond the job itself.
pub struct MappingContext<'a> {
    /// The machine's CPUs and NUMA nodes.
    pub environment: &'a Environment,
    /// Clones of the jobs before this one in the file (fio numbers clones over the file).
    pub first_clone: u32,
}

/// The region of each of a job's files, shares of the file resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Start of the region, bytes.
    pub offset_bytes: u64,
    /// Its length, bytes (`None`: to the end of each file).
    pub size_bytes: Option<u64>,
    /// Clone `c`'s region starts `c ×` this further.
    pub clone_increment_bytes: u64,
    /// Size of the job's files when a share needed it, bytes.
    pub file_bytes: Option<u64>,
}

/// The smallest block the job issues in any direction (fio's minimum block size).
pub fn smallest_block(settings: &JobSettings) -> u64 {
    super::lines::issued_directions(settings)
        .into_iter()
        .map(|direction| match &settings.splits[direction] {
            Some(split) => split
                .iter()
                .map(|share| share.size_bytes)
                .min()
                .unwrap_or(4096),
            None => match settings.blocks[direction] {
                BlockChoice::Fixed(size) => size,
                BlockChoice::Range { min, .. } => min,
            },
        })
        .min()
        .unwrap_or(4096)
        .max(1)
}

fn align_up(value: u64, alignment: u64) -> u64 {
    value
        .div_ceil(alignment.max(1))
        .saturating_mul(alignment.max(1))
}

/// The size every file of the job has (or is created with), for a share of it; errors point
/// at `at`, the option that needs it.
fn file_size(
    job: &JobDefinition,
    files: &JobFiles,
    at: &super::location::Location,
    option: &str,
) -> Result<u64, JobFileError> {
    let name = &job.section;
    let mut sizes = Vec::new();
    for target in &files.targets {
        let (path, create_size) = match target {
            TargetSpec::Path { path, create_size } => (path, *create_size),
            TargetSpec::TempFile { .. } => continue,
            TargetSpec::Network(network) => {
                return Err(at.error(format!(
                    "job '{name}': {option}: a share of {network} cannot be worked out before connecting; give bytes"
                )));
            }
        };
        let size = match crate::targets::inspect(path) {
            Ok(info) => info.size_bytes,
            Err(_) => create_size.ok_or_else(|| {
                at.error(format!(
                    "job '{name}': {option}: {} does not exist, and a share needs its size (fio needs an existing file too); give bytes, or size=/--size to create it",
                    path.display()
                ))
            })?,
        };
        sizes.push((path.display().to_string(), size));
    }
    let Some((_, first)) = sizes.first() else {
        return Err(at.error(format!(
            "job '{name}': {option}: the job has no file to take a share of"
        )));
    };
    if let Some((other, size)) = sizes.iter().find(|(_, size)| size != first) {
        return Err(at.error(format!(
            "job '{name}': {option}: the files differ in size ({} has {size} bytes, {} has {first}) and iopath gives every file of a job the same region; give bytes",
            other, sizes[0].0
        )));
    }
    Ok(*first)
}

/// Resolves the region of each of the job's files: `offset=N%`, `size=N%` and
/// `offset_increment` against the files' size, `--size` winning over `size`.
pub fn region(
    job: &JobDefinition,
    files: &JobFiles,
    request: &JobFileRequest,
    notes: &mut Notes,
) -> Result<Region, JobFileError> {
    let settings = &job.settings;
    let extended = &settings.extended;
    let name = &job.section;
    let size_share = extended
        .size_percent
        .as_ref()
        .filter(|_| request.overrides.size.is_none());
    let increment = extended.offset_increment.as_ref();
    let shared = files.workers_per_set == files.clones;
    if let Some(set) = increment
        && settings.numjobs > 1
        && !shared
    {
        return Err(set.at.error(format!(
            "job '{name}': offset_increment moves the region of each clone within the files they share, and these clones each have files of their own; give filename= (or targets on the command line)"
        )));
    }
    let needs_file: Option<(&super::location::Location, &str)> = extended
        .offset_percent
        .as_ref()
        .map(|set| (&set.at, "offset"))
        .or(size_share.map(|set| (&set.at, "size")))
        .or(increment
            .filter(|set| matches!(set.value, Share::Percent(_)))
            .map(|set| (&set.at, "offset_increment")));
    let file_bytes = match needs_file {
        Some((at, option)) => Some(file_size(job, files, at, option)?),
        None => None,
    };
    let file = file_bytes.unwrap_or(0);
    let smallest = smallest_block(settings);
    let alignment = if extended.offset_align > 0 {
        extended.offset_align
    } else {
        smallest
    };
    let share_of_file =
        |percent: u32| file / 100 * u64::from(percent) + file % 100 * u64::from(percent) / 100;
    let offset_bytes = match &extended.offset_percent {
        Some(set) => {
            let offset = align_up(share_of_file(set.value), alignment);
            if offset >= file {
                return Err(set.at.error(format!(
                    "job '{name}': offset={}% is {offset} bytes, past the end of the files ({file} bytes)",
                    set.value
                )));
            }
            offset
        }
        None => settings.offset,
    };
    let clone_increment_bytes = match increment.map(|set| set.value) {
        _ if settings.numjobs <= 1 => 0,
        Some(Share::Percent(percent)) => align_up(share_of_file(percent), alignment),
        Some(Share::Bytes(bytes)) if extended.offset_percent.is_some() => {
            align_up(bytes, alignment)
        }
        Some(Share::Bytes(bytes)) => bytes,
        None => 0,
    };
    let mut size_bytes = files.region_size_bytes;
    if let Some(set) = size_share {
        let share = share_of_file(set.value).min(file - offset_bytes);
        let size = share - share % smallest;
        if size == 0 {
            return Err(set.at.error(format!(
                "job '{name}': size={}% of {file} bytes is less than a block",
                set.value
            )));
        }
        size_bytes = Some(size);
    }
    if let (Some(set), Some(size)) = (&extended.offset_percent, size_bytes)
        && offset_bytes + size > file
    {
        notes.add(
            Some(&set.at),
            format!(
                "job '{name}': offset={}% leaves {} bytes of the {file}-byte files: the region is cut to them (fio would extend a file to hold offset + size)",
                set.value,
                file - offset_bytes
            ),
        );
        size_bytes = Some(file - offset_bytes);
    }
    Ok(Region {
        offset_bytes,
        size_bytes,
        clone_increment_bytes,
        file_bytes,
    })
}

/// Bytes each clone transfers when a share sets them (`size=N%`, `io_size=N%`), given the
/// bytes of the region per clone (`region_per_clone`); `None` when no share does.
pub fn shared_bytes(settings: &JobSettings, region_per_clone: u64) -> Option<u64> {
    let extended = &settings.extended;
    if let Some(set) = &extended.io_size_percent {
        return Some(region_per_clone / 100 * u64::from(set.value));
    }
    extended.size_percent.as_ref().map(|_| region_per_clone)
}

/// The bytes one pass over a region of `region_bytes` transfers when a sequential job leaves
/// holes (`rw=write:4k`): fio ends the pass where the next offset would pass the region's end.
/// `None` when the job leaves no holes.
pub fn bytes_with_holes(
    settings: &JobSettings,
    region_bytes: u64,
    notes: &mut Notes,
    name: &str,
) -> Option<u64> {
    let step = match settings.extended.modifier.as_ref().map(|set| &set.value) {
        Some(Modifier::Step(step)) if *step > 0 && !settings.pattern.random() => *step as u64,
        _ => return None,
    };
    let sizes = super::lines::mean_sizes(settings);
    let shares = super::lines::direction_shares(settings);
    let mean = (sizes[0] * f64::from(shares[0]) + sizes[1] * f64::from(shares[1])) / 100.0;
    let smallest = smallest_block(settings);
    if (mean - smallest as f64).abs() < 0.5 {
        let block = smallest;
        if region_bytes < block {
            return Some(0);
        }
        let ios = (region_bytes - block) / (block + step) + 1;
        return Some(ios * block);
    }
    if let Some(set) = &settings.extended.modifier {
        notes.add(
            Some(&set.at),
            format!("job '{name}': holes with several block sizes: the byte count is worked out from the mean block ({mean:.0} bytes), where fio stops at the region's end"),
        );
    }
    Some((region_bytes as f64 * mean / (mean + step as f64)) as u64)
}

/// fio's offset modifiers, random map and clone regions of `job` as [`OffsetRules`].
pub fn offset_rules(job: &JobDefinition, region: &Region, notes: &mut Notes) -> OffsetRules {
    let settings = &job.settings;
    let extended = &settings.extended;
    let name = &job.section;
    let mut rules = OffsetRules {
        clone_increment_bytes: region.clone_increment_bytes,
        write_after_trim: settings.pattern.write_after_trim(),
        ..OffsetRules::default()
    };
    match extended.modifier.as_ref().map(|set| set.value) {
        Some(Modifier::Step(step)) => rules.sequential_step_bytes = step,
        Some(Modifier::Every(count)) => {
            rules.random_every_ios = count;
            rules.repeat_offset = extended.repeat_offset;
        }
        _ => {}
    }
    if let Some(set) = &extended.modifier
        && let Modifier::Step(step) = set.value
        && matches!(settings.pattern, Pattern::ReadWrite)
    {
        notes.add(
            Some(&set.at),
            format!("job '{name}': the step of {step} bytes applies to the one sequential position reads and writes share in iopath (fio keeps one per direction)"),
        );
    }
    let uniform = matches!(
        settings.distribution.as_ref().map(|set| &set.value),
        None | Some(OffsetDistribution::Uniform)
    );
    let smallest = smallest_block(settings);
    let aligned_to_blocks = settings
        .alignments
        .iter()
        .flatten()
        .all(|&align| align == smallest);
    let lfsr = extended.lfsr.is_some();
    if settings.pattern.random() && (lfsr || !settings.norandommap) {
        if !uniform {
            if let Some(set) = &settings.distribution
                && matches!(
                    set.value,
                    OffsetDistribution::Zoned { .. } | OffsetDistribution::ZonedAbsolute { .. }
                )
            {
                notes.add(
                    Some(&set.at),
                    format!("job '{name}': fio also keeps its random map inside each zone; iopath's random map serves the uniform distribution only, so blocks of a zone may repeat within a pass"),
                );
            }
        } else if !aligned_to_blocks && !lfsr {
            notes.add(
                Some(&job.at),
                format!("job '{name}': blockalign differs from the smallest block, which turns fio's random map off, and iopath's too: blocks may repeat within a pass"),
            );
        } else {
            rules.random_map = true;
            if lfsr {
                rules.random_order = crate::result::RandomOrder::Lfsr;
            }
            let mixed = super::lines::access_spec(settings).single_size().is_none();
            if let Some(set) = &extended.lfsr
                && mixed
            {
                notes.add(
                    Some(&set.at),
                    format!("job '{name}': random_generator=lfsr runs in an LFSR order under iopath's random map, which cuts an I/O short where it reaches a block already visited; fio's lfsr does not cut I/Os (it may visit part of a block twice)"),
                );
            }
        }
    }
    rules
}

/// CPU placement, arrivals, start delays, exits, flows and latency targets of `job`.
pub fn controls(
    job: &JobDefinition,
    context: &MappingContext<'_>,
    notes: &mut Notes,
) -> Result<JobControls, JobFileError> {
    let settings = &job.settings;
    let extended = &settings.extended;
    let name = &job.section;
    let mut controls = JobControls {
        cpus: cpus(job, context.environment, notes)?,
        poisson_arrivals: extended.poisson.is_some(),
        start_delay_high_ns: extended.start_delay_high_ns,
        ..JobControls::default()
    };
    if extended.cpus_split && !controls.cpus.is_empty() {
        controls.cpu_split_start = Some(context.first_clone);
    }
    if let Some(set) = &extended.poisson
        && settings.rate == [None, None]
        && settings.rate_iops == [None, None]
    {
        notes.add(
            Some(&set.at),
            format!("job '{name}': rate_process=poisson has no effect without rate or rate_iops"),
        );
    }
    if extended.exitall.is_some() {
        controls.ends_others = extended.exit_what;
    }
    if let Some(set) = &extended.numa_mem_policy {
        notes.add(
            Some(&set.at),
            format!(
                "job '{name}': numa_mem_policy={} is not applied: iopath's buffers come from the node their worker first touches them from (the kernel's default policy)",
                set.value
            ),
        );
    }
    controls.flow = extended.flow.as_ref().map(|set| Flow {
        id: extended.flow_id,
        weight: set.value,
        sleep_ns: extended.flow_sleep_ns,
    });
    controls.latency_target = latency_target(job)?;
    controls.logs = super::log_options::with_job_name(&settings.logs, name);
    if let Some(record) = &settings.replay.record {
        super::replay::check_record(record, &job.section, &settings.logs)?;
        controls
            .logs
            .get_or_insert_with(crate::result::log_options::LogOptions::default)
            .iolog = Some(record.value.clone());
    }
    Ok(controls)
}

/// The CPUs of `numa_cpu_nodes` (which wins, as in fio) or `cpus_allowed`/`cpumask`, checked
/// against those this process may use.
fn cpus(
    job: &JobDefinition,
    environment: &Environment,
    notes: &mut Notes,
) -> Result<Vec<u32>, JobFileError> {
    let extended = &job.settings.extended;
    let name = &job.section;
    let (cpus, at, option): (Vec<u32>, &super::location::Location, &str) =
        match (&extended.numa_nodes, &extended.cpus) {
            (Some(nodes), cpus) => {
                if let Some(cpus) = cpus {
                    notes.add(
                        Some(&cpus.at),
                        format!(
                            "job '{name}': numa_cpu_nodes wins over cpus_allowed/cpumask, as in fio"
                        ),
                    );
                }
                (
                    node_cpus(job, nodes, environment, notes)?,
                    &nodes.at,
                    "numa_cpu_nodes",
                )
            }
            (None, Some(cpus)) => (cpus.value.clone(), &cpus.at, "cpus_allowed"),
            (None, None) => return Ok(Vec::new()),
        };
    let refused: Vec<u32> = cpus
        .iter()
        .copied()
        .filter(|cpu| !environment.allowed_cpus.contains(cpu))
        .collect();
    if !refused.is_empty() {
        return Err(at.error(format!(
            "job '{name}': {option}: CPU {} is not one this process may run on (it may use {})",
            format_cpu_list(&refused),
            format_cpu_list(&environment.allowed_cpus)
        )));
    }
    Ok(cpus)
}

/// The CPUs of the nodes named, leaving out (with a note) nodes this machine lacks.
fn node_cpus(
    job: &JobDefinition,
    nodes: &Set<Vec<u32>>,
    environment: &Environment,
    notes: &mut Notes,
) -> Result<Vec<u32>, JobFileError> {
    let name = &job.section;
    let known: Vec<u32> = environment
        .numa_nodes
        .iter()
        .map(|(node, _)| *node)
        .collect();
    let missing: Vec<u32> = nodes
        .value
        .iter()
        .copied()
        .filter(|node| !known.contains(node))
        .collect();
    let mut cpus: Vec<u32> = environment
        .numa_nodes
        .iter()
        .filter(|(node, _)| nodes.value.contains(node))
        .flat_map(|(_, cpus)| cpus.iter().copied())
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    let all_nodes = nodes.value.len() > 1 && nodes.value == (0..=4095).collect::<Vec<u32>>();
    if cpus.is_empty() {
        return Err(nodes.at.error(format!(
            "job '{name}': numa_cpu_nodes: node {} is not on this machine (its nodes: {})",
            format_cpu_list(&missing),
            format_cpu_list(&known)
        )));
    }
    if !missing.is_empty() && !all_nodes {
        notes.add(
            Some(&nodes.at),
            format!(
                "job '{name}': numa_cpu_nodes: node {} is not on this machine (its nodes: {}); the job runs on the CPUs of the others ({})",
                format_cpu_list(&missing),
                format_cpu_list(&known),
                format_cpu_list(&cpus)
            ),
        );
    }
    Ok(cpus)
}

/// `latency_target` and its companions.
fn latency_target(job: &JobDefinition) -> Result<Option<LatencyTarget>, JobFileError> {
    let extended = &job.settings.extended;
    let Some(target) = &extended.latency_target else {
        return Ok(None);
    };
    let Some(window_ns) = extended.latency_window_ns else {
        return Err(target.at.error(format!(
            "job '{}': latency_target needs latency_window, the time each queue depth is judged over (fio's default of 0 judges after every I/O)",
            job.section
        )));
    };
    Ok(Some(LatencyTarget {
        target_ns: target.value,
        window_ns,
        percentile: extended.latency_percentile,
        keep_running: extended.latency_run,
    }))
}

/// What an error ending one of the job's workers ends besides it: the worker alone (fio's
/// default), or with `exitall_on_error` the jobs `exit_what` names.
pub fn error_scope(job: &JobDefinition) -> crate::result::ErrorScope {
    use crate::result::ErrorScope;
    let extended = &job.settings.extended;
    if extended.exitall_on_error.is_none() {
        return ErrorScope::Worker;
    }
    match extended.exit_what {
        EndOthers::None | EndOthers::Group => ErrorScope::Group,
        EndOthers::Test => ErrorScope::Test,
        EndOthers::Run => ErrorScope::Run,
    }
}
