//! Which files a job uses, as fio names them, and the targets they become.
//!
//! - `filename=a:b` (or targets given on the command line, like fio's `--filename`): every clone
//!   shares these files; each of the `numjobs` workers moves over all of them.
//! - directories given on the command line (every target an existing directory) stand for
//!   fio's `--directory`: they replace each job's `directory`, and its files are named in them.
//! - otherwise each clone has its own `nrfiles` files named `$jobname.$jobnum.$filenum` (or by
//!   `filename_format`) in `directory` (several directories go round robin to the clones) or
//!   the current directory; one worker moves over each clone's files.
//!
//! Either way a clone is one worker with the job's `iodepth`, picking the file of each I/O as
//! `file_service_type` says (as fio's one thread per clone does); network volumes keep workers
//! of their own. A missing file is created with the job's per-file size (`filesize`, or `size`
//! divided over the clone's files, or the command line's `--size`) plus `offset`.

use super::collect::JobDefinition;
use super::notes::Notes;
use super::settings::JobSettings;
use crate::input::job_file::{JobFileError, JobFileRequest};
use crate::result::EngineKind;
use crate::targets::TargetSpec;
use crate::targets::network_target::NetworkTarget;
use std::path::{Path, PathBuf};

/// Size of the file a null-engine job creates when its file is missing (no I/O reaches it).
const NULL_ENGINE_FILE_BYTES: u64 = 1 << 20;

/// Most files a job may generate names for (numjobs × nrfiles).
const MAX_GENERATED_FILES: u64 = crate::workload::limits::MAX_FILES as u64;

/// The files of one job.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFiles {
    /// One target per file.
    pub targets: Vec<TargetSpec>,
    /// Workers on each group of `files_per_worker` targets.
    pub workers_per_set: u32,
    /// Files each worker moves over (a clone's files; 1 for network volumes).
    pub files_per_worker: u32,
    /// fio's threads (clones) of the job.
    pub clones: u32,
    /// Files each clone works on.
    pub files_per_clone: u32,
    /// Size of each file's region, when known (`None`: to the end of each file).
    pub region_size_bytes: Option<u64>,
}

/// Works out the files and targets of `job`.
pub fn job_files(
    job: &JobDefinition,
    request: &JobFileRequest,
    engine: EngineKind,
    notes: &mut Notes,
) -> Result<JobFiles, JobFileError> {
    let settings = &job.settings;
    let clones = settings.numjobs;
    if engine == EngineKind::Nfs && request.targets.is_empty() {
        return nfs_url_files(job, request, notes);
    }
    if engine.is_protocol() {
        return protocol_files(job, request, engine);
    }
    let command_line_directories = directory_targets(&request.targets);
    let directories: Vec<String> = match &command_line_directories {
        Some(directories) => directories.clone(),
        None => settings.directories.clone(),
    };
    if (request.targets.is_empty() || command_line_directories.is_some())
        && settings.filenames.is_none()
        && u64::from(clones) * u64::from(settings.nrfiles) > MAX_GENERATED_FILES
    {
        return Err(job.at.error(format!(
            "job '{}': numjobs × nrfiles makes more than {MAX_GENERATED_FILES} files",
            job.section
        )));
    }
    let (paths, shared): (Vec<(PathBuf, bool)>, bool) =
        if !request.targets.is_empty() && command_line_directories.is_none() {
            let paths = request.targets.iter().map(|p| (p.clone(), true)).collect();
            (paths, true)
        } else if let Some(names) = &settings.filenames {
            let directory = directories.first().map(PathBuf::from);
            let paths = names
                .value
                .iter()
                .map(|name| {
                    let path = PathBuf::from(name);
                    match &directory {
                        Some(directory) if path.is_relative() => (directory.join(path), false),
                        _ => (path, false),
                    }
                })
                .collect();
            (paths, true)
        } else if settings.nrfiles == 1
            && settings.filename_format.is_none()
            && is_existing_device(&job.section)
        {
            (vec![(PathBuf::from(&job.section), false)], true)
        } else {
            (generated_paths(&job.section, settings, &directories), false)
        };
    let files_per_clone = if shared {
        paths.len() as u32
    } else {
        settings.nrfiles
    };
    let per_file_size = per_file_size(job, request, files_per_clone)?;
    let mut region_size_bytes = per_file_size;
    let create_size = if !settings.allow_file_create {
        None
    } else if engine == EngineKind::Null {
        region_size_bytes = None;
        let largest_block = settings
            .blocks
            .iter()
            .map(|choice| match choice {
                super::settings::BlockChoice::Fixed(size) => *size,
                super::settings::BlockChoice::Range { max, .. } => *max,
            })
            .chain(
                settings
                    .splits
                    .iter()
                    .flatten()
                    .flatten()
                    .map(|s| s.size_bytes),
            )
            .max()
            .unwrap_or(4096);
        let size = NULL_ENGINE_FILE_BYTES.max(largest_block.next_power_of_two());
        // A replay's offsets are the log's, wherever they fall.
        let offsets = if settings.replay.log.is_some() {
            "the offsets are the log's".to_string()
        } else {
            format!("offsets fall within {size} bytes (not the job's size)")
        };
        notes.add(
            Some(&job.at),
            format!(
                "job '{}': ioengine=null does no I/O: a missing file is not created, and {offsets}",
                job.section
            ),
        );
        Some(settings.offset.saturating_add(size))
    } else {
        per_file_size.map(|size| {
            settings
                .offset
                .saturating_add(size)
                .saturating_add(settings.extended.increment_extent(settings.numjobs))
        })
    };
    let targets = paths
        .into_iter()
        .map(|(path, from_command_line)| {
            if !from_command_line && path.starts_with("/dev") && !path.exists() {
                let at = settings.filenames.as_ref().map_or(&job.at, |names| &names.at);
                return Err(at.error(format!(
                    "job '{}': {}: no such device (iopath creates no files under /dev); give the device or file to use on the command line",
                    job.section,
                    path.display()
                )));
            }
            if from_command_line {
                TargetSpec::from_argument(&path, create_size)
                    .map_err(|message| job.at.error(format!("job '{}': {message}", job.section)))
            } else {
                Ok(TargetSpec::Path { path, create_size })
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(JobFiles {
        targets,
        workers_per_set: if shared { clones } else { 1 },
        files_per_worker: files_per_clone,
        clones,
        files_per_clone,
        region_size_bytes,
    })
}

/// The network volume of `ioengine=nbd` (`uri`) or `ioengine=libiscsi` (`filename`), or the
/// URLs given on the command line; every clone works on each of them.
fn protocol_files(
    job: &JobDefinition,
    request: &JobFileRequest,
    engine: EngineKind,
) -> Result<JobFiles, JobFileError> {
    let settings = &job.settings;
    let engine_at = &settings.engine.at;
    let error = |at: &super::location::Location, message: String| {
        at.error(format!("job '{}': {message}", job.section))
    };
    let (urls, at): (Vec<String>, &super::location::Location) = if !request.targets.is_empty() {
        let urls = request
            .targets
            .iter()
            .map(|path| path.to_string_lossy().into_owned())
            .collect();
        (urls, engine_at)
    } else if engine == EngineKind::Nbd {
        match &settings.uri {
            Some(uri) => (vec![uri.value.clone()], &uri.at),
            None => {
                return Err(error(
                    engine_at,
                    "ioengine=nbd needs uri= (nbd://HOST/EXPORT or nbd+unix:///EXPORT?socket=PATH), or the export on the command line".into(),
                ));
            }
        }
    } else {
        match &settings.filenames {
            Some(names) => (names.value.clone(), &names.at),
            None => {
                return Err(error(
                    engine_at,
                    "ioengine=libiscsi needs filename=iscsi\\://HOST/IQN/LUN (colons escaped), or the LUN on the command line".into(),
                ));
            }
        }
    };
    let targets = urls
        .iter()
        .map(|url| {
            let target =
                NetworkTarget::parse(url).map_err(|problem| error(at, problem.to_string()))?;
            let matches = matches!(
                (&target, engine),
                (NetworkTarget::Nbd { .. }, EngineKind::Nbd)
                    | (NetworkTarget::Iscsi { .. }, EngineKind::Iscsi)
                    | (NetworkTarget::Nfs { .. }, EngineKind::Nfs)
            );
            if !matches {
                return Err(error(
                    at,
                    format!(
                        "{url} is not a target of ioengine={}",
                        settings.engine.value.0
                    ),
                ));
            }
            Ok(TargetSpec::Network(target))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let region_size_bytes = request
        .overrides
        .size
        .or(settings.filesize.as_ref().map(|size| size.value))
        .or(settings
            .size
            .as_ref()
            .map(|size| size.value / targets.len().max(1) as u64));
    Ok(JobFiles {
        files_per_clone: targets.len() as u32,
        targets,
        workers_per_set: settings.numjobs,
        files_per_worker: 1,
        clones: settings.numjobs,
        region_size_bytes,
    })
}

/// The files of `ioengine=nfs` without targets on the command line: named as fio's libnfs
/// engine names them (`filename`, or `$jobname.$jobnum.$filenum` / `filename_format`, with
/// `directory`) inside the directory of `nfs_url`; a missing one is created with the job's
/// per-file size. Each NFS file has workers of its own, so a clone moves over one file:
/// `nrfiles` above 1 is refused.
fn nfs_url_files(
    job: &JobDefinition,
    request: &JobFileRequest,
    notes: &mut Notes,
) -> Result<JobFiles, JobFileError> {
    let settings = &job.settings;
    let engine_at = &settings.engine.at;
    let error = |at: &super::location::Location, message: String| {
        at.error(format!("job '{}': {message}", job.section))
    };
    let Some(nfs_url) = &settings.nfs_url else {
        return Err(error(
            engine_at,
            "ioengine=nfs needs nfs_url= (nfs://HOST/EXPORT), or the nfs:// files on the command line".into(),
        ));
    };
    if settings.nrfiles > 1 && settings.filenames.is_none() {
        return Err(error(
            engine_at,
            format!(
                "ioengine=nfs: nrfiles={}: iopath gives each NFS file workers of its own, so a clone cannot move over several; give numjobs={} instead",
                settings.nrfiles,
                u64::from(settings.numjobs) * u64::from(settings.nrfiles)
            ),
        ));
    }
    let (base, query) = match nfs_url.value.split_once('?') {
        Some((base, query)) => (base.trim_end_matches('/'), format!("?{query}")),
        None => (nfs_url.value.trim_end_matches('/'), String::new()),
    };
    let (names, shared): (Vec<String>, bool) = match &settings.filenames {
        Some(names) => (names.value.clone(), true),
        None => (
            generated_paths(&job.section, settings, &settings.directories)
                .into_iter()
                .map(|(path, _)| path.to_string_lossy().into_owned())
                .collect(),
            false,
        ),
    };
    let files_per_clone = if shared { names.len() as u32 } else { 1 };
    let size = per_file_size(job, request, files_per_clone)?;
    let targets = names
        .iter()
        .map(|name| {
            let url = format!("{base}/{}{query}", name.trim_start_matches('/'));
            NetworkTarget::parse(&url)
                .map(|target| TargetSpec::Network(target.with_create_size(size)))
                .map_err(|problem| error(&nfs_url.at, problem.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if shared && targets.len() > 1 {
        notes.add(
            Some(engine_at),
            format!(
                "ioengine=nfs: each of the {} files of filename= has numjobs workers of its own (fio's clones move over all of them)",
                targets.len()
            ),
        );
    }
    Ok(JobFiles {
        files_per_clone,
        targets,
        workers_per_set: if shared { settings.numjobs } else { 1 },
        files_per_worker: 1,
        clones: settings.numjobs,
        region_size_bytes: size,
    })
}

/// Region size of each file: `--size`, `filesize`, or `size` divided over the clone's files.
fn per_file_size(
    job: &JobDefinition,
    request: &JobFileRequest,
    files_per_clone: u32,
) -> Result<Option<u64>, JobFileError> {
    let settings = &job.settings;
    if let Some(size) = request.overrides.size {
        return Ok(Some(size));
    }
    if let Some(filesize) = &settings.filesize {
        return Ok(Some(filesize.value));
    }
    match &settings.size {
        Some(size) => {
            let each = size.value / files_per_clone.max(1) as u64;
            if each == 0 {
                return Err(size.at.error(format!(
                    "size={} is less than a byte per file ({files_per_clone} files)",
                    size.value
                )));
            }
            Ok(Some(each))
        }
        None => Ok(None),
    }
}

/// The targets of the command line when every one is an existing directory (fio's
/// `--directory`), as the directories a job's files are named in.
fn directory_targets(targets: &[PathBuf]) -> Option<Vec<String>> {
    (!targets.is_empty() && targets.iter().all(|target| target.is_dir())).then(|| {
        targets
            .iter()
            .map(|target| target.to_string_lossy().into_owned())
            .collect()
    })
}

/// Generated names: `$jobname.$jobnum.$filenum` (or `filename_format`) per clone and file, in
/// `directories` (round robin over the clones) or the current directory.
fn generated_paths(
    section: &str,
    settings: &JobSettings,
    directories: &[String],
) -> Vec<(PathBuf, bool)> {
    let mut paths = Vec::new();
    for clone in 0..settings.numjobs {
        for file in 0..settings.nrfiles {
            let name = match &settings.filename_format {
                Some(format) => format
                    .replace("$jobname", section)
                    .replace("$jobnum", &clone.to_string())
                    // fio's client id: empty outside its client/server mode.
                    .replace("$clientuid", "")
                    .replace("$filenum", &file.to_string()),
                None => format!("{section}.{clone}.{file}"),
            };
            let path = match directories {
                [] => PathBuf::from(name),
                directories => {
                    Path::new(&directories[clone as usize % directories.len()]).join(name)
                }
            };
            paths.push((path, false));
        }
    }
    paths
}

/// Whether `name` is an existing block device (fio then uses the job name as the file).
fn is_existing_device(name: &str) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(name).is_ok_and(|metadata| metadata.file_type().is_block_device())
}

/// Bytes each clone covers when neither `size` nor `io_size` says: the existing files' sizes
/// beyond `offset`. Errors name the missing file.
pub fn existing_bytes(files: &JobFiles, offset: u64) -> Result<u64, String> {
    let targets: Vec<&TargetSpec> = if files.workers_per_set == files.clones {
        files.targets.iter().collect()
    } else {
        files
            .targets
            .iter()
            .take(files.files_per_clone as usize)
            .collect()
    };
    let mut total = 0u64;
    for target in targets {
        let TargetSpec::Path { path, .. } = target else {
            return Err(format!("{target:?}: give size= for a network target"));
        };
        let info = crate::targets::inspect(path).map_err(|_| {
            format!(
                "{} does not exist and the job gives no size: give size= (or --size) to create it",
                path.display()
            )
        })?;
        total += info.size_bytes.saturating_sub(offset);
    }
    Ok(total)
}
